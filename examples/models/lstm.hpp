#pragma once
/// torchinfo's and torchview's LSTMNet: Embedding(20, 300) -> LSTM(300, 512, 2 layers) -> Linear(512, 20).

#include <recorder/recorder.hpp>

#include <tuple>

namespace models {

struct LSTMNetImpl : torch::nn::Module {
  recorder::Module<torch::nn::Embedding> embedding{
      register_module("embedding", torch::nn::Embedding(20, 300))};
  recorder::Module<torch::nn::LSTM> encoder{
      register_module("encoder", torch::nn::LSTM(torch::nn::LSTMOptions(300, 512).num_layers(2)))};
  recorder::Module<torch::nn::Linear> decoder{
      register_module("decoder", torch::nn::Linear(512, 20))};

  /// Returns `(logits [seq*batch, 20], (h, c))`, like the Python model.
  template <recorder::tensor_like T>
  std::tuple<T, std::tuple<T, T>> forward(T x) {
    T embed = embedding(x);
    auto [out, hidden] = encoder(embed);
    out = decoder(out);
    out = out.view({-1, out.size(2)});
    return {out, hidden};
  }
};
TORCH_MODULE(LSTMNet);

}  // namespace models
