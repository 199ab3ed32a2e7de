#pragma once
/// The fuzzer's models as Python (torch-free): `python_source` writes a module of `torch.nn.Module`
/// classes mirroring a `ModelSpec`, for `torch.jit.script`, so the TorchScript front end traces
/// the same model the templated `FuzzNet` (net.hpp) is built from.
///
/// Each `NetSpec` is one class `FuzzNet_<k>` (k: its position in a pre-order walk), its children
/// registered as `c0`, `c1`, ... in the same order as `FuzzNetImpl` registers them, so module paths
/// agree; containers are `nn.Sequential` (a `recorder::Sequential` of nets or a
/// `torch::nn::Sequential` of leaves) and `nn.ModuleList`, indexed by a literal. Its forward runs
/// the same ops in the same order on the same operands (value indices are resolved here, as
/// `FuzzNetImpl::run` resolves them at run time), with these differences, each an op of the same
/// value, never another value:
/// - the weights and constants are Python's own draws: the script model is checked against
///   itself, and against the templated model only by op names and shapes;
/// - a net called with one input and with two has both forwards as TorchScript overloads
///   (`forward__0`, `forward__1`), as `nn.LSTM` does; a net called one way has one `forward`;
/// - `1.0 - x` is written `torch.rsub(x, 1.0)`: TorchScript compiles the operator to `neg` and
///   `add`; `2.0 / x` stays as written (TorchScript compiles it to `reciprocal` and `mul`);
/// - `contiguous(t)` calls `t.contiguous()` only on a tensor that is not contiguous, as
///   `FuzzNetImpl::contiguous` does (TorchScript would dispatch it on a contiguous one too);
/// - `x.slice(1, a, b, 2)` is `torch.ops.aten.slice`: Python's `x[:, a:b:2]` slices dim 0 too;
/// - every value is stored in the attribute `sink` at the end of a forward: TorchScript drops
///   ops whose values are unused at compile time (dead code), the C++ net runs every op.
///
/// Nothing of the catalogue is left out: every op, leaf and container has a TorchScript form
/// that records the same aten ops as the observer sees. `python_source` returns nullopt only for
/// an op or leaf it does not know (a catalogue entry added without its Python form).

#include "spec.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fuzz {

namespace detail {

/// How a net is called by its parent: with one input, with two (its pair forward), or both.
struct Arity {
  bool single = false, pair = false;
};

class PythonEmitter {
 public:
  std::optional<std::string> emit(const ModelSpec& m) {
    nets_.clear();
    arity_.clear();
    index(m.root);
    (m.pair_root ? arity_[0].pair : arity_[0].single) = true;
    find_arities(m.root);
    std::string out = "# The fuzzer's model of seed " + std::to_string(m.seed) +
                      " (tests/fuzz/python.hpp).\n"
                      "import torch\n"
                      "import torch.nn.functional as F\n"
                      "from torch import nn, Tensor\n"
                      "from typing import List, Optional, Tuple\n\n\n"
                      "def contiguous(t: Tensor) -> Tensor:\n"
                      "    return t if t.is_contiguous() else t.contiguous()\n";
    for (std::size_t k = 0; k < nets_.size(); ++k)
      if (!net_class(k, out)) return std::nullopt;
    out += "\n\ndef make() -> nn.Module:\n    return FuzzNet_0()\n\n\nINPUTS = " +
           std::string(m.pair_root ? "2" : "1") + "\n";
    return out;
  }

 private:
  /// Numbers the nets in pre-order (`FuzzNet_<k>`).
  void index(const NetSpec& n) {
    nets_.push_back(&n);
    arity_.emplace_back();
    for (const ChildSpec& c : n.children)
      for (const NetSpec& k : c.nets) index(k);
  }
  std::size_t number(const NetSpec& n) const {
    for (std::size_t k = 0; k < nets_.size(); ++k)
      if (nets_[k] == &n) return k;
    return 0;
  }

  static bool pairable(ChildSpec::Kind k) {
    return k == ChildSpec::Kind::net || k == ChildSpec::Kind::module_list;
  }

