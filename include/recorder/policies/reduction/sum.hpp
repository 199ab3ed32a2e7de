#pragma once
/// `reduce::Sum`: the elementwise sum of every recorded value (no libtorch).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstdint>
#include <string_view>

namespace recorder::reduce {

/// The state of `Sum`: the running sum and how many values it holds.
template <class T>
struct SumState {
  T sum;
  std::uint64_t count = 0;
};

/// The elementwise sum of every value, accumulated in place in `T` (a float32 tensor sums in
/// float32; use `Moments` for a mean that must not drift). Every value needs the same shape.
/// Mergeable: sums add.
struct Sum {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "sum";
  static constexpr bool constant_memory = true;

  /// The part of `value_ops<T>` this reduction uses (`check_reduction` names it when missing).
  template <class T>
  static consteval bool check_values() {
    return check_elementwise_ops<T>();
  }

  template <has_elementwise_ops T>
  using state = SumState<T>;

  template <has_elementwise_ops T>
  SumState<T> init(const T& first) const {
    return {value_ops<T>::copy(first), 1};
  }

  template <has_elementwise_ops T>
  void update(SumState<T>& s, const T& x) const {
    value_ops<T>::add(s.sum, x);
    ++s.count;
  }

  /// A copy of the sum.
  template <has_elementwise_ops T>
  T result(const SumState<T>& s) const {
    return value_ops<T>::copy(s.sum);
  }

  template <has_elementwise_ops T>
  std::uint64_t count(const SumState<T>& s) const {
    return s.count;
  }

  template <has_elementwise_ops T>
  void merge(SumState<T>& s, const SumState<T>& other) const {
    value_ops<T>::add(s.sum, other.sum);
    s.count += other.count;
  }
};

}  // namespace recorder::reduce
