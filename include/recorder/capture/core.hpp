#pragma once
/// The non-template core of activation and gradient recording: which calls, when, and where
/// their tensors go (ATen core only; the typed reduction lives in `capture/activations.hpp`).

#include <recorder/graph/address.hpp>
#include <recorder/graph/graph.hpp>
#include <recorder/tensor/session.hpp>

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

/// What a capture policy records of a selected module call (torchfunc's recorder names).
enum class CapturePoint {
  forward_pre,     ///< its inputs before the forward runs (torchfunc `ForwardPre`)
  forward_input,   ///< its inputs after the forward ran, in-place changes included (`ForwardInput`)
  forward_output,  ///< its outputs (`ForwardOutput`)
  backward_output,  ///< on backward, the gradients w.r.t. its outputs (`BackwardOutput`)
  backward_input,   ///< on backward, the gradients w.r.t. its inputs (`BackwardInput`)
};

/// "forward_pre", "forward_input", ...
constexpr std::string_view to_string(CapturePoint w) noexcept {
  switch (w) {
    case CapturePoint::forward_pre:
      return "forward_pre";
    case CapturePoint::forward_input:
      return "forward_input";
    case CapturePoint::forward_output:
      return "forward_output";
    case CapturePoint::backward_output:
      return "backward_output";
    case CapturePoint::backward_input:
      return "backward_input";
  }
  return "?";
}

/// How much of each recorded tensor is kept (scio's and torchfunc's data methods).
enum class KeptData {
  batch,   ///< the whole tensor
  sample,  ///< the first element along dimension 0, as a batch of one (`x.narrow(0, 0, 1)`)
};

/// One selected module call, as a condition or post-processing callable sees it.
struct LayerCall {
  const Graph& graph;            ///< the trace being recorded (complete up to this call)
  NodeId call;                   ///< the call's node in `graph`
  std::string_view path;         ///< "layer1.0.conv1"; "" for the root
  std::string_view class_name;   ///< "Conv2d"
  std::string label;             ///< torchinfo's depth-index label, "3-2"
  std::uint32_t call_index = 0;  ///< 0 for the module's first call in this forward
  CapturePoint what = CapturePoint::forward_output;
  std::uint64_t samples = 0;  ///< samples this layer has recorded so far
  std::size_t tensor = 0;     ///< post-processing: which output (0-based); else 0
};

/// Decides, per selected call, whether to record it (`record::...::when`).
using Condition = std::function<bool(const LayerCall&)>;
/// Replaces a selected call's output in flight (`record::...::postproc`, scio's
/// `activation_postproc`): gets the output already recorded, returns the one the model goes on
/// with.
using Postproc = std::function<at::Tensor(const LayerCall&, const at::Tensor&)>;

/// Thrown when recording a layer failed (a reduction met a tensor of another shape, a keep-all
/// memory cap was reached, ...). `what()` names the layer, what was recorded and the reduction;
/// the recording keeps everything recorded before.
class CaptureError : public std::runtime_error {
 public:
  CaptureError(std::string layer, const std::string& message)
      : std::runtime_error(message),
        layer_(std::make_shared<const std::string>(std::move(layer))) {}
  /// The layer's key ("fc2", "layer1.0.relu#1").
  const std::string& layer() const noexcept { return *layer_; }

 private:
  std::shared_ptr<const std::string> layer_;
};

/// What a recording knows about one recorded layer (one module call: a reused module has one
/// record per call index).
struct RecordInfo {
  std::string key;         ///< "fc2", "layer1.0.relu#1", "<root>" (`path_address`)
  std::string path;        ///< "layer1.0.relu"
  std::string class_name;  ///< "ReLU"
  std::string label;       ///< "3-4" (as of the latest forward that recorded it)
  std::uint32_t call_index = 0;
  std::int64_t depth = 0;
  std::int64_t depth_index = 0;
  std::size_t position = 0;  ///< place among the calls below the root
  CallFacts facts() const {
    return CallFacts{path, class_name, call_index, depth, depth_index, position, nullptr, NodeId{}};
  }
};

