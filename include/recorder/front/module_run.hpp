#pragma once
/// The front end of module holders: a templated model or a plain C++ module run on
/// RecorderTensors inside a recording (`detail::ModuleFrontEnd<P>::run`), what `Tracer::run`
/// calls for a `torch::nn::Module` holder. The other front ends plug in by `front_end.hpp`.

#include <recorder/adapters/module.hpp>
#include <recorder/error.hpp>
#include <recorder/front/recording.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/policies/recording.hpp>
#include <recorder/tensor/nested.hpp>
#include <recorder/tensor/recorder_tensor.hpp>
#include <recorder/tensor/session.hpp>

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/nn/module.h>

#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder::detail {

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
    facts.param_bytes += static_cast<std::uint64_t>(p.numel() * p.element_size());
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
    facts.param_bytes = s.tree.param_bytes;
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

/// The holder inside `h`: `h.holder()` for a `recorder::Module<H>`, else `h` itself.
template <class H>
auto& holder_of(H& h) {
  if constexpr (requires { h.holder(); })
    return h.holder();
  else
    return h;
}

/// What the tracer's own front end runs: a `torch::nn::Module` holder (`TORCH_MODULE`'s, a
/// `std::shared_ptr` to a module, or a `recorder::Module<H>`), whose forward is templated on its
/// tensor type or is a libtorch module's. Any other model needs a front end of its own
/// (`front/front_end.hpp`).
template <class H>
concept module_holder = requires(H& h) {
  { *holder_of(h) } -> std::convertible_to<torch::nn::Module&>;
};

/// The module `h` holds.
template <module_holder H>
torch::nn::Module& module_of_holder(H& h) {
  return *holder_of(h);
}

/// Runs module holders under recording policy `P`: the forward on RecorderTensor<P>s, module
/// calls through `recorder::Module`, outputs marked, the model's facts; a `TraceError` from the
/// forward leaves the partial trace in it.
template <class P>
struct ModuleFrontEnd {
  using tensor_type = RecorderTensor<P>;

  /// Runs `model` once on `inputs` (tensors, or tuples/vectors of them) with `options`, telling
  /// `hooks`; the module records of the last trace are lent from `records`, the graph built in
  /// `storage`.
  template <module_holder H, class... In>
  static auto run(H& model, const TraceOptions& options, std::vector<CallHooks*> hooks,
                  ModuleRecords& records, const std::shared_ptr<GraphStorage>& storage,
                  const In&... inputs) {
    Recording rec(std::move(hooks), storage);
    Session& s = rec.session();
    ModuleRecords::Lend lend(records, s);
    torch::nn::Module& root_module = module_of_holder(model);
    ModeGuard mode(root_module, options.mode);
    std::optional<torch::NoGradGuard> no_grad;
    if (options.no_grad) no_grad.emplace();

    const std::size_t n_inputs = (count_tensors(inputs) + ... + std::size_t{0});
    std::size_t next_input = 0;
    auto make_input = [&](const auto& leaf) {
      using L = std::remove_cvref_t<decltype(leaf)>;
      if constexpr (std::is_same_v<L, at::Tensor>) {
        NodeId id{};
        if constexpr (P::records_graph) id = rec.input(leaf, next_input, n_inputs);
        ++next_input;
        if constexpr (P::records_graph)
          return tensor_type(adopt, leaf, s.ref(id));
        else
          return tensor_type(adopt, leaf, {});
      } else {
        return leaf;
      }
    };
    // A braced list runs the conversions left to right: input nodes get stable ids.
    auto traced_inputs = std::tuple{map_leaves(inputs, make_input)...};

    Module<std::remove_cvref_t<decltype(holder_of(model))>> root(holder_of(model));
    using Out = decltype(std::apply([&](auto&... r) { return root(r...); }, traced_inputs));
    std::optional<Out> out;
    try {
      out.emplace(std::apply([&](auto&... r) { return root(r...); }, traced_inputs));
    } catch (TraceError& e) {
      register_containers(s, root_module);
      rec.fail(e, model_facts(root_module, s));
      throw;
    }

    using PlainOut = decltype(map_leaves(*out, plain_leaf));
    Traced<PlainOut> result;
    rec.end();
    if constexpr (P::records_graph) {
      register_containers(s, root_module);
      mark_outputs(rec, *out);
      rec.finish(result, model_facts(root_module, s));
    }
    result.output = map_leaves(*out, plain_leaf);
    return result;
  }

 private:
  template <class X>
  static std::size_t count_tensors(const X& x) {
    std::size_t n = 0;
    auto visit = [&n](const auto& leaf) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(leaf)>, at::Tensor>) ++n;
    };
    for_each_leaf(x, visit);
    return n;
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
  static void mark_outputs(Recording& rec, const Out& out) {
    std::size_t n = 0;
    auto count = [&n](const auto& leaf) {
      if constexpr (is_recorder_tensor_v<decltype(leaf)>) ++n;
    };
    for_each_leaf(out, count);
    std::size_t i = 0;
    auto visit = [&](const auto& leaf) {
      if constexpr (is_recorder_tensor_v<decltype(leaf)>) {
        const NodeId src = operand_node(rec.session(), leaf.tensor(), Access::ref(leaf));
        rec.output(src, leaf.tensor(), i++, n);
      }
    };
    for_each_leaf(out, visit);
  }
};

}  // namespace recorder::detail
