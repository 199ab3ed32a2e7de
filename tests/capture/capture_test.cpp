// Activation and gradient recording on the real example models: which layers, when, what,
// reduced how, looked up how, saved how; errors that name the layer and lose nothing.
#define BOOST_TEST_MODULE capture
#include <boost/test/unit_test.hpp>

#include <models/lstm.hpp>
#include <models/mlp.hpp>
#include <models/resnet.hpp>
#include "../support/errors.hpp"

#include <recorder/capture/facts.hpp>
#include <recorder/capture/save.hpp>
#include <recorder/capture/timing.hpp>
#include <recorder/recorder.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace rr = recorder::record;
namespace rd = recorder::reduce;
using recorder::LayerAddress;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::vector<std::int64_t> shape_of(const at::Tensor& t) { return t.sizes().vec(); }

struct Seeded {
  Seeded() {
    torch::manual_seed(0);
    at::set_num_threads(1);
  }
};

/// A fresh folder under the build's temp dir, removed afterwards.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             ("recorder-capture-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// Throws in the middle of its forward while `broken`.
struct BrokenImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc1{register_module("fc1", torch::nn::Linear(4, 3))};
  recorder::Module<torch::nn::Linear> fc2{register_module("fc2", torch::nn::Linear(5, 2))};
  bool broken = true;
  template <recorder::tensor_like T>
  T forward(T x) {
    x = fc1(x);
    if (broken) return fc2(x);  // 3 features into Linear(5, 2): throws
    return x;
  }
};

/// Module names are user strings: libtorch forbids only dots.
struct HostileImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> a{register_module("/x", torch::nn::Linear(2, 2))};
  recorder::Module<torch::nn::Linear> b{register_module("_x", torch::nn::Linear(2, 2))};
  template <recorder::tensor_like T>
  T forward(T x) {
    return b(a(x));
  }
};

/// Calls one Linear twice per forward (a reused module, as torchfunc's users meet it).
struct TwiceImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{register_module("fc", torch::nn::Linear(3, 3))};
  recorder::Module<torch::nn::Linear> head{register_module("head", torch::nn::Linear(3, 2))};
  template <recorder::tensor_like T>
  T forward(T x) {
    return head(fc(fc(x)));
  }
};

}  // namespace

BOOST_FIXTURE_TEST_SUITE(capture, Seeded)

// torchfunc's own scenario: inputs of the 2nd and 3rd Linear of the 784-100-50-10 MLP, summed
// over 1,000 forwards.
BOOST_AUTO_TEST_CASE(torchfunc_mlp_sum_over_1000_forwards) {
  models::MLP mlp;
  rr::ForwardInput<rd::Sum> inputs({"fc2", "fc3"});
  recorder::Tracer<rr::ForwardInput<rd::Sum>> tracer({}, inputs);

  torch::NoGradGuard no_grad;
  at::Tensor sum2 = torch::zeros({1, 100}), sum3 = torch::zeros({1, 50});
  for (int i = 0; i < 1000; ++i) {
    const at::Tensor x = torch::randn({1, 784});
    tracer.run(mlp, x);
    const at::Tensor in2 = torch::relu(mlp->fc1(x));
    const at::Tensor in3 = torch::relu(mlp->fc2(in2));
    if (i == 0) {
      sum2 = in2.clone();
      sum3 = in3.clone();
    } else {
      sum2 += in2;
      sum3 += in3;
    }
  }
  BOOST_TEST(inputs.size() == 2u);
  BOOST_TEST(inputs.keys() == (std::vector<std::string>{"fc2", "fc3"}),
             boost::test_tools::per_element());
  const auto& fc2 = inputs["fc2"];
  const auto& fc3 = inputs["fc3"];
  BOOST_TEST(fc2.samples() == 1000u);
  BOOST_TEST(fc3.samples() == 1000u);
  BOOST_TEST(shape_of(fc2.result()) == (std::vector<std::int64_t>{1, 100}),
             boost::test_tools::per_element());
  BOOST_TEST(shape_of(fc3.result()) == (std::vector<std::int64_t>{1, 50}),
             boost::test_tools::per_element());
  BOOST_TEST(torch::equal(fc2.result(), sum2));  // same ops in the same order: bit-identical
  BOOST_TEST(torch::equal(fc3.result(), sum3));
  BOOST_TEST(fc2.label == "1-2");
  BOOST_TEST(fc3.class_name == "Linear");
}

