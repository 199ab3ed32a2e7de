/// Traced vs plain forward on real models, and libtorch's own C++ tracer as the peer.
///
/// For each model, in one run of this program:
///   Plain     `model->forward(x)` on `torch::Tensor`
///   Traced    `recorder::Tracer<recorder::record::Structure>{}.run(model, x)` (graph recorded;
///             one tracer per benchmark, made before the timed loop)
///   Off       `recorder::Tracer<recorder::record::Off>{}.run(model, x)` (nothing recorded)
///   JitTrace  `torch::jit::tracer::trace(...)` over the same plain forward: one trace call,
///             producing a TorchScript graph (the in-process C++ peer of the recorder)
/// Models: ResNet-18 (examples/models/resnet.hpp) at 1x3x224x224; a stack of 100 x
/// (Linear(64,64) + ReLU) blocks in a `recorder::Sequential` at batch 8 (and 25 and 400 of
/// them; and 25 / 100 / 400 blocks of Linear(4,4) + ReLU at batch 1, StackTiny); the MLP
/// (examples/models/mlp.hpp) at batch 1; and the 1,000-op chain of bench_ops as a composite
/// module traced through `Tracer::run`. All in eval mode under `torch::NoGradGuard`, torch
/// with one thread.
///
/// Recording over many batches (issue 5): ResNet-18 at 1x3x224x224, 1,000 forwards each,
///   Capture224_Plain    plain forwards
///   Capture224_Mean     `record::ForwardOutput<reduce::Mean>({"layer4"})`: resident memory
///                      after 10, 100 and 1,000 batches must stay flat
///   Capture224_KeepAll  the same with `reduce::KeepAll` (grows by 98 KiB per batch), for contrast

#include "chain.hpp"
#include "ratio_reporter.hpp"
#include "templated.hpp"
#include "turns.hpp"

#include <models/mlp.hpp>
#include <models/resnet.hpp>

#include <recorder/capture/timing.hpp>
#include <recorder/recorder.hpp>

#include <torch/csrc/autograd/profiler_legacy.h>

#include <torch/torch.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <type_traits>

#include <unistd.h>
#include <map>
#include <sstream>
#include <string>
#include <utility>

namespace {

using bench::bm_jit_trace;
using bench::bm_plain;
using bench::bm_traced;
using bench::Fixture;
using bench::fixture;
using bench::frozen_fixture;
using bench::make_chain;
using bench::make_resnet;

// ---- models ---------------------------------------------------------------------------------

/// One block of the stack: Linear(width, width) then ReLU, generic over its tensor type.
struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(int width = 64) : fc(register_module("fc", torch::nn::Linear(width, width))) {}
  recorder::Module<torch::nn::Linear> fc;

  template <recorder::tensor_like T>
  T forward(T x) {
    return relu(fc(x));
  }
};
TORCH_MODULE(Block);

constexpr int kStackDepth = 100;
constexpr int kChainOps = bench::chain_ops;

recorder::Sequential<Block> make_stack(int depth = kStackDepth) {
  recorder::Sequential<Block> s;
  for (int i = 0; i < depth; ++i) s->push_back(Block());
  return s;
}

Fixture<recorder::Sequential<Block>> make_stack_fixture() {
  torch::manual_seed(0);
  auto m = make_stack();
  m->eval();
  return {m, torch::randn({8, 64})};
}

/// Stacks of other depths, for the scaling benchmarks (one per depth, built on first use).
Fixture<recorder::Sequential<Block>>& stack_of_depth(int depth) {
  static std::map<int, Fixture<recorder::Sequential<Block>>> stacks;
  auto it = stacks.find(depth);
  if (it == stacks.end()) {
    torch::manual_seed(0);
    auto m = make_stack(depth);
    m->eval();
    it =
        stacks.emplace(depth, Fixture<recorder::Sequential<Block>>{m, torch::randn({8, 64})}).first;
  }
  return it->second;
}

