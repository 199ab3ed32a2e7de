#pragma once
/// Views over a `Graph`: nodes by kind, module calls, children, inputs and outputs.
///
/// Each query is a lazy forward view of `NodeId`s (`views::Selection`): a `std::ranges::view`,
/// so it composes with the standard adaptors (`| std::views::transform(...)`) and algorithms.
/// One small iterator instead of `std::views::filter` over `std::views::iota`, and not range-v3's
/// views any more: in a translation unit that includes `<torch/torch.h>`, range-v3's views cost
/// about 90 MB of compiler memory and the standard ones about 50 MB; this costs a few
/// (`scripts/compile_cost.sh`). A view reads the graph when iterated, not when made; like
/// every view, it must not outlive the graph.

#include <recorder/graph/graph.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ranges>
#include <string_view>
#include <vector>

namespace recorder::views {

namespace rule {
/// A rule that selects edges: it says which edges (`keep(g, edge)`) and which end of each
/// (`value(g, edge)`). Other rules select nodes: `keep(g, id)`.
template <class Rule>
concept over_edges = requires(const Rule& r, const Graph& g, const Edge& e) {
  { r.value(g, e) } -> std::same_as<NodeId>;
};
}  // namespace rule

/// The nodes (or edge ends) that `Rule` keeps, in recording order: a lazy forward view of
/// `NodeId`s that reads the graph when iterated, with `std::ranges::view_interface`'s `front()`,
/// `empty()` and `operator bool`. `Rule` is a small value (copyable, so the view is).
template <class Rule>
class Selection : public std::ranges::view_interface<Selection<Rule>> {
 public:
  Selection() = default;
  Selection(const Graph& g, Rule rule) : g_(&g), rule_(rule) {}

  class iterator {
   public:
    using iterator_concept = std::forward_iterator_tag;
    using value_type = NodeId;
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    NodeId operator*() const { return s_->value(i_); }
    iterator& operator++() {
      i_ = s_->next(i_ + 1);
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.i_ == b.i_; }
    friend bool operator==(const iterator& a, std::default_sentinel_t) { return a.done(); }

   private:
    friend class Selection;
    iterator(const Selection* s, std::size_t i) : s_(s), i_(i) {}
    bool done() const { return i_ >= s_->extent(); }
    const Selection* s_ = nullptr;
    std::size_t i_ = 0;
  };

  iterator begin() const { return iterator(this, next(0)); }
  std::default_sentinel_t end() const noexcept { return {}; }

 private:
  std::size_t extent() const {
    if constexpr (rule::over_edges<Rule>)
      return g_->edges().size();
    else
      return g_->size();
  }
  NodeId value(std::size_t i) const {
    if constexpr (rule::over_edges<Rule>)
      return rule_.value(*g_, g_->edges()[i]);
    else
      return NodeId{static_cast<std::uint32_t>(i)};
  }
  bool keep(std::size_t i) const {
    if constexpr (rule::over_edges<Rule>)
      return rule_.keep(*g_, g_->edges()[i]);
    else
      return rule_.keep(*g_, NodeId{static_cast<std::uint32_t>(i)});
  }
  std::size_t next(std::size_t i) const {
    const std::size_t n = extent();
    while (i < n && !keep(i)) ++i;
    return i;
  }

  const Graph* g_ = nullptr;
  Rule rule_{};
};

namespace rule {
/// Every node.
struct Any {
  bool keep(const Graph&, NodeId) const { return true; }
};
/// Nodes of one kind.
struct Kind {
  NodeKind kind{};
  bool keep(const Graph& g, NodeId id) const { return g.kind(id) == kind; }
};
/// Module calls of one class.
struct Class {
  std::string_view class_name;
  bool keep(const Graph& g, NodeId id) const {
    return g.kind(id) == NodeKind::module && g.module_of(id).class_name == class_name;
  }
};
/// Function nodes of one op.
struct Op {
  std::string_view op;
  bool keep(const Graph& g, NodeId id) const {
    return g.kind(id) == NodeKind::function && g.function(id).op == op;
  }
};
/// Nodes recorded directly inside one module call.
struct Parent {
  NodeId call;
  bool keep(const Graph& g, NodeId id) const { return g.node(id).parent == call; }
};
/// The sources of the edges that end at `node` (`towards`), or the targets of those that start
/// there.
struct Neighbours {
  NodeId node;
  bool towards = true;
  bool keep(const Graph&, const Edge& e) const { return (towards ? e.to : e.from) == node; }
  NodeId value(const Graph&, const Edge& e) const { return towards ? e.from : e.to; }
};
}  // namespace rule

/// Every node id, in recording order.
inline Selection<rule::Any> nodes(const Graph& g) { return {g, {}}; }

/// The nodes of one kind, in recording order.
inline Selection<rule::Kind> of_kind(const Graph& g, NodeKind k) { return {g, {.kind = k}}; }

/// Module call nodes, in call order.
inline Selection<rule::Kind> module_calls(const Graph& g) { return of_kind(g, NodeKind::module); }

/// Module calls of one class ("Conv2d"), in call order.
inline Selection<rule::Class> calls_of_class(const Graph& g, std::string_view class_name) {
  return {g, {.class_name = class_name}};
}

/// Function nodes with op name `op`, in call order.
inline Selection<rule::Op> functions_named(const Graph& g, std::string_view op) {
  return {g, {.op = op}};
}

/// Nodes recorded directly inside module call `call`.
inline Selection<rule::Parent> children(const Graph& g, NodeId call) { return {g, {.call = call}}; }

/// Sources of the edges that end at `id`, in execution order.
inline Selection<rule::Neighbours> predecessors(const Graph& g, NodeId id) {
  return {g, {.node = id, .towards = true}};
}

/// Targets of the edges that start at `id`, in execution order.
inline Selection<rule::Neighbours> successors(const Graph& g, NodeId id) {
  return {g, {.node = id, .towards = false}};
}

/// The ids `view` yields, in order, as a vector (what C++23's `std::ranges::to` would give).
template <class Rule>
std::vector<NodeId> collect(const Selection<Rule>& view) {
  std::vector<NodeId> ids;
  for (NodeId id : view) ids.push_back(id);
  return ids;
}

/// How many nodes are of kind `k`.
inline std::size_t count(const Graph& g, NodeKind k) {
  std::size_t n = 0;
  for (const Graph::Node& node : g.nodes()) n += node.kind == k ? 1 : 0;
  return n;
}

}  // namespace recorder::views
