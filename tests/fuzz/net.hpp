#pragma once
/// `FuzzNet`: one composite module built from a `NetSpec`, its forward generic over its tensor
/// type (`torch::Tensor` for the plain run, `RecorderTensor` for the traced one) as users write
/// theirs. Its children are real libtorch modules held in `recorder::Module`s and the
/// containers `recorder::Sequential`, `recorder::ModuleList` and `torch::nn::Sequential`.

#include "spec.hpp"

#include <recorder/recorder.hpp>

#include <torch/torch.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace fuzz {

class FuzzNetImpl;
TORCH_MODULE(FuzzNet);

/// The plain tensor of a value, for metadata only (`is_contiguous`).
inline const at::Tensor& plain(const at::Tensor& t) { return t; }
template <class P>
const at::Tensor& plain(const recorder::RecorderTensor<P>& t) {
  return t.tensor();
}

using AnyLeaf =
    std::variant<recorder::Module<torch::nn::Linear>, recorder::Module<torch::nn::Conv2d>,
                 recorder::Module<torch::nn::BatchNorm2d>, recorder::Module<torch::nn::BatchNorm1d>,
                 recorder::Module<torch::nn::LSTM>, recorder::Module<torch::nn::GRU>,
                 recorder::Module<torch::nn::MultiheadAttention>,
                 recorder::Module<torch::nn::Embedding>, recorder::Module<torch::nn::LayerNorm>,
                 recorder::Module<torch::nn::Dropout>, recorder::Module<torch::nn::Identity>,
                 recorder::Module<torch::nn::Flatten>, recorder::Module<torch::nn::ReLU>,
                 recorder::Module<torch::nn::GELU>, recorder::Module<torch::nn::Tanh>,
                 recorder::Module<torch::nn::Softmax>, recorder::Module<torch::nn::AvgPool2d>,
                 recorder::Module<torch::nn::MaxPool2d>>;

/// The libtorch module of leaf kind `l`, as a `torch::nn::AnyModule`-free holder.
inline std::shared_ptr<torch::nn::Module> make_leaf(Leaf l) {
  namespace nn = torch::nn;
  switch (l) {
    case Leaf::linear:
      return nn::Linear(kFeatures, kFeatures).ptr();
    case Leaf::linear_no_bias:
      return nn::Linear(nn::LinearOptions(kFeatures, kFeatures).bias(false)).ptr();
    case Leaf::conv2d:
      return nn::Conv2d(nn::Conv2dOptions(4, 4, 3).padding(1)).ptr();
    case Leaf::batch_norm2d:
      return nn::BatchNorm2d(4).ptr();
    case Leaf::batch_norm1d:
      return nn::BatchNorm1d(kFeatures).ptr();
    case Leaf::lstm:
      return nn::LSTM(kFeatures, kFeatures).ptr();
    case Leaf::gru:
      return nn::GRU(kFeatures, kFeatures).ptr();
    case Leaf::attention:
      return nn::MultiheadAttention(kFeatures, 2).ptr();
    case Leaf::embedding:
      return nn::Embedding(10, kFeatures).ptr();
    case Leaf::layer_norm:
      return nn::LayerNorm(nn::LayerNormOptions({kFeatures})).ptr();
    case Leaf::dropout:
      return nn::Dropout(0.5).ptr();
    case Leaf::identity:
      return nn::Identity().ptr();
    case Leaf::flatten:
      return nn::Flatten().ptr();
    case Leaf::relu:
      return nn::ReLU().ptr();
    case Leaf::gelu:
      return nn::GELU().ptr();
    case Leaf::tanh:
      return nn::Tanh().ptr();
    case Leaf::softmax:
      return nn::Softmax(1).ptr();
    case Leaf::avg_pool2d:
      return nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(1).padding(1)).ptr();
    case Leaf::max_pool2d:
      return nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(1).padding(1)).ptr();
    case Leaf::count_:
      break;
  }
  throw std::logic_error("fuzz: unknown leaf");
}

