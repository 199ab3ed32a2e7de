#pragma once
/// `recorder::Module<H>`: holds a libtorch module; called with RecorderTensors it records the call.

#include <recorder/adapters/module_call.hpp>
#include <recorder/adapters/module_core.hpp>
#include <recorder/observe/observer.hpp>
#include <recorder/tensor/nested.hpp>
#include <recorder/tensor/unwrap.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {

/// Part of `traceable_module`: `h->forward(args...)` accepts RecorderTensors as they are — a
/// composite module whose forward is templated on its tensor type; its ops are traced inside.
template <class H, class... A>
concept composite_module = requires(H& h, A&&... a) {
  h->forward(std::forward<A>(a)...);
};

/// Part of `traceable_module`: `h->forward(args...)` accepts the arguments as `torch::Tensor` —
/// a leaf module (`Linear`, `Conv2d`, `LSTM`, ...) recorded as one node.
template <class H, class... A>
concept leaf_module = requires(H& h, A&&... a) {
  h->forward(detail::to_plain(std::forward<A>(a))...);
};

/// Part of `traceable_module`: a `torch::nn::Sequential`, walked child by child.
template <class H>
concept sequential_module = std::same_as<std::remove_cvref_t<H>, torch::nn::Sequential>;

/// A module holder `recorder::Module<H>` can trace when called with `A...`.
template <class H, class... A>
concept traceable_module =
    sequential_module<H> || composite_module<H, A...> || leaf_module<H, A...>;

namespace detail {

/// The nodes of the traced tensors among `args`, by TensorImpl: where the observer starts.
template <class P, class... A>
TensorNodes known_tensors(const Session& s, const A&... args) {
  TensorNodes known;
  auto visit = [&](const auto& leaf) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(leaf)>, RecorderTensor<P>>)
      if (s.owns(Access::ref(leaf))) known.set(leaf.tensor(), leaf.node());
  };
  (for_each_leaf(args, visit), ...);
  return known;
}

/// The tensors among `args` (traced or plain, nested in tuples and vectors), in order.
template <class... A>
std::vector<at::Tensor> tensors_of(const A&... args) {
  std::vector<at::Tensor> out;
  auto visit = [&out](const auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (is_recorder_tensor_v<L>)
      out.push_back(leaf.tensor());
    else if constexpr (std::is_same_v<L, at::Tensor>)
      out.push_back(leaf);
  };
  (for_each_leaf(args, visit), ...);
  return out;
}

/// Tells the capture policies that `call` opened with `args` (inside the `try` around the
/// forward). Compiles to nothing for policies that capture no calls.
template <class P, class... A>
void hooks_enter(ModuleCall& call, const A&... args) {
  if constexpr (record::captures_calls<P>) {
    if (call.hooked()) call.enter(tensors_of(args...));
  }
}

/// `call` returned `out`, recorded as `nodes`: records them and tells the capture policies,
/// putting the tensors they replaced (post-processing) into `out`; the replacements keep the
/// recorded nodes.
template <class P, class Out>
void finish_call(ModuleCall& call, std::span<const NodeId> nodes, Out& out) {
  if constexpr (record::captures_calls<P>) {
    if (call.hooked()) {
      std::vector<at::Tensor> outs = tensors_of(out);
      call.finish(nodes, outs);
      std::size_t i = 0;
      auto write_back = [&](auto& leaf) {
        using L = std::remove_cvref_t<decltype(leaf)>;
        if constexpr (is_recorder_tensor_v<L>) {
          at::Tensor& t = Access::tensor(leaf);
          if (!t.is_same(outs[i])) t = outs[i];
          ++i;
        } else if constexpr (std::is_same_v<L, at::Tensor>) {
          if (!leaf.is_same(outs[i])) leaf = outs[i];
          ++i;
        }
      };
      for_each_leaf(out, write_back);
      return;
    }
  }
  call.finish(nodes);
}

