#pragma once
/// The visible graph: which recorded nodes and edges a picture shows at a given depth.

#include <recorder/graph/graph.hpp>
#include <recorder/detail/id_map.hpp>
#include <recorder/render/options.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace recorder {

/// One drawn node. It stands for the recorded node `node` and, for a folded module call,
/// everything recorded inside it.
struct VisibleNode {
  NodeId node;  ///< the recorded node drawn (its representative)
  NodeKind kind = NodeKind::tensor;
  bool collapsed = false;       ///< a composite module call drawn as one box
  std::vector<NodeId> inputs;   ///< op and module nodes: tensor nodes flowing in, in order
  std::vector<NodeId> outputs;  ///< op and module nodes: tensor nodes flowing out, in order
  std::uint32_t calls = 1;      ///< how many recorded calls or ops were rolled into this node
  std::int32_t cluster = -1;    ///< innermost cluster containing it (`VisibleGraph::clusters`)
};

/// One drawn edge between two visible nodes (indices into `VisibleGraph::nodes`).
struct VisibleEdge {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  std::uint32_t count = 1;  ///< how many parallel edges between `from` and `to` were merged
  friend constexpr bool operator==(const VisibleEdge&, const VisibleEdge&) = default;
};

/// A composite module call drawn as a cluster around its contents (`expand_nested`).
struct VisibleCluster {
  NodeId call;               ///< the recorded module call
  std::int32_t parent = -1;  ///< the enclosing cluster's index, or -1
  friend constexpr bool operator==(const VisibleCluster&, const VisibleCluster&) = default;
};

class VisibleGraph;
namespace detail {
inline VisibleGraph visible_graph_within(const Graph& g, const RenderOptions& options,
                                         const std::vector<char>& within);
}  // namespace detail

/// What a picture of a graph shows: nodes in recording order of their representative (the
/// index in `nodes` is the node's stable id), and de-duplicated edges in first-seen order.
class VisibleGraph {
 public:
  std::vector<VisibleNode> nodes;
  std::vector<VisibleEdge> edges;
  std::vector<VisibleCluster> clusters;  ///< in recording order of their calls

  /// The visible node that stands for recorded node `id`: itself when drawn, the folded
  /// module call around it when hidden inside one, nothing when it is not shown at all
  /// (a composite call drawn through, a contracted tensor).
  std::optional<std::uint32_t> representative(NodeId id) const {
    if (id.value >= rep_.size() || rep_[id.value] == none) return std::nullopt;
    return rep_[id.value];
  }

  /// The index stored for nodes without a representative.
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

 private:
  friend VisibleGraph detail::visible_graph_within(const Graph& g, const RenderOptions& options,
                                                   const std::vector<char>& within);
  inline void roll(const Graph& g);
  inline void prune_clusters();
  std::vector<std::uint32_t> rep_;  // per recorded node: its representative's index, or none
};

/// How many times a backend draws edge `e`: once when `options.strict` (the parallel edges are
/// merged), `e.count` times otherwise.
constexpr std::uint32_t drawn_copies(const VisibleEdge& e, const RenderOptions& options) noexcept {
  return options.strict || e.count == 0 ? 1u : e.count;
}

/// The label of the `k`-th drawn copy (1-based) of edge `e`, torchview's convention: not
/// strict, copy k >= 2 is labelled `" xk"`; strict and rolled, the one copy is labelled
/// `" xN"` with N = `e.count` > 1; otherwise (the first copy, or strict without `roll`) empty.
inline std::string edge_label(const VisibleEdge& e, std::uint32_t k, const RenderOptions& options) {
  if (!options.strict) return k >= 2 ? " x" + std::to_string(k) : std::string();
  return options.roll && e.count > 1 ? " x" + std::to_string(e.count) : std::string();
}

