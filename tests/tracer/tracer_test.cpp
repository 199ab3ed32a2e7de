// The four example models, traced: exact graphs, counts, shapes and parameter totals.
#define BOOST_TEST_MODULE tracer
#include <boost/test/unit_test.hpp>

#include "models/lstm.hpp"
#include "models/mlp.hpp"
#include "models/resnet.hpp"
#include "models/transformer.hpp"
#include "../models/describe.hpp"

#include <recorder/graph/codec.hpp>
#include <recorder/render/visible.hpp>

#include <ranges>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using recorder::NodeId;
using recorder::NodeKind;
using Graph = recorder::Tracer<recorder::record::Structure>;

using test::describe_edges;
using test::describe_nodes;
using test::describe_visible;
using test::shape_str;

std::map<std::string, int> visible_label_counts(const recorder::Trace& t,
                                                recorder::RenderOptions o) {
  std::map<std::string, int> counts;
  for (const auto& n : recorder::visible_graph(t.graph, o).nodes)
    ++counts[std::string(t.graph.label(n.node))];
  return counts;
}

}  // namespace

BOOST_AUTO_TEST_CASE(mlp_full_graph_is_exact) {
  torch::manual_seed(0);
  models::MLP mlp;
  const auto x = torch::randn({1, 784});
  const auto plain = mlp->forward(x);
  auto t = Graph{}.run(mlp, x);
  BOOST_TEST(plain.equal(t.output));
  BOOST_TEST(t.complete());
  BOOST_TEST(t.total_params == 84060u);
  BOOST_TEST(t.model_name == "MLP");
  const std::vector<std::string> nodes{
      "input input [1, 784]",   "module MLP ",           "module Linear fc1",
      "tensor tensor [1, 100]", "function relu",         "tensor tensor [1, 100]",
      "module Linear fc2",      "tensor tensor [1, 50]", "function relu",
      "tensor tensor [1, 50]",  "module Linear fc3",     "tensor tensor [1, 10]",
      "output output [1, 10]"};
  BOOST_TEST(describe_nodes(t.graph) == nodes, boost::test_tools::per_element());
  const std::vector<std::string> edges{"0->2", "2->3", "3->4",  "4->5",   "5->6",  "6->7",
                                       "7->8", "8->9", "9->10", "10->11", "11->12"};
  BOOST_TEST(describe_edges(t.graph) == edges, boost::test_tools::per_element());
  // Parents and depths: everything inside the root call is at depth 1.
  for (NodeId id : {NodeId{2}, NodeId{4}, NodeId{10}}) {
    BOOST_TEST(t.graph.node(id).parent == t.root);
    BOOST_TEST(t.graph.node(id).depth == 1);
  }
  BOOST_TEST(t.graph.node(t.root).depth == 0);
  BOOST_TEST(t.graph.call(NodeId{6}).depth_index == 2u);
}

BOOST_AUTO_TEST_CASE(mlp_visible_graph_at_depth_1_and_unlimited) {
  models::MLP mlp;
  auto t = Graph{}.run(mlp, torch::randn({1, 784}));
  const std::vector<std::string> nodes{"input", "Linear fc1", "relu",  "Linear fc2",
                                       "relu",  "Linear fc3", "output"};
  const std::vector<std::string> edges{"0->1", "1->2", "2->3", "3->4", "4->5", "5->6"};
  for (std::optional<int> depth : {std::optional<int>(1), std::optional<int>()}) {
    auto [n, e] = describe_visible(t, {.depth = depth});
    BOOST_TEST(n == nodes, boost::test_tools::per_element());
    BOOST_TEST(e == edges, boost::test_tools::per_element());
  }
  // Depth 0 folds the whole model into... nothing drawable but its inputs and outputs.
  auto with_tensors = describe_visible(t, {.depth = 1, .hide_inner_tensors = false});
  BOOST_TEST(with_tensors.first.size() == 12u);  // 7 above + 5 intermediate tensors
}

