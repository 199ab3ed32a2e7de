/// TorchScript models traced from C++ against their plain forward, and the templated front end on
/// the same work, every comparison in one run of this program.
///
/// 1. ResNet-18 at 1x3x224x224:
///      ScriptResNet18_Plain           `module.forward({x})` of torchvision's resnet18, scripted
///                                     (`resnet18_script.pt`, written by tests/script/make_models.py)
///      ScriptResNet18_PlainAsWritten  the same forward of a second copy of the file under
///                                     `GraphOptimizerEnabledGuard(false)`: the code as written, as
///                                     the tracer runs it, so traced / as-written is the recording
///                                     alone and as-written / plain the optimizer's part
///      ScriptResNet18_Traced          `Tracer<record::Structure>::run(module, x)`, one tracer reused
///      ScriptResNet18_AtenOps         `Tracer<record::AtenOps>::run(module, x)` (ops inside
///                                     leaf modules too), one tracer reused
///      ScriptResNet18_FirstTrace      a fresh tracer per iteration: instrumenting the copy plus
///                                     one trace (what the first run of a tracer costs)
///      ScriptResNet18_Paired          plain and traced alternately in each iteration, timed
///                                     apart: counter `traced_over_plain` (CPU time), robust to
///                                     drifting load since both halves share it
///      ResNet18_{Plain,Traced,JitTrace}  the templated `models::ResNet18()`
///                                     (examples/models/resnet.hpp): `model->forward(x)`,
///                                     `Tracer<record::Structure>::run`, `torch::jit::tracer::trace`
///                                     (on a twin without grad parameters, as bench_models does)
/// 2. A chain of 1,000 tiny ops on a float tensor of shape [4]: `x = x + 1`, `x = torch.relu(x)`,
///    `x = x * 0.5`, cycling, the ops of `bench::chain` (chain.hpp):
///      ScriptChain1000_*              a `torch::jit::Module` whose `forward` is those 1,000
///                                     statements (`Module::define`); Plain, PlainAsWritten,
///                                     Traced, FirstTrace, Paired as above
///      Chain1000_{Plain,Traced,Paired}  `bench::chain` in a templated module (bench_models'
///                                     Chain1000): on `at::Tensor`, and on `RecorderTensor`
///                                     through a reused `Tracer<record::Structure>`
///    The Paired benchmarks give counters `overhead_ns_per_op` = (traced - plain) / 1000 (CPU
///    and wall) and `traced_over_plain`; the summary gives the same from the separate benchmarks.
///
/// Tracers use `{.mode = TrainMode::eval, .no_grad = true}`; every benchmark runs under
/// `torch::NoGradGuard`, the models in eval mode, torch with one thread. Each fixture is built
/// (and warmed up: TorchScript's profiling runs, the tracer's instrumented copy) on first use,
/// outside the timed loop, so the benchmarks are independent of each other and of their order
/// (`--benchmark_enable_random_interleaving=true`).
///
/// The TorchScript file is found in $RECORDER_SCRIPT_MODELS, else in build/script-models
/// (relative to the current directory); make it with
///     python3 tests/script/make_models.py build/script-models

#include "chain.hpp"
#include "paired.hpp"
#include "ratio_reporter.hpp"
#include "templated.hpp"

#include <recorder/script.hpp>

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr int kChainOps = bench::chain_ops;
const recorder::TraceOptions kEval{.mode = recorder::TrainMode::eval, .no_grad = true};
using GraphTracer = recorder::Tracer<recorder::record::Structure>;
using AtenOpsTracer = recorder::Tracer<recorder::record::AtenOps>;

// ---- where the TorchScript model is ---------------------------------------------------------

std::filesystem::path models_dir() {
  if (const char* env = std::getenv("RECORDER_SCRIPT_MODELS"); env != nullptr && *env != '\0')
    return env;
  return "build/script-models";
}

std::filesystem::path resnet_file() { return models_dir() / "resnet18_script.pt"; }

// ---- fixtures: built and warmed up once, on first use -----------------------------------------

/// Plain forwards before timing: the profiling executor profiles the first runs and optimizes
/// the graph after them.
constexpr int kWarmup = 3;

