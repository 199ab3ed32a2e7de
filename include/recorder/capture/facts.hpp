#pragma once
/// Recorded statistics as hover facts for the HTML viewer: `facts_of(trace, recording)`
/// describes what a recording (`record::ForwardOutput<reduce::Moments>`, ...) holds for each
/// recorded module call, for `backend::Html::facts`.

#include <recorder/capture/activations.hpp>
#include <recorder/capture/core.hpp>
#include <recorder/capture/timing.hpp>
#include <recorder/detail/id_map.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/node_facts.hpp>

#include <ATen/ATen.h>

#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {
namespace detail {

/// `%.4g` of `v`.
inline std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

/// One line about a recorded value: a tensor's shape and dtype with its mean, min and max; a
/// list of tensors' count; a number.
inline std::string describe_value(const at::Tensor& t) {
  const auto sizes = t.sizes();
  std::string s = to_string(Shape(std::span<const std::int64_t>(sizes.data(), sizes.size()))) +
                  " " + std::string(t.dtype().name());
  if (t.numel() == 0) return s;
  if (t.is_floating_point() || t.is_complex() || t.scalar_type() == at::kLong ||
      t.scalar_type() == at::kInt) {
    const at::Tensor d = t.detach().to(at::kDouble);
    s += " mean " + short_number(d.mean().item<double>()) + ", min " +
         short_number(d.min().item<double>()) + ", max " + short_number(d.max().item<double>());
  }
  return s;
}
inline std::string describe_value(const std::vector<at::Tensor>& ts) {
  std::string s = std::to_string(ts.size()) + " tensors";
  if (!ts.empty()) s += ", the last " + describe_value(ts.back());
  return s;
}
inline std::string describe_value(double v) { return short_number(v); }
template <std::integral I>
std::string describe_value(I v) {
  return std::to_string(v);
}

/// Appends the facts of one recorded result: one per field of a result struct
/// (`MomentsResult`: mean, variance, count), else one named `name`.
template <class Result>
void describe_result(std::vector<std::pair<std::string, std::string>>& out,
                     const std::string& prefix, const Result& r) {
  if constexpr (reduce::described<Result>) {
    reduce::for_each_field(r, [&](std::string_view field, const auto& value) {
      out.emplace_back(prefix + std::string(field), describe_value(value));
    });
  } else {
    out.emplace_back(prefix + "value", describe_value(r));
  }
}

/// The module calls of a graph by layer key (`path_address`, the key recordings and timings
/// use), built in one pass so that looking many keys up stays linear.
class CallsByKey {
 public:
  explicit CallsByKey(const Graph& g) {
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const NodeId id{i};
      if (g.kind(id) != NodeKind::module) continue;
      if (ids_.id(path_address(g, id)).second) calls_.push_back(id);
    }
  }
  /// The call with layer key `key`, or an invalid id when the graph has none.
  NodeId find(std::string_view key) {
    const std::uint32_t i = ids_.id(key).first;  // a key not in the graph gets an id past calls_
    return i < calls_.size() ? calls_[i] : NodeId{};
  }

 private:
  StringIds ids_;
  std::vector<NodeId> calls_;
};

/// A duration reduced over runs, in milliseconds: one value (`Mean`, `Last`, `Sum`), every
/// value (`KeepAll`: their mean, min and max), or a result struct's fields (`count` as is).
inline std::string milliseconds(double ns) { return short_number(ns / 1e6) + " ms"; }
template <class Result>
std::string describe_duration(const Result& r) {
  if constexpr (std::is_arithmetic_v<Result>) {
    return milliseconds(static_cast<double>(r));
  } else if constexpr (requires {
                         r.size();
                         r.front();
                       }) {
    if (r.empty()) return "no runs";
    double sum = 0, lo = r.front(), hi = r.front();
    for (double v : r) sum += v, lo = std::min(lo, v), hi = std::max(hi, v);
    return milliseconds(sum / static_cast<double>(r.size())) + " mean of " +
           std::to_string(r.size()) + " runs (min " + milliseconds(lo) + ", max " +
           milliseconds(hi) + ")";
  } else {
    std::string s;
    reduce::for_each_field(r, [&](std::string_view field, const auto& value) {
      if (!s.empty()) s += ", ";
      s += std::string(field) + " ";
      if constexpr (std::is_integral_v<std::remove_cvref_t<decltype(value)>>)
        s += std::to_string(value);
      else if (field == "variance")
        s += short_number(static_cast<double>(value) / 1e12) + " ms\u00b2";
      else
        s += milliseconds(static_cast<double>(value));
    });
    return s;
  }
}

}  // namespace detail

/// The times of `timing` as hover facts on the module calls of `trace` (matched by layer key,
/// `path_address`): `time` (the reduction's result, in ms) and `runs`. Calls never timed are
/// left out.
///
/// Example: `backend::Html{.facts = facts_of(trace, timing)}`.
template <class R>
std::vector<NodeFacts> facts_of(const Trace& trace, const record::Timing<R>& timing) {
  detail::CallsByKey calls(trace.graph);
  std::vector<NodeFacts> out;
  for (const std::string& key : timing.keys()) {
    const NodeId call = calls.find(key);
    if (!call.valid()) continue;
    NodeFacts f{call};
    f.facts.emplace_back("time", detail::describe_duration(timing.result(key)));
    f.facts.emplace_back("runs", std::to_string(timing.samples(key)));
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(),
            [](const NodeFacts& a, const NodeFacts& b) { return a.node.value < b.node.value; });
  return out;
}

/// What `recording` holds, as hover facts on the module calls of `trace` it was recorded from
/// (matched by layer key): `recorded` (the capture point and reduction),
/// `samples`, then per recorded tensor the reduction's fields, each described in one line
/// (`mean: [1, 1000] Float mean 0.0123, min -2.1, max 2.4`). Records with no samples and calls
/// the trace does not have are left out.
///
/// Example: `render_to_file(trace, {.depth = 2}, "net.html", backend::Html{.facts =
/// facts_of(trace, outputs)});`
template <class R>
std::vector<NodeFacts> facts_of(const Trace& trace, const record::Activations<R>& recording) {
  detail::CallsByKey calls(trace.graph);
  std::vector<NodeFacts> out;
  for (const auto& rec : recording.records()) {
    if (rec->samples() == 0) continue;
    const NodeId call = calls.find(rec->key);
    if (!call.valid()) continue;
    NodeFacts f{call};
    f.facts.emplace_back("recorded", std::string(to_string(recording.capture_point())) +
                                         ", reduce::" + std::string(rec->reduction().name));
    f.facts.emplace_back("samples", std::to_string(rec->samples()));
    for (std::size_t i = 0; i < rec->tensors(); ++i) {
      const std::string prefix = rec->tensors() == 1 ? "" : std::to_string(i) + ": ";
      try {
        detail::describe_result(f.facts, prefix, rec->result(i));
      } catch (const std::out_of_range&) {
        // a tensor slot never filled (a gradient that did not arrive)
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace recorder
