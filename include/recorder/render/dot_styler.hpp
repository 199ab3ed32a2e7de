#pragma once
/// The `dot_styler` concept: a policy deciding the Graphviz attributes of each drawn node and edge.

#include <recorder/graph/trace.hpp>
#include <recorder/render/labels.hpp>
#include <recorder/render/visible.hpp>

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

namespace recorder {

/// The Graphviz attributes a styler gives one node. An empty field writes nothing.
struct NodeStyle {
  std::string fillcolor{};  ///< `fillcolor=...`: "aliceblue", "#ffcccc"
  std::string color{};      ///< border colour: `color=...` on the node and its table
  /// A last row inside the node's table (plain text: escaped when written), so it reads as
  /// the node's own: `1.25 ms (12.5%)`. Graphviz places an `xlabel` wherever there is room,
  /// often beside another node's edge.
  std::string note{};
  std::string extra{};  ///< further attributes written verbatim: `penwidth=2 fontcolor=blue`
  friend bool operator==(const NodeStyle&, const NodeStyle&) = default;
};

/// What a drawing adds to one cluster (`expand_nested`), beyond the house look (dashed, its
/// module's title as label). An empty field writes nothing.
struct ClusterStyle {
  std::string color{};  ///< the border's colour: `color=...`
  std::string note{};   ///< a line added under the title (plain text: escaped when written)
  std::string extra{};  ///< further attributes written verbatim: `penwidth=2 tooltip="..."`
  friend bool operator==(const ClusterStyle&, const ClusterStyle&) = default;
};

/// The Graphviz attributes a styler gives one edge. An empty field writes nothing.
struct EdgeStyle {
  std::string color{};  ///< `color=...`
  std::string extra{};  ///< further attributes written verbatim: `style=dashed`
  friend bool operator==(const EdgeStyle&, const EdgeStyle&) = default;
};

/// Part of `dot_styler`: `S::node_style(trace, visible, i)` styles visible node `i`.
template <class S>
concept has_node_style = requires(const Trace& trace, const VisibleGraph& visible,
                                  std::uint32_t node_index) {
  { S::node_style(trace, visible, node_index) } -> std::convertible_to<NodeStyle>;
};

/// Part of `dot_styler`: `S::edge_style(trace, visible, edge)` styles one visible edge.
template <class S>
concept has_edge_style = requires(const Trace& trace, const VisibleGraph& visible,
                                  const VisibleEdge& edge) {
  { S::edge_style(trace, visible, edge) } -> std::convertible_to<EdgeStyle>;
};

/// How `backend::BasicDot<S>` colours a picture (torchrecorder's `GraphvizStyler`).
///
/// **Requirements**
/// - `S::node_style(const Trace&, const VisibleGraph&, std::uint32_t node_index)`, a static
///   function returning the `NodeStyle` of `visible.nodes[node_index]` (`has_node_style`);
/// - `S::edge_style(const Trace&, const VisibleGraph&, const VisibleEdge&)`, a static function
///   returning the `EdgeStyle` of an edge (`has_edge_style`); every drawn copy of a repeated
///   edge gets the same style.
///
/// **Optional hooks** — none; a styler needs no state (start from `DefaultStyler` and change
/// what you need).
///
/// **Laws**
/// - pure: the style depends only on its arguments (no clock, no addresses), so the DOT text
///   stays deterministic;
/// - a styler decides attributes only: it cannot add, drop or re-label nodes and edges, and
///   the backend still escapes everything that comes from the trace. Colour values that are
///   not plain identifiers are quoted; `extra` is written verbatim and must be a valid DOT
///   attribute list.
///
/// **Models shipped** — `DefaultStyler`: torchview's look (tensors light yellow, modules
/// green, functions blue, constants and parameters grey, failed calls with a red border).
///
/// **Example**
/// ```cpp
/// struct RedConvs {
///   static recorder::NodeStyle node_style(const recorder::Trace& t,
///                                         const recorder::VisibleGraph& vg, std::uint32_t i) {
///     recorder::NodeStyle s = recorder::DefaultStyler::node_style(t, vg, i);
///     const recorder::VisibleNode& v = vg.nodes[i];
///     if (v.kind == recorder::NodeKind::module &&
///         t.graph.module_of(v.node).class_name == "Conv2d")
///       s.fillcolor = "red";
///     return s;
///   }
///   static recorder::EdgeStyle edge_style(const recorder::Trace& t,
///                                         const recorder::VisibleGraph& vg,
///                                         const recorder::VisibleEdge& e) {
///     return recorder::DefaultStyler::edge_style(t, vg, e);
///   }
/// };
/// recorder::render<recorder::backend::BasicDot<RedConvs>>(trace, {.depth = 2}, std::cout);
/// ```
template <class S>
concept dot_styler = has_node_style<S> && has_edge_style<S>;

namespace detail {

/// The Graphviz fill colour of a node kind in the house look.
constexpr std::string_view dot_fill(NodeKind k) noexcept { return house_colors(k).x11; }

}  // namespace detail

/// The house look: one fill colour per node kind, a red border on failed module calls, plain
/// edges.
struct DefaultStyler {
  static NodeStyle node_style(const Trace& trace, const VisibleGraph& visible,
                              std::uint32_t node_index) {
    const VisibleNode& v = visible.nodes[node_index];
    NodeStyle s;
    s.fillcolor = detail::dot_fill(v.kind);
    if (trace.graph.node(v.node).failed) s.color = "red";
    return s;
  }
  static EdgeStyle edge_style(const Trace&, const VisibleGraph&, const VisibleEdge&) { return {}; }
};

static_assert(dot_styler<DefaultStyler>);

}  // namespace recorder
