/// Scale: trace time and memory as models grow, and render time of a large trace.
///
/// Models, in eval mode under `torch::NoGradGuard`, torch with one thread:
///   ResMLP/N        N residual blocks `x + fc2(relu(fc1(x)))` (Linear(64, 64)) in a
///                   `recorder::Sequential`, batch 8: N = 250, 500, 1,000
///   Transformer/L   examples/models/transformer.hpp with d_model 256, 8 heads, feed-forward
///                   1,024 and L = 12, 24, 48 encoder layers, on [32, 1] tokens
/// For each, `model->forward(x)` and `Tracer<record::Structure>{}.run(model, x)` take turns
/// (turns.hpp: the recording time per node is their difference). One more trace is made on a
/// new thread (so the graph's thread-local storage cache lends it nothing) and its size is
/// reported as counters:
///   nodes           recorded nodes (tensors, functions, module calls)
///   graph_B_node    `Graph::memory_bytes()` (vector capacities and module records) per node
///   heap_B_node     the growth of glibc's heap in use (`mallinfo2().uordblks`) from before the
///                   trace to after it, per node: everything the trace holds, the output
///                   tensor and anything libtorch caches in that forward included
/// Render/…        DOT, JSON and the summary table of the ResMLP/1000 trace.
///
/// The summary prints, per size, the recording time per recorded node ((traced - plain) /
/// nodes) and the bytes per node: both flat as the models grow means linear time and memory.

#include "ratio_reporter.hpp"
#include "turns.hpp"

#include <models/transformer.hpp>

#include <recorder/recorder.hpp>

#include <torch/torch.h>

#include <benchmark/benchmark.h>

#include <malloc.h>

#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <thread>

namespace {

// ---- models ---------------------------------------------------------------------------------

/// One residual block: `x + fc2(relu(fc1(x)))`, generic over its tensor type.
struct ResBlockImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc1{register_module("fc1", torch::nn::Linear(64, 64))};
  recorder::Module<torch::nn::Linear> fc2{register_module("fc2", torch::nn::Linear(64, 64))};

  template <recorder::tensor_like T>
  T forward(T x) {
    return x + fc2(relu(fc1(x)));
  }
};
TORCH_MODULE(ResBlock);

using ResMLP = recorder::Sequential<ResBlock>;

template <class M>
struct Fixture {
  M model;
  at::Tensor input;
};

Fixture<ResMLP>& res_mlp(int blocks) {
  static std::map<int, Fixture<ResMLP>> made;
  auto it = made.find(blocks);
  if (it == made.end()) {
    torch::manual_seed(0);
    ResMLP m;
    for (int i = 0; i < blocks; ++i) m->push_back(ResBlock());
    m->eval();
    it = made.emplace(blocks, Fixture<ResMLP>{m, torch::randn({8, 64})}).first;
  }
  return it->second;
}

Fixture<models::TransformerEncoderModel>& transformer(int layers) {
  static std::map<int, Fixture<models::TransformerEncoderModel>> made;
  auto it = made.find(layers);
  if (it == made.end()) {
    torch::manual_seed(0);
    models::TransformerEncoderModel m(/*vocab=*/100, /*d_model=*/256, /*heads=*/8, layers,
                                      /*feedforward=*/1024);
    m->eval();
    const at::Tensor tokens = torch::randint(0, 100, {32, 1}, torch::kLong);
    it = made.emplace(layers, Fixture<models::TransformerEncoderModel>{m, tokens}).first;
  }
  return it->second;
}

// ---- benchmark bodies -------------------------------------------------------------------------

/// The size of one trace of `f`, made on a new thread.
struct TraceSize {
  std::size_t nodes = 0;
  std::size_t graph_bytes = 0;
  std::size_t heap_bytes = 0;
};

template <class F>
TraceSize measure_trace(F& f) {
  TraceSize size;
  std::thread([&] {
    torch::NoGradGuard no_grad;
    recorder::Tracer<recorder::record::Structure> tracer;
    const std::size_t before = mallinfo2().uordblks;
    auto result = tracer.run(f.model, f.input);
    const std::size_t after = mallinfo2().uordblks;
    size.nodes = result.graph.size();
    size.graph_bytes = result.graph.memory_bytes();
    size.heap_bytes = after > before ? after - before : 0;
  }).join();
  return size;
}

