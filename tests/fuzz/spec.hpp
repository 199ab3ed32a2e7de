#pragma once
/// The fuzzer's models as data (torch-free): a seeded generator of random module trees and
/// programs, the ways to shrink one, and its listing as C++-like text (the reproducer).
///
/// A model is a tree of `NetSpec`s, each one composite module (`FuzzNet`) whose forward runs
/// its `steps` over a list of values (every value an [kRows, kFeatures] float tensor): an op
/// from the op catalogue, or a call of one of its children (a leaf module, another net, a
/// `recorder::Sequential` or `recorder::ModuleList` of nets, a `torch::nn::Sequential` of
/// leaves). Operands are indices into the values, taken modulo their count, so removing a
/// step or a child never makes a spec invalid: that is what lets a failure shrink.

#include "../policies/splitmix.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace fuzz {

inline constexpr std::int64_t kRows = 6;       ///< rows of every value (even: bmm splits them)
inline constexpr std::int64_t kFeatures = 16;  ///< = 4 channels x 2 x 2 for the 2-d leaves

/// The leaf modules a net can hold (libtorch's, called through `recorder::Module`).
enum class Leaf : std::uint8_t {
  linear,
  linear_no_bias,
  conv2d,
  batch_norm2d,
  batch_norm1d,
  lstm,
  gru,
  attention,
  embedding,
  layer_norm,
  dropout,
  identity,
  flatten,
  relu,
  gelu,
  tanh,
  softmax,
  avg_pool2d,
  max_pool2d,
  count_
};

/// The op catalogue: each entry runs one or a few traced ops and leaves one [kRows, kFeatures]
/// float value. Together they reach every line of `ops_table.hpp`, the operators, and the
/// in-place variants (`Step::inplace`).
enum class Op : std::uint16_t {
  relu,
  sigmoid,
  tanh,  // in-place capable unary
  add,
  add_scalar,
  sub,
  sub_scalar,  // in-place capable binary
  mul,
  mul_scalar,
  div,
  div_scalar,
  masked_fill_scalar,
  clamp,
  exp,
  log,
  sqrt,
  rsqrt,
  abs,
  neg,  // unary, free and method
  softmax,
  log_softmax,
  matmul_constant,
  mm_parameter,
  bmm,
  flatten,
  reshape,
  permute_contiguous,
  transpose,
  squeeze,
  squeeze_dim,
  chunk_cat,
  split_cat,
  split_sizes_cat,
  sum_all,
  sum_dim,
  mean_all,
  mean_dim,
  max_all,
  max_dim,
  max_other,
  min_all,
  min_dim,
  min_other,
  pow_scalar,
  pow_tensor,
  eq_where,
  eq_scalar,
  ne_to,
  ne_scalar,
  lt_masked,
  gt_masked,
  masked_fill_tensor,
  select_add,
  index_select,
  narrow_cat,
  view,
  expand,
  repeat,
  unflatten,
  slice_cat,
  to_double,
  clone,
  detach,
  gelu,
  dropout,
  layer_norm,
  linear,
  where,
  stack,
  op_add,
  op_sub,
  op_mul,
  op_div,
  op_scalar_sub,
  op_scalar_div,
  op_neg,
  op_compound,
  subscript,
  count_
};

/// Whether an op has an in-place form the catalogue can take (`x.relu_()`, `x.add_(y)`, ...).
inline bool inplace_capable(Op op) { return op <= Op::clamp; }

struct NetSpec;

/// One child of a net.
struct ChildSpec {
  enum class Kind : std::uint8_t { leaf, net, sequential, module_list, torch_sequential };
  Kind kind = Kind::leaf;
  Leaf leaf = Leaf::linear;     ///< kind leaf
  std::vector<Leaf> leaves{};   ///< kind torch_sequential: its leaves, each one value in, one out
  std::vector<NetSpec> nets{};  ///< kind net (one), sequential and module_list (one or more)
};

/// One step of a net's forward.
struct Step {
  enum class Kind : std::uint8_t { op, call, call_pair };
  Kind kind = Kind::op;
  std::uint16_t what = 0;      ///< the `Op`, or the child (modulo the children)
  std::uint16_t element = 0;   ///< module_list: which net (modulo its size)
  std::uint32_t a = 0, b = 0;  ///< operands: value indices modulo the values so far
  bool inplace = false;        ///< op: its in-place form
};

/// One composite module: its children, its forward, and what its pair forward returns.
struct NetSpec {
  std::vector<ChildSpec> children{};
  std::vector<Step> steps{};
  bool has_weight = false;             ///< a registered [kFeatures, kFeatures] parameter of its own
  std::uint32_t out_a = 0, out_b = 0;  ///< pair forward: returns (back, (out_a, out_b))
};

