#pragma once
/// Generic traversal of nested tensor structures (tuples, pairs, vectors) with Boost.Hana.
///
/// libtorch modules return `Tensor`, `tuple<Tensor, Tensor>` (MultiheadAttention) or
/// `tuple<Tensor, tuple<Tensor, Tensor>>` (LSTM); these helpers visit and rebuild such trees
/// left to right, so nodes are recorded in a deterministic order.

#include <boost/hana/ext/std/tuple.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/unpack.hpp>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder::detail {

template <class T>
struct is_std_tuple : std::false_type {};
template <class... T>
struct is_std_tuple<std::tuple<T...>> : std::true_type {};

template <class T>
struct is_std_pair : std::false_type {};
template <class A, class B>
struct is_std_pair<std::pair<A, B>> : std::true_type {};

template <class T>
struct is_std_vector : std::false_type {};
template <class T, class A>
struct is_std_vector<std::vector<T, A>> : std::true_type {};

/// Calls `visit(leaf)` for every leaf of `x` (a value, or tuples/pairs/vectors of them), in order.
template <class X, class Visit>
void for_each_leaf(X&& x, Visit& visit) {
  using D = std::remove_cvref_t<X>;
  if constexpr (is_std_tuple<D>::value) {
    boost::hana::for_each(x, [&](auto&& e) { for_each_leaf(std::forward<decltype(e)>(e), visit); });
  } else if constexpr (is_std_pair<D>::value) {
    for_each_leaf(x.first, visit);
    for_each_leaf(x.second, visit);
  } else if constexpr (is_std_vector<D>::value) {
    for (auto&& e : x) for_each_leaf(e, visit);
  } else {
    visit(std::forward<X>(x));
  }
}

/// Rebuilds `x` with every leaf replaced by `map(leaf)`, evaluated left to right.
template <class X, class Map>
auto map_leaves(X&& x, Map& map) {
  using D = std::remove_cvref_t<X>;
  if constexpr (is_std_tuple<D>::value) {
    return boost::hana::unpack(std::forward<X>(x), [&](auto&&... e) {
      // A braced list evaluates its elements in order (unlike function arguments).
      return std::tuple<decltype(map_leaves(std::forward<decltype(e)>(e), map))...>{
          map_leaves(std::forward<decltype(e)>(e), map)...};
    });
  } else if constexpr (is_std_pair<D>::value) {
    auto first = map_leaves(std::forward<X>(x).first, map);
    auto second = map_leaves(std::forward<X>(x).second, map);
    return std::pair<decltype(first), decltype(second)>{std::move(first), std::move(second)};
  } else if constexpr (is_std_vector<D>::value) {
    using E = decltype(map_leaves(*x.begin(), map));
    std::vector<E> out;
    out.reserve(x.size());
    for (auto&& e : x) out.push_back(map_leaves(std::forward<decltype(e)>(e), map));
    return out;
  } else {
    return map(std::forward<X>(x));
  }
}

}  // namespace recorder::detail
