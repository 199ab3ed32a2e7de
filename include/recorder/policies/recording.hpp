#pragma once
/// Recording policies: what a trace captures (no libtorch).
///
/// | policy              | records                                    | use it when                         |
/// |---------------------|--------------------------------------------|-------------------------------------|
/// | `record::Structure` | tensors, ops, module calls, shapes, params | drawing, summaries, analysis        |
/// | `record::Off`       | nothing: ops compile to plain libtorch     | shipping traced-ready code at 0 cost|
/// | `record::AtenOps`   | the graph, plus the aten ops run inside each leaf module (an `at::RecordFunction` observer) | drawing leaf modules' insides (`hide_module_functions = false`) |
/// | `record::ForwardPre<R>`, `ForwardInput<R>`, `ForwardOutput<R>`, `BackwardOutput<R>`, `BackwardInput<R>` | the graph, plus chosen layers' inputs, outputs or gradients, reduced by `R` over many forwards (`capture/activations.hpp`) | torchfunc / scio / torchlens-style recording |
/// | `record::All<Ps...>`| the union of its members                   | combining policies                  |

#include <recorder/policies/concepts.hpp>

#include <boost/hana/any_of.hpp>
#include <boost/hana/bool.hpp>
#include <boost/hana/contains.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

#include <tuple>
#include <type_traits>
#include <utility>

namespace recorder::record {

/// Records the graph's structure: tensors with shapes and dtypes, function ops, module calls,
/// parameters (named apart from `recorder::Graph`, the container it fills).
struct Structure {
  using recording_policy_tag = void;
  static constexpr bool records_graph = true;
};

/// Records nothing: a `RecorderTensor<Off>` is a plain `at::Tensor` in a different coat.
struct Off {
  using recording_policy_tag = void;
  static constexpr bool records_graph = false;
};

/// Records the graph and, inside every leaf module call (`Linear`, `MultiheadAttention`, ...),
/// the aten ops its libtorch forward dispatches (`linear`, `_native_multi_head_attention`),
/// through an `at::RecordFunction` observer active only during leaf forwards. Costs a callback
/// per dispatched op inside leaves; other ops are unaffected.
struct AtenOps {
  using recording_policy_tag = void;
  static constexpr bool records_graph = true;
  static constexpr bool observes_ops = true;
};

/// A compile-time set of policies; it records what any member records. It holds one value
/// of each member, so stateful members (activation recorders) keep their state.
template <recording_policy... Ps>
struct All {
  using recording_policy_tag = void;
  static constexpr auto members = boost::hana::tuple_t<Ps...>;
  static constexpr bool records_graph = boost::hana::any_of(
      members, [](auto t) { return boost::hana::bool_c<decltype(t)::type::records_graph>; });

  static constexpr bool observes_ops = boost::hana::any_of(members, [](auto t) {
    using Q = typename decltype(t)::type;
    if constexpr (requires { Q::observes_ops; })
      return boost::hana::bool_c<Q::observes_ops>;
    else
      return boost::hana::false_c;
  });

  static constexpr bool captures_calls = boost::hana::any_of(members, [](auto t) {
    using Q = typename decltype(t)::type;
    if constexpr (requires { Q::captures_calls; })
      return boost::hana::bool_c<Q::captures_calls>;
    else
      return boost::hana::false_c;
  });

  /// True when `Q` is one of the members.
  template <class Q>
  static constexpr bool has =
      decltype(boost::hana::contains(members, boost::hana::type_c<Q>))::value;

  All() = default;
  explicit All(Ps... ps) requires(sizeof...(Ps) > 0) : values(std::move(ps)...) {}

  /// The member of type `Q`.
  template <class Q>
  requires has<Q> Q& get() noexcept { return std::get<Q>(values); }
  template <class Q>
  requires has<Q>
  const Q& get() const noexcept { return std::get<Q>(values); }

  std::tuple<Ps...> values{};
};

namespace detail {
template <class P>
struct is_all : std::false_type {};
template <class... Ps>
struct is_all<All<Ps...>> : std::true_type {};

template <class... Ps>
struct combine {
  using type = All<Ps...>;
};
template <class P>
struct combine<P> {
  using type = P;
};
}  // namespace detail

/// True when policy `P` records the aten ops inside leaf modules.
template <class P>
inline constexpr bool observes_ops = [] {
  if constexpr (requires { P::observes_ops; })
    return static_cast<bool>(P::observes_ops);
  else
    return false;
}();

/// True when policy `P` watches module calls (activations, gradients): the adapters then call
/// the session's `CallHooks`.
template <class P>
inline constexpr bool captures_calls = [] {
  if constexpr (requires { P::captures_calls; })
    return static_cast<bool>(P::captures_calls);
  else
    return false;
}();

/// Calls `f(member)` for each member of policy `p` (an `All`), or `f(p)` for a single policy.
template <class P, class F>
void for_each_member(P& p, F&& f) {
  if constexpr (detail::is_all<std::remove_const_t<P>>::value) {
    std::apply([&](auto&... m) { (f(m), ...); }, p.values);
  } else {
    f(p);
  }
}

/// The policy a `Tracer<Ps...>` runs with: the single policy itself, or `All<Ps...>`.
template <recording_policy... Ps>
using combine_t = typename detail::combine<Ps...>::type;

}  // namespace recorder::record