/// Records one call of leaf module `m`: `run()` does the libtorch forward on plain tensors.
/// With a policy that observes ops, the aten ops it dispatches are recorded inside the call,
/// and an output an op produced is that op's tensor node. The call closes before its outputs
/// are recorded: they belong to the caller.
template <class P, class Run, class... A>
auto call_leaf(Session& s, const torch::nn::Module& m, Run run, const A&... args) {
  const ModuleId module = module_id(s, m, /*leaf=*/true);
  s.call_nodes.clear();
  (collect_tree<P>(s, args, s.call_nodes), ...);
  ModuleCall call(s, module, s.call_nodes, /*leaf=*/true);
  std::optional<LeafObserver> observer;  // ends before the call closes
  if constexpr (record::observes_ops<P>) {
    static_assert(record::observes_ops<P> && observer_usable,
                  "recorder::record::AtenOps needs NDEBUG: libtorch is built with NDEBUG, and "
                  "at::RecordFunction has a debug-only member, so a translation unit without "
                  "NDEBUG cannot read an op's inputs (libtorch 1.13). Build with -DNDEBUG "
                  "(e.g. CMAKE_BUILD_TYPE=Release), or record with record::Structure.");
    observer.emplace(s, call.id(), known_tensors<P>(s, args...), submodules_of(s, m));
  }
  auto out = [&] {
    try {
      hooks_enter<P>(call, args...);
      return run();
    } catch (...) {
      // Where it failed is the op the observer saw throw, in the innermost call open then (an
      // inferred submodule call, if any); the inferred calls then close failed.
      try {
        call.fail(observer ? std::string_view(observer->failed_op()) : std::string_view{},
                  tensors_of(args...));
      } catch (...) {
        if (observer) observer->abandon();
        throw;
      }
    }
  }();
  if (observer) observer->finish();
  call.close();
  std::vector<NodeId>& outs = s.call_nodes;  // the outputs' nodes, as they are recorded
  outs.clear();
  auto one = [&](auto&& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (std::is_same_v<L, at::Tensor>) {
      NodeId n = observer ? observer->produced(leaf) : NodeId{};
      if (!n.valid()) n = record_output(s, call.id(), leaf);
      outs.push_back(n);
      return RecorderTensor<P>(adopt, std::forward<decltype(leaf)>(leaf), s.ref(n));
    } else {
      return std::forward<decltype(leaf)>(leaf);
    }
  };
  auto wrapped = map_leaves(std::move(out), one);
  finish_call<P>(call, outs, wrapped);
  return wrapped;
}

/// Records a composite call of module `m`: `run()` is its forward on the traced arguments, so
/// the ops and module calls inside are recorded inside the call.
template <class P, class Run, class... A>
auto call_composite(Session& s, const torch::nn::Module& m, Run run, const A&... args) {
  const ModuleId module = module_id(s, m, /*leaf=*/false);
  s.call_nodes.clear();
  (collect_tree<P>(s, args, s.call_nodes), ...);
  ModuleCall call(s, module, s.call_nodes, /*leaf=*/false);
  auto out = [&] {
    try {
      hooks_enter<P>(call, args...);
      return run();
    } catch (...) {
      call.fail();
    }
  }();
  output_nodes<P>(s, out, s.call_nodes);
  finish_call<P>(call, s.call_nodes, out);
  return out;
}

/// Records a `torch::nn::Sequential` as a composite call whose children are leaf calls
/// (nested Sequentials are walked too).
template <class P>
RecorderTensor<P> walk_sequential(Session& s, torch::nn::SequentialImpl& seq, RecorderTensor<P> x) {
  return call_composite<P>(
      s, seq,
      [&] {
        RecorderTensor<P> y = x;
        for (auto& any : seq) {
          torch::nn::Module& child = *any.ptr();
          if (auto* nested = dynamic_cast<torch::nn::SequentialImpl*>(&child))
            y = walk_sequential<P>(s, *nested, std::move(y));
          else
            y = call_leaf<P>(
                s, child, [&] { return any.forward(y.tensor()); }, y);
        }
        return y;
      },
      x);
}

