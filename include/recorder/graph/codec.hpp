#pragma once
/// A `Trace` as bytes and back: how one process sends its recorded graph to another
/// (`gather_traces`), or keeps it (no libtorch).
///
/// The decoded trace equals the encoded one node for node: the same ids, kinds, parents,
/// depths, shapes, dtypes, ops, module calls (call and depth indices included), edges in order,
/// modules with their parameters and attributes, the failure and the warnings. Renderers give
/// the same output for both.

#include <recorder/detail/bytes.hpp>
#include <recorder/graph/graph.hpp>
#include <recorder/graph/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

namespace detail::trace_codec {

inline constexpr std::string_view magic = "recorder-trace";
inline constexpr std::uint64_t format_version = 2;

inline void write_ids(ByteWriter& w, NodeList ids) {
  w.u64(ids.size());
  for (const NodeId id : ids) w.number(id.value);
}

inline std::vector<NodeId> read_ids(ByteReader& r, std::size_t nodes) {
  std::vector<NodeId> ids(r.count(sizeof(std::uint32_t)));
  for (NodeId& id : ids) {
    id.value = r.number<std::uint32_t>();
    if (id.value >= nodes) r.fail();
  }
  return ids;
}

/// A node id that is either invalid or one of the `nodes` nodes.
inline NodeId read_optional_id(ByteReader& r, std::size_t nodes) {
  const NodeId id{r.number<std::uint32_t>()};
  if (id.valid() && id.value >= nodes) r.fail();
  return id;
}

}  // namespace detail::trace_codec

/// The bytes of `trace` (see the file comment); `decode_trace` reads them back.
inline std::string encode_trace(const Trace& trace) {
  using namespace detail::trace_codec;
  const Graph& g = trace.graph;
  detail::ByteWriter w;
  w.reserve(64 * g.size() + 256);
  w.text(magic);
  w.u64(format_version);
  w.text(trace.model_name);
  w.number(trace.root.value);
  w.u64(trace.total_params);
  w.u64(trace.trainable_params);
  w.u64(trace.param_bytes);
  w.text(trace.torch_version);
  w.number<std::uint8_t>(trace.failure ? 1 : 0);
  if (trace.failure) {
    w.text(trace.failure->op);
    w.text(trace.failure->module_path);
    w.text(trace.failure->module_class);
    w.text(trace.failure->message);
  }
  w.u64(trace.warnings.size());
  for (const std::string& s : trace.warnings) w.text(s);

  w.u64(g.modules().size());
  for (const ModuleInfo& m : g.modules()) {
    w.text(m.path);
    w.text(m.name);
    w.text(m.class_name);
    w.u64(m.params.size());
    for (const ParamInfo& p : m.params) {
      w.text(p.name);
      w.u64(p.shape.size());
      for (const std::int64_t d : p.shape) w.i64(d);
      w.u64(p.numel);
      w.number<std::uint8_t>(p.trainable ? 1 : 0);
      w.number<std::uint8_t>(p.element_bytes);
      w.u64(p.id);
    }
    w.u64(m.param_count);
    w.u64(m.trainable_count);
    w.number<std::uint8_t>(static_cast<std::uint8_t>((m.leaf ? 1 : 0) | (m.has_children ? 2 : 0)));
    w.number(m.calls);
    w.u64(m.attributes.size());
    for (const auto& [k, v] : m.attributes) {
      w.text(k);
      w.text(v);
    }
  }

  w.u64(g.size());
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    const Graph::Node& n = g.node(id);
    w.number(static_cast<std::uint8_t>(n.kind));
    w.number<std::uint8_t>(static_cast<std::uint8_t>((n.inplace ? 1 : 0) | (n.failed ? 2 : 0) |
                                                     (n.inferred ? 4 : 0) |
                                                     (n.keyword_only ? 8 : 0)));
    w.number(n.depth);
    w.number(n.parent.value);
    if (is_tensor_kind(n.kind)) {
      const Graph::TensorData& t = g.tensor(id);
      const Shape shape = g.shape(id);
      w.u64(shape.size());
      for (const std::int64_t d : shape) w.i64(d);
      w.text(t.dtype);
      w.text(t.device);
      w.number(t.producer.value);
      w.text(t.name);
    } else if (n.kind == NodeKind::function) {
      w.text(g.function(id).op);
    } else {
      const Graph::CallData& c = g.call(id);
      w.number(c.module.value);
      w.number(c.call_index);
      w.number(c.depth_index);
      write_ids(w, c.inputs);
      write_ids(w, c.outputs);
    }
  }
  w.u64(g.edge_count());
  for (const Edge& e : g.edges()) {
    w.number(e.from.value);
    w.number(e.to.value);
  }
  return w.take();
}

