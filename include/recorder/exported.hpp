#pragma once
/// The `torch.export` front end: `recorder::load_exported("model.pt2")` reads an archive's
/// program without its weights, `recorder::static_trace` gives its trace without running it, and
/// `Tracer::run(program, inputs...)` runs it node by node through libtorch's dispatcher with the
/// archive's weights, under any recording policy. Needs ATen, the dispatcher and libtorch's zip
/// reader (1.13 and 2.x) and nlohmann-json; not `<torch/torch.h>`.
///
/// ```
/// auto program = recorder::load_exported("model.pt2");
/// recorder::Trace trace = recorder::static_trace(program);
/// std::cout << recorder::summary(trace);
/// // with <recorder/recorder.hpp>: run it, under any recording policy
/// auto ran = recorder::Tracer<recorder::record::Structure>{}.run(program, torch::randn({1, 784}));
/// ```

#include <recorder/export/archive.hpp>
#include <recorder/export/program.hpp>
#include <recorder/export/run.hpp>
#include <recorder/export/static_trace.hpp>
