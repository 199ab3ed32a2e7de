#pragma once
/// Helpers over traced arguments: their policy, their plain view, their nodes (ATen only).

#include <recorder/tensor/nested.hpp>
#include <recorder/tensor/recorder_tensor.hpp>
#include <recorder/tensor/session.hpp>

#include <ATen/core/Tensor.h>

#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {

namespace detail {

template <class T>
struct policy_of_arg {
  using type = void;
};
template <class P>
struct policy_of_arg<RecorderTensor<P>> {
  using type = P;
};
template <class P, class Alloc>
struct policy_of_arg<std::vector<RecorderTensor<P>, Alloc>> {
  using type = P;
};
template <class... T>
struct policy_of_arg<std::tuple<T...>> {
  template <class... Ps>
  struct first_non_void {
    using type = void;
  };
  template <class Q, class... Ps>
  struct first_non_void<Q, Ps...> {
    using type = std::conditional_t<std::is_void_v<Q>, typename first_non_void<Ps...>::type, Q>;
  };
  using type =
      typename first_non_void<typename policy_of_arg<std::remove_cvref_t<T>>::type...>::type;
};
template <class A, class B>
struct policy_of_arg<std::pair<A, B>> : policy_of_arg<std::tuple<A, B>> {};

/// The recording policy of the first traced argument, or `void` when all are plain.
template <class... A>
struct first_policy {
  using type = void;
};
template <class A, class... Rest>
struct first_policy<A, Rest...> {
  using here = typename policy_of_arg<std::remove_cvref_t<A>>::type;
  using type = std::conditional_t<std::is_void_v<here>, typename first_policy<Rest...>::type, here>;
};
template <class... A>
using first_policy_t = typename first_policy<A...>::type;

template <class T>
inline constexpr bool holds_recorder_tensor = is_recorder_tensor_v<T>;
template <class... T>
inline constexpr bool holds_recorder_tensor<std::tuple<T...>> = (holds_recorder_tensor<T> || ...);
template <class A, class B>
inline constexpr bool holds_recorder_tensor<std::pair<A, B>> =
    holds_recorder_tensor<A> || holds_recorder_tensor<B>;

/// An argument as libtorch sees it: `RecorderTensor` -> `const at::Tensor&`, vectors of them
/// -> `std::vector<at::Tensor>`, tuples and pairs holding them -> the same with `at::Tensor`s
/// (LSTMCell's `(h, c)` state), anything else unchanged.
template <class A>
decltype(auto) to_plain(A&& a) {
  using D = std::remove_cvref_t<A>;
  if constexpr (is_recorder_tensor_v<D>) {
    return (a.tensor());
  } else if constexpr ((is_std_tuple<D>::value || is_std_pair<D>::value) &&
                       holds_recorder_tensor<D>) {
    auto plain = [](const auto& leaf) {
      if constexpr (is_recorder_tensor_v<decltype(leaf)>)
        return at::Tensor(leaf.tensor());
      else
        return leaf;
    };
    return map_leaves(a, plain);
  } else if constexpr (is_std_vector<D>::value) {
    if constexpr (is_recorder_tensor_v<typename D::value_type>) {
      std::vector<at::Tensor> out;
      out.reserve(a.size());
      for (const auto& r : a) out.push_back(r.tensor());
      return out;
    } else {
      return std::forward<A>(a);
    }
  } else {
    return std::forward<A>(a);
  }
}

template <class P>
void collect_tree(Session& s, const auto& arg, std::vector<NodeId>& out) {
  auto visit = [&](const auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (std::is_same_v<L, RecorderTensor<P>>)
      out.push_back(operand_node(s, leaf.tensor(), Access::ref(leaf)));
    else if constexpr (std::is_same_v<L, at::Tensor>)
      out.push_back(operand_node(s, leaf, NodeRef{}));
  };
  for_each_leaf(arg, visit);
}

/// Sets `nodes` to the nodes of the traced tensors in `out` recorded in `s`.
template <class P>
void output_nodes(const Session& s, const auto& out, std::vector<NodeId>& nodes) {
  nodes.clear();
  auto visit = [&](const auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (std::is_same_v<L, RecorderTensor<P>>)
      if (s.owns(Access::ref(leaf))) nodes.push_back(leaf.node());
  };
  for_each_leaf(out, visit);
}

/// Wraps every tensor of a plain result as an unrecorded `RecorderTensor<P>`.
template <class P, class Out>
auto wrap_unrecorded(Out&& out) {
  auto one = [](auto&& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (std::is_same_v<L, at::Tensor>)
      return RecorderTensor<P>(adopt, std::forward<decltype(leaf)>(leaf), ref_t<P>{});
    else
      return std::forward<decltype(leaf)>(leaf);
  };
  return map_leaves(std::forward<Out>(out), one);
}

}  // namespace detail

}  // namespace recorder