  /// Which forwards each net needs, from the steps of its parent (as `FuzzNetImpl::run` calls).
  void find_arities(const NetSpec& n) {
    for (const Step& s : n.steps) {
      if (s.kind == Step::Kind::op || n.children.empty()) continue;
      const ChildSpec& c = n.children[s.what % n.children.size()];
      const bool pair = s.kind == Step::Kind::call_pair && pairable(c.kind);
      switch (c.kind) {
        case ChildSpec::Kind::net:
        case ChildSpec::Kind::module_list: {
          const NetSpec& k =
              c.kind == ChildSpec::Kind::net ? c.nets.front() : c.nets[s.element % c.nets.size()];
          (pair ? arity_[number(k)].pair : arity_[number(k)].single) = true;
          break;
        }
        case ChildSpec::Kind::sequential:
          for (const NetSpec& k : c.nets) arity_[number(k)].single = true;
          break;
        default:
          break;
      }
    }
    for (const ChildSpec& c : n.children)
      for (const NetSpec& k : c.nets) find_arities(k);
  }

  static std::optional<std::string> leaf_module(Leaf l) {
    switch (l) {
      case Leaf::linear:
        return "nn.Linear(16, 16)";
      case Leaf::linear_no_bias:
        return "nn.Linear(16, 16, bias=False)";
      case Leaf::conv2d:
        return "nn.Conv2d(4, 4, 3, padding=1)";
      case Leaf::batch_norm2d:
        return "nn.BatchNorm2d(4)";
      case Leaf::batch_norm1d:
        return "nn.BatchNorm1d(16)";
      case Leaf::lstm:
        return "nn.LSTM(16, 16)";
      case Leaf::gru:
        return "nn.GRU(16, 16)";
      case Leaf::attention:
        return "nn.MultiheadAttention(16, 2)";
      case Leaf::embedding:
        return "nn.Embedding(10, 16)";
      case Leaf::layer_norm:
        return "nn.LayerNorm([16])";
      case Leaf::dropout:
        return "nn.Dropout(0.5)";
      case Leaf::identity:
        return "nn.Identity()";
      case Leaf::flatten:
        return "nn.Flatten()";
      case Leaf::relu:
        return "nn.ReLU()";
      case Leaf::gelu:
        return "nn.GELU()";
      case Leaf::tanh:
        return "nn.Tanh()";
      case Leaf::softmax:
        return "nn.Softmax(1)";
      case Leaf::avg_pool2d:
        return "nn.AvgPool2d(3, 1, 1)";
      case Leaf::max_pool2d:
        return "nn.MaxPool2d(3, 1, 1)";
      case Leaf::count_:
        break;
    }
    return std::nullopt;
  }