/// The trace `encode_trace` encoded into `bytes`. Throws `std::invalid_argument` ("malformed
/// trace bytes ...") when they are not such an encoding (truncated, another version, ids out
/// of range).
inline Trace decode_trace(std::string_view bytes) {
  using namespace detail::trace_codec;
  detail::ByteReader r(bytes, "trace bytes");
  if (r.text() != magic || r.u64() != format_version) r.fail();
  Trace t;
  t.model_name = std::string(r.text());
  const std::uint32_t root = r.number<std::uint32_t>();
  t.total_params = r.u64();
  t.trainable_params = r.u64();
  t.param_bytes = r.u64();
  t.torch_version = std::string(r.text());
  if (r.number<std::uint8_t>() != 0) {
    Failure f;
    f.op = std::string(r.text());
    f.module_path = std::string(r.text());
    f.module_class = std::string(r.text());
    f.message = std::string(r.text());
    t.failure = std::move(f);
  }
  t.warnings.resize(r.count(8));
  for (std::string& s : t.warnings) s = std::string(r.text());

  Graph& g = t.graph;
  std::vector<std::uint32_t> calls_expected;
  const std::size_t module_count = r.count(8);
  for (std::size_t i = 0; i < module_count; ++i) {
    ModuleInfo m;
    m.path = std::string(r.text());
    m.name = std::string(r.text());
    m.class_name = std::string(r.text());
    m.params.resize(r.count(8));
    for (ParamInfo& p : m.params) {
      p.name = std::string(r.text());
      p.shape.resize(r.count(8));
      for (std::int64_t& d : p.shape) d = r.i64();
      p.numel = r.u64();
      p.trainable = r.number<std::uint8_t>() != 0;
      p.element_bytes = r.number<std::uint8_t>();
      p.id = r.u64();
    }
    m.param_count = r.u64();
    m.trainable_count = r.u64();
    const auto module_flags = r.number<std::uint8_t>();
    m.leaf = (module_flags & 1) != 0;
    m.has_children = (module_flags & 2) != 0;
    calls_expected.push_back(r.number<std::uint32_t>());
    m.calls = 0;  // counted again as the calls are added
    m.attributes.resize(r.count(16));
    for (auto& [k, v] : m.attributes) {
      k = std::string(r.text());
      v = std::string(r.text());
    }
    g.add_module(std::move(m));
  }

  // Strings the graph views (dtypes, devices, ops, names) are interned once each.
  std::map<std::string, std::string_view, std::less<>> pool;
  const auto intern = [&](std::string_view s) -> std::string_view {
    if (s.empty()) return {};
    if (const auto found = pool.find(s); found != pool.end()) return found->second;
    return pool.emplace(std::string(s), g.intern(s)).first->second;
  };

  const std::size_t nodes = r.count(8);
  struct Flags {
    NodeId id;
    bool failed, inferred, keyword_only;
  };
  std::vector<Flags> flagged;
  std::vector<std::int64_t> dims;
  for (std::size_t i = 0; i < nodes; ++i) {
    const auto kind = r.number<std::uint8_t>();
    if (kind >= node_kind_count) r.fail();
    const auto flags = r.number<std::uint8_t>();
    const auto depth = r.number<std::uint16_t>();
    const NodeId parent = read_optional_id(r, nodes);
    const auto k = static_cast<NodeKind>(kind);
    NodeId id;
    if (is_tensor_kind(k)) {
      dims.resize(r.count(8));
      for (std::int64_t& d : dims) d = r.i64();
      const std::string_view dtype = intern(r.text());
      const std::string_view device = intern(r.text());
      const NodeId producer = read_optional_id(r, nodes);
      const std::string_view name = intern(r.text());
      id = g.add_tensor(k, parent, depth, Shape(dims.data(), dims.size()), dtype, device, producer,
                        name);
    } else if (k == NodeKind::function) {
      id = g.add_function(intern(r.text()), parent, depth, (flags & 1) != 0);
    } else {
      const ModuleId m{r.number<std::uint32_t>()};
      if (m.value >= module_count) r.fail();
      const auto call_index = r.number<std::uint32_t>();
      const auto depth_index = r.number<std::uint32_t>();
      std::vector<NodeId> inputs = read_ids(r, nodes);
      std::vector<NodeId> outputs = read_ids(r, nodes);
      id = g.add_module_call(m, parent, depth, std::move(inputs));
      // The graph numbers calls as they are added: in node order, as when they were recorded.
      if (g.call(id).call_index != call_index || g.call(id).depth_index != depth_index) r.fail();
      g.set_call_outputs(id, std::move(outputs));
    }
    if ((flags & 14) != 0)
      flagged.push_back({id, (flags & 2) != 0, (flags & 4) != 0, (flags & 8) != 0});
  }
  for (const Flags& f : flagged) {
    if (f.failed) g.set_failed(f.id);
    if (f.inferred) {
      if (g.kind(f.id) != NodeKind::module) r.fail();
      g.set_inferred(f.id);
    }
    if (f.keyword_only) {
      if (g.kind(f.id) != NodeKind::module) r.fail();
      g.set_keyword_only(f.id);
    }
  }
  for (std::size_t i = 0; i < module_count; ++i)
    if (g.module(ModuleId{static_cast<std::uint32_t>(i)}).calls != calls_expected[i]) r.fail();

  const std::size_t edges = r.count(8);
  for (std::size_t i = 0; i < edges; ++i) {
    const NodeId from{r.number<std::uint32_t>()};
    const NodeId to{r.number<std::uint32_t>()};
    if (from.value >= nodes || to.value >= nodes) r.fail();
    g.add_edge(from, to);
  }
  if (!r.done()) r.fail();
  t.root = NodeId{root};
  if (t.root.valid() && t.root.value >= nodes) r.fail();
  return t;
}

}  // namespace recorder
