/// Per-op recording overhead and raw graph appends.
///
/// 1. A chain of 1,000 tiny ops (`x + 1`, `relu(x)`, `x * 0.5`, repeated) on a float tensor of
///    shape [4], written once, generic over its tensor type, and run on
///      - plain `at::Tensor`                                  (BM_Chain_Plain)
///      - `RecorderTensor<record::Off>`                       (BM_Chain_Off)
///      - `RecorderTensor<record::Structure>` with no session     (BM_Chain_GraphNoSession)
///      - `RecorderTensor<record::Structure>` in a recording      (BM_Chain_Traced): a fresh
///        `detail::Session` per iteration (as `Tracer::run` makes one per run), so the cost of
///        growing the graph from empty to ~3,000 nodes is part of the measurement.
///      - the same with a `record::Timing` as the session's op clock (BM_Chain_TimedMean,
///        BM_Chain_TimedKeepAll): every op timed, the run's op spans nested, keyed, reduced.
///    Overhead per op = (traced - plain) / 1000; timing's = (timed - traced) / 1000.
/// 2. `recorder::Graph` on its own (no libtorch): appending N ops, each a function node, a
///    tensor node and two edges, for N = 1k, 10k, 100k; against the same bytes pushed into
///    four plain `std::vector`s.
///
/// Only ATen op headers are included (no <torch/torch.h>). Torch runs with one thread.

#include "chain.hpp"
#include "ratio_reporter.hpp"

#include <recorder/capture/timing.hpp>
#include <recorder/graph/graph.hpp>
#include <recorder/policies/recording.hpp>
#include <recorder/tensor/recorder_tensor.hpp>
#include <recorder/tensor/op.hpp>
#include <recorder/tensor/session.hpp>

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/relu.h>

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kOps = bench::chain_ops;
using bench::chain;

at::Tensor small_input() { return at::ones({4}); }

