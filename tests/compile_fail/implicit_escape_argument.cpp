/// A RecorderTensor is not an at::Tensor argument either (it is not derived from one).
#include <recorder/tensor/recorder_tensor.hpp>

using R = recorder::RecorderTensor<recorder::record::Structure>;

int64_t rows(const at::Tensor& t) { return t.size(0); }

int64_t use(const R& x) {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  return rows(x.tensor());
#else
  return rows(x);
#endif
}