  bool net_class(std::size_t k, std::string& out) {
    const NetSpec& n = *nets_[k];
    const std::string name = "FuzzNet_" + std::to_string(k);
    out += "\n\nclass " + name + "(nn.Module):\n    sink: List[Tensor]\n\n";
    out += "    def __init__(self):\n        super().__init__()\n";
    // The constants FuzzNetImpl holds, drawn in the same order (but by Python's generator).
    out +=
        "        self.matrix = torch.randn(16, 16) / 4\n"
        "        self.batch_matrix = torch.randn(2, 16, 16) / 4\n"
        "        self.bias = torch.randn(16)\n"
        "        self.rows = torch.randperm(6)\n"
        "        self.fill = torch.tensor(0.75)\n"
        "        self.sink = []\n";
    if (n.has_weight) out += "        self.weight = nn.Parameter(torch.randn(16, 16) / 4)\n";
    for (std::size_t i = 0; i < n.children.size(); ++i) {
      const ChildSpec& c = n.children[i];
      std::string module;
      switch (c.kind) {
        case ChildSpec::Kind::leaf: {
          const auto leaf = leaf_module(c.leaf);
          if (!leaf) return false;
          module = *leaf;
          break;
        }
        case ChildSpec::Kind::net:
          module = "FuzzNet_" + std::to_string(number(c.nets.front())) + "()";
          break;
        case ChildSpec::Kind::sequential:
        case ChildSpec::Kind::module_list:
          module = c.kind == ChildSpec::Kind::sequential ? "nn.Sequential(" : "nn.ModuleList([";
          for (std::size_t j = 0; j < c.nets.size(); ++j)
            module += (j ? ", FuzzNet_" : "FuzzNet_") + std::to_string(number(c.nets[j])) + "()";
          module += c.kind == ChildSpec::Kind::sequential ? ")" : "])";
          break;
        case ChildSpec::Kind::torch_sequential:
          module = "nn.Sequential(";
          for (std::size_t j = 0; j < c.leaves.size(); ++j) {
            const auto leaf = leaf_module(c.leaves[j]);
            if (!leaf) return false;
            module += (j ? ", " : "") + *leaf;
          }
          module += ")";
          break;
      }
      out += "        self.c" + std::to_string(i) + " = " + module + "\n";
    }
    const Arity a = arity_[k];
    const bool single = a.single || !a.pair;  // a net never called still compiles a forward
    if (single && a.pair) {
      out +=
          "\n    @torch.jit._overload_method  # noqa: F811\n"
          "    def forward(self, x: Tensor, y: None = None) -> Tensor:\n        ...\n"
          "\n    @torch.jit._overload_method  # noqa: F811\n"
          "    def forward(self, x: Tensor, y: Tensor) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:\n"
          "        ...\n"
          "\n    def forward(self, x: Tensor, y: Optional[Tensor] = None):  # noqa: F811\n"
          "        if y is None:\n";
      if (!body(n, false, "            ", out)) return false;
      out += "        else:\n";
      if (!body(n, true, "            ", out)) return false;
    } else if (a.pair) {
      out +=
          "\n    def forward(self, x: Tensor, y: Tensor) -> Tuple[Tensor, Tuple[Tensor, "
          "Tensor]]:\n";
      if (!body(n, true, "        ", out)) return false;
    } else {
      out += "\n    def forward(self, x: Tensor) -> Tensor:\n";
      if (!body(n, false, "        ", out)) return false;
    }
    return true;
  }

  /// The forward of `n` (its pair forward when `pair`), as `FuzzNetImpl::run`.
  bool body(const NetSpec& n, bool pair, const std::string& in, std::string& out) {
    nets_weight_ = n.has_weight;
    std::vector<std::string> v{"x"};
    if (pair) v.push_back("y");
    std::size_t temps = 0;
    const auto fresh = [&temps] { return "t" + std::to_string(temps++); };
    const auto value = [&v](std::string name) {
      v.push_back(name);
      return name;
    };
    for (const Step& s : n.steps) {
      const std::string x = v[s.a % v.size()];
      const std::string y = v[s.b % v.size()];
      const std::string next = "v" + std::to_string(v.size());
      if (s.kind == Step::Kind::op) {
        const auto lines = op(static_cast<Op>(s.what), s.inplace, x, y, next, fresh);
        if (!lines) return false;
        for (const std::string& line : *lines) out += in + line + "\n";
        value(next);
        continue;
      }
      if (n.children.empty()) continue;
      const std::size_t i = s.what % n.children.size();
      const ChildSpec& c = n.children[i];
      std::string self = "self.c" + std::to_string(i);
      if (c.kind == ChildSpec::Kind::module_list)
        self += "[" + std::to_string(s.element % c.nets.size()) + "]";
      if (s.kind == Step::Kind::call_pair && pairable(c.kind)) {
        const std::string t = fresh();
        out += in + t + " = " + self + "(" + x + ", " + y + ")\n";
        out += in + value(next) + " = " + t + "[0]\n";
        out += in + value("v" + std::to_string(v.size())) + " = " + t + "[1][0]\n";
        out += in + value("v" + std::to_string(v.size())) + " = " + t + "[1][1]\n";
        continue;
      }
      if (c.kind != ChildSpec::Kind::leaf) {
        out += in + value(next) + " = " + self + "(" + x + ")\n";
        continue;
      }
      const auto lines = leaf_call(c.leaf, self, x, y, next, fresh);
      if (!lines) return false;
      for (const std::string& line : *lines) out += in + line + "\n";
      value(next);
    }
    out += in + "self.sink = [";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
    out += "]\n";
    if (pair)
      out += in + "return (" + v.back() + ", (" + v[n.out_a % v.size()] + ", " +
             v[n.out_b % v.size()] + "))\n";
    else
      out += in + "return " + v.back() + "\n";
    return true;
  }

