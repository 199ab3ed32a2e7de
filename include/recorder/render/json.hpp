#pragma once
/// JSON backends: the whole recorded graph (`Json`) and the visible graph for some options
/// (`JsonView`), each as one deterministic document.

#include <recorder/detail/json_writer.hpp>
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

namespace recorder {

namespace detail {

/// Writes index `i` (a node or cluster id), or `null` when it is invalid.
template <class Tag>
void json_index_or_null(JsonWriter& w, StrongIndex<Tag> i) {
  if (i.valid())
    w.number(i.value);
  else
    w.null();
}

/// Writes member `"failure"` of `trace`: `{op, module_path, module_class, message}` or `null`.
inline void json_failure(JsonWriter& w, const Trace& trace) {
  w.key("failure");
  if (trace.failure) {
    w.begin_object();
    w.field("op", trace.failure->op);
    w.field("module_path", trace.failure->module_path);
    w.field("module_class", trace.failure->module_class);
    w.field("message", trace.failure->message);
    w.end_object();
  } else {
    w.null();
  }
}

/// Writes a tensor's `"shape": [s, 8]` (a dynamic size as the size it was exported with) and,
/// when a size has a name, `"dim_names": ["s40", ""]`.
inline void json_shape(JsonWriter& w, Shape shape) {
  w.key("shape");
  w.numbers(shape);
  if (!shape.named()) return;
  w.key("dim_names");
  w.begin_array(json_one_line);
  for (std::size_t i = 0; i < shape.size(); ++i) w.string(shape.name(i));
  w.end_array();
}

/// Writes the JSON document of the whole graph of `trace` to `out`.
inline void write_json(const Trace& trace, std::string& out) {
  const Graph& g = trace.graph;
  JsonWriter w(out);
  w.begin_object();
  w.field("model", trace.model_name);
  w.field("complete", trace.complete());
  json_failure(w, trace);
  w.field("total_params", trace.total_params);
  w.field("trainable_params", trace.trainable_params);

  w.key("modules");
  w.begin_array();
  for (std::size_t i = 0; i < g.modules().size(); ++i) {
    const ModuleInfo& m = g.modules()[i];
    w.begin_object();
    w.field("id", std::uint64_t{i});
    w.field("path", m.path);
    w.field("name", m.name);
    w.field("class", m.class_name);
    w.field("leaf", m.leaf);
    w.field("calls", std::uint64_t{m.calls});
    w.field("param_count", m.param_count);
    w.field("trainable_count", m.trainable_count);
    w.key("params");
    w.begin_array();
    for (const ParamInfo& p : m.params) {
      w.begin_object();
      w.field("name", p.name);
      w.key("shape");
      w.numbers(p.shape);
      w.field("numel", p.numel);
      w.field("trainable", p.trainable);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();

  w.key("nodes");
  w.begin_array();
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    const Graph::Node& n = g.node(id);
    w.begin_object();
    w.field("id", std::uint64_t{i});
    w.field("kind", to_string(n.kind));
    w.field("name", g.label(id));
    w.field("depth", std::uint64_t{n.depth});
    w.key("parent");
    json_index_or_null(w, n.parent);
    if (is_tensor_kind(n.kind)) {
      const Graph::TensorData& t = g.tensor(id);
      w.field("label", t.name);
      json_shape(w, g.shape(id));
      w.field("dtype", t.dtype);
      w.field("device", t.device);
      w.key("producer");
      json_index_or_null(w, t.producer);
    } else if (n.kind == NodeKind::function) {
      w.field("op", g.function(id).op);
      w.field("inplace", n.inplace);
    } else {
      const Graph::CallData& c = g.call(id);
      const ModuleInfo& m = g.module(c.module);
      w.field("module", std::uint64_t{c.module.value});
      w.field("path", m.path);
      w.field("class", m.class_name);
      w.field("call_index", std::uint64_t{c.call_index});
      w.field("depth_index", depth_index_label(g, id));
      w.key("inputs");
      w.numbers(c.inputs, &NodeId::value);
      w.key("outputs");
      w.numbers(c.outputs, &NodeId::value);
      w.field("failed", n.failed);
      if (n.inferred) {
        w.field("inferred", true);
      }
    }
    w.end_object();
  }
  w.end_array();

  w.key("edges");
  w.begin_array();
  for (const Edge& e : g.edges()) w.numbers(std::array{e.from.value, e.to.value});
  w.end_array();
  w.end_object();
  out += '\n';
}

/// Writes the shapes of `tensors` as a list of number lists: `[[1, 64], [1, 64]]`.
inline void json_shapes(JsonWriter& w, const Graph& g, NodeList tensors) {
  w.begin_array(json_one_line);
  for (NodeId t : tensors) w.numbers(g.shape(t));
  w.end_array();
}

/// Writes the JSON document of the visible graph of `trace` seen with `options` to `out`.
inline void write_json_view(const Trace& trace, const RenderOptions& options, std::string& out) {
  const Graph& g = trace.graph;
  const VisibleGraph vg = visible_graph(g, options);
  const ModuleLabels labels = module_labels(g);
  JsonWriter w(out);
  w.begin_object();
  w.field("model", trace.model_name);
  w.field("graph_name", options.graph_name.empty() ? trace.model_name : options.graph_name);
  w.field("complete", trace.complete());

  w.key("options");
  w.begin_object();
  w.key("depth");
  w.number_or_null(options.depth);
  w.field("expand_nested", options.expand_nested);
  w.field("hide_inner_tensors", options.hide_inner_tensors);
  w.field("hide_module_functions", options.hide_module_functions);
  w.field("hide_unreached", options.hide_unreached);
  w.field("roll", options.roll);
  w.field("show_shapes", options.show_shapes);
  w.field("show_params", options.show_params);
  w.field("strict", options.strict);
  w.field("direction", to_string(options.direction));
  w.field("graph_name", options.graph_name);
  w.end_object();

  w.key("nodes");
  w.begin_array();
  for (std::size_t i = 0; i < vg.nodes.size(); ++i) {
    const VisibleNode& v = vg.nodes[i];
    const Graph::Node& n = g.node(v.node);
    w.begin_object();
    w.field("index", std::uint64_t{i});
    w.field("id", std::uint64_t{v.node.value});
    w.field("kind", to_string(v.kind));
    w.field("label", join_lines(title_lines(g, labels, v.node, v.calls), "\n"));
    w.field("depth", std::uint64_t{n.depth});
    w.field("calls", std::uint64_t{v.calls});
    w.key("cluster");
    json_index_or_null(w, v.cluster);
    if (is_tensor_kind(v.kind)) {
      w.field("name", g.tensor(v.node).name);
      if (options.show_shapes) {
        json_shape(w, g.shape(v.node));
      }
    } else {
      if (v.kind == NodeKind::function) {
        w.field("op", g.function(v.node).op);
        w.field("inplace", n.inplace);
      } else {
        const ModuleInfo& m = g.module_of(v.node);
        w.field("path", m.path);
        w.field("name", m.name);
        w.field("class", m.class_name);
        w.field("collapsed", v.collapsed);
        w.field("failed", n.failed);
        if (n.inferred) {
          w.field("inferred", true);
        }
        if (options.show_params) {
          w.field("params", m.param_count);
        }
      }
      if (options.show_shapes) {
        w.key("inputs");
        json_shapes(w, g, v.inputs);
        w.key("outputs");
        json_shapes(w, g, v.outputs);
      }
    }
    w.end_object();
  }
  w.end_array();

  w.key("edges");
  w.begin_array();
  for (const VisibleEdge& e : vg.edges) {
    w.begin_object(json_one_line);
    w.field("from", e.from);
    w.field("to", e.to);
    w.field("count", e.count);
    w.end_object();
  }
  w.end_array();

  w.key("clusters");
  w.begin_array();
  for (std::size_t k = 0; k < vg.clusters.size(); ++k) {
    const VisibleCluster& c = vg.clusters[k];
    const ModuleInfo& m = g.module_of(c.call);
    w.begin_object();
    w.field("index", std::uint64_t{k});
    w.field("call", std::uint64_t{c.call.value});
    w.key("parent");
    json_index_or_null(w, c.parent);
    w.field("path", m.path);
    w.field("class", m.class_name);
    w.field("label", join_lines(title_lines(g, labels, c.call), "\n"));
    w.end_object();
  }
  w.end_array();
  w.end_object();
  out += '\n';
}

}  // namespace detail

namespace backend {

/// The whole recorded graph as pretty-printed JSON (display options do not apply):
///
/// `{"model", "complete", "failure": {op, module_path, module_class, message} | null,
/// "total_params", "trainable_params", "modules": [{id, path, name, class, leaf, calls,
/// param_count, trainable_count, params: [{name, shape, numel, trainable}]}], "nodes": [{id,
/// kind, name (the node's label), depth, parent (id | null), ...}], "edges": [[from, to]]}`.
///
/// Tensor nodes add `label` (the tensor's own name, often empty), `shape`, `dtype`, `device`,
/// `producer`; function nodes `op`, `inplace`; module calls `module` (index into "modules"),
/// `path`, `class`, `call_index`, `depth_index` ("2-3"), `inputs`, `outputs`, `failed`.
struct Json {
  static constexpr std::string_view extension = ".json";

