// EXPECT: recorder: reduce::custom\(f\): f\(acc, x\) must return the new acc
/// reduce::custom(f)'s f returns the new accumulator: one that updates in place and returns
/// nothing is named as such.
#include <recorder/policies/reduction.hpp>

double fold() {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  const auto r = recorder::reduce::custom([](double acc, const double& x) { return acc + x; });
#else
  const auto r = recorder::reduce::custom([](double acc, const double& x) { acc += x; });
#endif
  auto s = r.init(1.0);
  r.update(s, 2.0);
  return r.result(s);
}
