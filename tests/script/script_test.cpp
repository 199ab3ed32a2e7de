// TorchScript models traced from C++: torchinfo's tables and torchview's pictures of torchvision
// models scripted and traced in Python, the same trace as the templated front end on the same
// architectures, exact module paths through TorchScript's awkward corners, and bad input.
#define BOOST_TEST_MODULE script
#include <boost/test/unit_test.hpp>

#include "../render/golden.hpp"
#include "fixtures.hpp"
#include "models/lstm.hpp"
#include "models/mlp.hpp"
#include "models/resnet.hpp"
#include "models/transformer.hpp"

#include <recorder/graph/codec.hpp>
#include <recorder/render/summary.hpp>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <algorithm>
#include <ranges>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using script_test::calls;
using script_test::functions;
using script_test::load;
using Graph = recorder::Tracer<recorder::record::Structure>;
using AtenOps = recorder::Tracer<recorder::record::AtenOps>;
using recorder::NodeKind;

const recorder::TraceOptions eval{.mode = recorder::TrainMode::eval, .no_grad = true};

std::string dot(const recorder::Trace& t, recorder::RenderOptions o) {
  return recorder::render_to_string<recorder::backend::Dot>(t, o);
}

std::pair<std::size_t, std::size_t> counts(const recorder::Trace& t, std::optional<int> depth) {
  const auto vg = recorder::visible_graph(t.graph, {.depth = depth});
  return {vg.nodes.size(), vg.edges.size()};
}

/// The DOT of `t` at depths 1, 3 and unlimited against the templated examples' goldens
/// `<name>_d1.dot`, `<name>_d3.dot`, `<name>_dinf.dot` (tests/golden/models).
void check_templated_goldens(const recorder::Trace& t, const std::string& name) {
  const std::pair<const char*, std::optional<int>> depths[] = {
      {"d1", 1}, {"d3", 3}, {"dinf", std::nullopt}};
  for (const auto& [suffix, depth] : depths) {
    const std::string expected =
        script_test::read_file(recorder::testing::golden_dir() / (name + "_" + suffix + ".dot"));
    BOOST_REQUIRE(!expected.empty());
    const std::string actual = dot(t, {.depth = depth});
    BOOST_TEST(actual == expected, name << " at " << suffix
                                        << " differs from the templated golden at "
                                        << recorder::testing::first_difference(actual, expected));
  }
}

/// `key` of model `model` in make_models.py's expected.json (numbers computed in Python).
std::uint64_t expected_number(const std::string& model, const std::string& key) {
  const std::string json = script_test::read_file(script_test::model_path("expected.json"));
  const auto at = json.find("\"" + model + "\"");
  BOOST_REQUIRE(at != std::string::npos);
  const auto k = json.find("\"" + key + "\":", at);
  BOOST_REQUIRE(k != std::string::npos);
  return std::stoull(json.substr(k + key.size() + 3));
}

/// The strings of array `key` of model `model` in expected.json (`folder`'s).
std::vector<std::string> expected_strings(
    const std::string& model, const std::string& key,
    const std::filesystem::path& folder = script_test::model_path("")) {
  const std::string json = script_test::read_file(folder / "expected.json");
  const auto at = json.find("\"" + model + "\": {");
  BOOST_REQUIRE(at != std::string::npos);
  auto k = json.find("\"" + key + "\": [", at);
  BOOST_REQUIRE(k != std::string::npos);
  const auto end = json.find(']', k);
  std::vector<std::string> out;
  for (k = json.find('"', k + key.size() + 4); k < end; k = json.find('"', k + 1)) {
    const auto close = json.find('"', k + 1);
    out.push_back(json.substr(k + 1, close - k - 1));
    k = close;
  }
  return out;
}

/// "path#k Class" of every module call of `t`, as make_models.py's forward pre-hooks list them.
std::vector<std::string> paths_and_classes(const recorder::Trace& t) {
  std::vector<std::string> out;
  for (auto c : recorder::views::module_calls(t.graph)) {
    const auto& m = t.graph.module_of(c);
    out.push_back(m.path + "#" + std::to_string(t.graph.call(c).call_index) + " " + m.class_name);
  }
  return out;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no exception>";
}

}  // namespace

// ---- torchvision models, against torchinfo and torchview -------------------------------------

BOOST_AUTO_TEST_CASE(scripted_and_traced_resnet18_are_torchinfos_table_and_torchviews_picture) {
  const at::Tensor x = script_test::saved_tensor("x224.pt");
  for (const std::string name : {"resnet18_script.pt", "resnet18_trace.pt"}) {
    BOOST_TEST_CONTEXT(name) {
      auto m = load(name);
      const auto t = Graph(eval).run(m, x);
      // torchinfo's own output for resnet18() at 1x3x224x224, byte for byte.
      recorder::testing::check_golden("../summary/resnet18_224.txt", recorder::summary(t));
      BOOST_TEST(t.total_params == 11689512u);
      BOOST_TEST(recorder::summarize(t).total_mult_adds == 1814083944u);
      // torchview's node and edge counts, and the templated ResNet-18's pictures byte for byte.
      BOOST_TEST((counts(t, 1) == std::pair<std::size_t, std::size_t>{13, 12}));
      BOOST_TEST((counts(t, 3) == std::pair<std::size_t, std::size_t>{68, 75}));
      BOOST_TEST((counts(t, std::nullopt) == std::pair<std::size_t, std::size_t>{71, 78}));
      check_templated_goldens(t, "resnet18");
      BOOST_TEST(dot(t, {.depth = 3, .expand_nested = true}) ==
                 script_test::read_file(recorder::testing::golden_dir() /
                                        "resnet18_d3_expand_nested.dot"));
      // The recorded graph: 76 module calls, 9 ops of composite forwards, 69 tensors.
      BOOST_TEST(script_test::count(t, NodeKind::module) == 76u);
      BOOST_TEST(script_test::count(t, NodeKind::function) == 9u);
      BOOST_TEST(script_test::count(t, NodeKind::tensor) == 69u);
      BOOST_TEST(t.graph.size() == 156u);
      BOOST_TEST(t.graph.edge_count() == 147u);
      // The output is the model's, bit for bit.
      torch::NoGradGuard no_grad;
      BOOST_TEST(t.output.toTensor().equal(m.forward({x}).toTensor()));
    }
  }
}