namespace detail {

/// True for the kinds that are ops (drawn as boxes with input and output shapes).
constexpr bool is_op_kind(NodeKind k) noexcept {
  return k == NodeKind::function || k == NodeKind::module;
}

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

/// For every recorded node, the innermost call among its strict ancestors that `is_cluster`
/// marks, as an index into `cluster_index`; -1 when there is none.
inline std::vector<std::int32_t> enclosing_clusters(
    const Graph& g, const std::vector<std::int32_t>& cluster_index) {
  const std::size_t n = g.size();
  std::vector<std::int32_t> out(n, -1);
  const auto own = [&](NodeId id) { return cluster_index[id.value]; };
  for (std::uint32_t i = 0; i < n; ++i) {
    const NodeId parent = g.node(NodeId{i}).parent;
    if (!parent.valid() || parent.value >= n) continue;
    if (parent.value < i) {
      out[i] = own(parent) >= 0 ? own(parent) : out[parent.value];
      continue;
    }
    std::size_t steps = 0;  // a parent recorded after its child: walk the chain
    for (NodeId cur = parent; cur.valid() && cur.value < n && steps <= n;
         cur = g.node(cur).parent, ++steps)
      if (own(cur) >= 0) {
        out[i] = own(cur);
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
///   producer -> op), constants and parameters are hidden; without it, an intermediate tensor
///   is drawn when its producer is drawn as itself, and constants and parameters when they
///   are not inside a box;
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

/// `visible_graph` with the calls drawn through given per node (`within`, see `folding_calls`).
inline VisibleGraph visible_graph_within(const Graph& g, const RenderOptions& options,
                                         const std::vector<char>& within) {
  constexpr std::uint32_t none = VisibleGraph::none;
  const bool hide = options.hide_inner_tensors;
  const std::size_t n = g.size();

  // Leaf calls drawn through (hide_module_functions off): function children, within the limit.
  std::vector<char> opened;
  bool any_opened = false;
  if (!options.hide_module_functions) {
    opened.assign(n, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      const Graph::Node& nd = g.node(NodeId{i});
      if (nd.kind != NodeKind::function || !nd.parent.valid() || nd.parent.value >= n) continue;
      const Graph::Node& p = g.node(nd.parent);
      if (p.kind == NodeKind::module && g.module_of(nd.parent).leaf && within[nd.parent.value]) {
        opened[nd.parent.value] = 1;
        any_opened = true;
      }
    }
  }
  const std::vector<NodeId> folding = folding_calls(g, within, opened);

  const auto is_op = [&](NodeId id) {
    return id.valid() && id.value < n && detail::is_op_kind(g.kind(id));
  };
  const auto op_drawn = [&](NodeId id) {
    return g.kind(id) == NodeKind::function ? !folding[id.value].valid() : folding[id.value] == id;
  };

  const std::vector<Reach> reach =
      options.hide_unreached ? reached_from_inputs(g) : std::vector<Reach>(n, Reach::yes);
  const auto reached = [&](std::uint32_t i) { return reach[i] == Reach::yes; };
  std::vector<char> drawn(n, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    const NodeId id{i};
    switch (g.kind(id)) {
      case NodeKind::input:
      case NodeKind::output:
        drawn[i] = 1;
        break;
      case NodeKind::function:
      case NodeKind::module:
        drawn[i] = op_drawn(id) && reached(i);
        break;
      case NodeKind::tensor: {
        const NodeId producer = g.tensor(id).producer;
        drawn[i] = !hide && (is_op(producer) ? op_drawn(producer) && reached(producer.value)
                                             : !folding[i].valid());
        break;
      }
      case NodeKind::constant:
      case NodeKind::parameter:
        drawn[i] = !hide && !folding[i].valid();
        break;
    }
  }

  VisibleGraph vg;
  vg.rep_.assign(n, none);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!drawn[i]) continue;
    const NodeId id{i};
    VisibleNode v;
    v.node = id;
    v.kind = g.kind(id);
    v.collapsed = v.kind == NodeKind::module && !g.module_of(id).leaf;
    vg.rep_[i] = static_cast<std::uint32_t>(vg.nodes.size());
    vg.nodes.push_back(std::move(v));
  }
  for (std::uint32_t i = 0; i < n; ++i)
    if (!drawn[i] && is_op(NodeId{i}) && folding[i].valid()) vg.rep_[i] = vg.rep_[folding[i].value];

  // Opened leaf calls: their first and last drawn op inside, and the tensors consumed inside.
  detail::IdMap through;          // opened call -> (first op << 32) | last op
  detail::IdMap consumed_inside;  // (tensor << 32) | opened call
  if (any_opened) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const NodeId parent = g.node(NodeId{i}).parent;
      if (!parent.valid() || parent.value >= n || !opened[parent.value] || !drawn[i] ||
          !is_op(NodeId{i}))
        continue;
      auto [v, fresh] =
          through.try_emplace(parent.value, detail::IdMap::pair_key(vg.rep_[i], vg.rep_[i]));
      if (!fresh) *v = detail::IdMap::pair_key(static_cast<std::uint32_t>(*v >> 32), vg.rep_[i]);
    }
    for (const Edge& e : g.edges()) {
      if (e.from.value >= n || e.to.value >= n) continue;
      const NodeId parent = g.node(e.to).parent;
      if (parent.valid() && parent.value < n && opened[parent.value])
        consumed_inside.insert(detail::IdMap::pair_key(e.from.value, parent.value));
    }
  }
  const auto op_rep = [&](NodeId a) -> std::uint32_t {
    if (vg.rep_[a.value] != none || !any_opened || !opened[a.value]) return vg.rep_[a.value];
    const std::uint64_t* v = through.find(a.value);
    return v == nullptr ? none : static_cast<std::uint32_t>(*v);
  };

