/// Reduction throughput: one `update` of each reduction against a plain `dst.copy_(src)` of the
/// same bytes, in the same run.
///
///   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DRECORDER_BUILD_BENCHMARKS=ON
///   cmake --build build --target bench_reduce
///   build/benchmarks/bench_reduce --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
///
/// Inputs are float32 tensors of ResNet-18's layer4 output, [1, 512, 7, 7] (100 KB) and a
/// batch of 64 of them, [64, 512, 7, 7] (6.4 MB). Every benchmark reports bytes/s of
/// input consumed (`SetBytesProcessed`); the summary prints each reduction's throughput as a
/// fraction of `copy_`'s (1.00: as fast as copying the tensor once). `*_AtenOps` rows time
/// plain ATen formulations of the same steps, which the single-pass loops of
/// `detail/reduce_loops.hpp` replace. `Moments_Traffic` moves the bytes of a Welford step (a
/// float read, two doubles read and written per element) and does one add per double: the
/// most a double-precision `Moments` can reach. `Histogram_Increments` does only a histogram's
/// count increments (bins precomputed): the most any `Histogram` can reach on one thread.
/// `KeepAll` allocates a fresh tensor per update (a new copy is its point); its state is reset,
/// untimed, every 16 updates. Torch runs with one thread.

#include "ratio_reporter.hpp"

#include <recorder/tensor/value_ops.hpp>
#include <recorder/policies/reduction.hpp>

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/histc.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/randn.h>

#include <benchmark/benchmark.h>

#include <array>
#include <vector>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

namespace {

namespace reduce = recorder::reduce;

/// Arg 0: [1, 512, 7, 7]; arg 1: [64, 512, 7, 7].
at::Tensor input(const benchmark::State& state) {
  const std::int64_t batch = state.range(0) == 0 ? 1 : 64;
  return at::randn({batch, 512, 7, 7});
}

void set_bytes(benchmark::State& state, const at::Tensor& x) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(x.nbytes()));
}

void BM_Copy(benchmark::State& state) {
  const at::Tensor x = input(state);
  at::Tensor dst = at::empty(x.sizes(), x.options());
  for (auto _ : state) {
    dst.copy_(x);
    benchmark::DoNotOptimize(dst.data_ptr());
  }
  set_bytes(state, x);
}

/// `update` of reduction `r` on the same input, over and over.
template <class R>
void update_loop(benchmark::State& state, const R& r) {
  const at::Tensor x = input(state);
  auto s = r.init(x);
  for (auto _ : state) {
    r.update(s, x);
    benchmark::ClobberMemory();
  }
  set_bytes(state, x);
}

void BM_KeepAll(benchmark::State& state) {
  const reduce::KeepAll r;
  const at::Tensor x = input(state);
  auto s = r.init(x);
  for (auto _ : state) {
    r.update(s, x);
    if (s.values.size() == 16) {
      state.PauseTiming();
      s = r.init(x);
      state.ResumeTiming();
    }
  }
  set_bytes(state, x);
}

void BM_Last(benchmark::State& state) { update_loop(state, reduce::Last{}); }
void BM_Sum(benchmark::State& state) { update_loop(state, reduce::Sum{}); }
void BM_Mean(benchmark::State& state) { update_loop(state, reduce::Mean{}); }
void BM_Moments(benchmark::State& state) { update_loop(state, reduce::Moments{}); }
void BM_MinMax(benchmark::State& state) { update_loop(state, reduce::MinMax{}); }
void BM_Histogram(benchmark::State& state) { update_loop(state, reduce::Histogram{64, -4.0, 4.0}); }
void BM_Custom(benchmark::State& state) {
  update_loop(state, reduce::custom(
                         [](at::Tensor acc, const at::Tensor& x) { return at::maximum(acc, x); }));
}

// ---- the unfused ATen formulations, and a bound, for comparison -----------------------------------

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
[[gnu::target_clones("avx2", "default")]]
#endif
void add_to_both(double* __restrict a, double* __restrict b, const float* __restrict x,
                 std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    a[i] += v;
    b[i] += v;
  }
}

/// Welford's memory traffic without its arithmetic: `a += x; b += x` over two double buffers.
void BM_Moments_Traffic(benchmark::State& state) {
  const at::Tensor x = input(state);
  at::Tensor a = x.to(at::kDouble), b = x.to(at::kDouble);
  for (auto _ : state) {
    add_to_both(a.data_ptr<double>(), b.data_ptr<double>(), x.data_ptr<float>(), x.numel());
    benchmark::ClobberMemory();
  }
  set_bytes(state, x);
}

