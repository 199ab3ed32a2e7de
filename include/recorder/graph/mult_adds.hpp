#pragma once
/// Mult-adds of a recorded graph (no libtorch): torchinfo's per-module estimate, and the
/// function ops it misses, counted from the shapes in the graph.

#include <recorder/graph/graph.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace recorder {

namespace detail {

/// The number of elements of a tensor of shape `s` (1 for a scalar).
inline std::uint64_t numel(Shape s) {
  std::uint64_t n = 1;
  for (auto d : s) n *= static_cast<std::uint64_t>(d);
  return n;
}

}  // namespace detail

/// torchinfo's `calculate_macs` for one call of leaf module `m` whose first output has shape
/// `out`, found by class name: a `Conv...`'s weight and bias count per output position, a
/// `Linear...`'s per output row, other modules' per batch element; RNN-style inner weights
/// (`weight_ih_l0`) count per the output's first two dimensions. With `own_only`, only the
/// parameters the module registers itself count (its submodules' calls count theirs); else
/// the parameters of submodules a leaf forward runs itself (`MultiheadAttention.out_proj`)
/// count like an RNN's inner weights, as torchinfo names them `out_proj.weight`.
///
/// `module_mult_adds(linear_4_to_2, Shape(out_3x2))` is 30: (8 + 2) parameters x 3 rows.
inline std::uint64_t module_mult_adds(const ModuleInfo& m, Shape out, bool own_only = false) {
  if (out.empty()) return 0;
  auto prod = [&](std::size_t b, std::size_t e) {
    std::uint64_t p = 1;
    for (std::size_t i = b; i < e && i < out.size(); ++i) p *= static_cast<std::uint64_t>(out[i]);
    return p;
  };
  const bool conv = m.class_name.find("Conv") != std::string::npos;
  const bool linear = m.class_name.find("Linear") != std::string::npos;
  std::uint64_t macs = 0;
  std::uint64_t direct = 0;
  for (const ParamInfo& p : m.params) {
    direct += p.numel;
    if (p.name == "weight" || p.name == "bias") {
      if (conv)
        macs += p.numel * prod(0, 1) * prod(2, out.size());
      else if (linear)
        macs += p.numel * prod(0, out.size() - 1);
      else
        macs += static_cast<std::uint64_t>(out[0]) * p.numel;
    } else if (p.name.find("weight") != std::string::npos ||
               p.name.find("bias") != std::string::npos) {
      macs += prod(0, 2) * p.numel;
    }
  }
  if (!own_only && m.param_count > direct) macs += prod(0, 2) * (m.param_count - direct);
  return macs;
}

/// How the mult-adds of one function op are counted: one mult-add per product, from the shapes
/// of its tensor operands `in` (in call order) and of its first output `out`; bias additions
/// and `alpha`/`beta` scalings are not counted.
struct OpMultAdds {
  std::string_view op;  ///< as recorded: "matmul", "conv2d" (no in-place underscore)
  /// The count, 0 when the shapes do not fit; `a` and `b` are the two fields below.
  std::uint64_t (*count)(std::span<const Shape> in, Shape out, std::size_t a, std::size_t b);
  std::uint8_t a = 0;  ///< index of the first multiplied operand (the activation)
  std::uint8_t b = 1;  ///< index of the second (the weight, when there is one)
  /// Counted inside leaf calls too: attention, whose QK^T and AV torchinfo's estimate never
  /// sees (the other ops there count only when neither multiplied operand is a weight).
  bool in_leaves = false;
};