BOOST_AUTO_TEST_CASE(module_paths_classes_labels_and_call_indices_of_resnet18) {
  auto m = load("resnet18_script.pt");
  const auto t = Graph(eval).run(m, torch::zeros({1, 3, 64, 64}));
  const auto c = calls(t);
  BOOST_REQUIRE(c.size() == 76u);
  BOOST_TEST(c[0] == "#0 ResNet 0-1");
  BOOST_TEST(c[1] == "conv1#0 Conv2d 1-1 leaf");
  BOOST_TEST(c[5] == "layer1#0 Sequential 1-5");
  BOOST_TEST(c[6] == "layer1.0#0 BasicBlock 2-1");
  BOOST_TEST(c[7] == "layer1.0.conv1#0 Conv2d 3-1 leaf");
  BOOST_TEST(c[12] == "layer1.0.relu#1 ReLU 3-6 leaf");  // one ReLU module, called twice
  BOOST_TEST(c.back() == "fc#0 Linear 1-10 leaf");
  BOOST_TEST(
      functions(t) == (std::vector<std::string>{"add_@layer1.0", "add_@layer1.1", "add_@layer2.0",
                                                "add_@layer2.1", "add_@layer3.0", "add_@layer3.1",
                                                "add_@layer4.0", "add_@layer4.1", "flatten@"}),
      boost::test_tools::per_element());
  // Layer addresses and views work on it as on any trace.
  const auto downsample = recorder::resolve_one(t.graph, "3-18");
  BOOST_TEST(t.graph.module_of(downsample).path == "layer2.0.downsample");
  BOOST_TEST(t.graph.module_of(downsample).param_count == 8448u);
  BOOST_TEST(t.graph.module_of(recorder::resolve_one(t.graph, "layer1.0.relu#1")).class_name ==
             "ReLU");
  BOOST_TEST(std::ranges::distance(recorder::views::calls_of_class(t.graph, "Conv2d")) == 20);
  BOOST_TEST(recorder::resolve(t.graph, recorder::by_class("BasicBlock")).size() == 8u);
  // Parameters as the module registers them, with torchinfo's kernel_size and groups.
  const auto& conv1 = t.graph.module_of(recorder::resolve_one(t.graph, "conv1"));
  BOOST_REQUIRE(conv1.params.size() == 1u);
  BOOST_TEST(conv1.params[0].name == "weight");
  BOOST_TEST(conv1.params[0].shape == (std::vector<std::int64_t>{64, 3, 7, 7}));
  BOOST_TEST((conv1.attributes == std::vector<std::pair<std::string, std::string>>{
                                      {"kernel_size", "[7, 7]"}, {"groups", "1"}}));
  const auto& maxpool = t.graph.module_of(recorder::resolve_one(t.graph, "maxpool"));
  BOOST_TEST((maxpool.attributes ==
              std::vector<std::pair<std::string, std::string>>{{"kernel_size", "3"}}));
}

BOOST_AUTO_TEST_CASE(traced_resnet18_has_kernel_sizes_and_groups_from_weights) {
  // torch.jit.trace keeps no class constants: kernel_size comes from the weight, groups from
  // the input's channels. The frozen_layers table (kernel_size and mult-adds columns) matches.
  auto scripted = load("resnet18_script.pt");
  auto traced = load("resnet18_trace.pt");
  const recorder::SummaryOptions o{
      .columns = {recorder::SummaryColumn::output_size, recorder::SummaryColumn::num_params,
                  recorder::SummaryColumn::kernel_size, recorder::SummaryColumn::groups,
                  recorder::SummaryColumn::mult_adds}};
  const auto x = torch::zeros({1, 3, 64, 64});
  BOOST_TEST(recorder::summary(Graph(eval).run(traced, x), o) ==
             recorder::summary(Graph(eval).run(scripted, x), o));
}

BOOST_AUTO_TEST_CASE(resnet50_is_torchinfos_table) {
  auto m = load("resnet50_script.pt");
  const auto t = Graph(eval).run(m, torch::randn({2, 3, 224, 224}));
  recorder::testing::check_golden("../summary/resnet50_224x2.txt", recorder::summary(t));
  // ... which is torchinfo's own expected output (tests/golden/summary/torchinfo), byte for byte.
  BOOST_TEST(recorder::summary(t) == script_test::read_file(recorder::testing::golden_dir() /
                                                            "../summary/torchinfo/resnet50.out"));
  BOOST_TEST(t.total_params == 25557032u);
  BOOST_TEST(recorder::summarize(t).total_mult_adds == expected_number("resnet50", "mult_adds"));
}

BOOST_AUTO_TEST_CASE(mobilenet_v2_grouped_convolutions_match_torchinfos_formulas) {
  auto m = load("mobilenet_v2_script.pt");
  const auto t = Graph(eval).run(m, script_test::saved_tensor("x224.pt"));
  const auto table = recorder::summarize(t);
  BOOST_TEST(table.total_params == expected_number("mobilenet_v2", "params"));  // 3,504,872
  BOOST_TEST(table.total_mult_adds == expected_number("mobilenet_v2", "mult_adds"));
  BOOST_TEST(table.total_params == 3504872u);
  // The first depthwise convolution: 32 groups of one channel.
  const auto& dw = t.graph.module_of(recorder::resolve_one(t.graph, "features.1.conv.0.0"));
  BOOST_TEST((dw.attributes == std::vector<std::pair<std::string, std::string>>{
                                   {"kernel_size", "[3, 3]"}, {"groups", "32"}}));
  BOOST_TEST(dw.param_count == 288u);  // 32 x 1 x 3 x 3
}

// ---- the same architecture on both front ends ---------------------------------------------