/// True when `a` and `b` are tensors of the same values (up to the optimizer's rounding).
bool same(const c10::IValue& a, const c10::IValue& b) {
  return a.isTensor() && b.isTensor() && a.toTensor().allclose(b.toTensor(), 1e-4, 1e-5);
}

/// One TorchScript model and its input, run plain and traced. `as_written` is a second instance
/// (its own compiled plans) for the forward without graph optimization.
struct ScriptFixture {
  torch::jit::Module model;
  torch::jit::Module as_written;
  at::Tensor input;
  GraphTracer tracer{kEval};
  AtenOpsTracer aten_tracer{kEval};
  c10::IValue reference;  ///< the plain forward's output
  std::string error;      ///< why the benchmarks cannot run, if they cannot

  ScriptFixture(torch::jit::Module m, torch::jit::Module written, at::Tensor x)
      : model(std::move(m)), as_written(std::move(written)), input(std::move(x)) {
    torch::NoGradGuard no_grad;
    model.eval();
    as_written.eval();
    for (int i = 0; i < kWarmup; ++i) reference = model.forward({input});
    {
      torch::jit::GraphOptimizerEnabledGuard off(false);
      for (int i = 0; i < kWarmup; ++i)
        if (!same(as_written.forward({input}), reference))
          error = "the unoptimized forward differs";
    }
    // The first run of each tracer instruments its copy of the model.
    if (!same(tracer.run(model, input).output, reference)) error = "the traced output differs";
    if (!same(aten_tracer.run(model, input).output, reference))
      error = "the AtenOps-traced output differs";
  }
};

/// The scripted ResNet-18 file, loaded by `main` (which says how to make it when it is missing).
std::optional<torch::jit::Module> g_resnet_script;
std::optional<torch::jit::Module> g_resnet_script_twin;

ScriptFixture& script_resnet() {
  static ScriptFixture f = [] {
    torch::manual_seed(0);
    return ScriptFixture(*g_resnet_script, *g_resnet_script_twin, torch::randn({1, 3, 224, 224}));
  }();
  return f;
}

/// The forward of the scripted chain: the ops of `bench::chain`, one statement each.
std::string chain_source() {
  std::string s = "def forward(self, x):\n";
  for (int i = 0; i < kChainOps; ++i) {
    switch (i % 3) {
      case 0:
        s += "    x = x + 1\n";
        break;
      case 1:
        s += "    x = torch.relu(x)\n";
        break;
      default:
        s += "    x = x * 0.5\n";
        break;
    }
  }
  return s + "    return x\n";
}

torch::jit::Module make_script_chain() {
  torch::jit::Module m("Chain");
  m.define(chain_source());
  return m;
}

ScriptFixture& script_chain() {
  static ScriptFixture f(make_script_chain(), make_script_chain(), torch::ones({4}));
  return f;
}

// ---- timing helpers -----------------------------------------------------------------------------

void set_per_op_counter(benchmark::State& state) {
  // Seconds per op, shown with an SI prefix ("1.2u" = 1.2 us per op).
  state.counters["per_op"] = benchmark::Counter(
      kChainOps, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

using bench::bm_paired;

// ---- the ways to run a TorchScript model ------------------------------------------------------

void bm_script_plain(benchmark::State& state, ScriptFixture& f) {
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    c10::IValue y = f.model.forward({f.input});
    benchmark::DoNotOptimize(y);
  }
}

void bm_script_as_written(benchmark::State& state, ScriptFixture& f) {
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  torch::NoGradGuard no_grad;
  torch::jit::GraphOptimizerEnabledGuard off(false);
  for (auto _ : state) {
    c10::IValue y = f.as_written.forward({f.input});
    benchmark::DoNotOptimize(y);
  }
}

template <class Tracer>
void bm_script_traced(benchmark::State& state, ScriptFixture& f, Tracer& tracer) {
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  torch::NoGradGuard no_grad;
  std::size_t nodes = 0;
  for (auto _ : state) {
    auto trace = tracer.run(f.model, f.input);
    benchmark::DoNotOptimize(trace);
    nodes = trace.graph.size();
  }
  state.counters["nodes"] = static_cast<double>(nodes);
}

/// A fresh tracer per iteration: instrumenting a copy of the model, then one trace.
void bm_script_first_trace(benchmark::State& state, ScriptFixture& f) {
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    GraphTracer tracer(kEval);
    auto trace = tracer.run(f.model, f.input);
    benchmark::DoNotOptimize(trace);
  }
}

