// EXPECT: recorder: a post-processing step is callable as at::Tensor\(const recorder::LayerCall&, const at::Tensor&\)
/// Capture::postproc(layer, f), as postproc(f): a step on the tensor alone is named as such.
#include <recorder/capture/activations.hpp>

using P = recorder::record::ForwardOutput<recorder::reduce::Mean>;

P make() {
  P p({"fc"});
#ifdef RECORDER_COMPILE_FAIL_TWIN
  p.postproc("fc", [](const recorder::LayerCall&, const at::Tensor& y) { return y.clamp_min(0); });
#else
  p.postproc("fc", [](const at::Tensor& y) { return y.clamp_min(0); });
#endif
  return p;
}
