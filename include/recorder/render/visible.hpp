#pragma once
/// The visible graph: which recorded nodes and edges a picture shows at a given depth
/// (torchview's rules). The data type is in render/visible_graph.hpp, rolling in
/// render/roll.hpp; this header computes it, step by step (`detail::visible_graph_within`).

#include <recorder/detail/id_map.hpp>
#include <recorder/graph/graph.hpp>
#include <recorder/render/options.hpp>
#include <recorder/render/roll.hpp>
#include <recorder/render/visible_graph.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace recorder {
namespace detail {

/// For every recorded node, the outermost module call (itself included) that is drawn as
/// one box: a leaf call that is not `opened`, or any call not `within` the depth limit (indexed
/// by node). Invalid when there is none. `opened` (indexed by node, may be empty) marks leaf
/// calls drawn through.
inline std::vector<NodeId> folding_calls(const Graph& g, const std::vector<char>& within,
                                         const std::vector<char>& opened = {}) {
  const std::size_t n = g.size();
  const auto folds = [&](NodeId id) {
    const Graph::Node& nd = g.node(id);
    if (nd.kind != NodeKind::module) return false;
    const bool open = id.value < opened.size() && opened[id.value];
    return (g.module_of(id).leaf && !open) || !within[id.value];
  };
  std::vector<NodeId> out(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const NodeId self{i};
    const NodeId parent = g.node(self).parent;
    NodeId found;
    if (parent.valid() && parent.value < i) {
      found = out[parent.value];
    } else if (parent.valid() && parent.value < n) {
      // A parent recorded after its child (not produced by the tracer): walk the chain.
      std::vector<NodeId> chain;
      for (NodeId cur = parent; cur.valid() && cur.value < n && chain.size() <= n;
           cur = g.node(cur).parent)
        chain.push_back(cur);
      for (auto it = chain.rbegin(); it != chain.rend() && !found.valid(); ++it)
        if (folds(*it)) found = *it;
    }
    if (!found.valid() && folds(self)) found = self;
    out[i] = found;
  }
  return out;
}

/// Per recorded node: 1 for the module calls within depth limit `limit` (depth < limit).
inline std::vector<char> calls_within(const Graph& g, int limit) {
  std::vector<char> within(g.size(), 0);
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const Graph::Node& nd = g.node(NodeId{i});
    within[i] = nd.kind == NodeKind::module && nd.depth < limit;
  }
  return within;
}

/// Per recorded node: 1 for the module calls drawn through when exactly the composite calls
/// in `expanded` are, and for the leaf calls not hidden inside a box (so that a leaf drawn
/// through with `hide_module_functions` off is one that is seen). Ids out of range are ignored.
inline std::vector<char> calls_within(const Graph& g, const std::vector<NodeId>& expanded) {
  const std::size_t n = g.size();
  std::vector<char> chosen(n, 0);
  for (NodeId id : expanded)
    if (id.valid() && id.value < n) chosen[id.value] = 1;
  // 0 or 1 once known, 2 while being computed (a malformed parent cycle counts as closed).
  std::vector<char> within(n, 3);
  const auto compute = [&](const auto& self, std::uint32_t i) -> char {
    if (within[i] != 3) return within[i] == 1;
    within[i] = 2;
    const Graph::Node& nd = g.node(NodeId{i});
    char open = 0;
    if (nd.kind == NodeKind::module) {
      const NodeId p = nd.parent;
      const bool seen = !p.valid() || p.value >= n || (self(self, p.value) && !g.module_of(p).leaf);
      open = seen && (g.module_of(NodeId{i}).leaf || chosen[i]);
    }
    within[i] = open;
    return open;
  };
  for (std::uint32_t i = 0; i < n; ++i) compute(compute, i);
  return within;
}