void bm_script_paired(benchmark::State& state, ScriptFixture& f, int ops) {
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  bm_paired(
      state, [&f] { benchmark::DoNotOptimize(f.model.forward({f.input})); },
      [&f] { benchmark::DoNotOptimize(f.tracer.run(f.model, f.input)); }, ops);
}

// ---- the ways to run a templated model (Plain, Traced, JitTrace: templated.hpp) ---------------

/// Paired for a templated model, through one tracer reused by every iteration.
template <class F>
void bm_templated_paired(benchmark::State& state, F& f, int ops) {
  GraphTracer tracer(kEval);
  bm_paired(
      state, [&f] { benchmark::DoNotOptimize(f.model->forward(f.input)); },
      [&f, &tracer] { benchmark::DoNotOptimize(tracer.run(f.model, f.input)); }, ops);
}

// ---- registration -----------------------------------------------------------------------------

constexpr double kResNetMinTime = 3.0;
constexpr double kChainMinTime = 1.0;
/// Each fresh tracer clones the model's class types into its compilation unit (kept there for
/// the life of the process), so the first-trace benchmarks run a fixed, small number of times.
constexpr benchmark::IterationCount kFirstTraceIterations = 5;

void BM_ScriptResNet18_Plain(benchmark::State& s) { bm_script_plain(s, script_resnet()); }
void BM_ScriptResNet18_PlainAsWritten(benchmark::State& s) {
  bm_script_as_written(s, script_resnet());
}
void BM_ScriptResNet18_Traced(benchmark::State& s) {
  bm_script_traced(s, script_resnet(), script_resnet().tracer);
}
void BM_ScriptResNet18_AtenOps(benchmark::State& s) {
  bm_script_traced(s, script_resnet(), script_resnet().aten_tracer);
}
void BM_ScriptResNet18_FirstTrace(benchmark::State& s) {
  bm_script_first_trace(s, script_resnet());
}
void BM_ScriptResNet18_Paired(benchmark::State& s) { bm_script_paired(s, script_resnet(), 0); }
BENCHMARK(BM_ScriptResNet18_Plain)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(kResNetMinTime);
BENCHMARK(BM_ScriptResNet18_PlainAsWritten)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(kResNetMinTime);
BENCHMARK(BM_ScriptResNet18_Traced)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(kResNetMinTime);
BENCHMARK(BM_ScriptResNet18_AtenOps)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(kResNetMinTime);
BENCHMARK(BM_ScriptResNet18_FirstTrace)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(kFirstTraceIterations);
BENCHMARK(BM_ScriptResNet18_Paired)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(kResNetMinTime);

void BM_ResNet18_Plain(benchmark::State& s) {
  bench::bm_plain(s, bench::fixture<bench::make_resnet>());
}
void BM_ResNet18_Traced(benchmark::State& s) {
  bench::bm_traced(s, bench::fixture<bench::make_resnet>(), kEval);
}
void BM_ResNet18_JitTrace(benchmark::State& s) {
  bench::bm_jit_trace(s, bench::frozen_fixture<bench::make_resnet>());
}
BENCHMARK(BM_ResNet18_Plain)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(kResNetMinTime);
BENCHMARK(BM_ResNet18_Traced)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(kResNetMinTime);
BENCHMARK(BM_ResNet18_JitTrace)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(kResNetMinTime);

void BM_ScriptChain1000_Plain(benchmark::State& s) {
  bm_script_plain(s, script_chain());
  set_per_op_counter(s);
}
void BM_ScriptChain1000_PlainAsWritten(benchmark::State& s) {
  bm_script_as_written(s, script_chain());
  set_per_op_counter(s);
}
void BM_ScriptChain1000_Traced(benchmark::State& s) {
  bm_script_traced(s, script_chain(), script_chain().tracer);
  set_per_op_counter(s);
}
void BM_ScriptChain1000_FirstTrace(benchmark::State& s) {
  bm_script_first_trace(s, script_chain());
}
void BM_ScriptChain1000_Paired(benchmark::State& s) {
  bm_script_paired(s, script_chain(), kChainOps);
}
BENCHMARK(BM_ScriptChain1000_Plain)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kChainMinTime);
BENCHMARK(BM_ScriptChain1000_PlainAsWritten)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kChainMinTime);
BENCHMARK(BM_ScriptChain1000_Traced)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kChainMinTime);
BENCHMARK(BM_ScriptChain1000_FirstTrace)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(kFirstTraceIterations);
BENCHMARK(BM_ScriptChain1000_Paired)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kChainMinTime);

