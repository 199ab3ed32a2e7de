// Module adapters and the tracer front end: every leaf module kind, containers, naming,
// train/eval restore, failures mid-forward, hostile names.
#define BOOST_TEST_MODULE adapters
#include <boost/test/unit_test.hpp>

#include "../models/describe.hpp"
#include "../support/preconditions.hpp"
#include "models/mlp.hpp"

#include <recorder/render/visible.hpp>

#include <ranges>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using recorder::NodeId;
using recorder::NodeKind;
using Graph = recorder::Tracer<recorder::record::Structure>;

using test::shape_str;
std::vector<std::string> calls(const recorder::Trace& t) { return test::describe_calls(t); }

/// A model touching every leaf adapter the library promises.
struct ZooImpl : torch::nn::Module {
  recorder::Module<torch::nn::Conv2d> conv{
      register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 4, 3).padding(1)))};
  recorder::Module<torch::nn::BatchNorm2d> bn{register_module("bn", torch::nn::BatchNorm2d(4))};
  recorder::Module<torch::nn::ReLU> relu{register_module("relu", torch::nn::ReLU())};
  recorder::Module<torch::nn::MaxPool2d> pool{register_module("pool", torch::nn::MaxPool2d(2))};
  recorder::Module<torch::nn::AdaptiveAvgPool2d> gap{register_module(
      "gap", torch::nn::AdaptiveAvgPool2d(torch::nn::AdaptiveAvgPool2dOptions({1, 1})))};
  recorder::Module<torch::nn::Embedding> emb{register_module("emb", torch::nn::Embedding(10, 16))};
  recorder::Module<torch::nn::LSTM> lstm{
      register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(16, 16)))};
  recorder::Module<torch::nn::LayerNorm> norm{
      register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({16})))};
  recorder::Module<torch::nn::Dropout> drop{register_module("drop", torch::nn::Dropout(0.5))};
  recorder::Module<torch::nn::MultiheadAttention> mha{
      register_module("mha", torch::nn::MultiheadAttention(16, 2))};
  recorder::Module<torch::nn::TransformerEncoderLayer> layer{register_module(
      "layer", torch::nn::TransformerEncoderLayer(
                   torch::nn::TransformerEncoderLayerOptions(16, 2).dim_feedforward(32)))};
  recorder::Module<torch::nn::TransformerEncoder> encoder{register_module(
      "encoder", torch::nn::TransformerEncoder(torch::nn::TransformerEncoderOptions(
                     torch::nn::TransformerEncoderLayerOptions(16, 2).dim_feedforward(32), 2)))};
  recorder::Module<torch::nn::Linear> head{register_module("head", torch::nn::Linear(20, 3))};

  template <recorder::tensor_like T>
  T forward(T image, T tokens) {
    T f = gap(pool(relu(bn(conv(image)))));  // [2, 4, 1, 1]
    T s = emb(tokens);                       // [5, 2, 16]
    auto [seq, state] = lstm(s);             // [5, 2, 16], ([1, 2, 16], [1, 2, 16])
    T n = drop(norm(seq));
    T a = std::get<0>(mha(n, n, n));                            // [5, 2, 16]
    T e = encoder(layer(a));                                    // [5, 2, 16]
    T pooled = e.mean({0});                                     // [2, 16]
    return head(cat(std::vector<T>{pooled, f.flatten(1)}, 1));  // [2, 3]
  }
};
TORCH_MODULE(Zoo);

}  // namespace

