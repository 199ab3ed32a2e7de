#pragma once
/// A small vision transformer as a user writes one: patch embedding, class token and position
/// embedding on the root, pre-norm blocks with hand-written multi-head attention and a GELU MLP,
/// forward templated on its tensor type. The compile-cost measurement's transformer
/// (scripts/compile_cost.sh); not run by any test.

#include <recorder/recorder.hpp>

#include <cmath>
#include <cstdint>

namespace compile_cost {

struct AttentionImpl : torch::nn::Module {
  AttentionImpl(int64_t dim, int64_t heads)
      : heads_(heads),
        scale_(1.0 / std::sqrt(static_cast<double>(dim / heads))),
        qkv(register_module("qkv", torch::nn::Linear(dim, 3 * dim))),
        proj(register_module("proj", torch::nn::Linear(dim, dim))) {}

  template <recorder::tensor_like T>
  T forward(T x) {
    const int64_t b = x.size(0), n = x.size(1), c = x.size(2);
    T parts = qkv(x).reshape({b, n, 3, heads_, c / heads_}).permute({2, 0, 3, 1, 4});
    T q = parts.select(0, 0), k = parts.select(0, 1), v = parts.select(0, 2);
    T attn = softmax(matmul(q, k.transpose(-2, -1)) * scale_, -1);
    return proj(matmul(attn, v).transpose(1, 2).reshape({b, n, c}));
  }

  int64_t heads_;
  double scale_;
  recorder::Module<torch::nn::Linear> qkv, proj;
};
TORCH_MODULE(Attention);

struct MlpImpl : torch::nn::Module {
  MlpImpl(int64_t dim, int64_t hidden)
      : fc1(register_module("fc1", torch::nn::Linear(dim, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, dim))) {}

  template <recorder::tensor_like T>
  T forward(T x) {
    return fc2(gelu(fc1(x)));
  }

  recorder::Module<torch::nn::Linear> fc1, fc2;
};
TORCH_MODULE(Mlp);

struct BlockImpl : torch::nn::Module {
  BlockImpl(int64_t dim, int64_t heads)
      : norm1(register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        attn(register_module("attn", Attention(dim, heads))),
        norm2(register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        mlp(register_module("mlp", Mlp(dim, 4 * dim))) {}

  template <recorder::tensor_like T>
  T forward(T x) {
    x = x + attn(norm1(x));
    return x + mlp(norm2(x));
  }

  recorder::Module<torch::nn::LayerNorm> norm1;
  recorder::Module<Attention> attn;
  recorder::Module<torch::nn::LayerNorm> norm2;
  recorder::Module<Mlp> mlp;
};
TORCH_MODULE(Block);

/// Input [batch, 3, 32, 32]: 4×4 patches, `depth` blocks, a linear head on the class token.
struct VisionTransformerImpl : torch::nn::Module {
  explicit VisionTransformerImpl(int64_t depth = 4, int64_t dim = 64, int64_t heads = 4,
                                 int64_t classes = 10)
      : patch_embed(register_module(
            "patch_embed", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, dim, 4).stride(4)))),
        cls_token(register_parameter("cls_token", torch::zeros({1, 1, dim}))),
        pos_embed(register_parameter("pos_embed", torch::zeros({1, 65, dim}))),
        blocks(register_module("blocks", recorder::ModuleList<Block>())),
        norm(register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})))),
        head(register_module("head", torch::nn::Linear(dim, classes))) {
    for (int64_t i = 0; i < depth; ++i) blocks->push_back(Block(dim, heads));
  }

  template <recorder::tensor_like T>
  T forward(T x) {
    x = patch_embed(x).flatten(2).transpose(1, 2);
    T cls = recorder::constant<T>(cls_token).expand({x.size(0), -1, -1});
    x = recorder::cat({cls, x}, 1) + recorder::constant<T>(pos_embed);
    for (auto& block : *blocks) x = block(x);
    return head(norm(x).select(1, 0));
  }

  recorder::Module<torch::nn::Conv2d> patch_embed;
  torch::Tensor cls_token, pos_embed;
  recorder::ModuleList<Block> blocks;
  recorder::Module<torch::nn::LayerNorm> norm;
  recorder::Module<torch::nn::Linear> head;
};
TORCH_MODULE(VisionTransformer);

}  // namespace compile_cost