void BM_Chain1000_Plain(benchmark::State& s) {
  bench::bm_plain(s, bench::fixture<bench::make_chain>());
  set_per_op_counter(s);
}
void BM_Chain1000_Traced(benchmark::State& s) {
  bench::bm_traced(s, bench::fixture<bench::make_chain>(), kEval);
  set_per_op_counter(s);
}
void BM_Chain1000_Paired(benchmark::State& s) {
  bm_templated_paired(s, bench::fixture<bench::make_chain>(), kChainOps);
}
BENCHMARK(BM_Chain1000_Plain)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(kChainMinTime);
BENCHMARK(BM_Chain1000_Traced)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kChainMinTime);
BENCHMARK(BM_Chain1000_Paired)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kChainMinTime);

// ---- summary ------------------------------------------------------------------------------------

/// The summary reporter, also remembering each benchmark's counters (the median's with
/// repetitions), for the Paired benchmarks' numbers.
class Reporter : public bench::SummaryReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      std::string name = r.run_name.function_name;
      if (!r.run_name.args.empty()) name += "/" + r.run_name.args;
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name != "median") continue;
        for (const auto& [key, c] : r.counters) median_[name][key] = c.value;
      } else {
        for (const auto& [key, c] : r.counters) single_[name][key] = c.value;
      }
    }
    SummaryReporter::ReportRuns(runs);
  }

  std::optional<double> counter(const std::string& name, const std::string& key) const {
    for (const auto* m : {&median_, &single_}) {
      if (auto it = m->find(name); it != m->end())
        if (auto c = it->second.find(key); c != it->second.end()) return c->second;
    }
    return std::nullopt;
  }

 private:
  std::map<std::string, std::map<std::string, double>> median_;
  std::map<std::string, std::map<std::string, double>> single_;
};

/// Prints a Paired benchmark's ratio traced / plain (counters `traced_over_plain` and `_wall`).
void print_paired_ratio(const Reporter& rep, const std::string& label, const std::string& name,
                        const char* target = "") {
  const auto cpu = rep.counter(name, "traced_over_plain");
  const auto wall = rep.counter(name, "traced_over_plain_wall");
  if (!cpu || !wall) return;
  std::printf("  %-40s cpu %8.3f   wall %8.3f   (%s, paired)%s%s\n", label.c_str(), *cpu, *wall,
              name.c_str(), *target ? "  target " : "", target);
}

