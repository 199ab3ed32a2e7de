#pragma once
/// Where the time goes: `record::Timing<R>` times every module call of every traced forward
/// with a steady clock (templated models and TorchScript alike), keeps each run's spans and
/// reduces each call's durations over the runs with `R`. Only the policy and its store live
/// here: the runs are data (graph/timed_run.hpp), written as a Chrome trace by a torch-free
/// backend (render/chrome_trace.hpp, included for `backend::ChromeTrace`).

#include <recorder/graph/graph.hpp>
#include <recorder/graph/timed_run.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/policies/reduction.hpp>
#include <recorder/render/call_times.hpp>
#include <recorder/render/chrome_trace.hpp>
#include <recorder/render/options.hpp>
#include <recorder/tensor/session.hpp>

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace recorder {

namespace detail {

struct RecordingAccess;

}  // namespace detail

namespace detail {

/// The ticks of one run and the steady clock read beside them at its start and end: converts
/// ticks to nanoseconds from the start.
struct RunClock {
  std::uint64_t tick0 = 0;
  std::chrono::steady_clock::time_point steady0{};
  double ns_per_tick = 1.0;

  void start() {
    steady0 = std::chrono::steady_clock::now();
    tick0 = ticks();
  }
  /// Fixes the rate from the run's end; returns the run's duration in ns.
  std::int64_t stop() {
    const std::uint64_t tick1 = ticks();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - steady0)
                        .count();
    if (tick1 > tick0 && ns > 0)
      ns_per_tick = static_cast<double>(ns) / static_cast<double>(tick1 - tick0);
    return ns;
  }
  std::int64_t ns(std::uint64_t t) const { return ticks_to_ns(t, tick0, ns_per_tick); }
};

/// The call hooks and op clock of a timing: ticks read when a call opens and returns and around
/// each recorded op (with the op's input shapes, read while the graph is hot); converted,
/// nested and reduced when the forward ends.
template <class R>
class TimingStore final : public CallHooks,
                          public OpClock,
                          public std::enable_shared_from_this<TimingStore<R>> {
 public:
  using state_type = typename R::template state<double>;

  TimingStore(R reduction, bool backward) : reduction_(std::move(reduction)), backward_(backward) {}

  std::string describe() const override { return "this timing recording"; }

  void begin() override {
    run_ = TimedRun{};
    run_.spans.reserve(last_.spans);
    run_.ops.reserve(last_.ops);
    run_.op_inputs.reserve(last_.inputs);
    run_.op_dims.reserve(last_.dims);
    stamps_.clear();
    open_.clear();
    run_.epoch_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    clock_.start();
  }
  void enter(const Graph& g, NodeId call, std::span<const at::Tensor> inputs) override {
    TimedSpan s;
    s.call = call;
    s.parent = open_.empty() ? -1 : static_cast<std::int32_t>(open_.back());
    s.depth = g.node(call).depth;
    for (const at::Tensor& t : inputs)
      if (t.defined()) s.input_dims.push_back(t.sizes().vec());
    open_.push_back(run_.spans.size());
    run_.spans.push_back(std::move(s));
    if (backward_) hook_gradients(inputs, false);
    // What the hook itself cost is not the call's: the span starts after the bookkeeping.
    stamps_.push_back({ticks(), 0});
  }
  void leave(const Graph&, NodeId call, std::span<const at::Tensor>,
             std::span<at::Tensor> outputs) override {
    const std::uint64_t now = ticks();
    // Calls return in reverse order of entry; a call left open by a throw was aborted.
    while (!open_.empty() && run_.spans[open_.back()].call != call) {
      stamps_[open_.back()].second = stamps_[open_.back()].first;
      open_.pop_back();
    }
    if (open_.empty()) return;
    stamps_[open_.back()].second = now;
    if (backward_) hook_gradients(outputs, true);
    open_.pop_back();
  }
  void op(const Graph& g, NodeId fn, std::uint64_t start, std::uint64_t end) override {
    TimedOp o;
    o.node = fn;
    o.parent = open_.empty() ? -1 : static_cast<std::int32_t>(open_.back());
    o.inputs_begin = static_cast<std::uint32_t>(run_.op_inputs.size());
    // Until the run ends: `key` holds how many spans had opened before it, the times are ticks.
    o.key = static_cast<std::uint32_t>(run_.spans.size());
    o.start_ns = static_cast<std::int64_t>(start);
    o.duration_ns = static_cast<std::int64_t>(end);
    run_.ops.push_back(o);
    add_inputs(g, fn);
  }
  OpClock* op_clock() noexcept override { return this; }

  void end(const Graph& g) override {
    run_.duration_ns = clock_.stop();
    for (std::size_t i = open_.size(); i-- > 0;) stamps_[open_[i]].second = stamps_[open_[i]].first;
    open_.clear();
    nest();
    for (TimedSpan& s : run_.spans) {
      s.key = path_address(g, s.call);
      s.path = g.module_of(s.call).path;
      s.class_name = g.module_of(s.call).class_name;
    }
    span_keys_.clear();
    for (const TimedSpan& s : run_.spans) {
      const auto [at, fresh] = index_.try_emplace(s.key, keys_.size());
      span_keys_.push_back(static_cast<std::uint32_t>(at->second));
      add(states_, fresh, at->second, static_cast<double>(s.duration_ns));
      if (fresh) keys_.push_back(s.key);
    }
    key_ops(g);
    last_ = {run_.spans.size(), run_.ops.size(), run_.op_inputs.size(), run_.op_dims.size()};
    run_.names = names_;
    run_.tick0 = clock_.tick0;
    run_.ns_per_tick = clock_.ns_per_tick;
    if (backward_) run_.backward_ticks.resize(run_.spans.size());
    runs_.push_back(std::move(run_));
    run_ = TimedRun{};
  }
  void abort(const Graph&) noexcept override {
    // A forward that threw is not a run: nothing of it is kept, the next one starts clean.
    run_ = TimedRun{};
    open_.clear();
    stamps_.clear();
  }

  const std::vector<TimedRun>& runs() const noexcept { return runs_; }
  const std::vector<std::string>& keys() const noexcept { return keys_; }
  const std::vector<std::string>& op_keys() const noexcept { return op_keys_; }
  /// The reduction state of a module call's or an op's key.
  const state_type& state(std::string_view key) const {
    const std::string k(key);
    if (const auto found = index_.find(k); found != index_.end()) return states_[found->second];
    if (const auto found = op_index_.find(k); found != op_index_.end())
      return op_states_[found->second];
    throw std::out_of_range("recorder: no module call or op '" + k +
                            "' was timed (module calls are keyed by layer key, \"layer1.0\"; ops "
                            "by their call's key, '/', name, '#', index: \"layer1.0/add#0\")");
  }
  const R& reduction() const noexcept { return reduction_; }

  /// The reduced states of the module-call keys and of the op keys, in `keys()` and
  /// `op_keys()` order.
  const std::vector<state_type>& states() const noexcept { return states_; }
  const std::vector<state_type>& op_states() const noexcept { return op_states_; }

  /// Replaces the reduced states (`merge_across`); the runs stay. A timing that has timed
  /// something keeps its keys, in order (`keys` and `op_keys` must equal them); an empty one
  /// takes `keys` and `op_keys`.
  void replace_reduced(std::vector<std::string> keys, std::vector<state_type> states,
                       std::vector<std::string> op_keys, std::vector<state_type> op_states) {
    if (!keys_.empty() || !op_keys_.empty()) {
      if (keys != keys_ || op_keys != op_keys_)
        throw std::logic_error(
            "recorder: a timing's reduced states are replaced under its own "
            "keys only");
    } else {
      for (std::size_t i = 0; i < keys.size(); ++i) index_.emplace(keys[i], i);
      for (std::size_t i = 0; i < op_keys.size(); ++i) {
        op_index_.emplace(op_keys[i], i);
        const std::string& k = op_keys[i];  // "<call key>/<op>#<k>"
        const std::size_t slash = k.rfind('/'), hash = k.rfind('#');
        const std::string_view name =
            slash != std::string::npos && hash != std::string::npos && hash > slash
                ? std::string_view(k).substr(slash + 1, hash - slash - 1)
                : std::string_view(k);
        names_->op_of_key.push_back(std::string_view(*name_pool_.emplace(name).first));
      }
      keys_ = std::move(keys);
      op_keys_ = std::move(op_keys);
    }
    states_ = std::move(states);
    op_states_ = std::move(op_states);
  }

 private:
  /// What the previous run's op at the same position was (to key ops without strings).
  struct LastOp {
    std::uint32_t parent_key;
    std::string_view name;  // the timing's copy
    const char* seen;       // the graph's spelling of it (literals keep their address)
    std::uint32_t key;
  };
  static constexpr std::uint32_t no_parent = 0xffffffffu;

  /// A gradient hook on every tensor that requires grad: the first gradient w.r.t. an output
  /// opens the call's backward span, the last w.r.t. an input closes it. The hook holds the
  /// timing weakly and finds the span by run and span index.
  template <class Tensors>
  void hook_gradients(const Tensors& tensors, bool outputs) {
    const std::size_t run = runs_.size();
    const std::size_t span = open_.back();
    for (const at::Tensor& t : tensors) {
      if (!t.defined() || !t.requires_grad()) continue;
      std::weak_ptr<TimingStore> weak = this->weak_from_this();
      t.register_hook([weak, run, span, outputs](const at::Tensor&) {
        const std::uint64_t now = ticks();
        const auto self = weak.lock();
        if (self == nullptr || run >= self->runs_.size()) return;  // a run that threw
        auto& b = self->runs_[run].backward_ticks;
        if (span >= b.size()) return;
        if (outputs) {
          if (b[span].first == 0 || now < b[span].first) b[span].first = now;
        } else {
          b[span].second = std::max(b[span].second, now);
        }
      });
    }
  }

  void add(std::vector<state_type>& states, bool fresh, std::size_t i, double v) {
    if (fresh)
      states.push_back(reduction_.init(v));
    else
      reduction_.update(states[i], v);
  }

  /// The index of `dtype` among the names' dtypes (a handful: found by pointer first).
  std::uint16_t dtype_index(std::string_view dtype) {
    std::vector<std::string_view>& d = names_->dtypes;
    for (std::size_t i = 0; i < d.size(); ++i)
      if (d[i].data() == dtype.data() && d[i].size() == dtype.size())
        return static_cast<std::uint16_t>(i);
    for (std::size_t i = 0; i < d.size(); ++i)
      if (d[i] == dtype) return static_cast<std::uint16_t>(i);
    d.push_back(dtype);
    return static_cast<std::uint16_t>(d.size() - 1);
  }

  /// The op's tensor arguments, from the edges into `fn`: the last ones of the graph, before its
  /// output edges if those are recorded already.
  void add_inputs(const Graph& g, NodeId fn) {
    const std::vector<Edge>& edges = g.edges();
    std::size_t last = edges.size();
    while (last > 0 && edges[last - 1].from == fn) --last;
    std::size_t first = last;
    while (first > 0 && edges[first - 1].to == fn) --first;
    for (std::size_t e = first; e < last; ++e) {
      const NodeId in = edges[e].from;
      TimedInput ti;
      ti.dims_begin = static_cast<std::uint32_t>(run_.op_dims.size());
      if (is_tensor_kind(g.nodes()[in.value].kind)) {
        const Shape shape = g.shape(in);
        ti.rank = static_cast<std::uint16_t>(shape.size());
        ti.dtype = dtype_index(g.tensor(in).dtype);
        const std::size_t at = run_.op_dims.size();
        run_.op_dims.resize(at + shape.size());
        for (std::size_t k = 0; k < shape.size(); ++k) run_.op_dims[at + k] = shape[k];
      } else {
        ti.dtype = dtype_index("");
      }
      run_.op_inputs.push_back(ti);
    }
  }

  /// Converts ticks to ns and makes the spans nest exactly, in the order things happened
  /// (calls and ops merged): each starts no earlier than its parent and its previous sibling
  /// ended, and ends no later than its parent. Clock reads may be reordered by a few cycles;
  /// this is what keeps a few-ns overlap out of the trace.
  void nest() {
    const std::size_t n = run_.spans.size();
    child_end_.assign(n, 0);
    std::int64_t top_end = 0;
    const auto place = [&](std::int32_t parent, std::int64_t& start, std::int64_t& end) {
      std::int64_t lo = top_end;
      std::int64_t hi = run_.duration_ns;
      if (parent >= 0) {
        const TimedSpan& p = run_.spans[static_cast<std::size_t>(parent)];
        lo = std::max(p.start_ns, child_end_[static_cast<std::size_t>(parent)]);
        hi = p.start_ns + p.duration_ns;
      }
      start = std::clamp(start, lo, hi);
      end = std::clamp(end, start, hi);
      (parent >= 0 ? child_end_[static_cast<std::size_t>(parent)] : top_end) = end;
    };
    std::size_t next_op = 0;
    const auto place_ops_before = [&](std::size_t span) {
      for (; next_op < run_.ops.size() && run_.ops[next_op].key <= span; ++next_op) {
        TimedOp& op = run_.ops[next_op];
        std::int64_t start = clock_.ns(static_cast<std::uint64_t>(op.start_ns));
        std::int64_t end = clock_.ns(static_cast<std::uint64_t>(op.duration_ns));
        place(op.parent, start, end);
        op.start_ns = start;
        op.duration_ns = end - start;
      }
    };
    for (std::size_t i = 0; i < n; ++i) {
      place_ops_before(i);
      TimedSpan& s = run_.spans[i];
      std::int64_t start = clock_.ns(stamps_[i].first);
      std::int64_t end = clock_.ns(stamps_[i].second);
      place(s.parent, start, end);
      s.start_ns = start;
      s.duration_ns = end - start;
    }
    place_ops_before(n);
  }

  /// Keys each op (`<call key>/<name>#<k>`, the k-th op of that name directly in that call)
  /// and reduces its duration. While a run repeats the previous one op for op, keys are
  /// reused without building a string.
  void key_ops(const Graph& g) {
    now_.clear();
    bool same = true;
    std::map<std::pair<std::uint32_t, std::string_view>, std::uint32_t> counts;
    for (std::size_t i = 0; i < run_.ops.size(); ++i) {
      TimedOp& op = run_.ops[i];
      const std::uint32_t parent_key =
          op.parent < 0 ? no_parent : span_keys_[static_cast<std::size_t>(op.parent)];
      const std::string_view name = g.function(op.node).op;
      if (same && i < last_ops_.size() && last_ops_[i].parent_key == parent_key &&
          (last_ops_[i].seen == name.data() ? last_ops_[i].name.size() == name.size()
                                            : last_ops_[i].name == name)) {
        op.key = last_ops_[i].key;
        add(op_states_, false, op.key, static_cast<double>(op.duration_ns));
        now_.push_back({parent_key, last_ops_[i].name, name.data(), op.key});
        continue;
      }
      if (same) {  // the runs part here: count what came before
        same = false;
        for (std::size_t j = 0; j < i; ++j) ++counts[{now_[j].parent_key, now_[j].name}];
      }
      const std::uint32_t k = counts[{parent_key, name}]++;
      std::string key = parent_key == no_parent ? std::string() : keys_[parent_key];
      key += '/';
      key += name;
      key += '#';
      key += std::to_string(k);
      const auto [at, fresh] = op_index_.try_emplace(key, op_keys_.size());
      op.key = static_cast<std::uint32_t>(at->second);
      add(op_states_, fresh, at->second, static_cast<double>(op.duration_ns));
      if (fresh) {
        op_keys_.push_back(std::move(key));
        names_->op_of_key.push_back(std::string_view(*name_pool_.emplace(name).first));
      }
      now_.push_back({parent_key, names_->op_of_key[op.key], name.data(), op.key});
    }
    std::swap(last_ops_, now_);
  }

  struct Sizes {
    std::size_t spans = 0, ops = 0, inputs = 0, dims = 0;
  };

  R reduction_;
  bool backward_ = false;
  RunClock clock_{};
  TimedRun run_{};
  std::vector<std::pair<std::uint64_t, std::uint64_t>> stamps_;  // each span's ticks
  std::vector<std::size_t> open_;  // indices of the open spans, outermost first
  std::vector<std::int64_t> child_end_;
  std::vector<std::uint32_t> span_keys_;  // this run's spans' key indices
  std::vector<LastOp> last_ops_, now_;
  Sizes last_{};
  std::shared_ptr<TimedNames> names_ = std::make_shared<TimedNames>();
  std::set<std::string, std::less<>> name_pool_;  // what `names_->op_of_key` views
  std::vector<TimedRun> runs_;
  std::vector<std::string> keys_;  // in order of first appearance
  std::map<std::string, std::size_t> index_;
  std::vector<state_type> states_;
  std::vector<std::string> op_keys_;
  std::unordered_map<std::string, std::size_t> op_index_;
  std::vector<state_type> op_states_;
};

}  // namespace detail

