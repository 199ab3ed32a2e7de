/// Faults and concurrency: tracers on several threads, a recording handle shared by two of
/// them, and an exception thrown at each site a user can throw from (a composite forward, a
/// leaf, a reduction, a postproc callable, a render backend). Each leaves the recorder and the
/// recording consistent: what was recorded before is kept and the next run is clean.
#define BOOST_TEST_MODULE faults
#include <boost/test/unit_test.hpp>

#include "../support/errors.hpp"
#include "models/lstm.hpp"
#include "models/mlp.hpp"

#include <recorder/capture/timing.hpp>
#include <recorder/recorder.hpp>

#include <torch/torch.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rr = recorder::record;
namespace rd = recorder::reduce;

namespace {

std::string dot_of(const recorder::Trace& t) {
  return recorder::render_to_string<recorder::backend::Dot>(t, {.depth = std::nullopt});
}

bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() &&
         std::memcmp(a.contiguous().data_ptr(), b.contiguous().data_ptr(), a.nbytes()) == 0;
}

/// A composite that runs `fc`, then waits at a gate (when one is set), then may throw.
struct GatedImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{register_module("fc", torch::nn::Linear(4, 3))};
  recorder::Module<torch::nn::ReLU> act{register_module("act", torch::nn::ReLU())};
  std::function<void()> gate;  // runs between fc and act
  bool fail = false;

  template <recorder::tensor_like T>
  T forward(T x) {
    T y = fc(x);
    if (gate) gate();
    if (fail) throw std::runtime_error("the composite's own check failed");
    return act(y * 2);
  }
};
TORCH_MODULE(Gated);

}  // namespace

// ---- threads ------------------------------------------------------------------------------

// Each thread's session is its own (thread-local): two models traced at once give the traces
// and outputs each gives alone, byte for byte, however the threads interleave.
BOOST_AUTO_TEST_CASE(two_threads_trace_two_models_at_once_exactly) {
  torch::manual_seed(1);
  models::MLP mlp;
  models::LSTMNet lstm;
  const at::Tensor x = torch::randn({2, 784});
  const at::Tensor seq = torch::randint(0, 20, {5, 2}, torch::kLong);
  recorder::Tracer<rr::Structure> tracer({.no_grad = true});
  const auto mlp_alone = tracer.run(mlp, x);
  const auto lstm_alone = tracer.run(lstm, seq);
  const std::string mlp_dot = dot_of(mlp_alone), lstm_dot = dot_of(lstm_alone);
  BOOST_TEST(mlp_alone.graph.size() == 13u);

  std::atomic<int> mismatches{0};
  std::atomic<bool> go{false};
  auto worker = [&](bool use_mlp) {
    recorder::Tracer<rr::Structure> own({.no_grad = true});
    while (!go) std::this_thread::yield();
    for (int i = 0; i < 40; ++i) {
      if (use_mlp) {
        const auto t = own.run(mlp, x);
        if (dot_of(t) != mlp_dot || !same_bits(t.output, mlp_alone.output)) ++mismatches;
      } else {
        const auto t = own.run(lstm, seq);
        if (dot_of(t) != lstm_dot ||
            !same_bits(std::get<0>(t.output), std::get<0>(lstm_alone.output)))
          ++mismatches;
      }
    }
  };
  std::thread a(worker, true), b(worker, false);
  go = true;
  a.join();
  b.join();
  BOOST_TEST(mismatches.load() == 0);
}

// A plain forward of the same model on another thread records nothing and is not recorded:
// the model is shared, the sessions are not. (Trace with TrainMode::keep here: `eval` would
// switch the shared module's mode while the other thread runs it.)
BOOST_AUTO_TEST_CASE(one_thread_traces_while_another_runs_the_same_model_plain) {
  torch::manual_seed(2);
  models::MLP mlp;
  mlp->eval();
  const at::Tensor x = torch::randn({3, 784});
  recorder::Tracer<rr::Structure> tracer({.no_grad = true});
  const auto alone = tracer.run(mlp, x);
  const std::string dot = dot_of(alone);
  at::Tensor plain_alone;
  {
    torch::NoGradGuard no_grad;
    plain_alone = mlp->forward(x);
  }
  std::atomic<int> bad_traces{0}, bad_plain{0};
  std::thread plain([&] {
    torch::NoGradGuard no_grad;
    for (int i = 0; i < 200; ++i)
      if (!same_bits(mlp->forward(x), plain_alone)) ++bad_plain;
  });
  for (int i = 0; i < 50; ++i) {
    const auto t = tracer.run(mlp, x);
    if (dot_of(t) != dot || t.graph.size() != alone.graph.size()) ++bad_traces;
  }
  plain.join();
  BOOST_TEST(bad_traces.load() == 0);
  BOOST_TEST(bad_plain.load() == 0);
}