BOOST_AUTO_TEST_CASE(resnet18_counts_at_full_depth) {
  torch::manual_seed(0);
  models::ResNet model = models::ResNet18();
  model->eval();
  const auto x = torch::randn({1, 3, 224, 224});
  torch::NoGradGuard no_grad;
  const auto plain = model->forward(x);
  auto t = Graph{}.run(model, x);
  BOOST_TEST(plain.equal(t.output));
  BOOST_TEST(t.total_params == 11689512u);
  BOOST_TEST(t.trainable_params == 11689512u);
  BOOST_TEST(t.graph.module(t.graph.call(t.root).module).param_count == 11689512u);

  const auto counts = visible_label_counts(t, {.depth = std::nullopt});
  const std::map<std::string, int> expected{
      {"Conv2d", 20},           {"BatchNorm2d", 20}, {"ReLU", 17},  {"add", 8},   {"MaxPool2d", 1},
      {"AdaptiveAvgPool2d", 1}, {"flatten", 1},      {"Linear", 1}, {"input", 1}, {"output", 1}};
  BOOST_TEST(counts == expected, boost::test_tools::per_element());

  // Output [1, 1000] on the output node and on fc's call.
  const auto outputs =
      recorder::views::collect(recorder::views::of_kind(t.graph, NodeKind::output));
  BOOST_REQUIRE(outputs.size() == 1u);
  BOOST_TEST(shape_str(t.graph, outputs[0]) == "[1, 1000]");
  // The residual adds are in place (`out += identity`), as torchvision writes them.
  for (auto add : recorder::views::functions_named(t.graph, "add"))
    BOOST_TEST(t.graph.node(add).inplace);
}

BOOST_AUTO_TEST_CASE(resnet18_visible_counts_match_torchview) {
  models::ResNet model = models::ResNet18();
  model->eval();
  torch::NoGradGuard no_grad;
  auto t = Graph{}.run(model, torch::randn({1, 3, 224, 224}));
  const auto at_depth = [&](std::optional<int> d) {
    const auto vg = recorder::visible_graph(t.graph, {.depth = d});
    return std::pair{vg.nodes.size(), vg.edges.size()};
  };
  BOOST_TEST((at_depth(1) == std::pair<std::size_t, std::size_t>{13, 12}));
  BOOST_TEST((at_depth(3) == std::pair<std::size_t, std::size_t>{68, 75}));
  BOOST_TEST((at_depth(std::nullopt) == std::pair<std::size_t, std::size_t>{71, 78}));
}

