#pragma once
/// The visible graph: which recorded nodes and edges a picture shows at a given depth.

#include <recorder/graph/graph.hpp>
#include <recorder/render/options.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_set>
#include <vector>

namespace recorder {

/// One drawn node. It stands for the recorded node `node` and, for a folded module call,
/// everything recorded inside it.
struct VisibleNode {
  NodeId node;                    ///< the recorded node drawn (its representative)
  NodeKind kind = NodeKind::tensor;
  bool collapsed = false;         ///< a composite module call drawn as one box
  std::vector<NodeId> inputs;     ///< op and module nodes: tensor nodes flowing in, in order
  std::vector<NodeId> outputs;    ///< op and module nodes: tensor nodes flowing out, in order
  std::uint32_t calls = 1;        ///< how many recorded calls or ops were rolled into this node
  std::int32_t cluster = -1;      ///< innermost cluster containing it (`VisibleGraph::clusters`)
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
inline VisibleGraph visible_graph(const Graph& g, const RenderOptions& options);

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
  friend VisibleGraph visible_graph(const Graph& g, const RenderOptions& options);
  std::vector<std::uint32_t> rep_;  // per recorded node: its representative's index, or none
};

namespace detail {

/// True for the kinds that are ops (drawn as boxes with input and output shapes).
constexpr bool is_op_kind(NodeKind k) noexcept {
  return k == NodeKind::function || k == NodeKind::module;
}

/// For every recorded node, the outermost module call (itself included) that is drawn as
/// one box: a leaf call, or any call at depth >= `limit`. Invalid when there is none.
inline std::vector<NodeId> folding_calls(const Graph& g, int limit) {
  const std::size_t n = g.size();
  const auto folds = [&](NodeId id) {
    const Graph::Node& nd = g.node(id);
    return nd.kind == NodeKind::module && (g.module_of(id).leaf || nd.depth >= limit);
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

}  // namespace detail

/// Computes what a picture of `g` shows with `options` (torchview's rules).
///
/// With depth limit D (unlimited when `options.depth` is empty):
/// - input and output tensors are always drawn;
/// - a module call at depth D, and a leaf call above it, is drawn as one box that stands for
///   everything recorded inside it (edges to or from hidden nodes are re-routed to the box);
/// - a composite call above depth D is not drawn: its contents are (so the root call is only
///   drawn, as one box, when D is 0);
/// - a function node is drawn unless it lies inside such a box;
/// - with `hide_inner_tensors`, intermediate tensors are contracted (an edge t -> op becomes
///   producer -> op), constants and parameters are hidden; without it, an intermediate tensor
///   is drawn when its producer is drawn as itself, and constants and parameters when they
///   are not inside a box;
/// - self-loops are dropped and duplicate edges kept once, in first-seen order.
inline VisibleGraph visible_graph(const Graph& g, const RenderOptions& options) {
  constexpr std::uint32_t none = VisibleGraph::none;
  const int limit = options.depth ? (*options.depth < 0 ? 0 : *options.depth)
                                  : std::numeric_limits<int>::max();
  const bool hide = options.hide_inner_tensors;
  const std::size_t n = g.size();
  const std::vector<NodeId> folding = detail::folding_calls(g, limit);

  const auto is_op = [&](NodeId id) {
    return id.valid() && id.value < n && detail::is_op_kind(g.kind(id));
  };
  const auto op_drawn = [&](NodeId id) {
    return g.kind(id) == NodeKind::function ? !folding[id.value].valid() : folding[id.value] == id;
  };

  std::vector<char> drawn(n, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    const NodeId id{i};
    switch (g.kind(id)) {
      case NodeKind::input:
      case NodeKind::output: drawn[i] = 1; break;
      case NodeKind::function:
      case NodeKind::module: drawn[i] = op_drawn(id); break;
      case NodeKind::tensor: {
        const NodeId producer = g.tensor(id).producer;
        drawn[i] = !hide && (is_op(producer) ? op_drawn(producer) : !folding[i].valid());
        break;
      }
      case NodeKind::constant:
      case NodeKind::parameter: drawn[i] = !hide && !folding[i].valid(); break;
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

  const auto source = [&](NodeId a) -> std::uint32_t {
    if (drawn[a.value]) return vg.rep_[a.value];
    switch (g.kind(a)) {
      case NodeKind::function:
      case NodeKind::module: return vg.rep_[a.value];
      case NodeKind::tensor: {
        const NodeId producer = g.tensor(a).producer;
        if (is_op(producer)) return vg.rep_[producer.value];
        return folding[a.value].valid() ? vg.rep_[folding[a.value].value] : none;
      }
      default: return none;
    }
  };
  const auto target = [&](NodeId b) -> std::uint32_t {
    if (drawn[b.value] || is_op(b)) return vg.rep_[b.value];
    return none;
  };

  std::unordered_set<std::uint64_t> seen;
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
    const std::uint32_t t = target(e.to);
    if (s == none || t == none || s == t) continue;
    if (seen.insert((std::uint64_t{s} << 32) | t).second) vg.edges.push_back(VisibleEdge{s, t, 1});
  }

  for (VisibleNode& v : vg.nodes) {
    if (v.kind != NodeKind::module) continue;
    const Graph::CallData& c = g.call(v.node);
    if (!c.inputs.empty()) v.inputs = c.inputs;
    if (!c.outputs.empty()) v.outputs = c.outputs;
  }
  return vg;
}

}  // namespace recorder
