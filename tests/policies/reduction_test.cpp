/// Reduction policies on arithmetic values: the laws kit for every reduction, Welford against
/// two passes, histogram edges, the keep-all cap, option validation, custom folds.
#define BOOST_TEST_MODULE policies_reduction
#include <boost/test/unit_test.hpp>

#include "splitmix.hpp"

#include "reduction_laws.hpp"

#include <recorder/policies/reduction.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace reduce = recorder::reduce;
using recorder::testing::check_reduction_laws;

namespace {

// ---- compile-time checks ---------------------------------------------------------------------

/// The example of `concepts.hpp`: a reduction that only counts.
struct Count {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "count";
  static constexpr bool constant_memory = true;
  template <class T>
  using state = std::uint64_t;
  template <class T>
  std::uint64_t init(const T&) const {
    return 1;
  }
  template <class T>
  void update(std::uint64_t& s, const T&) const {
    ++s;
  }
  std::uint64_t result(std::uint64_t s) const { return s; }
  std::uint64_t count(std::uint64_t s) const { return s; }
  void merge(std::uint64_t& s, std::uint64_t other) const { s += other; }
};

struct Untagged {
  static constexpr std::string_view name = "untagged";
  static constexpr bool constant_memory = true;
};

struct NoCount {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "no_count";
  static constexpr bool constant_memory = true;
  template <class T>
  using state = T;
  template <class T>
  T init(const T& x) const {
    return x;
  }
  template <class T>
  void update(T&, const T&) const {}
  template <class T>
  T result(const T& s) const {
    return s;
  }
};

constexpr auto running_max = [](double acc, const double& x) { return std::max(acc, x); };
using RunningMax = reduce::Custom<std::remove_const_t<decltype(running_max)>>;

static_assert(reduce::mergeable_reduction<Count, double>);
static_assert(reduce::check_reduction<Count, int>());
static_assert(!reduce::tagged_reduction<Untagged> && reduce::described_reduction<Untagged>);
static_assert(!reduce::reduction<Untagged, double>);
static_assert(reduce::has_reduction_state<NoCount, double> &&
              !reduce::reduction_steps<NoCount, double>);
static_assert(!reduce::reduction<int, double>);

static_assert(reduce::reducible<double> && reduce::reducible<float> && reduce::reducible<int> &&
              reduce::reducible<std::uint8_t>);
static_assert(!reduce::reducible<std::string> && !reduce::reducible<std::vector<double>>);

template <class T>
constexpr bool all_shipped() {
  return reduce::mergeable_reduction<reduce::KeepAll, T> &&
         reduce::mergeable_reduction<reduce::Last, T> &&
         reduce::mergeable_reduction<reduce::Sum, T> &&
         reduce::mergeable_reduction<reduce::Mean, T> &&
         reduce::mergeable_reduction<reduce::Moments, T> &&
         reduce::mergeable_reduction<reduce::MinMax, T> &&
         reduce::mergeable_reduction<reduce::Histogram, T> &&
         reduce::mergeable_reduction<reduce::AbsMax, T> &&
         reduce::mergeable_reduction<reduce::Quantile, T> && reduce::reduction<RunningMax, T> &&
         !reduce::mergeable_reduction<RunningMax, T>;
}
static_assert(all_shipped<double>() && all_shipped<float>() && all_shipped<int>());
// A value type without value_ops is no reduction's business.
static_assert(!reduce::reduction<reduce::Sum, std::string>);

static_assert(!reduce::KeepAll::constant_memory && reduce::Last::constant_memory &&
              reduce::Sum::constant_memory && reduce::Mean::constant_memory &&
              reduce::Moments::constant_memory && reduce::MinMax::constant_memory &&
              reduce::Histogram::constant_memory && RunningMax::constant_memory);
static_assert(reduce::KeepAll::name == "keep_all" && reduce::Last::name == "last" &&
              reduce::Sum::name == "sum" && reduce::Mean::name == "mean" &&
              reduce::Moments::name == "moments" && reduce::MinMax::name == "min_max" &&
              reduce::Histogram::name == "histogram" && RunningMax::name == "custom");

static_assert(
    std::is_same_v<reduce::result_t<reduce::KeepAll, double>, const std::vector<double>&>);
static_assert(std::is_same_v<reduce::result_t<reduce::Last, float>, float>);
static_assert(std::is_same_v<reduce::result_t<reduce::Sum, int>, int>);
static_assert(std::is_same_v<reduce::result_t<reduce::Mean, double>, double>);
static_assert(
    std::is_same_v<reduce::result_t<reduce::Moments, float>, reduce::MomentsResult<double>>);
static_assert(std::is_same_v<reduce::result_t<reduce::MinMax, int>, reduce::MinMaxResult<int>>);
static_assert(std::is_same_v<reduce::result_t<reduce::Histogram, double>,
                             reduce::HistogramResult<std::vector<std::uint64_t>>>);
static_assert(std::is_same_v<reduce::result_t<RunningMax, double>, double>);
static_assert(std::is_base_of_v<std::length_error, reduce::CapacityExceeded>);

// ---- data --------------------------------------------------------------------------------------

using recorder::testing::SplitMix;

const std::vector<double> mixed = {0.5, -1.25, 3.0, 2.0, -0.75, 0.125, 4.5, -2.0, 1.0};
const std::vector<int> integers = {7, -3, 12, 0, 5, -8, 21};

std::vector<double> large_offset(std::size_t n) {
  SplitMix g{42};
  std::vector<double> xs(n);
  for (double& x : xs) x = 1e6 + (g.uniform() - 0.5);
  return xs;
}

struct TwoPass {
  double mean;
  double variance;
};

TwoPass two_pass(const std::vector<double>& xs, double correction = 1) {
  double sum = 0;
  for (double x : xs) sum += x;
  const double mean = sum / static_cast<double>(xs.size());
  double m2 = 0;
  for (double x : xs) m2 += (x - mean) * (x - mean);
  return {mean, m2 / (static_cast<double>(xs.size()) - correction)};
}

bool near(double a, double b, double rel) {
  return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b));
}

