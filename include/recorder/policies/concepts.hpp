#pragma once
/// Concepts for recording policies: what a trace captures, chosen at compile time (no libtorch).
///
/// ## recording_policy
/// **Requirements**
/// - `typename P::recording_policy_tag` — opts the type in (a plain struct is not a policy by accident);
/// - `P::records_graph` — a `bool` constant: does this policy build the graph of tensors, ops
///   and module calls?
///
/// **Optional hooks** (later policies: activations, timings) are looked up with `if constexpr`,
/// so a policy without them costs nothing.
///
/// **Laws**: a policy is an empty or small value type; `records_graph == false` makes every
/// traced op compile to the plain libtorch call.
///
/// **Models shipped**: `record::Structure`, `record::Off`, and `record::All<Ps...>` (a set).
///
/// **Example**
/// ```
/// struct MyPolicy { using recording_policy_tag = void; static constexpr bool records_graph = true; };
/// static_assert(recorder::recording_policy<MyPolicy>);
/// ```

#include <concepts>
#include <type_traits>

namespace recorder {

/// Part of `recording_policy`: the type opted in with `using recording_policy_tag = void;`.
template <class P>
concept tagged_recording_policy = requires { typename P::recording_policy_tag; };

/// Part of `recording_policy`: `P::records_graph` is a compile-time bool.
template <class P>
concept declares_records_graph = requires {
  { P::records_graph } -> std::convertible_to<bool>;
  typename std::bool_constant<P::records_graph>;  // a constant expression (else: false)
};

/// A type usable in `Tracer<...>`'s and `RecorderTensor<...>`'s policy slot.
template <class P>
concept recording_policy = tagged_recording_policy<P> && declares_records_graph<P>;

}  // namespace recorder
