#pragma once
/// Graphviz DOT backend: torchview-style HTML-table nodes for the visible graph.

#include <recorder/detail/escape.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/options.hpp>
#include <recorder/render/visible.hpp>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

namespace detail {

/// A shape as Python prints a tuple: `(1, 128)`, `(5,)`, `()`.
inline std::string shape_repr(Shape shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ',';
  out += ')';
  return out;
}

/// The shapes of `tensors`, equal ones merged as torchview does: `2 x (1, 64), (1, 32)`;
/// `-` when there are none.
inline std::string shapes_repr(const Graph& g, const std::vector<NodeId>& tensors) {
  std::vector<std::pair<std::string, std::size_t>> groups;
  for (NodeId t : tensors) {
    std::string s = shape_repr(g.shape(t));
    bool merged = false;
    for (auto& [text, count] : groups)
      if (text == s) {
        ++count;
        merged = true;
        break;
      }
    if (!merged) groups.emplace_back(std::move(s), 1);
  }
  if (groups.empty()) return "-";
  std::string out;
  for (const auto& [text, count] : groups) {
    if (!out.empty()) out += ", ";
    if (count > 1) out += std::to_string(count) + " x ";
    out += text;
  }
  return out;
}

/// The Graphviz fill colour of a node kind.
constexpr std::string_view dot_fill(NodeKind k) noexcept {
  switch (k) {
    case NodeKind::function: return "aliceblue";
    case NodeKind::module: return "darkseagreen1";
    case NodeKind::constant:
    case NodeKind::parameter: return "gray90";
    default: return "lightyellow";
  }
}

/// The first cell of a node's label (escaped HTML): what it is and its depth.
inline std::string dot_title(const Graph& g, NodeId id) {
  const Graph::Node& n = g.node(id);
  std::string out;
  switch (n.kind) {
    case NodeKind::function:
      out = html_escape(g.function(id).op);
      if (n.inplace) out += '_';
      break;
    case NodeKind::module: {
      const ModuleInfo& m = g.module_of(id);
      out = html_escape(m.class_name);
      if (!m.name.empty() && m.name != m.class_name) out += "<BR/>" + html_escape(m.name);
      if (m.calls > 1)
        out += " (call " + std::to_string(g.call(id).call_index + 1) + "/" +
               std::to_string(m.calls) + ")";
      break;
    }
    default: {
      switch (n.kind) {
        case NodeKind::tensor: out = "hidden-tensor"; break;
        case NodeKind::constant: out = "constant-tensor"; break;
        case NodeKind::parameter: out = "parameter-tensor"; break;
        default: out = std::string(to_string(n.kind)) + "-tensor";
      }
      const std::string_view name = g.tensor(id).name;
      if (!name.empty()) out += "<BR/>" + html_escape(name);
    }
  }
  out += "<BR/>depth:" + std::to_string(n.depth);
  if (n.failed) out += "<BR/>failed";
  return out;
}

/// Writes the DOT text of `trace` seen with `options` to `out`.
inline void write_dot(const Trace& trace, const RenderOptions& options, std::string& out) {
  const Graph& g = trace.graph;
  const VisibleGraph vg = visible_graph(g, options);
  const std::string& name = options.graph_name.empty() ? trace.model_name : options.graph_name;

  out += "strict digraph " + dot_quoted(name) + " {\n";
  out += "\tgraph [ordering=in rankdir=";
  out += to_string(options.direction);
  out += "]\n";
  out += "\tnode [align=left fontname=\"Linux libertine\" fontsize=10 height=0.2 margin=0 "
         "ranksep=0.1 shape=plaintext style=filled]\n";
  out += "\tedge [fontsize=10]\n";

  for (std::size_t i = 0; i < vg.nodes.size(); ++i) {
    const VisibleNode& v = vg.nodes[i];
    const bool failed = g.node(v.node).failed;
    out += "\tn" + std::to_string(i) + " [label=<\n";
    out += "\t\t<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"4\"";
    if (failed) out += " COLOR=\"red\"";
    out += ">\n";
    const std::string title = dot_title(g, v.node);
    if (!options.show_shapes) {
      out += "\t\t<TR><TD>" + title + "</TD></TR>\n";
    } else if (is_tensor_kind(v.kind)) {
      out += "\t\t<TR><TD>" + title + "</TD><TD>" + shape_repr(g.shape(v.node)) + "</TD></TR>\n";
    } else {
      out += "\t\t<TR><TD ROWSPAN=\"2\">" + title +
             "</TD><TD COLSPAN=\"2\">input:</TD><TD COLSPAN=\"2\">" + shapes_repr(g, v.inputs) +
             "</TD></TR>\n";
      out += "\t\t<TR><TD COLSPAN=\"2\">output:</TD><TD COLSPAN=\"2\">" +
             shapes_repr(g, v.outputs) + "</TD></TR>\n";
    }
    out += "\t\t</TABLE>> fillcolor=";
    out += dot_fill(v.kind);
    if (failed) out += " color=red";
    out += "]\n";
  }
  for (const VisibleEdge& e : vg.edges)
    out += "\tn" + std::to_string(e.from) + " -> n" + std::to_string(e.to) + "\n";
  out += "}\n";
}

}  // namespace detail

namespace backend {

/// Graphviz DOT source of the visible graph, torchview's look: HTML-table nodes with name,
/// depth and input/output shapes; tensors light yellow, modules green, functions blue,
/// constants and parameters grey; failed module calls with a red border and "failed".
/// Node ids are `n0`, `n1`, ... in visible order, so the text is deterministic.
///
/// Example: `recorder::render<recorder::backend::Dot>(trace, {.depth = 1}, std::cout);`
struct Dot {
  static constexpr std::string_view extension = ".dot";

  /// Writes the DOT text of `trace` seen with `options` to `os`.
  static void render(const Trace& trace, const RenderOptions& options, std::ostream& os) {
    std::string text;
    detail::write_dot(trace, options, text);
    os.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
};

}  // namespace backend
}  // namespace recorder
