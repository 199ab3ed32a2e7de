/// Known bug reproducer (see CMakeLists.txt): `recording_policy<P>` must be false, not a hard
/// error, when `P::records_graph` is not a constant expression.
/// concepts.hpp checks it with a nested requirement `requires(P::records_graph || ...)`, and a
/// nested requirement that is not a constant expression makes the program ill-formed (g++ 12:
/// "the value of 'NotConstant::records_graph' is not usable in a constant expression").
/// `typename std::bool_constant<P::records_graph>;` would make it a substitution failure.
#include <recorder/policies/concepts.hpp>

struct NotConstant {
  using recording_policy_tag = void;
  static inline bool records_graph = true;
};

#ifndef RECORDER_COMPILE_FAIL_TWIN
static_assert(!recorder::recording_policy<NotConstant>);
static_assert(!recorder::declares_records_graph<NotConstant>);
#endif