/// Calls holder `h` with traced arguments, recording a module call when a session is active.
template <class P, class H, class... A>
auto call_module(H& h, A&&... a) {
  if constexpr (sequential_module<H>) {
    static_assert(
        sizeof...(A) == 1,
        "recorder: a torch::nn::Sequential takes one tensor (its forward chains one value "
        "through its children). For several inputs, write a module whose forward takes "
        "them (`template <recorder::tensor_like T> T forward(T a, T b)`) and calls the "
        "layers, kept in a recorder::Sequential<H> or recorder::ModuleList<H>");
    if constexpr (P::records_graph) {
      if (Session* s = current_session())
        return walk_sequential<P>(*s, *h, RecorderTensor<P>(std::forward<A>(a)...));
    }
    return wrap_unrecorded<P>(h->forward(to_plain(std::forward<A>(a))...));
  } else if constexpr (composite_module<H, A...>) {
    using Out = decltype(h->forward(std::forward<A>(a)...));
    if constexpr (P::records_graph) {
      if (Session* s = current_session())
        return call_composite<P>(
            *s, *h, [&]() -> Out { return h->forward(std::forward<A>(a)...); }, a...);
    }
    return Out(h->forward(std::forward<A>(a)...));
  } else {
    if constexpr (P::records_graph) {
      if (Session* s = current_session())
        return call_leaf<P>(
            *s, *h, [&] { return h->forward(to_plain(a)...); }, a...);
    }
    return wrap_unrecorded<P>(h->forward(to_plain(std::forward<A>(a))...));
  }
}

}  // namespace detail

/// Holds a libtorch module holder (`torch::nn::Linear`, a `TORCH_MODULE` of your own, ...).
///
/// Called with `torch::Tensor`s it is the module: `h->forward(args...)`, nothing else.
/// Called with `RecorderTensor`s it records one module call under the current one, named as
/// the parent registered it, and then either
/// - runs a *composite* forward (templated on its tensor type) on the RecorderTensors, so its
///   inner ops are recorded inside the call, or
/// - runs a *leaf* forward (`Linear`, `Conv2d`, `LSTM`, `MultiheadAttention`, ...) on the plain
///   tensors and wraps its outputs, nested tuples included, or
/// - walks a `torch::nn::Sequential` child by child.
///
/// ```
/// struct NetImpl : torch::nn::Module {
///   recorder::Module<torch::nn::Linear> fc{register_module("fc", torch::nn::Linear(4, 2))};
///   template <recorder::tensor_like T> T forward(T x) { return relu(fc(x)); }
/// };
/// ```
template <class H>
class Module {
 public:
  using holder_type = H;

  Module(std::nullptr_t) : holder_(nullptr) {}      // NOLINT: an empty optional submodule
  Module(H holder) : holder_(std::move(holder)) {}  // NOLINT: from register_module(...)
  /// From `register_module(name, holder)`, which returns the module's `shared_ptr`.
  template <class Impl>
  requires std::constructible_from<H, std::shared_ptr<Impl>> Module(std::shared_ptr<Impl> impl)
      : holder_(std::move(impl)) {}  // NOLINT: implicit by design

  H& holder() noexcept { return holder_; }
  const H& holder() const noexcept { return holder_; }
  auto* operator->() const { return holder_.get(); }
  auto& operator*() const { return *holder_; }
  /// False for an empty holder (`Module<torch::nn::Sequential> downsample{nullptr}`).
  explicit operator bool() const noexcept { return !holder_.is_empty(); }

  template <class... A>
  decltype(auto) operator()(A&&... a) {
    using P = detail::first_policy_t<A...>;
    if constexpr (std::is_void_v<P>) {
      return holder_->forward(std::forward<A>(a)...);
    } else if constexpr (!traceable_module<H, A...>) {
      static_assert(traceable_module<H, A...>,
                    "recorder::Module<H>: H fits no adapter. It must satisfy "
                    "recorder::composite_module (a forward templated on its tensor type: "
                    "`template <recorder::tensor_like T> T forward(T x)`) or "
                    "recorder::leaf_module (a forward taking torch::Tensor, like "
                    "torch::nn::Linear), or be a torch::nn::Sequential.");
    } else {
      return detail::call_module<P>(holder_, std::forward<A>(a)...);
    }
  }

 private:
  H holder_;
};

}  // namespace recorder