// Decided: a recording records one forward at a time. Copies of a policy share its recording
// (a handle), so two tracers holding copies may take turns, but a forward that starts while
// another thread's forward holds the recording is refused with `RecordingBusy` before it
// records anything; the other forward and the recording are untouched.
BOOST_AUTO_TEST_CASE(a_recording_shared_by_tracers_on_two_threads_is_refused_while_busy) {
  torch::manual_seed(3);
  Gated net;
  const at::Tensor x = torch::randn({2, 4});
  rr::ForwardOutput<rd::Sum> sums({"fc"});
  recorder::Tracer<rr::ForwardOutput<rd::Sum>> first({.no_grad = true}, sums);
  recorder::Tracer<rr::ForwardOutput<rd::Sum>> second({.no_grad = true}, sums);  // same handle

  std::promise<void> inside, release;
  std::shared_future<void> released = release.get_future().share();
  net->gate = [&] {
    inside.set_value();
    released.wait();
  };
  auto running = std::async(std::launch::async, [&] { return first.run(net, x); });
  inside.get_future().wait();  // `first` is mid-forward, holding the recording
  net->gate = nullptr;         // (read by `first` before it waited)
  const std::string refused = test::error_of<recorder::RecordingBusy>([&] { second.run(net, x); });
  BOOST_TEST(refused ==
             "recorder: the forward_output recording (sum) of fc is already recording a forward "
             "on another thread. A recording records one forward at a time, and copies of a "
             "policy share its recording: give each tracer its own policy object, or trace one "
             "forward after the other");
  release.set_value();
  const auto t = running.get();
  BOOST_TEST(t.complete());
  BOOST_TEST(sums["fc"].samples() == 1u);  // the refused forward added nothing

  // Taking turns works: the second tracer's forward adds exactly one sample.
  const auto again = second.run(net, x);
  BOOST_TEST(sums["fc"].samples() == 2u);
  BOOST_TEST(dot_of(again) == dot_of(t));
  torch::NoGradGuard no_grad;
  BOOST_TEST(torch::allclose(sums["fc"].result(), 2 * net->fc.holder()->forward(x)));

  // Timing is a recording too.
  rr::Timing<rd::KeepAll> timing;
  recorder::Tracer<rr::Structure, rr::Timing<rd::KeepAll>> timed({}, {}, timing);
  recorder::Tracer<rr::Structure, rr::Timing<rd::KeepAll>> timed_too({}, {}, timing);
  std::promise<void> inside2, release2;
  std::shared_future<void> released2 = release2.get_future().share();
  net->gate = [&] {
    inside2.set_value();
    released2.wait();
  };
  auto timed_run = std::async(std::launch::async, [&] { return timed.run(net, x); });
  inside2.get_future().wait();
  net->gate = nullptr;
  BOOST_TEST(test::error_of<recorder::RecordingBusy>([&] { timed_too.run(net, x); })
                 .starts_with("recorder: this timing recording is already recording a forward "
                              "on another thread."));
  release2.set_value();
  BOOST_TEST(timed_run.get().complete());
  BOOST_TEST(timing.runs().size() == 1u);
  timed_too.run(net, x);
  BOOST_TEST(timing.runs().size() == 2u);
}

// ---- exceptions, one test per site ----------------------------------------------------------

// A user's composite forward throws after `fc` ran: TraceError with the partial trace (the
// root call failed, fc complete); fc's output recorded before the throw is kept; the next run
// is the run a fresh tracer makes.
BOOST_AUTO_TEST_CASE(a_composite_forward_that_throws) {
  torch::manual_seed(4);
  Gated net;
  const at::Tensor x = torch::randn({2, 4});
  rr::ForwardOutput<rd::KeepAll> outs({"fc"});
  recorder::Tracer<rr::Structure, rr::ForwardOutput<rd::KeepAll>> tracer({.no_grad = true}, {},
                                                                         outs);
  const auto clean = recorder::Tracer<rr::Structure>({.no_grad = true}).run(net, x);
  net->fail = true;
  try {
    tracer.run(net, x);
    BOOST_FAIL("no exception");
  } catch (const recorder::TraceError& e) {
    BOOST_TEST(std::string(e.what()) ==
               "recorder: forward failed in module <root> (Gated): the composite's own check "
               "failed");
    BOOST_REQUIRE(e.partial_trace());
    const recorder::Trace& partial = *e.partial_trace();
    BOOST_TEST(partial.graph.node(partial.root).failed);
    BOOST_REQUIRE(partial.failure);
    BOOST_TEST(partial.failure->module_path == "");
    BOOST_TEST(recorder::resolve_one(partial.graph, "fc") != recorder::NodeId{});  // fc ran
    BOOST_TEST(recorder::render_to_string<recorder::backend::Dot>(partial).find("Linear") !=
               std::string::npos);
    BOOST_TEST(recorder::summary(partial).find("Gated (failed)") != std::string::npos);
  }
  BOOST_TEST(outs["fc"].samples() == 1u);  // kept
  net->fail = false;
  const auto next = tracer.run(net, x);
  BOOST_TEST(dot_of(next) == dot_of(clean));
  BOOST_TEST(outs["fc"].samples() == 2u);
}

