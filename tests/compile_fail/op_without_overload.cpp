/// An op the table does not cover is a compile error on a RecorderTensor, never a silent escape.
#include <recorder/tensor/op.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

using R = recorder::RecorderTensor<recorder::record::Structure>;

R use(const R& x) {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  return recorder::op(
      "erfinv", [](const at::Tensor& t) { return t.erfinv(); }, x);
#else
  return x.erfinv();
#endif
}