/// How a `record::Timing` times.
struct TimingOptions {
  /// Also time each module call's backward (`backward_spans(run)`): a gradient hook on every
  /// input and output of each call that requires grad. Off by default: hooks cost ~1 us per
  /// tensor in the forward. A call none of whose inputs requires grad (the first layer, fed
  /// the data) has no backward span: nothing marks where its backward ends.
  bool backward = false;
};

namespace record {

/// Times every module call (the root's included) and every recorded op of every forward
/// traced with it: `Tracer<record::Timing<reduce::Mean>> t({}, timing);`.
///
/// Each forward is kept as a `TimedRun` (`runs()`): its module-call spans in call order,
/// parents before children, each with its start, duration, parent span and input sizes; its
/// ops (the function nodes of its trace: a composite forward's ops, `recorder::op`s, and with
/// `record::AtenOps` the aten ops inside leaves) in the order they ran, with their input
/// shapes and dtypes. Spans nest exactly. Each module call's durations (by layer key,
/// `path_address`) and each op's (by op key, `"layer1.0/add#0"`: its call's key, its name, its
/// index among the ops of that name directly in that call) are reduced over the runs by `R`
/// (`result(key)`: `KeepAll` every duration, `Mean`, `MinMax`, `Moments`, `Quantile`, ...).
///
/// The clock: the CPU's time-stamp counter (`detail::ticks()`), converted to steady-clock
/// nanoseconds per run. A templated op's span is its libtorch call; an aten op's inside a leaf
/// is its `at::RecordFunction` event; a TorchScript op's runs from the previous marker (op, call
/// opening or return) to its own, so it includes the interpreter's steps before it. A call's
/// span starts after the timing's own bookkeeping.
///
/// A forward that throws is not a run: what it timed is dropped and the next forward starts
/// clean. Copies share their timings; one timing is fed by one thread at a time.
template <class R = reduce::KeepAll>
class Timing {
  static_assert(reduce::check_reduction<R, double>());

