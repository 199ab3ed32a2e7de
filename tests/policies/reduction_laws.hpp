#pragma once
/// The laws kit of `reduce::reduction`: one check every reduction model must pass.

#include <boost/test/unit_test.hpp>

#include <recorder/policies/reduction.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder::testing {

/// A result as named lists of numbers: `{"value", ...}` for a plain value or a vector of them,
/// one entry per field for a result that describes its fields (`reduce::described`).
using FlatResult = std::vector<std::pair<std::string, std::vector<double>>>;

/// The result reduction `R` should give for `xs`, computed directly (not through `init` and
/// `update`), and how close the two must be. Shipped reductions are specialized below; a new
/// reduction adds its own specialization.
template <class R>
struct ReductionReference;

namespace laws_detail {

template <class V>
void append(std::vector<double>& out, const V& v) {
  if constexpr (std::is_arithmetic_v<V>)
    out.push_back(static_cast<double>(v));
  else
    for (const auto& e : v) append(out, e);
}

template <class Result>
FlatResult flatten(const Result& r) {
  FlatResult out;
  if constexpr (reduce::described<Result>) {
    reduce::for_each_field(r, [&](std::string_view name, const auto& field) {
      out.emplace_back(std::string(name), std::vector<double>{});
      append(out.back().second, field);
    });
  } else {
    out.emplace_back("value", std::vector<double>{});
    append(out.back().second, r);
  }
  return out;
}

/// Equal up to `tolerance` relative to the larger magnitude (at least 1); NaN equals NaN;
/// `tolerance == 0` asks for bit-for-bit equal numbers.
inline bool close(double a, double b, double tolerance) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (tolerance == 0) return a == b;
  return std::abs(a - b) <= tolerance * std::max({std::abs(a), std::abs(b), 1.0});
}

inline void check_close(const FlatResult& got, const FlatResult& want, double tolerance,
                        std::string_view law) {
  BOOST_TEST_CONTEXT("law: " << law) {
    BOOST_TEST_REQUIRE(got.size() == want.size());
    for (std::size_t f = 0; f < got.size(); ++f) {
      BOOST_TEST_CONTEXT("field '" << want[f].first << "'") {
        BOOST_TEST(got[f].first == want[f].first);
        BOOST_TEST_REQUIRE(got[f].second.size() == want[f].second.size());
        for (std::size_t i = 0; i < got[f].second.size(); ++i)
          BOOST_TEST(
              close(got[f].second[i], want[f].second[i], tolerance),
              "element " << i << ": got " << got[f].second[i] << ", want " << want[f].second[i]);
      }
    }
  }
}

/// The state of `r` after `xs[begin, end)`: `init` with the first, `update` with the others.
template <class R, class T>
auto build(const R& r, const std::vector<T>& xs, std::size_t begin, std::size_t end) {
  auto s = r.init(xs[begin]);
  for (std::size_t i = begin + 1; i < end; ++i) r.update(s, xs[i]);
  return s;
}

template <class T>
T left_fold_sum(const std::vector<T>& xs) {
  T acc = xs.front();
  for (std::size_t i = 1; i < xs.size(); ++i) reduce::value_ops<T>::add(acc, xs[i]);
  return acc;
}

}  // namespace laws_detail

/// Checks every law of `reduce::reduction` for `r` on the values `xs` (at least two):
/// - the result equals `ReductionReference<R>::of(r, xs)`, and `count` follows the values;
/// - a copy of a state is independent of it, and a result of later updates;
/// - for mergeable reductions, merging the states of `xs[0, k)` and `xs[k, n)` gives the state of
///   all of `xs`, for every `k`, and leaves the merged-in state as it was.
template <class R, class T>
void check_reduction_laws(const R& r, const std::vector<T>& xs) {
  static_assert(reduce::check_reduction<R, T>());
  using laws_detail::flatten;
  using Ref = ReductionReference<R>;
  BOOST_TEST_CONTEXT("reduction '" << R::name << "' on " << xs.size() << " values") {
    BOOST_TEST_REQUIRE(xs.size() >= 2u);
    BOOST_TEST(!R::name.empty());
    const std::size_t n = xs.size();

    // Reference and count.
    auto s = r.init(xs[0]);
    BOOST_TEST(r.count(s) == 1u);
    for (std::size_t i = 1; i < n; ++i) {
      r.update(s, xs[i]);
      BOOST_TEST(r.count(s) == i + 1);
    }
    const FlatResult whole = flatten(r.result(s));
    laws_detail::check_close(whole, flatten(Ref::of(r, xs)), Ref::template tolerance<T>,
                             "result == reference");

    // States and results are values.
    const std::size_t mid = std::max<std::size_t>(n / 2, 1);
    auto half = laws_detail::build(r, xs, 0, mid);
    const FlatResult half_before = flatten(r.result(half));
    auto held = r.result(half);  // a value, even for KeepAll (`auto` copies the vector)
    auto copy = half;
    for (std::size_t i = mid; i < n; ++i) r.update(copy, xs[i]);
    laws_detail::check_close(flatten(r.result(half)), half_before, 0,
                             "updating a copy leaves the original as it was");
    laws_detail::check_close(flatten(r.result(copy)), whole, 0,
                             "a copied state goes on like the original");
    BOOST_TEST(r.count(copy) == n);
    const auto snapshot = half;
    for (std::size_t i = mid; i < n; ++i) r.update(half, xs[i]);
    laws_detail::check_close(flatten(r.result(snapshot)), half_before, 0,
                             "updating the original leaves a copy as it was");
    laws_detail::check_close(flatten(held), half_before, 0,
                             "a result is independent of later updates");
    laws_detail::check_close(flatten(r.result(half)), whole, 0,
                             "the state goes on after a copy was taken");

    // Merge.
    if constexpr (reduce::mergeable_reduction<R, T>) {
      for (std::size_t k = 1; k < n; ++k) {
        BOOST_TEST_CONTEXT("split at " << k) {
          auto a = laws_detail::build(r, xs, 0, k);
          const auto b = laws_detail::build(r, xs, k, n);
          const FlatResult b_before = flatten(r.result(b));
          r.merge(a, b);
          BOOST_TEST(r.count(a) == n);
          laws_detail::check_close(
              flatten(r.result(a)), whole, Ref::template merge_tolerance<T>,
              "merge(state of a part, state of the rest) == state of the whole");
          laws_detail::check_close(flatten(r.result(b)), b_before, 0,
                                   "merge leaves the other state as it was");
        }
      }
    }
  }
}