BOOST_AUTO_TEST_CASE(every_way_to_address_a_layer) {
  models::MLP mlp;
  const at::Tensor x = torch::randn({2, 784});
  auto run = [&](LayerAddress a) {
    rr::ForwardOutput<rd::Last> out({a});
    recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer({}, out);
    tracer.run(mlp, x);
    return out.keys();
  };
  using V = std::vector<std::string>;
  BOOST_TEST(run("1-2") == V{"fc2"}, boost::test_tools::per_element());
  BOOST_TEST((run({1, 3}) == V{"fc3"}));
  BOOST_TEST(run("fc1") == V{"fc1"}, boost::test_tools::per_element());
  BOOST_TEST(run(recorder::by_class("Linear")) == (V{"fc1", "fc2", "fc3"}),
             boost::test_tools::per_element());
  BOOST_TEST(run(recorder::by_index(1)) == V{"fc2"}, boost::test_tools::per_element());
  BOOST_TEST(run("<root>") == V{"<root>"}, boost::test_tools::per_element());
  BOOST_TEST(run(recorder::all_layers()) == (V{"fc1", "fc2", "fc3"}),
             boost::test_tools::per_element());
  BOOST_TEST(
      test::error_of<std::invalid_argument>([] { rr::ForwardOutput<rd::Last> none({}); }) ==
      "recorder: a forward_output recording needs at least one layer address, e.g. {\"fc2\"}, "
      "{recorder::by_class(\"Conv2d\")} or {recorder::all_layers()}");
  BOOST_TEST(
      run(recorder::where([](const recorder::Graph& g,
                             recorder::NodeId c) { return g.module_of(c).path.ends_with('3'); },
                          "ends with 3")) == V{"fc3"},
      boost::test_tools::per_element());

  // Looking results up: by key, label, class, index; a wrong address names the nearest keys.
  rr::ForwardOutput<rd::Last> out({recorder::by_class("Linear")});
  recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer({}, out);
  auto traced = tracer.run(mlp, x);
  BOOST_TEST(out["fc3"].key == "fc3");
  BOOST_TEST((out[{1, 3}].key == "fc3"));
  BOOST_TEST(out["1-1"].key == "fc1");
  BOOST_TEST(out[recorder::by_index(1)].key == "fc2");
  BOOST_TEST(torch::equal(out["fc3"].result(), traced.output));
  BOOST_TEST(
      test::error_of<recorder::UnknownLayer>([&] { (void)out["fc4"]; }) ==
      "recorder: unknown layer 'fc4': no recorded layer has this address; recorded: fc1, fc2, fc3");
  BOOST_TEST(
      test::error_of<recorder::AmbiguousLayer>([&] { (void)out[recorder::by_class("Linear")]; }) ==
      "recorder: layer 'by_class(\"Linear\")' is ambiguous: 3 recorded layers match: fc1, "
      "fc2, fc3");
}

// scio: "not all requested activations were found". The forward runs, what ran is kept, and
// the error lists the nearest layers that did run.
BOOST_AUTO_TEST_CASE(a_requested_layer_that_never_ran_is_an_error_after_the_forward) {
  models::MLP mlp;
  rr::ForwardOutput<rd::Last> out({"fc2", "fc4", "3-1"});
  recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer({}, out);
  // Every address that matched nothing is named, each with its nearest valid ones.
  try {
    tracer.run(mlp, torch::randn({1, 784}));
    BOOST_FAIL("no error");
  } catch (const recorder::UnknownLayer& e) {
    BOOST_TEST(std::string(e.what()) ==
               "recorder: 2 unknown layers: 'fc4' (no module has this path; nearest: fc1, fc2, "
               "fc3) and '3-1' (no "
               "module call at depth 3; valid depths: 0, 1; nearest: 1-1, 1-2, 1-3)");
    BOOST_TEST(e.unknown().size() == 2u);
    BOOST_TEST(e.address() == "fc4");
    BOOST_TEST(e.unknown()[1].address == "3-1");
  }
  BOOST_TEST(out.keys() == std::vector<std::string>{"fc2"}, boost::test_tools::per_element());
  BOOST_TEST(out["fc2"].samples() == 1u);

  rr::ForwardOutput<rd::Last> deep({"3-1"});
  recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer2({}, deep);
  BOOST_TEST(test::error_of<recorder::UnknownLayer>([&] {
               tracer2.run(mlp, torch::randn({1, 784}));
             }) ==
             "recorder: unknown layer '3-1': no module call at depth 3; valid depths: 0, 1; "
             "nearest: 1-1, 1-2, 1-3");
}

