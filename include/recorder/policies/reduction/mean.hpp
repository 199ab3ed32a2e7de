#pragma once
/// `reduce::Mean`: the elementwise mean of every recorded value (no libtorch).

#include <recorder/policies/reduction/sum.hpp>
#include <recorder/policies/reduction/value_ops.hpp>

#include <string>
#include <string_view>

namespace recorder::reduce {

/// The elementwise mean of every value: `Sum`'s running sum in `T` (its state, steps and
/// merge), divided by the count when the result is asked for (scio's and torchfunc's `mean`).
/// Every value needs the same shape. For many passes over float32 values, `Moments` (double
/// accumulators) gives a steadier mean. Mergeable: sums and counts add.
struct Mean : Sum {
  static constexpr std::string_view name = "mean";

  /// `sum / count`, a new value (integers truncate; integer tensors give floating ones).
  template <has_elementwise_ops T>
  T result(const CountedState<T>& s) const {
    return value_ops<T>::divide(s.value, static_cast<double>(s.count));
  }

  std::string statistic_name() const { return "mean"; }
};

}  // namespace recorder::reduce