  const auto source = [&](NodeId a) -> std::uint32_t {
    if (drawn[a.value]) return vg.rep_[a.value];
    switch (g.kind(a)) {
      case NodeKind::function:
      case NodeKind::module:
        return op_rep(a);
      case NodeKind::tensor: {
        const NodeId producer = g.tensor(a).producer;
        if (is_op(producer)) return op_rep(producer);
        return folding[a.value].valid() ? vg.rep_[folding[a.value].value] : none;
      }
      default:
        return none;
    }
  };
  const auto target = [&](NodeId from, NodeId b) -> std::uint32_t {
    if (any_opened && opened[b.value] && !drawn[b.value]) {
      if (consumed_inside.contains(detail::IdMap::pair_key(from.value, b.value))) return none;
      const std::uint64_t* v = through.find(b.value);
      return v == nullptr ? none : static_cast<std::uint32_t>(*v >> 32);
    }
    if (drawn[b.value] || is_op(b)) return vg.rep_[b.value];
    return none;
  };

  detail::IdMap edge_of;           // (s << 32) | t -> edge index
  std::vector<NodeId> first_flow;  // per edge: its first tensor
  detail::IdMap more_flows;        // (edge << 32) | later tensor
  for (const Edge& e : g.edges()) {
    if (e.from.value >= n || e.to.value >= n) continue;
    const NodeKind from_kind = g.kind(e.from);
    const NodeKind to_kind = g.kind(e.to);
    if (drawn[e.to.value] && detail::is_op_kind(to_kind) && is_tensor_kind(from_kind))
      vg.nodes[vg.rep_[e.to.value]].inputs.push_back(e.from);
    if (drawn[e.from.value] && detail::is_op_kind(from_kind) && is_tensor_kind(to_kind) &&
        to_kind != NodeKind::output)
      vg.nodes[vg.rep_[e.from.value]].outputs.push_back(e.to);

    const std::uint32_t s = source(e.from);
    const std::uint32_t t = target(e.from, e.to);
    if (s == none || t == none || s == t) continue;
    const NodeId flow = is_tensor_kind(from_kind) ? e.from : e.to;
    const auto [v, fresh] = edge_of.try_emplace(detail::IdMap::pair_key(s, t), vg.edges.size());
    const auto edge = static_cast<std::uint32_t>(*v);
    if (fresh) {
      vg.edges.push_back(VisibleEdge{s, t, 1});
      first_flow.push_back(flow);
    } else if (first_flow[edge] != flow &&
               more_flows.insert(detail::IdMap::pair_key(edge, flow.value))) {
      ++vg.edges[edge].count;
    }
  }

  for (VisibleNode& v : vg.nodes) {
    if (v.kind != NodeKind::module) continue;
    const Graph::CallData& c = g.call(v.node);
    if (!c.inputs.empty()) v.inputs.assign(c.inputs.begin(), c.inputs.end());
    if (!c.outputs.empty()) v.outputs.assign(c.outputs.begin(), c.outputs.end());
  }

  if (options.expand_nested) {
    std::vector<std::int32_t> cluster_index(n, -1);
    for (std::uint32_t i = 0; i < n; ++i) {
      const Graph::Node& nd = g.node(NodeId{i});
      if (nd.kind != NodeKind::module || nd.depth < 1 || folding[i].valid()) continue;
      const auto k = static_cast<std::int32_t>(vg.clusters.size());
      cluster_index[i] = k;
      vg.clusters.push_back(VisibleCluster{NodeId{i}, -1});
    }
    if (!vg.clusters.empty()) {
      const std::vector<std::int32_t> around = detail::enclosing_clusters(g, cluster_index);
      for (VisibleCluster& c : vg.clusters) c.parent = around[c.call.value];
      for (VisibleNode& v : vg.nodes) v.cluster = around[v.node.value];
    }
  }
  if (options.roll) vg.roll(g);
  vg.prune_clusters();
  return vg;
}

}  // namespace detail

