/// libtorch's own functions do not take a RecorderTensor: `at::relu(x)` does not compile,
/// `relu(x)` (found by ADL) is the traced op.
#include <recorder/tensor/recorder_tensor.hpp>

#include <ATen/ops/relu.h>

using R = recorder::RecorderTensor<recorder::record::Structure>;

R use(const R& x) {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  return relu(x);
#else
  return at::relu(x);
#endif
}
