// record::Timing (capture/timing.hpp): every module call timed once per run with the path and
// nesting of the graph, on the templated ResNet-18 and its TorchScript twin; reductions over
// runs equal the same reduction of the kept durations; a deliberate sleep lies in its call's
// own time; a forward that throws leaves no run behind; the Chrome trace nests. No assertion
// compares two measured times or bounds one from above: what a loaded machine can only lengthen
// is bounded from below, the rest is structure (issue 41).
#define BOOST_TEST_MODULE capture_timing
#include <boost/test/unit_test.hpp>

#include "../render/json_validator.hpp"
#include "models/resnet.hpp"
#include <recorder/capture/facts.hpp>
#include <recorder/capture/timing.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/summary.hpp>
#include <recorder/render/svg.hpp>
#include <recorder/render/time_dot.hpp>
#include <recorder/script.hpp>

#include <chrono>
#include <sstream>
#include <cmath>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#ifndef RECORDER_SCRIPT_MODELS
#error "RECORDER_SCRIPT_MODELS must name the folder of the TorchScript test models"
#endif
#ifndef RECORDER_TIMING_OUT
#error "RECORDER_TIMING_OUT must name the folder the Chrome traces are written to"
#endif

namespace {

namespace rr = recorder::record;
namespace rd = recorder::reduce;
using namespace std::chrono_literals;

const recorder::TraceOptions eval{.mode = recorder::TrainMode::eval, .no_grad = true};

/// A composite block that sleeps 30 ms in its forward, around a Linear.
struct SleepyImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{register_module("fc", torch::nn::Linear(16, 16))};
  template <recorder::tensor_like T>
  T forward(T x) {
    std::this_thread::sleep_for(30ms);
    return relu(fc(x));
  }
};
TORCH_MODULE(Sleepy);

struct NetImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> first{register_module("first", torch::nn::Linear(16, 16))};
  recorder::Module<Sleepy> slow{register_module("slow", Sleepy())};
  recorder::Module<torch::nn::Linear> last{register_module("last", torch::nn::Linear(16, 4))};
  template <recorder::tensor_like T>
  T forward(T x) {
    return last(slow(first(x)));
  }
};
TORCH_MODULE(Net);

/// Checks one run against the trace of the same forward: one span per module call, in call
/// order, keyed and nested as the graph says, children inside their parents.
void check_run(const recorder::TimedRun& run, const recorder::Trace& t) {
  std::vector<recorder::NodeId> calls;
  for (auto c : recorder::views::module_calls(t.graph)) calls.push_back(c);
  BOOST_TEST_REQUIRE(run.spans.size() == calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const recorder::TimedSpan& s = run.spans[i];
    BOOST_TEST_CONTEXT("span " << i << " " << s.key) {
      BOOST_TEST(s.call.value == calls[i].value);
      BOOST_TEST(s.key == recorder::path_address(t.graph, calls[i]));
      BOOST_TEST(s.depth == t.graph.node(calls[i]).depth);
      BOOST_TEST(s.duration_ns >= 0);
      BOOST_TEST(s.self_ns(run.spans) >= 0);
      const recorder::NodeId parent = t.graph.node(calls[i]).parent;
      if (!parent.valid()) {
        BOOST_TEST(s.parent == -1);
        continue;
      }
      BOOST_TEST_REQUIRE(s.parent >= 0);
      const recorder::TimedSpan& p = run.spans[static_cast<std::size_t>(s.parent)];
      BOOST_TEST(p.call.value == parent.value);
      BOOST_TEST(p.start_ns <= s.start_ns);
      BOOST_TEST(s.start_ns + s.duration_ns <= p.start_ns + p.duration_ns);
    }
  }
  BOOST_TEST(run.spans.front().start_ns + run.spans.front().duration_ns <= run.duration_ns);
}

