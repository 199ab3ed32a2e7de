// EXPECT: recorder: not a recording policy: add `using recording_policy_tag = void;` to it
/// RecorderTensor's policy slot takes recording policies only: a struct that has
/// `records_graph` but no `recording_policy_tag` has not opted in.
#include <recorder/tensor/recorder_tensor.hpp>

struct NotAPolicy {
  static constexpr bool records_graph = true;
};
struct APolicy {
  using recording_policy_tag = void;
  static constexpr bool records_graph = true;
};

#ifdef RECORDER_COMPILE_FAIL_TWIN
using R = recorder::RecorderTensor<APolicy>;
#else
using R = recorder::RecorderTensor<NotAPolicy>;
#endif

R make() { return R{}; }