  /// Writes the JSON document of `trace` to `os`; `options` are ignored.
  static void render(const Trace& trace, const RenderOptions& options, std::ostream& os) {
    static_cast<void>(options);
    detail::write_through_string(os, [&](std::string& text) { detail::write_json(trace, text); });
  }
};

/// The visible graph for some options, as pretty-printed JSON: what `Dot` and `Mermaid`
/// draw, as data (the whole recorded graph is `Json`).
///
/// `{"model", "graph_name", "complete", "options": {depth (number | null), expand_nested,
/// hide_inner_tensors, hide_module_functions, hide_unreached, roll, show_shapes, show_params,
/// strict, direction, graph_name}, "nodes": [{index, id (recorded node), kind, label, depth,
/// calls, cluster (index | null), ...}], "edges": [{from, to, count}], "clusters": [{index,
/// call, parent (index | null), path, class, label}]}`.
///
/// `index` is the node's position (the `n<index>` of `Dot` and `Mermaid`), `label` the title
/// lines of the picture joined by `\n` (`"Linear\nfc1"`), `calls` how many recorded calls a
/// rolled node stands for, `count` how many parallel edges one edge stands for. Tensor nodes
/// add `name` and, with `show_shapes`, `shape`; functions `op` and `inplace`; module calls
/// `path`, `name`, `class`, `collapsed`, `failed` and, with `show_params`, `params`; both op
/// kinds, with `show_shapes`, `inputs` and `outputs` (lists of shapes).
///
/// Example: `recorder::render_to_file<recorder::backend::JsonView>(trace, {.depth = 1}, "net");`
/// writes `net.view.json`.
struct JsonView {
  static constexpr std::string_view extension = ".view.json";

  /// Writes the JSON document of the visible graph of `trace` seen with `options` to `os`.
  static void render(const Trace& trace, const RenderOptions& options, std::ostream& os) {
    detail::write_through_string(
        os, [&](std::string& text) { detail::write_json_view(trace, options, text); });
  }
};

}  // namespace backend
}  // namespace recorder
