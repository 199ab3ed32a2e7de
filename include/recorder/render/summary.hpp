#pragma once
/// A torchinfo-style summary table of a trace: `recorder::summary(trace)` and `backend::Summary`.

#include <recorder/graph/trace.hpp>
#include <recorder/render/options.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

/// A column of the summary table, with torchinfo's names (`col_names`).
enum class SummaryColumn {
  input_size,      ///< "Input Shape": the call's first input
  output_size,     ///< "Output Shape": the call's first output
  num_params,      ///< "Param #": `(n)` when none is trainable, `(recursive)` for a reused module
  params_percent,  ///< "Param %": share of the total
  kernel_size,     ///< "Kernel Shape": convolutions and poolings
  groups,          ///< "Groups": convolutions
  mult_adds,       ///< "Mult-Adds": torchinfo's estimate from parameters and output shape
  trainable,       ///< "Trainable": True, False, Partial or --
};

/// What a row's label shows, as torchinfo's `row_settings`.
enum class SummaryRowSetting {
  depth,      ///< `Conv2d: 1-1`: depth and index at that depth
  var_names,  ///< `Conv2d (conv1)`: the name the parent registered it under
};

/// How `summary` lays the table out; torchinfo's parameter names and defaults.
///
/// `summary(trace, {.depth = 1, .columns = {SummaryColumn::output_size, SummaryColumn::mult_adds}})`
struct SummaryOptions {
  /// Module calls deeper than this are folded into their ancestor's row (root call: depth 0).
  int depth = 3;
  /// The columns, in order.
  std::vector<SummaryColumn> columns{SummaryColumn::output_size, SummaryColumn::num_params};
  /// Width of every column but the first.
  int col_width = 25;
  /// What row labels show.
  std::vector<SummaryRowSetting> row_settings{SummaryRowSetting::depth};
  /// Tree prefixes `+ ` and `|` instead of box-drawing characters.
  bool ascii_only = false;
  /// One row per parameter under each module row (torchinfo's `verbose=2`); only the
  /// parameters a module registers itself are listed.
  bool verbose = false;
  /// Beyond torchinfo: a `Functional mult-adds` line after `Total mult-adds`, with the
  /// mult-adds of the function ops recorded in the graph that torchinfo's per-module estimate
  /// misses (its issue #226: attention's QK^T and AV, matmuls and convolutions written in a
  /// forward). `Total mult-adds` does not change, so it stays comparable with torchinfo; the
  /// model's count is the two lines added. Off by default, so the table stays torchinfo's byte
  /// for byte.
  ///
  /// Each op counts one mult-add per product, from the shapes of its tensor operands (in call
  /// order) and of its first output; bias additions and `alpha`/`beta` scalings are not counted:
  ///
  /// - `matmul`, `mm`, `bmm`, `mv`, `dot`, `linear` (a, b), and `addmm`, `baddbmm`, `addmv`
  ///   (c, a, b): output numel x a's last dimension (the contracted one, 1-D and batched too);
  /// - `addbmm` (c, a [B, n, k], b [B, k, m]): B n k m;
  /// - `conv1d`, `conv2d`, `conv3d` (x, w [C_out, C_in/groups, k...]): output numel x
  ///   C_in/groups x kernel numel; `conv_transpose1d`..`3d` (x, w [C_in, C_out/groups, k...]):
  ///   input numel x C_out/groups x kernel numel; `convolution`, `_convolution`: either one,
  ///   told apart by which of x and the output has w[0] channels;
  /// - `_native_multi_head_attention`, `scaled_dot_product_attention` (q [..., L, E],
  ///   k [..., S, E], v [..., S, Ev]): QK^T + AV, that is q numel / E x S x (E + Ev).
  ///
  /// Which ops: every one of them recorded in a composite forward (torchinfo counts nothing
  /// there). Inside a leaf module call (its aten ops are recorded only with `record::AtenOps`)
  /// torchinfo already counts the work done with the module's parameters, so only the rest
  /// counts: attention ops (their QK^T and AV, not the projections they fuse), and matmul or
  /// convolution ops none of whose two multiplied operands (a and b, x and w above) comes from
  /// parameters and constants alone (a weight, `t(weight)`, a buffer). In a `MultiheadAttention`
  /// the score and weighted-sum `bmm`s count, its in- and out-projections do not; in a `Linear`
  /// or `Conv2d` nothing does. With `record::Structure` leaves are opaque: the line counts composite
  /// forwards only.
  ///
  /// `summary(Tracer<record::AtenOps>{}.run(net, x), {.functional_mult_adds = true})`
  bool functional_mult_adds = false;
  /// Beyond torchinfo: Input and Output Shape list every tensor of a call, equal shapes merged
  /// (`[1, 100, 512], 2 x [2, 100, 512]` for an LSTM's output, h and c), not just the first.
  /// Off by default, so the table stays torchinfo's byte for byte.
  bool all_outputs = false;
};

