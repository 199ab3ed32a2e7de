#pragma once
/// `reduce::Moments`: running mean and variance (Welford), in double precision, mergeable (no libtorch).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

namespace recorder::reduce {

/// The result of `Moments`: elementwise mean and variance, in `W` (`double`, or a double tensor).
template <class W>
struct MomentsResult {
  W mean;
  W variance;  ///< with the reduction's `correction`; NaN while `count <= correction`
  std::uint64_t count = 0;

  static constexpr auto fields() {
    return std::tuple{field("mean", &MomentsResult::mean),
                      field("variance", &MomentsResult::variance),
                      field("count", &MomentsResult::count)};
  }
};

/// The state of `Moments`: Welford's running mean and sum of squared deviations.
template <class T>
struct MomentsState {
  wide_t<T> mean;
  wide_t<T> m2;  ///< sum of squared deviations from the mean
  std::uint64_t count = 0;

  static constexpr auto fields() {
    return std::tuple{field("mean", &MomentsState::mean), field("m2", &MomentsState::m2),
                      field("count", &MomentsState::count)};
  }
};

/// Running elementwise mean and variance by Welford's update, accumulated in `wide_type`
/// (double) whatever `T` is, so thousands of float32 passes lose no precision (the naive
/// sum-of-squares formula does, with a large mean). Every value needs the same shape.
/// Mergeable by Chan et al.'s formula: states from several processes or shards combine into
/// the moments of all their values.
///
/// Example: `reduce::Moments{.correction = 0}` gives the population variance.
struct Moments {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "moments";
  static constexpr bool constant_memory = true;

  std::int64_t correction =
      1;  ///< as `torch.var`: 1 is Bessel's correction, 0 the population variance

  static constexpr auto fields() { return std::tuple{field("correction", &Moments::correction)}; }

  using values_part = moment_part;  ///< what it needs of `value_ops<T>`

  template <has_moment_ops T>
  using state = MomentsState<T>;

  template <has_moment_ops T>
  MomentsState<T> init(const T& first) const {
    MomentsState<T> s{value_ops<T>::widen(first), {}, 1};
    s.m2 = value_ops<T>::zero_like(s.mean);
    return s;
  }

  template <has_moment_ops T>
  void update(MomentsState<T>& s, const T& x) const {
    value_ops<T>::welford_update(s.mean, s.m2, x, s.count + 1);
    ++s.count;
  }

  /// The mean (a copy), the variance with `correction`, and the count.
  template <has_moment_ops T>
  MomentsResult<wide_t<T>> result(const MomentsState<T>& s) const {
    return {value_ops<wide_t<T>>::copy(s.mean), value_ops<T>::variance(s.m2, s.count, correction),
            s.count};
  }

  template <has_moment_ops T>
  std::uint64_t count(const MomentsState<T>& s) const {
    return s.count;
  }

  template <has_moment_ops T>
  void merge(MomentsState<T>& s, const MomentsState<T>& other) const {
    value_ops<T>::welford_merge(s.mean, s.m2, s.count, other.mean, other.m2, other.count);
    s.count += other.count;
  }

  /// The summary statistic (a timing's one number): the mean.
  std::string statistic_name() const { return "mean"; }
  template <class W>
  double statistic(const MomentsResult<W>& r) const {
    return static_cast<double>(r.mean);
  }
};

}  // namespace recorder::reduce