BOOST_AUTO_TEST_CASE(condition_dont_record_and_sample) {
  models::MLP mlp;
  rr::ForwardOutput<rd::KeepAll> out({"fc1", "fc2"});
  out.when([](const recorder::LayerCall& c) { return c.path == "fc2" || c.samples < 3; });
  recorder::Tracer<rr::ForwardOutput<rd::KeepAll>> tracer({}, out);
  for (int i = 0; i < 5; ++i) tracer.run(mlp, torch::randn({4, 784}));
  {
    auto pause = out.dont_record();
    tracer.run(mlp, torch::randn({4, 784}));
  }
  BOOST_TEST(out["fc1"].samples() == 3u);
  BOOST_TEST(out["fc2"].samples() == 5u);
  BOOST_TEST(out["fc2"].result().size() == 5u);

  rr::ForwardInput<rd::Last> first({"fc1"});
  first.data(recorder::KeptData::sample);
  recorder::Tracer<rr::ForwardInput<rd::Last>> tracer2({}, first);
  const at::Tensor x = torch::randn({8, 784});
  tracer2.run(mlp, x);
  BOOST_TEST(shape_of(first["fc1"].result()) == (std::vector<std::int64_t>{1, 784}),
             boost::test_tools::per_element());
  BOOST_TEST(torch::equal(first["fc1"].result(), x.narrow(0, 0, 1)));
}

// scio's activation_postproc: the recorded value is the layer's own output, the model goes on
// with the replacement.
BOOST_AUTO_TEST_CASE(postproc_replaces_the_output_after_recording) {
  models::MLP mlp;
  rr::ForwardOutput<rd::Last> out({"fc1", "fc2"});
  out.postproc(
      "fc1", [](const recorder::LayerCall&, const at::Tensor& y) { return torch::zeros_like(y); });
  recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer({}, out);
  const at::Tensor x = torch::randn({2, 784});
  torch::NoGradGuard no_grad;
  auto traced = tracer.run(mlp, x);
  BOOST_TEST(torch::equal(out["fc1"].result(), mlp->fc1(x)));
  const at::Tensor from_zero = mlp->fc3(torch::relu(mlp->fc2(torch::zeros({2, 100}))));
  BOOST_TEST(torch::equal(traced.output, from_zero));
  BOOST_TEST(torch::equal(out["fc2"].result(), mlp->fc2(torch::zeros({2, 100}))));
  // Post-processing changes values, not the recorded graph: same nodes and edges as a plain trace.
  const auto plain = recorder::Tracer<recorder::record::Structure>{}.run(mlp, x);
  BOOST_TEST(traced.graph.size() == plain.graph.size());
  BOOST_TEST((traced.graph.edges() == plain.graph.edges()));
}

// ForwardPre sees a module's input before an in-place forward changes it; ForwardInput after.
BOOST_AUTO_TEST_CASE(forward_pre_and_forward_input_differ_on_inplace_modules) {
  auto net = models::ResNet18();
  rr::ForwardPre<rd::Last> pre({"layer1.0.relu#0"});
  rr::ForwardInput<rd::Last> post({"layer1.0.relu#0"});
  rr::ForwardOutput<rd::Last> out({"layer1.0.relu#0", "layer1.0.bn1"});
  recorder::Tracer<rr::ForwardPre<rd::Last>, rr::ForwardInput<rd::Last>,
                   rr::ForwardOutput<rd::Last>>
      tracer({.mode = recorder::TrainMode::eval, .no_grad = true}, pre, post, out);
  tracer.run(net, torch::randn({1, 3, 64, 64}));
  BOOST_TEST(pre.keys() == std::vector<std::string>{"layer1.0.relu#0"},
             boost::test_tools::per_element());
  const at::Tensor before = pre["layer1.0.relu#0"].result();
  const at::Tensor after = post["layer1.0.relu#0"].result();
  BOOST_TEST(torch::equal(before, out["layer1.0.bn1"].result()));
  BOOST_TEST(before.min().item<float>() < 0.0f);
  BOOST_TEST(torch::equal(after, torch::relu(before)));
  BOOST_TEST(torch::equal(after, out["layer1.0.relu#0"].result()));
  BOOST_TEST(pre["layer1.0.relu#0"].label == "3-3");
}

BOOST_AUTO_TEST_CASE(modules_with_several_tensors_get_one_slot_each) {
  models::LSTMNet net;
  rr::ForwardOutput<rd::Last> out({"encoder"});
  recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer({.no_grad = true}, out);
  tracer.run(net, torch::randint(0, 20, {1, 100}, torch::kLong));
  const auto& enc = out["encoder"];
  BOOST_TEST(enc.tensors() == 3u);
  BOOST_TEST(shape_of(enc.result(0)) == (std::vector<std::int64_t>{1, 100, 512}),
             boost::test_tools::per_element());
  BOOST_TEST(shape_of(enc.result(1)) == (std::vector<std::int64_t>{2, 100, 512}),
             boost::test_tools::per_element());
  BOOST_TEST(shape_of(enc.result(2)) == (std::vector<std::int64_t>{2, 100, 512}),
             boost::test_tools::per_element());
}

