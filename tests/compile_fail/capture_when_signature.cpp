// EXPECT: recorder: a condition is callable as bool\(const recorder::LayerCall&\)
/// Capture::when takes a condition on the layer call: one on something else is named as such.
#include <recorder/capture/activations.hpp>

using P = recorder::record::ForwardOutput<recorder::reduce::Mean>;

P make() {
  P p({"fc"});
#ifdef RECORDER_COMPILE_FAIL_TWIN
  p.when([](const recorder::LayerCall& c) { return c.label == "2-3"; });
#else
  p.when([](int pass) { return pass > 1; });
#endif
  return p;
}