BOOST_AUTO_TEST_CASE(templated_and_torchscript_front_ends_give_the_same_summary_and_picture) {
  torch::NoGradGuard no_grad;
  {
    auto scripted = load("resnet18_script.pt");
    auto templated = models::ResNet18();
    const auto x = torch::randn({1, 3, 224, 224});
    const auto a = Graph(eval).run(templated, x);
    const auto b = Graph(eval).run(scripted, x);
    BOOST_TEST(recorder::summary(a) == recorder::summary(b));
    BOOST_TEST(dot(a, {.depth = 3}) == dot(b, {.depth = 3}));
    BOOST_TEST(recorder::render_to_string<recorder::backend::JsonView>(a, {}) ==
               recorder::render_to_string<recorder::backend::JsonView>(b, {}));
    BOOST_TEST(recorder::render_to_string<recorder::backend::Mermaid>(a, {.roll = true}) ==
               recorder::render_to_string<recorder::backend::Mermaid>(b, {.roll = true}));
  }
  {
    auto scripted = load("mlp_script.pt");
    models::MLP templated;
    const auto x = torch::randn({1, 784});
    const auto a = Graph(eval).run(templated, x);
    const auto b = Graph(eval).run(scripted, x);
    BOOST_TEST(recorder::summary(a) == recorder::summary(b));
    check_templated_goldens(b, "mlp");
    BOOST_TEST(dot(b, {.hide_inner_tensors = false}) ==
               script_test::read_file(recorder::testing::golden_dir() / "mlp_tensors.dot"));
  }
  {
    auto scripted = load("lstm_script.pt");
    models::LSTMNet templated;
    const auto x = torch::randint(0, 20, {1, 100}, torch::kLong);
    const auto a = Graph(eval).run(templated, x);
    const auto b = Graph(eval).run(scripted, x);
    BOOST_TEST(recorder::summary(a, {.all_outputs = true}) ==
               recorder::summary(b, {.all_outputs = true}));
    check_templated_goldens(b, "lstm");
    BOOST_TEST(b.output.isTuple());
  }
  {
    auto scripted = load("transformer_script.pt");
    models::TransformerEncoderModel templated;
    const auto x = torch::randint(0, 100, {10, 2}, torch::kLong);
    const auto a = Graph(eval).run(templated, x);
    const auto b = Graph(eval).run(scripted, x);
    BOOST_TEST(recorder::summary(a) == recorder::summary(b));
    check_templated_goldens(b, "transformer");
    BOOST_TEST(dot(b, {.depth = 2, .hide_inner_tensors = false, .expand_nested = true}) ==
               script_test::read_file(recorder::testing::golden_dir() /
                                      "transformer_d2_nested_tensors.dot"));
  }
}

BOOST_AUTO_TEST_CASE(a_trace_of_either_front_end_keeps_no_room_it_did_not_use) {
  // Each on a new thread, whose graph storage cache is empty: the trace grows its own tables,
  // and gives back their doubling slack as it ends (`Graph::release_growth`).
  auto scripted = load("mlp_script.pt");
  models::MLP templated;
  const auto x = torch::randn({1, 784});
  struct Room {
    std::size_t nodes, node_capacity, edges, edge_capacity;
  };
  auto room_of = [](const recorder::Trace& t) {
    return Room{t.graph.nodes().size(), t.graph.nodes().capacity(), t.graph.edges().size(),
                t.graph.edges().capacity()};
  };
  Room a{}, b{};
  std::thread([&] { a = room_of(Graph(eval).run(templated, x)); }).join();
  std::thread([&] { b = room_of(Graph(eval).run(scripted, x)); }).join();
  for (const Room& r : {a, b}) {
    BOOST_TEST(r.nodes == a.nodes);  // the same graph from both front ends
    BOOST_TEST(r.edges == a.edges);
    BOOST_TEST(r.node_capacity == r.nodes);
    BOOST_TEST(r.edge_capacity == r.edges);
  }
  BOOST_TEST(a.nodes == 13u);  // the MLP's recorded nodes: calls, ops and tensors
  BOOST_TEST(a.edges == 11u);
}

// ---- TorchScript's awkward corners ------------------------------------------------------------

// torchview draws a subscript (`x[:, 0]`) as one `__getitem__` node; TorchScript runs it as
// `slice` and `select`. recorder reports the ops of one subscript expression (one range of the
// Python source, kept in the file's debug records) as one `__getitem__`, and each aten op under
// record::AtenOps. What no input reaches (the mask sliced from a buffer) and what an op without
// operands made (`arange`) is recorded, and not drawn unless asked.
BOOST_AUTO_TEST_CASE(a_subscript_is_one_getitem_unless_aten_ops_are_asked) {
  auto m = load("subscripts_script.pt");
  const auto x = torch::randn({2, 5, 4});
  const auto t = Graph(eval).run(m, x);
  BOOST_TEST(
      functions(t) == (std::vector<std::string>{"__getitem__@", "__getitem__@", "__getitem__@",
                                                "arange@", "sum@", "add@", "sum@", "add@",
                                                "__getitem__@", "sum@", "add@", "sum@", "add@"}),
      boost::test_tools::per_element());
  // The merged ops' shapes: the expression's input and result.
  std::vector<std::string> shapes;
  for (auto f : recorder::views::functions_named(t.graph, "__getitem__")) {
    std::ostringstream s;
    for (auto e : t.graph.edges())
      if (e.to == f) s << recorder::detail::shape_repr(t.graph.shape(e.from));
    s << "->";
    for (auto e : t.graph.edges())
      if (e.from == f) s << recorder::detail::shape_repr(t.graph.shape(e.to));
    shapes.push_back(s.str());
  }
  BOOST_TEST(shapes == (std::vector<std::string>{"(2, 5, 4)->(2, 4)", "(2, 5, 4)->(2, 4, 2)",
                                                 "(8, 8)->(5, 5)", "(2, 5, 4)->(5, 4)"}),
             boost::test_tools::per_element());
  const auto aten = AtenOps(eval).run(m, x);
  BOOST_TEST(functions(aten) == (std::vector<std::string>{
                                    "slice@", "select@", "slice@", "slice@", "slice@", "slice@",
                                    "slice@", "arange@", "linear@fc", "sum@", "add@", "sum@",
                                    "add@", "select@", "sum@", "add@", "sum@", "add@"}),
             boost::test_tools::per_element());
  // Drawn: all but the mask's __getitem__ and its sum (no input reaches them) and arange (its
  // positions are traced, as torchview traces torch.arange's tensor, without a node).
  const auto drawn = recorder::visible_graph(t.graph, {});
  const auto all = recorder::visible_graph(t.graph, {.hide_unreached = false});
  BOOST_TEST(all.nodes.size() == 17u);  // input, the mask buffer, 13 functions, fc, output
  BOOST_TEST(drawn.nodes.size() == 13u);
  // The buffer is drawn as the input of the __getitem__ that slices it (issue 34): an op drawn
  // without inputs reads as a bug.
  std::vector<std::string> buffer_edges;
  for (const recorder::VisibleEdge& e : all.edges) {
    const recorder::VisibleNode& from = all.nodes[e.from];
    if (from.kind != recorder::NodeKind::constant) continue;
    buffer_edges.push_back(recorder::detail::shape_repr(t.graph.shape(from.node)) + "->" +
                           std::string(t.graph.function(all.nodes[e.to].node).op));
  }
  BOOST_TEST(buffer_edges == (std::vector<std::string>{"(8, 8)->__getitem__"}),
             boost::test_tools::per_element());
}