/// For every recorded node, the innermost call among its strict ancestors that has a cluster
/// (`cluster_of`, indexed by node); none when there is none.
inline std::vector<ClusterId> enclosing_clusters(const Graph& g,
                                                 const std::vector<ClusterId>& cluster_of) {
  const std::size_t n = g.size();
  std::vector<ClusterId> out(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const NodeId parent = g.node(NodeId{i}).parent;
    if (!parent.valid() || parent.value >= n) continue;
    if (parent.value < i) {
      out[i] = cluster_of[parent.value].valid() ? cluster_of[parent.value] : out[parent.value];
      continue;
    }
    std::size_t steps = 0;  // a parent recorded after its child: walk the chain
    for (NodeId cur = parent; cur.valid() && cur.value < n && steps <= n;
         cur = g.node(cur).parent, ++steps)
      if (cluster_of[cur.value].valid()) {
        out[i] = cluster_of[cur.value];
        break;
      }
  }
  return out;
}

/// What `reached_from_inputs` says of a recorded node.
enum class Reach : char {
  no,       ///< no model input reaches it
  yes,      ///< a model input reaches it
  creation  ///< an op without tensor operands (`torch.arange`, `torch.full`): its tensors are
            ///< reached, the op itself is not drawn
};

/// Per recorded node, whether a model input reaches it along the recorded data flow (tensor ->
/// op that reads it -> tensor it made). The flow starts at the inputs and at the ops without
/// tensor operands, as torchview's does: it wraps torch's creation functions so their tensors
/// are traced, and draws no node for them. A module call is reached through its inputs, and
/// passes the flow on only to the tensors it made itself (a leaf whose ops were not recorded);
/// what its inside made is reached, or not, through the ops inside. Every node is reached when
/// the graph has no input.
inline std::vector<Reach> reached_from_inputs(const Graph& g) {
  const std::size_t n = g.size();
  // The flow's steps: the recorded edges, and a module call's input list (a composite call
  // has no edges of its own), but out of a call only to what the call made.
  std::vector<Edge> steps;
  steps.reserve(g.edges().size());
  std::vector<char> fed(n, 0);  // ops with a tensor operand
  for (const Edge& e : g.edges()) {
    if (e.from.value >= n || e.to.value >= n) continue;
    if (is_tensor_kind(g.kind(e.from))) fed[e.to.value] = 1;
    if (g.kind(e.from) != NodeKind::module ||
        (is_tensor_kind(g.kind(e.to)) && g.tensor(e.to).producer == e.from))
      steps.push_back(e);
  }
  for (std::uint32_t i = 0; i < n; ++i)
    if (g.kind(NodeId{i}) == NodeKind::module)
      for (NodeId t : g.call(NodeId{i}).inputs)
        if (t.value < n) steps.push_back(Edge{t, NodeId{i}});
  std::vector<std::uint32_t> start(n + 1, 0);
  for (const Edge& e : steps) ++start[e.from.value + 1];
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<std::uint32_t> next(start[n]);
  std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
  for (const Edge& e : steps) next[fill[e.from.value]++] = e.to.value;

  std::vector<Reach> reached(n, Reach::no);
  std::vector<std::uint32_t> stack;
  bool inputs = false;
  for (std::uint32_t i = 0; i < n; ++i) {
    const NodeKind k = g.kind(NodeId{i});
    inputs |= k == NodeKind::input;
    if (k == NodeKind::input || (k == NodeKind::function && !fed[i])) {
      reached[i] = k == NodeKind::input ? Reach::yes : Reach::creation;
      stack.push_back(i);
    }
  }
  if (!inputs) return std::vector<Reach>(n, Reach::yes);
  while (!stack.empty()) {
    const std::uint32_t i = stack.back();
    stack.pop_back();
    for (std::uint32_t k = start[i]; k < start[i + 1]; ++k)
      if (reached[next[k]] == Reach::no) reached[next[k]] = Reach::yes, stack.push_back(next[k]);
  }
  return reached;
}

}  // namespace detail

