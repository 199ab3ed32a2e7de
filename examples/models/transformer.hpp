#pragma once
/// A Transformer encoder (2 post-norm layers, d_model 64, 4 heads) written out of libtorch parts.

#include <recorder/recorder.hpp>

#include <cstdint>
#include <tuple>

namespace models {

/// One encoder layer, as `torch::nn::TransformerEncoderLayer` computes it (post-norm, ReLU).
struct EncoderLayerImpl : torch::nn::Module {
  EncoderLayerImpl(int64_t d_model, int64_t heads, int64_t feedforward, double dropout = 0.1)
      : self_attn(register_module(
            "self_attn",
            torch::nn::MultiheadAttention(
                torch::nn::MultiheadAttentionOptions(d_model, heads).dropout(dropout)))),
        linear1(register_module("linear1", torch::nn::Linear(d_model, feedforward))),
        dropout(register_module("dropout", torch::nn::Dropout(dropout))),
        linear2(register_module("linear2", torch::nn::Linear(feedforward, d_model))),
        norm1(
            register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model})))),
        norm2(
            register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model})))),
        dropout1(register_module("dropout1", torch::nn::Dropout(dropout))),
        dropout2(register_module("dropout2", torch::nn::Dropout(dropout))) {}

  template <recorder::tensor_like T>
  T forward(T x) {
    T attended = std::get<0>(self_attn(x, x, x));
    x = norm1(x + dropout1(attended));
    T ff = linear2(dropout(relu(linear1(x))));
    return norm2(x + dropout2(ff));
  }

  recorder::Module<torch::nn::MultiheadAttention> self_attn;
  recorder::Module<torch::nn::Linear> linear1;
  recorder::Module<torch::nn::Dropout> dropout;
  recorder::Module<torch::nn::Linear> linear2;
  recorder::Module<torch::nn::LayerNorm> norm1, norm2;
  recorder::Module<torch::nn::Dropout> dropout1, dropout2;
};
TORCH_MODULE(EncoderLayer);

/// Token embedding, scaled by sqrt(d_model), then `layers` encoder layers and a linear head.
/// Input: token ids [seq, batch] (Long); output: logits [seq, batch, vocab].
struct TransformerEncoderModelImpl : torch::nn::Module {
  TransformerEncoderModelImpl(int64_t vocab = 100, int64_t d_model = 64, int64_t heads = 4,
                              int64_t layers = 2, int64_t feedforward = 256)
      : d_model_(d_model),
        embedding(register_module("embedding", torch::nn::Embedding(vocab, d_model))),
        encoder(register_module("encoder", recorder::ModuleList<EncoderLayer>())),
        head(register_module("head", torch::nn::Linear(d_model, vocab))) {
    for (int64_t i = 0; i < layers; ++i)
      encoder->push_back(EncoderLayer(d_model, heads, feedforward));
  }

  template <recorder::tensor_like T>
  T forward(T tokens) {
    T x = embedding(tokens) * std::sqrt(static_cast<double>(d_model_));
    for (auto& layer : *encoder) x = layer(x);
    return head(x);
  }

  int64_t d_model_;
  recorder::Module<torch::nn::Embedding> embedding;
  recorder::ModuleList<EncoderLayer> encoder;
  recorder::Module<torch::nn::Linear> head;
};
TORCH_MODULE(TransformerEncoderModel);

}  // namespace models
