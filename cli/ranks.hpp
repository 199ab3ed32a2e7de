#pragma once
/// `record` and `profile` across processes: `--local-ranks N` spawns N ranks of this command
/// line on 127.0.0.1, `--distributed` joins a torchrun job. The only file that knows whether
/// this recorder was built with libgloo-dev (RECORDER_CLI_DISTRIBUTED): without it, the options
/// say so and a process is never a joined rank.

#include "common.hpp"

#include <recorder/capture/activations.hpp>
#include <recorder/capture/timing.hpp>
#include <recorder/render/call_times.hpp>

#ifdef RECORDER_CLI_DISTRIBUTED  // libgloo-dev was there: ranks can be spawned or joined
#include <recorder/distributed.hpp>
#include <recorder/distributed/launch.hpp>
#endif

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace recorder::cli {

// ---- ranks: record and profile on many processes ---------------------------------------------

/// How `record` and `profile` run across processes: `--local-ranks N` spawns N ranks on
/// 127.0.0.1; `--distributed` is one rank of a torchrun job; `--rank-of` marks a spawned rank.
struct RankArgs {
  int local_ranks = 0;                      // > 0: spawn that many ranks, merge on rank 0
  bool distributed = false;                 // one rank of a torchrun job
  std::string rank_of;                      // "r,world,store": a rank spawned by --local-ranks
  std::vector<std::string> command_line{};  // as given (argv), for the ranks to spawn
};

inline void add_rank_options(CLI::App& sub, RankArgs& r, const std::string& split) {
  sub.add_option("--local-ranks", r.local_ranks, "Run N ranks on 127.0.0.1 (c10d Gloo): " + split);
  sub.add_flag("--distributed", r.distributed,
               "Be one rank of a job launched by torchrun (RANK, WORLD_SIZE, MASTER_ADDR, "
               "MASTER_PORT): the same split and merge");
  sub.add_option("--rank-of", r.rank_of)->group("");  // set by --local-ranks
}

/// Where this process stands in a job of ranks: one process alone, or rank `rank` of `world`.
struct RankPlace {
  int rank = 0, world = 1;
  std::string store;  // the FileStore of a spawned rank; empty under torchrun
  bool joined = false;
};

inline RankPlace rank_place(const RankArgs& a) {
  RankPlace p;
  if (!a.rank_of.empty()) {
    const auto first = a.rank_of.find(','), second = a.rank_of.find(',', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      throw UsageError("recorder: --rank-of takes rank,world,store");
    p.rank = std::stoi(a.rank_of.substr(0, first));
    p.world = std::stoi(a.rank_of.substr(first + 1, second - first - 1));
    p.store = a.rank_of.substr(second + 1);
    p.joined = true;
  } else if (a.distributed) {
    const char* rank = std::getenv("RANK");
    const char* world = std::getenv("WORLD_SIZE");
    if (rank == nullptr || world == nullptr)
      throw UsageError(
          "recorder: --distributed joins a job launched by torchrun: RANK and "
          "WORLD_SIZE are not set (or use --local-ranks N)");
    p.rank = std::stoi(rank);
    p.world = std::stoi(world);
    p.joined = true;
  }
  return p;
}

#ifdef RECORDER_CLI_DISTRIBUTED
/// The c10d group of a rank (`place.joined`); empty for one process alone.
inline recorder::launch::Group join_group(const RankPlace& place) {
  using namespace std::chrono_literals;
  if (!place.joined) return {};
  return place.store.empty()
             ? recorder::launch::env_group(120s)
             : recorder::launch::file_group(place.store, place.rank, place.world, 120s);
}

/// `--local-ranks N`: runs this command line N times, each a rank of a job meeting through a
/// FileStore in a fresh folder on 127.0.0.1; rank 0 writes what was merged.
inline int spawn_ranks(const RankArgs& a) {
  const int local_ranks = a.local_ranks;
  std::vector<std::string> args;
  for (std::size_t i = 1; i < a.command_line.size(); ++i) {
    if (a.command_line[i] == "--local-ranks") {
      ++i;  // and its value
      continue;
    }
    if (a.command_line[i].starts_with("--local-ranks=")) continue;
    args.push_back(a.command_line[i]);
  }
  const auto folder = recorder::launch::temp_folder("recorder_ranks_");
  const auto codes = recorder::launch::run_ranks(
      local_ranks,
      [&](int r) {
        std::vector<std::string> mine = args;
        mine.push_back("--rank-of=" + std::to_string(r) + "," + std::to_string(local_ranks) + "," +
                       (folder / "store").string());
        return mine;
      },
      [](int) { return std::string(); }, std::chrono::hours(24));
  std::filesystem::remove_all(folder);
  for (std::size_t r = 0; r < codes.size(); ++r)
    if (codes[r] != 0) {
      std::cerr << "recorder: rank " << r << " of " << codes.size() << " failed (exit " << codes[r]
                << ")\n";
      return codes[r] == 2 ? 2 : 1;
    }
  return 0;
}
#endif

/// Checks the rank options. With `--local-ranks`, runs the ranks and gives their exit code;
/// otherwise nothing: this process does the work, alone or as one rank of a job.
inline std::optional<int> run_local_ranks(const RankArgs& a) {
  if (a.local_ranks == 0 && !a.distributed && a.rank_of.empty()) return std::nullopt;
#ifndef RECORDER_CLI_DISTRIBUTED
  throw UsageError(
      "recorder: this recorder was built without libgloo-dev: no --local-ranks "
      "or --distributed");
#else
  if (a.local_ranks < 0 || a.local_ranks > 64)
    throw UsageError("recorder: --local-ranks takes 1 to 64, not " + std::to_string(a.local_ranks));
  if (a.local_ranks != 0 && a.distributed)
    throw UsageError("recorder: give --local-ranks or --distributed, not both");
  if (a.local_ranks == 0) return std::nullopt;
  return spawn_ranks(a);
#endif
}

/// This process's place among ranks and, once it joined a job, what it merges with the others
/// (onto rank 0). Alone (`joined()` false) it merges nothing.
class Ranks {
 public:
  explicit Ranks(const RankArgs& a) : place_(rank_place(a)) {
#ifdef RECORDER_CLI_DISTRIBUTED
    group_ = join_group(place_);
#endif
  }

  const RankPlace& place() const noexcept { return place_; }
  bool joined() const noexcept { return place_.joined; }

  /// Every rank's recording merged onto rank 0 (`merged_across`); call on every rank alike.
  template <class R>
  rr::Activations<R> merged(const rr::Activations<R>& local) {
#ifdef RECORDER_CLI_DISTRIBUTED
    return recorder::merged_across(local, *group_, {.root = 0});
#else
    static_cast<void>(local);
    throw std::logic_error("recorder: not a rank of a job");
#endif
  }

  /// `timing`'s reduced times replaced by every rank's, reduced together, on rank 0 (its runs
  /// stay: `merge_across`); call on every rank alike.
  template <class R>
  void merge_times(rr::Timing<R>& timing) {
#ifdef RECORDER_CLI_DISTRIBUTED
    recorder::merge_across(timing, *group_, {.root = 0});
#else
    static_cast<void>(timing);
    throw std::logic_error("recorder: not a rank of a job");
#endif
  }

  /// The Chrome trace of every rank's runs, a process per rank, on rank 0.
  std::string chrome_trace(const std::vector<recorder::TimedRun>& runs, std::string_view name) {
#ifdef RECORDER_CLI_DISTRIBUTED
    return recorder::gather_chrome_trace(runs, name, *group_, {.root = 0});
#else
    static_cast<void>(runs), static_cast<void>(name);
    throw std::logic_error("recorder: not a rank of a job");
#endif
  }

 private:
  RankPlace place_;
#ifdef RECORDER_CLI_DISTRIBUTED
  recorder::launch::Group group_;
#endif
};

}  // namespace recorder::cli
