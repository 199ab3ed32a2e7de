// EXPECT: recorder: a recording policy needs `static constexpr bool records_graph = \.\.\.;`
/// A recording policy says whether it builds the graph, as a compile-time bool.
#include <recorder/policies/concepts.hpp>

struct Counting {
  using recording_policy_tag = void;
#ifdef RECORDER_COMPILE_FAIL_TWIN
  static constexpr bool records_graph = true;
#else
  static inline bool records_graph = true;  // not a constant
#endif
};

static_assert(recorder::check_recording_policy<Counting>());
