#pragma once
/// The tracer front end: runs a forward on RecorderTensors inside a recording and returns the trace.

#include <recorder/adapters/module.hpp>
#include <recorder/error.hpp>
#include <recorder/front/front_end.hpp>
#include <recorder/front/recording.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/policies/recording.hpp>
#include <recorder/tensor/nested.hpp>
#include <recorder/tensor/recorder_tensor.hpp>
#include <recorder/tensor/session.hpp>
#include <recorder/torch_version.hpp>

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/nn/module.h>

#include <concepts>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace recorder {

namespace detail {

/// RAII: sets the model's train/eval mode and restores it, also when the forward throws.
class ModeGuard {
 public:
  ModeGuard(torch::nn::Module& m, TrainMode mode) : m_(m), was_training_(m.is_training()) {
    if (mode == TrainMode::train) m_.train(true);
    if (mode == TrainMode::eval) m_.train(false);
  }
  ~ModeGuard() { m_.train(was_training_); }
  ModeGuard(const ModeGuard&) = delete;
  ModeGuard& operator=(const ModeGuard&) = delete;

 private:
  torch::nn::Module& m_;
  bool was_training_;
};

/// Adds every parameter below `m` to `seen` (by TensorImpl), without building names.
inline void collect_parameters(const torch::nn::Module& m, IdMap& seen, ModelFacts& facts) {
  for_each_own_parameter(m, [&](const std::string&, const at::Tensor& p) {
    if (!seen.insert(IdMap::key_of(p.unsafeGetTensorImpl()))) return;
    facts.total_params += static_cast<std::uint64_t>(p.numel());
    if (p.requires_grad()) facts.trainable_params += static_cast<std::uint64_t>(p.numel());
  });
  for (const auto& child : m.children()) collect_parameters(*child, seen, facts);
}

/// The model-level facts of `model`, traced in session `s`: its class, and its parameters
/// counted once each (tied weights included), as read with the root module's tree
/// (`read_tree`), else by a walk of the model.
inline ModelFacts model_facts(const torch::nn::Module& model, const Session& s) {
  ModelFacts facts;
  facts.class_name = class_name_of(model);
  if (s.tree.root == &model) {
    facts.total_params = s.tree.total_params;
    facts.trainable_params = s.tree.trainable_params;
    return facts;
  }
  IdMap seen;  // TensorImpls counted
  collect_parameters(model, seen, facts);
  return facts;
}

/// The call hooks of the members of policy `p` that capture module calls, in member order.
template <class P>
std::vector<CallHooks*> call_hooks_of(P& p) {
  std::vector<CallHooks*> hooks;
  if constexpr (record::captures_calls<P>) {
    record::for_each_member(p, [&hooks](auto& member) {
      if constexpr (record::captures_calls<std::remove_cvref_t<decltype(member)>>)
        hooks.push_back(&member.call_hooks());
    });
  }
  return hooks;
}

template <class H>
torch::nn::Module& module_of_holder(H& h) {
  if constexpr (requires { h.holder(); })
    return *h.holder();
  else
    return *h;
}

/// What the tracer's own front end runs: a `torch::nn::Module` holder (`TORCH_MODULE`'s, a
/// `std::shared_ptr` to a module, or a `recorder::Module<H>`), whose forward is templated on its
/// tensor type or is a libtorch module's. Any other model needs a front end of its own
/// (`front/front_end.hpp`).
template <class H>
concept module_holder = requires(H& h) {
  { *h.holder() } -> std::convertible_to<torch::nn::Module&>;
}
|| requires(H& h) {
  { *h } -> std::convertible_to<torch::nn::Module&>;
};

}  // namespace detail

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
    detail::Recording rec(detail::call_hooks_of(policy_), graph_storage());
    detail::Session& s = rec.session();
    detail::ModuleRecords::Lend lend(module_records_, s);
    torch::nn::Module& root_module = detail::module_of_holder(model);
    detail::ModeGuard mode(root_module, options_.mode);
    std::optional<torch::NoGradGuard> no_grad;
    if (options_.no_grad) no_grad.emplace();

    const std::size_t n_inputs = (count_tensors(inputs) + ... + std::size_t{0});
    std::size_t next_input = 0;
    auto make_input = [&](const auto& leaf) {
      using L = std::remove_cvref_t<decltype(leaf)>;
      if constexpr (std::is_same_v<L, at::Tensor>) {
        NodeId id{};
        if constexpr (policy_type::records_graph) id = rec.input(leaf, next_input, n_inputs);
        ++next_input;
        if constexpr (policy_type::records_graph)
          return tensor_type(detail::adopt, leaf, s.ref(id));
        else
          return tensor_type(detail::adopt, leaf, {});
      } else {
        return leaf;
      }
    };
    // A braced list runs the conversions left to right: input nodes get stable ids.
    auto traced_inputs = std::tuple{detail::map_leaves(inputs, make_input)...};

    Module<std::remove_cvref_t<decltype(holder_of(model))>> root(holder_of(model));
    using Out = decltype(std::apply([&](auto&... r) { return root(r...); }, traced_inputs));
    std::optional<Out> out;
    try {
      out.emplace(std::apply([&](auto&... r) { return root(r...); }, traced_inputs));
    } catch (TraceError& e) {
      detail::register_containers(s, root_module);
      rec.fail(e, detail::model_facts(root_module, s));
      throw;
    }

    using PlainOut = decltype(detail::map_leaves(*out, plain_leaf));
    Traced<PlainOut> result;
    rec.end();
    if constexpr (policy_type::records_graph) {
      detail::register_containers(s, root_module);
      mark_outputs(rec, *out);
      rec.finish(result, detail::model_facts(root_module, s));
    }
    result.output = detail::map_leaves(*out, plain_leaf);
    return result;
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
  template <class X>
  static std::size_t count_tensors(const X& x) {
    std::size_t n = 0;
    auto visit = [&n](const auto& leaf) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(leaf)>, at::Tensor>) ++n;
    };
    detail::for_each_leaf(x, visit);
    return n;
  }

  template <class H>
  static auto& holder_of(H& h) {
    if constexpr (requires { h.holder(); })
      return h.holder();
    else
      return h;
  }

  /// A traced result leaf as a plain tensor; anything else as it is.
  static constexpr auto plain_leaf = [](auto&& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (is_recorder_tensor_v<L>)
      return at::Tensor(leaf.tensor());
    else
      return leaf;
  };

  template <class Out>
  static void mark_outputs(detail::Recording& rec, const Out& out) {
    std::size_t n = 0;
    auto count = [&n](const auto& leaf) {
      if constexpr (is_recorder_tensor_v<decltype(leaf)>) ++n;
    };
    detail::for_each_leaf(out, count);
    std::size_t i = 0;
    auto visit = [&](const auto& leaf) {
      if constexpr (is_recorder_tensor_v<decltype(leaf)>) {
        const NodeId src =
            detail::operand_node(rec.session(), leaf.tensor(), detail::Access::ref(leaf));
        rec.output(src, leaf.tensor(), i++, n);
      }
    };
    detail::for_each_leaf(out, visit);
  }

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
