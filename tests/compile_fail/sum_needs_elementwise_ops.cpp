// EXPECT: recorder: this reduction needs the elementwise part of recorder::reduce::value_ops<T> \(has_elementwise_ops\)
/// A type without value_ops is no value for Sum: the checker names the part Sum uses.
#include <recorder/policies/reduction.hpp>

struct Opaque {};

#ifdef RECORDER_COMPILE_FAIL_TWIN
static_assert(recorder::reduce::check_reduction<recorder::reduce::Sum, float>());
#else
static_assert(recorder::reduce::check_reduction<recorder::reduce::Sum, Opaque>());
#endif
