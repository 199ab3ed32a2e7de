/// The visible graph: depth folding, residual re-routing, tensor contraction.
#define BOOST_TEST_MODULE render_visible
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"

#include <recorder/graph/views.hpp>
#include <recorder/render/visible.hpp>

#include <string>
#include <vector>

using namespace recorder;
using namespace recorder::testing;
namespace tt = boost::test_tools;
using Names = std::vector<std::string>;

namespace {

VisibleGraph at(const Trace& t, std::optional<int> depth, bool hide = true) {
  RenderOptions o;
  o.depth = depth;
  o.hide_inner_tensors = hide;
  return visible_graph(t.graph, o);
}

}  // namespace

BOOST_AUTO_TEST_CASE(mlp_chain_at_depth_1) {
  const Trace t = mlp();
  const VisibleGraph vg = at(t, 1);
  BOOST_TEST(node_names(t.graph, vg) == (Names{"input", "fc1", "relu", "fc2", "output"}),
             tt::per_element());
  BOOST_TEST(edge_names(t.graph, vg) ==
                 (Names{"input -> fc1", "fc1 -> relu", "relu -> fc2", "fc2 -> output"}),
             tt::per_element());
  BOOST_TEST(vg.edges[0] == (VisibleEdge{0, 1}));
  BOOST_TEST(vg.edges[3] == (VisibleEdge{3, 4}));
  BOOST_TEST(!vg.nodes[1].collapsed);
}

BOOST_AUTO_TEST_CASE(mlp_same_at_every_depth_from_1) {
  const Trace t = mlp();
  for (std::optional<int> d : {std::optional<int>{1}, std::optional<int>{2},
                               std::optional<int>{3}, std::optional<int>{}}) {
    const VisibleGraph vg = at(t, d);
    BOOST_TEST(vg.nodes.size() == 5u);
    BOOST_TEST(vg.edges.size() == 4u);
  }
}

BOOST_AUTO_TEST_CASE(depth_0_draws_the_root_as_one_box) {
  const Trace t = residual();
  const VisibleGraph vg = at(t, 0);
  BOOST_TEST(node_names(t.graph, vg) == (Names{"input", "<root>", "output"}), tt::per_element());
  BOOST_TEST(edge_names(t.graph, vg) == (Names{"input -> <root>", "<root> -> output"}),
             tt::per_element());
  BOOST_TEST(vg.nodes[1].collapsed);
  BOOST_TEST(at(t, -4).nodes.size() == 3u);
}

BOOST_AUTO_TEST_CASE(residual_depth_1_folds_layer1) {
  const Trace t = residual();
  const VisibleGraph vg = at(t, 1);
  BOOST_TEST(node_names(t.graph, vg) ==
                 (Names{"input", "conv1", "bn1", "relu", "layer1", "flatten", "fc", "output"}),
             tt::per_element());
  BOOST_TEST(edge_names(t.graph, vg) ==
                 (Names{"input -> conv1", "conv1 -> bn1", "bn1 -> relu", "relu -> layer1",
                        "layer1 -> flatten", "flatten -> fc", "fc -> output"}),
             tt::per_element());
  BOOST_TEST(vg.nodes[4].collapsed);
}