  /// The statements of a call of leaf `l` held as `self` (FuzzNetImpl::call_leaf), the last one
  /// assigning `to`.
  template <class Fresh>
  static std::optional<std::vector<std::string>> leaf_call(Leaf l, const std::string& self,
                                                           const std::string& x,
                                                           const std::string& y,
                                                           const std::string& to, Fresh&& fresh) {
    const auto image = [](const std::string& t) { return t + ".reshape([6, 4, 2, 2])"; };
    const auto rows = [](const std::string& t) { return t + ".reshape([6, 16])"; };
    const auto sequence = [](const std::string& t) { return t + ".reshape([6, 1, 16])"; };
    const auto call = [&self](const std::string& arg) { return self + "(" + arg + ")"; };
    switch (l) {
      case Leaf::conv2d:
      case Leaf::batch_norm2d:
      case Leaf::avg_pool2d:
      case Leaf::max_pool2d:
        return std::vector<std::string>{to + " = " + rows(call(image(x)))};
      case Leaf::lstm: {
        const std::string t = fresh();
        return std::vector<std::string>{
            t + " = " + call(sequence(x)),
            to + " = " + rows(t + "[0]") + " + " + t + "[1][1].reshape([1, 16])"};
      }
      case Leaf::gru: {
        const std::string t = fresh();
        return std::vector<std::string>{
            t + " = " + call(sequence(x)),
            to + " = " + rows(t + "[0]") + " * " + t + "[1].reshape([1, 16])"};
      }
      case Leaf::attention:
        return std::vector<std::string>{
            to + " = " +
            rows(self + "(" + sequence(x) + ", " + sequence(y) + ", " + sequence(y) + ")[0]")};
      case Leaf::embedding:
        return std::vector<std::string>{
            to + " = " + x + " + " +
            call(x + ".narrow(1, 0, 1).squeeze(1).gt(0.0).to(torch.long)")};
      case Leaf::flatten:
        return std::vector<std::string>{to + " = " + call(x + ".unsqueeze(2)")};
      case Leaf::count_:
        return std::nullopt;
      default:
        return std::vector<std::string>{to + " = " + call(x)};
    }
  }