// A leaf throws (a shape libtorch refuses): the error names the module; the record of the
// layer before it is kept; the next run is clean.
BOOST_AUTO_TEST_CASE(a_leaf_that_throws) {
  torch::manual_seed(5);
  models::MLP mlp;
  rr::ForwardOutput<rd::Sum> outs({"fc1"});
  recorder::Tracer<rr::Structure, rr::ForwardOutput<rd::Sum>> tracer({.no_grad = true}, {}, outs);
  const at::Tensor x = torch::randn({2, 784});
  const auto clean = recorder::Tracer<rr::Structure>({.no_grad = true}).run(mlp, x);
  tracer.run(mlp, x);
  const std::string dot = dot_of(clean);
  // fc2 gets 100 features; give fc1 the right input but make fc2 refuse its input.
  auto saved = mlp->fc2.holder()->weight.clone();
  {
    torch::NoGradGuard no_grad;
    mlp->fc2.holder()->weight.set_(torch::randn({50, 99}));
  }
  try {
    tracer.run(mlp, x);
    BOOST_FAIL("no exception");
  } catch (const recorder::TraceError& e) {
    BOOST_TEST(e.failure().module_path == "fc2");
    BOOST_TEST(e.failure().module_class == "Linear");
    BOOST_REQUIRE(e.partial_trace());
    BOOST_TEST(!recorder::render_to_string<recorder::backend::Json>(*e.partial_trace()).empty());
  }
  BOOST_TEST(outs["fc1"].samples() == 2u);  // both fc1 outputs kept
  {
    torch::NoGradGuard no_grad;
    mlp->fc2.holder()->weight.set_(saved);
  }
  BOOST_TEST(dot_of(tracer.run(mlp, x)) == dot);
  BOOST_TEST(outs["fc1"].samples() == 3u);
}

// An Embedding given a token id outside its table (issue 34): libtorch says only "index out of
// range in self"; the error names the index and the table's size, and the partial summary's
// root row shows `--`, as a completed run's does, not the parameters of what never ran.
struct TokensImpl : torch::nn::Module {
  recorder::Module<torch::nn::Embedding> embed{
      register_module("embed", torch::nn::Embedding(10, 4))};
  recorder::Module<torch::nn::Linear> head{register_module("head", torch::nn::Linear(4, 2))};

  template <recorder::tensor_like T>
  T forward(T ids) {
    return head(embed(ids));
  }
};
TORCH_MODULE(Tokens);

BOOST_AUTO_TEST_CASE(an_embedding_index_error_names_the_index_and_the_table) {
  Tokens net;
  recorder::Tracer<rr::Structure> tracer({.no_grad = true});
  const at::Tensor ok = torch::tensor({{1, 9, 0}}, torch::kLong);
  const std::string done =
      recorder::render_to_string<recorder::backend::Summary>(tracer.run(net, ok), {});
  BOOST_TEST(done.find("Tokens                                   [1, 3, 2]                 --") !=
             std::string::npos);
  try {
    tracer.run(net, torch::tensor({{1, 12, 3}}, torch::kLong));
    BOOST_FAIL("no exception");
  } catch (const recorder::TraceError& e) {
    BOOST_TEST(e.failure().module_path == "embed");
    const std::string& m = e.failure().message;
    BOOST_TEST(m.find("index out of range") != std::string::npos, m);
    BOOST_TEST(m.ends_with(" (index 12 given to an Embedding of 10 rows: ids must lie in [0, 10))"),
               m);
    BOOST_REQUIRE(e.partial_trace());
    const std::string partial =
        recorder::render_to_string<recorder::backend::Summary>(*e.partial_trace(), {});
    BOOST_TEST(
        partial.find("Tokens (failed)                          --                        --\n") !=
            std::string::npos,
        partial);
  }
  try {  // a negative id is named too
    tracer.run(net, torch::tensor({{-3, 1}}, torch::kLong));
    BOOST_FAIL("no exception");
  } catch (const recorder::TraceError& e) {
    BOOST_TEST(e.failure().message.ends_with(
                   " (index -3 given to an Embedding of 10 rows: ids must lie in [0, 10))"),
               e.failure().message);
  }
}