/// Merges the op nodes that are the same thing called again (see `visible_graph`).
inline void VisibleGraph::roll(const Graph& g) {
  const auto m = static_cast<std::uint32_t>(nodes.size());
  std::vector<std::vector<std::uint32_t>> consumers(m);
  for (const VisibleEdge& e : edges) consumers[e.from].push_back(e.to);

  // Keys are interned as vectors: {tag, identity..., sorted consumer classes...}.
  enum : std::uint64_t { tensor_key, stateful_key, stateless_module_key, function_key, later_key };
  detail::StringIds classes;  // a key's bytes -> its class
  detail::StringIds op_ids;
  const auto intern = [&](const std::vector<std::uint64_t>& key) {
    return classes
        .id(std::string_view(reinterpret_cast<const char*>(key.data()),
                             key.size() * sizeof(std::uint64_t)))
        .first;
  };
  std::vector<std::uint32_t> cls(m, 0);
  for (std::uint32_t i = m; i-- > 0;) {
    const VisibleNode& v = nodes[i];
    std::vector<std::uint64_t> key;
    if (!detail::is_op_kind(v.kind)) {
      key = {tensor_key, i};
    } else if (v.kind == NodeKind::module && g.module_of(v.node).param_count > 0) {
      key = {stateful_key, g.call(v.node).module.value};
    } else {
      if (v.kind == NodeKind::module) {
        key = {stateless_module_key, g.call(v.node).module.value};
      } else {
        const std::uint64_t op = op_ids.id(g.function(v.node).op).first;
        key = {function_key, op, g.node(v.node).inplace ? 1u : 0u};
      }
      std::vector<std::uint64_t> feeds;
      for (std::uint32_t j : consumers[i]) feeds.push_back(j > i ? cls[j] : intern({later_key, j}));
      std::sort(feeds.begin(), feeds.end());
      feeds.erase(std::unique(feeds.begin(), feeds.end()), feeds.end());
      key.insert(key.end(), feeds.begin(), feeds.end());
    }
    cls[i] = intern(key);
  }

  const auto common_cluster = [&](std::int32_t a, std::int32_t b) {
    std::vector<std::int32_t> chain;
    for (std::int32_t c = a; c >= 0 && chain.size() <= clusters.size();
         c = clusters[static_cast<std::size_t>(c)].parent)
      chain.push_back(c);
    std::size_t steps = 0;
    for (std::int32_t c = b; c >= 0 && steps <= clusters.size();
         c = clusters[static_cast<std::size_t>(c)].parent, ++steps)
      if (std::find(chain.begin(), chain.end(), c) != chain.end()) return c;
    return std::int32_t{-1};
  };

  // Clusters of calls of one module with parameters merge into the first one; its parent is
  // the innermost cluster around all of theirs. The others end up empty and are pruned.
  std::vector<std::int32_t> same_cluster(clusters.size());
  detail::IdMap cluster_of_module;  // module -> its first cluster
  for (std::size_t k = 0; k < clusters.size(); ++k) {
    const auto self = static_cast<std::int32_t>(k);
    const NodeId call = clusters[k].call;
    same_cluster[k] = g.module_of(call).param_count == 0
                          ? self
                          : static_cast<std::int32_t>(
                                *cluster_of_module.try_emplace(g.call(call).module.value, k).first);
  }
  for (std::size_t k = 0; k < clusters.size(); ++k) {
    const auto self = static_cast<std::int32_t>(k);
    VisibleCluster& c = clusters[k];
    std::int32_t parent = c.parent >= 0 ? same_cluster[static_cast<std::size_t>(c.parent)] : -1;
    const std::int32_t into = same_cluster[k];
    if (parent == into) parent = clusters[static_cast<std::size_t>(into)].parent;  // recursion
    if (into == self)
      c.parent = parent;
    else if (clusters[static_cast<std::size_t>(into)].parent != parent)
      clusters[static_cast<std::size_t>(into)].parent =
          common_cluster(clusters[static_cast<std::size_t>(into)].parent, parent);
  }
  for (VisibleNode& v : nodes)
    if (v.cluster >= 0) v.cluster = same_cluster[static_cast<std::size_t>(v.cluster)];

  detail::IdMap index_of_class;
  std::vector<std::uint32_t> moved(m);
  std::vector<VisibleNode> rolled;
  for (std::uint32_t i = 0; i < m; ++i) {
    const auto [v, fresh] = index_of_class.try_emplace(cls[i], rolled.size());
    moved[i] = static_cast<std::uint32_t>(*v);
    if (fresh) {
      rolled.push_back(std::move(nodes[i]));
      continue;
    }
    VisibleNode& into = rolled[moved[i]];
    into.calls += nodes[i].calls;
    if (into.cluster != nodes[i].cluster)
      into.cluster = common_cluster(into.cluster, nodes[i].cluster);
  }
  nodes = std::move(rolled);
  for (std::uint32_t& r : rep_)
    if (r != none) r = moved[r];

  detail::IdMap edge_of;
  std::vector<VisibleEdge> merged;
  for (const VisibleEdge& e : edges) {
    const std::uint32_t s = moved[e.from], t = moved[e.to];
    const auto [v, fresh] = edge_of.try_emplace(detail::IdMap::pair_key(s, t), merged.size());
    if (fresh)
      merged.push_back(VisibleEdge{s, t, e.count});
    else
      merged[*v].count += e.count;
  }
  edges = std::move(merged);
}

