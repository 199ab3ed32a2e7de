#pragma once
/// The drawing coloured by time: module calls filled from pale to dark red by how long they
/// took, each with its time in its box, so the hot layer shows at a glance (no libtorch).

#include <recorder/render/call_times.hpp>
#include <recorder/render/dot.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace recorder {

namespace detail {

/// Nine steps from pale yellow to dark red (ColorBrewer's sequential OrRd), coolest first.
inline constexpr std::array<std::string_view, 9> time_palette{"#fff7ec", "#fee8c8", "#fdd49e",
                                                              "#fdbb84", "#fc8d59", "#ef6548",
                                                              "#d7301f", "#b30000", "#7f0000"};

/// The palette step of a time that is `fraction` of the hottest drawn call's (0 to 8).
inline std::size_t time_step(double fraction) {
  const double f = std::clamp(fraction, 0.0, 1.0);
  return std::min<std::size_t>(
      time_palette.size() - 1,
      static_cast<std::size_t>(f * static_cast<double>(time_palette.size())));
}

/// A call's time, with its share of the root's when that is known: "1.2 ms (34.5%)".
inline std::string time_share_text(double ns, double total) {
  std::string text = duration_text(ns);
  if (total > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " (%.1f%%)", ns / total * 100.0);
    text += buf;
  }
  return text;
}

/// The house styles with every drawn module call that was timed coloured by its time (relative
/// to the slowest drawn call), with its time and share of the root's as the last row of its
/// table (also the tooltip). With `expand_nested`, each timed cluster gets a border of its
/// colour (relative to the slowest cluster: a cluster holds its nodes' time, so it is not
/// compared with them) and its time under its title. What was never timed keeps the house look.
inline void write_time_dot(const Trace& trace, const RenderOptions& options, const CallTimes& times,
                           std::string& out) {
  const Graph& g = trace.graph;
  const VisibleGraph vg = visible_graph(g, options);
  std::vector<NodeStyle> node_styles;
  node_styles.reserve(vg.nodes.size());
  std::vector<std::optional<double>> t(vg.nodes.size());
  double hottest = 0;
  for (std::size_t i = 0; i < vg.nodes.size(); ++i) {
    node_styles.push_back(DefaultStyler::node_style(trace, vg, static_cast<std::uint32_t>(i)));
    if (vg.nodes[i].kind != NodeKind::module) continue;
    t[i] = times.of(g, vg.nodes[i].node);
    if (t[i]) hottest = std::max(hottest, *t[i]);
  }
  double total = 0;  // the root's time; 0 when unknown
  if (trace.root.valid()) total = times.of(g, trace.root).value_or(0.0);
  for (std::size_t i = 0; i < vg.nodes.size(); ++i) {
    if (!t[i]) continue;
    const std::size_t step = time_step(hottest > 0 ? *t[i] / hottest : 0.0);
    NodeStyle& s = node_styles[i];
    s.fillcolor = std::string(time_palette[step]);
    s.note = time_share_text(*t[i], total);
    s.extra = "tooltip=" + dot_quoted(s.note);
    if (step >= 6) s.extra += " fontcolor=white";
  }
  std::vector<EdgeStyle> edge_styles;
  edge_styles.reserve(vg.edges.size());
  for (const VisibleEdge& e : vg.edges)
    edge_styles.push_back(DefaultStyler::edge_style(trace, vg, e));
  std::vector<ClusterStyle> cluster_styles(vg.clusters.size());
  std::vector<std::optional<double>> ct(vg.clusters.size());
  double hottest_cluster = 0;
  for (std::size_t k = 0; k < vg.clusters.size(); ++k) {
    ct[k] = times.of(g, vg.clusters[k].call);
    if (ct[k]) hottest_cluster = std::max(hottest_cluster, *ct[k]);
  }
  for (std::size_t k = 0; k < vg.clusters.size(); ++k) {
    if (!ct[k]) continue;
    const std::size_t step = time_step(hottest_cluster > 0 ? *ct[k] / hottest_cluster : 0.0);
    ClusterStyle& s = cluster_styles[k];
    s.color = std::string(time_palette[step]);
    s.note = time_share_text(*ct[k], total);
    s.extra = "penwidth=2 tooltip=" + dot_quoted(s.note);
  }
  write_dot(trace, options, vg, node_styles, edge_styles, out, &cluster_styles);
}

}  // namespace detail

namespace backend {

/// Graphviz DOT of the visible graph with module calls coloured by time (`.dot`): the house
/// drawing, each timed call filled on a nine-step pale-to-dark-red scale by its time relative
/// to the slowest call drawn, with its time and share of the whole forward in its box.
///
/// `auto times = call_times(timing);`
/// `render_to_file(trace, {.depth = 2}, "resnet.time", backend::TimeDot{.times = &times});`
/// For a picture: `backend::Svg{.times = &times}`.
struct TimeDot {
  static constexpr std::string_view extension = ".dot";

  const CallTimes* times = nullptr;  ///< `call_times(timing)`

  void render(const Trace& trace, const RenderOptions& options, std::ostream& os) const {
    std::string text;
    render_to(trace, options, text);
    os << text;
  }
  void render_to(const Trace& trace, const RenderOptions& options, std::string& out) const {
    if (times == nullptr)
      throw std::invalid_argument(
          "recorder: backend::TimeDot needs the times: backend::TimeDot{.times = &times}, with "
          "`CallTimes times = recorder::call_times(timing)` from a record::Timing");
    detail::write_time_dot(trace, options, *times, out);
  }
};

}  // namespace backend

}  // namespace recorder