/// Checks the run's ops against the trace of the same forward: one per function node, in
/// graph order, each inside its enclosing call's span, siblings apart, with the input shapes
/// and dtypes of the graph's edges into it. Returns how many there were.
std::size_t check_ops(const recorder::TimedRun& run, const recorder::Trace& t) {
  const recorder::Graph& g = t.graph;
  std::vector<recorder::NodeId> fns;
  for (auto f : recorder::views::of_kind(g, recorder::NodeKind::function)) fns.push_back(f);
  BOOST_TEST_REQUIRE(run.ops.size() == fns.size());
  std::int64_t previous_end = 0;
  for (std::size_t i = 0; i < fns.size(); ++i) {
    const recorder::TimedOp& op = run.ops[i];
    BOOST_TEST_CONTEXT("op " << i << " " << run.name_of(op)) {
      BOOST_TEST(op.node.value == fns[i].value);
      BOOST_TEST(run.name_of(op) == g.function(fns[i]).op);
      BOOST_TEST(op.duration_ns >= 0);
      BOOST_TEST(op.start_ns >= previous_end);  // ops run one after another
      previous_end = op.start_ns + op.duration_ns;
      BOOST_TEST_REQUIRE(op.parent >= 0);
      const recorder::TimedSpan& p = run.spans[static_cast<std::size_t>(op.parent)];
      // The innermost timed call around it: its graph parent, or for an op in a call inferred
      // inside a leaf, the leaf.
      BOOST_TEST(g.within(fns[i], p.call));
      BOOST_TEST(p.start_ns <= op.start_ns);
      BOOST_TEST(op.start_ns + op.duration_ns <= p.start_ns + p.duration_ns);
      std::vector<std::string> want;
      for (const recorder::Edge& e : g.edges())
        if (e.to == fns[i])
          want.push_back(recorder::to_string(g.shape(e.from)) + " " +
                         std::string(g.tensor(e.from).dtype));
      std::vector<std::string> got;
      for (const recorder::TimedInput& in : run.inputs_of(op))
        got.push_back(recorder::to_string(run.dims_of(in)) + " " + std::string(run.dtype_of(in)));
      BOOST_TEST(got == want, boost::test_tools::per_element());
    }
  }
  return fns.size();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_resnet18_call_once_per_run_nested_as_the_graph) {
  torch::manual_seed(0);
  auto model = models::ResNet18();
  rr::Timing<rd::KeepAll> timing;
  recorder::Tracer<rr::Timing<rd::KeepAll>> tracer(eval, timing);
  const at::Tensor x = torch::randn({1, 3, 64, 64});
  std::vector<recorder::Trace> traces;
  for (int r = 0; r < 3; ++r) traces.push_back(tracer.run(model, x));
  BOOST_TEST_REQUIRE(timing.runs().size() == 3u);
  for (int r = 0; r < 3; ++r) check_run(timing.runs()[r], traces[r]);
  BOOST_TEST(timing.runs()[0].spans.size() == 76u);
  BOOST_TEST(timing.keys().size() == 76u);
  BOOST_TEST(timing.keys()[0] == "<root>");
  BOOST_TEST(timing.keys()[1] == "conv1");
  // KeepAll keeps each run's duration of each call, in run order.
  const std::vector<double>& kept = timing.result("layer2.0.downsample");
  BOOST_TEST_REQUIRE(kept.size() == 3u);
  std::size_t at = 0;
  while (timing.runs()[0].spans[at].key != "layer2.0.downsample") ++at;
  for (int r = 0; r < 3; ++r)
    BOOST_TEST(kept[r] == static_cast<double>(timing.runs()[r].spans[at].duration_ns));
  BOOST_TEST(timing.samples("layer1.0.relu#1") == 3u);  // the block's relu, called twice

  // The ops of the composite forwards: a residual add per block and the flatten, each keyed
  // by its call, name and index, and reduced over the runs like the calls.
  for (int r = 0; r < 3; ++r) BOOST_TEST(check_ops(timing.runs()[r], traces[r]) == 9u);
  BOOST_TEST(timing.op_keys().size() == 9u);
  BOOST_TEST(timing.op_keys().front() == "layer1.0/add#0");
  BOOST_TEST(timing.op_keys().back() == "<root>/flatten#0");
  const std::vector<double>& add = timing.result("layer3.1/add#0");
  BOOST_TEST_REQUIRE(add.size() == 3u);
  for (int r = 0; r < 3; ++r)
    BOOST_TEST(add[r] == static_cast<double>(timing.runs()[r].ops[5].duration_ns));
  BOOST_CHECK_EXCEPTION(
      timing.result("layer3.1/add#1"), std::out_of_range, [](const std::out_of_range& e) {
        return std::string(e.what()).find("'layer3.1/add#1'") != std::string::npos;
      });
}

