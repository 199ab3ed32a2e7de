#pragma once
/// Plain and traced forwards of one model taking turns in one benchmark, each timed with the
/// thread's CPU clock. Two separate benchmarks (plain, then traced) drift apart by more than a
/// few percent on a shared machine; taking turns, drift hits both alike, so their difference
/// (the recording) is steady.

#include <recorder/recorder.hpp>

#include <torch/torch.h>

#include <benchmark/benchmark.h>

#include <time.h>

namespace bench {

/// This thread's CPU time, in seconds.
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Runs `f.model->forward(f.input)` and `tracer.run(f.model, f.input)` in turns, with one
/// tracer for all iterations (so it copies its module records from the third on). Counters: `plain_us`, `traced_us`, `ratio` (traced / plain) and `ns_per_<unit>`, the
/// recording time divided by `units` (module calls, recorded nodes, ...).
template <class F>
void bm_taking_turns(benchmark::State& state, F& f, double units, const char* unit) {
  torch::NoGradGuard no_grad;
  recorder::Tracer<recorder::record::Structure> tracer;
  double plain = 0, traced = 0;
  for (auto _ : state) {
    const double t0 = thread_cpu_seconds();
    at::Tensor y = f.model->forward(f.input);
    benchmark::DoNotOptimize(y);
    const double t1 = thread_cpu_seconds();
    auto r = tracer.run(f.model, f.input);
    benchmark::DoNotOptimize(r);
    const double t2 = thread_cpu_seconds();
    plain += t1 - t0;
    traced += t2 - t1;
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["plain_us"] = plain / n * 1e6;
  state.counters["traced_us"] = traced / n * 1e6;
  state.counters["ratio"] = traced / plain;
  state.counters[std::string("ns_per_") + unit] = (traced - plain) / n / units * 1e9;
}

}  // namespace bench
