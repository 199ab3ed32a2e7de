/// A user's templated model traced through the installed package (recorder::recorder, with the
/// libtorch recorder was configured with): its summary's totals.

#include <recorder/recorder.hpp>

#include <iostream>

struct NetImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc1{register_module("fc1", torch::nn::Linear(8, 16))};
  recorder::Module<torch::nn::Linear> fc2{register_module("fc2", torch::nn::Linear(16, 2))};

  template <recorder::tensor_like T>
  T forward(T x) {
    return fc2(relu(fc1(x)));
  }
};
TORCH_MODULE(Net);

int main() {
  recorder::check_torch();  // the libtorch running is the one compiled against
  Net net;
  const auto trace = recorder::Tracer<recorder::record::Structure>{}.run(net, torch::randn({4, 8}));
  const auto s = recorder::summarize(trace);
  std::cout << "libtorch " << recorder::running_torch().version << ": " << trace.total_params
            << " parameters, " << s.total_mult_adds << " mult-adds\n";
  // 8*16+16 + 16*2+2 = 178 parameters; torchinfo's mult-adds of a Linear: its parameters times
  // the batch, 4 * 178 = 712
  return trace.total_params == 178 && s.total_mult_adds == 712 ? 0 : 1;
}