/// Computes what a picture of `g` shows with `options` (torchview's rules).
///
/// With depth limit D (unlimited when `options.depth` is empty):
/// - input and output tensors are always drawn;
/// - a module call at depth D, and a leaf call above it, is drawn as one box that stands for
///   everything recorded inside it (edges to or from hidden nodes are re-routed to the box);
/// - without `hide_module_functions`, a leaf call above depth D that has function nodes
///   recorded directly inside it (an op-level observer) is drawn through instead: its
///   functions are drawn; an edge into the call is dropped when a node inside consumes the same
///   tensor and otherwise re-routed to the first function inside, and a tensor the call itself
///   produced comes from the last function inside;
/// - a composite call above depth D is not drawn: its contents are (so the root call is only
///   drawn, as one box, when D is 0);
/// - a function node is drawn unless it lies inside such a box;
/// - with `hide_unreached`, an op (function or module call) that no model input reaches
///   (`detail::reached_from_inputs`), and an op without tensor operands, is not drawn where it
///   would be drawn as itself, nor a tensor it made; edges from or to it are dropped;
/// - with `hide_inner_tensors`, intermediate tensors are contracted (an edge t -> op becomes
///   producer -> op), constants and parameters are hidden, except, without `hide_unreached`,
///   those outside boxes read by a drawn op that no input reaches (a buffer sliced into a
///   mask: the op's only inputs); without it, an intermediate tensor is drawn when its
///   producer is drawn as itself, and constants and parameters when they are not inside a box;
/// - self-loops are dropped and parallel edges kept once, in first-seen order, with `count`
///   the number of distinct tensors flowing along them (a tensor used twice by the same node
///   counts once; a box fed one tensor at two places inside counts once);
/// - with `expand_nested`, every call drawn through at depth >= 1 that has something drawn
///   inside becomes a cluster (`clusters`, in recording order); a node's `cluster` is the
///   innermost one around it;
/// - with `roll`, op nodes that are the same thing called again become one node (`calls` says
///   how many): calls of a module with parameters merge by module object; a module call
///   without parameters, or a function, merges with the calls of the same module (same op
///   name) that feed the same rolled nodes (keys are computed from the outputs backwards).
///   Tensor nodes never merge. Edges between the same rolled pair merge, their counts summed,
///   in first-seen order; self-loops made by merging stay. A merged node keeps the first
///   call's representative, inputs and outputs, and the innermost cluster around all of them;
///   clusters of calls of one module with parameters merge the same way (into the first).
inline VisibleGraph visible_graph(const Graph& g, const RenderOptions& options) {
  const int limit =
      options.depth ? (*options.depth < 0 ? 0 : *options.depth) : std::numeric_limits<int>::max();
  return detail::visible_graph_within(g, options, detail::calls_within(g, limit));
}

/// What a picture of `g` shows with `options` when exactly the composite module calls in
/// `expanded` are drawn through (their contents shown) and every other one is one box, at any
/// depth: `options.depth` is ignored, the other options apply as in `visible_graph(g, options)`.
/// A call inside a box stays hidden whether or not it is in `expanded`. With `expanded` the
/// composite calls of depth < D this is the picture at depth D; the HTML viewer draws this
/// graph for the calls the user opened (torchlens #24: choose what collapses, call by call).
inline VisibleGraph visible_graph(const Graph& g, const RenderOptions& options,
                                  const std::vector<NodeId>& expanded) {
  return detail::visible_graph_within(g, options, detail::calls_within(g, expanded));
}

