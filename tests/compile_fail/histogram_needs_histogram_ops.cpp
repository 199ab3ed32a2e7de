// EXPECT: recorder: this reduction needs the histogram part of recorder::reduce::value_ops<T> \(has_histogram_ops\)
/// A reduction asks a value type only for the part of value_ops it uses: a type with the
/// elementwise part alone is a value for Sum (the twin), not for Histogram, and the library's
/// checker names the part it lacks.
#include "../support/metres.hpp"

#include <recorder/policies/reduction.hpp>

using test::Metres;

#ifdef RECORDER_COMPILE_FAIL_TWIN
static_assert(recorder::reduce::check_reduction<recorder::reduce::Sum, Metres>());
#else
static_assert(recorder::reduce::check_reduction<recorder::reduce::Histogram, Metres>());
#endif
