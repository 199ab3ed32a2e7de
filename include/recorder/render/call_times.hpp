#pragma once
/// `CallTimes`: one time per module call, by layer key, for the summary's time columns and the
/// time-coloured drawing (no libtorch). `call_times(timing)` (`capture/timing.hpp`) fills it.

#include <recorder/graph/address.hpp>
#include <recorder/graph/graph.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace recorder {

/// A time per module call, in nanoseconds, by layer key (`path_address`: "layer1.0",
/// "relu#1", "<root>"), each already reduced over runs to one number (`statistic` says how).
struct CallTimes {
  std::unordered_map<std::string, double> ns{};
  std::string statistic{};  ///< "mean of 20 runs": printed under the summary table

  /// The time of `call` in `g`, if it was timed.
  std::optional<double> of(const Graph& g, NodeId call) const {
    const auto found = ns.find(path_address(g, call));
    if (found == ns.end()) return std::nullopt;
    return found->second;
  }
};

namespace detail {

/// A duration for a table cell: `12.35 ms`, `481.2 us`, `950 ns` (four significant digits).
inline std::string duration_text(double ns) {
  char buf[48];
  const double a = ns < 0 ? -ns : ns;
  if (a >= 1e9)
    std::snprintf(buf, sizeof buf, "%.4g s", ns / 1e9);
  else if (a >= 1e6)
    std::snprintf(buf, sizeof buf, "%.4g ms", ns / 1e6);
  else if (a >= 1e3)
    std::snprintf(buf, sizeof buf, "%.4g us", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  return buf;
}

}  // namespace detail

}  // namespace recorder
