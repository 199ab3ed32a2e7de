// The op observer (record::AtenOps) on plain C++ modules: their inner ops recorded and
// attributed to submodules by parameter identity, in calls marked inferred; what no parameter
// places stays in the enclosing call; failures named where they happened.
#define BOOST_TEST_MODULE observe
#include <boost/test/unit_test.hpp>

#include <recorder/recorder.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using AtenOps = recorder::Tracer<recorder::record::AtenOps>;
using Graph = recorder::Tracer<recorder::record::Structure>;
const recorder::TraceOptions eval{.mode = recorder::TrainMode::eval, .no_grad = true};

/// Two Linear layers and a residual add, with a plain forward (no template).
struct PlainBlockImpl : torch::nn::Module {
  torch::nn::Linear fc1{register_module("fc1", torch::nn::Linear(16, 16))};
  torch::nn::Linear fc2{register_module("fc2", torch::nn::Linear(16, 16))};
  torch::Tensor forward(torch::Tensor x) { return fc2(torch::relu(fc1(x))) + x; }
};
TORCH_MODULE(PlainBlock);

/// The research note's unmodified C++-frontend model: a Sequential, a Linear, a block called
/// twice, a Dropout, an op of its own and a head.
struct NetImpl : torch::nn::Module {
  torch::nn::Sequential features{register_module(
      "features", torch::nn::Sequential(torch::nn::Conv2d(3, 4, 3), torch::nn::BatchNorm2d(4),
                                        torch::nn::ReLU(), torch::nn::MaxPool2d(2)))};
  torch::nn::Linear proj{register_module("proj", torch::nn::Linear(36, 16))};
  PlainBlock block{register_module("block", PlainBlock())};
  torch::nn::Dropout drop{register_module("drop", torch::nn::Dropout(0.5))};
  torch::nn::Linear head{register_module("head", torch::nn::Linear(16, 2))};
  torch::Tensor forward(torch::Tensor x) {
    x = features->forward(x);
    x = torch::flatten(x, 1);
    x = block(block(proj(x)));
    return head(torch::tanh(drop(x)));
  }
};
TORCH_MODULE(Net);

/// libtorch's own composite inside a templated model.
struct WithLayerImpl : torch::nn::Module {
  recorder::Module<torch::nn::TransformerEncoderLayer> layer{register_module(
      "layer", torch::nn::TransformerEncoderLayer(
                   torch::nn::TransformerEncoderLayerOptions(16, 2).dim_feedforward(32)))};
  template <recorder::tensor_like T>
  T forward(T x) {
    return layer(x);
  }
};
TORCH_MODULE(WithLayer);

/// "path#call Class [inferred]" for every module call.
std::vector<std::string> calls(const recorder::Trace& t) {
  std::vector<std::string> out;
  for (auto c : recorder::views::module_calls(t.graph)) {
    std::string s = t.graph.module_of(c).path + "#" + std::to_string(t.graph.call(c).call_index) +
                    " " + t.graph.module_of(c).class_name;
    if (t.graph.node(c).inferred) s += " inferred";
    if (t.graph.node(c).failed) s += " FAILED";
    out.push_back(std::move(s));
  }
  return out;
}