 public:
  using recording_policy_tag = void;
  static constexpr bool records_graph = true;
  static constexpr bool captures_calls = true;
  using reduction_type = R;

  explicit Timing(R reduction = R{}, TimingOptions options = {})
      : store_(std::make_shared<recorder::detail::TimingStore<R>>(std::move(reduction),
                                                                  options.backward)) {}

  /// Every timed forward, in order.
  const std::vector<TimedRun>& runs() const noexcept { return store_->runs(); }
  /// The timed calls' keys, in order of first appearance.
  const std::vector<std::string>& keys() const noexcept { return store_->keys(); }
  /// The timed ops' keys (`"layer1.0/add#0"`), in order of first appearance.
  const std::vector<std::string>& op_keys() const noexcept { return store_->op_keys(); }
  /// The durations (ns, as doubles) of a module call's or an op's key, reduced over the runs;
  /// throws `std::out_of_range` for a key never timed.
  decltype(auto) result(std::string_view key) const {
    return store_->reduction().result(store_->state(key));
  }
  /// How many durations of `key` were reduced.
  std::uint64_t samples(std::string_view key) const {
    return store_->reduction().count(store_->state(key));
  }

  /// The reduction the durations go through.
  const R& reduction() const noexcept { return store_->reduction(); }

  recorder::detail::CallHooks& call_hooks() const noexcept { return *store_; }