BOOST_AUTO_TEST_CASE(every_leaf_adapter_records_one_call_with_its_outputs) {
  torch::manual_seed(0);
  Zoo zoo;
  zoo->eval();
  const auto image = torch::randn({2, 3, 8, 8});
  const auto tokens = torch::randint(0, 10, {5, 2}, torch::kLong);
  const auto plain = zoo->forward(image, tokens);
  auto t = Graph{}.run(zoo, image, tokens);
  BOOST_TEST(plain.equal(t.output));
  const std::vector<std::string> expected{"Conv2d conv -> [2, 4, 8, 8]",
                                          "BatchNorm2d bn -> [2, 4, 8, 8]",
                                          "ReLU relu -> [2, 4, 8, 8]",
                                          "MaxPool2d pool -> [2, 4, 4, 4]",
                                          "AdaptiveAvgPool2d gap -> [2, 4, 1, 1]",
                                          "Embedding emb -> [5, 2, 16]",
                                          "LSTM lstm -> [5, 2, 16] [1, 2, 16] [1, 2, 16]",
                                          "LayerNorm norm -> [5, 2, 16]",
                                          "Dropout drop -> [5, 2, 16]",
                                          "MultiheadAttention mha -> [5, 2, 16] [2, 5, 5]",
                                          "TransformerEncoderLayer layer -> [5, 2, 16]",
                                          "TransformerEncoder encoder -> [5, 2, 16]",
                                          "Linear head -> [2, 3]"};
  BOOST_TEST(calls(t) == expected, boost::test_tools::per_element());
  std::vector<std::string> inputs;
  for (auto i : recorder::views::of_kind(t.graph, NodeKind::input))
    inputs.push_back(std::string(t.graph.tensor(i).name) + " " +
                     std::string(t.graph.tensor(i).dtype));
  BOOST_TEST(inputs == (std::vector<std::string>{"input-0 Float", "input-1 Long"}),
             boost::test_tools::per_element());
  for (auto c : recorder::views::module_calls(t.graph))
    BOOST_TEST(t.graph.module_of(c).leaf == (c != t.root));
}

BOOST_AUTO_TEST_CASE(sequential_children_are_walked_and_named_by_index) {
  torch::nn::Sequential seq(torch::nn::Linear(4, 8), torch::nn::ReLU(), torch::nn::Linear(8, 8),
                            torch::nn::Tanh(), torch::nn::Linear(8, 2));
  const auto x = torch::randn({3, 4});
  const auto plain = seq->forward(x);
  auto t = Graph{}.run(seq, x);
  BOOST_TEST(plain.equal(t.output));
  BOOST_TEST(t.model_name == "Sequential");
  const std::vector<std::string> expected{"Linear 0 -> [3, 8]", "ReLU 1 -> [3, 8]",
                                          "Linear 2 -> [3, 8]", "Tanh 3 -> [3, 8]",
                                          "Linear 4 -> [3, 2]"};
  BOOST_TEST(calls(t) == expected, boost::test_tools::per_element());
  const auto vg = recorder::visible_graph(t.graph, {.depth = 1});
  BOOST_TEST(vg.nodes.size() == 7u);  // input, 0 .. 4, output
  BOOST_TEST(vg.edges.size() == 6u);
  BOOST_TEST(recorder::visible_graph(t.graph, {.depth = 0}).nodes.size() ==
             3u);  // input, Sequential, output
}

namespace {
struct HeadImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{register_module("fc", torch::nn::Linear(4, 4))};
  template <recorder::tensor_like T>
  T forward(T x) {
    return tanh(fc(x));
  }
};
TORCH_MODULE(Head);

struct StackImpl : torch::nn::Module {
  recorder::Sequential<Head> body{
      register_module("body", recorder::Sequential<Head>(std::vector<Head>{Head(), Head()}))};
  recorder::ModuleList<Head> branches{
      register_module("branches", recorder::ModuleList<Head>(std::vector<Head>{Head(), Head()}))};
  recorder::Module<recorder::Sequential<Head>> body_call{body};
  template <recorder::tensor_like T>
  T forward(T x) {
    x = body_call(x);
    T sum = x;
    for (auto& b : *branches) sum = sum + b(x);
    return sum;
  }
};
TORCH_MODULE(Stack);
}  // namespace

BOOST_AUTO_TEST_CASE(typed_containers_hold_composite_modules) {
  Stack model;
  const auto x = torch::randn({2, 4});
  const auto plain = model->forward(x);
  auto t = Graph{}.run(model, x);
  BOOST_TEST(plain.equal(t.output));
  const std::vector<std::string> expected{
      "Sequential body -> [2, 4]",      "Head body.0 -> [2, 4]",
      "Linear body.0.fc -> [2, 4]",     "Head body.1 -> [2, 4]",
      "Linear body.1.fc -> [2, 4]",     "Head branches.0 -> [2, 4]",
      "Linear branches.0.fc -> [2, 4]", "Head branches.1 -> [2, 4]",
      "Linear branches.1.fc -> [2, 4]"};
  BOOST_TEST(calls(t) == expected, boost::test_tools::per_element());
  std::vector<int> depths;
  for (auto c : recorder::views::module_calls(t.graph)) depths.push_back(t.graph.node(c).depth);
  BOOST_TEST(depths == (std::vector<int>{0, 1, 2, 3, 2, 3, 1, 2, 1, 2}),
             boost::test_tools::per_element());
}

