#pragma once
/// Model Explorer's JSON graph format (`backend::ModelExplorer`): a trace too big for any
/// drawing opens in Google's Model Explorer, which lays out one namespace level at a time.

#include <recorder/detail/escape.hpp>
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

/// Appends `"key": "value"` objects of Model Explorer's `KeyValue` lists.
inline void explorer_key_value(std::string& out, bool& first, std::string_view key,
                               std::string_view value) {
  out += first ? "{\"key\": \"" : ", {\"key\": \"";
  first = false;
  out += json_escape(key);
  out += "\", \"value\": \"";
  out += json_escape(value);
  out += "\"}";
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
  out += "{\n  \"label\": \"";
  out += json_escape(name);
  out += "\",\n  \"graphs\": [\n    {\n      \"id\": \"";
  out += json_escape(name.empty() ? std::string_view("model") : std::string_view(name));
  out += "\",\n      \"nodes\": [";
  for (std::size_t i = 0; i < vg.nodes.size(); ++i) {
    const VisibleNode& v = vg.nodes[i];
    const NodeId id = v.node;
    out += i > 0 ? ",\n        {" : "\n        {";
    out += "\"id\": \"" + std::to_string(id.value) + "\", \"label\": \"";
    out += json_escape(v.kind == NodeKind::module ? g.module_of(id).class_name
                                                  : title_lines(g, {}, id).front());
    out += "\", \"namespace\": \"";
    out += json_escape(namespace_of(id));
    out += "\", \"attrs\": [";
    bool first = true;
    if (v.kind == NodeKind::module) {
      const ModuleInfo& m = g.module_of(id);
      explorer_key_value(out, first, "path", path_address(g, id));
      explorer_key_value(out, first, "class", m.class_name);
      explorer_key_value(out, first, "depth_index", depth_index_label(g, id));
      explorer_key_value(out, first, "params", with_thousands(m.param_count));
      for (const auto& [key, value] : m.attributes) explorer_key_value(out, first, key, value);
      if (g.node(id).failed) explorer_key_value(out, first, "failed", "true");
    } else if (v.kind == NodeKind::function) {
      explorer_key_value(out, first, "op", g.function(id).op);
      explorer_key_value(out, first, "inplace", g.node(id).inplace ? "true" : "false");
    } else {
      explorer_key_value(out, first, "kind", to_string(v.kind));
      explorer_key_value(out, first, "shape", to_string(g.shape(id)));
      explorer_key_value(out, first, "dtype", g.tensor(id).dtype);
    }
    out += "], \"incomingEdges\": [";
    for (std::size_t k = 0; k < incoming[i].size(); ++k) {
      if (k > 0) out += ", ";
      out += "{\"sourceNodeId\": \"" + std::to_string(vg.nodes[incoming[i][k]].node.value) +
             "\", \"sourceNodeOutputId\": \"0\", \"targetNodeInputId\": \"" + std::to_string(k) +
             "\"}";
    }
    out += "], \"outputsMetadata\": [";
    std::vector<NodeId> outputs = v.outputs;
    if (is_tensor_kind(v.kind)) outputs = {id};
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      out += k > 0 ? ", {\"id\": \"" : "{\"id\": \"";
      out += std::to_string(k) + "\", \"attrs\": [";
      bool f = true;
      explorer_key_value(out, f, "shape", to_string(g.shape(outputs[k])));
      explorer_key_value(out, f, "dtype", g.tensor(outputs[k]).dtype);
      out += "]}";
    }
    out += "]}";
  }
  out += "\n      ],\n      \"groupNodeAttributes\": {";
  out += "\n        \"\": {\"model\": \"";
  out += json_escape(trace.model_name);
  out += "\", \"total_params\": \"" + with_thousands(trace.total_params) +
         "\", \"trainable_params\": \"" + with_thousands(trace.trainable_params) + "\"}";
  for (std::uint32_t i = 0; i < n; ++i) {
    if (space[i].empty()) continue;
    const NodeId id{i};
    const ModuleInfo& m = g.module_of(id);
    out += ",\n        \"";
    out += json_escape(space[i]);
    out += "\": {\"path\": \"";
    out += json_escape(path_address(g, id));
    out += "\", \"class\": \"";
    out += json_escape(m.class_name);
    out += "\", \"depth_index\": \"" + depth_index_label(g, id) + "\", \"params\": \"" +
           with_thousands(m.param_count) + "\"}";
  }
  out += "\n      }\n    }\n  ]\n}\n";
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