namespace detail {

/// The machinery every capture policy shares; a typed store (`capture/activations.hpp`) adds
/// the reduction's state per record and per tensor. Reached from the adapters through
/// `CallHooks`, from autograd through tensor hooks holding a `weak_ptr` (a hook that outlives
/// its recording does nothing).
class CaptureCore : public CallHooks, public std::enable_shared_from_this<CaptureCore> {
 public:
  CaptureCore(CapturePoint what, std::vector<LayerAddress> layers, std::string_view reduction)
      : what_(what), layers_(std::move(layers)), reduction_name_(reduction) {
    if (layers_.empty())
      throw std::invalid_argument("recorder: a " + std::string(to_string(what)) +
                                  " recording needs at least one layer address, e.g. {\"fc2\"}, "
                                  "{recorder::by_class(\"Conv2d\")} or {recorder::all_layers()}");
  }
  CaptureCore(const CaptureCore&) = delete;
  CaptureCore& operator=(const CaptureCore&) = delete;
  virtual ~CaptureCore() = default;

  CapturePoint what() const noexcept { return what_; }
  const std::vector<LayerAddress>& layers() const noexcept { return layers_; }
  std::string_view reduction_name() const noexcept { return reduction_name_; }

  void set_condition(Condition c) {
    std::lock_guard lock(mutex_);
    condition_ = std::move(c);
  }
  void add_postproc(std::optional<LayerAddress> layer, Postproc f) {
    std::lock_guard lock(mutex_);
    postprocs_.emplace_back(std::move(layer), std::move(f));
  }
  void set_data(KeptData d) {
    std::lock_guard lock(mutex_);
    data_ = d;
  }
  KeptData data() const noexcept { return data_; }
  /// Returns the previous value.
  bool set_enabled(bool on) {
    std::lock_guard lock(mutex_);
    return std::exchange(enabled_, on);
  }
  bool enabled() const noexcept { return enabled_; }

  /// The index of the one record `a` selects. Throws `UnknownLayer` (listing the nearest
  /// recorded keys) or `AmbiguousLayer` (listing the keys matched: the bare path of a module
  /// called several times matches its records "fc#0", "fc#1", ...; see `graph/address.hpp`).
  std::size_t find(const LayerAddress& a) const {
    std::lock_guard lock(mutex_);
    std::vector<std::size_t> found;
    for (std::size_t i = 0; i < record_count(); ++i)
      if (matches_record(a, info(i))) found.push_back(i);
    if (found.size() == 1) return found.front();
    if (found.empty()) {
      std::vector<std::string> keys;
      for (std::size_t i = 0; i < record_count(); ++i) keys.push_back(info(i).key);
      const std::string spelled = to_string(a);
      if (keys.empty())
        throw UnknownLayer(
            spelled, "nothing has been recorded yet (" + std::string(to_string(what_)) + ")", {});
      if (std::holds_alternative<recorder::address::Predicate>(a.selector()))
        throw UnknownLayer(spelled, "look recorded layers up by label, path, class or index",
                           std::move(keys), "recorded");
      throw UnknownLayer(spelled, "no recorded layer has this address",
                         recorder::detail::address::nearest(
                             spelled, std::move(keys), recorder::detail::address::suggestion_limit),
                         "recorded");
    }
    // A bare path of a module called several times: one record per call, each named by its key.
    std::vector<std::string> keys;
    for (std::size_t i : found) keys.push_back(info(i).key);
    throw AmbiguousLayer(recorder::detail::address::ambiguity_message(a, "recorded layers", keys),
                         {});
  }

  // ---- CallHooks ----------------------------------------------------------------------

  /// "the forward_output recording (moments) of fc1, fc2", for `RecordingBusy`.
  std::string describe() const override {
    std::string s = "the " + std::string(to_string(what_)) + " recording (" +
                    std::string(reduction_name_) + ") of ";
    for (std::size_t i = 0; i < layers_.size(); ++i) s += (i ? ", " : "") + to_string(layers_[i]);
    return s;
  }

  void begin() override {
    std::lock_guard lock(mutex_);
    open_.clear();
    touched_.clear();
    position_ = 0;
    matched_.assign(layers_.size(), false);
  }

