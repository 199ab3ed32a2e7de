// EXPECT: recorder: not a recording policy: add `using recording_policy_tag = void;` to it
/// A recording policy opts in with its tag: a struct with `records_graph` but no tag has not.
#include <recorder/policies/concepts.hpp>

struct Counting {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  using recording_policy_tag = void;
#endif
  static constexpr bool records_graph = true;
};

static_assert(recorder::check_recording_policy<Counting>());