// Python dispatches `x.cpu()` and `1.0 - x` as one call each, which torchview draws as one node.
// TorchScript runs `x.to(device)` and `x.cpu()` as ops its interpreter registers itself (no
// dispatcher op, so no `at::RecordFunction` event either), and compiles `1.0 - x` through a
// builtin function of its own to `neg` and `add` (`2.0 / x`: `reciprocal` and `mul`). recorder
// reports the interpreter's tensor methods as ops, and a builtin function's ops as one op named
// by it (`sub`, `div`, as the templated front end records `1.0 - x`), each aten op under
// record::AtenOps.
BOOST_AUTO_TEST_CASE(tensor_methods_and_scalar_first_operators_are_one_op_each) {
  auto m = load("tensor_methods_script.pt");
  const auto x = torch::randn({2, 3});
  const auto t = Graph(eval).run(m, x);
  BOOST_TEST(functions(t) == (std::vector<std::string>{"to@", "cpu@", "sub@", "div@"}),
             boost::test_tools::per_element());
  const auto aten = AtenOps(eval).run(m, x);
  BOOST_TEST(functions(aten) == (std::vector<std::string>{"linear@fc", "to@", "cpu@", "neg@",
                                                          "add@", "reciprocal@", "mul@"}),
             boost::test_tools::per_element());
  // A chain: input, fc, the four ops, output.
  const auto drawn = recorder::visible_graph(t.graph, {});
  BOOST_TEST(drawn.nodes.size() == 7u);
  BOOST_TEST(drawn.edges.size() == 6u);
  BOOST_TEST(t.output.toTensor().equal(m.forward({x}).toTensor()));
}

BOOST_AUTO_TEST_CASE(every_module_path_is_exact_through_torchscripts_corners) {
  auto m = load("custom_script.pt");
  const auto x = torch::randn({2, 8});
  const auto t = AtenOps(eval).run(m, x);
  // A submodule called twice, a ModuleList iterated in forward, an attribute chain, a
  // tuple-returning submodule: full paths, never TorchScript's relative `0` or `inner`. The
  // depth-index labels are torchinfo's, by depth in the module tree: the containers never called
  // (`layers`, `holder`) take the labels 1-3 and 1-4 of the rows torchinfo prints for them.
  BOOST_TEST(
      calls(t) == (std::vector<std::string>{
                      "#0 Custom 0-1", "shared#0 Linear 1-1 leaf", "shared#1 Linear 1-2 leaf",
                      "layers.0#0 Block 2-1", "layers.0.fc#0 Linear 3-1 leaf",
                      "layers.0.act#0 ReLU 3-2 leaf", "layers.1#0 Block 2-2",
                      "layers.1.fc#0 Linear 3-3 leaf", "layers.1.act#0 ReLU 3-4 leaf",
                      "holder.inner#0 Inner 2-3", "holder.inner.lin#0 Linear 3-5 leaf",
                      "gate#0 Gate 1-5 leaf", "heads#0 Pair 1-6", "heads.a#0 Linear 2-4 leaf",
                      "heads.b#0 Linear 2-5 leaf"}),
      boost::test_tools::per_element());
  std::vector<std::string> containers;
  for (const auto& r : t.graph.container_rows())
    containers.push_back(std::string(r.path) + ' ' + std::to_string(r.depth) + '-' +
                         std::to_string(r.depth_index) + ' ' +
                         t.graph.module_at(r.path)->class_name);
  BOOST_TEST(containers == (std::vector<std::string>{"layers 1-3 ModuleList", "holder 1-4 Holder"}),
             boost::test_tools::per_element());
  // A method on self and a free function run in the caller; the in-place op inside an `if`
  // without outputs belongs to `gate` (the inlined graphs of libtorch 1.13 lose its scope).
  BOOST_TEST(functions(t) ==
                 (std::vector<std::string>{
                     "linear@shared", "linear@shared", "add@", "linear@layers.0.fc",
                     "relu@layers.0.act", "linear@layers.1.fc", "relu@layers.1.act",
                     "linear@holder.inner.lin", "tanh@", "mul@", "abs@gate", "sum@gate", "ge@gate",
                     "mul_@gate", "add@gate", "add@gate", "linear@heads.a", "linear@heads.b"}),
             boost::test_tools::per_element());
  // The tuple: two model outputs, the Pair call's two outputs.
  BOOST_TEST(script_test::count(t, NodeKind::output) == 2u);
  BOOST_TEST(t.graph.call(recorder::resolve_one(t.graph, "heads")).outputs.size() == 2u);
  BOOST_TEST(t.output.isTuple());
  // Without the observer, the same calls, and only the composite forwards' ops.
  const auto g = Graph(eval).run(m, x);
  BOOST_TEST(calls(g) == calls(t), boost::test_tools::per_element());
  BOOST_TEST(functions(g) == (std::vector<std::string>{"add@", "tanh@", "mul@"}),
             boost::test_tools::per_element());
  // The traced output is the model's.
  torch::NoGradGuard no_grad;
  const auto plain = m.forward({x}).toTupleRef().elements();
  BOOST_TEST(g.output.toTupleRef().elements()[0].toTensor().equal(plain[0].toTensor()));
  BOOST_TEST(g.output.toTupleRef().elements()[1].toTensor().equal(plain[1].toTensor()));
}