BOOST_AUTO_TEST_CASE(resnet18_paths_and_depth_index_match_torchinfo) {
  models::ResNet model = models::ResNet18();
  model->eval();
  torch::NoGradGuard no_grad;
  auto t = Graph{}.run(model, torch::randn({1, 3, 224, 224}));
  std::map<std::string, std::string> label;  // first call of each path -> "depth-index"
  std::map<std::string, std::string> klass;
  for (auto c : recorder::views::module_calls(t.graph)) {
    const auto& m = t.graph.module_of(c);
    const auto& n = t.graph.node(c);
    label.try_emplace(m.path,
                      std::to_string(n.depth) + "-" + std::to_string(t.graph.call(c).depth_index));
    klass.try_emplace(m.path, m.class_name);
  }
  // Numbers as in torchinfo__eval_order_doesnt_matter.out.
  BOOST_TEST(label["conv1"] == "1-1");
  BOOST_TEST(label["maxpool"] == "1-4");
  BOOST_TEST(label["layer1"] == "1-5");
  BOOST_TEST(label["layer4"] == "1-8");
  BOOST_TEST(label["avgpool"] == "1-9");
  BOOST_TEST(label["fc"] == "1-10");
  BOOST_TEST(label["layer1.0"] == "2-1");
  BOOST_TEST(label["layer2.0"] == "2-3");
  BOOST_TEST(label["layer1.0.conv1"] == "3-1");
  BOOST_TEST(label["layer2.0.conv1"] == "3-13");
  BOOST_TEST(label["layer2.0.downsample"] == "3-18");
  BOOST_TEST(label["layer3.0.downsample"] == "3-31");
  BOOST_TEST(label["layer4.0.bn1"] == "3-40");
  BOOST_TEST(label["layer2.0.downsample.0"] == "4-1");
  BOOST_TEST(klass["layer1"] == "Sequential");
  BOOST_TEST(klass["layer1.0"] == "BasicBlock");
  BOOST_TEST(klass["layer2.0.downsample"] == "Sequential");
  BOOST_TEST(klass["layer2.0.downsample.1"] == "BatchNorm2d");
  // The block's ReLU module is called twice; its calls are numbered 0 and 1.
  std::vector<std::uint32_t> relu_calls;
  for (auto c : recorder::views::module_calls(t.graph))
    if (t.graph.module_of(c).path == "layer1.0.relu")
      relu_calls.push_back(t.graph.call(c).call_index);
  BOOST_TEST(relu_calls == (std::vector<std::uint32_t>{0, 1}), boost::test_tools::per_element());
  // Per-module parameter counts, as torchinfo prints them.
  const auto params_of = [&](const std::string& path) {
    for (const auto& m : t.graph.modules())
      if (m.path == path) return m.param_count;
    return std::uint64_t{0};
  };
  BOOST_TEST(params_of("conv1") == 9408u);
  BOOST_TEST(params_of("fc") == 513000u);
  BOOST_TEST(params_of("layer2.0.downsample") == 8448u);
  BOOST_TEST(params_of("layer4.0.conv1") == 1179648u);
}

BOOST_AUTO_TEST_CASE(lstm_outputs_all_three_tensors) {
  torch::manual_seed(0);
  models::LSTMNet model;
  model->eval();
  const auto tokens = torch::randint(0, 20, {1, 100}, torch::kLong);
  const auto plain = model->forward(tokens);
  auto t = Graph{}.run(model, tokens);
  BOOST_TEST(std::get<0>(plain).equal(std::get<0>(t.output)));
  BOOST_TEST(std::get<0>(std::get<1>(plain)).equal(std::get<0>(std::get<1>(t.output))));
  BOOST_TEST(std::get<1>(std::get<1>(plain)).equal(std::get<1>(std::get<1>(t.output))));
  BOOST_TEST(t.total_params == 3784580u);

  std::vector<std::string> outs;
  for (auto o : recorder::views::of_kind(t.graph, NodeKind::output))
    outs.push_back(std::string(t.graph.tensor(o).name) + " " + shape_str(t.graph, o));
  BOOST_TEST(outs == (std::vector<std::string>{"output-0 [100, 20]", "output-1 [2, 100, 512]",
                                               "output-2 [2, 100, 512]"}),
             boost::test_tools::per_element());
  // The LSTM call has all three outputs: output, h and c.
  const auto lstm = recorder::views::collect(recorder::views::calls_of_class(t.graph, "LSTM"));
  BOOST_REQUIRE(lstm.size() == 1u);
  std::vector<std::string> shapes;
  for (auto o : t.graph.call(lstm[0]).outputs) shapes.push_back(shape_str(t.graph, o));
  BOOST_TEST(
      shapes == (std::vector<std::string>{"[1, 100, 512]", "[2, 100, 512]", "[2, 100, 512]"}),
      boost::test_tools::per_element());
  BOOST_TEST(t.graph.module_of(lstm[0]).param_count == 3768320u);
  BOOST_TEST(t.graph.module_of(lstm[0]).params.size() == 8u);  // weight_ih_l0 ... bias_hh_l1
  // torchview's picture of it: input, Embedding, LSTM, Linear, view, 3 outputs.
  const auto vg = recorder::visible_graph(t.graph, {});
  BOOST_TEST(vg.nodes.size() == 8u);
  BOOST_TEST(vg.edges.size() == 7u);
}

