#pragma once
/// Graphviz DOT backend: torchview-style HTML-table nodes for the visible graph.

#include <recorder/detail/escape.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/dot_styler.hpp>
#include <recorder/render/labels.hpp>
#include <recorder/render/options.hpp>
#include <recorder/render/visible.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

namespace detail {

/// The font of every text in a drawing: node tables, cluster titles and edge labels alike
/// (torchview's). The graph and its edges name it as its nodes do: text without a `fontname`
/// is drawn in Graphviz's Times, a serif beside the nodes' face.
inline constexpr std::string_view dot_font = "Linux libertine";

/// A DOT attribute value: as it is when it is a plain identifier or number (`aliceblue`,
/// `0.5`), else double-quoted and escaped (`"#ff0000"`).
inline std::string dot_value(std::string_view v) {
  const bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
  });
  return plain ? std::string(v) : dot_quoted(v);
}

/// A module call's title lines (escaped HTML, `title_lines` with ` (inferred)`): its class and,
/// when it differs, its registered name, with the call number when the module was called more
/// than once: `Conv2d<BR/>conv1 (call 2/3)`. `rolled` > 1 says how many calls one rolled node
/// stands for: `LSTMCell<BR/>cell (4 calls)`. A call inferred from parameters
/// (`Graph::Node::inferred`) says so: `Linear<BR/>fc (inferred)`.
inline std::string dot_module_title(const Graph& g, const ModuleLabels& labels, NodeId call,
                                    std::uint32_t rolled = 1) {
  return join_lines(title_lines(g, labels, call, rolled, true), "<BR/>", html_escape);
}

/// The first cell of a node's label (escaped HTML): what it is (`title_lines`, with
/// ` (inferred)`), then its `status_lines` (depth, `failed`). `rolled` > 1 says how many calls
/// one rolled node stands for.
inline std::string dot_title(const Graph& g, const ModuleLabels& labels, NodeId id,
                             std::uint32_t rolled = 1) {
  return join_lines(title_lines(g, labels, id, rolled, true), "<BR/>", html_escape) + "<BR/>" +
         join_lines(status_lines(g, id), "<BR/>");
}

/// Writes the node statement of visible node `i` to `out`, each line starting with `indent`.
inline void write_dot_node(const Graph& g, const ModuleLabels& labels, const RenderOptions& options,
                           const VisibleGraph& vg, std::size_t i, const NodeStyle& style,
                           std::string_view indent, std::string& out) {
  const VisibleNode& v = vg.nodes[i];
  const auto line = [&] {  // a new line inside the node: one more tab than the node itself
    append(out, indent, "\t");
  };
  append(out, indent, "n");
  append_int(out, static_cast<std::int64_t>(i));
  out += " [label=<\n";
  line();
  out += "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"4\"";
  if (!style.color.empty()) append(out, " COLOR=\"", html_escape(style.color), "\"");
  out += ">\n";
  const std::string title = dot_title(g, labels, v.node, v.calls);
  const bool params = options.show_params && v.kind == NodeKind::module;
  // A row across the whole table: the parameter count, the styler's note.
  const auto wide_row = [&](std::string_view open, std::string_view text) {
    line();
    append(out, open, text, "</TD></TR>\n");
  };
  std::string_view wide = "<TR><TD COLSPAN=\"5\">";
  if (!options.show_shapes) {
    line();
    append(out, "<TR><TD>", title, "</TD></TR>\n");
    wide = "<TR><TD>";
    if (params) wide_row(wide, "params: " + with_thousands(g.module_of(v.node).param_count));
  } else if (is_tensor_kind(v.kind)) {
    line();
    append(out, "<TR><TD>", title, "</TD><TD>");
    append_shape(out, g.shape(v.node));
    out += "</TD></TR>\n";
    wide = "<TR><TD COLSPAN=\"2\">";
  } else {
    line();
    append(out, "<TR><TD ROWSPAN=\"2\">", title,
           "</TD><TD COLSPAN=\"2\">input:</TD><TD COLSPAN=\"2\">");
    append_shapes(out, g, v.inputs);
    out += "</TD></TR>\n";
    line();
    out += "<TR><TD COLSPAN=\"2\">output:</TD><TD COLSPAN=\"2\">";
    append_shapes(out, g, v.outputs);
    out += "</TD></TR>\n";
    if (params) wide_row(wide, "params: " + with_thousands(g.module_of(v.node).param_count));
  }
  if (!style.note.empty()) wide_row(wide, html_escape(style.note));
  line();
  out += "</TABLE>>";
  if (!style.fillcolor.empty()) append(out, " fillcolor=", dot_value(style.fillcolor));
  if (!style.color.empty()) append(out, " color=", dot_value(style.color));
  if (!style.extra.empty()) append(out, " ", style.extra);
  out += "]\n";
}

