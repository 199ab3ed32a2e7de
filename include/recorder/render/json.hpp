#pragma once
/// JSON backend: the whole recorded graph (modules, nodes, edges) as one deterministic document.

#include <recorder/detail/escape.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/options.hpp>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace recorder {

namespace detail {

/// A minimal pretty-printing JSON writer (2-space indent; short number lists on one line).
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  /// Starts member `k` of the current object; the next call writes its value.
  void key(std::string_view k) {
    separate();
    out_ += '"';
    out_ += json_escape(k);
    out_ += "\": ";
    after_key_ = true;
  }
  void string(std::string_view s) {
    separate();
    out_ += '"';
    out_ += json_escape(s);
    out_ += '"';
  }
  void number(std::int64_t v) {
    separate();
    out_ += std::to_string(v);
  }
  void number(std::uint64_t v) {
    separate();
    out_ += std::to_string(v);
  }
  void boolean(bool b) {
    separate();
    out_ += b ? "true" : "false";
  }
  void null() {
    separate();
    out_ += "null";
  }
  /// Writes a number list on one line: `[1, 3, 224, 224]`.
  template <class Range>
  void inline_numbers(const Range& values) {
    separate();
    out_ += '[';
    bool first = true;
    for (const auto& v : values) {
      if (!first) out_ += ", ";
      first = false;
      out_ += std::to_string(v);
    }
    out_ += ']';
  }
  /// Writes a list of node ids on one line: `[0, 4]`.
  void inline_ids(const std::vector<NodeId>& ids) {
    std::vector<std::uint32_t> values;
    values.reserve(ids.size());
    for (NodeId id : ids) values.push_back(id.value);
    inline_numbers(values);
  }
  /// Writes a node id, or `null` when it is invalid.
  void id_or_null(NodeId id) {
    if (id.valid())
      number(std::uint64_t{id.value});
    else
      null();
  }

 private:
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (empty_.empty()) return;
    if (!empty_.back()) out_ += ',';
    empty_.back() = false;
    out_ += '\n';
    indent(empty_.size());
  }
  void open(char c) {
    separate();
    out_ += c;
    empty_.push_back(true);
  }
  void close(char c) {
    const bool was_empty = empty_.back();
    empty_.pop_back();
    if (!was_empty) {
      out_ += '\n';
      indent(empty_.size());
    }
    out_ += c;
  }
  void indent(std::size_t level) { out_.append(2 * level, ' '); }

  std::string& out_;
  std::vector<bool> empty_;
  bool after_key_ = false;
};

/// Writes the JSON document of the whole graph of `trace` to `out`.
inline void write_json(const Trace& trace, std::string& out) {
  const Graph& g = trace.graph;
  JsonWriter w(out);
  w.begin_object();
  w.key("model");
  w.string(trace.model_name);
  w.key("complete");
  w.boolean(trace.complete());
  w.key("failure");
  if (trace.failure) {
    w.begin_object();
    w.key("op");
    w.string(trace.failure->op);
    w.key("module_path");
    w.string(trace.failure->module_path);
    w.key("module_class");
    w.string(trace.failure->module_class);
    w.key("message");
    w.string(trace.failure->message);
    w.end_object();
  } else {
    w.null();
  }
  w.key("total_params");
  w.number(trace.total_params);
  w.key("trainable_params");
  w.number(trace.trainable_params);

  w.key("modules");
  w.begin_array();
  for (std::size_t i = 0; i < g.modules().size(); ++i) {
    const ModuleInfo& m = g.modules()[i];
    w.begin_object();
    w.key("id");
    w.number(std::uint64_t{i});
    w.key("path");
    w.string(m.path);
    w.key("name");
    w.string(m.name);
    w.key("class");
    w.string(m.class_name);
    w.key("leaf");
    w.boolean(m.leaf);
    w.key("calls");
    w.number(std::uint64_t{m.calls});
    w.key("param_count");
    w.number(m.param_count);
    w.key("trainable_count");
    w.number(m.trainable_count);
    w.key("params");
    w.begin_array();
    for (const ParamInfo& p : m.params) {
      w.begin_object();
      w.key("name");
      w.string(p.name);
      w.key("shape");
      w.inline_numbers(p.shape);
      w.key("numel");
      w.number(p.numel);
      w.key("trainable");
      w.boolean(p.trainable);
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
    w.key("id");
    w.number(std::uint64_t{i});
    w.key("kind");
    w.string(to_string(n.kind));
    w.key("name");
    w.string(g.label(id));
    w.key("depth");
    w.number(std::uint64_t{n.depth});
    w.key("parent");
    w.id_or_null(n.parent);
    if (is_tensor_kind(n.kind)) {
      const Graph::TensorData& t = g.tensor(id);
      w.key("label");
      w.string(t.name);
      w.key("shape");
      w.inline_numbers(g.shape(id));
      w.key("dtype");
      w.string(t.dtype);
      w.key("device");
      w.string(t.device);
      w.key("producer");
      w.id_or_null(t.producer);
    } else if (n.kind == NodeKind::function) {
      w.key("op");
      w.string(g.function(id).op);
      w.key("inplace");
      w.boolean(n.inplace);
    } else {
      const Graph::CallData& c = g.call(id);
      const ModuleInfo& m = g.module(c.module);
      w.key("module");
      w.number(std::uint64_t{c.module.value});
      w.key("path");
      w.string(m.path);
      w.key("class");
      w.string(m.class_name);
      w.key("call_index");
      w.number(std::uint64_t{c.call_index});
      w.key("depth_index");
      w.string(std::to_string(n.depth) + "-" + std::to_string(c.depth_index));
      w.key("inputs");
      w.inline_ids(c.inputs);
      w.key("outputs");
      w.inline_ids(c.outputs);
      w.key("failed");
      w.boolean(n.failed);
    }
    w.end_object();
  }
  w.end_array();

  w.key("edges");
  w.begin_array();
  for (const Edge& e : g.edges()) w.inline_numbers(std::vector<std::uint32_t>{e.from.value, e.to.value});
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
    std::string text;
    detail::write_json(trace, text);
    os.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
};

}  // namespace backend
}  // namespace recorder
