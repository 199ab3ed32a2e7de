// EXPECT: recorder: merge_across: reduce::custom\(f\) is not mergeable
/// A recording reduced by a user's fold cannot be merged across ranks: nothing says the fold is
/// associative. The error names the cause and the mergeable reductions.
#include <recorder/distributed.hpp>

#include <ATen/ops/maximum.h>

namespace rr = recorder::record;
namespace rd = recorder::reduce;

#ifdef RECORDER_COMPILE_FAIL_TWIN
using Reduction = rd::MinMax;
Reduction reduction() { return {}; }
#else
inline auto reduction() {
  return rd::custom([](at::Tensor acc, const at::Tensor& x) { return at::maximum(acc, x); });
}
using Reduction = decltype(reduction());
#endif

rr::ForwardOutput<Reduction> merge(const rr::ForwardOutput<Reduction>& acts,
                                   c10d::ProcessGroup& pg) {
  return recorder::merged_across(acts, pg);
}