BOOST_AUTO_TEST_CASE(transformer_encoder_structure) {
  torch::manual_seed(0);
  models::TransformerEncoderModel model;
  model->eval();
  const auto tokens = torch::randint(0, 100, {10, 2}, torch::kLong);
  const auto plain = model->forward(tokens);
  auto t = Graph{}.run(model, tokens);
  BOOST_TEST(plain.equal(t.output));
  // embedding 6,400 + 2 x (MHA 16,640 + FF 33,088 + 2 LayerNorm 256) + head 6,500
  BOOST_TEST(t.total_params == 112868u);
  const auto count_class = [&](const char* c) {
    return static_cast<int>(std::ranges::distance(recorder::views::calls_of_class(t.graph, c)));
  };
  BOOST_TEST(count_class("EncoderLayer") == 2);
  BOOST_TEST(count_class("MultiheadAttention") == 2);
  BOOST_TEST(count_class("LayerNorm") == 4);
  BOOST_TEST(count_class("Linear") == 5);
  BOOST_TEST(count_class("Dropout") == 6);
  std::vector<std::string> paths;
  for (auto c : recorder::views::calls_of_class(t.graph, "EncoderLayer"))
    paths.push_back(t.graph.module_of(c).path);
  BOOST_TEST(paths == (std::vector<std::string>{"encoder.0", "encoder.1"}),
             boost::test_tools::per_element());
  // MultiheadAttention returns (output, weights); both are recorded.
  for (auto c : recorder::views::calls_of_class(t.graph, "MultiheadAttention")) {
    BOOST_TEST(t.graph.call(c).inputs.size() == 3u);
    BOOST_TEST(t.graph.call(c).outputs.size() == 2u);
    BOOST_TEST(shape_str(t.graph, t.graph.call(c).outputs[0]) == "[10, 2, 64]");
    BOOST_TEST(shape_str(t.graph, t.graph.call(c).outputs[1]) == "[2, 10, 10]");
  }
  // Functions recorded inside the composite layers: mul (scale), relu, 2 residual adds per layer.
  BOOST_TEST(std::ranges::distance(recorder::views::functions_named(t.graph, "add")) == 4);
  BOOST_TEST(std::ranges::distance(recorder::views::functions_named(t.graph, "relu")) == 2);
  BOOST_TEST(std::ranges::distance(recorder::views::functions_named(t.graph, "mul")) == 1);
  for (auto f : recorder::views::functions_named(t.graph, "relu"))
    BOOST_TEST(t.graph.module_of(t.graph.node(f).parent).class_name == "EncoderLayer");
}

namespace {

/// The same small residual network written with in-place or out-of-place ops and modules.
template <bool InPlace>
struct ResidualImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc1{register_module("fc1", torch::nn::Linear(8, 8))};
  recorder::Module<torch::nn::ReLU> act{
      register_module("act", torch::nn::ReLU(torch::nn::ReLUOptions().inplace(InPlace)))};
  recorder::Module<torch::nn::Linear> fc2{register_module("fc2", torch::nn::Linear(8, 8))};