BOOST_AUTO_TEST_CASE(shared_parameters_count_once) {
  auto m = load("tied_script.pt");
  const auto t = Graph(eval).run(m, torch::randn({2, 8}));
  BOOST_TEST(t.total_params == 64u);  // one 8x8 weight, registered in `a` and `b`
  BOOST_TEST(t.graph.module_of(recorder::resolve_one(t.graph, "a")).param_count == 64u);
  BOOST_TEST(t.graph.module_of(recorder::resolve_one(t.graph, "b")).param_count == 64u);
}

BOOST_AUTO_TEST_CASE(calls_with_keyword_arguments_only_show_no_input_shape_as_torchinfo) {
  // models.KeywordCalls: `block(x=x, scale=x)` and `norm(input=h)` pass nothing by position,
  // `head(h)` does; inside `block`, `fc(x)` does too.
  auto m = load("keyword_calls_script.pt");
  const auto t = Graph(eval).run(m, torch::randn({2, 5, 16}));
  const auto keyword_only = [&](const char* path) {
    return t.graph.node(recorder::resolve_one(t.graph, path)).keyword_only;
  };
  BOOST_TEST(keyword_only("block"));
  BOOST_TEST(keyword_only("norm"));
  BOOST_TEST(!keyword_only("head"));
  BOOST_TEST(!keyword_only("block.fc"));
  BOOST_TEST(!t.graph.node(t.root).keyword_only);
  const recorder::SummaryOptions options{
      .columns = {recorder::SummaryColumn::input_size, recorder::SummaryColumn::output_size}};
  const auto rows = recorder::summarize(t, options).rows;
  BOOST_REQUIRE(rows.size() == 5u);  // the model, block, block.fc, norm, head
  BOOST_TEST(rows[1].cells[0] == "--");
  BOOST_TEST(rows[2].cells[0] == "[2, 5, 16]");
  BOOST_TEST(rows[3].cells[0] == "--");
  BOOST_TEST(rows[4].cells[0] == "[2, 5, 16]");
  // Beyond torchinfo: the tensors passed (both of block's).
  auto shown = options;
  shown.keyword_inputs = true;
  shown.all_outputs = true;
  const auto with_inputs = recorder::summarize(t, shown).rows;
  BOOST_TEST(with_inputs[1].cells[0] == "2 x [2, 5, 16]");
  BOOST_TEST(with_inputs[3].cells[0] == "[2, 5, 16]");
  // The flag survives the trace's encoding (what ranks send and files keep).
  const recorder::Trace back = recorder::decode_trace(recorder::encode_trace(t));
  BOOST_TEST(back.graph.node(recorder::resolve_one(back.graph, "block")).keyword_only);
  BOOST_TEST(recorder::summary(back, options) == recorder::summary(t, options));
}