/// A histogram's count increments alone: the 64-bin index of every element computed once,
/// untimed, then `++counts[i % 4][bin[i]]` per element (an int32 read and an increment, spread
/// over four 32-bit tables so that repeated bins do not wait on each other, as `Histogram`
/// does). No histogram, whatever its arithmetic, can beat this on one thread.
void BM_Histogram_Increments(benchmark::State& state) {
  const at::Tensor x = input(state);
  const float* px = x.data_ptr<float>();
  const auto n = static_cast<std::size_t>(x.numel());
  std::vector<std::int32_t> bins(n);
  for (std::size_t i = 0; i < n; ++i)
    bins[i] = static_cast<std::int32_t>(std::clamp((px[i] + 4.0f) / 8.0f * 64.0f, 0.0f, 63.0f));
  std::array<std::array<std::uint32_t, 64>, 4> counts{};
  for (auto _ : state) {
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (std::size_t k = 0; k < 4; ++k) ++counts[k][static_cast<std::size_t>(bins[i + k])];
    for (; i < n; ++i) ++counts[0][static_cast<std::size_t>(bins[i])];
    benchmark::DoNotOptimize(counts.data());
    benchmark::ClobberMemory();
  }
  set_bytes(state, x);
}

/// Welford with ATen ops (the fallback of `value_ops<at::Tensor>::welford_update`).
void BM_Moments_AtenOps(benchmark::State& state) {
  const at::Tensor x = input(state);
  at::Tensor mean = x.to(at::kDouble), m2 = at::empty(x.sizes(), mean.options()).zero_();
  double n = 1;
  for (auto _ : state) {
    n += 1;
    const at::Tensor xw = x.to(at::kDouble);
    const at::Tensor delta = xw.sub(mean);
    mean.add_(delta.div(n));
    m2.addcmul_(delta, xw.sub(mean));
  }
  set_bytes(state, x);
}

/// `at::minimum_out` and `at::maximum_out` in place.
void BM_MinMax_AtenOps(benchmark::State& state) {
  const at::Tensor x = input(state);
  at::Tensor lo = x.clone(), hi = x.clone();
  for (auto _ : state) {
    at::minimum_out(lo, lo, x);
    at::maximum_out(hi, hi, x);
  }
  set_bytes(state, x);
}

/// `torch.histc` on a float64 copy, counts converted to int64 and added.
void BM_Histogram_AtenOps(benchmark::State& state) {
  const at::Tensor x = input(state);
  at::Tensor counts = at::empty({64}, at::kLong).zero_();
  for (auto _ : state) counts.add_(at::histc(x.to(at::kDouble), 64, -4.0, 4.0).to(at::kLong));
  set_bytes(state, x);
}

/// `torch.histc` on the float32 input itself (float counts, float bin edges).
void BM_Histogram_HistcFloat(benchmark::State& state) {
  const at::Tensor x = input(state);
  at::Tensor counts = at::empty({64}, at::kLong).zero_();
  for (auto _ : state) counts.add_(at::histc(x, 64, -4.0, 4.0).to(at::kLong));
  set_bytes(state, x);
}

constexpr std::array kBenchmarks = {
    std::pair{"BM_Copy", &BM_Copy},
    std::pair{"BM_KeepAll", &BM_KeepAll},
    std::pair{"BM_Last", &BM_Last},
    std::pair{"BM_Sum", &BM_Sum},
    std::pair{"BM_Mean", &BM_Mean},
    std::pair{"BM_Moments", &BM_Moments},
    std::pair{"BM_MinMax", &BM_MinMax},
    std::pair{"BM_Histogram", &BM_Histogram},
    std::pair{"BM_Custom", &BM_Custom},
    std::pair{"BM_Moments_AtenOps", &BM_Moments_AtenOps},
    std::pair{"BM_Moments_Traffic", &BM_Moments_Traffic},
    std::pair{"BM_MinMax_AtenOps", &BM_MinMax_AtenOps},
    std::pair{"BM_Histogram_Increments", &BM_Histogram_Increments},
    std::pair{"BM_Histogram_AtenOps", &BM_Histogram_AtenOps},
    std::pair{"BM_Histogram_HistcFloat", &BM_Histogram_HistcFloat},
};

/// Prints "label  throughput / copy_ throughput" from CPU and wall-clock time.
void print_throughput(const bench::SummaryReporter& rep, const std::string& name,
                      const std::string& arg) {
  const auto t = rep.times(name + "/" + arg);
  const auto c = rep.times("BM_Copy/" + arg);
  if (!t || !c) return;
  std::printf("  %-26s cpu %6.3f   wall %6.3f   (%.1f us per update, copy_ %.1f us)\n",
              name.c_str() + 3, c->cpu / t->cpu, c->real / t->real, t->cpu * 1e6, c->cpu * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  at::set_num_threads(1);  // stable numbers: every op on the calling thread
  for (const auto& [name, fn] : kBenchmarks) benchmark::RegisterBenchmark(name, fn)->Arg(0)->Arg(1);
  bench::SummaryReporter rep;
  if (!bench::run_benchmarks(argc, argv, rep)) return 1;

  for (const char* arg : {"0", "1"}) {
    std::printf("\nThroughput / copy_ throughput, float32 [%s, 512, 7, 7] (torch threads: %d)\n",
                arg[0] == '0' ? "1" : "64", at::get_num_threads());
    for (const auto& [name, fn] : kBenchmarks)
      if (std::string(name) != "BM_Copy") print_throughput(rep, name, arg);
  }
  return 0;
}
