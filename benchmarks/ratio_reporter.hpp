#pragma once
/// A console reporter that also remembers each benchmark's time, so `main` can print ratios
/// between benchmarks of the same run (traced / plain, off / plain, ...).
///
/// With `--benchmark_repetitions=N` the median of the repetitions is used; otherwise the
/// single measurement.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bench {

/// Wall-clock and CPU seconds per iteration of one benchmark.
struct Times {
  double real = 0;
  double cpu = 0;
};

class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const double unit = benchmark::GetTimeUnitMultiplier(r.time_unit);
      const Times t{r.GetAdjustedRealTime() / unit, r.GetAdjustedCPUTime() / unit};
      // "BM_GraphAppend/1000": function name and arguments, without "/min_time:3.000" etc.
      std::string name = r.run_name.function_name;
      if (!r.run_name.args.empty()) name += "/" + r.run_name.args;
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "median") {
          median_[name] = t;
          for (const auto& [key, counter] : r.counters) median_counters_[name][key] = counter.value;
        }
      } else {
        single_[name] = t;
        for (const auto& [key, counter] : r.counters) counters_[name][key] = counter.value;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  /// Times per iteration of benchmark `name` ("BM_Foo" or "BM_Foo/1000").
  std::optional<Times> times(const std::string& name) const {
    if (auto it = median_.find(name); it != median_.end()) return it->second;
    if (auto it = single_.find(name); it != single_.end()) return it->second;
    return std::nullopt;
  }

  /// The user counters of benchmark `name`: the medians over its repetitions, else its last
  /// run's; empty when none.
  std::map<std::string, double> counters(const std::string& name) const {
    if (auto it = median_counters_.find(name); it != median_counters_.end()) return it->second;
    if (auto it = counters_.find(name); it != counters_.end()) return it->second;
    return {};
  }

 private:
  std::map<std::string, Times> median_;
  std::map<std::string, Times> single_;
  std::map<std::string, std::map<std::string, double>> counters_;
  std::map<std::string, std::map<std::string, double>> median_counters_;
};

// The summary lines give each figure twice: from CPU time (the benchmark thread's own CPU
// time; torch runs with one thread, so this is all the work, and it is robust to other load
// on a shared machine) and from wall-clock time.

/// Prints "label  ratio(cpu)  ratio(wall)  (a / b)".
inline void print_ratio(const SummaryReporter& rep, const std::string& label, const std::string& a,
                        const std::string& b, const char* target = "") {
  const auto ta = rep.times(a);
  const auto tb = rep.times(b);
  if (!ta || !tb) return;
  std::printf("  %-40s cpu %8.3f   wall %8.3f   (%s / %s)%s%s\n", label.c_str(), ta->cpu / tb->cpu,
              ta->real / tb->real, a.c_str(), b.c_str(), *target ? "  target " : "", target);
}

/// Prints "(a - b) / n" in nanoseconds: a per-op overhead.
inline void print_overhead_ns(const SummaryReporter& rep, const std::string& label,
                              const std::string& a, const std::string& b, double n,
                              const char* target = "") {
  const auto ta = rep.times(a);
  const auto tb = rep.times(b);
  if (!ta || !tb) return;
  std::printf("  %-40s cpu %8.1f ns wall %8.1f ns ((%s - %s) / %.0f)%s%s\n", label.c_str(),
              (ta->cpu - tb->cpu) / n * 1e9, (ta->real - tb->real) / n * 1e9, a.c_str(), b.c_str(),
              n, *target ? "  target " : "", target);
}

/// Prints one benchmark's time per iteration.
inline void print_time(const SummaryReporter& rep, const std::string& label, const std::string& a) {
  const auto ta = rep.times(a);
  if (!ta) return;
  const bool ms = ta->cpu >= 1e-3;
  const double k = ms ? 1e3 : 1e6;
  std::printf("  %-40s cpu %8.3f %s  wall %8.3f %s\n", label.c_str(), ta->cpu * k, ms ? "ms" : "us",
              ta->real * k, ms ? "ms" : "us");
}

/// Parses Google Benchmark's flags, runs the selected benchmarks into `rep` and shuts the
/// library down. False when an argument was not recognized (it has been reported).
inline bool run_benchmarks(int& argc, char** argv, SummaryReporter& rep) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return false;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();
  return true;
}

}  // namespace bench