  void enter(const Graph& g, NodeId call, std::span<const at::Tensor> inputs) override {
    std::lock_guard lock(mutex_);
    if (matched_.size() != layers_.size()) matched_.assign(layers_.size(), false);  // no begin()
    const bool below_root = g.node(call).parent.valid();
    const std::size_t position = below_root ? position_++ : 0;
    const CallFacts facts = facts_of(g, call, position);
    bool selected = false;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      if (recorder::matches(layers_[i], facts)) {
        matched_[i] = true;
        selected = true;
      }
    }
    OpenCall open{call, position, selected, npos};
    if (selected && enabled_) {
      const std::size_t rec = record_for(facts);
      if (!condition_ || condition_(layer_call(g, call, rec, 0))) open.record = rec;
    }
    open_.push_back(open);
    if (open.record == npos) return;
    if (what_ == CapturePoint::forward_pre) record_all(open.record, inputs);
    if (what_ == CapturePoint::backward_input) hook_all(open.record, inputs);
  }

  void leave(const Graph& g, NodeId call, std::span<const at::Tensor> inputs,
             std::span<at::Tensor> outputs) override {
    std::unique_lock lock(mutex_);
    while (!open_.empty() && open_.back().call != call) open_.pop_back();
    if (open_.empty()) return;
    const OpenCall open = open_.back();
    open_.pop_back();
    if (open.record != npos) {
      if (what_ == CapturePoint::forward_input) record_all(open.record, inputs);
      if (what_ == CapturePoint::forward_output) record_all(open.record, outputs);
      if (what_ == CapturePoint::backward_output) hook_all(open.record, outputs);
    }
    if (!open.selected || postprocs_.empty()) return;
    const CallFacts facts = facts_of(g, call, open.position);
    std::vector<const Postproc*> apply;
    for (const auto& [layer, f] : postprocs_)
      if (!layer || recorder::matches(*layer, facts)) apply.push_back(&f);
    if (apply.empty()) return;
    const std::size_t rec = open.record;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      for (const Postproc* f : apply) {
        LayerCall lc = layer_call(g, call, rec, i);
        lock.unlock();  // the callable may run ops, register hooks, read this recording
        outputs[i] = (*f)(lc, outputs[i]);
        lock.lock();
      }
    }
  }

  void end(const Graph& g) override {
    {
      std::lock_guard lock(mutex_);
      finish_keys(g);
      open_.clear();
    }
    // An address that matched no call: UnknownLayer lists what ran; several are named together.
    std::vector<UnknownLayer> unknown;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      if (i < matched_.size() && matched_[i]) continue;
      try {
        (void)resolve(g, layers_[i]);
      } catch (const UnknownLayer& e) {
        unknown.push_back(e);
      }
    }
    if (unknown.size() == 1) throw unknown.front();
    if (!unknown.empty()) throw UnknownLayer(unknown);
  }

  void abort(const Graph& g) noexcept override {
    std::lock_guard lock(mutex_);
    try {
      finish_keys(g);
    } catch (...) {  // keys stay as they were; nothing recorded is lost
    }
    open_.clear();
  }

 protected:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

  /// The typed store: how many records, their infos, adding and removing one.
  virtual std::size_t record_count() const = 0;
  virtual RecordInfo& info(std::size_t record) = 0;
  virtual const RecordInfo& info(std::size_t record) const = 0;
  virtual std::size_t add_record(RecordInfo info) = 0;
  /// Feeds `x` (already cut to the data method) to tensor slot `tensor` of `record`.
  virtual void update(std::size_t record, std::size_t tensor, const at::Tensor& x) = 0;
  virtual std::uint64_t samples(std::size_t record) const = 0;

  std::recursive_mutex& mutex() const noexcept { return mutex_; }

  /// Records look-ups after a forward: no graph, so `where(...)` matches nothing.
  static bool matches_record(const LayerAddress& a, const RecordInfo& r) {
    return recorder::matches(a, r.facts());
  }

 private:
  struct OpenCall {
    NodeId call;
    std::size_t position = 0;
    bool selected = false;
    std::size_t record = npos;  ///< npos: not recorded (disabled, condition said no)
  };

  /// The record of the call described by `f`, created on first sight; its label and position
  /// are refreshed (they can change between forwards with data-dependent control flow).
  std::size_t record_for(const CallFacts& f) {
    std::size_t rec = npos;
    for (std::size_t i = 0; i < record_count(); ++i) {
      const RecordInfo& r = info(i);
      if (r.call_index == f.call_index && r.path == f.path) {
        rec = i;
        break;
      }
    }
    if (rec == npos) {
      RecordInfo r;
      r.path = std::string(f.path);
      r.class_name = std::string(f.class_name);
      r.call_index = f.call_index;
      r.key = r.path.empty() ? std::string("<root>") : r.path;
      if (r.call_index > 0) r.key += '#' + std::to_string(r.call_index);
      rec = add_record(std::move(r));
    }
    RecordInfo& r = info(rec);
    r.depth = f.depth;
    r.depth_index = f.depth_index;
    r.position = f.position;
    r.label = std::to_string(f.depth) + '-' + std::to_string(f.depth_index);
    touched_.emplace_back(rec, f.call);
    return rec;
  }

  /// Gives the records this forward touched their final keys: the path, with "#k" when the
  /// module was called more than once (`path_address`).
  void finish_keys(const Graph& g) {
    for (const auto& [rec, call] : touched_)
      if (rec < record_count()) info(rec).key = path_address(g, call);
    touched_.clear();
  }

  LayerCall layer_call(const Graph& g, NodeId call, std::size_t rec, std::size_t tensor) const {
    const ModuleInfo& m = g.module_of(call);
    return LayerCall{g,
                     call,
                     m.path,
                     m.class_name,
                     depth_index_label(g, call),
                     g.call(call).call_index,
                     what_,
                     rec == npos ? 0 : samples(rec),
                     tensor};
  }

  at::Tensor cut(const at::Tensor& x) const {
    if (data_ == KeptData::sample && x.defined() && x.dim() > 0 && x.size(0) > 0)
      return x.narrow(0, 0, 1);
    return x;
  }

  void record_all(std::size_t rec, std::span<const at::Tensor> tensors) {
    for (std::size_t i = 0; i < tensors.size(); ++i) record_one(rec, i, tensors[i]);
  }

  void record_one(std::size_t rec, std::size_t i, const at::Tensor& x) {
    if (!x.defined()) return;
    try {
      update(rec, i, cut(x));
    } catch (...) {
      const RecordInfo& r = info(rec);
      throw CaptureError(r.key, "recorder: recording " + std::string(to_string(what_)) +
                                    " of layer '" + r.key + "' (" + r.class_name + ", " + r.label +
                                    ") with reduce::" + std::string(reduction_name_) +
                                    " failed at tensor " + std::to_string(i) + ": " +
                                    current_exception_message());
    }
  }

  /// Registers a gradient hook on every tensor that requires grad; the hook records the
  /// gradient into slot `i` of this record, found again by path and call index (records may
  /// be removed in between).
  void hook_all(std::size_t rec, std::span<const at::Tensor> tensors) {
    const RecordInfo& r = info(rec);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const at::Tensor& t = tensors[i];
      if (!t.defined() || !t.requires_grad()) continue;
      std::weak_ptr<CaptureCore> weak = weak_from_this();
      t.register_hook([weak, path = r.path, call_index = r.call_index, i](const at::Tensor& grad) {
        if (auto self = weak.lock()) self->on_gradient(path, call_index, i, grad);
      });
    }
  }

  void on_gradient(const std::string& path, std::uint32_t call_index, std::size_t i,
                   const at::Tensor& grad) {
    std::lock_guard lock(mutex_);
    for (std::size_t rec = 0; rec < record_count(); ++rec) {
      const RecordInfo& r = info(rec);
      if (r.path == path && r.call_index == call_index) {
        record_one(rec, i, grad);
        return;
      }
    }
  }

  CapturePoint what_;
  std::vector<LayerAddress> layers_;
  std::string_view reduction_name_;
  Condition condition_;
  std::vector<std::pair<std::optional<LayerAddress>, Postproc>> postprocs_;
  KeptData data_ = KeptData::batch;
  bool enabled_ = true;

  // Per forward.
  std::vector<OpenCall> open_;
  std::vector<std::pair<std::size_t, NodeId>> touched_;
  std::vector<bool> matched_;
  std::size_t position_ = 0;

  mutable std::recursive_mutex mutex_;
};

}  // namespace detail

}  // namespace recorder
