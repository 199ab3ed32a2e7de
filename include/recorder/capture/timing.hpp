#pragma once
/// Where the time goes: `record::Timing<R>` times every module call of every traced forward
/// with a steady clock (templated models and TorchScript alike), keeps each run's spans and
/// reduces each call's durations over the runs with `R`.

#include <recorder/detail/escape.hpp>
#include <recorder/graph/graph.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/options.hpp>
#include <recorder/policies/reduction.hpp>
#include <recorder/tensor/session.hpp>

#include <ATen/ATen.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <stdexcept>
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

  /// The duration minus the children's.
  std::int64_t self_ns(std::span<const TimedSpan> run) const;
};

/// One timed forward: its spans in call order (a parent before its children).
struct TimedRun {
  std::int64_t epoch_ns = 0;     ///< when it started (system clock, ns since the epoch)
  std::int64_t duration_ns = 0;  ///< the whole forward, steady clock
  std::vector<TimedSpan> spans{};
};

inline std::int64_t TimedSpan::self_ns(std::span<const TimedSpan> run) const {
  std::int64_t children = 0;
  const auto self = static_cast<std::int32_t>(this - run.data());
  for (const TimedSpan& s : run)
    if (s.parent == self) children += s.duration_ns;
  return duration_ns - children;
}

namespace detail {

/// The call hooks of a timing: a clock read when a call opens and when it returns.
template <class R>
class TimingStore final : public CallHooks {
 public:
  using state_type = typename R::template state<double>;
  using clock = std::chrono::steady_clock;

  explicit TimingStore(R reduction) : reduction_(std::move(reduction)) {}

  void begin() override {
    run_ = TimedRun{};
    open_.clear();
    run_.epoch_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    start_ = clock::now();
  }
  void enter(const Graph& g, NodeId call, std::span<const at::Tensor> inputs) override {
    const auto now = clock::now();
    TimedSpan s;
    s.call = call;
    s.parent = open_.empty() ? -1 : static_cast<std::int32_t>(open_.back());
    s.depth = g.node(call).depth;
    s.start_ns = since_start(now);
    for (const at::Tensor& t : inputs)
      if (t.defined()) s.input_dims.push_back(t.sizes().vec());
    open_.push_back(run_.spans.size());
    run_.spans.push_back(std::move(s));
    // What the hook itself cost is not the call's: the span starts after the bookkeeping.
    run_.spans.back().start_ns = since_start(clock::now());
  }
  void leave(const Graph& g, NodeId call, std::span<const at::Tensor>,
             std::span<at::Tensor>) override {
    const auto now = clock::now();
    static_cast<void>(g);
    // Calls return in reverse order of entry; a call left open by a throw was aborted.
    while (!open_.empty() && run_.spans[open_.back()].call != call) open_.pop_back();
    if (open_.empty()) return;
    TimedSpan& s = run_.spans[open_.back()];
    open_.pop_back();
    s.duration_ns = since_start(now) - s.start_ns;
  }
  void end(const Graph& g) override {
    run_.duration_ns = since_start(clock::now());
    for (TimedSpan& s : run_.spans) {
      s.key = path_address(g, s.call);
      s.path = g.module_of(s.call).path;
      s.class_name = g.module_of(s.call).class_name;
    }
    for (const TimedSpan& s : run_.spans) {
      const double v = static_cast<double>(s.duration_ns);
      auto found = index_.find(s.key);
      if (found == index_.end()) {
        index_.emplace(s.key, keys_.size());
        keys_.push_back(s.key);
        states_.push_back(reduction_.init(v));
      } else {
        reduction_.update(states_[found->second], v);
      }
    }
    runs_.push_back(std::move(run_));
    run_ = TimedRun{};
  }
  void abort(const Graph&) noexcept override {
    // A forward that threw is not a run: nothing of it is kept, the next one starts clean.
    run_ = TimedRun{};
    open_.clear();
  }

  const std::vector<TimedRun>& runs() const noexcept { return runs_; }
  const std::vector<std::string>& keys() const noexcept { return keys_; }
  const state_type& state(std::string_view key) const {
    const auto found = index_.find(std::string(key));
    if (found == index_.end())
      throw std::out_of_range("recorder: no module call '" + std::string(key) + "' was timed");
    return states_[found->second];
  }
  const R& reduction() const noexcept { return reduction_; }

 private:
  std::int64_t since_start(clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - start_).count();
  }

  R reduction_;
  clock::time_point start_{};
  TimedRun run_{};
  std::vector<std::size_t> open_;  // indices of the open spans, outermost first
  std::vector<TimedRun> runs_;
  std::vector<std::string> keys_;  // in order of first appearance
  std::map<std::string, std::size_t> index_;
  std::vector<state_type> states_;
};

}  // namespace detail