// Welford on real activations: 10,000 forwards, against the two-pass moments of every output
// kept by a second recorder in the same tracer; merging two halves equals the whole.
BOOST_AUTO_TEST_CASE(running_moments_over_10000_forwards) {
  models::MLP mlp;
  rr::ForwardOutput<rd::Moments> moments({"fc3"});
  rr::ForwardOutput<rd::KeepAll> all({"fc3"});
  recorder::Tracer<rr::ForwardOutput<rd::Moments>, rr::ForwardOutput<rd::KeepAll>> tracer(
      {.no_grad = true}, moments, all);
  for (int i = 0; i < 10000; ++i) tracer.run(mlp, torch::randn({1, 784}) + 3.0);
  const auto m = moments["fc3"].result();
  const at::Tensor kept = torch::stack(all["fc3"].result()).to(torch::kDouble);
  const at::Tensor mean = kept.mean(0);
  const at::Tensor var = (kept - mean).pow(2).sum(0) / (10000 - 1);
  BOOST_TEST(m.count == 10000u);
  BOOST_TEST(torch::allclose(m.mean, mean, 1e-6, 0.0));
  BOOST_TEST(torch::allclose(m.variance, var, 1e-6, 0.0));

  // Two recorders over halves, merged, equal the whole.
  rr::ForwardOutput<rd::Moments> first({"fc3"}), second({"fc3"});
  recorder::Tracer<rr::ForwardOutput<rd::Moments>> t1({.no_grad = true}, first),
      t2({.no_grad = true}, second);
  torch::manual_seed(1);
  std::vector<at::Tensor> inputs;
  for (int i = 0; i < 2000; ++i) inputs.push_back(torch::randn({1, 784}));
  rr::ForwardOutput<rd::Moments> whole({"fc3"});
  recorder::Tracer<rr::ForwardOutput<rd::Moments>> tw({.no_grad = true}, whole);
  for (int i = 0; i < 2000; ++i) {
    tw.run(mlp, inputs[i]);
    (i < 700 ? t1 : t2).run(mlp, inputs[i]);
  }
  auto merged = first["fc3"].state();
  rd::Moments{}.merge(merged, second["fc3"].state());
  const auto w = whole["fc3"].result();
  const auto mm = rd::Moments{}.result(merged);
  BOOST_TEST(mm.count == 2000u);
  BOOST_TEST(torch::allclose(mm.mean, w.mean, 1e-12, 1e-15));
  BOOST_TEST(torch::allclose(mm.variance, w.variance, 1e-12, 1e-15));
}

