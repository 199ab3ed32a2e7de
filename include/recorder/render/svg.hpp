#pragma once
/// SVG and PNG backends: the DOT text laid out by Graphviz's `dot` program (POSIX).

#include <recorder/graph/trace.hpp>
#include <recorder/render/dot.hpp>
#include <recorder/render/options.hpp>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <ostream>
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

/// Runs `argv` (looked up on PATH, no shell), feeds `input` on its stdin and returns its
/// stdout. Throws `std::runtime_error` when the program cannot be started, is not found, or
/// exits with a non-zero status (the message includes its stderr).
inline std::string run_program(const std::vector<std::string>& argv, std::string_view input) {
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
    throw std::runtime_error("recorder: the Graphviz program '" + argv[0] +
                             "' was not found on PATH; install Graphviz (Debian: apt-get install "
                             "graphviz) or render with recorder::backend::Dot instead");
  if (rc != 0) throw sys_error("cannot start", rc);
  in_r.reset();
  out_w.reset();
  err_w.reset();

  std::string result, errors;
  {
    SigpipeGuard guard;
    ::fcntl(in_w.get(), F_SETFL, ::fcntl(in_w.get(), F_GETFL) | O_NONBLOCK);
    std::size_t written = 0;
    if (input.empty()) in_w.reset();
    char buffer[65536];
    while (out_r.get() >= 0 || err_r.get() >= 0) {
      pollfd fds[3] = {{in_w.get(), POLLOUT, 0}, {out_r.get(), POLLIN, 0}, {err_r.get(), POLLIN, 0}};
      if (::poll(fds, 3, -1) < 0) {
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

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw sys_error("cannot wait for", errno);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string message = "recorder: '" + argv[0];
    for (std::size_t i = 1; i < argv.size(); ++i) message += " " + argv[i];
    message += WIFEXITED(status) ? "' exited with status " + std::to_string(WEXITSTATUS(status))
                                 : "' was killed by signal " + std::to_string(WTERMSIG(status));
    if (!errors.empty()) message += ": " + errors;
    throw std::runtime_error(message);
  }
  return result;
}

/// Lays out the DOT text of `trace` with `program -T<format>` and writes the result to `os`.
inline void render_through_graphviz(const Trace& trace, const RenderOptions& options,
                                    std::ostream& os, std::string_view format,
                                    const std::string& program = "dot") {
  std::string dot;
  write_dot(trace, options, dot);
  const std::string image = run_program({program, "-T" + std::string(format)}, dot);
  os.write(image.data(), static_cast<std::streamsize>(image.size()));
}

}  // namespace recorder::detail

namespace recorder::backend {

/// An SVG picture: the `Dot` text laid out by Graphviz's `dot -Tsvg` (found on PATH; no shell).
/// Throws `std::runtime_error` when `dot` is missing or fails, with its error output.
struct Svg {
  static constexpr std::string_view extension = ".svg";

  /// Writes the SVG document of `trace` seen with `options` to `os`.
  static void render(const Trace& trace, const RenderOptions& options, std::ostream& os) {
    detail::render_through_graphviz(trace, options, os, "svg");
  }
};

/// A PNG picture through Graphviz's `dot -Tpng`; see `Svg`.
struct Png {
  static constexpr std::string_view extension = ".png";

  /// Writes the PNG image of `trace` seen with `options` to `os` (binary).
  static void render(const Trace& trace, const RenderOptions& options, std::ostream& os) {
    detail::render_through_graphviz(trace, options, os, "png");
  }
};

}  // namespace recorder::backend