// A reduction throws while it folds a value in: the forward fails, the layer's state is the
// one before (not half-updated), the next run is clean and adds one sample.
BOOST_AUTO_TEST_CASE(a_reduction_that_throws) {
  torch::manual_seed(6);
  Gated net;
  const at::Tensor x = torch::randn({2, 4});
  bool refuse = false;
  auto total = rd::custom([&refuse](at::Tensor acc, const at::Tensor& v) {
    if (refuse) throw std::runtime_error("the reduction refuses this value");
    return acc + v;
  });
  using Custom = decltype(total);
  rr::ForwardOutput<Custom> outs({"fc"}, total);
  recorder::Tracer<rr::Structure, rr::ForwardOutput<Custom>> tracer({.no_grad = true}, {}, outs);
  const auto first = tracer.run(net, x);
  const at::Tensor before = outs["fc"].result().clone();
  refuse = true;
  const std::string message = test::nested_error_of([&] { tracer.run(net, x); });
  BOOST_TEST(message ==
             "recorder: recording forward_output of layer 'fc' (Linear, 1-1) with reduce::custom "
             "failed at tensor 0: the reduction refuses this value");
  BOOST_TEST(outs["fc"].samples() == 1u);
  BOOST_TEST(same_bits(outs["fc"].result(), before));
  refuse = false;
  const auto next = tracer.run(net, x);
  BOOST_TEST(dot_of(next) == dot_of(first));
  BOOST_TEST(outs["fc"].samples() == 2u);
  BOOST_TEST(torch::allclose(outs["fc"].result(), 2 * before));
}

// A postproc callable throws: the output it was given is recorded (recording comes first), the
// forward fails, the next run is clean.
BOOST_AUTO_TEST_CASE(a_postproc_that_throws) {
  torch::manual_seed(7);
  Gated net;
  const at::Tensor x = torch::randn({2, 4});
  bool refuse = false;
  rr::ForwardOutput<rd::Sum> outs({"fc"});
  outs.postproc([&refuse](const recorder::LayerCall&, const at::Tensor& t) {
    if (refuse) throw std::runtime_error("postproc refuses");
    return t;
  });
  recorder::Tracer<rr::Structure, rr::ForwardOutput<rd::Sum>> tracer({.no_grad = true}, {}, outs);
  const auto first = tracer.run(net, x);
  refuse = true;
  BOOST_TEST(test::nested_error_of([&] { tracer.run(net, x); }) == "postproc refuses");
  BOOST_TEST(outs["fc"].samples() == 2u);
  refuse = false;
  BOOST_TEST(dot_of(tracer.run(net, x)) == dot_of(first));
  BOOST_TEST(outs["fc"].samples() == 3u);
}

namespace {
/// A backend that writes half a picture, then fails.
struct HalfBackend {
  static constexpr std::string_view extension = ".half";
  void render(const recorder::Trace&, const recorder::RenderOptions&, std::ostream& os) const {
    os << "digraph {";
    throw std::runtime_error("the backend gave up");
  }
};
}  // namespace

// A render backend throws: its exception leaves; an existing file is untouched and no
// temporary file is left; the trace renders with any other backend as before.
BOOST_AUTO_TEST_CASE(a_render_backend_that_throws) {
  torch::manual_seed(8);
  Gated net;
  const auto trace =
      recorder::Tracer<rr::Structure>({.no_grad = true}).run(net, torch::randn({2, 4}));
  const std::string dot = dot_of(trace);
  const auto dir =
      std::filesystem::temp_directory_path() / ("recorder-faults-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "picture.half";
  std::ofstream(file) << "the old picture";
  BOOST_CHECK_EXCEPTION(
      recorder::render_to_file<HalfBackend>(trace, {}, dir / "picture"), std::runtime_error,
      [](const std::runtime_error& e) { return std::string(e.what()) == "the backend gave up"; });
  std::ifstream in(file);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BOOST_TEST(content == "the old picture");
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  BOOST_TEST(files == 1u);
  BOOST_CHECK_THROW(recorder::render_to_string<HalfBackend>(trace), std::runtime_error);
  BOOST_TEST(dot_of(trace) == dot);
  std::filesystem::remove_all(dir);
}