  template <recorder::tensor_like T>
  T forward(T x) {
    T h = act(fc1(x));
    T y = fc2(h);
    if constexpr (InPlace) {
      y += x;
      y.mul_(0.5);
      y.relu_();
    } else {
      y = y + x;
      y = y.mul(0.5);
      y = relu(y);
    }
    return y;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(inplace_and_out_of_place_give_the_same_graph) {
  torch::manual_seed(0);
  auto a = std::make_shared<ResidualImpl<true>>();
  auto b = std::make_shared<ResidualImpl<false>>();
  torch::NoGradGuard no_grad;
  {
    auto pa = a->named_parameters(), pb = b->named_parameters();
    for (const auto& p : pa) p.value().copy_(pb[p.key()]);
  }
  torch::nn::ModuleHolder<ResidualImpl<true>> ha(a);
  torch::nn::ModuleHolder<ResidualImpl<false>> hb(b);
  const auto x = torch::randn({2, 8});
  auto ta = Graph{}.run(ha, x);
  auto tb = Graph{}.run(hb, x);
  BOOST_TEST(ta.output.allclose(tb.output));
  BOOST_TEST(describe_nodes(ta.graph) == describe_nodes(tb.graph),
             boost::test_tools::per_element());
  BOOST_TEST(describe_edges(ta.graph) == describe_edges(tb.graph),
             boost::test_tools::per_element());
  int inplace_a = 0, inplace_b = 0;
  for (const auto& n : ta.graph.nodes()) inplace_a += n.inplace;
  for (const auto& n : tb.graph.nodes()) inplace_b += n.inplace;
  BOOST_TEST(inplace_a == 3);
  BOOST_TEST(inplace_b == 0);
}

// ---------------------------------------------------------------------------------------------
// A reused tracer copies the module records of its last trace (adapters/module_records.hpp):
// every trace must equal, byte for byte, the trace a fresh tracer makes of the same model.

namespace {

/// Two children that share a module `c`: which path `c` gets depends on which is called first.
struct HalfImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc;
  recorder::Module<torch::nn::ReLU> c;
  HalfImpl(torch::nn::ReLU shared)
      : fc(register_module("fc", torch::nn::Linear(4, 4))), c(register_module("c", shared)) {}
  template <recorder::tensor_like T>
  T forward(T x) {
    return c(fc(x));
  }
};
TORCH_MODULE(Half);

struct SwapImpl : torch::nn::Module {
  torch::nn::ReLU shared;
  recorder::Module<Half> a{register_module("a", Half(shared))};
  recorder::Module<Half> b{register_module("b", Half(shared))};
  recorder::Module<torch::nn::Conv2d> conv{
      register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 1, 3).padding(1)))};
  bool swap = false;
  bool fail = false;
  template <recorder::tensor_like T>
  T forward(T x) {
    if (fail) throw std::runtime_error("told to fail");
    x = swap ? a(b(x)) : b(a(x));
    return conv(x.view({1, 1, -1, 4})).view({-1, 4});
  }
};
TORCH_MODULE(Swap);

/// Calls a module it never registered: the snapshot of the tree says nothing about it.
struct LooseImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{register_module("fc", torch::nn::Linear(4, 4))};
  torch::nn::Linear loose{4, 4};
  template <recorder::tensor_like T>
  T forward(T x) {
    return recorder::Module<torch::nn::Linear>(loose)(fc(x));
  }
};
TORCH_MODULE(Loose);

/// Traces `model` with `tracer` and with a fresh tracer: the two traces must be equal.
template <class M>
recorder::Trace check_like_fresh(Graph& tracer, M& model, const torch::Tensor& x) {
  auto reused = tracer.run(model, x);
  auto fresh = Graph{}.run(model, x);
  BOOST_TEST(reused.output.equal(fresh.output));
  const auto& rm = reused.graph.modules();
  const auto& fm = fresh.graph.modules();
  BOOST_TEST_REQUIRE(rm.size() == fm.size());
  for (std::size_t i = 0; i < rm.size(); ++i) {
    BOOST_TEST_CONTEXT("module " << i << " (" << fm[i].path << ")") {
      BOOST_TEST(rm[i].path == fm[i].path);
      BOOST_TEST(rm[i].param_count == fm[i].param_count);
      BOOST_TEST(rm[i].trainable_count == fm[i].trainable_count);
      BOOST_TEST(rm[i].params.size() == fm[i].params.size());
      BOOST_TEST(rm[i].attributes == fm[i].attributes);
    }
  }
  BOOST_TEST(reused.total_params == fresh.total_params);
  BOOST_TEST(reused.trainable_params == fresh.trainable_params);
  BOOST_TEST(recorder::encode_trace(reused) == recorder::encode_trace(fresh));
  return reused;
}

/// Three checked traces: the second keeps the records, the third copies them.
template <class M>
void until_copying(Graph& tracer, M& model, const torch::Tensor& x) {
  for (int i = 0; i < 3; ++i) check_like_fresh(tracer, model, x);
}

