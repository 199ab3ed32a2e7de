#pragma once
/// SVG and PNG backends: the DOT text laid out by Graphviz's `dot` program (POSIX). The
/// backends are values: their time limit, fallback engine and report sink are settings.

#include <recorder/detail/process.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/dot.hpp>
#include <recorder/render/options.hpp>
#include <recorder/render/time_dot.hpp>
#include <recorder/render/visible.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace recorder::detail {

/// Above this many visible nodes, `Svg` and `Png` pass `large_graph_limits` to `dot`.
inline constexpr std::size_t large_graph_nodes = 1000;

/// Graphviz layout limits for large graphs: at most 2 network-simplex iterations per node
/// for ranking and positioning (`nslimit1`, `nslimit`) and half the crossing-minimisation
/// passes (`mclimit`). dot 2.43 honours all three (`dot -v` shows `maxiter=2*N`).
inline const std::vector<std::string>& large_graph_limits() {
  static const std::vector<std::string> limits{"-Gnslimit=2", "-Gnslimit1=2", "-Gmclimit=0.5"};
  return limits;
}

/// The engine used by default when `dot` runs past its time limit (or fails on a large graph):
/// `sfdp`, Graphviz's multilevel force-directed layout, lays out a 10,000-node DAG in about 3 s.
inline constexpr std::string_view fallback_engine = "sfdp";

/// How long `dot` may run when the backend sets no `timeout`: `RECORDER_DOT_TIMEOUT` seconds
/// when set (a decimal number such as `120` or `0.5`; `0` means no limit), else 60 s. A bad
/// value is said on `report` (when not null) and ignored.
inline std::chrono::milliseconds dot_timeout(std::ostream* report = &std::cerr) {
  constexpr std::chrono::milliseconds fallback{60'000};
  const char* text = std::getenv("RECORDER_DOT_TIMEOUT");
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(seconds >= 0) || seconds > 1e6) {
    if (report != nullptr)
      *report << "recorder: ignoring RECORDER_DOT_TIMEOUT='" << text
              << "' (not a number of seconds); using 60 s\n";
    return fallback;
  }
  return std::chrono::milliseconds{static_cast<std::int64_t>(seconds * 1000 + 0.5)};
}

/// The first line of `message`, for one-line notes.
inline std::string first_line(std::string_view message) {
  return std::string(message.substr(0, message.find('\n')));
}

/// What runs a Graphviz program: `run_program`'s signature (argv, input, time limit).
using GraphvizProgram = std::string (*)(const std::vector<std::string>&, std::string_view,
                                        std::chrono::milliseconds);

/// How Graphviz is run: the settings `Svg` and `Png` carry.
struct GraphvizRun {
  std::string_view format;                           ///< `-T<format>`: "svg", "png"
  std::optional<std::chrono::milliseconds> timeout;  ///< unset: `dot_timeout()`; zero: none
  std::string_view fallback;                         ///< engine after a timeout; empty: none
  std::ostream* report;                              ///< where each step is said; null: nowhere
  const CallTimes* times = nullptr;                  ///< colour module calls by time (`TimeDot`)
  /// Runs each program; tests give one that answers without a clock, so that what follows a
  /// time-out is checked whatever the machine's speed.
  GraphvizProgram program = run_program;
};

