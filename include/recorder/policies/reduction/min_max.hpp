#pragma once
/// `reduce::MinMax`: the elementwise minimum and maximum of every recorded value (no libtorch).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

namespace recorder::reduce {

/// The result of `MinMax`.
template <class T>
struct MinMaxResult {
  T min;
  T max;

  static constexpr auto fields() {
    return std::tuple{field("min", &MinMaxResult::min), field("max", &MinMaxResult::max)};
  }
};

/// The state of `MinMax`: the running extremes and how many values they cover.
template <class T>
struct MinMaxState {
  T min;
  T max;
  std::uint64_t count = 0;

  static constexpr auto fields() {
    return std::tuple{field("min", &MinMaxState::min), field("max", &MinMaxState::max),
                      field("count", &MinMaxState::count)};
  }
};

/// The elementwise minimum and maximum over every value (activation ranges, e.g. to calibrate
/// quantization). NaN propagates, as in `torch.minimum`/`torch.maximum`. Every value needs the
/// same shape. Mergeable: extremes of extremes.
struct MinMax {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "min_max";
  static constexpr bool constant_memory = true;

  using values_part = elementwise_part;  ///< what it needs of `value_ops<T>`

  template <has_elementwise_ops T>
  using state = MinMaxState<T>;

  template <has_elementwise_ops T>
  MinMaxState<T> init(const T& first) const {
    return {value_ops<T>::copy(first), value_ops<T>::copy(first), 1};
  }

  /// One pass over `x` when `value_ops<T>` has `min_max_into` (tensors do).
  template <has_elementwise_ops T>
  void update(MinMaxState<T>& s, const T& x) const {
    if constexpr (has_min_max_into<T>) {
      value_ops<T>::min_max_into(s.min, s.max, x);
    } else {
      value_ops<T>::min_into(s.min, x);
      value_ops<T>::max_into(s.max, x);
    }
    ++s.count;
  }

  /// Copies of the extremes.
  template <has_elementwise_ops T>
  MinMaxResult<T> result(const MinMaxState<T>& s) const {
    return {value_ops<T>::copy(s.min), value_ops<T>::copy(s.max)};
  }

  template <has_elementwise_ops T>
  std::uint64_t count(const MinMaxState<T>& s) const {
    return s.count;
  }

  template <has_elementwise_ops T>
  void merge(MinMaxState<T>& s, const MinMaxState<T>& other) const {
    value_ops<T>::min_into(s.min, other.min);
    value_ops<T>::max_into(s.max, other.max);
    s.count += other.count;
  }

  /// The summary statistic (a timing's one number): the minimum, the best run.
  std::string statistic_name() const { return "min"; }
  template <class T>
  double statistic(const MinMaxResult<T>& r) const {
    return static_cast<double>(r.min);
  }
};

}  // namespace recorder::reduce
