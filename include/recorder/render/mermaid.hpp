#pragma once
/// Mermaid backend: the visible graph as a Mermaid `flowchart`, for Markdown pages and wikis.

#include <recorder/detail/escape.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/labels.hpp>
#include <recorder/render/options.hpp>
#include <recorder/render/visible.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace recorder {

namespace detail {

/// Escapes `s` for the inside of a double-quoted Mermaid label (`n0["..."]`).
///
/// `"` `<` `>` `&` `#` and `` ` `` become Mermaid entity codes (`#quot;`, `#lt;`, `#gt;`,
/// `#amp;`, `#35;`, `#96;`: Mermaid turns `#name;` into `&name;` before it renders, so a bare
/// `#` must be escaped too), a newline becomes `<br>`, a tab a space, other control characters
/// and invalid UTF-8 become U+FFFD.
/// Example: `mermaid_escape("a<b>\n\"&\"")` is `"a#lt;b#gt;<br>#quot;#amp;#quot;"`.
inline std::string mermaid_escape(std::string_view s) {
  static constexpr Escapes table(std::array{
      Escape{'"', "#quot;"}, Escape{'<', "#lt;"}, Escape{'>', "#gt;"}, Escape{'&', "#amp;"},
      Escape{'#', "#35;"}, Escape{'`', "#96;"}, Escape{'\n', "<br>"}, Escape{'\t', " "}});
  return table.escape(s, append_printable);
}

/// Appends the `classDef` lines: one per node kind, named as the kind (`input`, `module`, ...),
/// in the house colours as hex (Mermaid styles are CSS, which lacks X11's `darkseagreen1` and
/// `gray90`), and `failed`, a red border.
inline void append_mermaid_class_defs(std::string& out) {
  for (int k = 0; k < node_kind_count; ++k) {
    const auto kind = static_cast<NodeKind>(k);
    append(out, "\tclassDef ", to_string(kind), " fill:", house_colors(kind).hex,
           ",stroke:#000000\n");
  }
  out += "\tclassDef failed stroke:#ff0000,stroke-width:2px\n";
}

/// `lines`, escaped, joined with `<br>`; empty lines before the first non-empty one leave no
/// `<br>` behind.
inline std::string mermaid_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    if (!out.empty()) out += "<br>";
    out += mermaid_escape(line);
  }
  return out;
}

/// The escaped label of visible node `i`: title lines, depth, `failed`, shapes, parameters.
inline std::string mermaid_label(const Graph& g, const ModuleLabels& labels,
                                 const RenderOptions& options, const VisibleNode& v) {
  std::string out = mermaid_lines(title_lines(g, labels, v.node, v.calls));
  out += "<br>" + join_lines(status_lines(g, v.node), "<br>");
  if (options.show_shapes) {
    if (is_tensor_kind(v.kind))
      out += "<br>" + shape_repr(g.shape(v.node));
    else
      out += "<br>input: " + shapes_repr(g, v.inputs) + "<br>output: " + shapes_repr(g, v.outputs);
  }
  if (options.show_params && v.kind == NodeKind::module)
    out += "<br>params: " + with_thousands(g.module_of(v.node).param_count);
  return out;
}

