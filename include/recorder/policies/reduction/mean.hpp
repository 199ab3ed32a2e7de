#pragma once
/// `reduce::Mean`: the elementwise mean of every recorded value (no libtorch).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstdint>
#include <string_view>

namespace recorder::reduce {

/// The state of `Mean`: the running sum and how many values it holds.
template <class T>
struct MeanState {
  T sum;
  std::uint64_t count = 0;
};

/// The elementwise mean of every value: a running sum in `T`, divided by the count when the
/// result is asked for (scio's and torchfunc's `mean`). Every value needs the same shape. For
/// many passes over float32 values, `Moments` (double accumulators) gives a steadier mean.
/// Mergeable: sums and counts add.
struct Mean {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "mean";
  static constexpr bool constant_memory = true;

  /// The part of `value_ops<T>` this reduction uses (`check_reduction` names it when missing).
  template <class T>
  static consteval bool check_values() {
    return check_elementwise_ops<T>();
  }

  template <has_elementwise_ops T>
  using state = MeanState<T>;

  template <has_elementwise_ops T>
  MeanState<T> init(const T& first) const {
    return {value_ops<T>::copy(first), 1};
  }

  template <has_elementwise_ops T>
  void update(MeanState<T>& s, const T& x) const {
    value_ops<T>::add(s.sum, x);
    ++s.count;
  }

  /// `sum / count`, a new value (integers truncate; integer tensors give floating ones).
  template <has_elementwise_ops T>
  T result(const MeanState<T>& s) const {
    return value_ops<T>::divide(s.sum, static_cast<double>(s.count));
  }

  template <has_elementwise_ops T>
  std::uint64_t count(const MeanState<T>& s) const {
    return s.count;
  }

  template <has_elementwise_ops T>
  void merge(MeanState<T>& s, const MeanState<T>& other) const {
    value_ops<T>::add(s.sum, other.sum);
    s.count += other.count;
  }
};

}  // namespace recorder::reduce
