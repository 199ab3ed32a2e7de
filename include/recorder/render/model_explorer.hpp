#pragma once
/// Model Explorer's JSON graph format (`backend::ModelExplorer`): a trace too big for any
/// drawing opens in Google's Model Explorer, which lays out one namespace level at a time.

#include <recorder/detail/json_writer.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/labels.hpp>
#include <recorder/render/options.hpp>
#include <recorder/render/visible.hpp>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace recorder {
namespace detail {

/// One namespace component for module call `call`: its path relative to the call around it
/// (`layer1.0` in `layer1` gives `0`; `layers.3` called by the root, through a `ModuleList`
/// that is never called itself, gives `layers.3`), `#k` for the k-th call of a module called
/// more than once; `/`, Model Explorer's separator, becomes `_`.
inline std::string explorer_component(const Graph& g, NodeId call) {
  const ModuleInfo& m = g.module_of(call);
  const NodeId parent = g.node(call).parent;
  std::string_view above;
  if (parent.valid() && parent.value < g.size() && g.kind(parent) == NodeKind::module)
    above = g.module_of(parent).path;
  std::string_view rel = m.path;
  if (!above.empty() && rel.size() > above.size() + 1 && rel.starts_with(above) &&
      rel[above.size()] == '.')
    rel.remove_prefix(above.size() + 1);
  std::string s(rel.empty() ? std::string_view(m.class_name) : rel);
  for (char& c : s)
    if (c == '/') c = '_';
  if (m.calls > 1) s += '#' + std::to_string(g.call(call).call_index);
  return s;
}

/// Model Explorer's outer levels: indented, an empty list too (`[\n      ]`).
inline constexpr JsonLayout explorer_indented{
    .lines = true, .indent = 2, .close_on_line = true, .close_on_line_when_empty = true};

/// Writes `{"key": key, "value": value}`, an item of Model Explorer's `KeyValue` lists.
inline void explorer_key_value(JsonWriter& w, std::string_view key, std::string_view value) {
  w.begin_object();
  w.field("key", key);
  w.field("value", value);
  w.end_object();
}

/// Writes `trace` as a Model Explorer `GraphCollection` with one graph to `out`.
inline void write_model_explorer(const Trace& trace, const RenderOptions& options,
                                 std::string& out) {
  const Graph& g = trace.graph;
  RenderOptions all = options;
  all.depth = std::nullopt;  // every composite call is a namespace Model Explorer can fold
  all.hide_inner_tensors = true;
  all.hide_module_functions = true;
  all.roll = false;
  all.expand_nested = false;
  const VisibleGraph vg = visible_graph(g, all);
  const std::size_t n = g.size();

  // The namespace of every composite call drawn through (its ancestors' components joined by
  // '/'), computed in recording order (a call is recorded before what it contains).
  std::vector<std::string> space(n);
  const auto namespace_of = [&](NodeId id) -> const std::string& {
    static const std::string top;
    const NodeId p = g.node(id).parent;
    return p.valid() && p.value < n ? space[p.value] : top;
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    const NodeId id{i};
    if (g.kind(id) != NodeKind::module || g.module_of(id).leaf || g.node(id).depth == 0) continue;
    const std::string& above = namespace_of(id);
    space[i] = above.empty() ? explorer_component(g, id) : above + '/' + explorer_component(g, id);
  }

  std::vector<std::vector<std::uint32_t>> incoming(vg.nodes.size());
  for (const VisibleEdge& e : vg.edges) incoming[e.to].push_back(e.from);

  const std::string& name = options.graph_name.empty() ? trace.model_name : options.graph_name;
  JsonWriter w(out, explorer_indented);
  w.begin_object();
  w.field("label", name);
  w.key("graphs");
  w.begin_array();
  w.begin_object();
  w.field("id", name.empty() ? std::string_view("model") : std::string_view(name));
  w.key("nodes");
  w.begin_array();
  for (std::size_t i = 0; i < vg.nodes.size(); ++i) {
    const VisibleNode& v = vg.nodes[i];
    const NodeId id = v.node;
    w.begin_object(json_one_line);
    w.field("id", std::to_string(id.value));
    w.field("label", v.kind == NodeKind::module ? g.module_of(id).class_name
                                                : title_lines(g, {}, id).front());
    w.field("namespace", namespace_of(id));
    w.key("attrs");
    w.begin_array();
    if (v.kind == NodeKind::module) {
      const ModuleInfo& m = g.module_of(id);
      explorer_key_value(w, "path", path_address(g, id));
      explorer_key_value(w, "class", m.class_name);
      explorer_key_value(w, "depth_index", depth_index_label(g, id));
      explorer_key_value(w, "params", with_thousands(m.param_count));
      for (const auto& [key, value] : m.attributes) explorer_key_value(w, key, value);
      if (g.node(id).failed) explorer_key_value(w, "failed", "true");
    } else if (v.kind == NodeKind::function) {
      explorer_key_value(w, "op", g.function(id).op);
      explorer_key_value(w, "inplace", g.node(id).inplace ? "true" : "false");
    } else {
      explorer_key_value(w, "kind", to_string(v.kind));
      explorer_key_value(w, "shape", to_string(g.shape(id)));
      explorer_key_value(w, "dtype", g.tensor(id).dtype);
    }
    w.end_array();
    w.key("incomingEdges");
    w.begin_array();
    for (std::size_t k = 0; k < incoming[i].size(); ++k) {
      w.begin_object();
      w.field("sourceNodeId", std::to_string(vg.nodes[incoming[i][k]].node.value));
      w.field("sourceNodeOutputId", "0");
      w.field("targetNodeInputId", std::to_string(k));
      w.end_object();
    }
    w.end_array();
    w.key("outputsMetadata");
    w.begin_array();
    std::vector<NodeId> outputs = v.outputs;
    if (is_tensor_kind(v.kind)) outputs = {id};
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      w.begin_object();
      w.field("id", std::to_string(k));
      w.key("attrs");
      w.begin_array();
      explorer_key_value(w, "shape", to_string(g.shape(outputs[k])));
      explorer_key_value(w, "dtype", g.tensor(outputs[k]).dtype);
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("groupNodeAttributes");
  w.begin_object();
  w.key("");
  w.begin_object(json_one_line);
  w.field("model", trace.model_name);
  w.field("total_params", with_thousands(trace.total_params));
  w.field("trainable_params", with_thousands(trace.trainable_params));
  w.end_object();
  for (std::uint32_t i = 0; i < n; ++i) {
    if (space[i].empty()) continue;
    const NodeId id{i};
    const ModuleInfo& m = g.module_of(id);
    w.key(space[i]);
    w.begin_object(json_one_line);
    w.field("path", path_address(g, id));
    w.field("class", m.class_name);
    w.field("depth_index", depth_index_label(g, id));
    w.field("params", with_thousands(m.param_count));
    w.end_object();
  }
  w.end_object();
  w.end_object();
  w.end_array();
  w.end_object();
  out += '\n';
}

}  // namespace detail

namespace backend {

/// The trace as Model Explorer's JSON graph (a `GraphCollection` with one graph), for traces
/// too big to draw (`model_explorer --extensions=...` or its "upload JSON graph" opens it).
///
/// Nodes are what the fully expanded picture shows with `hide_inner_tensors`: the input and
/// output tensors, the functions and the leaf module calls; each composite module call is a
/// namespace (`layer1/0`, with `#k` for the k-th call of a reused module), which Model
/// Explorer draws as a collapsible layer. Node `id`s are recorded node ids; `attrs` carry the
/// path, class, depth-index label, parameters and attributes of calls, and `outputsMetadata`
/// the shapes and dtypes; `groupNodeAttributes` describe each namespace and ("") the model.
/// Only `graph_name` of the options applies.
struct ModelExplorer {
  static constexpr std::string_view extension = ".explorer.json";

  static void render(const Trace& trace, const RenderOptions& options, std::ostream& os) {
    detail::write_through_string(
        os, [&](std::string& text) { detail::write_model_explorer(trace, options, text); });
  }
  static void render_to(const Trace& trace, const RenderOptions& options, std::string& out) {
    detail::write_model_explorer(trace, options, out);
  }
};

}  // namespace backend
}  // namespace recorder