/// Stacks of `depth` blocks of Linear(4, 4) + ReLU at batch 1: the same calls and ops as the
/// stack above with ~1/4 of its forward time (a 64-wide Linear is ~20 us on Debian's BLAS),
/// so the recording cost per call stands out of the forward's run-to-run noise.
Fixture<recorder::Sequential<Block>>& tiny_stack(int depth) {
  static std::map<int, Fixture<recorder::Sequential<Block>>> stacks;
  auto it = stacks.find(depth);
  if (it == stacks.end()) {
    torch::manual_seed(0);
    recorder::Sequential<Block> m;
    for (int i = 0; i < depth; ++i) m->push_back(Block(4));
    m->eval();
    it = stacks.emplace(depth, Fixture<recorder::Sequential<Block>>{m, torch::randn({1, 4})}).first;
  }
  return it->second;
}

Fixture<models::MLP> make_mlp() {
  torch::manual_seed(0);
  models::MLP m;
  m->eval();
  return {m, torch::randn({1, 784})};
}

// ---- the four ways to run a model: Plain, Traced and JitTrace in templated.hpp, and Off ------

/// `Tracer<record::Off>{}.run(model, input)`: the tracer's fixed costs, nothing recorded.
template <class F>
void bm_off(benchmark::State& state, F& f) {
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    auto trace = recorder::Tracer<recorder::record::Off>{}.run(f.model, f.input);
    benchmark::DoNotOptimize(trace);
  }
}

// ---- recording over many batches --------------------------------------------------------------

/// Resident set size of this process, in MiB (Linux: /proc/self/statm).
double resident_mib() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long pages = 0, resident = 0;
  const int n = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  if (n != 2) return -1;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

constexpr int kCaptureBatches = 1000;

Fixture<models::ResNet>& capture_fixture() {
  static Fixture<models::ResNet> f = [] {
    torch::manual_seed(0);
    Fixture<models::ResNet> r{models::ResNet18(), torch::randn({1, 3, 224, 224})};
    r.model->eval();
    return r;
  }();
  return f;
}

/// `batches` forwards per iteration; with a reduction `R`, traced while recording layer4's
/// output, with resident memory sampled after 10, 100 and all batches.
template <class R>
void bm_capture(benchmark::State& state) {
  auto& f = capture_fixture();
  torch::NoGradGuard no_grad;
  double rss[3] = {0, 0, 0};
  for (auto _ : state) {
    if constexpr (std::is_void_v<R>) {
      for (int i = 0; i < kCaptureBatches; ++i) benchmark::DoNotOptimize(f.model->forward(f.input));
    } else {
      recorder::record::ForwardOutput<R> out({"layer4"});
      recorder::Tracer<recorder::record::ForwardOutput<R>> tracer({}, out);
      for (int i = 1; i <= kCaptureBatches; ++i) {
        benchmark::DoNotOptimize(tracer.run(f.model, f.input).output);
        if (i == 10) rss[0] = resident_mib();
        if (i == 100) rss[1] = resident_mib();
      }
      rss[2] = resident_mib();
      if (out["layer4"].samples() != kCaptureBatches)
        state.SkipWithError("layer4 was not recorded every batch");
    }
  }
  state.counters["batches"] = kCaptureBatches;
  if constexpr (!std::is_void_v<R>) {
    state.counters["rss_MiB_at_10"] = rss[0];
    state.counters["rss_MiB_at_100"] = rss[1];
    state.counters["rss_MiB_at_1000"] = rss[2];
  }
}

// ---- registration -----------------------------------------------------------------------------

constexpr double kResNetMinTime = 3.0;
constexpr double kSmallMinTime = 1.0;

/// Traced with `record::Timing<reduce::Mean>`: every module call timed, reduced over the runs.
void BM_ResNet18_Timed(benchmark::State& state) {
  auto& f = fixture<make_resnet>();
  torch::NoGradGuard no_grad;
  recorder::record::Timing<recorder::reduce::Mean> timing;
  recorder::Tracer<recorder::record::Timing<recorder::reduce::Mean>> tracer({}, timing);
  for (auto _ : state) benchmark::DoNotOptimize(tracer.run(f.model, f.input).output);
  state.counters["spans"] = static_cast<double>(timing.runs().back().spans.size());
}
/// libtorch's own profiler around the plain forward (`RecordProfile`: the legacy profiler,
/// every aten op timed, its Chrome trace written to a string when the guard ends).
void BM_ResNet18_Profiler(benchmark::State& state) {
  auto& f = fixture<make_resnet>();
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    std::ostringstream trace;
    {
      torch::autograd::profiler::RecordProfile profile(trace);
      benchmark::DoNotOptimize(f.model->forward(f.input));
    }
    benchmark::DoNotOptimize(trace);
  }
}

