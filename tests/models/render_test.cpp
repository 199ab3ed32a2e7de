// Pictures of the real models: counts equal to torchview's, and golden DOT files at depths 1, 3
// and unlimited, with expand_nested, inner tensors, module functions and roll.
#define BOOST_TEST_MODULE model_pictures
#include <boost/test/unit_test.hpp>

#include "../render/golden.hpp"
#include "../support/preconditions.hpp"
#include "describe.hpp"
#include "models/lstm.hpp"
#include "models/mlp.hpp"
#include "models/resnet.hpp"
#include "models/transformer.hpp"
#include "peer_models.hpp"

#include <ranges>
#include <optional>
#include <string>
#include <utility>

namespace {

using Graph = recorder::Tracer<recorder::record::Structure>;

std::pair<std::size_t, std::size_t> counts(const recorder::Trace& t,
                                           const recorder::RenderOptions& o) {
  const auto vg = recorder::visible_graph(t.graph, o);
  return {vg.nodes.size(), vg.edges.size()};
}

std::string depth_name(std::optional<int> d) { return d ? std::to_string(*d) : std::string("inf"); }

/// Checks the DOT of `t` at depths 1, 3 and unlimited against `<name>_d<depth>.dot`.
void check_depths(const recorder::Trace& t, const std::string& name,
                  recorder::RenderOptions o = {}) {
  for (std::optional<int> d :
       {std::optional<int>(1), std::optional<int>(3), std::optional<int>()}) {
    o.depth = d;
    recorder::testing::check_golden(name + "_d" + depth_name(d) + ".dot",
                                    recorder::render_to_string<recorder::backend::Dot>(t, o));
  }
}

recorder::Trace trace_resnet() {
  torch::manual_seed(0);
  models::ResNet model = models::ResNet18();
  model->eval();
  torch::NoGradGuard no_grad;
  return Graph{}.run(model, torch::randn({1, 3, 224, 224}));
}

}  // namespace

BOOST_AUTO_TEST_CASE(torchview_simple_mlp_counts) {
  peers::MLP model;
  auto t = Graph{}.run(model, torch::randn({1, 128}));
  BOOST_TEST((counts(t, {}) == std::pair<std::size_t, std::size_t>{13, 12}));
  const auto [nodes, edges] = test::describe_visible(t, {});
  BOOST_TEST(nodes.front() == "input");
  BOOST_TEST(nodes[1] == "Linear layers.0");
  BOOST_TEST(nodes[11] == "Linear layers.10");
  BOOST_TEST(nodes.back() == "output");
  // Linear at depth 2, as torchview draws it ("Linear<BR/>depth:2").
  BOOST_TEST(t.graph.node(recorder::visible_graph(t.graph, {}).nodes[1].node).depth == 2);
}

BOOST_AUTO_TEST_CASE(torchview_roll_recursive_net_counts) {
  torch::manual_seed(0);
  peers::SimpleRNN model;
  const auto x = torch::randn({2, 3});
  auto t = Graph{}.run(model, x);
  BOOST_TEST(t.output.sizes() == (std::vector<int64_t>{2, 2}));
  BOOST_TEST(std::ranges::distance(recorder::views::calls_of_class(t.graph, "LSTMCell")) == 4);
  BOOST_TEST(std::ranges::distance(recorder::views::calls_of_class(t.graph, "LeakyReLU")) == 4);
  BOOST_TEST(counts(t, {.roll = false}).first == 10u);
  BOOST_TEST(counts(t, {.roll = true}).first == 5u);
  recorder::testing::check_golden(
      "simple_rnn_rolled.dot",
      recorder::render_to_string<recorder::backend::Dot>(t, {.roll = true}));
  recorder::testing::check_golden("simple_rnn_unrolled.dot",
                                  recorder::render_to_string<recorder::backend::Dot>(t, {}));
}

