// EXPECT: recorder: not a reduction policy: add `using reduction_policy_tag = void;` to it
/// A recording policy's reduction slot takes reductions over at::Tensor only.
#include <recorder/capture/activations.hpp>

struct NotAReduction {};

#ifdef RECORDER_COMPILE_FAIL_TWIN
using P = recorder::record::ForwardOutput<recorder::reduce::Mean>;
#else
using P = recorder::record::ForwardOutput<NotAReduction>;
#endif

P make() { return P({"fc"}); }