namespace {
/// Remembers the mode its forward ran in.
struct Probe : torch::nn::Module {
  bool seen_training = true;
  template <recorder::tensor_like T>
  T forward(T x) {
    seen_training = is_training();
    return x * 2;
  }
};

/// Holds a Linear it never registered.
struct LooseImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{torch::nn::Linear(2, 2)};
  template <recorder::tensor_like T>
  T forward(T x) {
    return fc(x);
  }
};
}  // namespace

BOOST_AUTO_TEST_CASE(tracer_restores_train_mode_and_applies_eval) {
  models::MLP mlp;
  mlp->train();
  recorder::Tracer<recorder::record::Structure> tracer({.mode = recorder::TrainMode::eval});
  auto probe = std::make_shared<Probe>();
  probe->train();
  torch::nn::ModuleHolder<Probe> holder(probe);
  tracer.run(holder, torch::ones({1}));
  BOOST_TEST(!probe->seen_training);
  BOOST_TEST(probe->is_training());
  tracer.run(mlp, torch::randn({1, 784}));
  BOOST_TEST(mlp->is_training());
}

BOOST_AUTO_TEST_CASE(off_policy_records_nothing_and_computes_the_same) {
  models::MLP mlp;
  const auto x = torch::randn({1, 784});
  auto t = recorder::Tracer<recorder::record::Off>{}.run(mlp, x);
  BOOST_TEST(t.graph.size() == 0u);
  BOOST_TEST(t.graph.edge_count() == 0u);
  BOOST_TEST(t.output.equal(mlp->forward(x)));
  auto both = recorder::Tracer<recorder::record::Structure, recorder::record::Off>{}.run(mlp, x);
  BOOST_TEST(both.graph.size() == 13u);
}

namespace {
/// fc2 expects 99 features but gets 100: the forward throws inside the second Linear.
struct BrokenImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc1{register_module("fc1", torch::nn::Linear(8, 100))};
  recorder::Module<torch::nn::Linear> fc2{register_module("fc2", torch::nn::Linear(99, 10))};
  template <recorder::tensor_like T>
  T forward(T x) {
    return fc2(relu(fc1(x)));
  }
};
TORCH_MODULE(Broken);

/// A shape error in a function op inside a composite submodule.
struct InnerImpl : torch::nn::Module {
  template <recorder::tensor_like T>
  T forward(T x) {
    return matmul(x, x);
  }
};
TORCH_MODULE(Inner);
struct OuterImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{register_module("fc", torch::nn::Linear(3, 5))};
  recorder::Module<Inner> inner{register_module("inner", Inner())};
  template <recorder::tensor_like T>
  T forward(T x) {
    return inner(fc(x));
  }
};
TORCH_MODULE(Outer);
}  // namespace

BOOST_AUTO_TEST_CASE(a_leaf_that_throws_leaves_an_exact_partial_trace) {
  Broken model;
  model->train();
  recorder::Tracer<recorder::record::Structure> tracer({.mode = recorder::TrainMode::eval});
  std::shared_ptr<const recorder::Trace> partial;
  std::string what;
  try {
    tracer.run(model, torch::randn({2, 8}));
    BOOST_FAIL("the forward should have thrown");
  } catch (const recorder::TraceError& e) {
    what = e.what();
    partial = e.partial_trace();
    BOOST_CHECK_THROW(std::rethrow_if_nested(e), c10::Error);
  }
  BOOST_TEST(model->is_training());  // restored although the forward threw
  BOOST_TEST(what.find("module 'fc2' (Linear)") != std::string::npos, what);
  BOOST_TEST(what.find("mat1 and mat2 shapes cannot be multiplied") != std::string::npos, what);
  BOOST_REQUIRE(partial);
  BOOST_TEST(!partial->complete());
  BOOST_TEST(partial->failure->module_path == "fc2");
  BOOST_TEST(partial->failure->op.empty());
  // Exactly what was recorded before the throw: input, root, fc1 -> tensor, relu -> tensor, fc2.
  std::vector<std::string> nodes;
  for (auto id : recorder::views::nodes(partial->graph))
    nodes.push_back(std::string(partial->graph.label(id)) +
                    (partial->graph.node(id).failed ? "!" : ""));
  BOOST_TEST(nodes == (std::vector<std::string>{"input", "Broken!", "Linear", "tensor", "relu",
                                                "tensor", "Linear!"}),
             boost::test_tools::per_element());
  BOOST_TEST(partial->graph.edge_count() == 5u);  // 0->2, 2->3, 3->4, 4->5, 5->6
  // The partial trace renders.
  const auto dot = recorder::render_to_string<recorder::backend::Dot>(*partial, {});
  BOOST_TEST(dot.find("fc2") != std::string::npos);
  const auto json = recorder::render_to_string<recorder::backend::Json>(*partial, {});
  BOOST_TEST(json.find("\"complete\": false") != std::string::npos);
  // The thread's recording state is clean: the next trace works.
  models::MLP mlp;
  BOOST_TEST(tracer.run(mlp, torch::randn({1, 784})).graph.size() == 13u);
}