BOOST_AUTO_TEST_CASE(resnet18_goldens) {
  const auto t = trace_resnet();
  BOOST_TEST((counts(t, {.depth = 1}) == std::pair<std::size_t, std::size_t>{13, 12}));
  BOOST_TEST((counts(t, {.depth = 3}) == std::pair<std::size_t, std::size_t>{68, 75}));
  BOOST_TEST((counts(t, {.depth = std::nullopt}) == std::pair<std::size_t, std::size_t>{71, 78}));
  check_depths(t, "resnet18");
  recorder::testing::check_golden(
      "resnet18_d3_expand_nested.dot",
      recorder::render_to_string<recorder::backend::Dot>(t, {.depth = 3, .expand_nested = true}));
  // Every downsample Sequential is a cluster at depth 3 only when expanded past it.
  const auto nested =
      recorder::visible_graph(t.graph, {.depth = std::nullopt, .expand_nested = true});
  BOOST_TEST(nested.clusters.size() == 15u);  // 4 layers + 8 blocks + 3 downsamples
}

BOOST_AUTO_TEST_CASE(mlp_goldens) {
  models::MLP model;
  auto t = Graph{}.run(model, torch::randn({1, 784}));
  check_depths(t, "mlp");
  recorder::testing::check_golden(
      "mlp_tensors.dot",
      recorder::render_to_string<recorder::backend::Dot>(t, {.hide_inner_tensors = false}));
  recorder::testing::check_golden(
      "mlp_params_lr.dot", recorder::render_to_string<recorder::backend::Dot>(
                               t, {.direction = recorder::Direction::LR, .show_params = true}));
}

BOOST_AUTO_TEST_CASE(lstm_goldens) {
  models::LSTMNet model;
  model->eval();
  auto t = Graph{}.run(model, torch::randint(0, 20, {1, 100}, torch::kLong));
  check_depths(t, "lstm");
}

BOOST_AUTO_TEST_CASE(transformer_goldens) {
  torch::manual_seed(0);
  models::TransformerEncoderModel model;
  model->eval();
  auto t = Graph{}.run(model, torch::randint(0, 100, {10, 2}, torch::kLong));
  check_depths(t, "transformer");
  recorder::testing::check_golden(
      "transformer_d2_nested_tensors.dot",
      recorder::render_to_string<recorder::backend::Dot>(
          t, {.depth = 2, .hide_inner_tensors = false, .expand_nested = true}));
}

BOOST_AUTO_TEST_CASE(module_functions_of_leaf_modules,
                     *boost::unit_test::precondition(test::ndebug)) {
#ifdef NDEBUG
  // With the op observer, leaf modules have insides: hide_module_functions=false draws them.
  models::MLP model;
  auto t = recorder::Tracer<recorder::record::AtenOps>{}.run(model, torch::randn({1, 784}));
  BOOST_TEST((counts(t, {}) == std::pair<std::size_t, std::size_t>{7, 6}));
  // The weights' transposes (`t`) read a parameter alone: drawn only with hide_unreached off,
  // and then with the weight they read.
  BOOST_TEST(
      test::describe_visible(t, {.hide_module_functions = false}).first ==
          (std::vector<std::string>{"input", "addmm", "relu", "addmm", "relu", "addmm", "output"}),
      boost::test_tools::per_element());
  const recorder::RenderOptions aten{.hide_module_functions = false, .hide_unreached = false};
  const auto [nodes, edges] = test::describe_visible(t, aten);
  BOOST_TEST(nodes == (std::vector<std::string>{"input", "parameter", "t", "addmm", "relu",
                                                "parameter", "t", "addmm", "relu", "parameter", "t",
                                                "addmm", "output"}),
             boost::test_tools::per_element());
  recorder::testing::check_golden("mlp_module_functions.dot",
                                  recorder::render_to_string<recorder::backend::Dot>(t, aten));
  torch::manual_seed(0);
  models::TransformerEncoderModel transformer;
  transformer->eval();
  auto tt = recorder::Tracer<recorder::record::AtenOps>{}.run(
      transformer, torch::randint(0, 100, {10, 2}, torch::kLong));
  recorder::testing::check_golden(
      "transformer_module_functions.dot",
      recorder::render_to_string<recorder::backend::Dot>(
          tt, {.depth = std::nullopt, .hide_module_functions = false, .hide_unreached = false}));
#endif
}
