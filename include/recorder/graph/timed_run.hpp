#pragma once
/// What a timed forward is, as data: its module-call spans, its ops and their tensor arguments,
/// and the backward spans read from it. Made by `record::Timing` (capture/timing.hpp); written
/// as a Chrome trace by render/chrome_trace.hpp, gathered across ranks by distributed.hpp.

#include <recorder/graph/graph.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

/// One timed module call of one run.
struct TimedSpan {
  NodeId call;                   ///< the call in that run's trace
  std::string key;               ///< its layer key: `path_address` ("layer1.0", "relu#1", "<root>")
  std::string path;              ///< the module path ("" for the root)
  std::string class_name;        ///< "BasicBlock"
  std::uint32_t depth = 0;       ///< the call's depth (the root is 0)
  std::int32_t parent = -1;      ///< the enclosing span's index in the run, -1 for none
  std::int64_t start_ns = 0;     ///< from the start of the run
  std::int64_t duration_ns = 0;  ///< enter to return, the callees included
  std::vector<std::vector<std::int64_t>> input_dims{};  ///< the tensor arguments' sizes

  /// The duration minus the children's (module calls; ops count as the call's own time).
  std::int64_t self_ns(std::span<const TimedSpan> run) const;
};

/// One tensor argument of a timed op: `TimedRun::dims_of` and `dtype_of` read it.
struct TimedInput {
  std::uint32_t dims_begin = 0;
  std::uint16_t rank = 0;
  std::uint16_t dtype = 0;
};

/// One timed op of one run: a function node of the trace (an op of a composite forward, a
/// `recorder::op`, or with `record::AtenOps` an aten op inside a leaf). `TimedRun::name_of`
/// and `inputs_of` read the rest.
struct TimedOp {
  NodeId node;                     ///< the function node in that run's trace
  std::int32_t parent = -1;        ///< the enclosing module call's span index, -1 for none
  std::uint32_t key = 0;           ///< its index in `Timing::op_keys()`
  std::uint32_t inputs_begin = 0;  ///< its first tensor argument in `TimedRun::op_inputs`
  std::int64_t start_ns = 0;       ///< from the start of the run
  std::int64_t duration_ns = 0;
};

/// The names a timing's runs refer to: each op key's op name, and the dtypes.
struct TimedNames {
  std::vector<std::string_view> op_of_key;  ///< "add" for key "layer1.0/add#0"
  std::vector<std::string_view> dtypes;     ///< "Float", ... (static storage)
};

namespace detail {

/// Nanoseconds from `tick0` to tick `t` at `ns_per_tick` (0 before `tick0`).
inline std::int64_t ticks_to_ns(std::uint64_t t, std::uint64_t tick0, double ns_per_tick) {
  return t <= tick0 ? 0 : static_cast<std::int64_t>(static_cast<double>(t - tick0) * ns_per_tick);
}

}  // namespace detail

/// One timed forward: its module-call spans in call order (a parent before its children) and
/// its ops in the order they ran. Spans nest exactly: every op and call lies inside its
/// parent, and siblings do not overlap.
struct TimedRun {
  std::int64_t epoch_ns = 0;     ///< when it started (system clock, ns since the epoch)
  std::int64_t duration_ns = 0;  ///< the whole forward, steady clock
  std::vector<TimedSpan> spans{};
  std::vector<TimedOp> ops{};
  std::vector<TimedInput> op_inputs{};  ///< the ops' tensor arguments, op after op
  std::vector<std::int64_t> op_dims{};  ///< their sizes, argument after argument
  std::shared_ptr<const TimedNames> names{};
  /// With `TimingOptions::backward`: per span, when autograd produced the first gradient
  /// w.r.t. one of the call's outputs and the last w.r.t. one of its inputs (ticks, 0 for
  /// none yet); `backward_spans(run)` reads them.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> backward_ticks{};
  std::uint64_t tick0 = 0;   ///< the run's start in ticks
  double ns_per_tick = 1.0;  ///< the run's tick rate

