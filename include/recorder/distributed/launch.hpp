#pragma once
/// Starting the ranks of a c10d job on one machine, as C++ users must (libtorch has no C++
/// launcher): a Gloo process group from torchrun's environment or from a FileStore, and N ranks
/// of this very program spawned on 127.0.0.1 (POSIX). Needs libgloo-dev (ProcessGroupGloo's
/// headers; libtorch 2.x's own headers guard what newer Gloo releases added, so Debian 12's Gloo
/// serves both libtorch versions); the rest of the library does not, and CMake checks this
/// header only where Gloo's are found. Used by the `recorder` command line (`--local-ranks`),
/// examples/distributed_stats.cpp, tests/distributed and benchmarks/bench_distributed. The
/// group-creation code here is, beside <recorder/torch_version.hpp>, the one place that
/// branches on the libtorch version.

#include <recorder/torch_version.hpp>

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace recorder::launch {

using Group = c10::intrusive_ptr<c10d::ProcessGroup>;

/// A Gloo group on 127.0.0.1 over `store`, failing after `timeout` when a peer is silent.
inline Group gloo_group(const c10::intrusive_ptr<c10d::Store>& store, int rank, int world,
                        std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  // Always an explicit device: createDefaultDevice() binds to whatever the hostname resolves to.
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
#if RECORDER_TORCH_AT_LEAST(2, 5)
  // From 2.0 the Gloo object is a c10d::Backend: a ProcessGroup holds it as the CPU backend, as
  // Python's init_process_group("gloo") builds it (2.0-2.4 took Options here; not supported).
  auto backend = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, options);
  auto group = c10::make_intrusive<c10d::ProcessGroup>(store, rank, world);
  group->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
  group->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO,
                    c10::intrusive_ptr<c10d::Backend>(std::move(backend)));
  return group;
#else
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, options);
#endif
}

/// Rank `rank` of `world` meeting through the file `store_file` (a fresh folder per job: a
/// stale file from a killed run makes ranks hang or fail).
inline Group file_group(const std::string& store_file, int rank, int world,
                        std::chrono::milliseconds timeout) {
  auto store = c10::make_intrusive<c10d::FileStore>(store_file, world);
  store->setTimeout(timeout);
  return gloo_group(store, rank, world, timeout);
}

inline std::string env(const char* name, const char* fallback = nullptr) {
  const char* v = std::getenv(name);
  if (v != nullptr) return v;
  if (fallback != nullptr) return fallback;
  throw std::runtime_error(std::string("launch: the environment variable ") + name +
                           " is not set (run under torchrun, or set RANK, WORLD_SIZE, "
                           "MASTER_ADDR and MASTER_PORT)");
}

/// True when torchrun (or a user) set RANK and WORLD_SIZE.
inline bool in_launched_job() { return std::getenv("RANK") && std::getenv("WORLD_SIZE"); }

/// This rank's group from RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, as Python's
/// `init_process_group("gloo")` builds it: under torchrun's agent store every rank is a
/// client of it (prefixed by the restart count); otherwise rank 0 serves the store.
inline Group env_group(std::chrono::milliseconds timeout) {
  const int rank = std::stoi(env("RANK"));
  const int world = std::stoi(env("WORLD_SIZE"));
  c10d::TCPStoreOptions o;
  o.port = static_cast<std::uint16_t>(std::stoi(env("MASTER_PORT")));
  o.numWorkers = world;
  o.timeout = timeout;
  const bool agent = env("TORCHELASTIC_USE_AGENT_STORE", "False") == "True";
  o.isServer = !agent && rank == 0;
  o.waitWorkers = false;
#if RECORDER_TORCH_AT_LEAST(2, 4)
  // libuv is the default from 2.4; builds without it (Debian's) refuse it, clients included.
  o.useLibUV = false;
#endif
  c10::intrusive_ptr<c10d::Store> store =
      c10::make_intrusive<c10d::TCPStore>(env("MASTER_ADDR"), o);
  if (agent)
    store = c10::make_intrusive<c10d::PrefixStore>(
        "/worker/attempt_" + env("TORCHELASTIC_RESTART_COUNT", "0"), store);
  return gloo_group(store, rank, world, timeout);
}

/// A fresh folder under the temporary directory: `<tmp>/<prefix>XXXXXX`.
inline std::filesystem::path temp_folder(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("launch: cannot create a folder like " + pattern);
  return pattern;
}

/// One spawned rank.
struct Child {
  pid_t pid = -1;
  int status = -1;  ///< exit code; 128 + signal when killed; -1 while running
};

/// Runs `ranks` copies of this program (`/proc/self/exe`, re-executed: no fork after ATen has
/// started threads), rank `r` with `args(r)`; with `output(r)` non-empty, its stdout and
/// stderr go to that file. Waits for all, killing the rest once `timeout` passes; returns
/// their exit codes in rank order (128 + signal for a killed one).
template <class Args, class Output>
std::vector<int> run_ranks(int ranks, Args args, Output output, std::chrono::milliseconds timeout) {
  std::vector<Child> children(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    std::vector<std::string> argv_s = args(r);
    argv_s.insert(argv_s.begin(), "/proc/self/exe");
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string out = output(r);
    if (!out.empty()) {
      posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0644);
      posix_spawn_file_actions_adddup2(&actions, 1, 2);
    }
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      for (Child& c : children) {
        if (c.pid <= 0) continue;
        ::kill(c.pid, SIGKILL);
        ::waitpid(c.pid, nullptr, 0);
      }
      throw std::runtime_error("launch: cannot spawn rank " + std::to_string(r));
    }
    children[static_cast<std::size_t>(r)].pid = pid;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    bool running = false;
    for (Child& c : children) {
      if (c.status >= 0) continue;
      int st = 0;
      if (::waitpid(c.pid, &st, WNOHANG) == c.pid)
        c.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      else
        running = true;
    }
    if (!running) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (Child& c : children)
        if (c.status < 0) ::kill(c.pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::vector<int> codes;
  for (const Child& c : children) codes.push_back(c.status);
  return codes;
}

}  // namespace recorder::launch