BOOST_AUTO_TEST_CASE(an_op_that_throws_names_the_op_and_module_path) {
  Outer model;
  try {
    Graph{}.run(model, torch::randn({2, 3}));
    BOOST_FAIL("the forward should have thrown");
  } catch (const recorder::TraceError& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("op 'matmul' failed in module 'inner' (Inner)") != std::string::npos,
               what);
    const auto& t = *e.partial_trace();
    BOOST_TEST(t.failure->op == "matmul");
    BOOST_TEST(t.graph.size() == 5u);  // input, Outer, Linear, tensor, Inner (no matmul node)
    BOOST_TEST(t.graph.node(NodeId{4}).failed);
    BOOST_TEST(t.graph.node(NodeId{1}).failed);
    BOOST_TEST(!t.graph.node(NodeId{2}).failed);
  }
}

namespace {
struct HostileImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{
      register_module("fc \"quoted\" <b>bold</b> & amp\nline2", torch::nn::Linear(2, 2))};
  template <recorder::tensor_like T>
  T forward(T x) {
    return fc(x);
  }
};
TORCH_MODULE(Hostile);
}  // namespace

BOOST_AUTO_TEST_CASE(hostile_module_names_give_valid_dot_and_json) {
  Hostile model;
  auto t = Graph{}.run(model, torch::randn({1, 2}));
  const auto calls_ = calls(t);
  BOOST_REQUIRE(calls_.size() == 1u);
  BOOST_TEST(calls_[0] == "Linear fc \"quoted\" <b>bold</b> & amp\nline2 -> [1, 2]");
  const auto dir = std::filesystem::temp_directory_path() / "recorder_hostile_test";
  std::filesystem::create_directories(dir);
  const auto dot = recorder::render_to_file<recorder::backend::Dot>(t, {}, dir / "hostile");
  const auto json = recorder::render_to_file<recorder::backend::Json>(t, {}, dir / "hostile");
  if (std::system("command -v dot >/dev/null 2>&1") == 0) {
    const std::string cmd =
        "dot -Tsvg '" + dot.string() + "' -o '" + (dir / "hostile.svg").string() + "'";
    BOOST_TEST(std::system(cmd.c_str()) == 0);
  }
  if (std::system("python3 -c 'import json' >/dev/null 2>&1") == 0) {
    const std::string cmd =
        "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
        "assert any(m[\"path\"].startswith(\"fc \\\"quoted\") for m in d[\"modules\"])' '" +
        json.string() + "'";
    BOOST_TEST(std::system(cmd.c_str()) == 0);
  }
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(unwritable_output_paths_are_clear_errors) {
  models::MLP mlp;
  auto t = Graph{}.run(mlp, torch::randn({1, 784}));
  BOOST_CHECK_EXCEPTION(
      recorder::render_to_file<recorder::backend::Dot>(t, {}, "/nonexistent-dir/x/graph.dot"),
      std::runtime_error, [](const std::runtime_error& e) {
        return std::string(e.what()).find("/nonexistent-dir/x/graph.dot") != std::string::npos;
      });
}

BOOST_AUTO_TEST_CASE(unregistered_submodules_are_named_as_such) {
  auto loose = std::make_shared<LooseImpl>();
  torch::nn::ModuleHolder<LooseImpl> holder(loose);
  auto t = Graph{}.run(holder, torch::randn({1, 2}));
  BOOST_TEST(calls(t) == (std::vector<std::string>{"Linear (unregistered Linear) -> [1, 2]"}),
             boost::test_tools::per_element());
  BOOST_TEST(t.total_params == 0u);  // the loose Linear is not a parameter of the model
}

#include "../models/peer_models.hpp"

BOOST_AUTO_TEST_CASE(leaf_modules_take_tuple_state_and_constants_enter_the_trace) {
  torch::manual_seed(0);
  peers::SimpleRNN model;
  const auto x = torch::randn({2, 3});
  torch::manual_seed(1);
  const auto plain = model->forward(x);
  torch::manual_seed(1);
  auto t = Graph{}.run(model, x);
  BOOST_TEST(plain.equal(t.output));
  // Two constants (the initial h and c), 4 LSTMCell calls fed (x, (h, c)), 4 LeakyReLU calls.
  BOOST_TEST(recorder::views::count(t.graph, NodeKind::constant) == 2u);
  std::vector<std::size_t> cell_inputs;
  for (auto c : recorder::views::calls_of_class(t.graph, "LSTMCell"))
    cell_inputs.push_back(t.graph.call(c).inputs.size());
  BOOST_TEST(cell_inputs == (std::vector<std::size_t>{3, 3, 3, 3}),
             boost::test_tools::per_element());
  // The second cell reads the first cell's c and the first LeakyReLU's h.
  const auto cells = recorder::views::collect(recorder::views::calls_of_class(t.graph, "LSTMCell"));
  const auto& second = t.graph.call(cells[1]).inputs;
  BOOST_TEST(t.graph.tensor(second[2]).producer == cells[0]);
  BOOST_TEST(t.graph.label(t.graph.tensor(second[1]).producer) == "LeakyReLU");
  BOOST_TEST(recorder::constant<at::Tensor>(x).equal(x));  // plain world: the tensor itself
}

BOOST_AUTO_TEST_CASE(aten_ops_policy_records_the_ops_inside_leaf_modules,
                     *boost::unit_test::precondition(test::ndebug)) {
#ifdef NDEBUG
  models::MLP mlp;
  const auto x = torch::randn({1, 784});
  auto t = recorder::Tracer<recorder::record::AtenOps>{}.run(mlp, x);
  BOOST_TEST(t.output.equal(mlp->forward(x)));
  // Each Linear runs `t` (the weight transposed) and `addmm`, recorded inside its call.
  std::vector<std::string> inside;
  for (auto c : recorder::views::calls_of_class(t.graph, "Linear"))
    for (auto f : recorder::views::children(t.graph, c))
      if (t.graph.kind(f) == NodeKind::function)
        inside.push_back(t.graph.module_of(c).path + ":" + std::string(t.graph.label(f)));
  BOOST_TEST(inside == (std::vector<std::string>{"fc1:t", "fc1:addmm", "fc2:t", "fc2:addmm",
                                                 "fc3:t", "fc3:addmm"}),
             boost::test_tools::per_element());
  // addmm reads the bias (a parameter), the Linear's input and the transposed weight; the
  // Linear's output is addmm's tensor.
  const auto fc1 = *recorder::views::calls_of_class(t.graph, "Linear").begin();
  const NodeId out = t.graph.call(fc1).outputs.at(0);
  const NodeId addmm = t.graph.tensor(out).producer;
  BOOST_TEST(t.graph.label(addmm) == "addmm");
  const auto ins = recorder::views::collect(recorder::views::predecessors(t.graph, addmm));
  BOOST_REQUIRE(ins.size() == 3u);
  BOOST_TEST(t.graph.kind(ins[0]) == NodeKind::parameter);
  BOOST_TEST(t.graph.kind(ins[1]) == NodeKind::input);
  BOOST_TEST(t.graph.label(t.graph.tensor(ins[2]).producer) == "t");
  // Drawn with leaves as boxes, the picture is the one record::Structure gives.
  auto plain_trace = Graph{}.run(mlp, x);
  BOOST_TEST(test::describe_visible(t, {}) == test::describe_visible(plain_trace, {}));
  // Outside leaf forwards nothing is observed: the two relu calls are the traced ones.
  BOOST_TEST(std::ranges::distance(recorder::views::functions_named(t.graph, "relu")) == 2);
#endif
}