/// Lays out the DOT text of `trace` with `dot -T<format>` and writes the result to `os`.
///
/// Above `large_graph_nodes` visible nodes it passes `large_graph_limits()`; it runs under the
/// time limit; when `dot` runs past it, or fails on a large graph, the text is laid out with the
/// fallback engine instead (under the same limit). Each of these steps is said in one line on
/// `run.report`. A missing program, a failure on a small graph, or a failure without fallback
/// throws.
inline void render_through_graphviz(const Trace& trace, const RenderOptions& options,
                                    std::ostream& os, const GraphvizRun& run) {
  std::string dot;
  if (run.times != nullptr)
    write_time_dot(trace, options, *run.times, dot);
  else
    write_dot(trace, options, dot);
  const auto say = [&run](const std::string& line) {
    if (run.report != nullptr) *run.report << line << '\n';
  };
  std::vector<std::string> argv{"dot", "-T" + std::string(run.format)};
  const std::chrono::milliseconds timeout = run.timeout ? *run.timeout : dot_timeout(run.report);
  const std::size_t nodes = visible_graph(trace.graph, options).nodes.size();
  const bool large = nodes > large_graph_nodes;
  if (large) {
    argv.insert(argv.end(), large_graph_limits().begin(), large_graph_limits().end());
    say("recorder: " + std::to_string(nodes) + " visible nodes (more than " +
        std::to_string(large_graph_nodes) + "): laying out with '" + command_line(argv) + "'");
  }
  const auto graphviz = [&](const std::vector<std::string>& command) {
    try {
      return run.program(command, dot, timeout);
    } catch (const ProgramNotFound&) {
      throw std::runtime_error(
          "recorder: the Graphviz program '" + command[0] +
          "' was not found on PATH; install Graphviz (Debian: apt-get install graphviz) or "
          "render with recorder::backend::Dot instead");
    }
  };
  std::string image;
  try {
    image = graphviz(argv);
  } catch (const ProgramFailed& e) {
    const bool timed_out = dynamic_cast<const ProgramTimedOut*>(&e) != nullptr;
    if (run.fallback.empty() || (!timed_out && !large)) throw;
    const std::vector<std::string> fallback{std::string(run.fallback),
                                            "-T" + std::string(run.format)};
    say((timed_out ? "recorder: dot ran past its time limit of " + seconds_text(timeout) +
                         (run.timeout ? std::string() : std::string(" (RECORDER_DOT_TIMEOUT)"))
                   : "recorder: dot failed (" + first_line(e.what()) + ")") +
        "; laying out with '" + command_line(fallback) + "' instead");
    try {
      image = graphviz(fallback);
    } catch (const std::runtime_error& again) {
      throw ProgramFailed(std::string(e.what()) + "; then " + again.what());
    }
  }
  os.write(image.data(), static_cast<std::streamsize>(image.size()));
}

/// A picture made by Graphviz in `Format` (`SvgFormat`, `PngFormat`): `Svg` and `Png`.
template <class Format>
struct GraphvizImage {
  static constexpr std::string_view extension = Format::extension;

  /// How long `dot` may run; unset: `RECORDER_DOT_TIMEOUT` seconds, else 60 s; zero: no limit.
  std::optional<std::chrono::milliseconds> timeout{};
  /// The engine that lays the graph out when `dot` runs past `timeout` (or fails on a large
  /// graph); empty: none, the error is thrown.
  std::string_view fallback = fallback_engine;
  /// Where the steps (layout limits, fallback) are said, one line each; null: nowhere.
  std::ostream* report = &std::cerr;
  /// With times (`call_times(timing)`), module calls are coloured by time (`backend::TimeDot`).
  const CallTimes* times = nullptr;

  /// Writes the picture of `trace` seen with `options` to `os`.
  void render(const Trace& trace, const RenderOptions& options, std::ostream& os) const {
    render_through_graphviz(trace, options, os, {Format::name, timeout, fallback, report, times});
  }
};

struct SvgFormat {
  static constexpr std::string_view name = "svg", extension = ".svg";
};
struct PngFormat {
  static constexpr std::string_view name = "png", extension = ".png";
};

}  // namespace recorder::detail

namespace recorder::backend {

/// An SVG picture: the `Dot` text laid out by Graphviz's `dot -Tsvg` (found on PATH; no shell).
/// Throws `std::runtime_error` when `dot` is missing or fails, with its error output.
///
/// Large graphs do not hang: above `detail::large_graph_nodes` (1,000) visible nodes, `dot`
/// gets layout limits (`-Gnslimit=2 -Gnslimit1=2 -Gmclimit=0.5`), and when it runs longer than
/// its time limit it is killed and `sfdp` lays the graph out instead; each step is said in one
/// line on `report`. A 5,000-node graph takes about 10 s. A value with settings:
/// `render(trace, {}, std::cout, backend::Svg{.timeout = 30s, .report = &log})`.
using Svg = detail::GraphvizImage<detail::SvgFormat>;

/// A PNG picture through Graphviz's `dot -Tpng`; see `Svg`.
using Png = detail::GraphvizImage<detail::PngFormat>;

}  // namespace recorder::backend
