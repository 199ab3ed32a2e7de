// EXPECT: recorder::Module<H>: H fits no adapter
/// A module with a non-template `forward(int)` fits no adapter either.
#include <recorder/adapters/module.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

struct CountImpl : torch::nn::Module {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  at::Tensor forward(const at::Tensor& x) { return x.relu(); }  // leaf: takes torch::Tensor
#else
  at::Tensor forward(int n);
#endif
};
TORCH_MODULE(Count);

void call(recorder::Module<Count>& m,
          const recorder::RecorderTensor<recorder::record::Structure>& x) {
  (void)m(x);
}