  /// The statements of op `o` on `x` and `y` (FuzzNetImpl::apply), the last one assigning `to`.
  template <class Fresh>
  std::optional<std::vector<std::string>> op(Op o, bool inplace, const std::string& x,
                                             const std::string& y, const std::string& to,
                                             Fresh&& fresh) const {
    const std::string w = nets_weight_ ? "self.weight" : "self.matrix";
    const auto one = [&to](const std::string& e) {
      return std::vector<std::string>{to + " = " + e};
    };
    const auto either = [&](const std::string& in_place, const std::string& out_of_place) {
      return one(inplace ? in_place : out_of_place);
    };
    switch (o) {
      case Op::relu:
        return either(x + ".relu_()", "torch.relu(" + x + ")");
      case Op::sigmoid:
        return either(x + ".sigmoid_()", "torch.sigmoid(" + x + ")");
      case Op::tanh:
        return either(x + ".tanh_()", "torch.tanh(" + x + ")");
      case Op::add:
        return either(x + ".add_(" + y + ", alpha=0.5)", x + ".add(" + y + ", alpha=0.5)");
      case Op::add_scalar:
        return either(x + ".add_(1.5)", x + ".add(1.5)");
      case Op::sub:
        return either(x + ".sub_(" + y + ")", x + ".sub(" + y + ")");
      case Op::sub_scalar:
        return either(x + ".sub_(0.5, alpha=2)", x + ".sub(0.5, alpha=2)");
      case Op::mul:
        return either(x + ".mul_(" + y + ")", x + ".mul(" + y + ")");
      case Op::mul_scalar:
        return either(x + ".mul_(-0.5)", x + ".mul(-0.5)");
      case Op::div:
        return either(x + ".div_(" + y + ")", x + ".div(" + y + ")");
      case Op::div_scalar:
        return either(x + ".div_(3.0)", x + ".div(3.0)");
      case Op::masked_fill_scalar:
        return either(x + ".masked_fill_(" + y + ".gt(0.0), -1.0)",
                      x + ".masked_fill(" + y + ".gt(0.0), -1.0)");
      case Op::clamp:
        return either(x + ".clamp_(-1.0, 1.0)", x + ".clamp(-1.0, 1.0)");
      case Op::exp:
        return one("torch.exp(" + x + ")");
      case Op::log:
        return one("torch.log(" + x + ")");
      case Op::sqrt:
        return one(x + ".sqrt()");
      case Op::rsqrt:
        return one("torch.rsqrt(" + x + ")");
      case Op::abs:
        return one(x + ".abs()");
      case Op::neg:
        return one("torch.neg(" + x + ")");
      case Op::softmax:
        return one("torch.softmax(" + x + ", 1)");
      case Op::log_softmax:
        return one(x + ".log_softmax(0)");
      case Op::matmul_constant:
        return one("torch.matmul(" + x + ", self.matrix)");
      case Op::mm_parameter:
        return one(x + ".mm(" + w + ")");
      case Op::bmm:
        return one(x + ".reshape([2, 3, 16]).bmm(self.batch_matrix).reshape([6, 16])");
      case Op::flatten:
        return one(x + ".unsqueeze(2).flatten(1)");
      case Op::reshape:
        return one(x + ".reshape([6, 8, 2]).reshape([6, 16])");
      case Op::permute_contiguous:
        return one("contiguous(" + x + ".permute([1, 0])).permute([1, 0])");
      case Op::transpose:
        return one(x + ".transpose(0, 1).transpose(0, 1)");
      case Op::squeeze:
        return one(x + ".unsqueeze(0).squeeze()");
      case Op::squeeze_dim:
        return one(x + ".unsqueeze(1).squeeze(1)");
      case Op::chunk_cat: {
        const std::string t = fresh();
        return std::vector<std::string>{t + " = " + x + ".chunk(2, 1)",
                                        to + " = torch.cat([" + t + "[1], " + t + "[0]], 1)"};
      }
      case Op::split_cat: {
        const std::string t = fresh();
        return std::vector<std::string>{
            t + " = " + x + ".split(4, 1)",
            to + " = torch.cat([" + t + "[3], " + t + "[1], " + t + "[2], " + t + "[0]], 1)"};
      }
      case Op::split_sizes_cat: {
        const std::string t = fresh();
        return std::vector<std::string>{t + " = " + x + ".split([4, 12], 1)",
                                        to + " = torch.cat([" + t + "[1], " + t + "[0]], 1)"};
      }
      case Op::sum_all:
        return one(x + " + " + y + ".sum()");
      case Op::sum_dim:
        return one(x + " + " + y + ".sum([1], True)");
      case Op::mean_all:
        return one(x + " - " + y + ".mean()");
      case Op::mean_dim:
        return one(x + " * " + y + ".mean([0], True)");
      case Op::max_all:
        return one(x + " - " + y + ".max()");
      case Op::max_dim:
        return one(x + " + " + y + ".max(1, True)[0]");
      case Op::max_other:
        return one(x + ".max(" + y + ")");
      case Op::min_all:
        return one(x + " + " + y + ".min()");
      case Op::min_dim:
        return one(x + " - " + y + ".min(0, True)[0]");
      case Op::min_other:
        return one(x + ".min(" + y + ")");
      case Op::pow_scalar:
        return one(x + ".pow(2)");
      case Op::pow_tensor:
        return one(x + ".pow(" + y + ")");
      case Op::eq_where:
        return one("torch.where(" + x + ".eq(" + y + "), " + x + ", " + y + ")");
      case Op::eq_scalar:
        return one(x + ".masked_fill(" + x + ".eq(0.0), 1.0)");
      case Op::ne_to:
        return one(x + " + " + x + ".ne(" + y + ").to(torch.float32)");
      case Op::ne_scalar:
        return one(x + ".ne(0.5).to(torch.float32)");
      case Op::lt_masked:
        return one(x + ".masked_fill(" + x + ".lt(0.0), 0.25)");
      case Op::gt_masked:
        return one(y + ".masked_fill(" + x + ".gt(0.5), 2.0)");
      case Op::masked_fill_tensor:
        return one(x + ".masked_fill(" + y + ".gt(0.0), self.fill)");
      case Op::select_add:
        return one(x + " + " + y + ".select(0, 1)");
      case Op::index_select:
        return one(x + ".index_select(0, self.rows)");
      case Op::narrow_cat:
        return one("torch.cat([" + x + ".narrow(1, 8, 8), " + x + ".narrow(1, 0, 8)], 1)");
      case Op::view:
        return one("contiguous(" + x + ").view([6, 2, 8]).view([6, 16])");
      case Op::expand:
        return one(x + " + " + y + ".sum([1], True).expand([6, 16])");
      case Op::repeat:
        return one(x + ".narrow(1, 0, 8).repeat([1, 2])");
      case Op::unflatten:
        return one(x + ".unflatten(1, [4, 4]).flatten(1)");
      case Op::slice_cat:
        return one("torch.cat([torch.ops.aten.slice(" + x +
                   ", 1, 0, 16, 2), torch.ops.aten.slice(" + x + ", 1, 1, 16, 2)], 1)");
      case Op::to_double:
        return one(x + ".to(torch.float64).to(torch.float32)");
      case Op::clone:
        return one(x + ".clone()");
      case Op::detach:
        return one(x + ".detach()");
      case Op::gelu:
        return one("F.gelu(" + x + ")");
      case Op::dropout:
        return one("torch.dropout(" + x + ", 0.5, False)");
      case Op::layer_norm:
        return one("torch.layer_norm(" + x + ", [16])");
      case Op::linear:
        return one("F.linear(" + x + ", " + w + ", self.bias)");
      case Op::where:
        return one("torch.where(" + y + ".gt(0.25), " + x + ", " + y + ")");
      case Op::stack:
        return one("torch.stack([" + x + ", " + y + "], 0).sum([0])");
      case Op::op_add:
        return one(x + " + " + y);
      case Op::op_sub:
        return one(x + " - " + y);
      case Op::op_mul:
        return one(x + " * " + y);
      case Op::op_div:
        return one(x + " / " + y);
      case Op::op_scalar_sub:
        return one("torch.rsub(" + x + ", 1.0)");
      case Op::op_scalar_div:
        return one("2.0 / " + x);
      case Op::op_neg:
        return one("-" + x);
      case Op::op_compound: {
        const std::string t = fresh();
        return std::vector<std::string>{t + " = " + x, t + " += " + y, to + " = " + t};
      }
      case Op::subscript:
        return one(x + " + " + y + "[2]");
      case Op::count_:
        break;
    }
    return std::nullopt;
  }

  std::vector<const NetSpec*> nets_;
  std::vector<Arity> arity_;
  bool nets_weight_ = false;  ///< the net being written has its own weight (`mm`, `linear`)
};

}  // namespace detail

/// The Python source of the model of `m` (see the file comment): classes `FuzzNet_<k>`, a
/// function `make()` returning the root module, and `INPUTS`, the number of inputs its forward
/// takes. Nullopt for a spec that uses something without a TorchScript form here.
inline std::optional<std::string> python_source(const ModelSpec& m) {
  return detail::PythonEmitter{}.emit(m);
}

}  // namespace fuzz
