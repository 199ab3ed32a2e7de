#pragma once
/// Concepts for recording policies: what a trace captures, chosen at compile time (no libtorch).
///
/// ## recording_policy
/// **Requirements** (each a named part, so a failure names what is missing)
/// - `typename P::recording_policy_tag` — opts the type in (a plain struct is not a policy by
///   accident) (`tagged_recording_policy`);
/// - `P::records_graph` — a `bool` constant: does this policy build the graph of tensors, ops
///   and module calls? (`declares_records_graph`)
///
/// **Optional hooks**, looked up with `if constexpr` (`policies/recording.hpp`), so a policy
/// without them costs nothing:
/// - `static constexpr bool observes_ops` (default `false`): record the aten ops each leaf
///   module's libtorch forward dispatches, through an `at::RecordFunction` observer
///   (`record::observes_ops<P>`; needs `NDEBUG`, as libtorch is built with it);
/// - `static constexpr bool captures_calls` (default `false`): the policy watches module calls
///   (inputs, outputs, gradients) and has a member `call_hooks()` returning its
///   `detail::CallHooks&`, which the adapters call around each module call
///   (`record::captures_calls<P>`).
///
/// **Laws**: a policy is an empty or small value type (a capture policy shares its records
/// between copies); `records_graph == false` makes every traced op compile to the plain
/// libtorch call.
///
/// **Models shipped**: `record::Structure` (the graph), `record::Off` (nothing),
/// `record::AtenOps` (the graph and the aten ops inside leaf modules; `observes_ops`), the
/// capture policies `record::ForwardPre<R>`, `ForwardInput<R>`, `ForwardOutput<R>`,
/// `BackwardOutput<R>` and `BackwardInput<R>` (`record::Capture<W, R>`, the graph and chosen
/// layers' tensors reduced by `R`; `captures_calls`, in `capture/activations.hpp`), the same
/// with the capture point chosen at run time (`record::Activations<R>`), and
/// `record::All<Ps...>` (a set: each hook is the `or` of its members').
///
/// **Example**
/// ```
/// struct MyPolicy { using recording_policy_tag = void; static constexpr bool records_graph = true; };
/// static_assert(recorder::check_recording_policy<MyPolicy>());
/// ```

#include <concepts>
#include <type_traits>

namespace recorder {

/// Part of `recording_policy`: the type opted in with `using recording_policy_tag = void;`.
template <class P>
concept tagged_recording_policy = requires {
  typename P::recording_policy_tag;
};

/// Part of `recording_policy`: `P::records_graph` is a compile-time bool.
template <class P>
concept declares_records_graph = requires {
  { P::records_graph } -> std::convertible_to<bool>;
  typename std::bool_constant<P::records_graph>;  // a constant expression (else: false)
};

/// A type usable in `Tracer<...>`'s and `RecorderTensor<...>`'s policy slot.
template <class P>
concept recording_policy = tagged_recording_policy<P> && declares_records_graph<P>;

/// `true`, with a `static_assert` per missing part of `recording_policy<P>` otherwise, saying
/// what to add. `Tracer` and `RecorderTensor` call it on their policies:
/// `static_assert(recorder::check_recording_policy<MyPolicy>());`
template <class P>
consteval bool check_recording_policy() {
  static_assert(tagged_recording_policy<P>,
                "recorder: not a recording policy: add `using recording_policy_tag = void;` to it "
                "(or use recorder::record::Structure, Off, AtenOps, a capture policy or All<...>)");
  static_assert(declares_records_graph<P>,
                "recorder: a recording policy needs `static constexpr bool records_graph = ...;` "
                "(does it build the graph of tensors, ops and module calls?)");
  return recording_policy<P>;
}

}  // namespace recorder