/// Writes the Mermaid text of `trace` seen with `options` to `out`.
inline void write_mermaid(const Trace& trace, const RenderOptions& options, std::string& out) {
  const Graph& g = trace.graph;
  const VisibleGraph vg = visible_graph(g, options);
  const ModuleLabels labels = module_labels(g);
  const std::string& name = options.graph_name.empty() ? trace.model_name : options.graph_name;

  // The title as a YAML double-quoted scalar (JSON's escapes are valid there).
  out += "---\ntitle: \"" + json_escape(name) + "\"\n---\n";
  out += "flowchart ";
  out += to_string(options.direction);
  out += '\n';

  const auto write_node = [&](std::size_t i, const std::string& indent) {
    out += indent + "n" + std::to_string(i) + "[\"" +
           mermaid_label(g, labels, options, vg.nodes[i]) + "\"]\n";
  };
  const auto tabs = [](std::size_t level) { return std::string(level + 1, '\t'); };
  walk_clusters(
      vg, [&](std::size_t i, std::size_t level) { write_node(i, tabs(level)); },
      [&](std::size_t k, std::size_t level) {
        const std::string label = mermaid_lines(title_lines(g, labels, vg.clusters[k].call));
        out += tabs(level) + "subgraph c" + std::to_string(k) + "[\"" + label + "\"]\n";
      },
      [&](std::size_t, std::size_t level) { out += tabs(level) + "end\n"; });

  // Appended piece by piece: g++ 12 -O3 warns on `"|" + std::string` (-Wrestrict, a false
  // positive, GCC bug 105329).
  for (const VisibleEdge& e : vg.edges) {
    const std::uint32_t copies = drawn_copies(e, options);
    for (std::uint32_t k = 1; k <= copies; ++k) {
      out += "\tn" + std::to_string(e.from) + " -->";
      std::string label = edge_label(e, k, options);
      if (!label.empty() && label.front() == ' ') label.erase(0, 1);
      if (!label.empty()) {
        out += '|';
        out += mermaid_escape(label);
        out += '|';
      }
      out += " n";
      out += std::to_string(e.to);
      out += '\n';
    }
  }

  append_mermaid_class_defs(out);
  std::array<std::string, node_kind_count> members;
  std::string failed;
  for (std::size_t i = 0; i < vg.nodes.size(); ++i) {
    const VisibleNode& v = vg.nodes[i];
    const auto add = [&](std::string& list) {
      if (!list.empty()) list += ',';
      list += 'n';
      list += std::to_string(i);
    };
    add(members[static_cast<std::size_t>(v.kind)]);
    if (g.node(v.node).failed) add(failed);
  }
  for (std::size_t k = 0; k < members.size(); ++k)
    if (!members[k].empty())
      append(out, "\tclass ", members[k], " ", to_string(static_cast<NodeKind>(k)), "\n");
  if (!failed.empty()) out += "\tclass " + failed + " failed\n";
}

}  // namespace detail

namespace backend {

/// A Mermaid `flowchart` of the visible graph, for Markdown (GitHub, GitLab, wikis).
///
/// Honours every `RenderOptions` field as `Dot` does: `direction` is the flowchart's direction,
/// `graph_name` (or the model's name) its front-matter title; node `n<i>` is visible node `i`
/// with a quoted label (title, `depth:`, `failed`, shapes with `show_shapes`, `params:` with
/// `show_params`); `expand_nested` clusters become nested `subgraph c<k>["class<br>name"]` ...
/// `end` blocks; edges follow all nodes, each once when `strict` (labelled `|xN|` when rolled)
/// or `count` times otherwise (the k-th copy labelled `|xk|`); one `classDef` per node kind
/// in the DOT colours, and `failed` (red border) on failed module calls. User strings are
/// escaped with `detail::mermaid_escape`.
///
/// Example: `recorder::render<recorder::backend::Mermaid>(trace, {.depth = 1}, std::cout);`
/// ```
/// ---
/// title: "MLP"
/// ---
/// flowchart TB
/// 	n0["input-tensor<br>x<br>depth:0<br>(1, 128)"]
/// 	n1["Linear<br>fc1<br>depth:1<br>input: (1, 128)<br>output: (1, 64)"]
/// 	...
/// 	n0 --> n1
/// ```
struct Mermaid {
  static constexpr std::string_view extension = ".mmd";

  /// Writes the Mermaid text of `trace` seen with `options` to `os`.
  static void render(const Trace& trace, const RenderOptions& options, std::ostream& os) {
    detail::write_through_string(
        os, [&](std::string& text) { detail::write_mermaid(trace, options, text); });
  }
};

}  // namespace backend
}  // namespace recorder