namespace record {

/// Times every module call (the root's included) of every forward traced with it, in
/// nanoseconds of a steady clock: `Tracer<record::Timing<reduce::Mean>> t({}, timing);`.
///
/// Each forward is kept as a `TimedRun` (`runs()`: its spans in call order, parents before
/// children, each with its start, duration, parent span and input sizes); each call's
/// durations (by layer key, `path_address`) are reduced over the runs by `R` (`result(key)`:
/// `KeepAll` every duration, `Mean`, `MinMax`, `Moments`, ...). A forward that throws is not a
/// run: what it timed is dropped and the next forward starts clean. Copies share their
/// timings; one timing is fed by one thread at a time.
template <class R = reduce::KeepAll>
class Timing {
  static_assert(reduce::check_reduction<R, double>());

 public:
  using recording_policy_tag = void;
  static constexpr bool records_graph = true;
  static constexpr bool captures_calls = true;
  using reduction_type = R;

  explicit Timing(R reduction = R{})
      : store_(std::make_shared<recorder::detail::TimingStore<R>>(std::move(reduction))) {}

  /// Every timed forward, in order.
  const std::vector<TimedRun>& runs() const noexcept { return store_->runs(); }
  /// The timed calls' keys, in order of first appearance.
  const std::vector<std::string>& keys() const noexcept { return store_->keys(); }
  /// `key`'s durations (ns, as doubles) reduced over the runs; throws `std::out_of_range` for a
  /// key never timed.
  decltype(auto) result(std::string_view key) const {
    return store_->reduction().result(store_->state(key));
  }
  /// How many durations of `key` were reduced.
  std::uint64_t samples(std::string_view key) const {
    return store_->reduction().count(store_->state(key));
  }

  recorder::detail::CallHooks& call_hooks() const noexcept { return *store_; }

 private:
  std::shared_ptr<recorder::detail::TimingStore<R>> store_;
};

}  // namespace record

namespace detail {

/// Appends `ns` as microseconds with three decimals (`1234567` -> `1234.567`).
inline void append_micros(std::string& out, std::int64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  out += buf;
}

}  // namespace detail

/// The runs as Chrome Trace Event JSON shaped like PyTorch's profiler (Kineto) writes it, for
/// Perfetto and `chrome://tracing`: one `X` event per module call, `cat` `user_annotation`,
/// `ts`/`dur` in microseconds with nanosecond decimals from the first run's start, `args` with
/// `Module Hierarchy` (the path), `module_type`, `Input Dims` and `run`; process and thread
/// names as `M` events. Runs are laid side by side in time, 10% of the first run's length
/// apart, on one thread, so spans nest perfectly (Perfetto needs it).
inline std::string chrome_trace_json(const std::vector<TimedRun>& runs, std::string_view name) {
  std::string out = "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": ";
  out += std::to_string(runs.empty() ? 0 : runs.front().epoch_ns);
  out += ", \"otherData\": {\"producer\": \"recorder\", \"model\": \"" + detail::json_escape(name) +
         "\"},\n\"traceEvents\": [\n";
  out +=
      "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": "
      "{\"name\": \"recorder: " +
      detail::json_escape(name) + " forward\"}},\n";
  out +=
      "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": "
      "{\"name\": \"forward\"}}";
  const std::int64_t gap = runs.empty() ? 0 : runs.front().duration_ns / 10 + 1000;
  std::int64_t offset = 0;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const TimedSpan& s : runs[r].spans) {
      out += ",\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"";
      out += detail::json_escape(s.key);
      out += "\", \"pid\": 1, \"tid\": 1, \"ts\": ";
      detail::append_micros(out, offset + s.start_ns);
      out += ", \"dur\": ";
      detail::append_micros(out, s.duration_ns);
      out += ", \"args\": {\"Module Hierarchy\": \"" + detail::json_escape(s.path) +
             "\", \"module_type\": \"" + detail::json_escape(s.class_name) +
             "\", \"run\": " + std::to_string(r) + ", \"Input Dims\": [";
      for (std::size_t i = 0; i < s.input_dims.size(); ++i) {
        if (i > 0) out += ", ";
        out += to_string(Shape(s.input_dims[i]));
      }
      out += "]}}";
    }
    offset += runs[r].duration_ns + gap;
  }
  out += "\n]}\n";
  return out;
}

namespace backend {

/// The runs of a `record::Timing` as a Chrome/Perfetto trace (`chrome_trace_json`), through the
/// render entry points: `render_to_file(trace, {}, "resnet", backend::ChromeTrace{.runs =
/// &timing.runs()})` writes `resnet.trace.json`. The trace gives the name (`graph_name` first).
struct ChromeTrace {
  static constexpr std::string_view extension = ".trace.json";

  const std::vector<TimedRun>* runs = nullptr;  ///< `&timing.runs()`

  void render(const Trace& trace, const RenderOptions& options, std::ostream& os) const {
    if (runs == nullptr)
      throw std::invalid_argument(
          "recorder: backend::ChromeTrace needs the runs of a record::Timing: "
          "backend::ChromeTrace{.runs = &timing.runs()}");
    os << chrome_trace_json(*runs,
                            options.graph_name.empty() ? trace.model_name : options.graph_name);
  }
};

}  // namespace backend

}  // namespace recorder
