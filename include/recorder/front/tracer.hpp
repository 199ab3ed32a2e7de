#pragma once
/// The tracer: runs a model once per `run` under its recording policies and returns the trace.
/// A module holder runs through `front/module_run.hpp`; any other model through the front end
/// its own header specializes `detail::FrontEnd<M>` in (`front/front_end.hpp`).

#include <recorder/error.hpp>
#include <recorder/front/front_end.hpp>
#include <recorder/front/module_run.hpp>
#include <recorder/front/recording.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/policies/recording.hpp>
#include <recorder/tensor/recorder_tensor.hpp>
#include <recorder/torch_version.hpp>

#include <ATen/core/ivalue.h>

#include <concepts>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {

/// Traces forwards of a model under the recording policies `Ps...` (default: the graph).
///
/// ```
/// recorder::Tracer<recorder::record::Structure> tracer;
/// auto trace = tracer.run(model, torch::randn({1, 3, 224, 224}));
/// recorder::render<recorder::backend::Dot>(trace, {.depth = 2}, std::cout);
/// auto y = trace.output;  // the forward's result, as plain tensors
/// ```
/// The model is a module holder whose forward is templated on its tensor type (or any
/// holder `recorder::Module<H>` accepts), or a TorchScript model (`torch::jit::load`). With
/// `record::Off` nothing is recorded and the trace is empty. When the forward throws, `run`
/// throws a `TraceError` naming the op and module, carrying the partial trace.
///
/// Reuse a tracer to trace a model many times: from its third trace on, a tracer copies the
/// records of its last trace when the module tree has not changed, so a module call costs 15-40%
/// less to record (`adapters/module_records.hpp`).
template <class... Ps>  // recording policies, checked below: a misuse names the missing part
class Tracer {
  static_assert((true & ... & check_recording_policy<Ps>()));

 public:
  using policy_type = record::combine_t<Ps...>;
  using tensor_type = RecorderTensor<policy_type>;

  Tracer() = default;
  explicit Tracer(TraceOptions options) : options_(options) {}
  /// With a policy object: policies that keep state across runs (activations, reductions,
  /// timings) are values, so they plug in here without changing how `run` is called.
  Tracer(TraceOptions options, policy_type policy)
      : options_(options), policy_(std::move(policy)) {}
  /// With one value per policy: `Tracer<record::Structure, record::ForwardOutput<>>({}, {}, outputs)`.
  Tracer(TraceOptions options, Ps... policies) requires(sizeof...(Ps) > 1)
      : options_(options), policy_(std::move(policies)...) {}

  const TraceOptions& options() const noexcept { return options_; }
  /// What the tracer kept of the modules its last trace registered (the next trace of the same
  /// module tree copies it): for tests and benchmarks.
  const detail::ModuleRecords& module_records() const noexcept { return module_records_; }
  /// The memory the tracer lends each trace's graph (`GraphStorage`; null before the first
  /// trace): what it keeps for the next trace is `graph_storage_bytes()`, and
  /// `release_graph_storage()` frees it.
  std::size_t graph_storage_bytes() const { return graph_storage_ ? graph_storage_->bytes() : 0; }
  void release_graph_storage() {
    if (graph_storage_) graph_storage_->release();
  }
  const policy_type& policy() const noexcept { return policy_; }
  policy_type& policy() noexcept { return policy_; }

  /// Runs `model` once on `inputs` (tensors, or tuples/vectors of them) and returns the trace.
  template <detail::module_holder H, class... In>
  auto run(H& model, const In&... inputs) {
    check_torch();
    return detail::ModuleFrontEnd<policy_type>::run(model, options_, detail::call_hooks_of(policy_),
                                                    module_records_, graph_storage(), inputs...);
  }

  /// Runs TorchScript model `model` (from `torch::jit::load` or `recorder::load_model`), or an
  /// exported program (`recorder::load_exported`), once on `inputs` (tensors, or anything a
  /// `c10::IValue` holds) and returns the trace; `output` is what its `forward` returned. Needs
  /// the model's front end: `#include <recorder/script.hpp>` (kept out of `recorder.hpp` so that
  /// templated models do not compile it) or `<recorder/exported.hpp>`.
  ///
  /// ```
  /// auto m = torch::jit::load("resnet18.pt");
  /// auto trace = recorder::Tracer<recorder::record::Structure>{}.run(m, torch::randn({1, 3, 224, 224}));
  /// ```
  /// The trace is the one the templated front end gives for the same architecture: module
  /// calls with full paths (`layer1.0.conv1`), classes without TorchScript's mangling, depth,
  /// depth-index labels and call indices; the aten ops of composite forwards (and of leaf
  /// modules with `record::AtenOps`); tensors by identity; parameters. The tracer keeps what the
  /// front end prepares on the first run (a TorchScript model's instrumented copy, sharing its
  /// parameters; an exported program's ops and weights): reuse a tracer to trace a model many
  /// times. The model itself is not changed.
  template <class M, class... In>
  requires(!detail::module_holder<M>) &&
      (std::constructible_from<c10::IValue, const In&> &&
       ...) Traced<c10::IValue> run(const M& model, const In&... inputs) {
    return run(model, std::vector<c10::IValue>{c10::IValue(inputs)...});
  }

  /// `run(model, inputs...)` with the inputs as a list.
  template <class M>
  requires(!detail::module_holder<M>) Traced<c10::IValue> run(const M& model,
                                                              std::vector<c10::IValue> inputs) {
    check_torch();
    if constexpr (!detail::front_end_included<M>) {
      static_assert(detail::front_end_included<M>,
                    "recorder::Tracer::run: the model is no torch::nn::Module holder, and no "
                    "front end for its type is included: tracing a TorchScript model needs "
                    "#include <recorder/script.hpp>, an exported program <recorder/exported.hpp>");
      return {};
    } else {
      using FrontEnd = detail::FrontEnd<M>;
      auto& cache = front_end_cache<typename FrontEnd::Cache>();
      if constexpr (!policy_type::records_graph)
        return FrontEnd::run_plain(cache, model, std::move(inputs), options_);
      else
        return FrontEnd::trace(cache, model, std::move(inputs), options_,
                               detail::call_hooks_of(policy_), record::observes_ops<policy_type>,
                               graph_storage());
    }
  }

 private:
  TraceOptions options_;
  [[no_unique_address]] policy_type policy_{};
  /// What the front end of the last model run keeps (`detail::FrontEnd<M>::Cache`: instrumented
  /// TorchScript copies, an exported program's runner), and which front end's it is.
  std::shared_ptr<void> front_end_cache_;
  const void* front_end_kind_ = nullptr;

  template <class Cache>
  Cache& front_end_cache() {
    static const char kind = 0;
    if (front_end_kind_ != &kind || !front_end_cache_) {
      front_end_cache_ = std::make_shared<Cache>();
      front_end_kind_ = &kind;
    }
    return *static_cast<Cache*>(front_end_cache_.get());
  }
  /// The modules the last trace registered, copied by the next trace of the same tree.
  detail::ModuleRecords module_records_;
  /// The memory each trace's graph is built in and gives back (made by the first trace; copies
  /// of the tracer share it).
  std::shared_ptr<GraphStorage> graph_storage_;

  const std::shared_ptr<GraphStorage>& graph_storage() {
    if (!graph_storage_) graph_storage_ = std::make_shared<GraphStorage>();
    return graph_storage_;
  }
};

}  // namespace recorder