/// `m` (made by `make_leaf(l)`) in the `recorder::Module` of its type.
inline AnyLeaf hold_leaf(Leaf l, const std::shared_ptr<torch::nn::Module>& m) {
  namespace nn = torch::nn;
  auto as = [&m]<class H>(std::type_identity<H>) -> AnyLeaf {
    return recorder::Module<H>(H(std::dynamic_pointer_cast<typename H::ContainedType>(m)));
  };
  switch (l) {
    case Leaf::linear:
    case Leaf::linear_no_bias:
      return as(std::type_identity<nn::Linear>{});
    case Leaf::conv2d:
      return as(std::type_identity<nn::Conv2d>{});
    case Leaf::batch_norm2d:
      return as(std::type_identity<nn::BatchNorm2d>{});
    case Leaf::batch_norm1d:
      return as(std::type_identity<nn::BatchNorm1d>{});
    case Leaf::lstm:
      return as(std::type_identity<nn::LSTM>{});
    case Leaf::gru:
      return as(std::type_identity<nn::GRU>{});
    case Leaf::attention:
      return as(std::type_identity<nn::MultiheadAttention>{});
    case Leaf::embedding:
      return as(std::type_identity<nn::Embedding>{});
    case Leaf::layer_norm:
      return as(std::type_identity<nn::LayerNorm>{});
    case Leaf::dropout:
      return as(std::type_identity<nn::Dropout>{});
    case Leaf::identity:
      return as(std::type_identity<nn::Identity>{});
    case Leaf::flatten:
      return as(std::type_identity<nn::Flatten>{});
    case Leaf::relu:
      return as(std::type_identity<nn::ReLU>{});
    case Leaf::gelu:
      return as(std::type_identity<nn::GELU>{});
    case Leaf::tanh:
      return as(std::type_identity<nn::Tanh>{});
    case Leaf::softmax:
      return as(std::type_identity<nn::Softmax>{});
    case Leaf::avg_pool2d:
      return as(std::type_identity<nn::AvgPool2d>{});
    case Leaf::max_pool2d:
      return as(std::type_identity<nn::MaxPool2d>{});
    case Leaf::count_:
      break;
  }
  throw std::logic_error("fuzz: unknown leaf");
}

/// A composite module running the steps of its `NetSpec`.
class FuzzNetImpl : public torch::nn::Module {
 public:
  explicit FuzzNetImpl(const NetSpec& spec) : spec_(spec) {
    // Constants: plain tensors the forward passes to ops (recorded as constant nodes).
    matrix_ = torch::randn({kFeatures, kFeatures}) / 4;
    batch_matrix_ = torch::randn({2, kFeatures, kFeatures}) / 4;
    bias_ = torch::randn({kFeatures});
    rows_ = torch::randperm(kRows, torch::kLong);
    fill_ = torch::tensor(0.75f);
    if (spec.has_weight)
      weight_ = register_parameter("weight", torch::randn({kFeatures, kFeatures}) / 4);
    for (std::size_t i = 0; i < spec.children.size(); ++i) {
      const ChildSpec& c = spec.children[i];
      const std::string name = "c" + std::to_string(i);
      Child child;
      child.kind = c.kind;
      child.leaf = c.leaf;
      switch (c.kind) {
        case ChildSpec::Kind::leaf:
          child.module = hold_leaf(c.leaf, register_module(name, make_leaf(c.leaf)));
          break;
        case ChildSpec::Kind::net:
          child.net = register_module(name, FuzzNet(c.nets.front()));
          break;
        case ChildSpec::Kind::sequential: {
          recorder::Sequential<FuzzNet> seq;
          for (const NetSpec& n : c.nets) seq->push_back(FuzzNet(n));
          child.sequential = register_module(name, seq);
          break;
        }
        case ChildSpec::Kind::module_list: {
          recorder::ModuleList<FuzzNet> list;
          for (const NetSpec& n : c.nets) list->push_back(FuzzNet(n));
          child.list = register_module(name, list);
          break;
        }
        case ChildSpec::Kind::torch_sequential: {
          torch::nn::Sequential seq;
          for (Leaf l : c.leaves) seq->push_back(torch::nn::AnyModule(leaf_any(l)));
          child.torch_sequential = register_module(name, seq);
          break;
        }
      }
      children_.push_back(std::move(child));
    }
  }

  template <recorder::tensor_like T>
  T forward(T x) {
    std::vector<T> v{std::move(x)};
    run(v);
    return v.back();
  }

  template <recorder::tensor_like T>
  std::tuple<T, std::tuple<T, T>> forward(T x, T y) {
    std::vector<T> v{std::move(x), std::move(y)};
    run(v);
    return {v.back(), {v[spec_.out_a % v.size()], v[spec_.out_b % v.size()]}};
  }

