#pragma once
/// Recording layers' inputs, outputs and gradients over many forwards, reduced by a
/// compile-time reduction policy: `record::ForwardInput<reduce::Sum>` and friends.
///
/// | policy                       | records, for each selected module call              | torchfunc name   |
/// |------------------------------|-----------------------------------------------------|------------------|
/// | `record::ForwardPre<R>`      | its inputs, before the forward runs                 | `ForwardPre`     |
/// | `record::ForwardInput<R>`    | its inputs, after the forward (in-place changes seen)| `ForwardInput`  |
/// | `record::ForwardOutput<R>`   | its outputs                                         | `ForwardOutput`  |
/// | `record::BackwardOutput<R>`  | on backward, the gradients w.r.t. its outputs       | `BackwardOutput` |
/// | `record::BackwardInput<R>`   | on backward, the gradients w.r.t. its inputs        | `BackwardInput`  |
///
/// `R` is a reduction (`policies/reduction.hpp`; `reduce::KeepAll` by default). A policy value
/// is a handle: copies share one recording, so the object you keep sees what the tracer's
/// copy records. Gradients come from tensor hooks (libtorch has no module backward hooks):
/// a gradient w.r.t. a tensor is its whole gradient, as `tensor.register_hook` gives it.

#include <recorder/capture/core.hpp>
#include <recorder/tensor/value_ops.hpp>
#include <recorder/policies/reduction.hpp>
#include <recorder/policies/reduction/concepts.hpp>

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {

namespace detail {
template <class R>
class Store;
struct RecordingAccess;
}  // namespace detail

/// One recorded layer (one call of one module): what it is, and the reduction's state for
/// each of its tensors (a module with two inputs, LSTM's three outputs).
template <class R>
class LayerRecord : public RecordInfo {
 public:
  using state_type = typename R::template state<at::Tensor>;

  explicit LayerRecord(RecordInfo info, R reduction)
      : RecordInfo(std::move(info)), reduction_(std::move(reduction)) {}
  /// A record holding `states` (one per tensor; empty: never recorded), e.g. merged ones.
  LayerRecord(RecordInfo info, R reduction, std::vector<std::optional<state_type>> states)
      : RecordInfo(std::move(info)), reduction_(std::move(reduction)), states_(std::move(states)) {}

  /// How many tensors this layer records (inputs or outputs, flattened in order).
  std::size_t tensors() const noexcept { return states_.size(); }
  /// Samples recorded: the count of the tensor recorded most often.
  std::uint64_t samples() const {
    std::uint64_t n = 0;
    for (const auto& s : states_)
      if (s) n = std::max(n, reduction_.count(*s));
    return n;
  }
  /// The reduction's state for tensor `i`; throws `std::out_of_range` naming the layer when
  /// that tensor was never recorded (a gradient that has not arrived yet).
  const state_type& state(std::size_t i = 0) const {
    if (i >= states_.size() || !states_[i])
      throw std::out_of_range("recorder: layer '" + key + "' has no recorded tensor " +
                              std::to_string(i) + " (it records " + std::to_string(states_.size()) +
                              ")");
    return *states_[i];
  }
  /// The reduction's state for tensor `i`, or null when it was never recorded.
  const state_type* find_state(std::size_t i) const noexcept {
    return i < states_.size() && states_[i] ? &*states_[i] : nullptr;
  }
  /// The reduction's result for tensor `i`: a tensor (`Sum`, `Mean`, `Last`), the list of
  /// tensors (`KeepAll`), or a result struct (`Moments`, `MinMax`, `Histogram`).
  decltype(auto) result(std::size_t i = 0) const { return reduction_.result(state(i)); }
  const R& reduction() const noexcept { return reduction_; }

 private:
  friend class detail::Store<R>;
  R reduction_;
  std::vector<std::optional<state_type>> states_;
};

/// RAII: pauses a recording for its lifetime (`auto pause = acts.dont_record();`), then
/// restores it. Selected layers still get their post-processing, so the model computes the same.
class DontRecord {
 public:
  explicit DontRecord(std::shared_ptr<detail::CaptureCore> core)
      : core_(std::move(core)), was_(core_->set_enabled(false)) {}
  ~DontRecord() {
    if (core_) core_->set_enabled(was_);
  }
  DontRecord(DontRecord&& o) noexcept : core_(std::move(o.core_)), was_(o.was_) {}
  DontRecord(const DontRecord&) = delete;
  DontRecord& operator=(const DontRecord&) = delete;
  DontRecord& operator=(DontRecord&&) = delete;

 private:
  std::shared_ptr<detail::CaptureCore> core_;
  bool was_;
};

namespace detail {

/// The typed part of a recording: records own the reduction's states.
template <class R>
class Store final : public CaptureCore {
 public:
  Store(CapturePoint what, std::vector<LayerAddress> layers, R reduction)
      : CaptureCore(what, std::move(layers), R::name), reduction_(std::move(reduction)) {}

  const std::vector<std::unique_ptr<LayerRecord<R>>>& records() const noexcept { return records_; }
  const LayerRecord<R>& at(std::size_t i) const { return *records_.at(i); }

  const R& reduction() const noexcept { return reduction_; }

  /// Replaces every record by `records` (`merge_across`).
  void replace_records(std::vector<std::unique_ptr<LayerRecord<R>>> records) {
    std::lock_guard lock(mutex());
    records_ = std::move(records);
  }

  /// Takes record `i` out of the recording.
  LayerRecord<R> take(std::size_t i) {
    std::lock_guard lock(mutex());
    LayerRecord<R> out = std::move(*records_.at(i));
    records_.erase(records_.begin() + static_cast<std::ptrdiff_t>(i));
    return out;
  }

 protected:
  std::size_t record_count() const override { return records_.size(); }
  RecordInfo& info(std::size_t i) override { return *records_[i]; }
  const RecordInfo& info(std::size_t i) const override { return *records_[i]; }
  std::size_t add_record(RecordInfo info) override {
    records_.push_back(std::make_unique<LayerRecord<R>>(std::move(info), reduction_));
    return records_.size() - 1;
  }
  void update(std::size_t record, std::size_t tensor, const at::Tensor& x) override {
    auto& states = records_[record]->states_;
    if (states.size() <= tensor) states.resize(tensor + 1);
    auto& slot = states[tensor];
    if (!slot)
      slot.emplace(reduction_.init(x));
    else
      reduction_.update(*slot, x);
  }
  std::uint64_t samples(std::size_t record) const override { return records_[record]->samples(); }

 private:
  R reduction_;
  std::vector<std::unique_ptr<LayerRecord<R>>> records_;
};

}  // namespace detail

namespace record {

/// Records the inputs, outputs or gradients of the selected layers — which ones chosen at run time
/// (`what`: a command line, a configuration) — on every forward a `Tracer` runs, reducing each
/// tensor over the forwards with reduction `R`. Also records the graph (layer addresses need the
/// module calls). `Capture<W, R>` and its aliases (`ForwardOutput<R>`, ...) are this with the
/// capture point in the type; every function that takes a recording takes either.
///
/// ```
/// recorder::record::Activations<recorder::reduce::Mean> acts(
///     recorder::CapturePoint::forward_input, {"fc2"});
/// recorder::Tracer<recorder::record::Activations<recorder::reduce::Mean>> tracer({}, acts);
/// ```
template <class R = reduce::KeepAll>
class Activations {
  // R must be a reduction over at::Tensor: the checker names the part it lacks.
  static_assert(reduce::check_reduction<R, at::Tensor>());

 public:
  using recording_policy_tag = void;
  static constexpr bool records_graph = true;
  static constexpr bool captures_calls = true;
  using reduction_type = R;
  using record_type = LayerRecord<R>;

  /// Records `what` of the layers `layers` select, reduced by `reduction`.
  Activations(CapturePoint what, std::vector<LayerAddress> layers, R reduction = R{})
      : store_(std::make_shared<recorder::detail::Store<R>>(what, std::move(layers),
                                                            std::move(reduction))) {}

  /// What is recorded: a forward's inputs or outputs, or their gradients.
  CapturePoint capture_point() const noexcept { return store_->what(); }

  /// Records only calls for which `condition(const LayerCall&)` is true.
  /// Example: `.when([](const recorder::LayerCall& c) { return c.label == "2-3"; })`.
  template <class F>
  Activations& when(F condition) {
    static_assert(std::is_invocable_r_v<bool, F&, const LayerCall&>,
                  "recorder: a condition is callable as bool(const recorder::LayerCall&)");
    store_->set_condition(Condition(std::move(condition)));
    return *this;
  }

  /// Replaces every selected layer's outputs by `f(call, output)` after recording them.
  /// Example: `.postproc([](const recorder::LayerCall&, const at::Tensor& y) { return y.clamp_min(0); })`.
  template <class F>
  Activations& postproc(F f) {
    static_assert(std::is_invocable_r_v<at::Tensor, F&, const LayerCall&, const at::Tensor&>,
                  "recorder: a post-processing step is callable as "
                  "at::Tensor(const recorder::LayerCall&, const at::Tensor&)");
    store_->add_postproc(std::nullopt, Postproc(std::move(f)));
    return *this;
  }
  /// Post-processing of the selected calls that `layer` also selects.
  template <class F>
  Activations& postproc(LayerAddress layer, F f) {
    static_assert(std::is_invocable_r_v<at::Tensor, F&, const LayerCall&, const at::Tensor&>,
                  "recorder: a post-processing step is callable as "
                  "at::Tensor(const recorder::LayerCall&, const at::Tensor&)");
    store_->add_postproc(std::move(layer), Postproc(std::move(f)));
    return *this;
  }

  /// `KeptData::batch` (default) records whole tensors, `KeptData::sample` their first element.
  Activations& data(KeptData d) {
    store_->set_data(d);
    return *this;
  }

  /// Pauses recording while the returned guard lives.
  [[nodiscard]] DontRecord dont_record() const { return DontRecord(store_); }

  // ---- results -----------------------------------------------------------------------

  /// The number of recorded layers.
  std::size_t size() const noexcept { return store_->records().size(); }
  bool empty() const noexcept { return size() == 0; }

  /// The one recorded layer `layer` selects: `acts["layer1.0.conv1"]`, `acts[{2, 3}]`,
  /// `acts[by_class("Linear")]`. Throws `UnknownLayer` (listing the nearest recorded keys) or
  /// `AmbiguousLayer`.
  const LayerRecord<R>& operator[](const LayerAddress& layer) const {
    return store_->at(store_->find(layer));
  }

  /// Removes the recording of `layer` and returns it.
  LayerRecord<R> remove(const LayerAddress& layer) { return store_->take(store_->find(layer)); }

  /// The recorded layers, in the order they were first recorded.
  const std::vector<std::unique_ptr<LayerRecord<R>>>& records() const noexcept {
    return store_->records();
  }

  /// The keys of the recorded layers ("fc2", "layer1.0.relu#1").
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& r : records()) out.push_back(r->key);
    return out;
  }

  const std::vector<LayerAddress>& layers() const noexcept { return store_->layers(); }

  /// The reduction each recorded tensor goes through.
  const R& reduction() const noexcept { return store_->reduction(); }
  KeptData data() const noexcept { return store_->data(); }

  /// The hooks the tracer connects to a forward.
  recorder::detail::CallHooks& call_hooks() const noexcept { return *store_; }

 private:
  friend struct recorder::detail::RecordingAccess;
  std::shared_ptr<recorder::detail::Store<R>> store_;
};

