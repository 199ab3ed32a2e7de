#pragma once
/// The interactive HTML viewer (`backend::Html`): one self-contained file that opens offline,
/// collapsed to the render options' depth, and lays out and draws one module level at a time.

#include <recorder/detail/escape.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/detail/viewer_assets.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/json.hpp>
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

/// The viewer data's long lists: one item a line, compact.
inline constexpr JsonLayout viewer_rows{.comma = ",", .colon = ":", .lines = true};

/// Writes display pairs as `[["name","value"],...]`.
inline void viewer_pairs(JsonWriter& w,
                         const std::vector<std::pair<std::string, std::string>>& pairs) {
  w.begin_array(json_compact);
  for (const auto& [name, value] : pairs) {
    w.begin_array();
    w.string(name);
    w.string(value);
    w.end_array();
  }
  w.end_array();
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
  JsonWriter w(out, json_compact, JsonText::in_script);
  w.begin_object();
  w.field("format", 1);
  w.field("model", trace.model_name);
  w.field("graph_name", options.graph_name.empty() ? trace.model_name : options.graph_name);
  w.field("complete", trace.complete());
  json_failure(w, trace);
  w.field("total_params", trace.total_params);
  w.field("trainable_params", trace.trainable_params);
  w.key("depth");
  w.number_or_null(viewer_open_depth(g, options, budget));
  w.key("requested_depth");
  w.number_or_null(options.depth);
  w.field("direction", to_string(options.direction));
  w.field("hide_inner_tensors", options.hide_inner_tensors);
  w.field("hide_unreached", options.hide_unreached);

  w.break_line();
  w.key("modules");
  w.begin_array(viewer_rows);
  for (const ModuleInfo& m : g.modules()) {
    w.begin_object(json_compact);
    w.field("path", m.path);
    w.field("name", m.name);
    w.field("class", m.class_name);
    w.field("params", m.param_count);
    w.field("trainable", m.trainable_count);
    w.field("leaf", m.leaf);
    w.key("attrs");
    viewer_pairs(w, m.attributes);
    w.end_object();
  }
  w.end_array();

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
    w.number(id.valid() && id.value < n ? std::int64_t{id.value} : std::int64_t{-1});
  };

  w.break_line();
  w.key("nodes");
  w.begin_array(viewer_rows);
  for (std::uint32_t i = 0; i < n; ++i) {
    const NodeId id{i};
    const Graph::Node& nd = g.node(id);
    w.begin_array(json_compact);
    w.number(static_cast<std::uint64_t>(nd.kind));
    id_or_minus(nd.parent);
    w.number(nd.depth);
    w.string(join_lines(title_lines(g, labels, id), "\n"));
    if (is_tensor_kind(nd.kind)) {
      const Graph::TensorData& t = g.tensor(id);
      id_or_minus(t.producer);
      w.string(to_string(g.shape(id)));
      w.string(t.dtype);
    } else if (nd.kind == NodeKind::function) {
      w.string(g.function(id).op);
      w.boolean(nd.inplace);
      w.numbers(ins[i], &NodeId::value);
      w.numbers(outs[i], &NodeId::value);
    } else {
      const Graph::CallData& c = g.call(id);
      w.number(c.module.value);
      w.string(depth_index_label(g, id));
      w.numbers(c.inputs, &NodeId::value);
      w.numbers(c.outputs, &NodeId::value);
      w.boolean(nd.failed);
      w.number(c.call_index);
    }
    w.end_array();
  }
  w.end_array();

  w.break_line();
  w.key("edges");
  w.begin_array();
  for (const Edge& e : g.edges()) {
    if (e.from.value >= n || e.to.value >= n) continue;
    w.number(e.from.value);
    w.number(e.to.value);
  }
  w.end_array();
  w.break_line();
  w.key("stats");
  w.begin_object(viewer_rows);
  for (const NodeFacts& f : facts) {
    if (!f.node.valid() || f.node.value >= n || f.facts.empty()) continue;
    w.key(std::to_string(f.node.value));
    viewer_pairs(w, f.facts);
  }
  w.end_object();
  w.end_object();
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