BOOST_AUTO_TEST_CASE(aten_ops_inside_leaves_are_timed_inside_their_leaf) {
  torch::manual_seed(0);
  auto model = models::ResNet18();
  rr::Timing<rd::Quantile> timing;
  recorder::Tracer<rr::AtenOps, rr::Timing<rd::Quantile>> tracer(eval, rr::AtenOps{}, timing);
  const at::Tensor x = torch::randn({1, 3, 64, 64});
  std::vector<recorder::Trace> traces;
  for (int r = 0; r < 3; ++r) traces.push_back(tracer.run(model, x));
  for (int r = 0; r < 3; ++r) {
    check_run(timing.runs()[r], traces[r]);
    // conv2d in 20 convolutions, batch_norm in 20 norms, relu 17 times (once in the stem,
    // twice in each of 8 blocks), max_pool2d, adaptive_avg_pool2d, t and addmm in the Linear
    // (libtorch 1.13's C++ Linear); 8 adds and the flatten of the composite forwards.
    BOOST_TEST(check_ops(timing.runs()[r], traces[r]) == 70u);
  }
  const recorder::TimedRun& run = timing.runs()[0];
  BOOST_TEST(run.name_of(run.ops[0]) == "conv2d");
  BOOST_TEST(run.spans[static_cast<std::size_t>(run.ops[0].parent)].key == "conv1");
  BOOST_TEST(timing.op_keys()[0] == "conv1/conv2d#0");
  // The median over 3 runs is the middle one of the kept durations.
  std::vector<double> d;
  for (const recorder::TimedRun& r : timing.runs()) d.push_back(double(r.ops[0].duration_ns));
  std::sort(d.begin(), d.end());
  BOOST_TEST(timing.result("conv1/conv2d#0").value == d[1]);
  BOOST_TEST(timing.samples("conv1/conv2d#0") == 3u);
}

