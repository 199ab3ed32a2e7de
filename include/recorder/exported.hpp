#pragma once
/// The `torch.export` front end: `recorder::load_exported("model.pt2")` reads an archive's
/// program without its weights, `recorder::static_trace` gives its trace without running it.
/// Needs libtorch's zip reader only (1.13 and 2.x) and nlohmann-json.
///
/// ```
/// auto program = recorder::load_exported("model.pt2");
/// recorder::Trace trace = recorder::static_trace(program);
/// std::cout << recorder::summary(trace);
/// ```

#include <recorder/export/archive.hpp>
#include <recorder/export/program.hpp>
#include <recorder/export/static_trace.hpp>