std::vector<std::string> field_names(const auto& result) {
  std::vector<std::string> names;
  reduce::for_each_field(result,
                         [&](std::string_view name, const auto&) { names.emplace_back(name); });
  return names;
}

}  // namespace

/// The laws kit takes new reductions through a reference of their own.
template <>
struct recorder::testing::ReductionReference<Count> : recorder::testing::ExactReference {
  template <class T>
  static std::uint64_t of(const Count&, const std::vector<T>& xs) {
    return xs.size();
  }
};

// ---- the laws, for every reduction ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(laws_keep_all) {
  check_reduction_laws(reduce::KeepAll{}, mixed);
  check_reduction_laws(reduce::KeepAll{}, integers);
  check_reduction_laws(reduce::KeepAll{.max_bytes = 1024}, mixed);
}

BOOST_AUTO_TEST_CASE(laws_last) {
  check_reduction_laws(reduce::Last{}, mixed);
  check_reduction_laws(reduce::Last{}, integers);
}

BOOST_AUTO_TEST_CASE(laws_sum) {
  check_reduction_laws(reduce::Sum{}, mixed);
  check_reduction_laws(reduce::Sum{}, integers);
  check_reduction_laws(reduce::Sum{}, std::vector<float>{1.5f, -2.25f, 8.0f, 0.5f});
}

BOOST_AUTO_TEST_CASE(laws_mean) {
  check_reduction_laws(reduce::Mean{}, mixed);
  check_reduction_laws(reduce::Mean{}, integers);
}

BOOST_AUTO_TEST_CASE(laws_moments) {
  check_reduction_laws(reduce::Moments{}, mixed);
  check_reduction_laws(reduce::Moments{.correction = 0}, mixed);
  check_reduction_laws(reduce::Moments{}, integers);
  check_reduction_laws(reduce::Moments{}, std::vector<float>{1.5f, -2.25f, 8.0f, 0.5f});
}