/// Writes the DOT text of visible graph `vg` of `trace`, with one style per node and edge, and
/// per cluster when `cluster_styles` is given.
inline void write_dot(const Trace& trace, const RenderOptions& options, const VisibleGraph& vg,
                      const std::vector<NodeStyle>& node_styles,
                      const std::vector<EdgeStyle>& edge_styles, std::string& out,
                      const std::vector<ClusterStyle>* cluster_styles = nullptr) {
  const Graph& g = trace.graph;
  const ModuleLabels labels = module_labels(g);
  const std::string& name = options.graph_name.empty() ? trace.model_name : options.graph_name;
  out.reserve(out.size() + 512 + vg.nodes.size() * 330 + vg.edges.size() * 16);

  out += options.strict ? "strict digraph " : "digraph ";
  out += dot_quoted(name) + " {\n";
  const std::string font = dot_quoted(dot_font);
  append(out, "\tgraph [fontname=", font, " ordering=in rankdir=", to_string(options.direction),
         "]\n");
  append(out, "\tnode [align=left fontname=", font,
         " fontsize=10 height=0.2 margin=0 ranksep=0.1 shape=plaintext style=filled]\n");
  append(out, "\tedge [fontname=", font, " fontsize=10]\n");

  const auto tabs = [](std::size_t level) { return std::string(level + 1, '\t'); };
  walk_clusters(
      vg,
      [&](std::size_t i, std::size_t level) {
        write_dot_node(g, labels, options, vg, i, node_styles[i], tabs(level), out);
      },
      [&](std::size_t k, std::size_t level) {
        const std::string indent = tabs(level);
        append(out, indent, "subgraph cluster_");
        append_int(out, static_cast<std::int64_t>(k));
        out += " {\n";
        const NodeId call = vg.clusters[k].call;
        const ModuleInfo& m = g.module_of(call);
        const std::uint32_t rolled = options.roll && m.param_count > 0 ? m.calls : 1;
        const ClusterStyle* style = cluster_styles ? &(*cluster_styles)[k] : nullptr;
        append(out, indent, "\tfontsize=12 label=<", dot_module_title(g, labels, call, rolled));
        if (style && !style->note.empty()) append(out, "<BR/>", html_escape(style->note));
        out += "> labeljust=l style=dashed";
        if (style && !style->color.empty()) append(out, " color=", dot_value(style->color));
        if (style && !style->extra.empty()) append(out, " ", style->extra);
        out += '\n';
      },
      [&](std::size_t, std::size_t level) { append(out, tabs(level), "}\n"); });

  for (std::size_t j = 0; j < vg.edges.size(); ++j) {
    const VisibleEdge& e = vg.edges[j];
    const EdgeStyle& style = edge_styles[j];
    const std::uint32_t copies = drawn_copies(e, options);
    for (std::uint32_t k = 1; k <= copies; ++k) {
      out += "\tn";
      append_int(out, e.from);
      out += " -> n";
      append_int(out, e.to);
      if (style.color.empty() && style.extra.empty() && copies == 1 &&
          (e.count == 1 || !options.roll)) {
        out += '\n';  // the common case: no attributes
        continue;
      }
      std::string attrs;
      const std::string label = edge_label(e, k, options);
      if (!label.empty()) attrs += "label=" + dot_quoted(label);
      if (!style.color.empty())
        attrs += (attrs.empty() ? "" : " ") + ("color=" + dot_value(style.color));
      if (!style.extra.empty()) attrs += (attrs.empty() ? "" : " ") + style.extra;
      if (!attrs.empty()) out += " [" + attrs + "]";
      out += '\n';
    }
  }
  out += "}\n";
}

/// Writes the DOT text of `trace` seen with `options` to `out`, styled by `S`.
template <dot_styler S>
void write_styled_dot(const Trace& trace, const RenderOptions& options, std::string& out) {
  const VisibleGraph vg = visible_graph(trace.graph, options);
  std::vector<NodeStyle> node_styles;
  node_styles.reserve(vg.nodes.size());
  for (std::size_t i = 0; i < vg.nodes.size(); ++i)
    node_styles.push_back(S::node_style(trace, vg, static_cast<std::uint32_t>(i)));
  std::vector<EdgeStyle> edge_styles;
  edge_styles.reserve(vg.edges.size());
  for (const VisibleEdge& e : vg.edges) edge_styles.push_back(S::edge_style(trace, vg, e));
  write_dot(trace, options, vg, node_styles, edge_styles, out);
}

/// Writes the DOT text of `trace` seen with `options` to `out`, in the house look.
inline void write_dot(const Trace& trace, const RenderOptions& options, std::string& out) {
  write_styled_dot<DefaultStyler>(trace, options, out);
}

}  // namespace detail

namespace backend {

/// Graphviz DOT source of the visible graph, torchview's look: HTML-table nodes with name,
/// depth and input/output shapes (and parameter counts with `show_params`), coloured by the
/// styler `S` (`DefaultStyler`: tensors light yellow, modules green, functions blue,
/// constants and parameters grey, failed module calls with a red border and "failed").
/// Node ids are `n0`, `n1`, ... in visible order, so the text is deterministic. With
/// `expand_nested`, clusters are `subgraph cluster_<k>` (k indexes `VisibleGraph::clusters`)
/// labelled with class and name; edges follow all nodes. `strict` (the default) writes a
/// `strict digraph` with each edge once (labelled ` xN` when rolled); otherwise a `digraph`
/// with each edge `count` times, the k-th copy labelled ` xk`.
///
/// Example: `recorder::render<recorder::backend::BasicDot<MyStyler>>(trace, {.depth = 1});`
template <dot_styler S>
struct BasicDot {
  static constexpr std::string_view extension = ".dot";

  /// Writes the DOT text of `trace` seen with `options` to `os`.
  static void render(const Trace& trace, const RenderOptions& options, std::ostream& os) {
    detail::write_through_string(
        os, [&](std::string& text) { detail::write_styled_dot<S>(trace, options, text); });
  }

  /// Appends the DOT text to `out` (the optional hook `render_to_string` uses: no stream copy).
  static void render_to(const Trace& trace, const RenderOptions& options, std::string& out) {
    detail::write_styled_dot<S>(trace, options, out);
  }
};

/// The DOT backend in the house look.
///
/// Example: `recorder::render<recorder::backend::Dot>(trace, {.depth = 1}, std::cout);`
using Dot = BasicDot<DefaultStyler>;

}  // namespace backend
}  // namespace recorder