namespace detail {

/// Step 1: the leaf calls drawn through (`hide_module_functions` off), indexed by node: those
/// within the limit that have function nodes recorded directly inside. Empty when none is.
inline std::vector<char> opened_leaves(const Graph& g, const RenderOptions& options,
                                       const std::vector<char>& within) {
  if (options.hide_module_functions) return {};
  const std::size_t n = g.size();
  std::vector<char> opened(n, 0);
  bool any = false;
  for (std::uint32_t i = 0; i < n; ++i) {
    const Graph::Node& nd = g.node(NodeId{i});
    if (nd.kind != NodeKind::function || !nd.parent.valid() || nd.parent.value >= n) continue;
    const Graph::Node& p = g.node(nd.parent);
    if (p.kind == NodeKind::module && g.module_of(nd.parent).leaf && within[nd.parent.value])
      opened[nd.parent.value] = 1, any = true;
  }
  if (!any) opened.clear();
  return opened;
}

/// What the steps after the first share: the graph, the options, and per recorded node the
/// call that folds it (`folding_calls`), whether it is a leaf call drawn through, and whether
/// it is drawn as itself.
struct VisibleSteps {
  const Graph& g;
  const RenderOptions& options;
  std::vector<NodeId> folding;
  std::vector<char> opened;  // empty when no leaf is drawn through
  std::vector<char> drawn;

  std::size_t size() const noexcept { return g.size(); }
  bool is_op(NodeId id) const { return id.valid() && id.value < size() && is_op_kind(g.kind(id)); }
  bool is_opened(NodeId id) const { return !opened.empty() && opened[id.value]; }
  /// An op drawn as itself: a function outside every box, a call that is its own box.
  bool op_drawn(NodeId id) const {
    return g.kind(id) == NodeKind::function ? !folding[id.value].valid() : folding[id.value] == id;
  }
};

/// Step 2: which recorded nodes are drawn as themselves (`visible_graph`'s rules for inputs and
/// outputs, ops, intermediate tensors, constants and parameters, and what no input reaches).
inline std::vector<char> drawn_nodes(const VisibleSteps& s) {
  const std::size_t n = s.size();
  const bool hide = s.options.hide_inner_tensors;
  // Reach is needed to hide what no input reaches, and, when that is drawn, to draw the
  // constants and parameters it reads (with `hide_inner_tensors`; without it they are drawn).
  const bool sources = !s.options.hide_unreached && hide;
  const std::vector<Reach> reach = s.options.hide_unreached || sources
                                       ? reached_from_inputs(s.g)
                                       : std::vector<Reach>(n, Reach::yes);
  const auto reached = [&](std::uint32_t i) {
    return !s.options.hide_unreached || reach[i] == Reach::yes;
  };
  std::vector<char> drawn(n, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    const NodeId id{i};
    switch (s.g.kind(id)) {
      case NodeKind::input:
      case NodeKind::output:
        drawn[i] = 1;
        break;
      case NodeKind::function:
      case NodeKind::module:
        drawn[i] = s.op_drawn(id) && reached(i);
        break;
      case NodeKind::tensor: {
        const NodeId producer = s.g.tensor(id).producer;
        drawn[i] = !hide && (s.is_op(producer) ? s.op_drawn(producer) && reached(producer.value)
                                               : !s.folding[i].valid());
        break;
      }
      case NodeKind::constant:
      case NodeKind::parameter:
        drawn[i] = !hide && !s.folding[i].valid();
        break;
    }
  }
  // An op no input reaches, drawn as itself, reads only constants and parameters (a mask
  // sliced from a buffer, a bias table indexed): they are its inputs, so they are drawn.
  if (sources)
    for (const Edge& e : s.g.edges()) {
      if (e.from.value >= n || e.to.value >= n || !drawn[e.to.value] ||
          reach[e.to.value] != Reach::no || !s.is_op(e.to) || s.folding[e.from.value].valid())
        continue;
      const NodeKind k = s.g.kind(e.from);
      if (k == NodeKind::constant || k == NodeKind::parameter) drawn[e.from.value] = 1;
    }
  return drawn;
}

/// Step 3: the drawn nodes become `vg`'s nodes, in recording order; every recorded node gets
/// its representative: itself when drawn, the box around it when an op folded into one.
inline void place_nodes(const VisibleSteps& s, VisibleGraph& vg, std::vector<std::uint32_t>& rep) {
  const std::size_t n = s.size();
  rep.assign(n, VisibleGraph::none);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!s.drawn[i]) continue;
    const NodeId id{i};
    VisibleNode v;
    v.node = id;
    v.kind = s.g.kind(id);
    v.collapsed = v.kind == NodeKind::module && !s.g.module_of(id).leaf;
    rep[i] = static_cast<std::uint32_t>(vg.nodes.size());
    vg.nodes.push_back(std::move(v));
  }
  for (std::uint32_t i = 0; i < n; ++i)
    if (!s.drawn[i] && s.is_op(NodeId{i}) && s.folding[i].valid()) rep[i] = rep[s.folding[i].value];
}

