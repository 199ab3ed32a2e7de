#pragma once
/// `reduce::Quantile`: the median, or any quantile, of every recorded number (no libtorch).

#include <recorder/policies/reduction/fields.hpp>

#include <algorithm>
#include <cstdio>
#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace recorder::reduce {

/// The result of `Quantile`.
template <class T>
struct QuantileResult {
  double q;      ///< which quantile: 0.5 is the median
  double value;  ///< the `q`-quantile of the values, interpolated linearly between the two
                 ///< nearest ranks (`torch.quantile`'s and NumPy's default)

  static constexpr auto fields() { return std::tuple{field("quantile", &QuantileResult::value)}; }
};

/// The state of `Quantile`: every value so far.
template <class T>
struct QuantileState {
  std::vector<T> values;

  static constexpr auto fields() { return std::tuple{field("values", &QuantileState::values)}; }
};

/// The `q`-quantile (default 0.5, the median) of every recorded number: robust timings
/// (`record::Timing<reduce::Quantile>`), where one slow run must not move the figure.
/// Numbers only (it keeps each value, so memory grows with the passes); `q` in [0, 1] is
/// checked when the result is taken. A NaN sorts last. Mergeable: the values are concatenated.
struct Quantile {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "quantile";
  static constexpr bool constant_memory = false;

  double q = 0.5;  ///< 0.5: median, 0.9: 90th percentile

  static constexpr auto fields() { return std::tuple{field("q", &Quantile::q)}; }

  template <std::floating_point T>
  using state = QuantileState<T>;

  template <std::floating_point T>
  QuantileState<T> init(const T& first) const {
    return {{first}};
  }

  template <std::floating_point T>
  void update(QuantileState<T>& s, const T& x) const {
    s.values.push_back(x);
  }

  template <std::floating_point T>
  QuantileResult<T> result(const QuantileState<T>& s) const {
    if (!(q >= 0.0 && q <= 1.0))
      throw std::invalid_argument("recorder: reduce::Quantile needs q in [0, 1]");
    std::vector<T> v = s.values;
    const auto nan_last = [](T a, T b) { return (a < b) || (a == a && b != b); };
    std::sort(v.begin(), v.end(), nan_last);
    if (v.empty()) return {q, 0.0};
    const double at = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(at);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    const double frac = at - static_cast<double>(lo);
    const double a = static_cast<double>(v[lo]);
    const double b = static_cast<double>(v[hi]);
    return {q, frac == 0.0 ? a : a + (b - a) * frac};
  }

  template <std::floating_point T>
  std::uint64_t count(const QuantileState<T>& s) const {
    return s.values.size();
  }

  template <std::floating_point T>
  void merge(QuantileState<T>& s, const QuantileState<T>& other) const {
    s.values.insert(s.values.end(), other.values.begin(), other.values.end());
  }

  /// The summary statistic (a timing's one number): the quantile, named "median" or "p90".
  std::string statistic_name() const {
    if (q == 0.5) return "median";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", q * 100);
    return std::string("p") + buf;
  }
  template <class T>
  double statistic(const QuantileResult<T>& r) const {
    return r.value;
  }
};

}  // namespace recorder::reduce
