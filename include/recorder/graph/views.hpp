#pragma once
/// Range-v3 views over a `Graph`: nodes by kind, module calls, children, inputs and outputs.

#include <recorder/graph/graph.hpp>

#include <range/v3/view/filter.hpp>
#include <range/v3/view/iota.hpp>
#include <range/v3/view/transform.hpp>
#include <range/v3/algorithm/count_if.hpp>

#include <cstdint>
#include <string_view>

namespace recorder::views {

/// Every node id, in recording order.
inline auto nodes(const Graph& g) {
  return ranges::views::iota(std::uint32_t{0}, static_cast<std::uint32_t>(g.size())) |
         ranges::views::transform([](std::uint32_t i) { return NodeId{i}; });
}

/// The nodes of one kind, in recording order.
inline auto of_kind(const Graph& g, NodeKind k) {
  return nodes(g) | ranges::views::filter([&g, k](NodeId id) { return g.kind(id) == k; });
}

/// Module call nodes, in call order.
inline auto module_calls(const Graph& g) { return of_kind(g, NodeKind::module); }

/// Module calls of one class ("Conv2d"), in call order.
inline auto calls_of_class(const Graph& g, std::string_view class_name) {
  return module_calls(g) | ranges::views::filter([&g, class_name](NodeId id) {
           return g.module_of(id).class_name == class_name;
         });
}

/// Function nodes with op name `op`, in call order.
inline auto functions_named(const Graph& g, std::string_view op) {
  return of_kind(g, NodeKind::function) |
         ranges::views::filter([&g, op](NodeId id) { return g.function(id).op == op; });
}

/// Nodes recorded directly inside module call `call`.
inline auto children(const Graph& g, NodeId call) {
  return nodes(g) |
         ranges::views::filter([&g, call](NodeId id) { return g.node(id).parent == call; });
}

/// Sources of the edges that end at `id`, in execution order.
inline auto predecessors(const Graph& g, NodeId id) {
  return g.edges() | ranges::views::filter([id](const Edge& e) { return e.to == id; }) |
         ranges::views::transform([](const Edge& e) { return e.from; });
}

/// Targets of the edges that start at `id`, in execution order.
inline auto successors(const Graph& g, NodeId id) {
  return g.edges() | ranges::views::filter([id](const Edge& e) { return e.from == id; }) |
         ranges::views::transform([](const Edge& e) { return e.to; });
}

/// How many nodes are of kind `k`.
inline std::size_t count(const Graph& g, NodeKind k) {
  return static_cast<std::size_t>(
      ranges::count_if(g.nodes(), [k](const Graph::Node& n) { return n.kind == k; }));
}

}  // namespace recorder::views