/// One row of the table (a module call at or above `depth`), its cells as printed.
struct SummaryRow {
  NodeId call;
  int depth = 0;
  std::string label{};               ///< `Conv2d: 1-1`, with ` (failed)` for a call that threw
  std::vector<std::string> cells{};  ///< one per `SummaryOptions::columns`
};

/// The numbers of a summary: its rows and its totals, before formatting.
struct SummaryTable {
  std::vector<SummaryRow> rows{};
  std::uint64_t total_params = 0;      ///< each parameter tensor once
  std::uint64_t trainable_params = 0;
  std::uint64_t total_mult_adds = 0;   ///< sum over every leaf call, reused ones each time
  std::uint64_t functional_mult_adds = 0;  ///< see `SummaryOptions::functional_mult_adds`
  std::uint64_t input_bytes = 0;       ///< the root's inputs, as Python's `sys.getsizeof`
  std::uint64_t forward_backward_bytes = 0;  ///< outputs of leaf calls with parameters, x2
  std::uint64_t param_bytes = 0;       ///< `total_params` x 4 (float32 parameters assumed)
};

namespace detail::summary_impl {

/// Bytes per element of a dtype named as libtorch names it ("Float", "Long", ...).
inline std::uint64_t element_size(std::string_view dtype) {
  if (dtype == "Double" || dtype == "Long" || dtype == "ComplexFloat") return 8;
  if (dtype == "Half" || dtype == "BFloat16" || dtype == "Short") return 2;
  if (dtype == "Byte" || dtype == "Char" || dtype == "Bool" || dtype == "QInt8" ||
      dtype == "QUInt8")
    return 1;
  if (dtype == "ComplexDouble") return 16;
  return 4;
}

inline std::uint64_t numel(Shape s) {
  std::uint64_t n = 1;
  for (auto d : s) n *= static_cast<std::uint64_t>(d);
  return n;
}

/// 1234567 -> "1,234,567".
inline std::string with_commas(std::uint64_t v) {
  std::string digits = std::to_string(v);
  std::string out;
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i != 0 && (n - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

/// Python's `f"{x:,.2f}"` for a non-negative x.
inline std::string fixed2(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  std::string s(buf);
  const auto dot = s.find('.');
  const std::uint64_t whole = std::stoull(s.substr(0, dot));
  return with_commas(whole) + s.substr(dot);
}

/// torchinfo's `format_output_num` with automatic units: ` (M): 173.71`, ` (kB): 6.33`, `: 856`.
inline std::string format_number(std::uint64_t num, bool is_bytes) {
  struct Unit {
    double factor;
    const char* name;
  };
  static constexpr Unit units[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  const auto x = static_cast<double>(num);
  for (const Unit& u : units) {
    if (x >= u.factor) {
      const double v = x / u.factor;
      std::string s = " (";
      s += u.name;
      if (is_bytes) s += 'B';
      s += "): ";
      if (v == static_cast<double>(static_cast<std::uint64_t>(v)))
        s += with_commas(static_cast<std::uint64_t>(v));
      else
        s += fixed2(v);
      return s;
    }
  }
  return ": " + with_commas(num);
}

/// Display width of a UTF-8 string (code points, as Python's `len`).
inline std::size_t width(std::string_view s) {
  std::size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0u) != 0x80u) ++n;
  return n;
}

inline void pad(std::string& out, std::string_view s, std::size_t w) {
  out += s;
  for (std::size_t n = width(s); n < w; ++n) out += ' ';
}

/// torchinfo's `get_start_str`.
inline std::string start_str(int depth, bool ascii) {
  if (depth <= 0) return {};
  std::string s;
  for (int i = 1; i < depth; ++i) s += ascii ? "|    " : "\u2502    ";
  s += depth == 1 && !ascii ? "\u251c\u2500" : (ascii ? "+ " : "\u2514\u2500");
  return s;
}

inline std::string_view attribute(const ModuleInfo& m, std::string_view key) {
  for (const auto& [k, v] : m.attributes)
    if (k == key) return v;
  return {};
}

inline bool has(const std::vector<SummaryRowSetting>& rs, SummaryRowSetting r) {
  return std::find(rs.begin(), rs.end(), r) != rs.end();
}

/// What is known of one module call, all depths.
struct Call {
  NodeId id;
  int depth = 0;
  std::size_t parent = std::numeric_limits<std::size_t>::max();  ///< index in the call list
  const ModuleInfo* module = nullptr;
  bool leaf = true;
  /// A leaf module's call with calls inside (submodules inferred from its ops' parameters):
  /// shown like a composite, it counts the mult-adds of its own parameters only.
  bool own_macs = false;
  bool recursive = false;
  bool failed = false;
  std::uint64_t macs = 0;          ///< leaf calls (and `own_macs` ones) only
  std::uint64_t subtree_macs = 0;  ///< macs of the leaf calls below (itself included)
  std::int64_t leftover = 0;       ///< torchinfo's `leftover_params`
};

/// torchinfo's `calculate_macs` for a leaf call with first output `out`; with `own_only`, the
/// parameters the module registers itself only (its submodules' calls count theirs).
inline std::uint64_t mult_adds(const ModuleInfo& m, Shape out, bool own_only = false) {
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
  // Parameters of submodules a leaf forward runs itself (`MultiheadAttention.out_proj`):
  // torchinfo names them `out_proj.weight`, counted like an RNN's inner weights.
  if (!own_only && m.param_count > direct) macs += prod(0, 2) * (m.param_count - direct);
  return macs;
}

/// How a function op's mult-adds are counted (`SummaryOptions::functional_mult_adds`).
enum class OpFamily : std::uint8_t {
  none,             ///< not counted
  matmul,           ///< output numel x operand a's last dimension
  addbmm,           ///< a [B, n, k] numel x b's last dimension (the output sums over B)
  conv,             ///< output numel x weight numel / weight[0]
  conv_transposed,  ///< input numel x weight numel / weight[0]
  convolution,      ///< `convolution`, `_convolution`: either of the two above, from the shapes
  attention,        ///< QK^T + AV from q, k and v
};

/// An op's family, and which of its tensor operands it multiplies together.
struct FunctionalOp {
  OpFamily family = OpFamily::none;
  std::uint8_t a = 0;  ///< index of the first multiplied operand
  std::uint8_t b = 1;  ///< index of the second
};

/// The family of op `name` (as recorded: "matmul", "conv2d", ...).
inline FunctionalOp functional_op(std::string_view name) {
  using F = OpFamily;
  static constexpr std::pair<std::string_view, FunctionalOp> table[] = {
      {"matmul", {F::matmul, 0, 1}},
      {"mm", {F::matmul, 0, 1}},
      {"bmm", {F::matmul, 0, 1}},
      {"mv", {F::matmul, 0, 1}},
      {"dot", {F::matmul, 0, 1}},
      {"linear", {F::matmul, 0, 1}},
      {"addmm", {F::matmul, 1, 2}},
      {"baddbmm", {F::matmul, 1, 2}},
      {"addmv", {F::matmul, 1, 2}},
      {"addbmm", {F::addbmm, 1, 2}},
      {"conv1d", {F::conv, 0, 1}},
      {"conv2d", {F::conv, 0, 1}},
      {"conv3d", {F::conv, 0, 1}},
      {"conv_transpose1d", {F::conv_transposed, 0, 1}},
      {"conv_transpose2d", {F::conv_transposed, 0, 1}},
      {"conv_transpose3d", {F::conv_transposed, 0, 1}},
      {"convolution", {F::convolution, 0, 1}},
      {"_convolution", {F::convolution, 0, 1}},
      {"_native_multi_head_attention", {F::attention, 0, 1}},
      {"scaled_dot_product_attention", {F::attention, 0, 1}},
      {"_scaled_dot_product_attention", {F::attention, 0, 1}},
  };
  for (const auto& [n, f] : table)
    if (n == name) return f;
  return {};
}

/// The mult-adds of one op of family `f`, from its tensor operands `in` (in call order) and its
/// first output `out`; 0 when the shapes do not fit the family.
inline std::uint64_t op_mult_adds(FunctionalOp f, std::span<const Shape> in, Shape out) {
  const auto u = [](std::int64_t d) { return static_cast<std::uint64_t>(d); };
  // Products per output (or input) element of a convolution: C_in/groups x kernel numel for
  // w [C_out, C_in/groups, k...]; C_out/groups x kernel numel for a transposed w [C_in, ...].
  const auto per_element = [&](Shape w) -> std::uint64_t {
    return w.size() < 2 || w[0] <= 0 ? 0 : numel(w) / u(w[0]);
  };
  // The channel dimension of a convolution's input or output: 1, or 0 when unbatched.
  const auto channels = [&](Shape x, Shape w) -> std::int64_t {
    if (x.empty()) return -1;
    return x.size() + 1 == w.size() ? x[0] : (x.size() > 1 ? x[1] : -1);
  };
  switch (f.family) {
    case OpFamily::none: return 0;
    case OpFamily::matmul: {
      // matmul's contracted dimension is a's last in every case: [k]·[k], [k]·[k, m],
      // [n, k]·[k], and batched [..., n, k]·[..., k, m] (the output has the broadcast batch).
      if (in.size() <= std::max(f.a, f.b) || in[f.a].empty()) return 0;
      return numel(out) * u(in[f.a].back());
    }
    case OpFamily::addbmm: {
      if (in.size() <= std::max(f.a, f.b) || in[f.a].size() != 3 || in[f.b].empty()) return 0;
      return numel(in[f.a]) * u(in[f.b].back());
    }
    case OpFamily::conv:
      if (in.size() < 2) return 0;
      return numel(out) * per_element(in[1]);
    case OpFamily::conv_transposed:
      if (in.size() < 2) return 0;
      return numel(in[0]) * per_element(in[1]);
    case OpFamily::convolution: {
      // `transposed` is a scalar argument, not in the graph: read it from the channels. A plain
      // convolution's weight starts with the output's channels, a transposed one's with the
      // input's. When both match (C_in == C_out), the formulas differ only by input or output
      // numel, and the smaller is the right one unless padding outgrows the kernel.
      if (in.size() < 2) return 0;
      const Shape x = in[0], w = in[1];
      if (w.empty()) return 0;
      const bool plain = channels(out, w) == w[0];
      const bool transposed = channels(x, w) == w[0];
      const std::uint64_t n = plain && transposed ? std::min(numel(x), numel(out))
                              : transposed         ? numel(x)
                                                   : numel(out);
      return n * per_element(w);
    }
    case OpFamily::attention: {
      if (in.size() < 3) return 0;
      const Shape q = in[0], k = in[1], v = in[2];
      if (q.empty() || k.size() < 2 || v.empty() || q.back() <= 0) return 0;
      const std::uint64_t queries = numel(q) / u(q.back());  // batch x heads x L
      return queries * u(k[k.size() - 2]) * (u(q.back()) + u(v.back()));
    }
  }
  return 0;
}

/// The functional mult-adds of graph `g`, as `SummaryOptions::functional_mult_adds` says.
inline std::uint64_t functional_mult_adds(const Graph& g) {
  // Each function's tensor operands and outputs, in call order, from the edges.
  std::vector<std::vector<NodeId>> ins(g.size()), outs(g.size());
  for (const Edge& e : g.edges()) {
    if (g.kind(e.to) == NodeKind::function && is_tensor_kind(g.kind(e.from)))
      ins[e.to.value].push_back(e.from);
    else if (g.kind(e.from) == NodeKind::function && is_tensor_kind(g.kind(e.to)))
      outs[e.from.value].push_back(e.to);
  }
  // Tensors that come from parameters and constants alone: those, and what ops make of them
  // only (`t(weight)`). Operands and producers are recorded before what they feed.
  std::vector<char> from_weights(g.size(), 0);
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeKind k = g.kind(NodeId{i});
    if (k == NodeKind::parameter || k == NodeKind::constant) {
      from_weights[i] = 1;
    } else if (is_tensor_kind(k)) {
      const NodeId p = g.tensor(NodeId{i}).producer;
      if (p.valid() && g.kind(p) == NodeKind::function)
        from_weights[i] = std::all_of(ins[p.value].begin(), ins[p.value].end(),
                                      [&](NodeId x) { return from_weights[x.value] != 0; });
    }
  }
  std::uint64_t total = 0;
  std::vector<Shape> shapes;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    const Graph::Node& n = g.node(id);
    if (n.kind != NodeKind::function || outs[i].empty()) continue;
    const FunctionalOp f = functional_op(g.function(id).op);
    if (f.family == OpFamily::none) continue;
    const auto& operands = ins[i];
    if (n.parent.valid() && g.module_of(n.parent).leaf && f.family != OpFamily::attention) {
      // Inside a leaf: torchinfo counts what is done with the module's weights.
      if (operands.size() <= std::max(f.a, f.b) || from_weights[operands[f.a].value] ||
          from_weights[operands[f.b].value])
        continue;
    }
    shapes.clear();
    for (NodeId x : operands) shapes.push_back(g.shape(x));
    total += op_mult_adds(f, shapes, g.shape(outs[i].front()));
  }
  return total;
}

