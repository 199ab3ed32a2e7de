// EXPECT: recorder: not a recording policy: add `using recording_policy_tag = void;` to it
/// Tracer's policy slot takes recording policies only.
#include <recorder/tracer.hpp>

#ifdef RECORDER_COMPILE_FAIL_TWIN
using T = recorder::Tracer<recorder::record::Structure>;
#else
using T = recorder::Tracer<int>;
#endif

T make() { return T{}; }
