// EXPECT: recorder: reduce::custom\(f\): f is callable only when not const \(a `mutable` lambda\?\)
/// Reductions are values and call their fold as const: a `mutable` lambda is named as the cause.
#include <recorder/policies/reduction.hpp>

double fold() {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  const auto r = recorder::reduce::custom([](double acc, const double& x) { return acc + x; });
#else
  const auto r = recorder::reduce::custom([n = 0](double acc, const double& x) mutable {
    ++n;
    return acc + x;
  });
#endif
  auto s = r.init(1.0);
  r.update(s, 2.0);
  return r.result(s);
}
