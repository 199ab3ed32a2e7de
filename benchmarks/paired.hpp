#pragma once
/// Paired timing, shared by the benchmark programs that compare two ways to run one model: each
/// iteration runs both, in alternating order, so that both see the same machine state.

#include <ATen/core/grad_mode.h>

#include <benchmark/benchmark.h>

#include <ctime>

namespace bench {

/// Seconds of this thread's CPU time and of the steady clock.
struct Stamp {
  double cpu;
  double wall;
  static Stamp now() {
    timespec c{};
    timespec w{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
    clock_gettime(CLOCK_MONOTONIC, &w);
    return {static_cast<double>(c.tv_sec) + static_cast<double>(c.tv_nsec) * 1e-9,
            static_cast<double>(w.tv_sec) + static_cast<double>(w.tv_nsec) * 1e-9};
  }
};

/// Each iteration runs `plain()` and `traced()` once, in alternating order, timing each apart;
/// counters: the ratio traced / plain and, for `ops` > 0, (traced - plain) / ops in ns.
template <class Plain, class Traced>
void bm_paired(benchmark::State& state, Plain plain, Traced traced, int ops) {
  at::NoGradGuard no_grad;
  Stamp p{0, 0};
  Stamp t{0, 0};
  auto timed = [](Stamp& sum, auto& f) {
    const Stamp a = Stamp::now();
    f();
    const Stamp b = Stamp::now();
    sum.cpu += b.cpu - a.cpu;
    sum.wall += b.wall - a.wall;
  };
  bool traced_first = false;
  for (auto _ : state) {
    if (traced_first) timed(t, traced);
    timed(p, plain);
    if (!traced_first) timed(t, traced);
    traced_first = !traced_first;
  }
  const auto n = static_cast<double>(state.iterations());
  if (n == 0 || p.cpu <= 0 || p.wall <= 0) return;
  state.counters["traced_over_plain"] = t.cpu / p.cpu;
  state.counters["traced_over_plain_wall"] = t.wall / p.wall;
  if (ops > 0) {
    state.counters["overhead_ns_per_op"] = (t.cpu - p.cpu) / n / ops * 1e9;
    state.counters["overhead_ns_per_op_wall"] = (t.wall - p.wall) / n / ops * 1e9;
  }
}

}  // namespace bench