 private:
  friend struct recorder::detail::RecordingAccess;
  std::shared_ptr<recorder::detail::TimingStore<R>> store_;
};

}  // namespace record

namespace detail {

/// What the summary's line says of the one number per call: the reduction's statistic over
/// `runs` runs ("mean of 5 runs", "p90 of 20 runs").
template <class R>
std::string time_statistic(const R& r, std::uint64_t runs) {
  return r.statistic_name() + " of " + std::to_string(runs) + (runs == 1 ? " run" : " runs");
}

}  // namespace detail

/// One time per timed module call, for the summary's time columns and the time-coloured
/// drawing: the reduction's result as one number, its statistic (`reduce::has_statistic`: the
/// mean for `Mean`, `Moments` and `KeepAll`, the minimum for `MinMax`, the quantile for
/// `Quantile`).
///
/// `auto times = call_times(timing); summary(trace, {.columns = {..., SummaryColumn::time},
/// .times = &times});`
template <class R>
CallTimes call_times(const record::Timing<R>& timing) {
  static_assert(reduce::has_statistic<R, double>,
                "recorder: this reduction gives no single time per call (reduce::has_statistic: "
                "give it `statistic(result)` and `statistic_name()`, or use Mean, KeepAll, "
                "Moments, MinMax, Quantile, Last or Sum in record::Timing for time columns)");
  CallTimes t;
  std::uint64_t runs = 0;
  for (const std::string& key : timing.keys()) {
    t.ns.emplace(key, timing.reduction().statistic(timing.result(key)));
    runs = std::max(runs, timing.samples(key));
  }
  t.statistic = detail::time_statistic(timing.reduction(), runs);
  return t;
}

}  // namespace recorder
