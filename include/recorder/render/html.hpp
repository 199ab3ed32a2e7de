#pragma once
/// The interactive HTML viewer (`backend::Html`): one self-contained file that opens offline,
/// collapsed to the render options' depth, and lays out and draws one module level at a time.

#include <recorder/detail/escape.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/detail/viewer_assets.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/labels.hpp>
#include <recorder/render/node_facts.hpp>
#include <recorder/render/options.hpp>
#include <recorder/render/visible.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

namespace detail {

/// Appends `s` as a JSON string that is also safe inside an HTML `<script>` element: every `<`
/// is written `\u003c`, so no `</script>` or `<!--` can appear in the embedded data.
inline void append_script_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : json_escape(s)) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  out += '"';
}

/// Appends `[a, b, ...]` (node ids).
inline void append_id_list(std::string& out, NodeList ids) {
  out += '[';
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(ids[i].value);
  }
  out += ']';
}

/// Appends display pairs as `[["name","value"],...]`.
inline void append_pairs(std::string& out,
                         const std::vector<std::pair<std::string, std::string>>& pairs) {
  out += '[';
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    out += k > 0 ? ",[" : "[";
    append_script_json_string(out, pairs[k].first);
    out += ',';
    append_script_json_string(out, pairs[k].second);
    out += ']';
  }
  out += ']';
}

/// The depth the viewer opens at: the requested one (`nullopt`: all), or the deepest smaller
/// one whose picture has at most `budget` nodes (never below 1; a graph with more top-level
/// nodes than `budget` opens at depth 1 all the same).
inline std::optional<int> viewer_open_depth(const Graph& g, const RenderOptions& options,
                                            std::size_t budget) {
  int max_depth = 0;
  for (std::uint32_t i = 0; i < g.size(); ++i)
    if (g.kind(NodeId{i}) == NodeKind::module)
      max_depth = std::max(max_depth, int{g.node(NodeId{i}).depth});
  std::optional<int> depth = options.depth;
  if (depth && *depth < 0) depth = 0;
  if (depth && *depth > max_depth) depth = std::nullopt;  // the same picture as "all"
  while (true) {
    RenderOptions at = options;
    at.depth = depth;
    if (visible_graph(g, at).nodes.size() <= budget) return depth;
    const int d = depth ? *depth : max_depth;
    if (d <= 1) return depth;
    depth = d - 1;
  }
}

/// Writes the viewer's data document (viewer/FORMAT.md) for `trace` to `out`.
inline void write_viewer_data(const Trace& trace, const RenderOptions& options,
                              const std::vector<NodeFacts>& facts, std::size_t budget,
                              std::string& out) {
  const Graph& g = trace.graph;
  const ModuleLabels labels = module_labels(g);
  const auto str = [&](std::string_view s) { append_script_json_string(out, s); };
  const auto num = [&](std::uint64_t v) { out += std::to_string(v); };
  const auto depth_or_null = [&](const std::optional<int>& d) {
    if (d)
      out += std::to_string(*d);
    else
      out += "null";
  };

  out += "{\"format\":1,\"model\":";
  str(trace.model_name);
  out += ",\"graph_name\":";
  str(options.graph_name.empty() ? trace.model_name : options.graph_name);
  out += ",\"complete\":";
  out += trace.complete() ? "true" : "false";
  out += ",\"failure\":";
  if (trace.failure) {
    out += "{\"op\":";
    str(trace.failure->op);
    out += ",\"module_path\":";
    str(trace.failure->module_path);
    out += ",\"module_class\":";
    str(trace.failure->module_class);
    out += ",\"message\":";
    str(trace.failure->message);
    out += '}';
  } else {
    out += "null";
  }
  out += ",\"total_params\":";
  num(trace.total_params);
  out += ",\"trainable_params\":";
  num(trace.trainable_params);
  out += ",\"depth\":";
  depth_or_null(viewer_open_depth(g, options, budget));
  out += ",\"requested_depth\":";
  depth_or_null(options.depth);
  out += ",\"direction\":";
  str(to_string(options.direction));
  out += ",\"hide_inner_tensors\":";
  out += options.hide_inner_tensors ? "true" : "false";
  out += ",\"hide_unreached\":";
  out += options.hide_unreached ? "true" : "false";

  out += ",\n\"modules\":[";
  for (std::size_t i = 0; i < g.modules().size(); ++i) {
    const ModuleInfo& m = g.modules()[i];
    out += i > 0 ? ",\n{\"path\":" : "\n{\"path\":";
    str(m.path);
    out += ",\"name\":";
    str(m.name);
    out += ",\"class\":";
    str(m.class_name);
    out += ",\"params\":";
    num(m.param_count);
    out += ",\"trainable\":";
    num(m.trainable_count);
    out += ",\"leaf\":";
    out += m.leaf ? "true" : "false";
    out += ",\"attrs\":";
    append_pairs(out, m.attributes);
    out += '}';
  }

  // Functions' operands and results come from the edges (calls keep their own lists).
  const std::size_t n = g.size();
  std::vector<std::vector<NodeId>> ins(n), outs(n);
  for (const Edge& e : g.edges()) {
    if (e.from.value >= n || e.to.value >= n) continue;
    if (g.kind(e.to) == NodeKind::function && is_tensor_kind(g.kind(e.from)))
      ins[e.to.value].push_back(e.from);
    if (g.kind(e.from) == NodeKind::function && is_tensor_kind(g.kind(e.to)))
      outs[e.from.value].push_back(e.to);
  }
  const auto id_or_minus = [&](NodeId id) {
    if (id.valid() && id.value < n)
      out += std::to_string(id.value);
    else
      out += "-1";
  };

  out += "],\n\"nodes\":[";
  for (std::uint32_t i = 0; i < n; ++i) {
    const NodeId id{i};
    const Graph::Node& nd = g.node(id);
    out += i > 0 ? ",\n[" : "\n[";
    num(static_cast<std::uint64_t>(nd.kind));
    out += ',';
    id_or_minus(nd.parent);
    out += ',';
    num(nd.depth);
    out += ',';
    str(join_lines(title_lines(g, labels, id), "\n"));
    out += ',';
    if (is_tensor_kind(nd.kind)) {
      const Graph::TensorData& t = g.tensor(id);
      id_or_minus(t.producer);
      out += ',';
      str(to_string(g.shape(id)));
      out += ',';
      str(t.dtype);
    } else if (nd.kind == NodeKind::function) {
      str(g.function(id).op);
      out += nd.inplace ? ",true," : ",false,";
      append_id_list(out, ins[i]);
      out += ',';
      append_id_list(out, outs[i]);
    } else {
      const Graph::CallData& c = g.call(id);
      num(c.module.value);
      out += ',';
      str(depth_index_label(g, id));
      out += ',';
      append_id_list(out, c.inputs);
      out += ',';
      append_id_list(out, c.outputs);
      out += nd.failed ? ",true," : ",false,";
      num(c.call_index);
    }
    out += ']';
  }

  out += "],\n\"edges\":[";
  bool first = true;
  for (const Edge& e : g.edges()) {
    if (e.from.value >= n || e.to.value >= n) continue;
    if (!first) out += ',';
    first = false;
    num(e.from.value);
    out += ',';
    num(e.to.value);
  }
  out += "],\n\"stats\":{";
  first = true;
  for (const NodeFacts& f : facts) {
    if (!f.node.valid() || f.node.value >= n || f.facts.empty()) continue;
    out += first ? "\n\"" : ",\n\"";
    first = false;
    out += std::to_string(f.node.value);
    out += "\":";
    append_pairs(out, f.facts);
  }
  out += "}}";
}