/// Prints a Paired benchmark's overhead per op (counters `overhead_ns_per_op` and `_wall`).
void print_paired_overhead(const Reporter& rep, const std::string& label, const std::string& name,
                           const char* target = "") {
  const auto cpu = rep.counter(name, "overhead_ns_per_op");
  const auto wall = rep.counter(name, "overhead_ns_per_op_wall");
  if (!cpu || !wall) return;
  std::printf("  %-40s cpu %8.1f ns wall %8.1f ns (%s, paired)%s%s\n", label.c_str(), *cpu, *wall,
              name.c_str(), *target ? "  target " : "", target);
}

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);  // stable numbers: every op on the calling thread
  const std::filesystem::path file = resnet_file();
  if (!std::filesystem::exists(file)) {
    std::fprintf(
        stderr,
        "bench_script: %s not found: make it with `python3 tests/script/make_models.py %s` "
        "(from the source tree; or set RECORDER_SCRIPT_MODELS to the folder that holds it)\n",
        file.string().c_str(), models_dir().string().c_str());
    return 1;
  }
  try {
    g_resnet_script = recorder::load_model(file);
    g_resnet_script_twin = recorder::load_model(file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_script: %s\n", e.what());
    return 1;
  }

  Reporter rep;
  if (!bench::run_benchmarks(argc, argv, rep)) return 1;

  std::printf(
      "\nSummary (torch threads: %d; eval mode, NoGradGuard; one tracer reused per model)\n",
      at::get_num_threads());
  const std::string sp = "BM_ScriptResNet18_Plain";
  const std::string sw = "BM_ScriptResNet18_PlainAsWritten";
  const std::string st = "BM_ScriptResNet18_Traced";
  const std::string sa = "BM_ScriptResNet18_AtenOps";
  const std::string tp = "BM_ResNet18_Plain";
  const std::string tt = "BM_ResNet18_Traced";
  const std::string tj = "BM_ResNet18_JitTrace";
  std::printf(" ResNet-18, 1x3x224x224: TorchScript (%s)\n", file.string().c_str());
  bench::print_time(rep, "plain module.forward", sp);
  bench::print_time(rep, "plain, graph optimizer off", sw);
  bench::print_time(rep, "Tracer<record::Structure>::run", st);
  bench::print_time(rep, "Tracer<record::AtenOps>::run", sa);
  bench::print_time(rep, "first run of a fresh tracer", "BM_ScriptResNet18_FirstTrace");
  bench::print_ratio(rep, "traced / plain", st, sp, "<= 1.05");
  print_paired_ratio(rep, "traced / plain", "BM_ScriptResNet18_Paired", "<= 1.05");
  bench::print_ratio(rep, "aten-ops traced / plain", sa, sp);
  bench::print_ratio(rep, "traced / plain, optimizer off", st, sw);
  bench::print_ratio(rep, "plain optimizer off / plain", sw, sp);
  std::printf(" ResNet-18, 1x3x224x224: templated (models::ResNet18())\n");
  bench::print_time(rep, "plain model->forward", tp);
  bench::print_time(rep, "Tracer<record::Structure>::run", tt);
  bench::print_time(rep, "torch::jit::tracer::trace", tj);
  bench::print_ratio(rep, "traced / plain", tt, tp, "<= 1.05");
  bench::print_ratio(rep, "jit trace / plain", tj, tp);
  std::printf(" ResNet-18, the two front ends\n");
  bench::print_ratio(rep, "script plain / templated plain", sp, tp);
  bench::print_ratio(rep, "script traced / templated traced", st, tt);

  const std::string cp = "BM_ScriptChain1000_Plain";
  const std::string cw = "BM_ScriptChain1000_PlainAsWritten";
  const std::string ct = "BM_ScriptChain1000_Traced";
  const std::string hp = "BM_Chain1000_Plain";
  const std::string ht = "BM_Chain1000_Traced";
  std::printf(" chain of %d tiny ops on a [4] float tensor: TorchScript (Module::define)\n",
              kChainOps);
  bench::print_time(rep, "plain module.forward", cp);
  bench::print_time(rep, "plain, graph optimizer off", cw);
  bench::print_time(rep, "Tracer<record::Structure>::run", ct);
  bench::print_time(rep, "first run of a fresh tracer", "BM_ScriptChain1000_FirstTrace");
  bench::print_overhead_ns(rep, "recording overhead per op", ct, cp, kChainOps, "<= 300 ns");
  print_paired_overhead(rep, "recording overhead per op", "BM_ScriptChain1000_Paired", "<= 300 ns");
  bench::print_overhead_ns(rep, "overhead per op, optimizer off", ct, cw, kChainOps);
  bench::print_ratio(rep, "traced / plain", ct, cp);
  print_paired_ratio(rep, "traced / plain", "BM_ScriptChain1000_Paired");
  std::printf(" chain of %d tiny ops on a [4] float tensor: templated (bench::chain)\n", kChainOps);
  bench::print_time(rep, "plain model->forward", hp);
  bench::print_time(rep, "Tracer<record::Structure>::run", ht);
  bench::print_overhead_ns(rep, "recording overhead per op", ht, hp, kChainOps, "<= 300 ns");
  print_paired_overhead(rep, "recording overhead per op", "BM_Chain1000_Paired", "<= 300 ns");
  bench::print_ratio(rep, "traced / plain", ht, hp);
  print_paired_ratio(rep, "traced / plain", "BM_Chain1000_Paired");
  std::printf(" chain, the two front ends\n");
  bench::print_ratio(rep, "script plain / templated plain", cp, hp);
  bench::print_ratio(rep, "script traced / templated traced", ct, ht);
  return 0;
}
