#pragma once
/// `reduce::Quantile`: the median, or any quantile, of every recorded value (no libtorch).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstdio>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder::reduce {

/// The result of `Quantile` over values of type `T`.
template <class T>
struct QuantileResult {
  double q;         ///< which quantile: 0.5 is the median
  wide_t<T> value;  ///< the `q`-quantile of the values, interpolated linearly between the two
                    ///< nearest ranks (`torch.quantile`'s and NumPy's default); a double for
                    ///< numbers, a float64 tensor of the values' shape for tensors (element by
                    ///< element)

  static constexpr auto fields() { return std::tuple{field("quantile", &QuantileResult::value)}; }
};

/// The state of `Quantile`: a copy of every value so far.
template <class T>
struct QuantileState {
  std::vector<T> values;

  static constexpr auto fields() { return std::tuple{field("values", &QuantileState::values)}; }
};

/// The `q`-quantile (default 0.5, the median) of every recorded value: robust timings
/// (`record::Timing<reduce::Quantile>`), where one slow run must not move the figure, or each
/// element's median activation over batches (`record::ForwardOutput<reduce::Quantile>`, as
/// `torch.quantile(torch.stack(values), q, dim=0)`; every value of one shape). It keeps a copy
/// of each value, so memory grows with the passes; `q` in [0, 1] is checked when the result is
/// taken. A NaN sorts last: a quantile below the NaNs is a number (`torch.quantile` gives NaN
/// wherever one is). Mergeable: the values are concatenated.
///
/// Example: `record::ForwardOutput<reduce::Quantile> medians({"fc1"}, reduce::Quantile{.q = 0.5});`
struct Quantile {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "quantile";
  static constexpr bool constant_memory = false;

  double q = 0.5;  ///< 0.5: median, 0.9: 90th percentile

  static constexpr auto fields() { return std::tuple{field("q", &Quantile::q)}; }

  using values_part = quantile_part;  ///< what it needs of `value_ops<T>`

  template <has_quantile_ops T>
  using state = QuantileState<T>;

  template <has_quantile_ops T>
  QuantileState<T> init(const T& first) const {
    QuantileState<T> s;
    s.values.push_back(value_ops<T>::copy(first));
    return s;
  }

  template <has_quantile_ops T>
  void update(QuantileState<T>& s, const T& x) const {
    s.values.push_back(value_ops<T>::copy(x));
  }

  template <has_quantile_ops T>
  QuantileResult<T> result(const QuantileState<T>& s) const {
    if (!(q >= 0.0 && q <= 1.0))
      throw std::invalid_argument("recorder: reduce::Quantile needs q in [0, 1]");
    return {q, value_ops<T>::quantile(std::span<const T>(s.values), q)};
  }

  template <has_quantile_ops T>
  std::uint64_t count(const QuantileState<T>& s) const {
    return s.values.size();
  }

  /// Appends copies of `other`'s values after `s`'s.
  template <has_quantile_ops T>
  void merge(QuantileState<T>& s, const QuantileState<T>& other) const {
    std::vector<T> values;
    values.reserve(s.values.size() + other.values.size());
    values.insert(values.end(), s.values.begin(), s.values.end());
    for (const T& v : other.values) values.push_back(value_ops<T>::copy(v));
    s.values = std::move(values);
  }

  /// The summary statistic (a timing's one number): the quantile, named "median" or "p90".
  std::string statistic_name() const {
    if (q == 0.5) return "median";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", q * 100);
    return std::string("p") + buf;
  }
  template <class T>
  requires std::is_arithmetic_v<T>
  double statistic(const QuantileResult<T>& r) const { return r.value; }
};

}  // namespace recorder::reduce