void BM_ResNet18_Plain(benchmark::State& s) { bm_plain(s, fixture<make_resnet>()); }
void BM_ResNet18_Traced(benchmark::State& s) { bm_traced(s, fixture<make_resnet>()); }
void BM_ResNet18_Off(benchmark::State& s) { bm_off(s, fixture<make_resnet>()); }
void BM_ResNet18_JitTrace(benchmark::State& s) { bm_jit_trace(s, frozen_fixture<make_resnet>()); }
BENCHMARK(BM_ResNet18_Plain)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(kResNetMinTime);
BENCHMARK(BM_ResNet18_Traced)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(kResNetMinTime);
BENCHMARK(BM_ResNet18_Off)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(kResNetMinTime);
BENCHMARK(BM_ResNet18_Timed)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(kResNetMinTime);
BENCHMARK(BM_ResNet18_Profiler)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(kResNetMinTime);
BENCHMARK(BM_ResNet18_JitTrace)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(kResNetMinTime);

void BM_Stack100_Plain(benchmark::State& s) { bm_plain(s, fixture<make_stack_fixture>()); }
void BM_Stack100_Traced(benchmark::State& s) { bm_traced(s, fixture<make_stack_fixture>()); }
void BM_Stack100_Off(benchmark::State& s) { bm_off(s, fixture<make_stack_fixture>()); }
void BM_Stack100_JitTrace(benchmark::State& s) {
  bm_jit_trace(s, frozen_fixture<make_stack_fixture>());
}
BENCHMARK(BM_Stack100_Plain)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(kSmallMinTime);
BENCHMARK(BM_Stack100_Traced)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(kSmallMinTime);
BENCHMARK(BM_Stack100_Off)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(kSmallMinTime);
BENCHMARK(BM_Stack100_JitTrace)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kSmallMinTime);

/// Two libtorch module walks every `Tracer::run` does whatever the policy (so Off pays them
/// too): `finish_trace` counts parameters through `parameters(/*recurse=*/true)`, and
/// `ModeGuard`'s destructor restores the mode with `train(bool)`, which recurses through every
/// submodule. Timed alone on the 100-block stack (201 modules, 200 parameter tensors).
void BM_Stack100_ParametersWalk(benchmark::State& s) {
  auto& f = fixture<make_stack_fixture>();
  for (auto _ : s) {
    auto ps = f.model->parameters(/*recurse=*/true);
    benchmark::DoNotOptimize(ps);
  }
}
void BM_Stack100_TrainWalk(benchmark::State& s) {
  auto& f = fixture<make_stack_fixture>();
  for (auto _ : s) f.model->train(false);
}
BENCHMARK(BM_Stack100_ParametersWalk)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kSmallMinTime);
BENCHMARK(BM_Stack100_TrainWalk)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kSmallMinTime);

/// Scaling with the width of one container: the same blocks, 25 / 100 / 400 of them.
void BM_StackDepth_Plain(benchmark::State& s) {
  bm_plain(s, stack_of_depth(static_cast<int>(s.range(0))));
}
void BM_StackDepth_Traced(benchmark::State& s) {
  bm_traced(s, stack_of_depth(static_cast<int>(s.range(0))));
}
BENCHMARK(BM_StackDepth_Plain)
    ->Arg(25)
    ->Arg(400)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kSmallMinTime);
BENCHMARK(BM_StackDepth_Traced)
    ->Arg(25)
    ->Arg(400)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kSmallMinTime);