BOOST_AUTO_TEST_CASE(grad_mode_and_the_legacy_executor_record_the_same_graph) {
  auto m = load("custom_script.pt");
  const auto x = torch::randn({2, 8});
  const auto reference = AtenOps(eval).run(m, x);
  // With grad, TorchScript's optimizer would build autodiff subgraphs; the tracer runs the code
  // as written, so nothing changes (and the output still requires grad).
  const auto with_grad = AtenOps({.mode = recorder::TrainMode::eval}).run(m, x);
  BOOST_TEST(calls(with_grad) == calls(reference), boost::test_tools::per_element());
  BOOST_TEST(functions(with_grad) == functions(reference), boost::test_tools::per_element());
  BOOST_TEST(with_grad.output.toTupleRef().elements()[0].toTensor().requires_grad());
  // The legacy executor's fuser would merge ops into FusionGroups; not in the traced copy.
  const bool was = torch::jit::getExecutorMode().exchange(false);
  const auto legacy = AtenOps(eval).run(m, x);
  torch::jit::getExecutorMode() = was;
  BOOST_TEST(calls(legacy) == calls(reference), boost::test_tools::per_element());
  BOOST_TEST(functions(legacy) == functions(reference), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_tracer_reused_traces_the_same_and_leaves_the_model_untouched) {
  auto m = load("resnet18_script.pt");
  m.train();
  const std::string before = m.get_method("forward").graph()->toString();
  Graph tracer(eval);
  const auto x = torch::randn({1, 3, 64, 64});
  const auto first = tracer.run(m, x);
  const auto second = tracer.run(m, x);
  BOOST_TEST(calls(first) == calls(second), boost::test_tools::per_element());
  BOOST_TEST(dot(first, {}) == dot(second, {}));
  BOOST_TEST(first.output.toTensor().equal(second.output.toTensor()));
  // The user's model keeps its graph (the tracer instruments a copy) and its mode.
  BOOST_TEST(m.get_method("forward").graph()->toString() == before);
  BOOST_TEST(before.find("recorder::") == std::string::npos);
  BOOST_TEST(m.is_training());  // in train mode; traced in eval
  BOOST_TEST(m.attr("layer1").toModule().is_training());
  // record::Off runs the model itself and records nothing.
  const auto off = recorder::Tracer<recorder::record::Off>(eval).run(m, x);
  BOOST_TEST(off.graph.size() == 0u);
  BOOST_TEST(off.output.toTensor().equal(first.output.toTensor()));
}

// ---- frozen and optimized models -------------------------------------------------------------

BOOST_AUTO_TEST_CASE(frozen_models_trace_as_a_flat_op_graph_with_one_warning) {
  auto m = load("resnet18_frozen.pt");
  std::vector<std::string> warned;
  recorder::TraceOptions o = eval;
  o.on_warning = [&warned](const std::string& w) { warned.push_back(w); };
  const auto t = Graph(o).run(m, torch::zeros({1, 3, 64, 64}));
  BOOST_REQUIRE(warned.size() == 1u);
  BOOST_TEST(t.warnings == warned, boost::test_tools::per_element());
  BOOST_TEST(warned[0].find("looks frozen (torch.jit.freeze) or optimized for inference") !=
             std::string::npos);
  BOOST_TEST(calls(t) == (std::vector<std::string>{"#0 ResNet 0-1"}),
             boost::test_tools::per_element());
  // Batch norm folded into the convolutions: 20 conv2d, 17 relu_, 8 add_, and the rest.
  BOOST_TEST(script_test::count(t, NodeKind::function) == 49u);
  BOOST_TEST(std::ranges::distance(recorder::views::functions_named(t.graph, "conv2d")) == 20);
  BOOST_TEST(std::ranges::distance(recorder::views::functions_named(t.graph, "add")) == 8);
  BOOST_TEST(t.total_params == 0u);
  BOOST_TEST(recorder::visible_graph(t.graph, {}).nodes.size() == 51u);  // input, 49 ops, output
  BOOST_TEST(!recorder::summary(t).empty());

  // torch.jit.optimize_for_inference (its saved files do not load in libtorch 1.13, so in C++).
  auto scripted = load("resnet18_script.pt");
  scripted.eval();
  auto optimized = torch::jit::optimize_for_inference(scripted);
  warned.clear();
  const auto x = torch::randn({1, 3, 64, 64});
  const auto u = Graph(o).run(optimized, x);
  BOOST_TEST(warned.size() == 1u);
  BOOST_TEST(calls(u) == (std::vector<std::string>{"#0 ResNet 0-1"}),
             boost::test_tools::per_element());
  BOOST_TEST(script_test::count(u, NodeKind::function) > 0u);
  torch::NoGradGuard no_grad;
  BOOST_TEST(torch::allclose(u.output.toTensor(), scripted.forward({x}).toTensor(), 1e-4, 1e-4));
}

// ---- transformers as PyTorch 2.x users write them (models.py) ---------------------------------

const recorder::TraceOptions eval_with_grad{.mode = recorder::TrainMode::eval};

/// The transformer models of this leg's folder: tiny_gpt only where its PyTorch has
/// F.scaled_dot_product_attention (2.0 and later).
std::vector<std::string> transformer_models() {
  std::vector<std::string> names{"text_encoder", "attention_block"};
  if (TORCH_VERSION_MAJOR >= 2) names.push_back("tiny_gpt");
  return names;
}

// Module paths and classes are Python's forward pre-hooks' own list, call for call, and the
// parameters Python's count. In eval mode with gradients on, as the hooks ran: PyTorch then calls
// every submodule (without gradients an eval TransformerEncoderLayer may run one fused op).
BOOST_AUTO_TEST_CASE(transformers_trace_with_pythons_module_paths_classes_and_parameters) {
  for (const std::string& name : transformer_models()) {
    BOOST_TEST_CONTEXT(name) {
      auto m = load(name + "_script.pt");
      const auto t = Graph(eval_with_grad).run(m, script_test::saved_tensor(name + "_input0.pt"));
      BOOST_TEST(t.complete());
      BOOST_TEST(paths_and_classes(t) == expected_strings(name, "calls"),
                 boost::test_tools::per_element());
      BOOST_TEST(t.total_params == expected_number(name, "params"));
      BOOST_TEST(t.trainable_params == expected_number(name, "trainable"));
    }
  }
}

// tiny_gpt calls F.scaled_dot_product_attention itself: one op node per call, inside its module,
// whose mult-adds are its two matmuls' (QK^T and AV), counted as matmul nodes are.
BOOST_AUTO_TEST_CASE(scaled_dot_product_attention_is_an_op_with_its_two_matmuls_mult_adds) {
  if (TORCH_VERSION_MAJOR < 2) {
    // PyTorch 1.13 has no F.scaled_dot_product_attention: make_models.py wrote no tiny_gpt.
    BOOST_TEST(!std::filesystem::exists(script_test::model_path("tiny_gpt_script.pt")));
    return;
  }
  auto m = load("tiny_gpt_script.pt");
  const auto t = Graph(eval).run(m, script_test::saved_tensor("tiny_gpt_input0.pt"));
  std::vector<std::string> sdpa;
  for (const std::string& f : functions(t))
    if (f.rfind("scaled_dot_product_attention@", 0) == 0) sdpa.push_back(f);
  BOOST_TEST(sdpa == (std::vector<std::string>{"scaled_dot_product_attention@blocks.0.attn",
                                               "scaled_dot_product_attention@blocks.1.attn"}),
             boost::test_tools::per_element());
  // q, k, v [2, 4, 12, 16]: QK^T [2, 4, 12, 16] x [2, 4, 16, 12] and AV [2, 4, 12, 12] x
  // [2, 4, 12, 16], as matmul counts them.
  const std::vector<std::int64_t> q_sizes{2, 4, 12, 16}, kt_sizes{2, 4, 16, 12},
      scores_sizes{2, 4, 12, 12};
  const recorder::Shape q(q_sizes), kt(kt_sizes), scores(scores_sizes);
  const recorder::Shape qkt_in[] = {q, kt}, av_in[] = {scores, q};
  const std::uint64_t per_call =
      recorder::op_mult_adds("matmul", qkt_in, scores) + recorder::op_mult_adds("matmul", av_in, q);
  BOOST_TEST(per_call == 2u * 4u * 12u * 12u * (16u + 16u));
  const recorder::Shape qkv_in[] = {q, q, q};
  BOOST_TEST(recorder::op_mult_adds("scaled_dot_product_attention", qkv_in, q) == per_call);
  BOOST_TEST(recorder::functional_mult_adds(t.graph) == 2u * per_call);
}

// Inside nn.MultiheadAttention (a leaf: its forward calls a function, not a module), what runs
// differs by version, and the trace says so under record::AtenOps: PyTorch 2.x's
// multi_head_attention_forward calls scaled_dot_product_attention when no weights are asked for;
// 1.13's computes QK^T and AV with bmm around a softmax. Either way the functional mult-adds are
// the same: QK^T + AV and the in- and out-projections, none of which torchinfo counts
// (MultiheadAttention has a submodule, out_proj, so it is no leaf for torchinfo).
BOOST_AUTO_TEST_CASE(inside_multihead_attention_each_version_runs_its_own_ops) {
  auto m = load("attention_block_script.pt");
  const auto t =
      AtenOps(eval_with_grad).run(m, script_test::saved_tensor("attention_block_input0.pt"));
  std::vector<std::string> inside;
  for (const std::string& f : functions(t))
    if (f.size() > 5 && f.compare(f.size() - 5, 5, "@attn") == 0) inside.push_back(f);
  const auto has = [&](const std::string& op) {
    return std::find(inside.begin(), inside.end(), op + "@attn") != inside.end();
  };
  if (TORCH_VERSION_MAJOR >= 2) {
    BOOST_TEST(has("scaled_dot_product_attention"));
    BOOST_TEST(!has("bmm"));
  } else {
    BOOST_TEST(!has("scaled_dot_product_attention"));
    BOOST_TEST(has("bmm"));
    BOOST_TEST(has("softmax"));
  }
  // x [2, 12, 64], 4 heads of 16: QK^T and AV, 2 x 4 x 12 x 12 x (16 + 16); the projections
  // of the 24 rows, 24 x 64 x 192 in and 24 x 64 x 64 out.
  BOOST_TEST(recorder::functional_mult_adds(t.graph) ==
             2u * 4u * 12u * 12u * (16u + 16u) + 24u * 64u * 192u + 24u * 64u * 64u);
}

#ifdef RECORDER_OTHER_SCRIPT_MODELS
/// The other leg's PyTorch wrote the same models into RECORDER_OTHER_SCRIPT_MODELS.
std::filesystem::path other_model(const std::string& name) {
  return std::filesystem::path(RECORDER_OTHER_SCRIPT_MODELS) / name;
}
#endif

// PyTorch reads what older versions wrote, never the other way round: on the 2.x leg the files
// PyTorch 1.13 saved trace with the same modules as 2.x's own; on 1.13 the files 2.x saved that
// call aten::scaled_dot_product_attention (every scripted nn.MultiheadAttention) are refused with
// one line naming the op, both versions and what to do.
BOOST_AUTO_TEST_CASE(files_another_pytorch_saved_trace_or_are_refused_in_one_line,
                     *boost::unit_test::description("needs RECORDER_OTHER_PYTHON")) {
#ifndef RECORDER_OTHER_SCRIPT_MODELS
  BOOST_FAIL("RECORDER_OTHER_PYTHON was not set at configure time (scripts/test.sh sets it)");
#else
  if (TORCH_VERSION_MAJOR >= 2) {
    for (const std::string name : {"text_encoder", "attention_block", "transformer", "mlp"}) {
      BOOST_TEST_CONTEXT(name) {
        auto m = recorder::load_model(other_model(name + "_script.pt"));
        const auto x = script_test::saved_tensor(name == "mlp"           ? "mlp_x.pt"
                                                 : name == "transformer" ? "tokens.pt"
                                                                         : name + "_input0.pt");
        const auto t = Graph(eval_with_grad).run(m, name == "transformer" ? x.t() : x);
        BOOST_TEST(t.complete());
        if (name == "text_encoder" || name == "attention_block")
          BOOST_TEST(paths_and_classes(t) == expected_strings(name, "calls", other_model("")),
                     boost::test_tools::per_element());
      }
    }
    return;
  }
  const std::string in_use =
      std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
  for (const std::string name : {"text_encoder", "attention_block", "tiny_gpt", "transformer"}) {
    const auto file = other_model(name + "_script.pt");
    try {
      (void)recorder::load_model(file);
      BOOST_FAIL(name << " loaded");
    } catch (const recorder::NewerModelError& e) {
      BOOST_TEST(e.op() == "aten::scaled_dot_product_attention");
      BOOST_TEST(e.saved_by() == "2.1");
      BOOST_TEST(e.file() == file);
      BOOST_TEST(std::string(e.what()) ==
                 "recorder: '" + file.string() +
                     "' was saved by a newer PyTorch (2.1 or later) than the libtorch in use (" +
                     in_use + "): it calls aten::scaled_dot_product_attention, which libtorch " +
                     in_use +
                     " does not have. Trace it with libtorch 2.5 or later (recorder supports "
                     "both), or save it with PyTorch " +
                     in_use);
    }
  }
  // A model without new ops loads whoever saved it.
  auto mlp = recorder::load_model(other_model("mlp_script.pt"));
  BOOST_TEST(Graph(eval).run(mlp, torch::randn({2, 784})).complete());
#endif
}

// ---- bad input ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(files_that_are_not_torchscript_say_what_they_are) {
  const auto msg = [](const std::string& name) {
    return message_of([&] { (void)recorder::load_model(script_test::model_path(name)); });
  };
  const std::string dir = script_test::model_path("").string();
  const auto p = [&](const std::string& name) {
    return "'" + script_test::model_path(name).string() + "'";
  };
  const std::string hint =
      " Export the model with torch.jit.script(model).save(path) or "
      "torch.jit.trace(model, example_inputs).save(path).";
  BOOST_TEST(msg("missing.pt") == "recorder: cannot read " + p("missing.pt") + ": no such file");
  BOOST_TEST(message_of([&] { (void)recorder::load_model(RECORDER_SCRIPT_MODELS); }) ==
             "recorder: cannot read '" RECORDER_SCRIPT_MODELS
             "': it is a directory, not a model file");
  BOOST_TEST(msg("empty.pt") ==
             "recorder: " + p("empty.pt") + " is not a TorchScript model: the file is empty");
  BOOST_TEST(msg("garbage.pt") ==
             "recorder: " + p("garbage.pt") +
                 " is not a TorchScript model: it is not a PyTorch file (a zip archive); "
                 "it starts with \"this is not a mo\".");
  BOOST_TEST(msg("legacy.pt") ==
             "recorder: " + p("legacy.pt") +
                 " is not a TorchScript model: it is a Python pickle (torch.save in the "
                 "legacy, non-zip format)." +
                 hint);
  BOOST_TEST(msg("tensor.pt") ==
             "recorder: " + p("tensor.pt") +
                 " is not a TorchScript model: it holds a tensor of shape [2, 3] saved "
                 "with torch.save." +
                 hint);
  BOOST_TEST(msg("resnet18_state_dict.pt") ==
             "recorder: " + p("resnet18_state_dict.pt") +
                 " is not a TorchScript model: it holds a "
                 "collections.OrderedDict of 122 tensors (a state_dict?) "
                 "saved with torch.save." +
                 hint);
  BOOST_TEST(msg("resnet18_pickled.pt") ==
             "recorder: " + p("resnet18_pickled.pt") +
                 " is not a TorchScript model: it holds a pickled "
                 "torchvision.models.resnet.ResNet object (torch.save of a whole "
                 "module needs its Python class to load) saved with torch.save." +
                 hint);
  BOOST_TEST(msg("resnet18_optimized.pt")
                 .find("recorder: cannot load TorchScript model " + p("resnet18_optimized.pt") +
                       ": ") == 0u);
  BOOST_CHECK_THROW((void)recorder::load_model(script_test::model_path("tensor.pt")),
                    recorder::ModelFileError);
  // A custom op whose library this program did not load names the library, on every libtorch.
  BOOST_TEST(msg("nms_script.pt") ==
             "recorder: cannot load TorchScript model " + p("nms_script.pt") +
                 ": it calls torchvision::nms, a custom op of 'torchvision' that is not "
                 "registered: link torchvision's C++ library into this program first (its ops "
                 "are registered when it loads)");
  (void)dir;
}

