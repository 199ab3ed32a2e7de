// EXPECT: recorder: reduce::custom\(f\): f must be callable as f\(T acc, const T& x\), T being the recorded value type
/// reduce::custom(f) folds with f(acc, x): a callable of another shape is named as such.
#include <recorder/policies/reduction.hpp>

double fold() {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  const auto r =
      recorder::reduce::custom([](double acc, const double& x) { return acc > x ? acc : x; });
#else
  const auto r = recorder::reduce::custom([](double acc) { return acc; });
#endif
  auto s = r.init(1.0);
  r.update(s, 2.0);
  return r.result(s);
}