/// Drops the clusters with nothing drawn inside and renumbers the rest, keeping their order.
inline void VisibleGraph::prune_clusters() {
  if (clusters.empty()) return;
  std::vector<char> used(clusters.size(), 0);
  for (const VisibleNode& v : nodes)
    for (std::int32_t c = v.cluster; c >= 0 && !used[static_cast<std::size_t>(c)];
         c = clusters[static_cast<std::size_t>(c)].parent)
      used[static_cast<std::size_t>(c)] = 1;
  std::vector<std::int32_t> renumber(clusters.size(), -1);
  std::vector<VisibleCluster> kept;
  for (std::size_t k = 0; k < clusters.size(); ++k)
    if (used[k]) renumber[k] = static_cast<std::int32_t>(kept.size()), kept.push_back(clusters[k]);
  for (VisibleCluster& c : kept)
    if (c.parent >= 0) c.parent = renumber[static_cast<std::size_t>(c.parent)];
  for (VisibleNode& v : nodes)
    if (v.cluster >= 0) v.cluster = renumber[static_cast<std::size_t>(v.cluster)];
  clusters = std::move(kept);
}

/// Walks the visible graph in drawing order: the nodes of the top level and of each cluster in
/// order of their first drawn node, clusters nested where they first appear. Calls
/// `node(i, level)` for visible node `i`, and `open(k, level)` / `close(k, level)` around the
/// contents of cluster `k`; `level` is 0 at the top and grows by one per enclosing cluster.
/// Every backend that draws clusters (DOT, Mermaid) lays them out through this one function.
template <class Node, class Open, class Close>
void walk_clusters(const VisibleGraph& vg, Node&& node, Open&& open, Close&& close) {
  if (vg.clusters.empty()) {
    for (std::size_t i = 0; i < vg.nodes.size(); ++i) node(i, std::size_t{0});
    return;
  }
  // What each cluster (and the top level, slot 0) holds, in order of first drawn node:
  // a value >= 0 is a node, -1 - k is cluster k.
  std::vector<std::vector<std::int64_t>> items(vg.clusters.size() + 1);
  std::vector<char> placed(vg.clusters.size(), 0);
  for (std::size_t i = 0; i < vg.nodes.size(); ++i) {
    std::int32_t c = vg.nodes[i].cluster;
    items[static_cast<std::size_t>(c + 1)].push_back(static_cast<std::int64_t>(i));
    while (c >= 0 && !placed[static_cast<std::size_t>(c)]) {
      placed[static_cast<std::size_t>(c)] = 1;
      const std::int32_t parent = vg.clusters[static_cast<std::size_t>(c)].parent;
      items[static_cast<std::size_t>(parent + 1)].push_back(-1 - std::int64_t{c});
      c = parent;
    }
  }
  const auto emit = [&](const auto& self, std::size_t slot, std::size_t level) -> void {
    for (const std::int64_t item : items[slot]) {
      if (item >= 0) {
        node(static_cast<std::size_t>(item), level);
        continue;
      }
      const auto k = static_cast<std::size_t>(-1 - item);
      open(k, level);
      self(self, k + 1, level + 1);
      close(k, level);
    }
  };
  emit(emit, 0, 0);
}

}  // namespace recorder