/// The leaf calls drawn through: the first and last drawn op inside each, and which tensors
/// an op inside consumes (an edge into the call for such a tensor is dropped).
class OpenedLeaves {
 public:
  OpenedLeaves(const VisibleSteps& s, const std::vector<std::uint32_t>& rep) {
    if (s.opened.empty()) return;
    const std::size_t n = s.size();
    for (std::uint32_t i = 0; i < n; ++i) {
      const NodeId parent = s.g.node(NodeId{i}).parent;
      if (!parent.valid() || parent.value >= n || !s.opened[parent.value] || !s.drawn[i] ||
          !s.is_op(NodeId{i}))
        continue;
      auto [v, fresh] = through_.try_emplace(parent.value, IdMap::pair_key(rep[i], rep[i]));
      if (!fresh) *v = IdMap::pair_key(static_cast<std::uint32_t>(*v >> 32), rep[i]);
    }
    for (const Edge& e : s.g.edges()) {
      if (e.from.value >= n || e.to.value >= n) continue;
      const NodeId parent = s.g.node(e.to).parent;
      if (parent.valid() && parent.value < n && s.opened[parent.value])
        consumed_inside_.insert(IdMap::pair_key(e.from.value, parent.value));
    }
  }
  /// The first (`first`) or last drawn op inside opened call `call`, or none.
  std::uint32_t op(NodeId call, bool first) const {
    const std::uint64_t* v = through_.find(call.value);
    if (v == nullptr) return VisibleGraph::none;
    return static_cast<std::uint32_t>(first ? *v >> 32 : *v);
  }
  /// True when an op inside opened call `call` consumes tensor `t`.
  bool consumed_inside(NodeId t, NodeId call) const {
    return consumed_inside_.contains(IdMap::pair_key(t.value, call.value));
  }

 private:
  IdMap through_;          // opened call -> (first op << 32) | last op
  IdMap consumed_inside_;  // (tensor << 32) | opened call
};