BOOST_AUTO_TEST_CASE(laws_min_max) {
  check_reduction_laws(reduce::MinMax{}, mixed);
  check_reduction_laws(reduce::MinMax{}, integers);
}

BOOST_AUTO_TEST_CASE(laws_histogram) {
  check_reduction_laws(reduce::Histogram{8, -2.0, 4.0}, mixed);  // 4.5 is outside
  check_reduction_laws(reduce::Histogram{5, -10.0, 25.0}, integers);
  check_reduction_laws(reduce::Histogram{1, 0.0, 1.0}, std::vector<double>{0.0, 1.0, 0.5, 2.0});
}

BOOST_AUTO_TEST_CASE(laws_quantile) {
  check_reduction_laws(reduce::Quantile{}, mixed);
  check_reduction_laws(reduce::Quantile{.q = 0.9}, mixed);
  check_reduction_laws(reduce::Quantile{.q = 0.0}, integers);  // integers too, as doubles
  check_reduction_laws(reduce::Quantile{.q = 1.0}, integers);
}

BOOST_AUTO_TEST_CASE(quantiles_interpolate_and_sort_nan_last) {
  const reduce::Quantile median;
  auto s = median.init(3.0);
  median.update(s, 1.0);
  BOOST_TEST(median.result(s).value == 2.0);  // between the two
  median.update(s, 2.0);
  BOOST_TEST(median.result(s).value == 2.0);
  BOOST_TEST(median.result(s).q == 0.5);
  median.update(s, std::numeric_limits<double>::quiet_NaN());  // 1, 2, 3, NaN
  BOOST_TEST(median.result(s).value == 2.5);
  BOOST_TEST(std::isnan(reduce::Quantile{.q = 1.0}.result(s).value));
  BOOST_TEST(reduce::Quantile{.q = 0.25}.result(s).value == 1.75);
  BOOST_CHECK_THROW(reduce::Quantile{.q = 1.5}.result(s), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(laws_custom) {
  check_reduction_laws(reduce::custom(running_max), mixed);
  check_reduction_laws(reduce::custom([](int acc, const int& x) { return acc * 2 + x; }), integers);
}

BOOST_AUTO_TEST_CASE(laws_kit_own_example) { check_reduction_laws(Count{}, mixed); }

// ---- Welford -----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(welford_matches_two_pass_where_naive_sums_fail) {
  const std::vector<double> xs = large_offset(10'000);
  const TwoPass want = two_pass(xs);

  // The data defeats the one-pass sum-of-squares formula: that is what Welford is for.
  double sum = 0, sum_sq = 0;
  for (double x : xs) {
    sum += x;
    sum_sq += x * x;
  }
  const double n = static_cast<double>(xs.size());
  const double naive = (sum_sq - sum * sum / n) / (n - 1);
  BOOST_TEST(!near(naive, want.variance, 1e-3),
             "naive " << naive << " vs two-pass " << want.variance);

  const reduce::Moments r;
  auto s = r.init(xs[0]);
  for (std::size_t i = 1; i < xs.size(); ++i) r.update(s, xs[i]);
  const auto got = r.result(s);
  BOOST_TEST(got.count == xs.size());
  BOOST_TEST(near(got.mean, want.mean, 1e-12), got.mean << " vs " << want.mean);
  BOOST_TEST(near(got.variance, want.variance, 1e-6), got.variance << " vs " << want.variance);

  // Two halves, merged (as two processes would), give the whole.
  auto a = r.init(xs[0]);
  for (std::size_t i = 1; i < xs.size() / 2; ++i) r.update(a, xs[i]);
  auto b = r.init(xs[xs.size() / 2]);
  for (std::size_t i = xs.size() / 2 + 1; i < xs.size(); ++i) r.update(b, xs[i]);
  r.merge(a, b);
  const auto merged = r.result(a);
  BOOST_TEST(merged.count == xs.size());
  BOOST_TEST(near(merged.mean, got.mean, 1e-12));
  BOOST_TEST(near(merged.variance, got.variance, 1e-9), merged.variance << " vs " << got.variance);
  BOOST_TEST(near(merged.variance, want.variance, 1e-6));
}

BOOST_AUTO_TEST_CASE(welford_float_values_accumulate_in_double) {
  std::vector<float> xs;
  SplitMix g{7};
  for (int i = 0; i < 10'000; ++i) xs.push_back(static_cast<float>(1000.0 + g.uniform()));
  std::vector<double> as_double(xs.begin(), xs.end());
  const TwoPass want = two_pass(as_double);
  const reduce::Moments r;
  auto s = r.init(xs[0]);
  for (std::size_t i = 1; i < xs.size(); ++i) r.update(s, xs[i]);
  const reduce::MomentsResult<double> got = r.result(s);
  BOOST_TEST(near(got.mean, want.mean, 1e-12));
  BOOST_TEST(near(got.variance, want.variance, 1e-6));
}

BOOST_AUTO_TEST_CASE(moments_variance_is_nan_until_count_passes_correction) {
  const reduce::Moments r;
  auto s = r.init(2.0);
  BOOST_TEST(std::isnan(r.result(s).variance));
  BOOST_TEST(r.result(s).mean == 2.0);
  r.update(s, 4.0);
  BOOST_TEST(r.result(s).variance == 2.0);
  const reduce::Moments population{.correction = 0};
  auto p = population.init(2.0);
  BOOST_TEST(population.result(p).variance == 0.0);
  population.update(p, 4.0);
  BOOST_TEST(population.result(p).variance == 1.0);
  const reduce::Moments three{.correction = 3};
  auto t = three.init(1.0);
  three.update(t, 2.0);
  BOOST_TEST(std::isnan(three.result(t).variance));
}

BOOST_AUTO_TEST_CASE(welford_merge_with_empty_sides) {
  using ops = reduce::value_ops<double>;
  double mean = 5, m2 = 3;
  ops::welford_merge(mean, m2, 4, 100.0, 100.0, 0);  // nothing to merge
  BOOST_TEST(mean == 5.0);
  BOOST_TEST(m2 == 3.0);
  ops::welford_merge(mean, m2, 0, 7.0, 2.0, 3);  // nothing merged into: a copy
  BOOST_TEST(mean == 7.0);
  BOOST_TEST(m2 == 2.0);
}

// ---- histogram -----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(histogram_bins_and_edges_follow_histc) {
  const reduce::Histogram r{4, 0.0, 1.0};
  auto s = r.init(0.0);                    // lo: first bin
  for (double x : {0.25, 0.5, 0.999, 1.0,  // 1.0 = hi: the last bin, not a fifth one
                   -0.001, 1.001, -5.0, std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::infinity()})  // outside and NaN: not counted
    r.update(s, x);
  const auto h = r.result(s);
  BOOST_TEST(h.counts == (std::vector<std::uint64_t>{1, 1, 1, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(h.lo == 0.0);
  BOOST_TEST(h.hi == 1.0);
  BOOST_TEST(h.bins == 4u);
  BOOST_TEST(r.count(s) == 10u);  // values seen, counted or not

  // PyTorch 2.x's histc expression, (x - lo) * bins / (hi - lo), rounding included: -0.3 of
  // [-1.5, 1.5] in 10 bins is 1.2 * 10 / 3 = 4, bin 4 (libtorch 1.13's 1.2 / 3 * 10 is
  // 3.9999999999999996, bin 3: the tensor ops follow the libtorch in use, tests/tensor).
  const reduce::Histogram tenths{10, -1.5, 1.5};
  const auto t = tenths.result(tenths.init(-0.30000000000000004));
  BOOST_TEST(t.counts[4] == 1u);

  // Integers count as their double values.
  const reduce::Histogram ints{3, 0.0, 3.0};
  auto si = ints.init(0);
  for (int x : {1, 2, 3, 4, -1}) ints.update(si, x);
  BOOST_TEST(ints.result(si).counts == (std::vector<std::uint64_t>{1, 1, 2}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(histogram_rejects_invalid_options) {
  const auto message = [](auto make) {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  BOOST_TEST(message([] {
               reduce::Histogram{0, 0.0, 1.0};
             }) == "recorder: reduce::Histogram needs at least one bin (bins = 0)");
  BOOST_TEST(message([] {
               reduce::Histogram{4, 1.0, 1.0};
             }) == "recorder: reduce::Histogram needs lo < hi (lo = 1, hi = 1)");
  BOOST_TEST(message([] {
               reduce::Histogram{4, 2.0, -1.5};
             }) == "recorder: reduce::Histogram needs lo < hi (lo = 2, hi = -1.5)");
  BOOST_TEST(message([&] {
               reduce::Histogram{4, nan, 1.0};
             }) == "recorder: reduce::Histogram needs finite bounds (lo = nan, hi = 1)");
  BOOST_TEST(message([&] {
               reduce::Histogram{4, 0.0, inf};
             }) == "recorder: reduce::Histogram needs finite bounds (lo = 0, hi = inf)");
  BOOST_TEST(message([] {
               reduce::Histogram{4, -1e308, 1e308};
             }) ==
             "recorder: reduce::Histogram's range hi - lo overflows (lo = -1e+308, hi = 1e+308)");
  BOOST_TEST(message([] { reduce::Histogram{4, -1.0, 1.0}; }) == "no exception");
}

BOOST_AUTO_TEST_CASE(histogram_merge_needs_the_same_bins) {
  const reduce::Histogram a{4, 0.0, 1.0}, b{5, 0.0, 1.0};
  auto sa = a.init(0.5);
  const auto sb = b.init(0.5);
  BOOST_CHECK_THROW(a.merge(sa, sb), std::invalid_argument);
  BOOST_TEST(a.result(sa).counts == (std::vector<std::uint64_t>{0, 0, 1, 0}),
             boost::test_tools::per_element());
}

// ---- keep-all cap ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(keep_all_cap_throws_and_keeps_what_was_recorded) {
  const reduce::KeepAll r{.max_bytes = 3 * sizeof(double)};
  auto s = r.init(1.0);
  r.update(s, 2.0);
  r.update(s, 3.0);  // exactly at the cap: fine
  try {
    r.update(s, 4.0);
    BOOST_FAIL("no CapacityExceeded");
  } catch (const reduce::CapacityExceeded& e) {
    BOOST_TEST(e.cap() == 24u);
    BOOST_TEST(e.kept() == 3u);
    BOOST_TEST(e.needed() == 8u);
    BOOST_TEST(std::string(e.what()) ==
               "keep-all memory cap of 24 bytes exceeded after 3 samples (the next needs 8 bytes)");
  }
  BOOST_TEST(r.result(s) == (std::vector<double>{1, 2, 3}), boost::test_tools::per_element());
  BOOST_TEST(r.count(s) == 3u);
  BOOST_TEST(s.bytes == 24u);

  // The first value is checked too.
  const reduce::KeepAll tiny{.max_bytes = 4};
  try {
    (void)tiny.init(1.0);
    BOOST_FAIL("no CapacityExceeded");
  } catch (const std::length_error& e) {
    BOOST_TEST(std::string(e.what()) ==
               "keep-all memory cap of 4 bytes exceeded after 0 samples (the next needs 8 bytes)");
  }
  const reduce::KeepAll one{.max_bytes = 12};
  auto so = one.init(1.0);
  BOOST_CHECK_EXCEPTION(
      one.update(so, 2.0), reduce::CapacityExceeded, [](const reduce::CapacityExceeded& e) {
        return std::string(e.what()) ==
               "keep-all memory cap of 12 bytes exceeded after 1 sample (the next needs 8 bytes)";
      });

  // A merge that does not fit throws and changes nothing.
  auto other = r.init(5.0);
  BOOST_CHECK_THROW(r.merge(s, other), reduce::CapacityExceeded);
  BOOST_TEST(r.count(s) == 3u);
  auto small = r.init(6.0);
  r.merge(small, other);
  BOOST_TEST(r.result(small) == (std::vector<double>{6, 5}), boost::test_tools::per_element());

  // No cap by default.
  const reduce::KeepAll all;
  auto sa = all.init(0.0);
  for (int i = 1; i < 1000; ++i) all.update(sa, static_cast<double>(i));
  BOOST_TEST(all.count(sa) == 1000u);
}

// ---- other reductions' details -------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(custom_running_max_with_a_lambda) {
  const auto r = reduce::custom([](double acc, const double& x) { return std::max(acc, x); });
  auto s = r.init(3.0);
  for (double x : {1.0, 7.5, -2.0, 7.0}) r.update(s, x);
  BOOST_TEST(r.result(s) == 7.5);
  BOOST_TEST(r.count(s) == 5u);
  // A capturing callable: its options are part of the reduction value.
  const double decay = 0.5;
  const auto ema = reduce::custom(
      [decay](double acc, const double& x) { return decay * acc + (1 - decay) * x; });
  auto e = ema.init(0.0);
  ema.update(e, 4.0);
  ema.update(e, 8.0);
  BOOST_TEST(ema.result(e) == 5.0);
}

BOOST_AUTO_TEST_CASE(last_merge_takes_the_other_value) {
  const reduce::Last r;
  auto a = r.init(1.0);
  r.update(a, 2.0);
  const auto b = r.init(9.0);
  r.merge(a, b);
  BOOST_TEST(r.result(a) == 9.0);
  BOOST_TEST(r.count(a) == 3u);
}

BOOST_AUTO_TEST_CASE(min_max_propagates_nan_and_mean_truncates_integers) {
  const reduce::MinMax r;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto s = r.init(1.0);
  r.update(s, nan);
  r.update(s, 5.0);
  BOOST_TEST(std::isnan(r.result(s).min));
  BOOST_TEST(std::isnan(r.result(s).max));

  const reduce::Mean m;
  auto si = m.init(1);
  m.update(si, 2);
  BOOST_TEST(m.result(si) == 1);  // 3 / 2, as an int
}

BOOST_AUTO_TEST_CASE(integer_sums_wrap_as_tensors_do) {
  using ops = reduce::value_ops<std::int8_t>;
  std::int8_t acc = 127;
  ops::add(acc, std::int8_t{1});
  BOOST_TEST(acc == -128);
  int big = std::numeric_limits<int>::max();
  reduce::value_ops<int>::add(big, 1);
  BOOST_TEST(big == std::numeric_limits<int>::min());
}

BOOST_AUTO_TEST_CASE(results_name_their_fields_in_order) {
  const auto moments = reduce::Moments{}.result(reduce::Moments{}.init(1.0));
  BOOST_TEST(field_names(moments) == (std::vector<std::string>{"mean", "variance", "count"}),
             boost::test_tools::per_element());
  const auto extremes = reduce::MinMax{}.result(reduce::MinMax{}.init(1.0));
  BOOST_TEST(field_names(extremes) == (std::vector<std::string>{"min", "max"}),
             boost::test_tools::per_element());
  const reduce::Histogram h{2, 0.0, 1.0};
  BOOST_TEST(field_names(h.result(h.init(1.0))) ==
                 (std::vector<std::string>{"counts", "lo", "hi", "bins"}),
             boost::test_tools::per_element());

  // The visitor sees each field with its own type.
  std::uint64_t count = 0;
  double variance = -1;
  reduce::for_each_field(reduce::Moments{}.result(reduce::Moments{}.init(2.0)),
                         [&](std::string_view name, const auto& v) {
                           if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::uint64_t>)
                             count = v;
                           else if (name == "variance")
                             variance = v;
                         });
  BOOST_TEST(count == 1u);
  BOOST_TEST(std::isnan(variance));
}
