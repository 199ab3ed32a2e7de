// Recording policies on TorchScript models: activations and gradients of layers addressed like
// any trace's, reduced over forwards, post-processed in flight, checked against the model's own
// submodules, against the templated front end on the same weights, and against Python's
// forward hooks (tests/script/check_activations.py).
#define BOOST_TEST_MODULE script_capture
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"
#include "models/resnet.hpp"
#include "../support/errors.hpp"

#include <recorder/capture/save.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace rr = recorder::record;
namespace rd = recorder::reduce;
using script_test::load;

namespace {

const recorder::TraceOptions eval{.mode = recorder::TrainMode::eval, .no_grad = true};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// Submodule `name` of TorchScript model `m`, called on `x` directly (the model's own code).
at::Tensor call(const torch::jit::Module& m, const std::string& name, const at::Tensor& x) {
  return m.attr(name).toModule().forward({x}).toTensor();
}

/// ResNet-18's `layer4` output for `x`, computed by calling the scripted model's submodules.
at::Tensor layer4_of(const torch::jit::Module& m, const at::Tensor& x) {
  torch::NoGradGuard no_grad;
  at::Tensor y = x;
  for (const char* name :
       {"conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4"})
    y = call(m, name, y);
  return y;
}

std::vector<std::int64_t> shape_of(const at::Tensor& t) { return t.sizes().vec(); }

struct Setup {
  Setup() {
    torch::manual_seed(0);
    at::set_num_threads(1);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(script_capture, Setup)

BOOST_AUTO_TEST_CASE(layer4_outputs_kept_summed_and_averaged_equal_the_models_own_submodules) {
  auto m = load("resnet18_script.pt");
  m.eval();
  rr::ForwardOutput<rd::KeepAll> kept({"layer4"});
  rr::ForwardOutput<rd::Sum> summed({"layer4"});
  rr::ForwardOutput<rd::Mean> mean({"layer4"});
  recorder::Tracer<rr::ForwardOutput<rd::KeepAll>, rr::ForwardOutput<rd::Sum>,
                   rr::ForwardOutput<rd::Mean>>
      tracer(eval, kept, summed, mean);
  std::vector<at::Tensor> expected;
  for (int i = 0; i < 3; ++i) {
    const at::Tensor x = torch::randn({2, 3, 64, 64});
    (void)tracer.run(m, x);
    expected.push_back(layer4_of(m, x));
  }
  BOOST_REQUIRE(kept.keys() == std::vector<std::string>{"layer4"});
  const auto& all = kept["layer4"].result();
  BOOST_REQUIRE(all.size() == 3u);
  for (int i = 0; i < 3; ++i)
    BOOST_TEST(
        torch::equal(all[static_cast<std::size_t>(i)], expected[static_cast<std::size_t>(i)]));
  const at::Tensor sum = expected[0] + expected[1] + expected[2];
  BOOST_TEST(torch::allclose(summed["layer4"].result(), sum, 1e-5, 1e-5));
  BOOST_TEST(torch::allclose(mean["layer4"].result().to(torch::kFloat), sum / 3, 1e-5, 1e-5));
  BOOST_TEST(mean["layer4"].samples() == 3u);
  BOOST_TEST(mean["layer4"].label == "1-8");
  BOOST_TEST(mean["layer4"].class_name == "Sequential");
}

BOOST_AUTO_TEST_CASE(both_front_ends_record_the_same_values_on_the_same_weights) {
  auto scripted = load("resnet18_script.pt");
  auto templated = models::ResNet18();
  {
    // The templated ResNet-18 registers torchvision's names: copy the weights and buffers over.
    torch::NoGradGuard no_grad;
    const auto scripted_attr = [&scripted](std::string key) {
      torch::jit::Module owner = scripted;
      for (auto dot = key.find('.'); dot != std::string::npos; dot = key.find('.')) {
        owner = owner.attr(key.substr(0, dot)).toModule();
        key = key.substr(dot + 1);
      }
      return owner.attr(key).toTensor();
    };
    for (auto& b : templated->named_parameters()) b.value().copy_(scripted_attr(b.key()));
    for (auto& b : templated->named_buffers()) b.value().copy_(scripted_attr(b.key()));
  }
  const std::vector<recorder::LayerAddress> layers{"layer1.0.bn1", "3-18",
                                                   recorder::by_class("AdaptiveAvgPool2d"), "fc"};
  rr::ForwardOutput<rd::Last> a(layers), b(layers);
  recorder::Tracer<rr::ForwardOutput<rd::Last>> ta(eval, a), tb(eval, b);
  const at::Tensor x = torch::randn({1, 3, 64, 64});
  const auto out_a = ta.run(templated, x);
  const auto out_b = tb.run(scripted, x);
  BOOST_TEST(a.keys() == b.keys(), boost::test_tools::per_element());
  BOOST_TEST(a.keys() ==
                 (std::vector<std::string>{"layer1.0.bn1", "layer2.0.downsample", "avgpool", "fc"}),
             boost::test_tools::per_element());
  for (const std::string& key : a.keys())
    BOOST_TEST(torch::allclose(a[key].result(), b[key].result(), 1e-5, 1e-5), key);
  BOOST_TEST(torch::allclose(out_a.output, out_b.output.toTensor(), 1e-5, 1e-5));
}

BOOST_AUTO_TEST_CASE(forward_pre_and_forward_input_differ_on_an_inplace_relu) {
  auto m = load("resnet18_script.pt");
  rr::ForwardPre<rd::Last> pre({"layer1.0.relu"});
  rr::ForwardInput<rd::Last> after({"layer1.0.relu"});
  recorder::Tracer<rr::ForwardPre<rd::Last>, rr::ForwardInput<rd::Last>> tracer(eval, pre, after);
  (void)tracer.run(m, torch::randn({1, 3, 64, 64}));
  // layer1.0.relu runs twice: two records each.
  BOOST_TEST(pre.keys() == (std::vector<std::string>{"layer1.0.relu#0", "layer1.0.relu#1"}),
             boost::test_tools::per_element());
  const at::Tensor before = pre["layer1.0.relu#0"].result();
  const at::Tensor changed = after["layer1.0.relu#0"].result();
  BOOST_TEST(before.min().item<float>() < 0.0f);
  BOOST_TEST(torch::equal(changed, torch::relu(before)));
  BOOST_TEST(pre["layer1.0.relu#0"].label == "3-3");
  BOOST_TEST(pre["layer1.0.relu#1"].label == "3-6");
}

BOOST_AUTO_TEST_CASE(conditions_pauses_samples_and_every_address) {
  auto m = load("resnet18_script.pt");
  rr::ForwardOutput<rd::Sum> out({recorder::by_class("BatchNorm2d")});
  out.when([](const recorder::LayerCall& c) { return c.label == "3-2"; })
      .data(recorder::KeptData::sample);
  recorder::Tracer<rr::ForwardOutput<rd::Sum>> tracer(eval, out);
  (void)tracer.run(m, torch::randn({4, 3, 64, 64}));
  // Every selected layer has a record; the condition let only layer1.0.bn1 record.
  BOOST_TEST(out.keys().size() == 20u);
  BOOST_TEST(out["bn1"].samples() == 0u);
  BOOST_TEST(out["layer1.0.bn1"].samples() == 1u);
  BOOST_TEST(shape_of(out["layer1.0.bn1"].result()) == (std::vector<std::int64_t>{1, 64, 16, 16}),
             boost::test_tools::per_element());
  {
    auto pause = out.dont_record();
    (void)tracer.run(m, torch::randn({4, 3, 64, 64}));
  }
  BOOST_TEST(out["layer1.0.bn1"].samples() == 1u);
  (void)tracer.run(m, torch::randn({4, 3, 64, 64}));
  BOOST_TEST(out["layer1.0.bn1"].samples() == 2u);
  BOOST_TEST(out[recorder::LayerAddress(3, 2)].key == "layer1.0.bn1");
  BOOST_TEST(out[recorder::by_index(7)].key ==
             "layer1.0.bn1");  // after conv1, bn1, ..., layer1.0.conv1
}

BOOST_AUTO_TEST_CASE(postproc_zeroing_layer4_makes_the_output_fc_bias) {
  auto m = load("resnet18_script.pt");
  rr::ForwardOutput<rd::Last> out({"layer4"});
  out.postproc([](const recorder::LayerCall& c, const at::Tensor& y) {
    BOOST_TEST(c.path == "layer4");
    return torch::zeros_like(y);
  });
  recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer(eval, out);
  const auto t = tracer.run(m, torch::randn({1, 3, 224, 224}));
  const at::Tensor bias = m.attr("fc").toModule().attr("bias").toTensor();
  BOOST_TEST(torch::equal(t.output.toTensor(), bias.unsqueeze(0)));
  BOOST_TEST(out["layer4"].result().abs().sum().item<float>() > 0.0f);  // recorded before replaced
  // The graph keeps the recorded nodes: the same picture as without post-processing.
  const auto plain =
      recorder::Tracer<recorder::record::Structure>(eval).run(m, torch::randn({1, 3, 224, 224}));
  BOOST_TEST(recorder::render_to_string<recorder::backend::Dot>(t, {}) ==
             recorder::render_to_string<recorder::backend::Dot>(plain, {}));
  // The model's own forward is untouched.
  torch::NoGradGuard no_grad;
  BOOST_TEST(
      !torch::equal(m.forward({torch::randn({1, 3, 224, 224})}).toTensor(), bias.unsqueeze(0)));
}

BOOST_AUTO_TEST_CASE(gradients_of_layer4_and_of_fc_inputs_are_exact) {
  auto m = load("resnet18_script.pt");
  rr::BackwardOutput<rd::Sum> grad_out({"layer4"});
  rr::BackwardInput<rd::Sum> grad_in({"fc"});
  recorder::Tracer<rr::BackwardOutput<rd::Sum>, rr::BackwardInput<rd::Sum>> tracer(
      {.mode = recorder::TrainMode::eval}, grad_out, grad_in);
  for (int i = 0; i < 2; ++i) {
    const auto t = tracer.run(m, torch::randn({1, 3, 224, 224}));
    t.output.toTensor().sum().backward();
  }
  // d(sum fc(flatten(avgpool(y))))/dy[c, h, w] = (sum_j W[j, c]) / 49, twice.
  const at::Tensor w = m.attr("fc").toModule().attr("weight").toTensor().detach();
  const at::Tensor columns = w.sum(0);
  const at::Tensor expected = (columns / 49.0).view({1, 512, 1, 1}).expand({1, 512, 7, 7}) * 2;
  BOOST_TEST(grad_out["layer4"].samples() == 2u);
  BOOST_TEST(torch::allclose(grad_out["layer4"].result(), expected, 1e-5, 1e-6));
  BOOST_TEST(torch::allclose(grad_in["fc"].result(), columns.unsqueeze(0) * 2, 1e-5, 1e-6));
}

BOOST_AUTO_TEST_CASE(tuple_returning_submodules_record_every_tensor) {
  auto custom = load("custom_script.pt");
  rr::ForwardOutput<rd::KeepAll> heads({"heads", "shared#1"});
  recorder::Tracer<rr::ForwardOutput<rd::KeepAll>> tracer(eval, heads);
  (void)tracer.run(custom, torch::randn({2, 8}));
  BOOST_TEST(heads.keys() == (std::vector<std::string>{"shared#1", "heads"}),
             boost::test_tools::per_element());
  BOOST_TEST(heads["heads"].tensors() == 2u);
  BOOST_TEST(shape_of(heads["heads"].result(1)[0]) == (std::vector<std::int64_t>{2, 3}),
             boost::test_tools::per_element());

  auto lstm = load("lstm_script.pt");
  rr::ForwardOutput<rd::Last> encoder({"encoder"});
  recorder::Tracer<rr::ForwardOutput<rd::Last>> lstm_tracer(eval, encoder);
  (void)lstm_tracer.run(lstm, torch::randint(0, 20, {1, 100}, torch::kLong));
  BOOST_TEST(encoder["encoder"].tensors() == 3u);  // output, h, c
  BOOST_TEST(shape_of(encoder["encoder"].result(0)) == (std::vector<std::int64_t>{1, 100, 512}),
             boost::test_tools::per_element());
  BOOST_TEST(shape_of(encoder["encoder"].result(2)) == (std::vector<std::int64_t>{2, 100, 512}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(errors_name_the_layer_and_lose_nothing) {
  auto m = load("mlp_script.pt");
  // A requested layer that never ran: the nearest ones that did.
  rr::ForwardOutput<rd::Last> missing({"fc4"});
  recorder::Tracer<rr::ForwardOutput<rd::Last>> t1(eval, missing);
  try {
    (void)t1.run(m, torch::randn({1, 784}));
    BOOST_FAIL("no UnknownLayer");
  } catch (const recorder::UnknownLayer& e) {
    BOOST_TEST_INFO(e.what());
    BOOST_TEST(contains(e.what(), "fc4"));
    BOOST_TEST(contains(e.what(), "fc1"));
  }
  // The keep-all cap inside a TorchScript forward: a CaptureError nested in the TraceError,
  // what was kept stays, and the next run goes on.
  rr::ForwardOutput<rd::KeepAll> kept({"fc2"}, rd::KeepAll{.max_bytes = 2 * 50 * 4});
  recorder::Tracer<rr::ForwardOutput<rd::KeepAll>> t2(eval, kept);
  for (int i = 0; i < 2; ++i) (void)t2.run(m, torch::randn({1, 784}));
  const std::string message = test::nested_error_of([&] {
    (void)t2.run(m, torch::randn({1, 784}));
  });
  BOOST_TEST_INFO(message);
  BOOST_TEST(contains(
      message,
      "recording forward_output of layer 'fc2' (Linear, 1-2) with reduce::keep_all failed"));
  BOOST_TEST(kept["fc2"].samples() == 2u);
  try {
    (void)t2.run(m, torch::randn({1, 784}));
  } catch (const recorder::TraceError& e) {
    BOOST_TEST(e.failure().module_path == "");  // the leaf fc2 had returned: its parent was running
    BOOST_REQUIRE(e.partial_trace());
    BOOST_TEST(
        contains(recorder::render_to_string<recorder::backend::Dot>(*e.partial_trace()), "fc2"));
  }
  rr::ForwardOutput<rd::Sum> sums({"fc3"});
  recorder::Tracer<rr::ForwardOutput<rd::Sum>> t3(eval, sums);
  (void)t3.run(m, torch::randn({4, 784}));
  const std::string shape = test::nested_error_of([&] { (void)t3.run(m, torch::randn({3, 784})); });
  BOOST_TEST(contains(
      shape, "recording forward_output of layer 'fc3' (Linear, 1-3) with reduce::sum failed"));
  (void)t3.run(m, torch::randn({4, 784}));
  BOOST_TEST(sums["fc3"].samples() == 2u);
}

BOOST_AUTO_TEST_CASE(python_forward_hooks_agree_with_the_recorded_activations) {
#ifndef RECORDER_PYTHON
  BOOST_FAIL("no python3 with torch and torchvision was found at configure time");
#else
  auto m = load("resnet18_script.pt");
  rr::ForwardOutput<rd::Last> out({"layer1.0.bn1", "layer4", "fc"});
  recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer(eval, out);
  (void)tracer.run(m, script_test::saved_tensor("x224.pt"));
  const auto file = std::filesystem::temp_directory_path() /
                    ("recorder-script-acts-" + std::to_string(::getpid()) + ".pt");
  recorder::save(out, file);
  const std::string command = std::string(RECORDER_PYTHON) + " " + RECORDER_PYTHON_CHECK + " " +
                              RECORDER_SCRIPT_MODELS + " " + file.string();
  BOOST_TEST(std::system(command.c_str()) == 0);
  std::filesystem::remove(file);
#endif
}

// Transformers as PyTorch users write them (models.py), scripted by the Python whose torch is the
// libtorch under test: on the 2.x leg nn.TransformerEncoder and nn.MultiheadAttention run
// aten::scaled_dot_product_attention, and tiny_gpt calls it itself. Each layer's recorded output
// equals what Python's forward hooks see on the same weights and input.
BOOST_AUTO_TEST_CASE(python_forward_hooks_agree_on_the_transformer_models) {
#ifndef RECORDER_ATTENTION_CHECK
  BOOST_FAIL("no python3 with torch was found at configure time");
#else
  const std::pair<std::string, std::vector<std::string>> cases[] = {
      {"text_encoder", {"embedding", "encoder.layers.0", "encoder.layers.1", "head"}},
      {"attention_block", {"norm1", "mlp.0", "mlp"}},
      {"tiny_gpt", {"blocks.0.attn", "blocks.1.attn.proj", "blocks.1", "head"}},
  };
  int checked = 0;
  for (const auto& [name, layers] : cases) {
    if (!std::filesystem::exists(script_test::model_path(name + "_script.pt"))) {
      // tiny_gpt calls F.scaled_dot_product_attention: PyTorch 1.13 cannot script it.
      BOOST_TEST(name == "tiny_gpt");
      BOOST_TEST(TORCH_VERSION_MAJOR < 2);
      continue;
    }
    auto m = load(name + "_script.pt");
    rr::ForwardOutput<rd::Last> out(
        std::vector<recorder::LayerAddress>(layers.begin(), layers.end()));
    recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer(eval, out);
    (void)tracer.run(m, script_test::saved_tensor(name + "_input0.pt"));
    const auto file = std::filesystem::temp_directory_path() /
                      ("recorder-attention-" + name + "-" + std::to_string(::getpid()) + ".pt");
    recorder::save(out, file);
    std::string command = std::string(RECORDER_LEG_PYTHON) + " " + RECORDER_ATTENTION_CHECK + " " +
                          RECORDER_SCRIPT_MODELS + " " + name + " " + file.string();
    for (const std::string& l : layers) command += " " + l;
    BOOST_TEST(std::system(command.c_str()) == 0, command);
    std::filesystem::remove(file);
    ++checked;
  }
  BOOST_TEST(checked == (TORCH_VERSION_MAJOR < 2 ? 2 : 3));
#endif
}

// The TorchScript twin of capture's bare-path case: a bare path selects every call of its module,
// one record per call keyed by the graph's `path_address` ("fc#0", "fc#1"), and names no single
// record itself.
BOOST_AUTO_TEST_CASE(a_bare_path_records_every_call_of_a_module_called_twice) {
  auto m = load("twice_script.pt");
  rr::ForwardOutput<rd::KeepAll> out({"fc"});
  recorder::Tracer<rr::ForwardOutput<rd::KeepAll>> tracer(eval, out);
  const at::Tensor x = torch::randn({2, 3});
  const auto traced = tracer.run(m, x);
  tracer.run(m, x * 2);
  using V = std::vector<std::string>;
  BOOST_TEST(out.keys() == (V{"fc#0", "fc#1"}), boost::test_tools::per_element());
  for (int k = 0; k < 2; ++k) {
    torch::NoGradGuard no_grad;
    const at::Tensor first = call(m, "fc", k == 0 ? x : x * 2);
    BOOST_TEST(torch::equal(out["fc#0"].result()[static_cast<std::size_t>(k)], first));
    BOOST_TEST(
        torch::equal(out["fc#1"].result()[static_cast<std::size_t>(k)], call(m, "fc", first)));
  }
  BOOST_TEST(out["fc#1"].samples() == 2u);
  BOOST_TEST(out[recorder::by_path("fc", 1)].key == "fc#1");
  BOOST_TEST(out["1-2"].key == "fc#1");
  BOOST_TEST(test::error_of<recorder::AmbiguousLayer>([&] { (void)out["fc"]; }) ==
             "recorder: layer 'fc' is ambiguous: 2 recorded layers match: fc#0, fc#1");
  const auto calls = recorder::resolve(traced.graph, "fc");
  BOOST_REQUIRE(calls.size() == 2u);
  for (std::size_t k = 0; k < calls.size(); ++k)
    BOOST_TEST(recorder::path_address(traced.graph, calls[k]) == out.records()[k]->key);
}

BOOST_AUTO_TEST_SUITE_END()
