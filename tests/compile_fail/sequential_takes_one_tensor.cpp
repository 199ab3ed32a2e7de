// EXPECT: recorder: a torch::nn::Sequential takes one tensor
/// A torch::nn::Sequential chains one tensor through its children: calling it with two is
/// named as such, with the way to take several inputs.
#include <recorder/tracer.hpp>

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

auto trace(torch::nn::Sequential& seq, const at::Tensor& x, const at::Tensor& y) {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  (void)y;
  return recorder::Tracer<recorder::record::Structure>{}.run(seq, x);
#else
  return recorder::Tracer<recorder::record::Structure>{}.run(seq, x, y);
#endif
}
