/// The visible graph: depth folding, residual re-routing, tensor contraction.
#define BOOST_TEST_MODULE render_visible
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"

#include <recorder/graph/views.hpp>
#include <recorder/render/visible.hpp>

#include <algorithm>
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
  for (std::optional<int> d : {std::optional<int>{1}, std::optional<int>{2}, std::optional<int>{3},
                               std::optional<int>{}}) {
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
  BOOST_TEST(
      edge_names(t.graph, vg) ==
          (Names{"input -> conv1", "conv1 -> bn1", "bn1 -> relu", "relu -> layer1.0",
                 "layer1.0 -> layer1.1", "layer1.1 -> flatten", "flatten -> fc", "fc -> output"}),
      tt::per_element());
}

BOOST_AUTO_TEST_CASE(residual_depth_3_shows_block_contents_and_folds_downsample) {
  const Trace t = residual();
  const VisibleGraph vg = at(t, 3);
  BOOST_TEST(node_names(t.graph, vg) == (Names{"input",
                                               "conv1",
                                               "bn1",
                                               "relu",
                                               "layer1.0.conv1",
                                               "layer1.0.bn1",
                                               "layer1.0.relu",
                                               "layer1.0.conv2",
                                               "layer1.0.bn2",
                                               "layer1.0.downsample",
                                               "add_",
                                               "layer1.0.relu",
                                               "layer1.1.conv1",
                                               "layer1.1.bn1",
                                               "layer1.1.relu",
                                               "layer1.1.conv2",
                                               "layer1.1.bn2",
                                               "add_",
                                               "layer1.1.relu",
                                               "flatten",
                                               "fc",
                                               "output"}),
             tt::per_element());
  BOOST_TEST(edge_names(t.graph, vg) == (Names{"input -> conv1",
                                               "conv1 -> bn1",
                                               "bn1 -> relu",
                                               "relu -> layer1.0.conv1",
                                               "layer1.0.conv1 -> layer1.0.bn1",
                                               "layer1.0.bn1 -> layer1.0.relu",
                                               "layer1.0.relu -> layer1.0.conv2",
                                               "layer1.0.conv2 -> layer1.0.bn2",
                                               "relu -> layer1.0.downsample",
                                               "layer1.0.bn2 -> add_",
                                               "layer1.0.downsample -> add_",
                                               "add_ -> layer1.0.relu",
                                               "layer1.0.relu -> layer1.1.conv1",
                                               "layer1.1.conv1 -> layer1.1.bn1",
                                               "layer1.1.bn1 -> layer1.1.relu",
                                               "layer1.1.relu -> layer1.1.conv2",
                                               "layer1.1.conv2 -> layer1.1.bn2",
                                               "layer1.1.bn2 -> add_",
                                               "layer1.0.relu -> add_",
                                               "add_ -> layer1.1.relu",
                                               "layer1.1.relu -> flatten",
                                               "flatten -> fc",
                                               "fc -> output"}),
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
  BOOST_TEST(
      (Names(edges.begin() + 8, edges.begin() + 12)) ==
          (Names{"relu -> layer1.0.downsample.0", "layer1.0.downsample.0 -> layer1.0.downsample.1",
                 "layer1.0.bn2 -> add_", "layer1.0.downsample.1 -> add_"}),
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
  BOOST_TEST(!vg.representative(t.root).has_value());     // drawn through
  BOOST_TEST(!vg.representative(NodeId{3}).has_value());  // a contracted tensor
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

// torchview traces from the inputs and from torch's creation functions (`arange`, `full`), whose
// tensors it traces without drawing a node: ops reading only constants, parameters or buffers
// (a slice of a mask buffer, and a module fed by it) are not in its graph, nor by default here.
BOOST_AUTO_TEST_CASE(ops_no_input_reaches_are_hidden) {
  Builder b("Decoder");
  const ModuleId root = b.module("", "Decoder", false);
  const ModuleId pos = b.module("pos", "Embedding", true, {{"weight", {16, 8}}});
  const ModuleId fc = b.module("fc", "Linear", true, {{"weight", {8, 8}}});
  const ModuleId rel = b.module("rel", "Bias", true, {{"table", {16, 16}}});
  const ModuleId scratch = b.module("scratch", "Scratch", true);
  const NodeId x = b.input({4, 8}, "x");
  b.begin(root, {x});
  const NodeId positions = b.fn("arange", {}, {4});
  const NodeId arange = b.last_call;
  const NodeId e = b.leaf(pos, positions, {4, 8});
  NodeId h = b.leaf(fc, x, {4, 8});
  h = b.fn("add", {h, e}, {4, 8});
  h = b.fn("mul", {h, b.fn("triu", {b.fn("full", {}, {4, 4})}, {4, 4})}, {4, 8});
  const NodeId cut = b.fn("slice", {b.constant({16, 16})}, {4, 4});
  const NodeId slice = b.last_call;
  h = b.fn("sub", {h, b.leaf(rel, cut, {4, 4})}, {4, 8});
  // A leaf fed by `h` that returns a tensor its inside made from a constant alone.
  b.open_leaf(scratch, h);
  const NodeId made = b.close_leaf(b.fn("clone", {b.constant({4, 8})}, {4, 8}));
  h = b.fn("div", {h, b.fn("relu", {made}, {4, 8})}, {4, 8});
  b.end({h});
  b.output(h);
  const Graph& g = b.trace.graph;

  const VisibleGraph vg = visible_graph(g, {});
  BOOST_TEST(node_names(g, vg) == (Names{"input", "pos", "fc", "add", "triu", "mul", "sub",
                                         "scratch", "div", "output"}),
             tt::per_element());
  BOOST_TEST(edge_names(g, vg) ==
                 (Names{"input -> fc", "fc -> add", "pos -> add", "add -> mul", "triu -> mul",
                        "mul -> sub", "sub -> scratch", "sub -> div", "div -> output"}),
             tt::per_element());
  BOOST_TEST(!vg.representative(arange).has_value());
  BOOST_TEST(!vg.representative(slice).has_value());
  BOOST_TEST(vg.representative(b.last_call).has_value());  // div

  const VisibleGraph all = visible_graph(g, {.hide_unreached = false});
  BOOST_TEST(node_names(g, all) ==
                 (Names{"input", "arange", "pos", "fc", "add", "full", "triu", "mul", "constant",
                        "slice", "rel", "sub", "scratch", "relu", "div", "output"}),
             tt::per_element());
  // The slice's buffer is drawn as its input (issue 34): an op drawn without inputs reads as
  // a mistake. The constant inside `scratch` stays in its box.
  BOOST_TEST(all.edges.size() == 16u);
  const Names all_edges = edge_names(g, all);
  BOOST_TEST(std::count(all_edges.begin(), all_edges.end(), "constant -> slice") == 1);
  // Without an input reaching it nothing changes: with hide_unreached on, no constant is drawn.
  BOOST_TEST(views::count(g, NodeKind::constant) == 2u);

  // A graph without inputs hides nothing.
  Builder c("Constant");
  const ModuleId croot = c.module("", "Constant", false);
  c.begin(croot, {});
  const NodeId r = c.fn("arange", {}, {4});
  c.end({r});
  c.output(r);
  BOOST_TEST(
      node_names(c.trace.graph, visible_graph(c.trace.graph, {})) == (Names{"arange", "output"}),
      tt::per_element());
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
  BOOST_TEST(edge_names(t.graph, d1) == (Names{"input -> fc1", "fc1 -> relu", "relu -> block"}),
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

// ---- roll, strict edge counts, clusters, module functions ---------------------------------

namespace {

VisibleGraph with(const Trace& t, const RenderOptions& o) { return visible_graph(t.graph, o); }

std::vector<std::uint32_t> calls_of(const VisibleGraph& vg) {
  std::vector<std::uint32_t> out;
  for (const VisibleNode& v : vg.nodes) out.push_back(v.calls);
  return out;
}

std::vector<std::int32_t> clusters_of(const VisibleGraph& vg) {
  std::vector<std::int32_t> out;
  for (const VisibleNode& v : vg.nodes)
    out.push_back(v.cluster.valid() ? static_cast<std::int32_t>(v.cluster.value) : -1);
  return out;
}

using Calls = std::vector<std::uint32_t>;
using Clusters = std::vector<std::int32_t>;

}  // namespace

BOOST_AUTO_TEST_CASE(recursive_net_unrolled_has_torchviews_10_nodes) {
  const Trace t = recursive_net();
  const VisibleGraph vg = with(t, {});
  BOOST_TEST(node_names(t.graph, vg) == (Names{"input", "cell", "act", "cell", "act", "cell", "act",
                                               "cell", "act", "output"}),
             tt::per_element());
  BOOST_TEST(vg.edges == (std::vector<VisibleEdge>{{0, 1, 1},
                                                   {1, 2, 1},
                                                   {0, 3, 1},
                                                   {2, 3, 1},
                                                   {1, 3, 1},
                                                   {3, 4, 1},
                                                   {0, 5, 1},
                                                   {4, 5, 1},
                                                   {3, 5, 1},
                                                   {5, 6, 1},
                                                   {0, 7, 1},
                                                   {6, 7, 1},
                                                   {5, 7, 1},
                                                   {7, 8, 1},
                                                   {8, 9, 1}}),
             tt::per_element());
  BOOST_TEST(calls_of(vg) == Calls(10, 1), tt::per_element());
  BOOST_TEST(vg.clusters.empty());
}

BOOST_AUTO_TEST_CASE(recursive_net_rolled_has_torchviews_5_nodes) {
  const Trace t = recursive_net();
  const VisibleGraph vg = with(t, {.roll = true});
  // The cell has parameters: its 4 calls merge. LeakyReLU has none: the 3 calls feeding the
  // cell merge, the 4th (feeding the output) stays apart.
  BOOST_TEST(node_names(t.graph, vg) == (Names{"input", "cell", "act", "act", "output"}),
             tt::per_element());
  BOOST_TEST(calls_of(vg) == (Calls{1, 4, 3, 1, 1}), tt::per_element());
  BOOST_TEST(counted_edge_names(t.graph, vg) ==
                 (Names{"input -> cell x4", "cell -> act x3", "act -> cell x3", "cell -> cell x3",
                        "cell -> act x1", "act -> output x1"}),
             tt::per_element());
  BOOST_TEST(vg.edges == (std::vector<VisibleEdge>{
                             {0, 1, 4}, {1, 2, 3}, {2, 1, 3}, {1, 1, 3}, {1, 3, 1}, {3, 4, 1}}),
             tt::per_element());
  // Every cell call, and the outputs it made, stand for node 1.
  for (NodeId call : views::calls_of_class(t.graph, "LSTMCell"))
    BOOST_TEST(*vg.representative(call) == 1u);
  // strict only changes how backends draw the edges, not the visible graph.
  BOOST_TEST(with(t, {.roll = true, .strict = false}).edges == vg.edges, tt::per_element());
}

BOOST_AUTO_TEST_CASE(roll_keeps_tensor_nodes_apart) {
  const Trace t = recursive_net();
  const VisibleGraph vg = with(t, {.hide_inner_tensors = false, .roll = true});
  std::size_t cells = 0, tensors = 0;
  for (const VisibleNode& v : vg.nodes) {
    cells += v.kind == NodeKind::module && v.calls == 4;
    tensors += v.kind == NodeKind::tensor;
  }
  BOOST_TEST(cells == 1u);
  BOOST_TEST(tensors == views::count(t.graph, NodeKind::tensor));  // none merged
}

BOOST_AUTO_TEST_CASE(parallel_edges_count_distinct_tensors) {
  const Trace t = reused_block();
  const VisibleGraph vg = with(t, {});
  BOOST_TEST(
      counted_edge_names(t.graph, vg) ==
          (Names{"input -> block.fc x1", "block.fc -> block.act x1", "block.act -> block.fc x1",
                 "block.fc -> block.act x1", "block.act -> block.fc x1", "block.fc -> block.act x1",
                 "block.act -> split x1", "split -> add x2", "add -> head x1",
                 "head -> output x1"}),
      tt::per_element());
  // One tensor entering a box at two places is one edge of count 1.
  const Trace r = residual();
  for (const VisibleEdge& e : with(r, {.depth = 1}).edges) BOOST_TEST(e.count == 1u);
  for (const VisibleEdge& e : with(r, {.depth = 2}).edges) BOOST_TEST(e.count == 1u);
}

BOOST_AUTO_TEST_CASE(roll_merges_a_reused_block_and_its_cluster) {
  const Trace t = reused_block();
  const VisibleGraph flat = with(t, {.roll = true});
  BOOST_TEST(node_names(t.graph, flat) == (Names{"input", "block.fc", "block.act", "block.act",
                                                 "split", "add", "head", "output"}),
             tt::per_element());
  BOOST_TEST(calls_of(flat) == (Calls{1, 3, 2, 1, 1, 1, 1, 1}), tt::per_element());
  BOOST_TEST(
      counted_edge_names(t.graph, flat) ==
          (Names{"input -> block.fc x1", "block.fc -> block.act x2", "block.act -> block.fc x2",
                 "block.fc -> block.act x1", "block.act -> split x1", "split -> add x2",
                 "add -> head x1", "head -> output x1"}),
      tt::per_element());

  const VisibleGraph nested = with(t, {.expand_nested = true});
  BOOST_TEST(nested.clusters.size() == 3u);
  BOOST_TEST(clusters_of(nested) == (Clusters{-1, 0, 0, 1, 1, 2, 2, -1, -1, -1, -1}),
             tt::per_element());

  // Rolled, the three Block clusters (a module with parameters) are one.
  const VisibleGraph both = with(t, {.expand_nested = true, .roll = true});
  BOOST_REQUIRE(both.clusters.size() == 1u);
  BOOST_TEST(t.graph.module_of(both.clusters[0].call).path == "block");
  BOOST_TEST(both.clusters[0].parent == ClusterId{});
  BOOST_TEST(clusters_of(both) == (Clusters{-1, 0, 0, 0, -1, -1, -1, -1}), tt::per_element());
}

BOOST_AUTO_TEST_CASE(stateless_nodes_merge_by_what_they_feed) {
  // (relu -> relu -> fc) twice, then relu -> output: both relu pairs merge, keyed step by
  // step back from fc; the last relu feeds the output and stays apart.
  Builder b("Chain");
  const ModuleId root = b.module("", "Chain", false);
  const ModuleId fc = b.module("fc", "Linear", true, {{"weight", {4, 4}}});
  const NodeId x = b.input({1, 4});
  b.begin(root, {x});
  NodeId h = x;
  for (int i = 0; i < 2; ++i) {
    h = b.fn("relu", {h}, {1, 4});
    h = b.fn("relu", {h}, {1, 4});
    h = b.leaf(fc, h, {1, 4});
  }
  h = b.fn("relu", {h}, {1, 4});
  b.end({h});
  b.output(h);
  const VisibleGraph vg = with(b.trace, {.roll = true});
  BOOST_TEST(
      node_names(b.trace.graph, vg) == (Names{"input", "relu", "relu", "fc", "relu", "output"}),
      tt::per_element());
  BOOST_TEST(calls_of(vg) == (Calls{1, 2, 2, 2, 1, 1}), tt::per_element());
  BOOST_TEST(counted_edge_names(b.trace.graph, vg) ==
                 (Names{"input -> relu x1", "relu -> relu x2", "relu -> fc x2", "fc -> relu x1",
                        "fc -> relu x1", "relu -> output x1"}),
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(expand_nested_clusters_composites_above_the_depth) {
  const Trace t = residual();
  const Graph& g = t.graph;
  const VisibleGraph d3 = with(t, {.expand_nested = true});
  BOOST_REQUIRE(d3.clusters.size() == 3u);
  BOOST_TEST(g.module_of(d3.clusters[0].call).path == "layer1");
  BOOST_TEST(g.module_of(d3.clusters[1].call).path == "layer1.0");
  BOOST_TEST(g.module_of(d3.clusters[2].call).path == "layer1.1");
  BOOST_TEST(d3.clusters[0].parent == ClusterId{});
  BOOST_TEST(d3.clusters[1].parent == ClusterId{0});
  BOOST_TEST(d3.clusters[2].parent == ClusterId{0});
  BOOST_TEST(clusters_of(d3) == (Clusters{-1, -1, -1, -1, 1, 1, 1, 1, 1,  1,  1,
                                          1,  2,  2,  2,  2, 2, 2, 2, -1, -1, -1}),
             tt::per_element());
  // The same nodes and edges as without clusters.
  BOOST_TEST(node_names(g, d3) == node_names(g, with(t, {})), tt::per_element());
  BOOST_TEST(edge_names(g, d3) == edge_names(g, with(t, {})), tt::per_element());

  const VisibleGraph all = with(t, {.depth = std::nullopt, .expand_nested = true});
  BOOST_REQUIRE(all.clusters.size() == 4u);
  BOOST_TEST(g.module_of(all.clusters[2].call).path == "layer1.0.downsample");
  BOOST_TEST(all.clusters[2].parent == ClusterId{1});

  BOOST_TEST(with(t, {.depth = 1, .expand_nested = true}).clusters.empty());  // layer1 is a box
  BOOST_TEST(with(t, {.depth = 0, .expand_nested = true}).clusters.empty());  // the root never
  const VisibleGraph d2 = with(t, {.depth = 2, .expand_nested = true});
  BOOST_REQUIRE(d2.clusters.size() == 1u);
  BOOST_TEST(clusters_of(d2) == (Clusters{-1, -1, -1, -1, 0, 0, -1, -1, -1}), tt::per_element());
}

BOOST_AUTO_TEST_CASE(expand_nested_resnet18_counts) {
  const Trace t = resnet18();
  BOOST_TEST(with(t, {.depth = std::nullopt, .expand_nested = true}).clusters.size() == 15u);
  BOOST_TEST(with(t, {.depth = 3, .expand_nested = true}).clusters.size() == 12u);
  BOOST_TEST(with(t, {.depth = 2, .expand_nested = true}).clusters.size() == 4u);
  const VisibleGraph vg = with(t, {.depth = 3, .expand_nested = true});
  BOOST_TEST(vg.nodes.size() == 68u);
  BOOST_TEST(vg.edges.size() == 75u);
}

BOOST_AUTO_TEST_CASE(empty_composites_make_no_cluster) {
  Builder b("Identity");
  const ModuleId root = b.module("", "Identity", false);
  const ModuleId inner = b.module("inner", "Pass", false);
  const NodeId x = b.input({3}, "x");
  b.begin(root, {x});
  b.begin(inner, {x});
  b.end({x});
  b.end({x});
  b.output(x);
  BOOST_TEST(visible_graph(b.trace.graph, {.expand_nested = true}).clusters.empty());
}

BOOST_AUTO_TEST_CASE(module_functions_hidden_by_default) {
  const Trace t = observed_mlp();
  const VisibleGraph vg = with(t, {});
  BOOST_TEST(node_names(t.graph, vg) == (Names{"input", "fc1", "relu", "fc2", "output"}),
             tt::per_element());
  BOOST_TEST(edge_names(t.graph, vg) ==
                 (Names{"input -> fc1", "fc1 -> relu", "relu -> fc2", "fc2 -> output"}),
             tt::per_element());
}

BOOST_AUTO_TEST_CASE(module_functions_shown_open_the_leaf) {
  const Trace t = observed_mlp();
  const VisibleGraph vg = with(t, {.hide_module_functions = false, .hide_unreached = false});
  // fc1 and fc2 are drawn through; relu has no recorded functions and stays one node. `t`,
  // which no input reaches, is drawn with the constant it reads.
  BOOST_TEST(node_names(t.graph, vg) ==
                 (Names{"input", "constant", "t", "addmm", "relu", "linear", "output"}),
             tt::per_element());
  BOOST_TEST(
      edge_names(t.graph, vg) == (Names{"constant -> t", "input -> addmm", "t -> addmm",
                                        "addmm -> relu", "relu -> linear", "linear -> output"}),
      tt::per_element());
  BOOST_TEST(!vg.representative(views::calls_of_class(t.graph, "Linear").front()).has_value());
  // By default the weight's transpose is not drawn: it reads a parameter alone.
  BOOST_TEST(node_names(t.graph, with(t, {.hide_module_functions = false})) ==
                 (Names{"input", "addmm", "relu", "linear", "output"}),
             tt::per_element());
  // At the depth limit the leaf is one box again.
  BOOST_TEST(node_names(t.graph, with(t, {.depth = 1, .hide_module_functions = false})) ==
                 (Names{"input", "fc1", "relu", "fc2", "output"}),
             tt::per_element());
  // Leaves without recorded functions are unaffected.
  const Trace plain = mlp();
  BOOST_TEST(node_names(plain.graph, with(plain, {.hide_module_functions = false})) ==
                 node_names(plain.graph, with(plain, {})),
             tt::per_element());
  // Opened leaves become clusters like composites.
  const VisibleGraph nested =
      with(t, {.expand_nested = true, .hide_module_functions = false, .hide_unreached = false});
  BOOST_TEST(nested.clusters.size() == 2u);
  BOOST_TEST(clusters_of(nested) == (Clusters{-1, 0, 0, 0, -1, 1, -1}), tt::per_element());
}

BOOST_AUTO_TEST_CASE(module_functions_reroute_an_unconsumed_input) {
  // The op inside the leaf does not take the leaf's input (it reads a constant): the edge
  // into the leaf goes to its first function, the output comes from its last.
  Builder b("Net");
  const ModuleId root = b.module("", "Net", false);
  const ModuleId leaf = b.module("gen", "Gen", true);
  const NodeId x = b.input({2}, "x");
  b.begin(root, {x});
  b.open_leaf(leaf, x);
  const NodeId c = b.fn("zeros", {b.constant({2})}, {2});
  b.fn("neg", {c}, {2});
  const NodeId h = b.close_leaf_made_by_call({2});
  b.end({h});
  b.output(h);
  const VisibleGraph vg = with(b.trace, {.hide_module_functions = false, .hide_unreached = false});
  BOOST_TEST(edge_names(b.trace.graph, vg) ==
                 (Names{"input -> zeros", "constant -> zeros", "zeros -> neg", "neg -> output"}),
             tt::per_element());
}
