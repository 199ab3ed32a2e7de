// A reduction asks a value type only for the part of `reduce::value_ops` it uses: a type with
// the elementwise part alone works with Sum, Mean, Last, MinMax and KeepAll, and is refused by
// Moments, Histogram and Quantile (tests/compile_fail/moments_needs_moment_ops.cpp: with the
// library's message naming the missing part).
#include <boost/test/unit_test.hpp>

#include "../support/metres.hpp"

#include <recorder/policies/reduction.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

using test::Metres;

namespace reduce = recorder::reduce;

static_assert(reduce::has_elementwise_ops<Metres>);
static_assert(!reduce::has_moment_ops<Metres> && !reduce::has_histogram_ops<Metres> &&
              !reduce::has_quantile_ops<Metres>);
static_assert(!reduce::reducible<Metres>);  // the conjunction of all four parts
static_assert(reduce::has_quantile_ops<double> && reduce::has_quantile_ops<int>);
static_assert(reduce::check_reduction<reduce::Sum, Metres>() &&
              reduce::check_reduction<reduce::Mean, Metres>() &&
              reduce::check_reduction<reduce::Last, Metres>() &&
              reduce::check_reduction<reduce::MinMax, Metres>() &&
              reduce::check_reduction<reduce::KeepAll, Metres>());
static_assert(reduce::mergeable_reduction<reduce::Sum, Metres> &&
              reduce::mergeable_reduction<reduce::Mean, Metres>);
static_assert(!reduce::reduction<reduce::Moments, Metres> &&
              !reduce::reduction<reduce::Histogram, Metres> &&
              !reduce::reduction<reduce::Quantile, Metres>);

/// A value type with the optional `min_max_into` hook: `MinMax::update` calls it, never
/// `min_into` or `max_into` (they throw here; its `merge` would use them).
struct Kelvin {
  double v = 0;
};

template <>
struct recorder::reduce::value_ops<Kelvin> {
  static Kelvin copy(const Kelvin& x) { return x; }
  static void assign(Kelvin& acc, const Kelvin& x) { acc = x; }
  static void add(Kelvin& acc, const Kelvin& x) { acc.v += x.v; }
  static Kelvin divide(const Kelvin& acc, double n) { return {acc.v / n}; }
  static void min_into(Kelvin&, const Kelvin&) { throw std::logic_error("min_into"); }
  static void max_into(Kelvin&, const Kelvin&) { throw std::logic_error("max_into"); }
  static void min_max_into(Kelvin& lo, Kelvin& hi, const Kelvin& x) {
    lo.v = std::min(lo.v, x.v);
    hi.v = std::max(hi.v, x.v);
  }
  static std::size_t bytes(const Kelvin&) { return sizeof(Kelvin); }
};

namespace {

template <class R>
auto fold(const R& r, const std::vector<Metres>& xs) {
  auto s = r.init(xs.front());
  for (std::size_t i = 1; i < xs.size(); ++i) r.update(s, xs[i]);
  return s;
}

const std::vector<Metres> walk{{1.5}, {2.0}, {-0.5}, {4.0}};

}  // namespace

BOOST_AUTO_TEST_SUITE(value_parts)

BOOST_AUTO_TEST_CASE(elementwise_only_type_sums) {
  const reduce::Sum r;
  const auto s = fold(r, walk);
  BOOST_TEST(r.result(s).v == 7.0);
  BOOST_TEST(r.count(s) == std::uint64_t{4});
}

BOOST_AUTO_TEST_CASE(elementwise_only_type_averages) {
  const reduce::Mean r;
  auto s = fold(r, {walk.begin(), walk.begin() + 2});
  r.merge(s, fold(r, {walk.begin() + 2, walk.end()}));
  BOOST_TEST(r.result(s).v == 1.75);
  BOOST_TEST(r.count(s) == std::uint64_t{4});
}

BOOST_AUTO_TEST_CASE(elementwise_only_type_keeps_extremes) {
  const reduce::MinMax r;
  const auto result = r.result(fold(r, walk));
  BOOST_TEST(result.min.v == -0.5);
  BOOST_TEST(result.max.v == 4.0);
}

BOOST_AUTO_TEST_CASE(min_max_takes_the_optional_hook) {
  static_assert(reduce::has_min_max_into<Kelvin> && !reduce::has_min_max_into<Metres>);
  const reduce::MinMax r;
  auto s = r.init(Kelvin{300.0});
  r.update(s, Kelvin{250.0});
  r.update(s, Kelvin{310.0});
  BOOST_TEST(s.min.v == 250.0);
  BOOST_TEST(s.max.v == 310.0);
  BOOST_TEST(r.count(s) == std::uint64_t{3});
}

BOOST_AUTO_TEST_SUITE_END()
