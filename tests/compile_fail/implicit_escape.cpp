/// A RecorderTensor does not convert to at::Tensor: leaving the trace needs `.tensor()`.
#include <recorder/tensor/recorder_tensor.hpp>

using R = recorder::RecorderTensor<recorder::record::Structure>;

at::Tensor escape(const R& x) {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  at::Tensor t = x.tensor();
#else
  at::Tensor t = x;
#endif
  return t;
}