// A model the JIT cannot compile for a reason other than a missing op, in an archive only PyTorch
// 2.1 and later write (`.data/serialization_id`): on 1.13 that newer PyTorch is named with the
// JIT's first line; on 2.x the archive says nothing newer, and the JIT's own error stands.
BOOST_AUTO_TEST_CASE(a_newer_archive_that_does_not_compile_names_both_versions) {
  const std::vector<std::string> records{".data/serialization_id", "data.pkl", "code/m.py"};
  const std::string jit =
      "\n  Keyword argument is_causal unknown.\n:\n  File \"code/m.py\", line 9\n";
  const std::string got =
      message_of([&] { recorder::detail::script::throw_if_newer("m.pt", records, jit); });
  if (TORCH_VERSION_MAJOR >= 2) {
    BOOST_TEST(got == "<no exception>");
  } else {
    BOOST_TEST(got ==
               "recorder: 'm.pt' was saved by a newer PyTorch (2.1 or later) than the libtorch in "
               "use (1.13): libtorch 1.13 cannot compile its code (Keyword argument is_causal "
               "unknown.). Trace it with libtorch 2.5 or later (recorder supports both), or save "
               "it with PyTorch 1.13");
  }
  // Without the record, an unknown aten op still says a newer PyTorch saved it, without a version.
  const std::string op = message_of([&] {
    recorder::detail::script::throw_if_newer("m.pt", {"data.pkl"},
                                             "\nUnknown builtin op: aten::new_thing.\nHere are");
  });
  BOOST_TEST(op.find("recorder: 'm.pt' was saved by a newer PyTorch than the libtorch in use (") ==
             0u);
  BOOST_TEST(op.find("it calls aten::new_thing, which libtorch ") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_wrong_input_size_names_the_module_and_op_and_keeps_the_partial_trace) {
  auto m = load("resnet18_script.pt");
  Graph tracer(eval);
  try {
    (void)tracer.run(m, torch::zeros({1, 1, 64, 64}));
    BOOST_FAIL("no TraceError");
  } catch (const recorder::TraceError& e) {
    BOOST_TEST(
        std::string(e.what()) ==
        "recorder: op 'conv2d' failed in module 'conv1' (Conv2d): Given groups=1, weight of size "
        "[64, 3, 7, 7], expected input[1, 1, 64, 64] to have 3 channels, but got 1 channels "
        "instead");
    BOOST_TEST(e.failure().op == "conv2d");
    BOOST_TEST(e.failure().module_path == "conv1");
    BOOST_REQUIRE(e.partial_trace());
    const recorder::Trace& partial = *e.partial_trace();
    BOOST_TEST(calls(partial) == (std::vector<std::string>{"#0 ResNet 0-1 FAILED",
                                                           "conv1#0 Conv2d 1-1 leaf FAILED"}),
               boost::test_tools::per_element());
    BOOST_TEST(!partial.complete());
    BOOST_TEST(recorder::summary(partial).find("Conv2d: 1-1 (failed)") != std::string::npos);
    BOOST_TEST(dot(partial, {}).find("conv1") != std::string::npos);
    // The original error is nested: the interpreter's, with its TorchScript traceback.
    BOOST_CHECK_THROW(std::rethrow_if_nested(e), std::exception);
  }
  // The tracer is clean for the next run.
  const auto t = tracer.run(m, torch::zeros({1, 3, 64, 64}));
  BOOST_TEST(t.complete());
  BOOST_TEST(t.graph.size() == 156u);
  // An input of the wrong type fails before any module runs.
  const std::string wrong = message_of([&] { (void)tracer.run(m, c10::IValue(3)); });
  BOOST_TEST(wrong.find("recorder: forward failed in module <root>: ") == 0u);
  BOOST_TEST(wrong.find("Expected a value of type 'Tensor'") != std::string::npos);
}