BOOST_AUTO_TEST_CASE(residual_depth_2_reroutes_the_skip_edges_into_blocks) {
  const Trace t = residual();
  const VisibleGraph vg = at(t, 2);
  BOOST_TEST(node_names(t.graph, vg) == (Names{"input", "conv1", "bn1", "relu", "layer1.0",
                                               "layer1.1", "flatten", "fc", "output"}),
             tt::per_element());
  BOOST_TEST(edge_names(t.graph, vg) ==
                 (Names{"input -> conv1", "conv1 -> bn1", "bn1 -> relu", "relu -> layer1.0",
                        "layer1.0 -> layer1.1", "layer1.1 -> flatten", "flatten -> fc",
                        "fc -> output"}),
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(residual_depth_3_shows_block_contents_and_folds_downsample) {
  const Trace t = residual();
  const VisibleGraph vg = at(t, 3);
  BOOST_TEST(node_names(t.graph, vg) ==
                 (Names{"input", "conv1", "bn1", "relu", "layer1.0.conv1", "layer1.0.bn1",
                        "layer1.0.relu", "layer1.0.conv2", "layer1.0.bn2", "layer1.0.downsample",
                        "add_", "layer1.0.relu", "layer1.1.conv1", "layer1.1.bn1",
                        "layer1.1.relu", "layer1.1.conv2", "layer1.1.bn2", "add_",
                        "layer1.1.relu", "flatten", "fc", "output"}),
             tt::per_element());
  BOOST_TEST(edge_names(t.graph, vg) ==
                 (Names{"input -> conv1", "conv1 -> bn1", "bn1 -> relu", "relu -> layer1.0.conv1",
                        "layer1.0.conv1 -> layer1.0.bn1", "layer1.0.bn1 -> layer1.0.relu",
                        "layer1.0.relu -> layer1.0.conv2", "layer1.0.conv2 -> layer1.0.bn2",
                        "relu -> layer1.0.downsample", "layer1.0.bn2 -> add_",
                        "layer1.0.downsample -> add_", "add_ -> layer1.0.relu",
                        "layer1.0.relu -> layer1.1.conv1", "layer1.1.conv1 -> layer1.1.bn1",
                        "layer1.1.bn1 -> layer1.1.relu", "layer1.1.relu -> layer1.1.conv2",
                        "layer1.1.conv2 -> layer1.1.bn2", "layer1.1.bn2 -> add_",
                        "layer1.0.relu -> add_", "add_ -> layer1.1.relu",
                        "layer1.1.relu -> flatten", "flatten -> fc", "fc -> output"}),
             tt::per_element());
  // The identity edge of the second block starts at the second call of layer1.0.relu.
  BOOST_TEST(vg.edges[18] == (VisibleEdge{11, 17}));
  BOOST_TEST(vg.nodes[9].collapsed);
}

BOOST_AUTO_TEST_CASE(residual_unlimited_expands_downsample) {
  const Trace t = residual();
  const VisibleGraph vg = at(t, std::nullopt);
  BOOST_TEST(vg.nodes.size() == 23u);
  BOOST_TEST(vg.edges.size() == 24u);
  const Names edges = edge_names(t.graph, vg);
  BOOST_TEST((Names(edges.begin() + 8, edges.begin() + 12)) ==
                 (Names{"relu -> layer1.0.downsample.0",
                        "layer1.0.downsample.0 -> layer1.0.downsample.1", "layer1.0.bn2 -> add_",
                        "layer1.0.downsample.1 -> add_"}),
             tt::per_element());
  BOOST_TEST(node_names(t.graph, at(t, 4)) == node_names(t.graph, vg), tt::per_element());
}

BOOST_AUTO_TEST_CASE(representatives_of_hidden_nodes) {
  const Trace t = residual();
  const Graph& g = t.graph;
  const VisibleGraph vg = at(t, 2);
  for (NodeId id : views::calls_of_class(g, "Conv2d")) {
    const auto rep = vg.representative(id);
    BOOST_REQUIRE(rep.has_value());
    const std::string& path = g.module_of(id).path;
    const std::string expected = path == "conv1" ? "conv1" : path.substr(0, 8);
    BOOST_TEST(describe(g, vg.nodes[*rep]) == expected);
  }
  BOOST_TEST(!vg.representative(t.root).has_value());       // drawn through
  BOOST_TEST(!vg.representative(NodeId{3}).has_value());    // a contracted tensor
  BOOST_TEST(!vg.representative(NodeId{100000}).has_value());
  BOOST_TEST(*vg.representative(NodeId{0}) == 0u);
}

BOOST_AUTO_TEST_CASE(shapes_cross_the_box_boundary) {
  const Trace t = residual();
  const Graph& g = t.graph;
  const VisibleGraph vg2 = at(t, 2);
  const VisibleNode& block0 = vg2.nodes[4];
  BOOST_REQUIRE(block0.inputs.size() == 1u);
  BOOST_REQUIRE(block0.outputs.size() == 1u);
  BOOST_TEST(g.shape(block0.inputs[0])[1] == 8);
  BOOST_TEST(g.shape(block0.outputs[0])[1] == 16);

  const VisibleGraph vg3 = at(t, 3);
  const VisibleNode& add = vg3.nodes[10];
  BOOST_TEST(add.kind == NodeKind::function);
  BOOST_TEST(add.inputs.size() == 2u);
  BOOST_TEST(add.outputs.size() == 1u);
  const VisibleNode& fc = vg3.nodes[20];
  BOOST_TEST(g.shape(fc.inputs[0])[1] == 256);
  BOOST_TEST(g.shape(fc.outputs[0])[1] == 10);
}

BOOST_AUTO_TEST_CASE(inner_tensors_shown_when_not_hidden) {
  const Trace t = mlp();
  const VisibleGraph vg = at(t, 1, false);
  BOOST_TEST(node_names(t.graph, vg) ==
                 (Names{"input", "fc1", "tensor", "relu", "tensor", "fc2", "tensor", "output"}),
             tt::per_element());
  BOOST_TEST(edge_names(t.graph, vg) ==
                 (Names{"input -> fc1", "fc1 -> tensor", "tensor -> relu", "relu -> tensor",
                        "tensor -> fc2", "fc2 -> tensor", "tensor -> output"}),
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(tensors_made_inside_a_box_stay_hidden) {
  const Trace t = residual();
  const VisibleGraph vg = at(t, 2, false);
  BOOST_TEST(node_names(t.graph, vg) ==
                 (Names{"input", "conv1", "tensor", "bn1", "tensor", "relu", "tensor", "layer1.0",
                        "layer1.1", "flatten", "tensor", "fc", "tensor", "output"}),
             tt::per_element());
  BOOST_TEST(edge_names(t.graph, vg) ==
                 (Names{"input -> conv1", "conv1 -> tensor", "tensor -> bn1", "bn1 -> tensor",
                        "tensor -> relu", "relu -> tensor", "tensor -> layer1.0",
                        "layer1.0 -> layer1.1", "layer1.1 -> flatten", "flatten -> tensor",
                        "tensor -> fc", "fc -> tensor", "tensor -> output"}),
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(constants_follow_hide_inner_tensors) {
  const Trace t = hostile();
  const VisibleGraph hidden = at(t, 3);
  const VisibleGraph shown = at(t, 3, false);
  BOOST_TEST(hidden.nodes.size() == 5u);  // input, Weird, op, a&b, output
  BOOST_TEST(hidden.edges.size() == 4u);
  bool constant_edge = false;
  for (const VisibleEdge& e : shown.edges)
    constant_edge |= shown.nodes[e.from].kind == NodeKind::constant &&
                     shown.nodes[e.to].kind == NodeKind::function;
  BOOST_TEST(constant_edge);
  BOOST_TEST(views::count(t.graph, NodeKind::constant) == 1u);
}

BOOST_AUTO_TEST_CASE(model_returning_its_input) {
  Builder b("Identity");
  const ModuleId root = b.module("", "Identity", false);
  const NodeId x = b.input({3}, "x");
  b.begin(root, {x});
  b.end({x});
  b.output(x);
  const VisibleGraph vg = visible_graph(b.trace.graph, {});
  BOOST_TEST(node_names(b.trace.graph, vg) == (Names{"input", "output"}), tt::per_element());
  BOOST_TEST(edge_names(b.trace.graph, vg) == (Names{"input -> output"}), tt::per_element());
}

BOOST_AUTO_TEST_CASE(leaf_root_is_drawn) {
  Builder b("Linear");
  const ModuleId lin = b.module("", "Linear", true);
  const NodeId x = b.input({1, 4});
  const NodeId y = b.leaf(lin, x, {1, 2});
  b.trace.root = b.last_call;
  b.output(y);
  const VisibleGraph vg = visible_graph(b.trace.graph, {});
  BOOST_TEST(node_names(b.trace.graph, vg) == (Names{"input", "<root>", "output"}),
             tt::per_element());
  BOOST_TEST(vg.edges.size() == 2u);
}

BOOST_AUTO_TEST_CASE(failed_trace_is_still_a_graph) {
  const Trace t = failed();
  const VisibleGraph d1 = at(t, 1);
  BOOST_TEST(node_names(t.graph, d1) == (Names{"input", "fc1", "relu", "block"}),
             tt::per_element());
  BOOST_TEST(edge_names(t.graph, d1) ==
                 (Names{"input -> fc1", "fc1 -> relu", "relu -> block"}),
             tt::per_element());
  BOOST_TEST(d1.nodes[3].outputs.empty());
  const VisibleGraph all = at(t, std::nullopt);
  BOOST_TEST(node_names(t.graph, all) == (Names{"input", "fc1", "relu", "block.fc2"}),
             tt::per_element());
  BOOST_TEST(t.graph.node(all.nodes[3].node).failed);
}

BOOST_AUTO_TEST_CASE(resnet18_matches_torchview_counts) {
  const Trace t = resnet18();
  struct Case {
    std::optional<int> depth;
    std::size_t nodes, edges;
  };
  for (const Case& c : {Case{1, 13, 12}, Case{2, 17, 16}, Case{3, 68, 75}, Case{4, 71, 78},
                        Case{std::nullopt, 71, 78}}) {
    const VisibleGraph vg = at(t, c.depth);
    BOOST_TEST_CONTEXT("depth " << (c.depth ? std::to_string(*c.depth) : "unlimited")) {
      BOOST_TEST(vg.nodes.size() == c.nodes);
      BOOST_TEST(vg.edges.size() == c.edges);
    }
  }
  BOOST_TEST(t.total_params > 0u);
}

BOOST_AUTO_TEST_CASE(ids_are_recording_order) {
  const Trace t = resnet18();
  const VisibleGraph vg = at(t, 3);
  for (std::size_t i = 1; i < vg.nodes.size(); ++i)
    BOOST_TEST(vg.nodes[i - 1].node.value < vg.nodes[i].node.value);
  for (std::size_t i = 0; i < vg.edges.size(); ++i)
    for (std::size_t j = i + 1; j < vg.edges.size(); ++j) BOOST_TEST(!(vg.edges[i] == vg.edges[j]));
}

BOOST_AUTO_TEST_CASE(parent_recorded_after_child_is_handled) {
  Graph g;
  const ModuleId outer = g.add_module(ModuleInfo{"outer", "outer", "Outer", {}, 0, 0, false, 0});
  const ModuleId inner = g.add_module(ModuleInfo{"inner", "inner", "Inner", {}, 0, 0, true, 0});
  const NodeId f = g.add_function("relu", NodeId{2}, 2);  // parent recorded later
  const NodeId outer_call = g.add_module_call(outer, {}, 0);
  const NodeId inner_call = g.add_module_call(inner, outer_call, 1);
  RenderOptions o;
  o.depth = 3;
  const VisibleGraph vg = visible_graph(g, o);
  BOOST_TEST(vg.nodes.size() == 1u);
  BOOST_TEST(*vg.representative(f) == *vg.representative(inner_call));
}
