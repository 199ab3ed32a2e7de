#pragma once
/// The models of torchview's own tests, written generic over their tensor type, to check our
/// pictures against torchview's reference outputs (../shared/reference/peers/).

#include <recorder/recorder.hpp>

#include <tuple>

namespace peers {

/// torchview's test_simple_MLP: `self.layers = nn.Sequential(Linear(128, 64), ReLU(), ...,
/// Linear(4, 2))`, input (1, 128). torchview draws 13 nodes and 12 edges.
struct MLPImpl : torch::nn::Module {
  recorder::Module<torch::nn::Sequential> layers{register_module(
      "layers",
      torch::nn::Sequential(torch::nn::Linear(128, 64), torch::nn::ReLU(),
                            torch::nn::Linear(64, 32), torch::nn::ReLU(), torch::nn::Linear(32, 16),
                            torch::nn::ReLU(), torch::nn::Linear(16, 8), torch::nn::ReLU(),
                            torch::nn::Linear(8, 4), torch::nn::ReLU(), torch::nn::Linear(4, 2)))};

  template <recorder::tensor_like T>
  T forward(T x) {
    return layers(x);
  }
};
TORCH_MODULE(MLP);

/// torchview's test_roll_recursive_net: one LSTMCell(3, 2) and one LeakyReLU applied 4 times,
/// the initial state drawn inside forward. torchview: 5 nodes rolled, 10 unrolled.
struct SimpleRNNImpl : torch::nn::Module {
  recorder::Module<torch::nn::LSTMCell> lstm{register_module("lstm", torch::nn::LSTMCell(3, 2))};
  recorder::Module<torch::nn::LeakyReLU> activation{
      register_module("activation", torch::nn::LeakyReLU())};

  template <recorder::tensor_like T>
  T forward(T token_embedding) {
    const auto batch = token_embedding.size(0);
    T hx = recorder::constant<T>(torch::randn({batch, 2}));
    T cx = recorder::constant<T>(torch::randn({batch, 2}));
    for (int step = 0; step < 4; ++step) {
      std::tie(hx, cx) = lstm(token_embedding, std::make_tuple(hx, cx));
      hx = activation(hx);
    }
    return hx;
  }
};
TORCH_MODULE(SimpleRNN);

}  // namespace peers