/// Records `W` (inputs, outputs or gradients) of the selected layers on every forward a
/// `Tracer` runs, reducing each tensor over the forwards with reduction `R`. Also records the
/// graph (layer addresses need the module calls). Use the aliases below.
///
/// ```
/// recorder::record::ForwardInput<recorder::reduce::Sum> inputs({"fc2", "fc3"});
/// recorder::Tracer<recorder::record::ForwardInput<recorder::reduce::Sum>> tracer({}, inputs);
/// for (int i = 0; i < 1000; ++i) tracer.run(model, torch::randn({1, 784}));
/// at::Tensor s = inputs["fc2"].result();   // [1, 100]: the sum over 1,000 forwards
/// ```
/// Layers are selected by `LayerAddress` (label `"2-3"`, or `{{2, 3}}` in the list, path, `by_class`,
/// `by_index`, `where`). A selected layer that did not run in a forward makes `Tracer::run`
/// throw `UnknownLayer` after that forward, listing the nearest layers that ran.
template <CapturePoint W, class R = reduce::KeepAll>
class Capture : public Activations<R> {
 public:
  static constexpr CapturePoint what = W;

  /// Records `W` of the layers `layers` select, reduced by `reduction`.
  explicit Capture(std::vector<LayerAddress> layers, R reduction = R{})
      : Activations<R>(W, std::move(layers), std::move(reduction)) {}

  // The settings return the recording as its own type, for chaining.
  template <class F>
  Capture& when(F condition) {
    Activations<R>::when(std::move(condition));
    return *this;
  }
  template <class F>
  Capture& postproc(F f) {
    Activations<R>::postproc(std::move(f));
    return *this;
  }
  template <class F>
  Capture& postproc(LayerAddress layer, F f) {
    Activations<R>::postproc(std::move(layer), std::move(f));
    return *this;
  }
  Capture& data(KeptData d) {
    Activations<R>::data(d);
    return *this;
  }
  using Activations<R>::data;
};

template <class R = reduce::KeepAll>
using ForwardPre = Capture<CapturePoint::forward_pre, R>;
template <class R = reduce::KeepAll>
using ForwardInput = Capture<CapturePoint::forward_input, R>;
template <class R = reduce::KeepAll>
using ForwardOutput = Capture<CapturePoint::forward_output, R>;
template <class R = reduce::KeepAll>
using BackwardOutput = Capture<CapturePoint::backward_output, R>;
template <class R = reduce::KeepAll>
using BackwardInput = Capture<CapturePoint::backward_input, R>;

}  // namespace record

}  // namespace recorder