 private:
  struct Child {
    ChildSpec::Kind kind{};
    Leaf leaf{};
    AnyLeaf module{recorder::Module<torch::nn::Linear>(nullptr)};
    recorder::Module<FuzzNet> net{nullptr};
    recorder::Module<recorder::Sequential<FuzzNet>> sequential{nullptr};
    recorder::ModuleList<FuzzNet> list{nullptr};
    recorder::Module<torch::nn::Sequential> torch_sequential{nullptr};
  };

  static torch::nn::AnyModule leaf_any(Leaf l) {
    namespace nn = torch::nn;
    switch (l) {
      case Leaf::batch_norm1d:
        return nn::AnyModule(nn::BatchNorm1d(kFeatures));
      case Leaf::layer_norm:
        return nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({kFeatures})));
      case Leaf::dropout:
        return nn::AnyModule(nn::Dropout(0.5));
      case Leaf::identity:
        return nn::AnyModule(nn::Identity());
      case Leaf::relu:
        return nn::AnyModule(nn::ReLU());
      case Leaf::gelu:
        return nn::AnyModule(nn::GELU());
      case Leaf::tanh:
        return nn::AnyModule(nn::Tanh());
      case Leaf::softmax:
        return nn::AnyModule(nn::Softmax(1));
      default:
        return nn::AnyModule(nn::Linear(kFeatures, kFeatures));
    }
  }

  template <class T>
  void run(std::vector<T>& v) {
    for (const Step& s : spec_.steps) {
      T a = v[s.a % v.size()];
      T b = v[s.b % v.size()];
      if (s.kind == Step::Kind::op) {
        v.push_back(apply(static_cast<Op>(s.what), s.inplace, std::move(a), std::move(b)));
        continue;
      }
      if (children_.empty()) continue;
      Child& c = children_[s.what % children_.size()];
      if (s.kind == Step::Kind::call_pair && pairable(c.kind)) {
        recorder::Module<FuzzNet>& net =
            c.kind == ChildSpec::Kind::net ? c.net : list_element(c, s);
        auto [p, q] = net(std::move(a), std::move(b));
        v.push_back(std::move(p));
        v.push_back(std::get<0>(q));
        v.push_back(std::get<1>(q));
      } else {
        v.push_back(call(c, s, std::move(a), std::move(b)));
      }
    }
  }

  static bool pairable(ChildSpec::Kind k) {
    return k == ChildSpec::Kind::net || k == ChildSpec::Kind::module_list;
  }

  static recorder::Module<FuzzNet>& list_element(Child& c, const Step& s) {
    return (*c.list)[s.element % c.list->size()];
  }

  template <class T>
  T call(Child& c, const Step& s, T a, T b) {
    switch (c.kind) {
      case ChildSpec::Kind::leaf:
        return call_leaf(c, std::move(a), std::move(b));
      case ChildSpec::Kind::net:
        return c.net(std::move(a));
      case ChildSpec::Kind::sequential:
        return c.sequential(std::move(a));
      case ChildSpec::Kind::module_list:
        return list_element(c, s)(std::move(a));
      case ChildSpec::Kind::torch_sequential:
        return c.torch_sequential(std::move(a));
    }
    throw std::logic_error("fuzz: unknown child");
  }

  template <class H>
  static recorder::Module<H>& leaf_as(Child& c) {
    return std::get<recorder::Module<H>>(c.module);
  }

  template <class T>
  T call_leaf(Child& c, T x, T y) {
    namespace nn = torch::nn;
    const auto image = [](const T& t) { return t.reshape({kRows, 4, 2, 2}); };
    const auto rows = [](const T& t) { return t.reshape({kRows, kFeatures}); };
    const auto sequence = [](const T& t) { return t.reshape({kRows, 1, kFeatures}); };
    switch (c.leaf) {
      case Leaf::linear:
      case Leaf::linear_no_bias:
        return leaf_as<nn::Linear>(c)(x);
      case Leaf::conv2d:
        return rows(leaf_as<nn::Conv2d>(c)(image(x)));
      case Leaf::batch_norm2d:
        return rows(leaf_as<nn::BatchNorm2d>(c)(image(x)));
      case Leaf::batch_norm1d:
        return leaf_as<nn::BatchNorm1d>(c)(x);
      case Leaf::lstm: {
        auto out = leaf_as<nn::LSTM>(c)(sequence(x));  // (output, (h, c))
        // One statement per reshape: C++ leaves the order of an operator's operands unspecified
        // (GCC runs the right one first), and fuzz_script compares this order with Python's.
        T output = rows(std::get<0>(out));
        return output + std::get<1>(std::get<1>(out)).reshape({1, kFeatures});
      }
      case Leaf::gru: {
        auto out = leaf_as<nn::GRU>(c)(sequence(x));  // (output, h)
        T output = rows(std::get<0>(out));
        return output * std::get<1>(out).reshape({1, kFeatures});
      }
      case Leaf::attention: {
        T query = sequence(x), key = sequence(y), value = sequence(y);  // in this order
        auto out = leaf_as<nn::MultiheadAttention>(c)(query, key, value);
        return rows(std::get<0>(out));
      }
      case Leaf::embedding: {
        T tokens = x.narrow(1, 0, 1).squeeze(1).gt(0.0).to(at::kLong);
        return x + leaf_as<nn::Embedding>(c)(tokens);
      }
      case Leaf::layer_norm:
        return leaf_as<nn::LayerNorm>(c)(x);
      case Leaf::dropout:
        return leaf_as<nn::Dropout>(c)(x);
      case Leaf::identity:
        return leaf_as<nn::Identity>(c)(x);
      case Leaf::flatten:
        return leaf_as<nn::Flatten>(c)(x.unsqueeze(2));
      case Leaf::relu:
        return leaf_as<nn::ReLU>(c)(x);
      case Leaf::gelu:
        return leaf_as<nn::GELU>(c)(x);
      case Leaf::tanh:
        return leaf_as<nn::Tanh>(c)(x);
      case Leaf::softmax:
        return leaf_as<nn::Softmax>(c)(x);
      case Leaf::avg_pool2d:
        return rows(leaf_as<nn::AvgPool2d>(c)(image(x)));
      case Leaf::max_pool2d:
        return rows(leaf_as<nn::MaxPool2d>(c)(image(x)));
      case Leaf::count_:
        break;
    }
    throw std::logic_error("fuzz: unknown leaf");
  }

  /// A contiguous `x`: `contiguous()` only when it is not (on a contiguous tensor libtorch
  /// returns it without dispatching, so the op would have no aten event).
  template <class T>
  static T contiguous(T x) {
    return plain(x).is_contiguous() ? x : x.contiguous();
  }

  template <class T>
  T apply(Op op, bool inplace, T x, T y) {
    const at::Tensor& w = weight_.defined() ? weight_ : matrix_;
    switch (op) {
      // In-place capable: the in-place form changes `x` (and every value sharing its tensor).
      case Op::relu:
        return inplace ? T(x.relu_()) : relu(x);
      case Op::sigmoid:
        return inplace ? T(x.sigmoid_()) : sigmoid(x);
      case Op::tanh:
        return inplace ? T(x.tanh_()) : tanh(x);
      case Op::add:
        return inplace ? T(x.add_(y, 0.5)) : x.add(y, 0.5);
      case Op::add_scalar:
        return inplace ? T(x.add_(1.5)) : x.add(1.5);
      case Op::sub:
        return inplace ? T(x.sub_(y)) : x.sub(y);
      case Op::sub_scalar:
        return inplace ? T(x.sub_(0.5, 2)) : x.sub(0.5, 2);
      case Op::mul:
        return inplace ? T(x.mul_(y)) : x.mul(y);
      case Op::mul_scalar:
        return inplace ? T(x.mul_(-0.5)) : x.mul(-0.5);
      case Op::div:
        return inplace ? T(x.div_(y)) : x.div(y);
      case Op::div_scalar:
        return inplace ? T(x.div_(3.0)) : x.div(3.0);
      case Op::masked_fill_scalar:
        return inplace ? T(x.masked_fill_(y.gt(0.0), -1.0)) : x.masked_fill(y.gt(0.0), -1.0);
      case Op::clamp:
        return inplace ? T(x.clamp_(-1.0, 1.0)) : x.clamp(-1.0, 1.0);
      // Unary, as free functions and as methods.
      case Op::exp:
        return (y.numel() & 1) ? exp(x) : x.exp();
      case Op::log:
        return log(x);
      case Op::sqrt:
        return x.sqrt();
      case Op::rsqrt:
        return rsqrt(x);
      case Op::abs:
        return x.abs();
      case Op::neg:
        return neg(x);
      case Op::softmax:
        return softmax(x, 1);
      case Op::log_softmax:
        return x.log_softmax(0);
      case Op::matmul_constant:
        return matmul(x, matrix_);
      case Op::mm_parameter:
        return x.mm(w);
      case Op::bmm:
        return x.reshape({2, kRows / 2, kFeatures}).bmm(batch_matrix_).reshape({kRows, kFeatures});
      case Op::flatten:
        return x.unsqueeze(2).flatten(1);
      case Op::reshape:
        return x.reshape({kRows, 8, 2}).reshape({kRows, kFeatures});
      case Op::permute_contiguous:
        return contiguous(x.permute({1, 0})).permute({1, 0});
      case Op::transpose:
        return x.transpose(0, 1).transpose(0, 1);
      case Op::squeeze:
        return x.unsqueeze(0).squeeze();
      case Op::squeeze_dim:
        return x.unsqueeze(1).squeeze(1);
      case Op::chunk_cat: {
        auto parts = x.chunk(2, 1);
        return cat(std::vector<T>{parts[1], parts[0]}, 1);
      }
      case Op::split_cat: {
        auto parts = x.split(4, 1);
        return cat(std::vector<T>{parts[3], parts[1], parts[2], parts[0]}, 1);
      }
      case Op::split_sizes_cat: {
        auto parts = x.split({4, 12}, 1);
        return cat(std::vector<T>{parts[1], parts[0]}, 1);
      }
      case Op::sum_all:
        return x + y.sum();
      case Op::sum_dim:
        return x + y.sum({1}, true);
      case Op::mean_all:
        return x - y.mean();
      case Op::mean_dim:
        return x * y.mean({0}, true);
      case Op::max_all:
        return x - y.max();
      case Op::max_dim:
        return x + std::get<0>(y.max(1, true));
      case Op::max_other:
        return x.max(y);
      case Op::min_all:
        return x + y.min();
      case Op::min_dim:
        return x - std::get<0>(y.min(0, true));
      case Op::min_other:
        return x.min(y);
      case Op::pow_scalar:
        return x.pow(2);
      case Op::pow_tensor:
        return x.pow(y);
      case Op::eq_where:
        return where(x.eq(y), x, y);
      case Op::eq_scalar:
        return x.masked_fill(x.eq(0.0), 1.0);
      case Op::ne_to:
        return x + x.ne(y).to(at::kFloat);
      case Op::ne_scalar:
        return x.ne(0.5).to(at::kFloat);
      case Op::lt_masked:
        return x.masked_fill(x.lt(0.0), 0.25);
      case Op::gt_masked:
        return y.masked_fill(x.gt(0.5), 2.0);
      case Op::masked_fill_tensor:
        return x.masked_fill(y.gt(0.0), fill_);
      case Op::select_add:
        return x + y.select(0, 1);
      case Op::index_select:
        return x.index_select(0, rows_);
      case Op::narrow_cat:
        return cat(std::vector<T>{x.narrow(1, 8, 8), x.narrow(1, 0, 8)}, 1);
      case Op::view:
        return contiguous(x).view({kRows, 2, 8}).view({kRows, kFeatures});
      case Op::expand:
        return x + y.sum({1}, true).expand({kRows, kFeatures});
      case Op::repeat:
        return x.narrow(1, 0, 8).repeat({1, 2});
      case Op::unflatten:
        return x.unflatten(1, {4, 4}).flatten(1);
      case Op::slice_cat:
        return cat(std::vector<T>{x.slice(1, 0, kFeatures, 2), x.slice(1, 1, kFeatures, 2)}, 1);
      case Op::to_double:
        return x.to(at::kDouble).to(at::kFloat);
      case Op::clone:
        return x.clone();
      case Op::detach:
        return x.detach();
      case Op::gelu:
        return gelu(x);
      case Op::dropout:
        return dropout(x, 0.5, false);
      case Op::layer_norm:
        return layer_norm(x, {kFeatures});
      case Op::linear:
        return linear(x, w, bias_);
      case Op::where:
        return where(y.gt(0.25), x, y);
      case Op::stack:
        return stack(std::vector<T>{x, y}, 0).sum({0});
      case Op::op_add:
        return x + y;
      case Op::op_sub:
        return x - y;
      case Op::op_mul:
        return x * y;
      case Op::op_div:
        return x / y;
      case Op::op_scalar_sub:
        return 1.0 - x;
      case Op::op_scalar_div:
        return 2.0 / x;
      case Op::op_neg:
        return -x;
      case Op::op_compound: {
        x += y;
        return x;
      }
      case Op::subscript:
        return x + y[2];
      case Op::count_:
        break;
    }
    throw std::logic_error("fuzz: unknown op");
  }

  NetSpec spec_;
  at::Tensor matrix_, batch_matrix_, bias_, rows_, fill_, weight_;
  std::vector<Child> children_;
};

}  // namespace fuzz