/// Plain and traced forwards taking turns (turns.hpp), then the size of one more trace.
template <class F>
void bm_scale(benchmark::State& state, F& f) {
  const TraceSize size = measure_trace(f);
  const auto nodes = static_cast<double>(size.nodes);
  bench::bm_taking_turns(state, f, nodes, "node");
  state.counters["nodes"] = nodes;
  state.counters["graph_B_node"] = static_cast<double>(size.graph_bytes) / nodes;
  state.counters["heap_B_node"] = static_cast<double>(size.heap_bytes) / nodes;
}

void BM_ResMLP(benchmark::State& s) { bm_scale(s, res_mlp(static_cast<int>(s.range(0)))); }
void BM_Transformer(benchmark::State& s) { bm_scale(s, transformer(static_cast<int>(s.range(0)))); }

constexpr int kBlocks[] = {250, 500, 1000};
constexpr int kLayers[] = {12, 24, 48};

void blocks(benchmark::internal::Benchmark* b) {
  for (int n : kBlocks) b->Arg(n);
  b->Unit(benchmark::kMillisecond)->MinTime(2.0);
}
void layers(benchmark::internal::Benchmark* b) {
  for (int n : kLayers) b->Arg(n);
  b->Unit(benchmark::kMillisecond)->MinTime(4.0);
}
BENCHMARK(BM_ResMLP)->Apply(blocks);
BENCHMARK(BM_Transformer)->Apply(layers);

/// The trace of ResMLP/1000, made once.
const recorder::Trace& large_trace() {
  static const recorder::Trace trace = [] {
    torch::NoGradGuard no_grad;
    auto& f = res_mlp(1000);
    recorder::Trace t = recorder::Tracer<recorder::record::Structure>{}.run(f.model, f.input);
    return t;
  }();
  return trace;
}

template <recorder::render_backend B>
void BM_Render(benchmark::State& state) {
  const recorder::Trace& t = large_trace();
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = recorder::render_to_string<B>(t);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["nodes"] = static_cast<double>(t.graph.size());
}
BENCHMARK(BM_Render<recorder::backend::Dot>)
    ->Name("BM_Render/Dot")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Render<recorder::backend::Json>)
    ->Name("BM_Render/Json")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Render<recorder::backend::Summary>)
    ->Name("BM_Render/Summary")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

/// Prints, for one size, the recording time and memory per recorded node.
void per_node(const bench::SummaryReporter& rep, const std::string& label,
              const std::string& name) {
  const auto c = rep.counters(name);
  if (c.empty()) return;
  std::printf(
      "  %-22s nodes %6.0f  plain %8.2f ms  traced %8.2f ms  traced/plain %5.3f  "
      "recording %6.1f ns/node  graph %5.1f B/node  heap %5.1f B/node\n",
      label.c_str(), c.at("nodes"), c.at("plain_us") / 1e3, c.at("traced_us") / 1e3, c.at("ratio"),
      c.at("ns_per_node"), c.at("graph_B_node"), c.at("heap_B_node"));
}

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);
  bench::SummaryReporter rep;
  if (!bench::run_benchmarks(argc, argv, rep)) return 1;

  std::printf(
      "\nSummary (torch threads: %d; eval mode, NoGradGuard; targets: flat per node, "
      "<= 256 B/node)\n",
      at::get_num_threads());
  for (int n : kBlocks)
    per_node(rep, "ResMLP " + std::to_string(n) + " blocks", "BM_ResMLP/" + std::to_string(n));
  for (int n : kLayers)
    per_node(rep, "Transformer " + std::to_string(n) + " layers",
             "BM_Transformer/" + std::to_string(n));
  std::printf(" rendering the ResMLP 1,000-block trace (target <= 1 s each)\n");
  bench::print_time(rep, "DOT", "BM_Render/Dot");
  bench::print_time(rep, "JSON", "BM_Render/Json");
  bench::print_time(rep, "summary table", "BM_Render/Summary");
  return 0;
}
