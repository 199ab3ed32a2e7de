#pragma once
/// The TorchScript front end: `Tracer::run` on a `torch::jit::Module` (a model exported from
/// Python with `torch.jit.script` or `torch.jit.trace`, loaded with `torch::jit::load` or
/// `recorder::load_model`), and `load_model` with its errors.
///
/// ```
/// #include <recorder/script.hpp>
/// auto m = recorder::load_model("resnet18.pt");
/// auto trace = recorder::Tracer<recorder::record::Structure>{}.run(m, torch::randn({1, 3, 224, 224}));
/// ```
/// Everything of `<recorder/recorder.hpp>` works on its traces. It is a header of its own, as
/// `<torch/script.h>` is next to `<torch/torch.h>`: TorchScript's instrumentation costs every
/// translation unit that includes it (`scripts/compile_cost.sh`), and templated models need none.

#include <recorder/recorder.hpp>
#include <recorder/script/load.hpp>
#include <recorder/script/run.hpp>