void BM_StackTiny_Plain(benchmark::State& s) {
  bm_plain(s, tiny_stack(static_cast<int>(s.range(0))));
}
void BM_StackTiny_Traced(benchmark::State& s) {
  bm_traced(s, tiny_stack(static_cast<int>(s.range(0))));
}
void tiny_depths(benchmark::internal::Benchmark* b) {
  b->Arg(25)->Arg(100)->Arg(400)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(1.0);
}
BENCHMARK(BM_StackTiny_Plain)->Apply(tiny_depths);
BENCHMARK(BM_StackTiny_Traced)->Apply(tiny_depths);

void BM_Turns(benchmark::State& s) {
  const int n = static_cast<int>(s.range(1));
  if (s.range(0) == 4)
    bench::bm_taking_turns(s, tiny_stack(n), 2.0 * n, "call");
  else
    bench::bm_taking_turns(s, n == kStackDepth ? fixture<make_stack_fixture>() : stack_of_depth(n),
                           2.0 * n, "call");
}
BENCHMARK(BM_Turns)
    ->ArgNames({"width", "blocks"})
    ->ArgsProduct({{4, 64}, {25, 100, 400}})
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2.0);

void BM_MLP_Plain(benchmark::State& s) { bm_plain(s, fixture<make_mlp>()); }
void BM_MLP_Traced(benchmark::State& s) { bm_traced(s, fixture<make_mlp>()); }
void BM_MLP_Off(benchmark::State& s) { bm_off(s, fixture<make_mlp>()); }
void BM_MLP_JitTrace(benchmark::State& s) { bm_jit_trace(s, frozen_fixture<make_mlp>()); }
BENCHMARK(BM_MLP_Plain)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(kSmallMinTime);
BENCHMARK(BM_MLP_Traced)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(kSmallMinTime);
BENCHMARK(BM_MLP_Off)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(kSmallMinTime);
BENCHMARK(BM_MLP_JitTrace)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(kSmallMinTime);

void BM_Chain1000_Plain(benchmark::State& s) { bm_plain(s, fixture<make_chain>()); }
void BM_Chain1000_Traced(benchmark::State& s) { bm_traced(s, fixture<make_chain>()); }
void BM_Chain1000_Off(benchmark::State& s) { bm_off(s, fixture<make_chain>()); }
void BM_Chain1000_JitTrace(benchmark::State& s) { bm_jit_trace(s, frozen_fixture<make_chain>()); }
BENCHMARK(BM_Chain1000_Plain)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(kSmallMinTime);
BENCHMARK(BM_Chain1000_Traced)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kSmallMinTime);
BENCHMARK(BM_Chain1000_Off)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(kSmallMinTime);
BENCHMARK(BM_Chain1000_JitTrace)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kSmallMinTime);

void BM_Capture224_Plain(benchmark::State& s) { bm_capture<void>(s); }
void BM_Capture224_Mean(benchmark::State& s) { bm_capture<recorder::reduce::Mean>(s); }
void BM_Capture224_KeepAll(benchmark::State& s) { bm_capture<recorder::reduce::KeepAll>(s); }
BENCHMARK(BM_Capture224_Plain)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_Capture224_Mean)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_Capture224_KeepAll)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

std::string run_name(const std::string& base) { return "BM_" + base; }