/// Step 4: every recorded edge becomes an edge between the visible nodes that stand for its
/// ends (skipped when either has none, and for self-loops), kept once per pair in first-seen
/// order with the number of distinct tensors along it; op and call nodes get their tensor
/// inputs and outputs.
inline void route_edges(const VisibleSteps& s, VisibleGraph& vg,
                        const std::vector<std::uint32_t>& rep) {
  constexpr std::uint32_t none = VisibleGraph::none;
  const std::size_t n = s.size();
  const Graph& g = s.g;
  const OpenedLeaves leaves(s, rep);
  const auto op_rep = [&](NodeId a) -> std::uint32_t {
    if (rep[a.value] != none || !s.is_opened(a)) return rep[a.value];
    return leaves.op(a, /*first=*/false);
  };
  const auto source = [&](NodeId a) -> std::uint32_t {
    if (s.drawn[a.value]) return rep[a.value];
    switch (g.kind(a)) {
      case NodeKind::function:
      case NodeKind::module:
        return op_rep(a);
      case NodeKind::tensor: {
        const NodeId producer = g.tensor(a).producer;
        if (s.is_op(producer)) return op_rep(producer);
        return s.folding[a.value].valid() ? rep[s.folding[a.value].value] : none;
      }
      default:
        return none;
    }
  };
  const auto target = [&](NodeId from, NodeId b) -> std::uint32_t {
    if (s.is_opened(b) && !s.drawn[b.value])
      return leaves.consumed_inside(from, b) ? none : leaves.op(b, /*first=*/true);
    if (s.drawn[b.value] || s.is_op(b)) return rep[b.value];
    return none;
  };

  IdMap edge_of;                   // (s << 32) | t -> edge index
  std::vector<NodeId> first_flow;  // per edge: its first tensor
  IdMap more_flows;                // (edge << 32) | later tensor
  for (const Edge& e : g.edges()) {
    if (e.from.value >= n || e.to.value >= n) continue;
    const NodeKind from_kind = g.kind(e.from);
    const NodeKind to_kind = g.kind(e.to);
    if (s.drawn[e.to.value] && is_op_kind(to_kind) && is_tensor_kind(from_kind))
      vg.nodes[rep[e.to.value]].inputs.push_back(e.from);
    if (s.drawn[e.from.value] && is_op_kind(from_kind) && is_tensor_kind(to_kind) &&
        to_kind != NodeKind::output)
      vg.nodes[rep[e.from.value]].outputs.push_back(e.to);

    const std::uint32_t a = source(e.from);
    const std::uint32_t b = target(e.from, e.to);
    if (a == none || b == none || a == b) continue;
    const NodeId flow = is_tensor_kind(from_kind) ? e.from : e.to;
    const auto [v, fresh] = edge_of.try_emplace(IdMap::pair_key(a, b), vg.edges.size());
    const auto edge = static_cast<std::uint32_t>(*v);
    if (fresh) {
      vg.edges.push_back(VisibleEdge{a, b, 1});
      first_flow.push_back(flow);
    } else if (first_flow[edge] != flow && more_flows.insert(IdMap::pair_key(edge, flow.value))) {
      ++vg.edges[edge].count;
    }
  }
  // A call's own lists are its inputs and outputs (a composite call has no edges).
  for (VisibleNode& v : vg.nodes) {
    if (v.kind != NodeKind::module) continue;
    const Graph::CallData& c = g.call(v.node);
    if (!c.inputs.empty()) v.inputs.assign(c.inputs.begin(), c.inputs.end());
    if (!c.outputs.empty()) v.outputs.assign(c.outputs.begin(), c.outputs.end());
  }
}

/// Step 5 (`expand_nested`): every call drawn through at depth >= 1 gets a cluster, in
/// recording order, nested in the innermost one around it; each node goes in the innermost
/// cluster around it. Empty clusters are pruned at the end.
inline void make_clusters(const VisibleSteps& s, VisibleGraph& vg) {
  const std::size_t n = s.size();
  std::vector<ClusterId> cluster_of(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const Graph::Node& nd = s.g.node(NodeId{i});
    if (nd.kind != NodeKind::module || nd.depth < 1 || s.folding[i].valid()) continue;
    cluster_of[i] = ClusterId{static_cast<std::uint32_t>(vg.clusters.size())};
    vg.clusters.push_back(VisibleCluster{NodeId{i}, ClusterId{}});
  }
  if (vg.clusters.empty()) return;
  const std::vector<ClusterId> around = enclosing_clusters(s.g, cluster_of);
  for (VisibleCluster& c : vg.clusters) c.parent = around[c.call.value];
  for (VisibleNode& v : vg.nodes) v.cluster = around[v.node.value];
}

/// `visible_graph` with the calls drawn through given per node (`within`, see `folding_calls`):
/// the steps in order, then `roll` and the pruning of empty clusters.
inline VisibleGraph visible_graph_within(const Graph& g, const RenderOptions& options,
                                         const std::vector<char>& within) {
  VisibleSteps s{g, options, {}, opened_leaves(g, options, within), {}};
  s.folding = folding_calls(g, within, s.opened);
  s.drawn = drawn_nodes(s);
  VisibleGraph vg;
  place_nodes(s, vg, vg.rep_);
  route_edges(s, vg, vg.rep_);
  if (options.expand_nested) make_clusters(s, vg);
  if (options.roll) roll(vg, g);
  vg.prune_clusters();
  return vg;
}

}  // namespace detail
}  // namespace recorder