  /// The op's name: "add", "conv2d".
  std::string_view name_of(const TimedOp& op) const { return names->op_of_key[op.key]; }
  /// The op's tensor arguments (`op` is one of `ops`).
  std::span<const TimedInput> inputs_of(const TimedOp& op) const {
    const auto i = static_cast<std::size_t>(&op - ops.data());
    const std::size_t end = i + 1 < ops.size() ? ops[i + 1].inputs_begin : op_inputs.size();
    return std::span<const TimedInput>(op_inputs).subspan(op.inputs_begin, end - op.inputs_begin);
  }
  Shape dims_of(const TimedInput& in) const {
    return Shape(std::span<const std::int64_t>(op_dims).subspan(in.dims_begin, in.rank));
  }
  std::string_view dtype_of(const TimedInput& in) const { return names->dtypes[in.dtype]; }
};

inline std::int64_t TimedSpan::self_ns(std::span<const TimedSpan> run) const {
  std::int64_t children = 0;
  const auto self = static_cast<std::int32_t>(this - run.data());
  for (const TimedSpan& s : run)
    if (s.parent == self) children += s.duration_ns;
  return duration_ns - children;
}

/// The backward spans of a run timed with `TimingOptions::backward`, after its backward ran: one
/// per module call whose backward was seen from both ends, from the first gradient w.r.t. one
/// of its outputs to the last w.r.t. one of its inputs, in ns from the forward's start, in call
/// order, `parent` indexing this list (the nearest enclosing call with a backward span). They
/// nest exactly: a span is cut to its parent's, and of siblings whose backwards overlap (a
/// downsample beside a block's main path, both ending when the block's input gradient is
/// complete) the later one starts where the earlier ends.
inline std::vector<TimedSpan> backward_spans(const TimedRun& run) {
  const auto ns = [&run](std::uint64_t t) {
    return detail::ticks_to_ns(t, run.tick0, run.ns_per_tick);
  };
  std::vector<TimedSpan> out;
  std::vector<std::int32_t> index_of(run.spans.size(), -1);
  for (std::size_t i = 0; i < run.spans.size() && i < run.backward_ticks.size(); ++i) {
    const auto [first, last] = run.backward_ticks[i];
    if (first == 0 || last < first) continue;
    TimedSpan s = run.spans[i];
    s.start_ns = ns(first);
    s.duration_ns = ns(last) - s.start_ns;
    s.parent = -1;
    for (std::int32_t p = run.spans[i].parent; p >= 0;
         p = run.spans[static_cast<std::size_t>(p)].parent) {
      if (index_of[static_cast<std::size_t>(p)] >= 0) {
        s.parent = index_of[static_cast<std::size_t>(p)];
        break;
      }
    }
    index_of[i] = static_cast<std::int32_t>(out.size());
    out.push_back(std::move(s));
  }
  // Parents come first: each parent's children are cut to it and apart once it is final.
  std::vector<std::vector<std::size_t>> children(out.size() + 1);
  for (std::size_t i = 0; i < out.size(); ++i)
    children[out[i].parent < 0 ? out.size() : static_cast<std::size_t>(out[i].parent)].push_back(i);
  const auto settle = [&](std::size_t parent) {
    std::vector<std::size_t>& c = children[parent];
    const bool top = parent == out.size();
    const std::int64_t lo = top ? 0 : out[parent].start_ns;
    const std::int64_t hi = top ? std::numeric_limits<std::int64_t>::max()
                                : out[parent].start_ns + out[parent].duration_ns;
    std::stable_sort(c.begin(), c.end(), [&](std::size_t a, std::size_t b) {
      return out[a].start_ns < out[b].start_ns;
    });
    std::int64_t previous_end = lo;
    for (std::size_t i : c) {
      const std::int64_t start = std::clamp(out[i].start_ns, previous_end, hi);
      const std::int64_t end = std::clamp(out[i].start_ns + out[i].duration_ns, start, hi);
      out[i].start_ns = start;
      out[i].duration_ns = end - start;
      previous_end = end;
    }
  };
  settle(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) settle(i);
  return out;
}

}  // namespace recorder