struct ModelSpec {
  std::uint64_t seed = 0;
  NetSpec root{};
  bool pair_root = false;  ///< the root runs its pair forward: two inputs, a nested tuple out
};

/// The fuzzer's generator: splitmix64 (the tests' own, the same on every platform) with the two
/// draws the generator makes.
struct Random : recorder::testing::SplitMix {
  /// Uniform in [0, n).
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
  bool chance(std::uint32_t percent) { return below(100) < percent; }
};

namespace detail {

inline NetSpec generate_net(Random& r, int depth_left);

inline ChildSpec generate_child(Random& r, int depth_left) {
  ChildSpec c;
  const std::uint32_t roll = r.below(100);
  if (depth_left > 0 && roll < 18) {
    c.kind = ChildSpec::Kind::net;
    c.nets.push_back(generate_net(r, depth_left - 1));
  } else if (depth_left > 0 && roll < 24) {
    c.kind = ChildSpec::Kind::sequential;
    for (std::uint32_t i = 0, n = 1 + r.below(3); i < n; ++i)
      c.nets.push_back(generate_net(r, depth_left - 1));
  } else if (depth_left > 0 && roll < 30) {
    c.kind = ChildSpec::Kind::module_list;
    for (std::uint32_t i = 0, n = 1 + r.below(3); i < n; ++i)
      c.nets.push_back(generate_net(r, depth_left - 1));
  } else if (roll < 36) {
    c.kind = ChildSpec::Kind::torch_sequential;
    // A torch Sequential chains one value through its leaves: only shape-keeping 2-d ones.
    static constexpr Leaf chainable[] = {Leaf::linear,  Leaf::batch_norm1d, Leaf::layer_norm,
                                         Leaf::dropout, Leaf::identity,     Leaf::relu,
                                         Leaf::gelu,    Leaf::tanh,         Leaf::softmax};
    for (std::uint32_t i = 0, n = 1 + r.below(3); i < n; ++i)
      c.leaves.push_back(chainable[r.below(std::size(chainable))]);
  } else {
    c.kind = ChildSpec::Kind::leaf;
    c.leaf = static_cast<Leaf>(r.below(static_cast<std::uint32_t>(Leaf::count_)));
  }
  return c;
}

inline NetSpec generate_net(Random& r, int depth_left) {
  NetSpec n;
  n.has_weight = r.chance(20);
  const std::uint32_t children = r.below(depth_left > 0 ? 5 : 4);
  for (std::uint32_t i = 0; i < children; ++i) n.children.push_back(generate_child(r, depth_left));
  const std::uint32_t steps = 1 + r.below(8);
  for (std::uint32_t i = 0; i < steps; ++i) {
    Step s;
    s.a = r.below(1000);
    s.b = r.below(1000);
    if (!n.children.empty() && r.chance(40)) {
      s.what = static_cast<std::uint16_t>(r.below(static_cast<std::uint32_t>(n.children.size())));
      s.element = static_cast<std::uint16_t>(r.below(8));
      const ChildSpec& c = n.children[s.what];
      const bool pairable =
          c.kind == ChildSpec::Kind::net || c.kind == ChildSpec::Kind::module_list;
      s.kind = pairable && r.chance(30) ? Step::Kind::call_pair : Step::Kind::call;
    } else {
      s.kind = Step::Kind::op;
      s.what = static_cast<std::uint16_t>(r.below(static_cast<std::uint32_t>(Op::count_)));
      s.inplace = inplace_capable(static_cast<Op>(s.what)) && r.chance(40);
    }
    n.steps.push_back(s);
  }
  // Every child is called at least once (reused children are called more often).
  for (std::size_t i = 0; i < n.children.size(); ++i) {
    bool called = false;
    for (const Step& s : n.steps) called |= s.kind != Step::Kind::op && s.what == i;
    if (!called)
      n.steps.push_back(Step{Step::Kind::call, static_cast<std::uint16_t>(i), 0, r.below(1000),
                             r.below(1000), false});
  }
  n.out_a = r.below(1000);
  n.out_b = r.below(1000);
  return n;
}

}  // namespace detail

/// The model of `seed`: nets nesting 0 to 5 deep.
inline ModelSpec generate(std::uint64_t seed) {
  Random r{{seed * 0x2545f4914f6cdd1dULL + 1}};
  ModelSpec m;
  m.seed = seed;
  const int depth = static_cast<int>(r.below(6));
  m.root = detail::generate_net(r, depth);
  m.pair_root = r.chance(25);
  return m;
}

