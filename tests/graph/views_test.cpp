/// Standard views over the graph: kinds, classes, children, neighbours, counts.
#define BOOST_TEST_MODULE graph_views
#include <boost/test/unit_test.hpp>

#include <recorder/graph/graph.hpp>
#include <recorder/graph/views.hpp>

#include <cstdint>
#include <ranges>
#include <utility>
#include <vector>

using namespace recorder;
using Ids = std::vector<NodeId>;

namespace {

std::vector<std::uint32_t> values(const Ids& ids) {
  std::vector<std::uint32_t> out;
  for (NodeId id : ids) out.push_back(id.value);
  return out;
}

/// x -> [Net: conv1 -> relu(fn) -> block(composite: conv2) -> add(fn, with x... )] -> out
struct Small {
  Graph g;
  NodeId x, root, conv1, t1, relu, t2, block, conv2, t3, add, t4, out;
  Small() {
    const std::int64_t d[] = {1, 4};
    ModuleInfo net;
    net.class_name = "Net";
    net.leaf = false;
    ModuleInfo c1;
    c1.path = c1.name = "conv1";
    c1.class_name = "Conv2d";
    ModuleInfo blk;
    blk.path = blk.name = "block";
    blk.class_name = "Block";
    blk.leaf = false;
    ModuleInfo c2;
    c2.path = "block.conv2";
    c2.name = "conv2";
    c2.class_name = "Conv2d";
    const ModuleId mnet = g.add_module(net), mc1 = g.add_module(c1), mblk = g.add_module(blk),
                   mc2 = g.add_module(c2);
    x = g.add_tensor(NodeKind::input, {}, 0, d, "Float", "cpu");
    root = g.add_module_call(mnet, {}, 0, {x});
    conv1 = g.add_module_call(mc1, root, 1, {x});
    g.add_edge(x, conv1);
    t1 = g.add_tensor(NodeKind::tensor, root, 1, d, "Float", "cpu", conv1);
    g.add_edge(conv1, t1);
    relu = g.add_function("relu", root, 1);
    g.add_edge(t1, relu);
    t2 = g.add_tensor(NodeKind::tensor, root, 1, d, "Float", "cpu", relu);
    g.add_edge(relu, t2);
    block = g.add_module_call(mblk, root, 1, {t2});
    conv2 = g.add_module_call(mc2, block, 2, {t2});
    g.add_edge(t2, conv2);
    t3 = g.add_tensor(NodeKind::tensor, block, 2, d, "Float", "cpu", conv2);
    g.add_edge(conv2, t3);
    g.set_call_outputs(block, {t3});
    add = g.add_function("add", root, 1);
    g.add_edge(t3, add);
    g.add_edge(x, add);
    t4 = g.add_tensor(NodeKind::tensor, root, 1, d, "Float", "cpu", add);
    g.add_edge(add, t4);
    out = g.add_tensor(NodeKind::output, {}, 0, d, "Float", "cpu");
    g.add_edge(t4, out);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(nodes_and_kinds) {
  const Small s;
  BOOST_TEST(std::ranges::distance(views::nodes(s.g)) == static_cast<std::ptrdiff_t>(s.g.size()));
  BOOST_TEST(values(views::collect(views::of_kind(s.g, NodeKind::function))) ==
                 (std::vector<std::uint32_t>{s.relu.value, s.add.value}),
             boost::test_tools::per_element());
  BOOST_TEST(
      values(views::collect(views::module_calls(s.g))) ==
          (std::vector<std::uint32_t>{s.root.value, s.conv1.value, s.block.value, s.conv2.value}),
      boost::test_tools::per_element());
  BOOST_TEST(values(views::collect(views::calls_of_class(s.g, "Conv2d"))) ==
                 (std::vector<std::uint32_t>{s.conv1.value, s.conv2.value}),
             boost::test_tools::per_element());
  BOOST_TEST(std::ranges::distance(views::calls_of_class(s.g, "Missing")) == 0);
  BOOST_TEST(values(views::collect(views::functions_named(s.g, "add"))) ==
                 (std::vector<std::uint32_t>{s.add.value}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(children_are_direct_only) {
  const Small s;
  BOOST_TEST(values(views::collect(views::children(s.g, s.block))) ==
                 (std::vector<std::uint32_t>{s.conv2.value, s.t3.value}),
             boost::test_tools::per_element());
  const Ids root_children = views::collect(views::children(s.g, s.root));
  BOOST_TEST(root_children.size() == 7u);  // conv1 t1 relu t2 block add t4
  for (NodeId id : root_children) BOOST_TEST(s.g.node(id).depth == 1u);
  BOOST_TEST(std::ranges::distance(views::children(s.g, s.conv2)) == 0);
}

BOOST_AUTO_TEST_CASE(predecessors_and_successors) {
  const Small s;
  BOOST_TEST(values(views::collect(views::predecessors(s.g, s.add))) ==
                 (std::vector<std::uint32_t>{s.t3.value, s.x.value}),
             boost::test_tools::per_element());
  BOOST_TEST(values(views::collect(views::successors(s.g, s.x))) ==
                 (std::vector<std::uint32_t>{s.conv1.value, s.add.value}),
             boost::test_tools::per_element());
  BOOST_TEST(std::ranges::distance(views::predecessors(s.g, s.x)) == 0);
  BOOST_TEST(std::ranges::distance(views::successors(s.g, s.out)) == 0);
  BOOST_TEST(std::ranges::distance(views::predecessors(s.g, s.block)) == 0);  // composite: no edges
}

BOOST_AUTO_TEST_CASE(counts) {
  const Small s;
  BOOST_TEST(views::count(s.g, NodeKind::tensor) == 4u);
  BOOST_TEST(views::count(s.g, NodeKind::module) == 4u);
  BOOST_TEST(views::count(s.g, NodeKind::input) == 1u);
  BOOST_TEST(views::count(s.g, NodeKind::output) == 1u);
  BOOST_TEST(views::count(s.g, NodeKind::parameter) == 0u);
  std::size_t total = 0;
  for (int k = 0; k < node_kind_count; ++k) total += views::count(s.g, static_cast<NodeKind>(k));
  BOOST_TEST(total == s.g.size());
}

// Every query is a standard view: forward, copyable, composable with the std adaptors.
static_assert(std::ranges::view<decltype(views::module_calls(std::declval<const Graph&>()))>);
static_assert(std::ranges::forward_range<decltype(views::nodes(std::declval<const Graph&>()))>);
static_assert(
    std::ranges::forward_range<decltype(views::successors(std::declval<const Graph&>(), {}))>);

BOOST_AUTO_TEST_CASE(compose_with_standard_adaptors) {
  const Small s;
  std::vector<std::uint32_t> depths;
  for (std::uint32_t d : views::module_calls(s.g) | std::views::transform([&](NodeId id) {
                           return s.g.node(id).depth;
                         }) | std::views::drop(1))
    depths.push_back(d);
  BOOST_TEST(depths == (std::vector<std::uint32_t>{1, 1, 2}), boost::test_tools::per_element());
  const auto convs = views::calls_of_class(s.g, "Conv2d");
  const auto copy = convs;  // a view is a value: copies iterate the same nodes
  BOOST_TEST(values(views::collect(copy)) == values(views::collect(convs)),
             boost::test_tools::per_element());
  BOOST_TEST(views::predecessors(s.g, s.add).front().value == s.t3.value);
  BOOST_TEST(views::calls_of_class(s.g, "Missing").empty());
  BOOST_TEST(!views::children(s.g, s.root).empty());
}

BOOST_AUTO_TEST_CASE(views_see_later_appends) {
  Small s;
  auto functions = views::of_kind(s.g, NodeKind::function);
  BOOST_TEST(std::ranges::distance(functions) == 2);
  s.g.add_function("mul", s.root, 1);
  BOOST_TEST(std::ranges::distance(views::of_kind(s.g, NodeKind::function)) == 3);
}