inline std::string shape_or_dashes(const Graph& g, const std::vector<NodeId>& ids, bool all = false) {
  if (ids.empty()) return "--";
  if (!all || ids.size() == 1) return to_string(g.shape(ids.front()));
  // Every shape, equal ones merged in order of first appearance.
  std::vector<std::pair<std::string, std::size_t>> groups;
  for (NodeId id : ids) {
    std::string s = to_string(g.shape(id));
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == s; });
    if (it == groups.end()) groups.emplace_back(std::move(s), 1);
    else ++it->second;
  }
  std::string out;
  for (const auto& [shape, count] : groups) {
    if (!out.empty()) out += ", ";
    if (count > 1) out.append(std::to_string(count)).append(" x ");
    out += shape;
  }
  return out;
}

}  // namespace detail::summary_impl

/// The rows and totals of the summary of `trace`, without the layout (for tests and tools).
inline SummaryTable summarize(const Trace& trace, const SummaryOptions& options = {}) {
  namespace si = detail::summary_impl;
  const Graph& g = trace.graph;
  std::vector<si::Call> calls;
  std::vector<std::size_t> index_of(g.size(), std::numeric_limits<std::size_t>::max());
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    const Graph::Node& n = g.node(id);
    if (n.kind != NodeKind::module) continue;
    si::Call c;
    c.id = id;
    c.depth = n.depth;
    c.module = &g.module_of(id);
    c.leaf = c.module->leaf;
    c.failed = n.failed;
    c.recursive = g.call(id).call_index > 0 && c.module->param_count > 0;
    if (n.parent.valid() && index_of[n.parent.value] != std::numeric_limits<std::size_t>::max()) {
      c.parent = index_of[n.parent.value];
    }
    index_of[i] = calls.size();
    calls.push_back(std::move(c));
  }

  SummaryTable t;
  t.total_params = trace.total_params;
  t.trainable_params = trace.trainable_params;
  t.param_bytes = trace.total_params * 4;
  if (trace.root.valid() && g.node(trace.root).kind == NodeKind::module)
    for (NodeId in : g.call(trace.root).inputs)
      t.input_bytes += si::numel(g.shape(in)) * si::element_size(g.tensor(in).dtype) + 56;

  // A leaf call with calls inside (submodules inferred from its ops' parameters) is shown like a
  // composite, its submodules carrying their own numbers as torchinfo's hooks would see them;
  // it still counts the mult-adds of the parameters it registers itself.
  for (const si::Call& c : calls) {
    if (c.parent == std::numeric_limits<std::size_t>::max() || !calls[c.parent].leaf) continue;
    calls[c.parent].leaf = false;
    calls[c.parent].own_macs = true;
  }
  for (si::Call& c : calls) {
    if (!c.leaf && !c.own_macs) continue;
    const auto& outs = g.call(c.id).outputs;
    if (outs.empty()) continue;
    const Shape out = g.shape(outs.front());
    c.macs = si::mult_adds(*c.module, out, c.own_macs);
    t.total_mult_adds += c.macs;
    if (c.leaf && c.module->param_count > 0)
      t.forward_backward_bytes += 2 * si::numel(out) * si::element_size(g.tensor(outs.front()).dtype);
    for (std::size_t k = static_cast<std::size_t>(&c - calls.data());
         k != std::numeric_limits<std::size_t>::max(); k = calls[k].parent)
      calls[k].subtree_macs += c.macs;
  }
  t.functional_mult_adds = si::functional_mult_adds(g);

  // torchinfo's leftover_params: a call's parameters less those its descendants show (a
  // leaf all of its own, a composite its leftover; reused calls nothing). Bottom-up: a
  // call's descendants always come after it.
  std::vector<std::int64_t> shown_below(calls.size(), 0);
  for (std::size_t k = calls.size(); k-- > 0;) {
    si::Call& c = calls[k];
    c.leftover = static_cast<std::int64_t>(c.module->param_count) - shown_below[k];
    if (c.parent == std::numeric_limits<std::size_t>::max()) continue;
    std::int64_t shown = shown_below[k];
    if (!c.recursive)
      shown += c.leaf ? static_cast<std::int64_t>(c.module->param_count) : c.leftover;
    shown_below[c.parent] += shown;
  }

  const bool show_depth = si::has(options.row_settings, SummaryRowSetting::depth);
  const bool show_var = si::has(options.row_settings, SummaryRowSetting::var_names);
  for (const si::Call& c : calls) {
    if (c.depth > options.depth) continue;
    const ModuleInfo& m = *c.module;
    const Graph::CallData& cd = g.call(c.id);
    SummaryRow row;
    row.call = c.id;
    row.depth = c.depth;
    row.label = m.class_name;
    if (show_var && !m.name.empty()) row.label += " (" + m.name + ")";
    if (show_depth && c.depth > 0)
      row.label += ": " + std::to_string(c.depth) + "-" + std::to_string(cd.depth_index);
    if (c.failed) row.label += " (failed)";
    const bool full = c.leaf || c.depth == options.depth;
    const std::uint64_t shown =
        full ? m.param_count : static_cast<std::uint64_t>(std::max<std::int64_t>(c.leftover, 0));
    for (SummaryColumn col : options.columns) {
      std::string cell;
      switch (col) {
        case SummaryColumn::input_size: cell = si::shape_or_dashes(g, cd.inputs, options.all_outputs); break;
        case SummaryColumn::output_size: cell = si::shape_or_dashes(g, cd.outputs, options.all_outputs); break;
        case SummaryColumn::num_params:
          if (c.recursive) cell = "(recursive)";
          else if (m.param_count == 0 || shown == 0) cell = "--";
          else if (full && m.trainable_count == 0) cell = "(" + si::with_commas(shown) + ")";
          else cell = si::with_commas(shown);
          break;
        case SummaryColumn::params_percent:
          if (c.recursive) {
            cell = "(recursive)";
          } else if (t.total_params == 0 || shown == 0) {
            cell = "     --";
          } else {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%6.2f%%",
                          static_cast<double>(shown) / static_cast<double>(t.total_params) * 100.0);
            cell = buf;
          }
          break;
        case SummaryColumn::kernel_size: {
          const auto k = si::attribute(m, "kernel_size");
          cell = k.empty() ? std::string("--") : std::string(k);
          break;
        }
        case SummaryColumn::groups: {
          const auto k = si::attribute(m, "groups");
          cell = k.empty() ? std::string("--") : std::string(k);
          break;
        }
        case SummaryColumn::mult_adds: {
          const std::uint64_t v =
              c.leaf ? c.macs : (c.depth == options.depth ? c.subtree_macs : (c.own_macs ? c.macs : 0));
          cell = v == 0 ? std::string("--") : si::with_commas(v);
          break;
        }
        case SummaryColumn::trainable:
          if (m.param_count == 0) cell = "--";
          else if (m.trainable_count == 0) cell = "False";
          else if (m.trainable_count == m.param_count) cell = "True";
          else cell = "Partial";
          break;
      }
      row.cells.push_back(std::move(cell));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

/// The torchinfo summary of `trace`, exactly as `print(torchinfo.summary(...))` writes it
/// (trailing newline included). A partial trace gives the rows up to the failing call, whose
/// label ends in ` (failed)`.
///
/// ```
/// std::cout << recorder::summary(trace);                        // torchinfo's defaults
/// recorder::summary(trace, {.depth = 1, .verbose = true});
/// ```
inline std::string summary(const Trace& trace, const SummaryOptions& options = {}) {
  namespace si = detail::summary_impl;
  const SummaryTable t = summarize(trace, options);
  const Graph& g = trace.graph;
  const bool show_depth = si::has(options.row_settings, SummaryRowSetting::depth);
  const bool show_var = si::has(options.row_settings, SummaryRowSetting::var_names);
  const auto col_width = static_cast<std::size_t>(std::max(options.col_width, 0));

  // Layer column width: the longest label of any call (folded ones too), depth * 5 + 1 for
  // its prefix, rounded up to a multiple of 5; at least 40.
  std::size_t name_width = 40;
  {
    std::size_t longest = 0;
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const NodeId id{i};
      const Graph::Node& n = g.node(id);
      if (n.kind != NodeKind::module) continue;
      const ModuleInfo& m = g.module_of(id);
      std::size_t len = si::width(m.class_name);
      if (show_var && !m.name.empty()) len += si::width(m.name) + 3;
      if (show_depth && n.depth > 0)
        len += 2 + std::to_string(n.depth).size() + 1 + std::to_string(g.call(id).depth_index).size();
      if (n.failed) len += 9;
      longest = std::max(longest, len + std::size_t{n.depth} * 5 + 1);
    }
    if (longest >= name_width) name_width = (longest + 4) / 5 * 5;
  }
  const std::size_t total_width = options.columns.size() * col_width + name_width;
  const std::string divider(total_width, '=');

  std::string out;
  auto row = [&](std::string_view name, const std::vector<std::string>& cells) {
    const std::size_t start = out.size();
    si::pad(out, name, name_width);
    out += ' ';
    for (const auto& c : cells) {
      si::pad(out, c, col_width);
      out += ' ';
    }
    while (out.size() > start && out.back() == ' ') out.pop_back();
    out += '\n';
  };

  out += divider + '\n';
  {
    std::string header = "Layer (type";
    if (show_var) header += " (var_name)";
    if (show_depth) header += ":depth-idx";
    header += ')';
    std::vector<std::string> titles;
    for (SummaryColumn c : options.columns) {
      switch (c) {
        case SummaryColumn::input_size: titles.emplace_back("Input Shape"); break;
        case SummaryColumn::output_size: titles.emplace_back("Output Shape"); break;
        case SummaryColumn::num_params: titles.emplace_back("Param #"); break;
        case SummaryColumn::params_percent: titles.emplace_back("Param %"); break;
        case SummaryColumn::kernel_size: titles.emplace_back("Kernel Shape"); break;
        case SummaryColumn::groups: titles.emplace_back("Groups"); break;
        case SummaryColumn::mult_adds: titles.emplace_back("Mult-Adds"); break;
        case SummaryColumn::trainable: titles.emplace_back("Trainable"); break;
      }
    }
    row(header, titles);
  }
  out += divider + '\n';
  for (const SummaryRow& r : t.rows) {
    row(si::start_str(r.depth, options.ascii_only) + r.label, r.cells);
    if (!options.verbose) continue;
    const auto& params = g.module_of(r.call).params;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const ParamInfo& p = params[i];
      std::vector<std::string> cells(options.columns.size());
      for (std::size_t c = 0; c < options.columns.size(); ++c) {
        if (options.columns[c] == SummaryColumn::kernel_size) {
          std::vector<std::int64_t> k = p.shape;
          if (p.name == "weight" && k.size() > 1) std::swap(k[0], k[1]);
          cells[c] = to_string(Shape(k.data(), k.size()));
        } else if (options.columns[c] == SummaryColumn::num_params) {
          // torchinfo draws these with box characters even when `ascii_only`.
          cells[c] = (i + 1 == params.size() ? "\u2514\u2500" : "\u251c\u2500") +
                     si::with_commas(p.numel);
        }
      }
      row(si::start_str(r.depth + 1, options.ascii_only) + p.name, cells);
    }
  }
  out += divider + '\n';
  out += "Total params: " + si::with_commas(t.total_params) + '\n';
  out += "Trainable params: " + si::with_commas(t.trainable_params) + '\n';
  out += "Non-trainable params: " + si::with_commas(t.total_params - t.trainable_params) + '\n';
  out += "Total mult-adds" + si::format_number(t.total_mult_adds, false) + '\n';
  if (options.functional_mult_adds)
    out += "Functional mult-adds" + si::format_number(t.functional_mult_adds, false) + '\n';
  out += divider + '\n';
  out += "Input size" + si::format_number(t.input_bytes, true) + '\n';
  out += "Forward/backward pass size" + si::format_number(t.forward_backward_bytes, true) + '\n';
  out += "Params size" + si::format_number(t.param_bytes, true) + '\n';
  out += "Estimated Total Size" +
         si::format_number(t.input_bytes + t.forward_backward_bytes + t.param_bytes, true) + '\n';
  out += divider + '\n';
  return out;
}

namespace backend {

/// The torchinfo summary table as a render backend (`.txt`). It uses the default
/// `SummaryOptions` with `depth` taken from `RenderOptions::depth` (no limit when unset);
/// call `recorder::summary` for the other options.
struct Summary {
  static constexpr std::string_view extension = ".txt";
  static void render(const Trace& trace, const RenderOptions& options, std::ostream& os) {
    std::string s;
    render_to(trace, options, s);
    os << s;
  }
  static void render_to(const Trace& trace, const RenderOptions& options, std::string& out) {
    SummaryOptions o;
    o.depth = options.depth ? *options.depth : std::numeric_limits<int>::max();
    out += summary(trace, o);
  }
};

}  // namespace backend

}  // namespace recorder
