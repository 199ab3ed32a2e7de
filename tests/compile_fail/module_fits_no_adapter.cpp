// EXPECT: recorder::Module<H>: H fits no adapter
/// A module whose forward takes neither RecorderTensors nor torch::Tensors fits no adapter:
/// calling it through recorder::Module with a RecorderTensor names the failed requirements.
#include <recorder/adapters/module.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

#include <string>

struct NetImpl : torch::nn::Module {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  template <recorder::tensor_like T>
  T forward(T x) {
    return relu(x);
  }  // composite: templated on its tensor type
#else
  at::Tensor forward(const std::string& name);  // fits no adapter
#endif
};
TORCH_MODULE(Net);

void call(recorder::Module<Net>& net,
          const recorder::RecorderTensor<recorder::record::Structure>& x) {
  (void)net(x);
}