void summarize(const bench::SummaryReporter& rep, const char* title, const std::string& base,
               const char* traced_target) {
  const std::string plain = run_name(base + "_Plain");
  const std::string traced = run_name(base + "_Traced");
  const std::string off = run_name(base + "_Off");
  const std::string jit = run_name(base + "_JitTrace");
  std::printf(" %s\n", title);
  bench::print_time(rep, "plain forward", plain);
  bench::print_time(rep, "Tracer<record::Structure>::run", traced);
  bench::print_time(rep, "Tracer<record::Off>::run", off);
  bench::print_time(rep, "torch::jit::tracer::trace", jit);
  bench::print_ratio(rep, "traced / plain", traced, plain, traced_target);
  bench::print_ratio(rep, "off / plain", off, plain, "~1.00");
  bench::print_ratio(rep, "jit trace / plain", jit, plain);
  bench::print_ratio(rep, "jit trace / traced", jit, traced);
}

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);  // stable numbers: every op on the calling thread
  bench::SummaryReporter rep;
  if (!bench::run_benchmarks(argc, argv, rep)) return 1;

  std::printf("\nSummary (torch threads: %d; eval mode, NoGradGuard)\n", at::get_num_threads());
  summarize(rep, "ResNet-18, 1x3x224x224", "ResNet18", "<= 1.05");
  bench::print_time(rep, "Tracer<record::Timing<Mean>>::run", run_name("ResNet18_Timed"));
  bench::print_time(rep, "libtorch RecordProfile + forward", run_name("ResNet18_Profiler"));
  bench::print_ratio(rep, "timed / plain", run_name("ResNet18_Timed"), run_name("ResNet18_Plain"),
                     "<= 1.05");
  bench::print_ratio(rep, "libtorch profiler / plain", run_name("ResNet18_Profiler"),
                     run_name("ResNet18_Plain"));
  summarize(rep, "100 x (Linear(64,64) + ReLU), batch 8", "Stack100", "");
  summarize(rep, "MLP 784-100-50-10, batch 1", "MLP", "");
  summarize(rep, "chain of 1000 tiny ops, [4]", "Chain1000", "");
  bench::print_time(rep, "stack: parameters(recurse) walk", run_name("Stack100_ParametersWalk"));
  bench::print_time(rep, "stack: train(false) walk", run_name("Stack100_TrainWalk"));
  std::printf(" scaling with the number of blocks in one recorder::Sequential\n");
  for (int n : {25, 100, 400}) {
    const std::string p = n == kStackDepth ? run_name("Stack100_Plain")
                                           : run_name("StackDepth_Plain/" + std::to_string(n));
    const std::string t = n == kStackDepth ? run_name("Stack100_Traced")
                                           : run_name("StackDepth_Traced/" + std::to_string(n));
    bench::print_overhead_ns(rep, "blocks " + std::to_string(n) + ": overhead per block", t, p, n);
    bench::print_ratio(rep, "blocks " + std::to_string(n) + ": traced / plain", t, p);
  }
  std::printf(
      " plain and traced taking turns (BM_Turns), recording per module call (2 calls, "
      "1 op per block), target <= 300 ns and <= 1.05:\n");
  for (int width : {64, 4})
    for (int n : {25, 100, 400}) {
      const auto c =
          rep.counters("BM_Turns/width:" + std::to_string(width) + "/blocks:" + std::to_string(n));
      if (c.empty()) continue;
      std::printf(
          "  width %2d, %3d blocks: plain %8.1f us  traced %8.1f us  traced / plain "
          "%6.3f  %6.1f ns per call\n",
          width, n, c.at("plain_us"), c.at("traced_us"), c.at("ratio"), c.at("ns_per_call"));
    }
  std::printf(
      " the same blocks at width 4, batch 1: recording per module call (2 calls, 1 op "
      "per block)\n");
  for (int n : {25, 100, 400}) {
    const std::string p = run_name("StackTiny_Plain/" + std::to_string(n));
    const std::string t = run_name("StackTiny_Traced/" + std::to_string(n));
    bench::print_overhead_ns(rep, "blocks " + std::to_string(n) + ": overhead per call", t, p,
                             2.0 * n, "<= 300 ns");
    bench::print_ratio(rep, "blocks " + std::to_string(n) + ": traced / plain", t, p);
  }
  std::printf(" ResNet-18 1x3x224x224, %d batches, layer4 output recorded\n", kCaptureBatches);
  bench::print_ratio(rep, "mean-recording / plain", run_name("Capture224_Mean"),
                     run_name("Capture224_Plain"));
  bench::print_ratio(rep, "keep-all-recording / plain", run_name("Capture224_KeepAll"),
                     run_name("Capture224_Plain"));
  const std::string ct = run_name("Chain1000_Traced");
  const std::string cp = run_name("Chain1000_Plain");
  bench::print_overhead_ns(rep, "chain: recording overhead per op", ct, cp, kChainOps, "<= 300 ns");
  return 0;
}