namespace detail::mult_adds {

inline std::uint64_t u(std::int64_t d) { return static_cast<std::uint64_t>(d); }

/// Output numel x a's last dimension, the contracted one in every case: [k]·[k], [k]·[k, m],
/// [n, k]·[k], and batched [..., n, k]·[..., k, m] (the output has the broadcast batch).
inline std::uint64_t matmul(std::span<const Shape> in, Shape out, std::size_t a, std::size_t b) {
  if (in.size() <= std::max(a, b) || in[a].empty()) return 0;
  return numel(out) * u(in[a].back());
}

/// a [B, n, k] numel x b's last dimension: B n k m (the output sums over B).
inline std::uint64_t addbmm(std::span<const Shape> in, Shape, std::size_t a, std::size_t b) {
  if (in.size() <= std::max(a, b) || in[a].size() != 3 || in[b].empty()) return 0;
  return numel(in[a]) * u(in[b].back());
}

/// Products per output (or input) element of a convolution with weight `w`: C_in/groups x
/// kernel numel for w [C_out, C_in/groups, k...]; C_out/groups x kernel numel for a
/// transposed w [C_in, C_out/groups, k...].
inline std::uint64_t per_element(Shape w) {
  return w.size() < 2 || w[0] <= 0 ? 0 : numel(w) / u(w[0]);
}

/// The channels of a convolution's input or output `x` with weight `w`: dimension 1, or 0 when
/// unbatched; -1 when `x` has none.
inline std::int64_t channels(Shape x, Shape w) {
  if (x.empty()) return -1;
  return x.size() + 1 == w.size() ? x[0] : (x.size() > 1 ? x[1] : -1);
}

/// x, w [C_out, C_in/groups, k...]: output numel x C_in/groups x kernel numel.
inline std::uint64_t conv(std::span<const Shape> in, Shape out, std::size_t a, std::size_t b) {
  if (in.size() <= std::max(a, b)) return 0;
  return numel(out) * per_element(in[b]);
}

/// x, w [C_in, C_out/groups, k...]: input numel x C_out/groups x kernel numel.
inline std::uint64_t conv_transposed(std::span<const Shape> in, Shape, std::size_t a,
                                     std::size_t b) {
  if (in.size() <= std::max(a, b)) return 0;
  return numel(in[a]) * per_element(in[b]);
}

/// `convolution`, `_convolution`: `conv` or `conv_transposed`. `transposed` is a scalar
/// argument, not in the graph: it is read from the channels. A plain convolution's weight
/// starts with the output's channels, a transposed one's with the input's. When both match
/// (C_in == C_out), the formulas differ only by input or output numel, and the smaller is the
/// right one unless padding outgrows the kernel.
inline std::uint64_t convolution(std::span<const Shape> in, Shape out, std::size_t a,
                                 std::size_t b) {
  if (in.size() <= std::max(a, b)) return 0;
  const Shape x = in[a], w = in[b];
  if (w.empty()) return 0;
  const bool plain = channels(out, w) == w[0];
  const bool transposed = channels(x, w) == w[0];
  const std::uint64_t n = plain && transposed ? std::min(numel(x), numel(out))
                          : transposed        ? numel(x)
                                              : numel(out);
  return n * per_element(w);
}

/// q [..., L, E], k [..., S, E], v [..., S, Ev]: QK^T + AV, that is q numel / E x S x (E + Ev)
/// (the projections a fused op does too are not counted).
inline std::uint64_t attention(std::span<const Shape> in, Shape, std::size_t, std::size_t) {
  if (in.size() < 3) return 0;
  const Shape q = in[0], k = in[1], v = in[2];
  if (q.empty() || k.size() < 2 || v.empty() || q.back() <= 0) return 0;
  const std::uint64_t queries = numel(q) / u(q.back());  // batch x heads x L
  return queries * u(k[k.size() - 2]) * (u(q.back()) + u(v.back()));
}

}  // namespace detail::mult_adds

/// The function ops with mult-adds, each with its count: matmuls (`addmm`, `baddbmm`, `addmv`
/// skip their added operand c), convolutions, attention.
inline constexpr OpMultAdds op_mult_adds_table[] = {
    {"matmul", detail::mult_adds::matmul, 0, 1},
    {"mm", detail::mult_adds::matmul, 0, 1},
    {"bmm", detail::mult_adds::matmul, 0, 1},
    {"mv", detail::mult_adds::matmul, 0, 1},
    {"dot", detail::mult_adds::matmul, 0, 1},
    {"linear", detail::mult_adds::matmul, 0, 1},  // (x, w, bias)
    {"addmm", detail::mult_adds::matmul, 1, 2},   // (c, a, b)
    {"baddbmm", detail::mult_adds::matmul, 1, 2},
    {"addmv", detail::mult_adds::matmul, 1, 2},
    {"addbmm", detail::mult_adds::addbmm, 1, 2},  // (c, a [B, n, k], b [B, k, m])
    {"conv1d", detail::mult_adds::conv, 0, 1},    // (x, w, bias)
    {"conv2d", detail::mult_adds::conv, 0, 1},
    {"conv3d", detail::mult_adds::conv, 0, 1},
    {"conv_transpose1d", detail::mult_adds::conv_transposed, 0, 1},
    {"conv_transpose2d", detail::mult_adds::conv_transposed, 0, 1},
    {"conv_transpose3d", detail::mult_adds::conv_transposed, 0, 1},
    {"convolution", detail::mult_adds::convolution, 0, 1},
    {"_convolution", detail::mult_adds::convolution, 0, 1},
    {"_native_multi_head_attention", detail::mult_adds::attention, 0, 1, true},  // (q, k, v, ...)
    {"scaled_dot_product_attention", detail::mult_adds::attention, 0, 1, true},
    {"_scaled_dot_product_attention", detail::mult_adds::attention, 0, 1, true},
};

/// The row of `op_mult_adds_table` for op `name` (as recorded: "matmul", "conv2d", ...), or
/// null when the op has no mult-adds counted.
inline const OpMultAdds* find_op_mult_adds(std::string_view name) {
  for (const OpMultAdds& row : op_mult_adds_table)
    if (row.op == name) return &row;
  return nullptr;
}

