// Merging across ranks (recorder/distributed.hpp) against a raw c10d allreduce of the same
// bytes, on 2 ranks spawned by this program (Gloo on 127.0.0.1, FileStore in a temporary
// folder). Both ranks run the same benchmarks with fixed iteration counts, so their collectives
// pair up; rank 0 reports.
//
//   build/benchmarks/bench_distributed [--benchmark_filter=...]
//
// BM_RawAllreduce        one allreduce(SUM) of 2 x 512x7x7 doubles: a Moments state's bytes
// BM_MergeMoments/L      merged_across of a ForwardOutput<Moments> with L layers of [1,512,7,7]
// BM_MergeMomentsRoot/1  the same, to rank 0 only (gather)
// counters: collectives per merge (constant in L: the states are packed), bytes sent per rank.
#include "ratio_reporter.hpp"

#include <recorder/distributed/launch.hpp>
#include <recorder/distributed.hpp>
#include <recorder/recorder.hpp>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

namespace rr = recorder::record;
namespace rd = recorder::reduce;
using namespace std::chrono_literals;

namespace {

constexpr int kIterations = 300;
c10d::ProcessGroup* group = nullptr;

// L ReLU layers in a row: each output is a [1, 512, 7, 7] tensor.
struct StackImpl : torch::nn::Module {
  std::vector<recorder::Module<torch::nn::ReLU>> layers;
  explicit StackImpl(int n) {
    for (int i = 0; i < n; ++i)
      layers.emplace_back(register_module("relu" + std::to_string(i), torch::nn::ReLU()));
  }
  template <recorder::tensor_like T>
  T forward(T x) {
    for (auto& l : layers) x = l(x);
    return x;
  }
};
TORCH_MODULE(Stack);

rr::ForwardOutput<rd::Moments> recording(int layers) {
  Stack model(layers);
  rr::ForwardOutput<rd::Moments> acts({recorder::by_class("ReLU")});
  recorder::Tracer<rr::ForwardOutput<rd::Moments>> tracer({.no_grad = true}, acts);
  for (int i = 0; i < 3; ++i) tracer.run(model, torch::randn({1, 512, 7, 7}));
  return acts;
}

void BM_RawAllreduce(benchmark::State& state) {
  std::vector<at::Tensor> t{torch::randn({2, 512, 7, 7}, torch::kDouble)};
  for (auto _ : state) group->allreduce(t)->wait();
  state.counters["collectives"] = 1;
  state.counters["bytes_sent"] = static_cast<double>(t[0].nbytes());
}

void merge(benchmark::State& state, std::optional<int> root) {
  const auto acts = recording(static_cast<int>(state.range(0)));
  recorder::MergeStats stats;
  for (auto _ : state) {
    auto merged = recorder::merged_across(acts, *group, {.root = root, .stats = &stats});
    benchmark::DoNotOptimize(merged);
  }
  state.counters["collectives"] = static_cast<double>(stats.collectives);
  state.counters["bytes_sent"] = static_cast<double>(stats.bytes_sent);
}
void BM_MergeMoments(benchmark::State& state) { merge(state, std::nullopt); }
void BM_MergeMomentsRoot(benchmark::State& state) { merge(state, 0); }

BENCHMARK(BM_RawAllreduce)->Iterations(kIterations)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_MergeMoments)
    ->Arg(1)
    ->Arg(16)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_MergeMomentsRoot)
    ->Arg(1)
    ->Iterations(kIterations)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

int run_rank(int argc, char** argv, const std::string& store, int rank) {
  at::set_num_threads(1);
  const recorder::launch::Group pg = recorder::launch::file_group(store, rank, 2, 60s);
  group = pg.get();
  bench::SummaryReporter rep;
  if (!bench::run_benchmarks(argc, argv, rep)) return 1;
  if (rank == 0) {
    std::printf("\nMerging a Moments state of 512x7x7 over 2 ranks (wall time; target <= 3x)\n");
    bench::print_ratio(rep, "merge / raw allreduce of the same bytes", "BM_MergeMoments/1",
                       "BM_RawAllreduce", "<= 3");
    bench::print_ratio(rep, "merge to the root / raw allreduce", "BM_MergeMomentsRoot/1",
                       "BM_RawAllreduce");
    bench::print_ratio(rep, "16 layers / 1 layer", "BM_MergeMoments/16", "BM_MergeMoments/1");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A rank: `bench_distributed --rank <store> <r> [benchmark flags]`.
  if (argc > 3 && std::string(argv[1]) == "--rank") {
    const std::string store = argv[2];
    const int rank = std::stoi(argv[3]);
    std::vector<char*> rest{argv[0]};
    for (int i = 4; i < argc; ++i) rest.push_back(argv[i]);
    int n = static_cast<int>(rest.size());
    return run_rank(n, rest.data(), store, rank);
  }
  const auto folder = recorder::launch::temp_folder("bench_distributed_");
  const auto codes = recorder::launch::run_ranks(
      2,
      [&](int r) {
        std::vector<std::string> a{"--rank", (folder / "store").string(), std::to_string(r)};
        for (int i = 1; i < argc; ++i) a.emplace_back(argv[i]);
        return a;
      },
      [](int r) { return r == 0 ? std::string() : std::string("/dev/null"); }, 10min);
  std::filesystem::remove_all(folder);
  return codes[0] == 0 && codes[1] == 0 ? 0 : 1;
}
