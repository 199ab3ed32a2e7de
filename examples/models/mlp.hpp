#pragma once
/// The MLP of torchfunc's examples: 784-100-50-10 with ReLU, written generic over its tensor type.

#include <recorder/recorder.hpp>

namespace models {

struct MLPImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc1{register_module("fc1", torch::nn::Linear(784, 100))};
  recorder::Module<torch::nn::Linear> fc2{register_module("fc2", torch::nn::Linear(100, 50))};
  recorder::Module<torch::nn::Linear> fc3{register_module("fc3", torch::nn::Linear(50, 10))};

  template <recorder::tensor_like T>
  T forward(T x) {
    x = relu(fc1(x));
    x = relu(fc2(x));
    return fc3(x);
  }
};
TORCH_MODULE(MLP);

}  // namespace models