void set_per_op_counter(benchmark::State& state) {
  // Seconds per op, shown with an SI prefix ("1.2u" = 1.2 us per op).
  state.counters["per_op"] = benchmark::Counter(
      kOps, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Chain_Plain(benchmark::State& state) {
  const at::Tensor x = small_input();
  for (auto _ : state) {
    at::Tensor y = chain(x);
    benchmark::DoNotOptimize(y);
  }
  set_per_op_counter(state);
}
BENCHMARK(BM_Chain_Plain);

void BM_Chain_Off(benchmark::State& state) {
  using T = recorder::RecorderTensor<recorder::record::Off>;
  const at::Tensor x = small_input();
  for (auto _ : state) {
    T y = chain(T(recorder::detail::adopt, x, {}));
    benchmark::DoNotOptimize(y);
  }
  set_per_op_counter(state);
}
BENCHMARK(BM_Chain_Off);

void BM_Chain_GraphNoSession(benchmark::State& state) {
  using T = recorder::RecorderTensor<recorder::record::Structure>;
  const at::Tensor x = small_input();
  for (auto _ : state) {
    T y = chain(T(recorder::detail::adopt, x, {}));
    benchmark::DoNotOptimize(y);
  }
  set_per_op_counter(state);
}
BENCHMARK(BM_Chain_GraphNoSession);

void BM_Chain_Traced(benchmark::State& state) {
  using T = recorder::RecorderTensor<recorder::record::Structure>;
  namespace d = recorder::detail;
  const at::Tensor x = small_input();
  std::size_t nodes = 0;
  for (auto _ : state) {
    d::Session s;
    d::SessionScope scope(s);
    const recorder::NodeId in =
        d::add_tensor_node(s, recorder::NodeKind::input, x, {}, {}, 0, "input");
    T y = chain(T(d::adopt, x, s.ref(in)));
    benchmark::DoNotOptimize(y);
    nodes = s.graph.size();
  }
  set_per_op_counter(state);
  state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_Chain_Traced);

/// The same, timed: a `record::Timing<Mean>` store is the session's call hooks and op clock,
/// so every op reads the clock twice and leaves a stamp, and the run's end converts, nests,
/// keys and reduces the 1,000 op spans (all of it inside the measurement).
/// 1,000 ops that do no work (`recorder::op("id", ...)` returning its argument): what remains
/// is the recording, so the timing's cost per op stands out of libtorch's dispatch noise.
template <class T>
T identity_chain(T x) {
  for (int i = 0; i < kOps; ++i)
    x = recorder::op(
        "id", [](const at::Tensor& t) { return t; }, x);
  return x;
}

/// How many runs a timing keeps before the benchmarks start a new one (a user keeps them all).
constexpr std::size_t kKeptRuns = 64;

/// `identity_chain` in a fresh session, with `timing` as its op clock when given.
template <class Timing>
void identity_chain_run(benchmark::State& state, Timing* timing) {
  using T = recorder::RecorderTensor<recorder::record::Structure>;
  namespace d = recorder::detail;
  const at::Tensor x = small_input();
  for (auto _ : state) {
    d::Session s;
    d::SessionScope scope(s);
    if (timing != nullptr) {
      s.hooks = {&timing->call_hooks()};
      s.op_clock = timing->call_hooks().op_clock();
      timing->call_hooks().begin();
    }
    const recorder::NodeId in =
        d::add_tensor_node(s, recorder::NodeKind::input, x, {}, {}, 0, "input");
    T y = identity_chain(T(d::adopt, x, s.ref(in)));
    if (timing != nullptr) {
      timing->call_hooks().end(s.graph);
      state.PauseTiming();
      if (timing->runs().size() >= kKeptRuns) *timing = Timing();
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(y);
  }
  set_per_op_counter(state);
}
void BM_IdChain_Traced(benchmark::State& state) {
  identity_chain_run<recorder::record::Timing<>>(state, nullptr);
}
BENCHMARK(BM_IdChain_Traced);
void BM_IdChain_TimedMean(benchmark::State& state) {
  recorder::record::Timing<recorder::reduce::Mean> timing;
  identity_chain_run(state, &timing);
}
BENCHMARK(BM_IdChain_TimedMean);
void BM_IdChain_TimedKeepAll(benchmark::State& state) {
  recorder::record::Timing<recorder::reduce::KeepAll> timing;
  identity_chain_run(state, &timing);
}
BENCHMARK(BM_IdChain_TimedKeepAll);

template <class R>
void chain_timed(benchmark::State& state) {
  using T = recorder::RecorderTensor<recorder::record::Structure>;
  namespace d = recorder::detail;
  const at::Tensor x = small_input();
  recorder::record::Timing<R> timing;
  std::size_t ops = 0;
  for (auto _ : state) {
    d::Session s;
    d::SessionScope scope(s);
    s.hooks = {&timing.call_hooks()};
    s.op_clock = timing.call_hooks().op_clock();
    timing.call_hooks().begin();
    const recorder::NodeId in =
        d::add_tensor_node(s, recorder::NodeKind::input, x, {}, {}, 0, "input");
    T y = chain(T(d::adopt, x, s.ref(in)));
    timing.call_hooks().end(s.graph);
    benchmark::DoNotOptimize(y);
    ops = timing.runs().back().ops.size();
    state.PauseTiming();  // the kept runs are the user's; freeing them is not the op's cost
    if (timing.runs().size() >= kKeptRuns) timing = recorder::record::Timing<R>();
    state.ResumeTiming();
  }
  set_per_op_counter(state);
  state.counters["ops"] = static_cast<double>(ops);
}
void BM_Chain_TimedMean(benchmark::State& state) { chain_timed<recorder::reduce::Mean>(state); }
BENCHMARK(BM_Chain_TimedMean);
void BM_Chain_TimedKeepAll(benchmark::State& state) {
  chain_timed<recorder::reduce::KeepAll>(state);
}
BENCHMARK(BM_Chain_TimedKeepAll);

// ---- the graph alone ---------------------------------------------------------------------

constexpr std::array<std::int64_t, 4> kShape{1, 64, 56, 56};

void BM_GraphAppend(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::size_t nodes = 0;
  std::size_t edges = 0;
  // Each graph is built in the memory the last one gave back, as a Tracer's are.
  const auto storage = std::make_shared<recorder::GraphStorage>();
  for (auto _ : state) {
    recorder::Graph g(storage);
    recorder::NodeId prev = g.add_tensor(recorder::NodeKind::input, {}, 0, kShape, "Float", "cpu");
    for (std::size_t i = 0; i < n; ++i) {
      const recorder::NodeId fn = g.add_function("relu", {}, 1);
      g.add_edge(prev, fn);
      const recorder::NodeId t =
          g.add_tensor(recorder::NodeKind::tensor, {}, 1, kShape, "Float", "cpu", fn);
      g.add_edge(fn, t);
      prev = t;
    }
    benchmark::DoNotOptimize(g);
    nodes = g.size();
    edges = g.edge_count();
  }
  state.counters["per_op"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["edges"] = static_cast<double>(edges);
}
BENCHMARK(BM_GraphAppend)->Arg(1000)->Arg(10000)->Arg(100000);

/// The floor: the same records pushed into four plain vectors (no checks, no ids).
void BM_VectorAppendBaseline(benchmark::State& state) {
  struct Node {
    std::uint8_t kind;
    std::uint16_t depth;
    std::uint32_t parent;
    std::uint32_t data;
  };
  struct Edge {
    std::uint32_t from, to;
  };
  struct Tensor {
    std::uint32_t shape_begin, ndim;
    const char* dtype;
    const char* device;
    std::uint32_t producer;
  };
  const auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    std::vector<Node> nodes;
    std::vector<Edge> edges;
    std::vector<Tensor> tensors;
    std::vector<std::int64_t> dims;
    for (std::size_t i = 0; i < n; ++i) {
      const auto fn = static_cast<std::uint32_t>(nodes.size());
      nodes.push_back(Node{5, 1, 0, static_cast<std::uint32_t>(i)});
      edges.push_back(Edge{fn - 1, fn});
      tensors.push_back(Tensor{static_cast<std::uint32_t>(dims.size()), 4, "Float", "cpu", fn});
      dims.insert(dims.end(), kShape.begin(), kShape.end());
      nodes.push_back(Node{2, 1, 0, static_cast<std::uint32_t>(tensors.size() - 1)});
      edges.push_back(Edge{fn, fn + 1});
    }
    benchmark::DoNotOptimize(nodes.data());
    benchmark::DoNotOptimize(edges.data());
    benchmark::DoNotOptimize(tensors.data());
    benchmark::DoNotOptimize(dims.data());
    benchmark::ClobberMemory();
  }
  state.counters["per_op"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}
BENCHMARK(BM_VectorAppendBaseline)->Arg(1000)->Arg(10000)->Arg(100000);

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);  // stable numbers: every op on the calling thread
  bench::SummaryReporter rep;
  if (!bench::run_benchmarks(argc, argv, rep)) return 1;

  std::printf("\nSummary (torch threads: %d; chain of %d ops on a [4] float tensor)\n",
              at::get_num_threads(), kOps);
  bench::print_time(rep, "plain chain of 1000 ops", "BM_Chain_Plain");
  bench::print_time(rep, "traced chain of 1000 ops", "BM_Chain_Traced");
  bench::print_overhead_ns(rep, "recording overhead per op", "BM_Chain_Traced", "BM_Chain_Plain",
                           kOps, "<= 300 ns");
  bench::print_ratio(rep, "traced / plain", "BM_Chain_Traced", "BM_Chain_Plain");
  bench::print_overhead_ns(rep, "timing overhead per op, Mean", "BM_Chain_TimedMean",
                           "BM_Chain_Traced", kOps, "<= 50 ns");
  bench::print_overhead_ns(rep, "timing overhead per op, KeepAll", "BM_Chain_TimedKeepAll",
                           "BM_Chain_Traced", kOps, "<= 50 ns");
  bench::print_time(rep, "traced chain of 1000 no-work ops", "BM_IdChain_Traced");
  bench::print_overhead_ns(rep, "timing overhead per no-work op, Mean", "BM_IdChain_TimedMean",
                           "BM_IdChain_Traced", kOps, "<= 50 ns");
  bench::print_overhead_ns(rep, "timing overhead per no-work op, KeepAll",
                           "BM_IdChain_TimedKeepAll", "BM_IdChain_Traced", kOps, "<= 50 ns");
  bench::print_ratio(rep, "off / plain", "BM_Chain_Off", "BM_Chain_Plain", "~1.00");
  bench::print_ratio(rep, "graph policy, no session / plain", "BM_Chain_GraphNoSession",
                     "BM_Chain_Plain");
  for (const char* n : {"1000", "10000", "100000"}) {
    const std::string g = std::string("BM_GraphAppend/") + n;
    const std::string v = std::string("BM_VectorAppendBaseline/") + n;
    if (auto t = rep.times(g))
      std::printf(
          "  Graph, %6s ops (fn + tensor + 2 edges each): cpu %6.1f ns/op, wall %6.1f ns/op\n", n,
          t->cpu * 1e9 / std::stod(n), t->real * 1e9 / std::stod(n));
    bench::print_ratio(rep, std::string("Graph / 4 plain vectors, ") + n, g, v);
  }
  return 0;
}