// ---- references of the shipped reductions ----------------------------------------------------

/// Rounding-free reductions compare exactly.
struct ExactReference {
  template <class T>
  static constexpr double tolerance = 0;
  template <class T>
  static constexpr double merge_tolerance = 0;
};

template <>
struct ReductionReference<reduce::KeepAll> : ExactReference {
  template <class T>
  static std::vector<T> of(const reduce::KeepAll&, const std::vector<T>& xs) {
    return xs;
  }
};

template <>
struct ReductionReference<reduce::Last> : ExactReference {
  template <class T>
  static T of(const reduce::Last&, const std::vector<T>& xs) {
    return xs.back();
  }
};

template <>
struct ReductionReference<reduce::Sum> {
  /// The reference adds in the same order: exact. A merge adds in another order: exact on
  /// integers, up to rounding on floating-point values.
  template <class T>
  static constexpr double tolerance = 0;
  template <class T>
  static constexpr double merge_tolerance = std::is_floating_point_v<T> ? 1e-12 : 0;
  template <class T>
  static T of(const reduce::Sum&, const std::vector<T>& xs) {
    return laws_detail::left_fold_sum(xs);
  }
};

template <>
struct ReductionReference<reduce::Mean> {
  template <class T>
  static constexpr double tolerance = 0;
  template <class T>
  static constexpr double merge_tolerance = std::is_floating_point_v<T> ? 1e-12 : 0;
  template <class T>
  static T of(const reduce::Mean&, const std::vector<T>& xs) {
    return static_cast<T>(static_cast<double>(laws_detail::left_fold_sum(xs)) /
                          static_cast<double>(xs.size()));
  }
};

template <>
struct ReductionReference<reduce::Moments> {
  /// Two-pass mean and variance; Welford agrees to rounding.
  template <class T>
  static constexpr double tolerance = 1e-12;
  template <class T>
  static constexpr double merge_tolerance = 1e-12;
  template <class T>
  static reduce::MomentsResult<double> of(const reduce::Moments& r, const std::vector<T>& xs) {
    const double n = static_cast<double>(xs.size());
    double sum = 0;
    for (const T& x : xs) sum += static_cast<double>(x);
    const double mean = sum / n;
    double m2 = 0;
    for (const T& x : xs) m2 += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean);
    const double dof = n - static_cast<double>(r.correction);
    return {mean, dof > 0 ? m2 / dof : std::nan(""), xs.size()};
  }
};

template <>
struct ReductionReference<reduce::MinMax> : ExactReference {
  template <class T>
  static reduce::MinMaxResult<T> of(const reduce::MinMax&, const std::vector<T>& xs) {
    return {*std::min_element(xs.begin(), xs.end()), *std::max_element(xs.begin(), xs.end())};
  }
};

template <>
struct ReductionReference<reduce::Histogram> : ExactReference {
  /// Counts by comparing with the bin edges `lo + i * (hi - lo) / bins`, not by the histc
  /// expression the reduction uses (edge values are checked separately).
  template <class T>
  static reduce::HistogramResult<std::vector<std::uint64_t>> of(const reduce::Histogram& r,
                                                                const std::vector<T>& xs) {
    std::vector<std::uint64_t> counts(r.bins(), 0);
    const double width = (r.hi() - r.lo()) / static_cast<double>(r.bins());
    for (const T& x : xs) {
      const double v = static_cast<double>(x);
      if (!(v >= r.lo() && v <= r.hi())) continue;
      std::size_t bin = r.bins() - 1;
      for (std::size_t i = 1; i < r.bins(); ++i)
        if (v < r.lo() + static_cast<double>(i) * width) {
          bin = i - 1;
          break;
        }
      ++counts[bin];
    }
    return {counts, r.lo(), r.hi(), r.bins()};
  }
};

template <>
struct ReductionReference<reduce::Quantile> : ExactReference {
  /// NumPy's "linear" quantile of the sorted values (none of them NaN): between the values at
  /// the floor and the ceiling of `q * (n - 1)`.
  template <class T>
  static reduce::QuantileResult<T> of(const reduce::Quantile& r, const std::vector<T>& xs) {
    std::vector<double> v(xs.begin(), xs.end());
    std::sort(v.begin(), v.end());
    const double h = r.q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(h));
    const auto hi = static_cast<std::size_t>(std::ceil(h));
    return {r.q, h == std::floor(h) ? v[lo] : v[lo] + (v[hi] - v[lo]) * (h - std::floor(h))};
  }
};

template <class F>
struct ReductionReference<reduce::Custom<F>> : ExactReference {
  template <class T>
  static T of(const reduce::Custom<F>& r, const std::vector<T>& xs) {
    T acc = xs.front();
    for (std::size_t i = 1; i < xs.size(); ++i) acc = r.f(acc, xs[i]);
    return acc;
  }
};

}  // namespace recorder::testing