/// The mult-adds of one op `name` with tensor operands of shapes `in` (in call order) and
/// first output of shape `out`; 0 for an op without mult-adds or shapes that do not fit.
///
/// `op_mult_adds("mm", shapes_3x4_and_4x5, shape_3x5)` is 60: 15 outputs, 4 products each.
inline std::uint64_t op_mult_adds(std::string_view name, std::span<const Shape> in, Shape out) {
  const OpMultAdds* row = find_op_mult_adds(name);
  return row ? row->count(in, out, row->a, row->b) : 0;
}

/// Each function node's tensor operands and outputs, in call order, read from the edges.
struct OpEdges {
  std::vector<std::vector<NodeId>> ins;   ///< indexed by node id; empty for other nodes
  std::vector<std::vector<NodeId>> outs;  ///< indexed by node id; empty for other nodes
};

/// The operands and outputs of every function node of `g`.
inline OpEdges op_edges(const Graph& g) {
  OpEdges e{std::vector<std::vector<NodeId>>(g.size()), std::vector<std::vector<NodeId>>(g.size())};
  for (const Edge& x : g.edges()) {
    if (g.kind(x.to) == NodeKind::function && is_tensor_kind(g.kind(x.from)))
      e.ins[x.to.value].push_back(x.from);
    else if (g.kind(x.from) == NodeKind::function && is_tensor_kind(g.kind(x.to)))
      e.outs[x.from.value].push_back(x.to);
  }
  return e;
}

/// Operand provenance: for each node of `g`, whether it is a tensor that comes from parameters
/// and constants alone: those, and what ops make of them only (`t(weight)`). Operands and
/// producers are recorded before what they feed, so one pass in id order suffices.
inline std::vector<bool> from_weights(const Graph& g, const OpEdges& edges) {
  std::vector<bool> out(g.size(), false);
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeKind k = g.kind(NodeId{i});
    if (k == NodeKind::parameter || k == NodeKind::constant) {
      out[i] = true;
    } else if (is_tensor_kind(k)) {
      const NodeId p = g.tensor(NodeId{i}).producer;
      if (p.valid() && g.kind(p) == NodeKind::function) {
        const auto& ins = edges.ins[p.value];
        out[i] = std::all_of(ins.begin(), ins.end(), [&](NodeId x) { return out[x.value]; });
      }
    }
  }
  return out;
}

/// True when torchinfo counts the mult-adds of module call `call` (`module_mult_adds`): a leaf
/// (run as one node) without submodules, seen by torchinfo's hooks (not inferred from the
/// parameters its ops read). A leaf with submodules (`MultiheadAttention`, which never calls its
/// `out_proj`) is not one: torchinfo prints `--` for it and leaves it out of its total.
inline bool counted_by_torchinfo(const Graph& g, NodeId call) {
  const ModuleInfo& m = g.module_of(call);
  return m.leaf && !m.has_children && !g.node(call).inferred;
}

/// The mult-adds of the function ops of `g` that torchinfo's per-module estimate misses (its
/// issue #226: attention's QK^T and AV, matmuls and convolutions written in a forward), each
/// counted by its row of `op_mult_adds_table`.
///
/// Which ops: every one of them recorded in a composite forward (torchinfo counts nothing
/// there), or in a leaf torchinfo does not count (`counted_by_torchinfo`: a
/// `MultiheadAttention`, a call inferred from parameters). Inside a leaf torchinfo counts (its
/// aten ops are recorded only with `record::AtenOps`) it counts the work done with the module's
/// parameters, so only the rest counts: attention ops (their QK^T and AV, not the projections
/// they fuse), and matmul or convolution ops none of whose two multiplied operands (`a` and `b`)
/// comes from parameters and constants alone (a weight, `t(weight)`, a buffer:
/// `from_weights`). In a `Linear` or `Conv2d` nothing does.
inline std::uint64_t functional_mult_adds(const Graph& g) {
  const OpEdges edges = op_edges(g);
  const std::vector<bool> weights = from_weights(g, edges);
  std::uint64_t total = 0;
  std::vector<Shape> shapes;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    const Graph::Node& n = g.node(id);
    if (n.kind != NodeKind::function || edges.outs[i].empty()) continue;
    const OpMultAdds* row = find_op_mult_adds(g.function(id).op);
    if (!row) continue;
    const auto& operands = edges.ins[i];
    if (n.parent.valid() && counted_by_torchinfo(g, n.parent) && !row->in_leaves) {
      // Inside a leaf torchinfo counts: it counts what is done with the module's weights.
      if (operands.size() <= std::max(row->a, row->b) || weights[operands[row->a].value] ||
          weights[operands[row->b].value])
        continue;
    }
    shapes.clear();
    for (NodeId x : operands) shapes.push_back(g.shape(x));
    total += row->count(shapes, g.shape(edges.outs[i].front()), row->a, row->b);
  }
  return total;
}

}  // namespace recorder