/// Appends the chunks of one generated asset.
template <std::size_t N>
void append_asset(std::string& out, const std::string_view (&chunks)[N]) {
  for (std::string_view c : chunks) out += c;
}

/// Writes the whole viewer page for `trace` to `out`.
inline void write_html(const Trace& trace, const RenderOptions& options,
                       const std::vector<NodeFacts>& facts, std::size_t budget, std::string& out) {
  namespace va = viewer_assets;
  const std::string& name = options.graph_name.empty() ? trace.model_name : options.graph_name;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"generator\" content=\"recorder\">\n<title>";
  out += html_escape(name.empty() ? std::string_view("model") : std::string_view(name));
  out += " \xE2\x80\x94 recorder</title>\n<style>\n";
  append_asset(out, va::css);
  out += "</style>\n</head>\n<body>\n";
  append_asset(out, va::body);
  out += "<script type=\"application/json\" id=\"recorder-data\">";
  write_viewer_data(trace, options, facts, budget, out);
  out += "</script>\n<script id=\"recorder-dagre\">/*! @dagrejs/dagre 3.1.3\n";
  append_asset(out, va::dagre_license);
  out += "*/\n";
  append_asset(out, va::dagre);
  out += "\n</script>\n<script type=\"text/plain\" id=\"recorder-worker\">";
  append_asset(out, va::worker);
  out += "</script>\n<script>\n";  // the viewer: its four parts, in order (viewer/FORMAT.md)
  append_asset(out, va::viewer_model);
  append_asset(out, va::viewer_layout);
  append_asset(out, va::viewer_canvas);
  append_asset(out, va::viewer);
  out += "</script>\n</body>\n</html>\n";
}

}  // namespace detail

namespace backend {

/// An interactive viewer in one self-contained HTML file (no server, nothing beside it): it
/// opens collapsed to `options.depth` (the picture `JsonView` describes; a smaller depth when
/// that one would show more than `open_budget` nodes at once, and the page says so), then
/// expands and collapses modules on click, searches by name, path or class, pans and zooms,
/// and shows each node's path, class, depth-index label, shapes, dtypes, parameters,
/// attributes and `facts` on hover. Layout is @dagrejs/dagre's, one module level at a time in
/// a Web Worker; drawing is Canvas2D. `hide_inner_tensors`, `direction` and `graph_name` apply;
/// `roll`, `strict`, `expand_nested` do not (the viewer draws expanded modules as clusters).
///
/// Example: `recorder::render_to_file<recorder::backend::Html>(trace, {.depth = 1}, "net");`
/// writes `net.html`.
struct Html {
  static constexpr std::string_view extension = ".html";

  /// Extra facts shown on hover (timings, recorded statistics), per recorded node.
  std::vector<NodeFacts> facts{};
  /// At most this many nodes in the opening picture (see above).
  std::size_t open_budget = 1500;

  void render(const Trace& trace, const RenderOptions& options, std::ostream& os) const {
    detail::write_through_string(os, [&](std::string& text) {
      detail::write_html(trace, options, facts, open_budget, text);
    });
  }
  void render_to(const Trace& trace, const RenderOptions& options, std::string& out) const {
    detail::write_html(trace, options, facts, open_budget, out);
  }
};

}  // namespace backend
}  // namespace recorder
