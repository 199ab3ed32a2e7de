#pragma once
/// `reduce::Histogram`: counts of every recorded element in fixed equal-width bins (no libtorch).

#include <recorder/detail/text.hpp>
#include <recorder/policies/reduction/value_ops.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace recorder::reduce {

/// The result of `Histogram`: `bins` counts of equal-width bins over `[lo, hi]`.
template <class H>
struct HistogramResult {
  H counts;  ///< `bins` counts (int64 for tensors)
  double lo = 0;
  double hi = 0;
  std::size_t bins = 0;

  static constexpr auto fields() {
    return std::tuple{field("counts", &HistogramResult::counts), field("lo", &HistogramResult::lo),
                      field("hi", &HistogramResult::hi), field("bins", &HistogramResult::bins)};
  }
};

/// The state of `Histogram`: the bin counts and how many values (not elements) were counted.
template <class T>
struct HistogramState {
  histogram_t<T> counts;
  std::uint64_t count = 0;

  static constexpr auto fields() {
    return std::tuple{field("counts", &HistogramState::counts),
                      field("count", &HistogramState::count)};
  }
};

/// Counts every element of every value into `bins` equal-width bins over `[lo, hi]`, exactly
/// (64-bit counts), with `torch.histc`'s rule: `hi` goes in the last bin, elements outside
/// `[lo, hi]` and NaN are not counted. Values may change shape between passes. The bins are
/// fixed up front (unlike `torch.histc`'s default, which takes them from the data), so counts
/// of every pass and every process add up. Mergeable: counts add.
///
/// Example: `reduce::Histogram{64, -4.0, 4.0}`.
class Histogram {
 public:
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "histogram";
  static constexpr bool constant_memory = true;

  /// Throws `std::invalid_argument` unless `bins > 0`, `lo` and `hi` are finite and
  /// `lo < hi` (with `hi - lo` finite).
  Histogram(std::size_t bins, double lo, double hi) : bins_(bins), lo_(lo), hi_(hi) {
    if (bins == 0)
      throw std::invalid_argument("recorder: reduce::Histogram needs at least one bin (bins = 0)");
    if (!std::isfinite(lo) || !std::isfinite(hi))
      throw std::invalid_argument("recorder: reduce::Histogram needs finite bounds (lo = " +
                                  recorder::detail::shortest(lo) +
                                  ", hi = " + recorder::detail::shortest(hi) + ")");
    if (!(lo < hi))
      throw std::invalid_argument(
          "recorder: reduce::Histogram needs lo < hi (lo = " + recorder::detail::shortest(lo) +
          ", hi = " + recorder::detail::shortest(hi) + ")");
    if (!std::isfinite(hi - lo))
      throw std::invalid_argument("recorder: reduce::Histogram's range hi - lo overflows (lo = " +
                                  recorder::detail::shortest(lo) +
                                  ", hi = " + recorder::detail::shortest(hi) + ")");
  }

  std::size_t bins() const noexcept { return bins_; }
  double lo() const noexcept { return lo_; }
  double hi() const noexcept { return hi_; }

  static constexpr auto fields() {
    return std::tuple{field("bins", &Histogram::bins_), field("lo", &Histogram::lo_),
                      field("hi", &Histogram::hi_)};
  }

  using values_part = histogram_part;  ///< what it needs of `value_ops<T>`

  template <has_histogram_ops T>
  using state = HistogramState<T>;

  template <has_histogram_ops T>
  HistogramState<T> init(const T& first) const {
    HistogramState<T> s{value_ops<T>::histogram_zero(bins_), 0};
    update(s, first);
    return s;
  }

  template <has_histogram_ops T>
  void update(HistogramState<T>& s, const T& x) const {
    value_ops<T>::histogram_add(s.counts, x, bins_, lo_, hi_);
    ++s.count;
  }

  /// A copy of the counts, with the bins they are for.
  template <has_histogram_ops T>
  HistogramResult<histogram_t<T>> result(const HistogramState<T>& s) const {
    histogram_t<T> counts = value_ops<T>::histogram_zero(bins_);
    value_ops<T>::histogram_merge(counts, s.counts);
    return {std::move(counts), lo_, hi_, bins_};
  }

  template <has_histogram_ops T>
  std::uint64_t count(const HistogramState<T>& s) const {
    return s.count;
  }

  template <has_histogram_ops T>
  void merge(HistogramState<T>& s, const HistogramState<T>& other) const {
    value_ops<T>::histogram_merge(s.counts, other.counts);
    s.count += other.count;
  }

  friend bool operator==(const Histogram&, const Histogram&) = default;

 private:
  std::size_t bins_;
  double lo_;
  double hi_;
};

}  // namespace recorder::reduce
