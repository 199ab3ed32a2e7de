#pragma once
/// Rolling a visible graph (`RenderOptions::roll`, torchview's `roll`): op nodes that are the
/// same thing called again become one node.

#include <recorder/detail/id_map.hpp>
#include <recorder/render/visible_graph.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder::detail {

/// Per visible node of `vg`, the class it merges into: calls of a module with parameters by
/// module object; a module call without parameters, or a function, by module (op name and
/// in-place flag) and the classes of the nodes it feeds, computed from the outputs backwards.
/// Tensor nodes are each their own class.
inline std::vector<std::uint32_t> roll_classes(const VisibleGraph& vg, const Graph& g) {
  const auto m = static_cast<std::uint32_t>(vg.nodes.size());
  std::vector<std::vector<std::uint32_t>> consumers(m);
  for (const VisibleEdge& e : vg.edges) consumers[e.from].push_back(e.to);

  // Keys are interned as vectors: {tag, identity..., sorted consumer classes...}.
  enum : std::uint64_t { tensor_key, stateful_key, stateless_module_key, function_key, later_key };
  StringIds classes;  // a key's bytes -> its class
  StringIds op_ids;
  const auto intern = [&](const std::vector<std::uint64_t>& key) {
    return classes
        .id(std::string_view(reinterpret_cast<const char*>(key.data()),
                             key.size() * sizeof(std::uint64_t)))
        .first;
  };
  std::vector<std::uint32_t> cls(m, 0);
  for (std::uint32_t i = m; i-- > 0;) {
    const VisibleNode& v = vg.nodes[i];
    std::vector<std::uint64_t> key;
    if (!is_op_kind(v.kind)) {
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
  return cls;
}

/// The innermost cluster of `vg` around both `a` and `b` (none when only the top level is).
inline ClusterId common_cluster(const VisibleGraph& vg, ClusterId a, ClusterId b) {
  std::vector<ClusterId> chain;
  for (ClusterId c = a; c.valid() && chain.size() <= vg.clusters.size(); c = vg.parent_of(c))
    chain.push_back(c);
  std::size_t steps = 0;
  for (ClusterId c = b; c.valid() && steps <= vg.clusters.size(); c = vg.parent_of(c), ++steps)
    if (std::find(chain.begin(), chain.end(), c) != chain.end()) return c;
  return ClusterId{};
}

/// Clusters of calls of one module with parameters merge into the first one, whose parent
/// becomes the innermost cluster around all of theirs; nodes move with their cluster. The
/// clusters merged away are left empty (`prune_clusters` drops them).
inline void merge_clusters(VisibleGraph& vg, const Graph& g) {
  std::vector<ClusterId> same(vg.clusters.size());
  IdMap cluster_of_module;  // module -> its first cluster
  for (std::size_t k = 0; k < vg.clusters.size(); ++k) {
    const NodeId call = vg.clusters[k].call;
    same[k] =
        ClusterId{g.module_of(call).param_count == 0
                      ? static_cast<std::uint32_t>(k)
                      : static_cast<std::uint32_t>(
                            *cluster_of_module.try_emplace(g.call(call).module.value, k).first)};
  }
  for (std::size_t k = 0; k < vg.clusters.size(); ++k) {
    VisibleCluster& c = vg.clusters[k];
    ClusterId parent = c.parent.valid() ? same[c.parent.value] : ClusterId{};
    const ClusterId into = same[k];
    if (parent == into) parent = vg.clusters[into.value].parent;  // recursion
    if (into.value == k)
      c.parent = parent;
    else if (vg.clusters[into.value].parent != parent)
      vg.clusters[into.value].parent = common_cluster(vg, vg.clusters[into.value].parent, parent);
  }
  for (VisibleNode& v : vg.nodes)
    if (v.cluster.valid()) v.cluster = same[v.cluster.value];
}

/// Merges the op nodes of `vg` that are the same thing called again (`visible_graph`'s `roll`):
/// a merged node keeps the first one's representative, inputs and outputs, and the innermost
/// cluster around all of theirs; edges between the same merged pair merge, counts summed.
inline void roll(VisibleGraph& vg, const Graph& g) {
  const std::vector<std::uint32_t> cls = roll_classes(vg, g);
  merge_clusters(vg, g);

  const auto m = static_cast<std::uint32_t>(vg.nodes.size());
  IdMap index_of_class;
  std::vector<std::uint32_t> moved(m);
  std::vector<VisibleNode> rolled;
  for (std::uint32_t i = 0; i < m; ++i) {
    const auto [v, fresh] = index_of_class.try_emplace(cls[i], rolled.size());
    moved[i] = static_cast<std::uint32_t>(*v);
    if (fresh) {
      rolled.push_back(std::move(vg.nodes[i]));
      continue;
    }
    VisibleNode& into = rolled[moved[i]];
    into.calls += vg.nodes[i].calls;
    if (into.cluster != vg.nodes[i].cluster)
      into.cluster = common_cluster(vg, into.cluster, vg.nodes[i].cluster);
  }
  vg.nodes = std::move(rolled);
  for (std::uint32_t& r : vg.rep_)
    if (r != VisibleGraph::none) r = moved[r];

  IdMap edge_of;
  std::vector<VisibleEdge> merged;
  for (const VisibleEdge& e : vg.edges) {
    const std::uint32_t s = moved[e.from], t = moved[e.to];
    const auto [v, fresh] = edge_of.try_emplace(IdMap::pair_key(s, t), merged.size());
    if (fresh)
      merged.push_back(VisibleEdge{s, t, e.count});
    else
      merged[*v].count += e.count;
  }
  vg.edges = std::move(merged);
}

}  // namespace recorder::detail