inline const char* name(Leaf l) {
  static constexpr const char* names[] = {"Linear(16, 16)",
                                          "Linear(16, 16, bias=false)",
                                          "Conv2d(4, 4, 3, padding=1)",
                                          "BatchNorm2d(4)",
                                          "BatchNorm1d(16)",
                                          "LSTM(16, 16)",
                                          "GRU(16, 16)",
                                          "MultiheadAttention(16, 2)",
                                          "Embedding(10, 16)",
                                          "LayerNorm({16})",
                                          "Dropout(0.5)",
                                          "Identity()",
                                          "Flatten()",
                                          "ReLU()",
                                          "GELU()",
                                          "Tanh()",
                                          "Softmax(1)",
                                          "AvgPool2d(3, 1, 1)",
                                          "MaxPool2d(3, 1, 1)"};
  static_assert(std::size(names) == static_cast<std::size_t>(Leaf::count_));
  return names[static_cast<std::size_t>(l)];
}

inline const char* name(Op op) {
  static constexpr const char* names[] = {"relu",
                                          "sigmoid",
                                          "tanh",
                                          "add",
                                          "add_scalar",
                                          "sub",
                                          "sub_scalar",
                                          "mul",
                                          "mul_scalar",
                                          "div",
                                          "div_scalar",
                                          "masked_fill_scalar",
                                          "clamp",
                                          "exp",
                                          "log",
                                          "sqrt",
                                          "rsqrt",
                                          "abs",
                                          "neg",
                                          "softmax",
                                          "log_softmax",
                                          "matmul_constant",
                                          "mm_parameter",
                                          "bmm",
                                          "flatten",
                                          "reshape",
                                          "permute_contiguous",
                                          "transpose",
                                          "squeeze",
                                          "squeeze_dim",
                                          "chunk_cat",
                                          "split_cat",
                                          "split_sizes_cat",
                                          "sum_all",
                                          "sum_dim",
                                          "mean_all",
                                          "mean_dim",
                                          "max_all",
                                          "max_dim",
                                          "max_other",
                                          "min_all",
                                          "min_dim",
                                          "min_other",
                                          "pow_scalar",
                                          "pow_tensor",
                                          "eq_where",
                                          "eq_scalar",
                                          "ne_to",
                                          "ne_scalar",
                                          "lt_masked",
                                          "gt_masked",
                                          "masked_fill_tensor",
                                          "select_add",
                                          "index_select",
                                          "narrow_cat",
                                          "view",
                                          "expand",
                                          "repeat",
                                          "unflatten",
                                          "slice_cat",
                                          "to_double",
                                          "clone",
                                          "detach",
                                          "gelu",
                                          "dropout",
                                          "layer_norm",
                                          "linear",
                                          "where",
                                          "stack",
                                          "op_add",
                                          "op_sub",
                                          "op_mul",
                                          "op_div",
                                          "op_scalar_sub",
                                          "op_scalar_div",
                                          "op_neg",
                                          "op_compound",
                                          "subscript"};
  static_assert(std::size(names) == static_cast<std::size_t>(Op::count_));
  return names[static_cast<std::size_t>(op)];
}

namespace detail {

inline void list_net(const NetSpec& n, const std::string& indent, std::string& out) {
  for (std::size_t i = 0; i < n.children.size(); ++i) {
    const ChildSpec& c = n.children[i];
    out += indent + "child " + std::to_string(i) + ": ";
    switch (c.kind) {
      case ChildSpec::Kind::leaf:
        out += std::string(name(c.leaf)) + '\n';
        break;
      case ChildSpec::Kind::torch_sequential:
        out += "torch::nn::Sequential(";
        for (std::size_t j = 0; j < c.leaves.size(); ++j)
          out += (j ? ", " : "") + std::string(name(c.leaves[j]));
        out += ")\n";
        break;
      case ChildSpec::Kind::net:
      case ChildSpec::Kind::sequential:
      case ChildSpec::Kind::module_list:
        out += c.kind == ChildSpec::Kind::net          ? "FuzzNet\n"
               : c.kind == ChildSpec::Kind::sequential ? "recorder::Sequential<FuzzNet>\n"
                                                       : "recorder::ModuleList<FuzzNet>\n";
        for (std::size_t j = 0; j < c.nets.size(); ++j) {
          if (c.kind != ChildSpec::Kind::net) out += indent + "  [" + std::to_string(j) + "]\n";
          list_net(c.nets[j], indent + "    ", out);
        }
        break;
    }
  }
  if (n.has_weight) out += indent + "weight: parameter [16, 16]\n";
  for (const Step& s : n.steps) {
    out += indent;
    const std::string operands = "(v[" + std::to_string(s.a) + "], v[" + std::to_string(s.b) + "])";
    switch (s.kind) {
      case Step::Kind::op:
        out += std::string(name(static_cast<Op>(s.what))) + (s.inplace ? "_ " : " ") + operands;
        break;
      case Step::Kind::call:
      case Step::Kind::call_pair:
        out += std::string(s.kind == Step::Kind::call ? "call" : "call pair") + " child " +
               std::to_string(s.what) + " [" + std::to_string(s.element) + "] " + operands;
        break;
    }
    out += '\n';
  }
  out += indent + "return v.back() (pair: v[" + std::to_string(n.out_a) + "], v[" +
         std::to_string(n.out_b) + "])\n";
}

}  // namespace detail

