// EXPECT: tracing a TorchScript model needs #include <recorder/script.hpp>, an exported program <recorder/exported.hpp>
/// The TorchScript front end is a header of its own: recorder.hpp alone does not trace a
/// torch::jit::Module, and says which header does.
#ifdef RECORDER_COMPILE_FAIL_TWIN
#include <recorder/script.hpp>
#else
#include <recorder/recorder.hpp>
#endif

auto trace(const torch::jit::Module& m) {
  return recorder::Tracer<recorder::record::Structure>{}.run(m, torch::ones({1, 4}));
}
