#pragma once
/// Running a program without a shell (POSIX): its standard input fed, its standard output and
/// error read through poll, under a time limit, killed and reaped when it runs past it.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace recorder::detail {

/// True when `program` is an executable file in one of the folders of `PATH`.
inline bool on_path(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view rest = path;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    if (!dir.empty() && ::access((dir + "/" + std::string(program)).c_str(), X_OK) == 0)
      return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

/// Closes a file descriptor when it goes out of scope.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { reset(); }

  int get() const noexcept { return fd_; }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

/// Blocks SIGPIPE in this thread while alive, so that writing to a program that exited early
/// fails with EPIPE instead of killing the process; a SIGPIPE raised meanwhile is discarded.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;
  ~SigpipeGuard() {
    if (!was_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{0, 0};
        while (sigtimedwait(&pipe_, nullptr, &zero) == -1 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

/// `run_program` found no executable of that name on PATH.
struct ProgramNotFound : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A program run by `run_program` exited with a non-zero status or was killed.
struct ProgramFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A program run by `run_program` ran past its time limit and was killed.
struct ProgramTimedOut : ProgramFailed {
  using ProgramFailed::ProgramFailed;
};

/// `argv` joined with spaces, for messages: `dot -Tsvg`.
inline std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

/// A duration for messages: `60 s`, `0.25 s`.
inline std::string seconds_text(std::chrono::milliseconds d) {
  std::string out = std::to_string(d.count() / 1000);
  if (const auto ms = d.count() % 1000; ms != 0) {
    std::string frac = std::to_string(1000 + ms).substr(1);
    while (frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out + " s";
}

/// Runs `argv` (looked up on PATH, no shell), feeds `input` on its stdin and returns its
/// stdout. Throws `ProgramNotFound` when it is not on PATH, `std::runtime_error` when it cannot
/// be started,
/// `ProgramFailed` when it exits with a non-zero status (the message includes its stderr),
/// and `ProgramTimedOut` when `timeout` is positive and the program runs longer: it is then
/// killed (SIGKILL) and reaped before the exception leaves.
inline std::string run_program(
    const std::vector<std::string>& argv, std::string_view input,
    std::chrono::milliseconds timeout = std::chrono::milliseconds::zero()) {
  if (argv.empty()) throw std::invalid_argument("recorder::detail::run_program: empty argv");
  const auto sys_error = [&](std::string_view what, int err) {
    return std::runtime_error("recorder: " + std::string(what) + " '" + argv[0] +
                              "': " + std::generic_category().message(err));
  };
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw sys_error("cannot create a pipe for", errno);
  FileDescriptor in_r(in[0]), in_w(in[1]);
  if (::pipe2(out, O_CLOEXEC) != 0) throw sys_error("cannot create a pipe for", errno);
  FileDescriptor out_r(out[0]), out_w(out[1]);
  if (::pipe2(err, O_CLOEXEC) != 0) throw sys_error("cannot create a pipe for", errno);
  FileDescriptor err_r(err[0]), err_w(err[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_r.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc == ENOENT)
    throw ProgramNotFound("recorder: the program '" + argv[0] + "' was not found on PATH");
  if (rc != 0) throw sys_error("cannot start", rc);
  in_r.reset();
  out_w.reset();
  err_w.reset();

  using clock = std::chrono::steady_clock;
  const bool limited = timeout > std::chrono::milliseconds::zero();
  const clock::time_point deadline = limited ? clock::now() + timeout : clock::time_point::max();
  bool timed_out = false;
  std::string result, errors;
  {
    SigpipeGuard guard;
    ::fcntl(in_w.get(), F_SETFL, ::fcntl(in_w.get(), F_GETFL) | O_NONBLOCK);
    std::size_t written = 0;
    if (input.empty()) in_w.reset();
    char buffer[65536];
    while (out_r.get() >= 0 || err_r.get() >= 0) {
      pollfd fds[3] = {
          {in_w.get(), POLLOUT, 0}, {out_r.get(), POLLIN, 0}, {err_r.get(), POLLIN, 0}};
      int wait_ms = -1;
      if (limited) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
        if (left <= std::chrono::milliseconds::zero()) {
          timed_out = true;
          break;
        }
        wait_ms = static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), INT_MAX));
      }
      if (::poll(fds, 3, wait_ms) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (in_w.get() >= 0 && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
        const ::ssize_t n = ::write(in_w.get(), input.data() + written, input.size() - written);
        if (n > 0) written += static_cast<std::size_t>(n);
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) in_w.reset();
      }
      for (int k = 1; k < 3; ++k) {
        if (!(fds[k].revents & (POLLIN | POLLERR | POLLHUP))) continue;
        FileDescriptor& fd = k == 1 ? out_r : err_r;
        const ::ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n > 0)
          (k == 1 ? result : errors).append(buffer, static_cast<std::size_t>(n));
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
          fd.reset();
      }
    }
    in_w.reset();
  }
  if (timed_out) ::kill(pid, SIGKILL);
  out_r.reset();
  err_r.reset();

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw sys_error("cannot wait for", errno);
  }
  if (timed_out)
    throw ProgramTimedOut("recorder: '" + command_line(argv) + "' ran past its time limit of " +
                          seconds_text(timeout) + " and was killed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string message = "recorder: '" + command_line(argv);
    message += WIFEXITED(status) ? "' exited with status " + std::to_string(WEXITSTATUS(status))
                                 : "' was killed by signal " + std::to_string(WTERMSIG(status));
    if (!errors.empty()) message += ": " + errors;
    throw ProgramFailed(message);
  }
  return result;
}

}  // namespace recorder::detail