/// "op@path of the call it is in" for every function node.
std::vector<std::string> functions(const recorder::Trace& t) {
  std::vector<std::string> out;
  for (auto f : recorder::views::of_kind(t.graph, recorder::NodeKind::function))
    out.push_back(std::string(t.graph.function(f).op) + "@" +
                  t.graph.module_of(t.graph.node(f).parent).path);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_plain_cpp_models_ops_go_to_the_submodules_whose_parameters_they_read) {
  torch::manual_seed(0);
  Net net;
  net->eval();
  const at::Tensor x = torch::randn({2, 3, 8, 8});
  const auto t = AtenOps(eval).run(net, x);
  // Every submodule that owns parameters and ran has a call, marked inferred. Nothing marks
  // where the block's first call ends and its second begins: they are one inferred call,
  // holding two calls of each of its Linears.
  BOOST_TEST(
      calls(t) == (std::vector<std::string>{
                      "#0 Net", "features#0 Sequential inferred", "features.0#0 Conv2d inferred",
                      "features.1#0 BatchNorm2d inferred", "proj#0 Linear inferred",
                      "block#0 PlainBlock inferred", "block.fc1#0 Linear inferred",
                      "block.fc2#0 Linear inferred", "block.fc1#1 Linear inferred",
                      "block.fc2#1 Linear inferred", "head#0 Linear inferred"}),
      boost::test_tools::per_element());
  // Ops reading parameters are inside their owner (libtorch 1.13 runs a C++ Linear as t + addmm).
  // The others go to the deepest call around both attributed neighbours: the ReLU between
  // block.fc1 and block.fc2 to `block`; ReLU, MaxPool2d and flatten, between features.1 and
  // proj, to the model; the Dropout's op and tanh too.
  BOOST_TEST(functions(t) == (std::vector<std::string>{"conv2d@features.0",
                                                       "batch_norm@features.1",
                                                       "relu@",
                                                       "max_pool2d@",
                                                       "flatten@",
                                                       "t@proj",
                                                       "addmm@proj",
                                                       "t@block.fc1",
                                                       "addmm@block.fc1",
                                                       "relu@block",
                                                       "t@block.fc2",
                                                       "addmm@block.fc2",
                                                       "add@block",
                                                       "t@block.fc1",
                                                       "addmm@block.fc1",
                                                       "relu@block",
                                                       "t@block.fc2",
                                                       "addmm@block.fc2",
                                                       "add@",
                                                       "dropout@",
                                                       "tanh@",
                                                       "t@head",
                                                       "addmm@head"}),
             boost::test_tools::per_element());
  // Inferred calls have inputs and outputs, for the summary and the picture.
  const auto proj = recorder::resolve_one(t.graph, "proj");
  BOOST_TEST(recorder::to_string(t.graph.shape(t.graph.call(proj).inputs.at(0))) == "[2, 36]");
  BOOST_TEST(recorder::to_string(t.graph.shape(t.graph.call(proj).outputs.at(0))) == "[2, 16]");
  // The table: the submodules' rows, the model's parameters once.
  const auto table = recorder::summarize(t);
  BOOST_TEST(table.total_params == 1290u);
  BOOST_TEST(table.rows.size() == 11u);
  BOOST_TEST(table.rows[4].label == "Linear: 1-2");  // proj
  // Renderers say which calls were inferred (the model is one leaf box unless opened).
  const std::string opened = recorder::render_to_string<recorder::backend::Dot>(
      t, {.depth = 1, .hide_module_functions = false});
  BOOST_TEST(opened.find("Linear<BR/>proj (inferred)") != std::string::npos);
  BOOST_TEST(opened.find("Sequential<BR/>features (inferred)") != std::string::npos);
  BOOST_TEST(recorder::render_to_string<recorder::backend::Json>(t, {}).find(
                 "\"inferred\": true") != std::string::npos);
  // The output is the model's; without the observer the model is one call, as before.
  BOOST_TEST(torch::equal(t.output, net->forward(x)));
  BOOST_TEST(calls(Graph(eval).run(net, x)) == std::vector<std::string>{"#0 Net"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(libtorchs_own_composite_inside_a_templated_model) {
  torch::manual_seed(0);
  WithLayer model;
  const at::Tensor x = torch::randn({5, 2, 16});
  const auto t = AtenOps(eval).run(model, x);
  BOOST_TEST(
      calls(t) == (std::vector<std::string>{
                      "#0 WithLayer", "layer#0 TransformerEncoderLayer",
                      "layer.self_attn#0 MultiheadAttention inferred",
                      "layer.self_attn.out_proj#0 Linear inferred",
                      "layer.norm1#0 LayerNorm inferred", "layer.linear1#0 Linear inferred",
                      "layer.linear2#0 Linear inferred", "layer.norm2#0 LayerNorm inferred"}),
      boost::test_tools::per_element());
  const auto f = functions(t);
  // MultiheadAttention's projections by its own in_proj_weight, its output projection by
  // out_proj's weight; the feed-forward by the Linears'; the activation in the layer.
  BOOST_TEST(std::count(f.begin(), f.end(), "bmm@layer.self_attn") == 2);
  BOOST_TEST(std::count(f.begin(), f.end(), "softmax@layer.self_attn") == 1);
  BOOST_TEST(std::count(f.begin(), f.end(), "layer_norm@layer.norm1") == 1);
  BOOST_TEST(std::count(f.begin(), f.end(), "relu@layer") == 1);
  BOOST_TEST(std::count(f.begin(), f.end(), "matmul@layer.linear2") == 1);
  // The table shows the submodules (torchinfo's own rows for nn.TransformerEncoderLayer), and
  // counts every parameter once.
  const auto table = recorder::summarize(t, {.depth = 3});
  BOOST_TEST(table.total_params == 2224u);
  BOOST_TEST(table.rows.size() == 8u);
  BOOST_TEST(table.rows[2].cells[1] == "816");  // MultiheadAttention: in_proj; out_proj below
  BOOST_TEST(table.rows[3].cells[1] == "272");
  // Drawn with leaf modules folded (the default), the picture is record::Structure's.
  const auto plain = Graph(eval).run(model, x);
  BOOST_TEST(recorder::render_to_string<recorder::backend::Dot>(t, {}) ==
             recorder::render_to_string<recorder::backend::Dot>(plain, {}));
}

BOOST_AUTO_TEST_CASE(a_failure_inside_a_plain_cpp_module_names_the_op_and_the_inferred_call) {
  Net net;
  try {
    (void)AtenOps(eval).run(net, torch::randn({2, 3, 10, 10}));  // 64 features into Linear(36, 16)
    BOOST_FAIL("no TraceError");
  } catch (const recorder::TraceError& e) {
    BOOST_TEST_INFO(e.what());
    BOOST_TEST(e.failure().op == "addmm");
    BOOST_TEST(e.failure().module_path == "proj");
    BOOST_REQUIRE(e.partial_trace());
    BOOST_TEST(
        calls(*e.partial_trace()) ==
            (std::vector<std::string>{
                "#0 Net FAILED", "features#0 Sequential inferred", "features.0#0 Conv2d inferred",
                "features.1#0 BatchNorm2d inferred", "proj#0 Linear inferred FAILED"}),
        boost::test_tools::per_element());
    BOOST_TEST(!recorder::render_to_string<recorder::backend::Dot>(*e.partial_trace(), {}).empty());
  }
}