/// The model as text: each net's children, then its steps (`v` is the list of values, indices
/// taken modulo its size).
inline std::string listing(const ModelSpec& m) {
  std::string out = "seed " + std::to_string(m.seed) + (m.pair_root ? ", pair root\n" : "\n");
  out += "root FuzzNet\n";
  detail::list_net(m.root, "  ", out);
  return out;
}

/// The number of steps and children in the whole tree (a shrinking measure).
inline std::size_t size(const NetSpec& n) {
  std::size_t s = n.steps.size() + n.children.size();
  for (const ChildSpec& c : n.children) {
    s += c.leaves.size();
    for (const NetSpec& k : c.nets) s += size(k);
  }
  return s;
}

namespace detail {

/// Visits every net of a model, by its path of (child, element) indices.
struct NetWalker {
  using Path = std::vector<std::pair<std::size_t, std::size_t>>;
  template <class Edit>
  void each_net(const NetSpec& n, Path& path, Edit&& edit) {
    edit(n, path);
    for (std::size_t i = 0; i < n.children.size(); ++i)
      for (std::size_t j = 0; j < n.children[i].nets.size(); ++j) {
        path.emplace_back(i, j);
        each_net(n.children[i].nets[j], path, edit);
        path.pop_back();
      }
  }
  static NetSpec& at(ModelSpec& copy, const Path& p) {
    NetSpec* n = &copy.root;
    for (const auto& [i, j] : p) n = &n->children[i].nets[j];
    return *n;
  }
};

}  // namespace detail

/// Every spec one removal smaller than `m`: a step, a child, a net of a container, a leaf of a
/// torch Sequential, the weight, the pair root. Used to shrink a failing model.
inline std::vector<ModelSpec> smaller(const ModelSpec& m) {
  std::vector<ModelSpec> out;
  if (m.pair_root) {
    out.push_back(m);
    out.back().pair_root = false;
  }
  detail::NetWalker walker;
  std::vector<std::pair<std::size_t, std::size_t>> path;
  walker.each_net(m.root, path, [&](const NetSpec& n, const auto& p) {
    for (std::size_t i = 0; i < n.children.size(); ++i) {  // whole children first: big steps
      ModelSpec copy = m;
      NetSpec& net = detail::NetWalker::at(copy, p);
      net.children.erase(net.children.begin() + static_cast<std::ptrdiff_t>(i));
      std::vector<Step> kept;
      for (Step s : net.steps) {
        if (s.kind != Step::Kind::op && s.what == i) continue;
        if (s.kind != Step::Kind::op && s.what > i) --s.what;
        kept.push_back(s);
      }
      net.steps = std::move(kept);
      out.push_back(std::move(copy));
    }
    for (std::size_t i = 0; i < n.steps.size(); ++i) {
      ModelSpec copy = m;
      NetSpec& net = detail::NetWalker::at(copy, p);
      net.steps.erase(net.steps.begin() + static_cast<std::ptrdiff_t>(i));
      out.push_back(std::move(copy));
    }
    for (std::size_t i = 0; i < n.children.size(); ++i) {
      const ChildSpec& c = n.children[i];
      if (c.nets.size() > 1)
        for (std::size_t j = 0; j < c.nets.size(); ++j) {
          ModelSpec copy = m;
          auto& nets = detail::NetWalker::at(copy, p).children[i].nets;
          nets.erase(nets.begin() + static_cast<std::ptrdiff_t>(j));
          out.push_back(std::move(copy));
        }
      if (c.leaves.size() > 1)
        for (std::size_t j = 0; j < c.leaves.size(); ++j) {
          ModelSpec copy = m;
          auto& leaves = detail::NetWalker::at(copy, p).children[i].leaves;
          leaves.erase(leaves.begin() + static_cast<std::ptrdiff_t>(j));
          out.push_back(std::move(copy));
        }
    }
    if (n.has_weight) {
      ModelSpec copy = m;
      detail::NetWalker::at(copy, p).has_weight = false;
      out.push_back(std::move(copy));
    }
  });
  return out;
}

/// The smallest spec found from `m` that still `fails`: greedy removal until none fails.
template <class Fails>
ModelSpec shrink(ModelSpec m, Fails&& fails, std::size_t max_attempts = 2000) {
  std::size_t attempts = 0;
  for (bool progress = true; progress && attempts < max_attempts;) {
    progress = false;
    for (ModelSpec& candidate : smaller(m)) {
      if (++attempts > max_attempts) break;
      if (fails(candidate)) {
        m = std::move(candidate);
        progress = true;
        break;
      }
    }
  }
  return m;
}

}  // namespace fuzz
