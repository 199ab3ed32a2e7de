#pragma once
/// `reduce::AbsMax`: the elementwise largest magnitude of every recorded value, the "amax" of
/// symmetric quantization calibration (no libtorch).

#include <recorder/policies/reduction/min_max.hpp>
#include <recorder/policies/reduction/value_ops.hpp>

#include <string>
#include <string_view>

namespace recorder::reduce {

/// The elementwise maximum of `|x|` over every value: what a symmetric int8 scale is computed
/// from (`scale = amax / 127`). It keeps `MinMax`'s state (the running extremes; its steps,
/// merge, wire format and description come with it) and gives `max(-min, max)`, so no
/// absolute value is taken per pass. NaN propagates. Every value needs the same shape; integer
/// tensors give floating ones (as `Mean`). Mergeable: extremes of extremes.
///
/// Example: `record::ForwardOutput<reduce::AbsMax> amax({"fc1"});`
struct AbsMax : MinMax {
  static constexpr std::string_view name = "abs_max";

  /// `max(-min, max)`, elementwise: a new value.
  template <has_elementwise_ops T>
  T result(const MinMaxState<T>& s) const {
    T magnitude = value_ops<T>::divide(s.min, -1.0);
    value_ops<T>::max_into(magnitude, s.max);
    return magnitude;
  }

  /// The summary statistic (a timing's one number): the largest magnitude.
  std::string statistic_name() const { return "abs max"; }
  template <class T>
  requires std::is_arithmetic_v<T>
  double statistic(const T& amax) const { return static_cast<double>(amax); }
};

}  // namespace recorder::reduce