std::string path_of(const recorder::Trace& t, std::string_view cls, std::uint32_t nth) {
  for (const auto& m : t.graph.modules())
    if (m.class_name == cls && nth-- == 0) return m.path;
  return "(none)";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(module_records)

BOOST_AUTO_TEST_CASE(a_reused_tracer_copies_records_only_from_its_third_trace) {
  torch::manual_seed(0);
  Swap model;
  const auto x = torch::randn({4, 4});
  Graph tracer;
  check_like_fresh(tracer, model, x);  // nothing kept (a tracer used once pays nothing)
  BOOST_TEST(tracer.module_records().size() == 0u);
  check_like_fresh(tracer, model, x);                // kept
  BOOST_TEST(tracer.module_records().size() == 7u);  // Swap, a, a.fc, a.c, b, b.fc, conv
  BOOST_TEST(tracer.module_records().copied() == 0u);
  check_like_fresh(tracer, model, x);  // copied
  BOOST_TEST(tracer.module_records().copied() == 7u);
  const Graph copy = tracer;  // a copy starts afresh
  BOOST_TEST(copy.module_records().size() == 0u);
}

BOOST_AUTO_TEST_CASE(each_trace_is_built_in_the_memory_the_last_one_gave_back) {
  torch::manual_seed(0);
  Swap model;
  const auto x = torch::randn({4, 4});
  Graph tracer;
  BOOST_TEST(tracer.graph_storage_bytes() == 0u);  // nothing before the first trace
  const void* first_nodes = nullptr;
  {
    const recorder::Trace t = tracer.run(model, x);
    first_nodes = t.graph.nodes().data();
    BOOST_TEST(tracer.graph_storage_bytes() == 0u);  // lent out: the trace holds it
  }
  const std::size_t kept = tracer.graph_storage_bytes();  // given back as the trace died
  BOOST_TEST(kept >= 7u * sizeof(recorder::ModuleInfo));
  {
    const recorder::Trace t = tracer.run(model, x);
    BOOST_TEST(t.graph.nodes().data() == first_nodes);  // the same memory, appended into again
    const recorder::Trace kept_by_user = tracer.run(model, x);  // while `t` lives: fresh memory
    BOOST_TEST(kept_by_user.graph.nodes().data() != first_nodes);
    BOOST_TEST(kept_by_user.graph.size() == t.graph.size());
    const recorder::Trace copy = t;  // a copy owns its memory and gives nothing back
    BOOST_TEST(copy.graph.size() == t.graph.size());
  }
  BOOST_TEST(tracer.graph_storage_bytes() >= kept);
  tracer.release_graph_storage();
  BOOST_TEST(tracer.graph_storage_bytes() == 0u);
  // A trace that outlives its tracer frees its own memory (ASan watches this on the sanitizer
  // leg's model tests).
  std::optional<recorder::Trace> outliving;
  {
    Graph short_lived;
    short_lived.run(model, x);
    outliving.emplace(short_lived.run(model, x));
  }
  BOOST_TEST(outliving->graph.size() > 0u);
}

BOOST_AUTO_TEST_CASE(a_different_call_order_stops_copying_and_learns_the_paths_again) {
  torch::manual_seed(0);
  Swap model;
  const auto x = torch::randn({4, 4});
  Graph tracer;
  until_copying(tracer, model, x);
  BOOST_TEST(path_of(check_like_fresh(tracer, model, x), "ReLU", 0) == "a.c");
  const auto copied = tracer.module_records().copied();
  model->swap = true;  // b first: the shared ReLU is learnt from b
  BOOST_TEST(path_of(check_like_fresh(tracer, model, x), "ReLU", 0) == "b.c");
  // The root matched before the order changed; then the trace registered the rest itself.
  BOOST_TEST(tracer.module_records().copied() == copied + 1);
  BOOST_TEST(path_of(check_like_fresh(tracer, model, x), "ReLU", 0) == "b.c");
  BOOST_TEST(tracer.module_records().copied() == copied + 1 + 7);
  model->swap = false;
  BOOST_TEST(path_of(check_like_fresh(tracer, model, x), "ReLU", 0) == "a.c");
}

BOOST_AUTO_TEST_CASE(a_changed_tree_is_read_again) {
  torch::manual_seed(0);
  Swap model;
  const auto x = torch::randn({4, 4});
  Graph tracer;
  auto again = [&] {
    for (int i = 0; i < 2; ++i) check_like_fresh(tracer, model, x);
  };
  again();
  again();
  // requires_grad: trainable counts change.
  model->a->fc->weight.set_requires_grad(false);
  BOOST_TEST(check_like_fresh(tracer, model, x).trainable_params == 2u * 20u + 10u - 16u);
  again();
  // A parameter resized in place (same TensorImpl).
  auto extra = model->register_parameter("extra", torch::zeros({3}));
  BOOST_TEST(check_like_fresh(tracer, model, x).total_params == 50u + 3u);
  again();
  extra.set_data(torch::zeros({5}));
  BOOST_TEST(check_like_fresh(tracer, model, x).total_params == 50u + 5u);
  again();
  // A new module, never called.
  model->register_module("idle", torch::nn::Linear(2, 2));
  BOOST_TEST(check_like_fresh(tracer, model, x).total_params == 50u + 5u + 6u);
  again();
  // A child replaced: the member still calls the old one, now unregistered.
  model->replace_module("b", Half(model->shared));
  BOOST_TEST(path_of(check_like_fresh(tracer, model, x), "Half", 1) == "(unregistered Half)");
  again();
  // Display attributes live in the options: read at every registration.
  model->conv.holder()->options.kernel_size({5, 5});
  const auto t = check_like_fresh(tracer, model, x);
  const auto& conv = t.graph.modules().back();
  BOOST_TEST(conv.attributes.at(0).second == "[5, 5]");
  again();
}

BOOST_AUTO_TEST_CASE(new_models_a_failed_forward_and_tied_weights) {
  torch::manual_seed(0);
  const auto x = torch::randn({4, 4});
  Graph tracer;
  for (int i = 0; i < 4; ++i) {  // a new model (maybe at the old one's address) each time
    Swap model;
    check_like_fresh(tracer, model, x);
    check_like_fresh(tracer, model, x);
  }
  Swap model;
  until_copying(tracer, model, x);
  model->fail = true;
  BOOST_CHECK_THROW(tracer.run(model, x), recorder::TraceError);
  model->fail = false;
  check_like_fresh(tracer, model, x);
  // A tensor registered twice counts once in the model's total.
  model->b.holder()->fc.holder()->register_parameter("tied", model->a->fc->weight);
  const auto tied = check_like_fresh(tracer, model, x);
  BOOST_TEST(tied.total_params == 50u);
  BOOST_TEST(tied.graph.modules().at(5).path == "b.fc");
  BOOST_TEST(tied.graph.modules().at(5).param_count == 20u + 16u);
  check_like_fresh(tracer, model, x);
}

BOOST_AUTO_TEST_CASE(a_module_outside_the_tree_is_described_anew) {
  torch::manual_seed(0);
  Loose model;
  const auto x = torch::randn({4, 4});
  Graph tracer;
  until_copying(tracer, model, x);
  BOOST_TEST(tracer.module_records().copied() == 2u);  // Loose and fc; not the loose Linear
  model->loose->weight.set_requires_grad(false);
  const auto t = check_like_fresh(tracer, model, x);
  BOOST_TEST(t.graph.modules().at(2).path == "(unregistered Linear)");
  BOOST_TEST(t.graph.modules().at(2).trainable_count == 4u);
  model->loose = torch::nn::Linear(4, 4);  // another object, maybe at the same address
  model->loose->bias.set_requires_grad(false);
  BOOST_TEST(check_like_fresh(tracer, model, x).graph.modules().at(2).trainable_count == 16u);
}

BOOST_AUTO_TEST_SUITE_END()
