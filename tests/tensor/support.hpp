#pragma once
/// Helpers for the RecorderTensor tests: a recording in progress and exact readers of its graph.

#include <recorder/graph/views.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder_test {

using recorder::Graph;
using recorder::NodeId;
using recorder::NodeKind;
using R = recorder::RecorderTensor<recorder::record::Structure>;
using Dims = std::vector<std::int64_t>;

/// A session made current for the lifetime of the object, with helpers to add inputs.
struct Recording {
  recorder::detail::Session s;
  recorder::detail::SessionScope scope{s};

  /// An input node for `t`, labelled `name` (a literal: the graph keeps the view).
  R input(const at::Tensor& t, std::string_view name = "x") {
    const NodeId id = recorder::detail::add_tensor_node(s, NodeKind::input, t, {}, {}, 0, name);
    return R(recorder::detail::adopt, t, s.ref(id));
  }
  const Graph& g() const noexcept { return s.graph; }
};

/// Where the graph stood: the nodes and edges added after it are "the new ones".
struct Mark {
  std::size_t nodes = 0;
  std::size_t edges = 0;
};
inline Mark mark(const Graph& g) { return Mark{g.size(), g.edge_count()}; }

inline NodeId id(std::size_t i) { return NodeId{static_cast<std::uint32_t>(i)}; }

inline std::string kind(const Graph& g, NodeId n) {
  return std::string(recorder::to_string(g.kind(n)));
}
inline std::string label(const Graph& g, NodeId n) { return std::string(g.label(n)); }
inline Dims shape(const Graph& g, NodeId n) {
  const auto s = g.shape(n);
  return Dims(s.begin(), s.end());
}
inline std::string dtype(const Graph& g, NodeId n) { return std::string(g.tensor(n).dtype); }

/// "from->to" for one edge; edge lists compare and print as vectors of these.
inline std::string edge(NodeId from, NodeId to) {
  return std::to_string(from.value) + "->" + std::to_string(to.value);
}
/// The edges added since `m`, in order.
inline std::vector<std::string> new_edges(const Graph& g, Mark m) {
  std::vector<std::string> out;
  for (std::size_t i = m.edges; i < g.edge_count(); ++i)
    out.push_back(edge(g.edges()[i].from, g.edges()[i].to));
  return out;
}
/// Every edge of the graph, in order.
inline std::vector<std::string> all_edges(const Graph& g) { return new_edges(g, Mark{}); }

inline std::vector<std::uint32_t> values(const std::vector<NodeId>& ids) {
  std::vector<std::uint32_t> out;
  for (NodeId n : ids) out.push_back(n.value);
  return out;
}
inline std::vector<std::uint32_t> preds(const Graph& g, NodeId n) {
  std::vector<std::uint32_t> out;
  for (NodeId p : recorder::views::predecessors(g, n)) out.push_back(p.value);
  return out;
}
inline std::vector<std::uint32_t> succs(const Graph& g, NodeId n) {
  std::vector<std::uint32_t> out;
  for (NodeId p : recorder::views::successors(g, n)) out.push_back(p.value);
  return out;
}

/// One node described by what the tests check about it.
struct NodeDesc {
  std::string kind;
  std::string label;
  Dims shape;  ///< tensors only
  bool inplace = false;
  std::uint32_t producer = NodeId::invalid;
  std::string name;  ///< tensors only
  friend bool operator==(const NodeDesc&, const NodeDesc&) = default;
};
inline std::ostream& operator<<(std::ostream& os, const NodeDesc& d) {
  os << d.kind << " '" << d.label << "'";
  if (!d.shape.empty()) {
    os << " [";
    for (std::size_t i = 0; i < d.shape.size(); ++i) os << (i ? "," : "") << d.shape[i];
    os << "]";
  }
  if (d.inplace) os << " inplace";
  if (d.producer != NodeId::invalid) os << " from " << d.producer;
  if (!d.name.empty()) os << " name=" << d.name;
  return os;
}
inline NodeDesc describe(const Graph& g, NodeId n) {
  NodeDesc d;
  d.kind = kind(g, n);
  d.label = label(g, n);
  d.inplace = g.node(n).inplace;
  if (recorder::is_tensor_kind(g.kind(n))) {
    d.shape = shape(g, n);
    d.producer = g.tensor(n).producer.value;
    d.name = std::string(g.tensor(n).name);
  }
  return d;
}
inline std::vector<NodeDesc> describe_all(const Graph& g) {
  std::vector<NodeDesc> out;
  for (std::size_t i = 0; i < g.size(); ++i) out.push_back(describe(g, id(i)));
  return out;
}

/// What one traced op must have added since `m`: exactly one function node `op` (flagged
/// `inplace` or not) with edges from `ins` in order, then one tensor node per entry of
/// `shapes`, produced by it, with edges to them in order. Returns the output nodes.
inline std::vector<NodeId> expect_op(const Graph& g, Mark m, std::string_view op,
                                     const std::vector<NodeId>& ins,
                                     const std::vector<Dims>& shapes, bool inplace = false) {
  BOOST_TEST_REQUIRE(g.size() == m.nodes + 1 + shapes.size());
  const NodeId fn = id(m.nodes);
  BOOST_TEST(kind(g, fn) == "function");
  BOOST_TEST(label(g, fn) == std::string(op));
  BOOST_TEST(g.node(fn).inplace == inplace);
  BOOST_TEST(!g.node(fn).parent.valid());
  BOOST_TEST(g.node(fn).depth == 1u);
  std::vector<NodeId> outs;
  std::vector<std::string> expected_edges;
  for (NodeId in : ins) expected_edges.push_back(edge(in, fn));
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const NodeId out = id(m.nodes + 1 + i);
    outs.push_back(out);
    expected_edges.push_back(edge(fn, out));
    BOOST_TEST(kind(g, out) == "tensor");
    BOOST_TEST(shape(g, out) == shapes[i], boost::test_tools::per_element());
    BOOST_TEST(g.tensor(out).producer.value == fn.value);
    BOOST_TEST(g.node(out).depth == 1u);
  }
  BOOST_TEST(new_edges(g, m) == expected_edges, boost::test_tools::per_element());
  return outs;
}

}  // namespace recorder_test
