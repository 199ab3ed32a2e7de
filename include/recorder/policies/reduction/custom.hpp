#pragma once
/// `reduce::Custom<F>` and `reduce::custom(f)`: a user callable `(acc, x) -> acc` folds the recorded values (no libtorch).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace recorder::reduce {

/// Folds the values with a user callable, as torchfunc's `reduction`: the first state is a copy
/// of the first value, then `acc = f(acc, x)` for every further value. `f` must be callable on
/// a `const F` as `(T acc, const T& x)` and return the new `T`. For tensors, `f` runs with
/// autograd off on detached values, and a result that aliases `x` is copied. Not mergeable
/// (nothing says `f` is associative). Make one with `reduce::custom(f)`.
template <class F>
struct Custom : CountedFold {
  static constexpr std::string_view name = "custom";

  F f;  ///< `(T acc, const T& x) -> T`

  /// A copy of the first value, once `f`'s signature is checked.
  template <has_elementwise_ops T>
  CountedState<T> init(const T& first) const {
    check_signature<T>();
    return {value_ops<T>::copy(first), 1};
  }

  template <has_elementwise_ops T>
  void update(CountedState<T>& s, const T& x) const {
    check_signature<T>();
    if constexpr (std::is_invocable_r_v<T, const F&, T, const T&>) {
      value_ops<T>::apply(f, s.value, x);
      ++s.count;
    }
  }

  /// A folded number is its own summary statistic (`CountedFold::statistic`), named "custom".
  std::string statistic_name() const { return "custom"; }

 private:
  template <class T>
  static constexpr void check_signature() {
    if constexpr (!std::is_invocable_v<const F&, T, const T&> &&
                  std::is_invocable_v<F&, T, const T&>) {
      static_assert(std::is_invocable_v<const F&, T, const T&>,
                    "recorder: reduce::custom(f): f is callable only when not const (a `mutable` "
                    "lambda?); reductions are values and call f as const: drop `mutable`, e.g. "
                    "reduce::custom([](T acc, const T& x) { return acc + x; })");
    } else if constexpr (!std::is_invocable_v<const F&, T, const T&>) {
      static_assert(
          std::is_invocable_v<const F&, T, const T&>,
          "recorder: reduce::custom(f): f must be callable as f(T acc, const T& x), T being "
          "the recorded value type, and return the new acc, e.g. "
          "reduce::custom([](at::Tensor acc, const at::Tensor& x) { return at::maximum(acc, x); "
          "})");
    } else {
      static_assert(
          std::is_convertible_v<std::invoke_result_t<const F&, T, const T&>, T>,
          "recorder: reduce::custom(f): f(acc, x) must return the new acc, a value of the "
          "recorded type T (it returns something else, or nothing)");
    }
  }
};

/// A `Custom` reduction folding with `f`: `reduce::custom([](double acc, const double& x) {
/// return std::max(acc, x); })` is a running maximum.
template <class F>
Custom<std::decay_t<F>> custom(F&& f) {
  return Custom<std::decay_t<F>>{{}, std::forward<F>(f)};
}

}  // namespace recorder::reduce
