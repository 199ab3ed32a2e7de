// EXPECT: recorder: a traced op returned a non-tensor leaf
/// recorder::op records callables returning tensors: one returning a number is named as such,
/// with the way out.
#include <recorder/tensor/op.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

using RT = recorder::RecorderTensor<recorder::record::Structure>;

#ifdef RECORDER_COMPILE_FAIL_TWIN
double largest(const RT& x) { return x.tensor().max().item<double>(); }
#else
double largest(const RT& x) {
  return recorder::op(
      "max", [](const at::Tensor& t) { return t.max().item<double>(); }, x);
}
#endif