// Gradients of ResNet-18's layer4 output, against a hook registered by hand on the very same
// tensor (from a post-processing step, which sees the output in flight).
BOOST_AUTO_TEST_CASE(resnet18_layer4_gradients_equal_register_hook) {
  auto net = models::ResNet18();
  rr::BackwardOutput<rd::KeepAll> grads({"layer4", "layer4.1.conv2"});
  rr::BackwardInput<rd::Sum> fc_in({"fc"});
  std::vector<at::Tensor> by_hand;
  grads.postproc("layer4", [&](const recorder::LayerCall&, const at::Tensor& y) {
    y.register_hook([&](const at::Tensor& g) { by_hand.push_back(g.clone()); });
    return y;
  });
  recorder::Tracer<rr::BackwardOutput<rd::KeepAll>, rr::BackwardInput<rd::Sum>> tracer(
      {.mode = recorder::TrainMode::eval}, grads, fc_in);
  at::Tensor fc_in_sum;
  for (int i = 0; i < 2; ++i) {
    auto traced = tracer.run(net, torch::randn({2, 3, 64, 64}));
    BOOST_TEST(grads["layer4"].samples() == static_cast<std::uint64_t>(i));  // before backward
    traced.output.sum().backward();
  }
  const auto& kept = grads["layer4"].result();
  BOOST_REQUIRE(kept.size() == 2u);
  BOOST_REQUIRE(by_hand.size() == 2u);
  BOOST_TEST(shape_of(kept[0]) == (std::vector<std::int64_t>{2, 512, 2, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(torch::equal(kept[0], by_hand[0]));
  BOOST_TEST(torch::equal(kept[1], by_hand[1]));
  BOOST_TEST(!kept[0].requires_grad());
  BOOST_TEST(grads["layer4.1.conv2"].samples() == 2u);
  // d(sum of fc outputs)/d(fc input) is the column sums of fc's weight for every row; two runs.
  const at::Tensor expected = net->fc->weight.sum(0).expand({2, 512}) * 2;
  BOOST_TEST(fc_in["fc"].samples() == 2u);
  BOOST_TEST(
      torch::allclose(fc_in["fc"].result(), expected, 1e-4, 1e-5));  // 1,000-term sums, other order
}

BOOST_AUTO_TEST_CASE(a_hook_that_outlives_its_recording_does_nothing) {
  models::MLP mlp;
  at::Tensor y;
  {
    rr::BackwardOutput<rd::Sum> grads({"fc2"});
    recorder::Tracer<rr::BackwardOutput<rd::Sum>> tracer({}, grads);
    y = tracer.run(mlp, torch::randn({1, 784})).output;
  }
  y.sum().backward();  // the recording is gone: the hook finds nothing to do
  BOOST_TEST(mlp->fc1->weight.grad().defined());
}

BOOST_AUTO_TEST_CASE(keep_all_cap_names_the_layer_and_keeps_what_it_recorded) {
  models::MLP mlp;
  rr::ForwardOutput<rd::KeepAll> out({"fc2"}, rd::KeepAll{.max_bytes = 3 * 50 * 4});
  recorder::Tracer<rr::ForwardOutput<rd::KeepAll>> tracer({.no_grad = true}, out);
  for (int i = 0; i < 3; ++i) tracer.run(mlp, torch::randn({1, 784}));
  const std::string message = test::nested_error_of([&] {
    tracer.run(mlp, torch::randn({1, 784}));
  });
  BOOST_TEST_INFO(message);
  BOOST_TEST(contains(
      message,
      "recording forward_output of layer 'fc2' (Linear, 1-2) with reduce::keep_all failed"));
  BOOST_TEST(contains(message, "keep-all memory cap of 600 bytes exceeded after 3 samples"));
  BOOST_TEST(out["fc2"].samples() == 3u);
  BOOST_TEST(out["fc2"].result().size() == 3u);

  // The error comes out of the forward as a TraceError with a renderable partial trace.
  try {
    tracer.run(mlp, torch::randn({1, 784}));
    BOOST_FAIL("no exception");
  } catch (const recorder::TraceError& e) {
    BOOST_REQUIRE(e.partial_trace() != nullptr);
    BOOST_TEST(
        contains(recorder::render_to_string<recorder::backend::Dot>(*e.partial_trace()), "fc2"));
  }
}

BOOST_AUTO_TEST_CASE(a_shape_change_names_the_layer_and_keeps_the_sum) {
  models::MLP mlp;
  rr::ForwardOutput<rd::Sum> out({"fc3"});
  recorder::Tracer<rr::ForwardOutput<rd::Sum>> tracer({.no_grad = true}, out);
  tracer.run(mlp, torch::randn({4, 784}));
  const at::Tensor before = out["fc3"].result().clone();
  const std::string message = test::nested_error_of([&] {
    tracer.run(mlp, torch::randn({3, 784}));
  });
  BOOST_TEST_INFO(message);
  BOOST_TEST(contains(
      message, "recording forward_output of layer 'fc3' (Linear, 1-3) with reduce::sum failed"));
  BOOST_TEST(torch::equal(out["fc3"].result(), before));
  BOOST_TEST(out["fc3"].samples() == 1u);
  tracer.run(mlp, torch::randn({4, 784}));  // the recording goes on
  BOOST_TEST(out["fc3"].samples() == 2u);
}

BOOST_AUTO_TEST_CASE(an_exception_mid_forward_leaves_the_recording_consistent) {
  auto net = std::make_shared<BrokenImpl>();
  torch::nn::ModuleHolder<BrokenImpl> holder(net);
  rr::ForwardOutput<rd::KeepAll> out({"fc1"});
  recorder::Tracer<rr::ForwardOutput<rd::KeepAll>> tracer({}, out);
  BOOST_CHECK_THROW(tracer.run(holder, torch::randn({1, 4})), recorder::TraceError);
  BOOST_TEST(out["fc1"].samples() == 1u);
  net->broken = false;
  tracer.run(holder, torch::randn({1, 4}));
  BOOST_TEST(out["fc1"].samples() == 2u);
}

// A bare path selects every call of its module: one record per call, keyed "fc#0", "fc#1"
// (the graph's `path_address`); the bare path itself names no single record.
BOOST_AUTO_TEST_CASE(a_bare_path_records_every_call_of_a_module_called_twice) {
  TempDir dir("twice");
  torch::nn::ModuleHolder<TwiceImpl> net(std::make_shared<TwiceImpl>());
  rr::ForwardOutput<rd::KeepAll> out({"fc"});
  recorder::Tracer<rr::ForwardOutput<rd::KeepAll>> tracer({.no_grad = true}, out);
  const at::Tensor x = torch::randn({2, 3});
  const auto traced = tracer.run(net, x);
  tracer.run(net, x * 2);
  using V = std::vector<std::string>;
  BOOST_TEST(out.keys() == (V{"fc#0", "fc#1"}), boost::test_tools::per_element());
  torch::NoGradGuard no_grad;
  for (int k = 0; k < 2; ++k) {
    const at::Tensor in = k == 0 ? x : x * 2;
    const at::Tensor first = net->fc.holder()->forward(in);
    BOOST_TEST(torch::equal(out["fc#0"].result()[k], first));
    BOOST_TEST(torch::equal(out["fc#1"].result()[k], net->fc.holder()->forward(first)));
  }
  BOOST_TEST(out["fc#0"].samples() == 2u);
  BOOST_TEST(out["fc#1"].samples() == 2u);
  BOOST_TEST(out[recorder::by_path("fc", 1)].key == "fc#1");
  BOOST_TEST(out["1-2"].key == "fc#1");  // each call has its own label, as in the summary
  BOOST_TEST(test::error_of<recorder::AmbiguousLayer>([&] { (void)out["fc"]; }) ==
             "recorder: layer 'fc' is ambiguous: 2 recorded layers match: fc#0, fc#1");
  BOOST_TEST(
      test::error_of<recorder::UnknownLayer>([&] { (void)out["fc#2"]; }) ==
      "recorder: unknown layer 'fc#2': no recorded layer has this address; recorded: fc#0, fc#1");

  // The graph-wide resolution agrees: the bare path is both calls, each named by its key, and
  // the per-call matcher selects the same calls from what a record keeps.
  const auto calls = recorder::resolve(traced.graph, "fc");
  BOOST_REQUIRE(calls.size() == 2u);
  for (std::size_t k = 0; k < calls.size(); ++k) {
    const auto& rec = *out.records()[k];
    BOOST_TEST(recorder::path_address(traced.graph, calls[k]) == rec.key);
    BOOST_TEST(recorder::resolve_one(traced.graph, rec.key) == calls[k]);
    BOOST_TEST(rec.label == recorder::depth_index_label(traced.graph, calls[k]));
    BOOST_TEST(recorder::matches("fc", rec.facts()));
    BOOST_TEST(recorder::matches(rec.key, rec.facts()));
  }

  // Saved under the same keys.
  const auto files = recorder::save_per_layer(out, dir.path);
  BOOST_TEST(files.size() == 2u);
  BOOST_TEST(files.count("fc#0") == 1u);
  BOOST_TEST(files.count("fc#1") == 1u);
  recorder::save(out, dir.path / "all.pt");
  const auto loaded = recorder::load_recording(dir.path / "all.pt");
  BOOST_TEST(loaded.size() == 2u);
  BOOST_TEST(loaded.count("fc#1") == 1u);
}

BOOST_AUTO_TEST_CASE(remove_returns_the_recording) {
  models::MLP mlp;
  rr::ForwardOutput<rd::Mean> out({recorder::by_class("Linear")});
  recorder::Tracer<rr::ForwardOutput<rd::Mean>> tracer({.no_grad = true}, out);
  for (int i = 0; i < 4; ++i) tracer.run(mlp, torch::randn({2, 784}));
  auto fc2 = out.remove("fc2");
  BOOST_TEST(fc2.key == "fc2");
  BOOST_TEST(fc2.samples() == 4u);
  BOOST_TEST(shape_of(fc2.result()) == (std::vector<std::int64_t>{2, 50}),
             boost::test_tools::per_element());
  BOOST_TEST(out.keys() == (std::vector<std::string>{"fc1", "fc3"}),
             boost::test_tools::per_element());
  tracer.run(mlp, torch::randn({2, 784}));  // recorded again from now on
  BOOST_TEST(out["fc2"].samples() == 1u);
  BOOST_TEST(out["fc1"].samples() == 5u);
}

BOOST_AUTO_TEST_CASE(save_and_load_back) {
  TempDir dir("save");
  models::MLP mlp;
  rr::ForwardOutput<rd::Moments> moments({"fc2", "fc3"});
  rr::ForwardInput<rd::KeepAll> inputs({"fc3"}, rd::KeepAll{});
  inputs.data(recorder::KeptData::sample);
  recorder::Tracer<rr::ForwardOutput<rd::Moments>, rr::ForwardInput<rd::KeepAll>> tracer(
      {.no_grad = true}, moments, inputs);
  for (int i = 0; i < 3; ++i) tracer.run(mlp, torch::randn({4, 784}));

  recorder::save(moments, dir.path / "moments.pt");
  recorder::save(inputs, dir.path / "inputs.pt");
  const auto m = recorder::load_recording(dir.path / "moments.pt");
  BOOST_REQUIRE(m.size() == 2u);
  const auto fc3 = m.at("fc3").toGenericDict();
  BOOST_TEST(torch::equal(fc3.at("mean").toTensor(), moments["fc3"].result().mean));
  BOOST_TEST(torch::equal(fc3.at("variance").toTensor(), moments["fc3"].result().variance));
  BOOST_TEST(fc3.at("count").toInt() == 3);
  const auto in = recorder::load_recording(dir.path / "inputs.pt");
  const auto list = in.at("fc3").toTensorList();
  BOOST_REQUIRE(list.size() == 3u);
  BOOST_TEST(torch::equal(list.get(2), inputs["fc3"].result()[2]));
  BOOST_TEST(shape_of(list.get(0)) == (std::vector<std::int64_t>{1, 50}),
             boost::test_tools::per_element());

  // One file per layer, torchfunc style.
  const auto files = recorder::save_per_layer(moments, dir.path / "per-layer");
  BOOST_REQUIRE(files.size() == 2u);
  BOOST_TEST(files.at("fc2") == dir.path / "per-layer" / "fc2.pt");
  const auto one = recorder::load_pickle(files.at("fc2")).toGenericDict();
  BOOST_TEST(torch::equal(one.at("mean").toTensor(), moments["fc2"].result().mean));

  // An unwritable place is an error naming it, and nothing is half-written.
  const std::string message = test::error_of<std::runtime_error>(
      [&] { recorder::save(moments, dir.path / "missing" / "x.pt"); });
  BOOST_TEST(contains(message, "missing/x.pt"));
  BOOST_TEST(!std::filesystem::exists(dir.path / "missing"));
  BOOST_TEST(test::error_of<recorder::FileError>([&] {
               (void)recorder::load_recording(dir.path / "nothing.pt");
             }) == "recorder: cannot read '" + (dir.path / "nothing.pt").string() +
                       "': No such file or directory");
  // Every writer follows one rule: it makes its target, never a missing parent folder.
  BOOST_TEST(test::error_of<recorder::FileError>([&] {
               recorder::save(moments, dir.path / "missing" / "x.pt");
             }) == "recorder: cannot write '" + (dir.path / "missing" / "x.pt").string() +
                       "': No such file or directory (folder '" + (dir.path / "missing").string() +
                       "' does not exist)");
  BOOST_TEST(test::error_of<recorder::FileError>([&] {
               recorder::save_per_layer(moments, dir.path / "missing" / "sub");
             }) == "recorder: cannot create folder '" + (dir.path / "missing" / "sub").string() +
                       "': No such file or directory (folder '" + (dir.path / "missing").string() +
                       "' does not exist)");
  BOOST_TEST(!std::filesystem::exists(dir.path / "missing"));
}

// A reduction added by its header alone (policies/reduction/abs_max.hpp): recorded on a real
// model, saved for Python, shown on hover and named in the summary's time line, with no code of
// its own in the saver, the facts or the timing.
BOOST_AUTO_TEST_CASE(a_new_reduction_records_saves_and_shows_with_no_code_of_its_own) {
  TempDir dir("abs_max");
  models::MLP mlp;
  rr::ForwardOutput<rd::AbsMax> amax({"fc2"});
  recorder::Tracer<rr::ForwardOutput<rd::AbsMax>> tracer({.no_grad = true}, amax);
  std::vector<at::Tensor> inputs;
  for (int i = 0; i < 3; ++i) inputs.push_back(torch::randn({4, 784}) * (i + 1));
  tracer.run(mlp, inputs[0]);
  tracer.run(mlp, inputs[1]);
  const auto trace = tracer.run(mlp, inputs[2]);
  at::Tensor want;
  {
    torch::NoGradGuard no_grad;
    for (const at::Tensor& x : inputs) {
      const at::Tensor a = mlp->fc2(torch::relu(mlp->fc1(x))).abs();
      want = want.defined() ? at::maximum(want, a) : a;
    }
  }
  const at::Tensor got = amax["fc2"].result();
  BOOST_TEST(shape_of(got) == (std::vector<std::int64_t>{4, 50}), boost::test_tools::per_element());
  BOOST_TEST(torch::allclose(got, want));

  recorder::save(amax, dir.path / "amax.pt");
  const auto loaded = recorder::load_recording(dir.path / "amax.pt");
  BOOST_TEST(torch::equal(loaded.at("fc2").toTensor(), got));

  const auto facts = recorder::facts_of(trace, amax);
  BOOST_REQUIRE(facts.size() == 1u);
  BOOST_TEST(facts[0].facts[0].second == "forward_output, reduce::abs_max");
  BOOST_TEST(facts[0].facts[1].second == "3");
  BOOST_TEST(facts[0].facts[2].first == "value");
  BOOST_TEST(contains(facts[0].facts[2].second, "[4, 50] float mean "));

  rr::Timing<rd::AbsMax> timing;
  recorder::Tracer<rr::Timing<rd::AbsMax>> timed({.no_grad = true}, timing);
  for (int i = 0; i < 2; ++i) timed.run(mlp, inputs[0]);
  BOOST_TEST(recorder::call_times(timing).statistic == "abs max of 2 runs");
}

// Module names are user strings: one called ":/x" (libtorch forbids only dots) must not write
// outside the folder, and two keys that sanitize alike get distinct files.
BOOST_AUTO_TEST_CASE(per_layer_files_are_sanitized) {
  TempDir dir("hostile");
  torch::nn::ModuleHolder<HostileImpl> net(std::make_shared<HostileImpl>());
  rr::ForwardOutput<rd::Last> out({recorder::by_class("Linear")});
  recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer({.no_grad = true}, out);
  tracer.run(net, torch::randn({1, 2}));
  const auto files = recorder::save_per_layer(out, dir.path);
  BOOST_REQUIRE(files.size() == 2u);
  BOOST_TEST(files.at("/x") == dir.path / "_x.pt");
  BOOST_TEST(files.at("_x") == dir.path / "_x~2.pt");
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) n += e.is_regular_file();
  BOOST_TEST(n == 2u);
}

#ifdef RECORDER_PYTHON
// The Python cross-check: C++ writes the weights, the inputs and the recorded activations of
// the MLP and ResNet-18; Debian's python3-torch loads them and recomputes the activations
// with torch.nn.functional from the same weights.
BOOST_AUTO_TEST_CASE(python_loads_and_agrees) {
  TempDir dir("python");
  auto export_weights = [&](torch::nn::Module& m, const std::string& file) {
    c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
    for (const auto& p : m.named_parameters()) d.insert(p.key(), p.value().detach());
    for (const auto& b : m.named_buffers()) d.insert(b.key(), b.value());
    recorder::detail::write_pickle(d, dir.path / file);
  };
  {
    models::MLP mlp;
    const at::Tensor x = torch::randn({5, 784});
    rr::ForwardOutput<rd::KeepAll> out({recorder::by_class("Linear")});
    rr::ForwardInput<rd::Sum> in({"fc2", "fc3"});
    recorder::Tracer<rr::ForwardOutput<rd::KeepAll>, rr::ForwardInput<rd::Sum>> tracer(
        {.no_grad = true}, out, in);
    tracer.run(mlp, x);
    tracer.run(mlp, x * 2);
    export_weights(*mlp, "mlp_weights.pt");
    recorder::detail::write_pickle(x, dir.path / "mlp_input.pt");
    recorder::save(out, dir.path / "mlp_outputs.pt");
    recorder::save(in, dir.path / "mlp_inputs_sum.pt");
  }
  {
    auto net = models::ResNet18();
    const at::Tensor x = torch::randn({2, 3, 64, 64});
    rr::ForwardOutput<rd::Last> out({"layer1", "layer4.1.bn2", "layer4", "fc"});
    recorder::Tracer<rr::ForwardOutput<rd::Last>> tracer(
        {.mode = recorder::TrainMode::eval, .no_grad = true}, out);
    tracer.run(net, x);
    export_weights(*net, "resnet_weights.pt");
    recorder::detail::write_pickle(x, dir.path / "resnet_input.pt");
    recorder::save(out, dir.path / "resnet_outputs.pt");
  }
  const std::string command =
      std::string(RECORDER_PYTHON) + " " + RECORDER_PYTHON_CHECK + " " + dir.path.string();
  BOOST_TEST_MESSAGE(command);
  BOOST_TEST(std::system(command.c_str()) == 0);
}
#endif

BOOST_AUTO_TEST_SUITE_END()