BOOST_AUTO_TEST_CASE(reductions_over_runs_equal_the_reduction_of_the_kept_durations) {
  torch::manual_seed(0);
  Net net;
  rr::Timing<rd::Mean> mean;
  rr::Timing<rd::MinMax> extremes;
  rr::Timing<rd::Moments> moments;
  const at::Tensor x = torch::randn({2, 16});
  // One tracer per timing, run in turn on the same model: each sees its own runs.
  recorder::Tracer<rr::Timing<rd::Mean>> a(eval, mean);
  recorder::Tracer<rr::Timing<rd::MinMax>> b(eval, extremes);
  recorder::Tracer<rr::Timing<rd::Moments>> c(eval, moments);
  for (int r = 0; r < 4; ++r) {
    a.run(net, x);
    b.run(net, x);
    c.run(net, x);
  }
  const auto durations = [](const auto& timing, const std::string& key) {
    std::vector<double> out;
    for (const recorder::TimedRun& run : timing.runs())
      for (const recorder::TimedSpan& s : run.spans)
        if (s.key == key) out.push_back(static_cast<double>(s.duration_ns));
    return out;
  };
  for (const std::string key : {"<root>", "first", "slow", "slow.fc", "last"}) {
    BOOST_TEST_CONTEXT(key) {
      std::vector<double> d = durations(mean, key);
      BOOST_TEST_REQUIRE(d.size() == 4u);
      double sum = 0;
      for (double v : d) sum += v;
      BOOST_TEST(mean.result(key) == sum / 4, boost::test_tools::tolerance(1e-12));
      d = durations(extremes, key);
      BOOST_TEST(extremes.result(key).min == *std::min_element(d.begin(), d.end()));
      BOOST_TEST(extremes.result(key).max == *std::max_element(d.begin(), d.end()));
      d = durations(moments, key);
      double m = 0;
      for (double v : d) m += v / 4;
      double var = 0;
      for (double v : d) var += (v - m) * (v - m) / 3;  // the default correction: 1
      BOOST_TEST(moments.result(key).count == 4u);
      BOOST_TEST(moments.result(key).mean == m, boost::test_tools::tolerance(1e-9));
      BOOST_TEST(moments.result(key).variance == var, boost::test_tools::tolerance(1e-6));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_deliberate_sleep_lies_in_its_calls_own_time) {
  Net net;
  rr::Timing<rd::KeepAll> timing;
  recorder::Tracer<rr::Timing<rd::KeepAll>> tracer(eval, timing);
  tracer.run(net, torch::randn({2, 16}));
  tracer.run(net, torch::randn({2, 16}));
  for (const recorder::TimedRun& run : timing.runs()) {
    // <root>, first, slow, slow.fc, last
    BOOST_TEST_REQUIRE(run.spans.size() == 5u);
    const recorder::TimedSpan& root = run.spans[0];
    const recorder::TimedSpan& slow = run.spans[2];
    BOOST_TEST(slow.key == "slow");
    // The sleep is at least 30 ms, in the sleeping call's own time (not in its Linear's), and
    // so in its parent's. A loaded machine only lengthens it: no upper bound, and no comparison
    // with the other calls' measured times.
    BOOST_TEST(slow.duration_ns >= 30'000'000);
    BOOST_TEST(slow.self_ns(run.spans) >= 30'000'000);
    BOOST_TEST(root.duration_ns >= slow.duration_ns);
    // Self time = time - the children's time; the root's children sum with its self time.
    std::int64_t children = 0;
    for (const recorder::TimedSpan& s : run.spans)
      if (s.parent == 0) children += s.duration_ns;
    BOOST_TEST(root.self_ns(run.spans) + children == root.duration_ns);
  }
}

BOOST_AUTO_TEST_CASE(summary_time_columns_and_the_time_coloured_drawing_show_the_hot_layer) {
  Net net;
  rr::Timing<rd::Mean> timing;
  recorder::Tracer<rr::Structure, rr::Timing<rd::Mean>> tracer(eval, rr::Structure{}, timing);
  recorder::Trace t;
  for (int r = 0; r < 3; ++r) t = tracer.run(net, torch::randn({2, 16}));
  const recorder::CallTimes times = recorder::call_times(timing);
  BOOST_TEST(times.statistic == "mean of 3 runs");
  BOOST_TEST(times.ns.size() == 5u);
  BOOST_TEST(times.ns.at("slow") == timing.result("slow"));

  const recorder::SummaryOptions o{
      .columns = {recorder::SummaryColumn::output_size, recorder::SummaryColumn::time,
                  recorder::SummaryColumn::self_time, recorder::SummaryColumn::time_percent},
      .times = &times};
  const recorder::SummaryTable table = recorder::summarize(t, o);
  BOOST_TEST_REQUIRE(table.rows.size() == 5u);  // Net, first, slow, slow.fc, last
  const recorder::SummaryRow& slow = table.rows[2];
  BOOST_TEST(slow.label == "Sleepy: 1-2");
  BOOST_TEST(*slow.time_ns >= 30e6);  // the sleep: a lower bound, whatever the load
  BOOST_TEST(*slow.time_ns <= *table.total_time_ns);
  BOOST_TEST(*slow.self_ns == *slow.time_ns - *table.rows[3].time_ns);
  double self = 0;
  for (const recorder::SummaryRow& r : table.rows) self += *r.self_ns;
  BOOST_TEST(self == *table.total_time_ns, boost::test_tools::tolerance(1e-9));
  // The percentages of a level and their parent's own share add up to the parent's.
  const auto percent = [](const std::string& cell) { return std::stod(cell); };
  BOOST_TEST(percent(table.rows[0].cells[3]) == 100.0);
  const double level = percent(table.rows[1].cells[3]) + percent(table.rows[2].cells[3]) +
                       percent(table.rows[4].cells[3]) +
                       *table.rows[0].self_ns / *table.total_time_ns * 100;
  BOOST_TEST(level == 100.0, boost::test_tools::tolerance(0.0002));  // 3 cells of +-0.005
  const std::string text = recorder::summary(t, o);
  BOOST_TEST(text.find("Total time: ") != std::string::npos);
  BOOST_TEST(text.find(" (mean of 3 runs)\n") != std::string::npos);

  // Coloured by time, in DOT and through Graphviz: each of the three calls drawn is filled, the
  // slowest measured (whichever it is: the colour of a given time is tested on fixed times, in
  // render_golden) with the darkest step.
  const std::string dot =
      recorder::render_to_string(t, {.depth = 1}, recorder::backend::TimeDot{.times = &times});
  BOOST_TEST(count(dot, "fillcolor=\"#") == 3u);
  BOOST_TEST(count(dot, "fillcolor=\"#7f0000\"") >= 1u);
  const std::string svg = recorder::render_to_string(
      t, {.depth = 1},
      recorder::backend::Svg{
          .timeout = std::chrono::milliseconds::zero(), .report = nullptr, .times = &times});
  BOOST_TEST(svg.find("fill=\"#7f0000\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(backward_spans_time_each_calls_backward_on_a_second_thread) {
  torch::manual_seed(0);
  auto model = models::ResNet18();
  rr::Timing<rd::Mean> timing(rd::Mean{}, {.backward = true});
  recorder::Tracer<rr::Timing<rd::Mean>> tracer({.mode = recorder::TrainMode::eval}, timing);
  for (int r = 0; r < 2; ++r) {
    const at::Tensor x = torch::randn({1, 3, 64, 64}).requires_grad_();
    const auto t = tracer.run(model, x);
    BOOST_TEST(recorder::backward_spans(timing.runs().back()).empty());  // no backward yet
    t.output.sum().backward();
  }
  for (const recorder::TimedRun& run : timing.runs()) {
    const std::vector<recorder::TimedSpan> back = recorder::backward_spans(run);
    // Every call: the input requires grad, so every call's backward is seen from both ends.
    BOOST_TEST_REQUIRE(back.size() == 76u);
    BOOST_TEST(back[0].key == "<root>");
    BOOST_TEST(back[0].start_ns >= run.duration_ns);  // the backward runs after the forward
    std::vector<std::int64_t> sibling_end(back.size() + 1, 0);
    for (std::size_t i = 0; i < back.size(); ++i) {
      const recorder::TimedSpan& s = back[i];
      BOOST_TEST_CONTEXT(s.key) {
        BOOST_TEST(s.duration_ns >= 0);
        const std::size_t p = s.parent < 0 ? back.size() : static_cast<std::size_t>(s.parent);
        if (s.parent >= 0) {
          BOOST_TEST(back[p].start_ns <= s.start_ns);
          BOOST_TEST(s.start_ns + s.duration_ns <= back[p].start_ns + back[p].duration_ns);
          BOOST_TEST(s.depth > back[p].depth);
        }
      }
    }
    // The model's children are sequential: their backwards run in reverse call order.
    std::vector<const recorder::TimedSpan*> children;
    for (const recorder::TimedSpan& s : back)
      if (s.parent == 0) children.push_back(&s);
    BOOST_TEST_REQUIRE(children.size() == 10u);
    std::stable_sort(children.begin(), children.end(),
                     [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
    std::vector<std::string> order;
    for (const recorder::TimedSpan* s : children) order.push_back(s->key);
    BOOST_TEST(order == (std::vector<std::string>{"fc", "avgpool", "layer4", "layer3", "layer2",
                                                  "layer1", "maxpool", "relu", "bn1", "conv1"}),
               boost::test_tools::per_element());
  }
  const std::string json = recorder::chrome_trace_json(timing.runs(), "ResNet");
  BOOST_TEST(recorder::testing::valid_json(json));
  BOOST_TEST(count(json, "\"cat\": \"backward\"") == 2u * 76u);
  BOOST_TEST(count(json, "\"name\": \"layer4.1 (backward)\", \"pid\": 1, \"tid\": 2") == 2u);
  BOOST_TEST(count(json, "\"args\": {\"name\": \"backward\"}") == 1u);
  std::filesystem::create_directories(RECORDER_TIMING_OUT);
  recorder::render_to_file(recorder::Trace{}, {.graph_name = "ResNet"},
                           std::filesystem::path(RECORDER_TIMING_OUT) / "resnet18_backward",
                           recorder::backend::ChromeTrace{.runs = &timing.runs()});
}

BOOST_AUTO_TEST_CASE(a_forward_that_throws_leaves_no_run_and_the_next_is_clean) {
  Net net;
  rr::Timing<rd::Mean> timing;
  recorder::Tracer<rr::Timing<rd::Mean>> tracer(eval, timing);
  tracer.run(net, torch::randn({2, 16}));
  BOOST_CHECK_THROW(tracer.run(net, torch::randn({2, 7})), std::exception);  // wrong shape
  BOOST_TEST(timing.runs().size() == 1u);
  BOOST_TEST(timing.samples("first") == 1u);
  const recorder::Trace t = tracer.run(net, torch::randn({2, 16}));
  BOOST_TEST_REQUIRE(timing.runs().size() == 2u);
  check_run(timing.runs()[1], t);
  BOOST_TEST(timing.samples("slow") == 2u);
}

BOOST_AUTO_TEST_CASE(torchscript_resnet18_timed_like_the_templated_one) {
  auto m =
      recorder::load_model(std::filesystem::path(RECORDER_SCRIPT_MODELS) / "resnet18_script.pt");
  rr::Timing<rd::KeepAll> timing;
  recorder::Tracer<rr::Timing<rd::KeepAll>> tracer(eval, timing);
  const recorder::Trace t1 = tracer.run(m, torch::zeros({1, 3, 64, 64}));
  const recorder::Trace t2 = tracer.run(m, torch::zeros({1, 3, 64, 64}));
  BOOST_TEST_REQUIRE(timing.runs().size() == 2u);
  check_run(timing.runs()[0], t1);
  check_run(timing.runs()[1], t2);
  BOOST_TEST(timing.runs()[0].spans.size() == 76u);
  BOOST_TEST(timing.runs()[0].spans[1].input_dims ==
             (std::vector<std::vector<std::int64_t>>{{1, 3, 64, 64}}));
  BOOST_TEST(check_ops(timing.runs()[0], t1) == 9u);
  BOOST_TEST(check_ops(timing.runs()[1], t2) == 9u);
  BOOST_TEST(timing.op_keys().front() == "layer1.0/add#0");

  // The Chrome trace: every call and op of both runs once, run 2 after run 1, valid JSON.
  const std::string json = recorder::chrome_trace_json(timing.runs(), "ResNet");
  BOOST_TEST(recorder::testing::valid_json(json));
  BOOST_TEST(count(json, "\"ph\": \"X\"") == 2u * (76u + 9u));
  BOOST_TEST(count(json, "\"cat\": \"user_annotation\"") == 2u * 76u);
  BOOST_TEST(count(json, "\"cat\": \"cpu_op\"") == 2u * 9u);
  BOOST_TEST(count(json, "\"name\": \"flatten\", \"pid\": 1, \"tid\": 1") == 2u);
  // The root call is named after the model's class, as every call by its module.
  BOOST_TEST(count(json, "\"name\": \"ResNet\", \"pid\": 1, \"tid\": 1") == 2u);
  BOOST_TEST(count(json, "<root>") == 0u);
  BOOST_TEST(count(json, "\"Input Dims\": [[1, 512, 1, 1]], \"Input type\": [\"Float\"]") == 2u);
  BOOST_TEST(count(json, "\"ph\": \"M\"") == 2u);
  BOOST_TEST(count(json, "\"name\": \"layer2.0.downsample\"") == 2u);
  BOOST_TEST(count(json, "\"Input Dims\": [[1, 3, 64, 64]]") == 4u);  // the root and conv1, twice
  BOOST_TEST(json.starts_with("{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\""));

  // Through the render entry points, for check_trace.py (JSON Schema and nesting, in CTest).
  std::filesystem::create_directories(RECORDER_TIMING_OUT);
  const auto file =
      recorder::render_to_file(t2, {}, std::filesystem::path(RECORDER_TIMING_OUT) / "resnet18",
                               recorder::backend::ChromeTrace{.runs = &timing.runs()});
  BOOST_TEST(file.filename() == "resnet18.trace.json");
  BOOST_CHECK_EXCEPTION(
      recorder::render_to_string<recorder::backend::ChromeTrace>(t2, {}), std::invalid_argument,
      [](const std::invalid_argument& e) {
        return std::string(e.what()).find("backend::ChromeTrace{.runs = &timing.runs()}") !=
               std::string::npos;
      });

  // The backward too, through the same hooks.
  rr::Timing<rd::Mean> backward(rd::Mean{}, {.backward = true});
  recorder::Tracer<rr::Timing<rd::Mean>> with_grad({.mode = recorder::TrainMode::eval}, backward);
  const auto traced = with_grad.run(m, torch::zeros({1, 3, 64, 64}).requires_grad_());
  traced.output.toTensor().sum().backward();
  BOOST_TEST(recorder::backward_spans(backward.runs().at(0)).size() == 76u);

  // The viewer's hover facts: each call's time over the two runs.
  const auto facts = recorder::facts_of(t2, timing);
  BOOST_TEST_REQUIRE(facts.size() == 76u);
  BOOST_TEST(facts[0].facts[0].first == "time");
  BOOST_TEST(facts[0].facts[0].second.find(" ms mean of 2 runs (min ") != std::string::npos);
  BOOST_TEST(facts[0].facts[1].second == "2");
}

BOOST_AUTO_TEST_CASE(the_readme_timing_snippet_compiles_and_runs) {
  auto model = models::ResNet18();
  const at::Tensor x = torch::randn({2, 3, 32, 32});  // 2: batch norm trains (no eval mode)
  const std::filesystem::path here = std::filesystem::current_path();
  const std::filesystem::path dir = std::filesystem::path(RECORDER_TIMING_OUT) / "readme";
  std::filesystem::create_directories(dir);
  std::filesystem::current_path(dir);
  std::ostringstream cout;
  // docs/reference.md, "Where the time goes" (std::cout written cout here):
  recorder::record::Timing<recorder::reduce::Mean> timing;
  recorder::Tracer<recorder::record::Structure, recorder::record::Timing<recorder::reduce::Mean>>
      tracer({.no_grad = true}, recorder::record::Structure{}, timing);
  recorder::Trace trace;
  for (int i = 0; i < 20; ++i) trace = tracer.run(model, x);
  double ms = timing.result("layer4") / 1e6;  // mean over the 20 runs
  recorder::render_to_file(trace, {}, "resnet18",
                           recorder::backend::ChromeTrace{.runs = &timing.runs()});
  const recorder::CallTimes times = recorder::call_times(timing);
  cout << recorder::summary(
      trace,
      {.columns = {recorder::SummaryColumn::output_size, recorder::SummaryColumn::time,
                   recorder::SummaryColumn::self_time, recorder::SummaryColumn::time_percent},
       .times = &times});
  recorder::render_to_file(trace, {.depth = 2}, "resnet18_time",
                           recorder::backend::TimeDot{.times = &times});
  std::filesystem::current_path(here);
  BOOST_TEST(ms > 0);
  BOOST_TEST(timing.samples("layer4") == 20u);
  BOOST_TEST(cout.str().find("(mean of 20 runs)") != std::string::npos);
  BOOST_TEST(std::filesystem::exists(dir / "resnet18_time.dot"));
  BOOST_TEST(std::filesystem::exists(dir / "resnet18.trace.json"));
}
