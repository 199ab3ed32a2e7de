#pragma once
/// The visible graph as data: the nodes, edges and clusters a picture shows, and the walk every
/// backend that draws clusters lays them out with. Computed by `visible_graph`
/// (render/visible.hpp); `detail::roll` (render/roll.hpp) merges repeated calls in it.

#include <recorder/graph/graph.hpp>
#include <recorder/render/options.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace recorder {

/// Index of a cluster in `VisibleGraph::clusters`; default-constructed ids are none (the top
/// level, outside every cluster).
using ClusterId = StrongIndex<struct ClusterTag>;

/// Prints `cluster <index>`, or `top level`.
inline std::ostream& operator<<(std::ostream& os, ClusterId c) {
  if (!c.valid()) return os << "top level";
  return os << "cluster " << c.value;
}

/// One drawn node. It stands for the recorded node `node` and, for a folded module call,
/// everything recorded inside it.
struct VisibleNode {
  NodeId node;  ///< the recorded node drawn (its representative)
  NodeKind kind = NodeKind::tensor;
  bool collapsed = false;       ///< a composite module call drawn as one box
  std::vector<NodeId> inputs;   ///< op and module nodes: tensor nodes flowing in, in order
  std::vector<NodeId> outputs;  ///< op and module nodes: tensor nodes flowing out, in order
  std::uint32_t calls = 1;      ///< how many recorded calls or ops were rolled into this node
  ClusterId cluster;            ///< innermost cluster containing it, or none
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
  NodeId call;       ///< the recorded module call
  ClusterId parent;  ///< the enclosing cluster, or none
  friend constexpr bool operator==(const VisibleCluster&, const VisibleCluster&) = default;
};

class VisibleGraph;
namespace detail {

/// True for the kinds that are ops (drawn as boxes with input and output shapes).
constexpr bool is_op_kind(NodeKind k) noexcept {
  return k == NodeKind::function || k == NodeKind::module;
}

inline VisibleGraph visible_graph_within(const Graph& g, const RenderOptions& options,
                                         const std::vector<char>& within);
inline void roll(VisibleGraph& vg, const Graph& g);
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

  /// The cluster `c` is nested in, or none (for none too).
  ClusterId parent_of(ClusterId c) const {
    return c.valid() && c.value < clusters.size() ? clusters[c.value].parent : ClusterId{};
  }

  /// Drops the clusters with nothing drawn inside and renumbers the rest, keeping their order.
  void prune_clusters() {
    if (clusters.empty()) return;
    std::vector<char> used(clusters.size(), 0);
    for (const VisibleNode& v : nodes)
      for (ClusterId c = v.cluster; c.valid() && !used[c.value]; c = parent_of(c))
        used[c.value] = 1;
    std::vector<ClusterId> renumber(clusters.size());
    std::vector<VisibleCluster> kept;
    for (std::size_t k = 0; k < clusters.size(); ++k) {
      if (!used[k]) continue;
      renumber[k] = ClusterId{static_cast<std::uint32_t>(kept.size())};
      kept.push_back(clusters[k]);
    }
    for (VisibleCluster& c : kept)
      if (c.parent.valid()) c.parent = renumber[c.parent.value];
    for (VisibleNode& v : nodes)
      if (v.cluster.valid()) v.cluster = renumber[v.cluster.value];
    clusters = std::move(kept);
  }

 private:
  friend VisibleGraph detail::visible_graph_within(const Graph& g, const RenderOptions& options,
                                                   const std::vector<char>& within);
  friend void detail::roll(VisibleGraph& vg, const Graph& g);
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
  // What each cluster (slot k + 1) and the top level (slot 0) holds, in order of first drawn
  // node: a value >= 0 is a node, -1 - k is cluster k.
  const auto slot = [](ClusterId c) -> std::size_t { return c.valid() ? c.value + 1u : 0u; };
  std::vector<std::vector<std::int64_t>> items(vg.clusters.size() + 1);
  std::vector<char> placed(vg.clusters.size(), 0);
  for (std::size_t i = 0; i < vg.nodes.size(); ++i) {
    ClusterId c = vg.nodes[i].cluster;
    items[slot(c)].push_back(static_cast<std::int64_t>(i));
    while (c.valid() && !placed[c.value]) {
      placed[c.value] = 1;
      const ClusterId parent = vg.parent_of(c);
      items[slot(parent)].push_back(-1 - std::int64_t{c.value});
      c = parent;
    }
  }
  const auto emit = [&](const auto& self, std::size_t at, std::size_t level) -> void {
    for (const std::int64_t item : items[at]) {
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
