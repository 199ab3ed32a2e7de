/// The single-pass loops behind the reductions on tensors (detail/reduce_loops.hpp), torch-free:
/// the AVX2 versions (when the CPU has AVX2) against the portable ones and against the scalar
/// `value_ops<double>` arithmetic, on sizes that leave vector tails, with NaN, infinities and
/// values on and next to bin edges.
#define BOOST_TEST_MODULE detail_reduce_loops
#include <boost/test/unit_test.hpp>

#include "../policies/splitmix.hpp"

#include <recorder/detail/reduce_loops.hpp>
#include <recorder/policies/reduction/value_ops.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

namespace loops = recorder::detail::loops;
using recorder::testing::SplitMix;

namespace {

constexpr std::size_t sizes[] = {0, 1, 3, 7, 8, 9, 15, 16, 17, 255, 256, 257, 1000, 4099};
constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_f = std::numeric_limits<float>::infinity();

template <class S>
std::vector<S> uniform(SplitMix& g, std::size_t n, double offset, double scale) {
  std::vector<S> x(n);
  for (auto& v : x) v = static_cast<S>(offset + scale * (g.uniform() - 0.5));
  return x;
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

BOOST_AUTO_TEST_CASE(welford_matches_the_scalar_update) {
  using ops = recorder::reduce::value_ops<double>;
  SplitMix g{7};
  for (const std::size_t n : sizes) {
    std::vector<double> mean(n), m2(n, 0.0), mean_f(n), m2_f(n, 0.0), mean_d(n), m2_d(n, 0.0);
    const auto first = uniform<float>(g, n, 1000.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) mean[i] = mean_f[i] = mean_d[i] = first[i];
    for (std::uint64_t count = 2; count <= 50; ++count) {
      const auto x = uniform<float>(g, n, 1000.0, 1.0);
      const std::vector<double> xd(x.begin(), x.end());
      loops::welford(mean_f.data(), m2_f.data(), x.data(), n, static_cast<double>(count));
      loops::welford(mean_d.data(), m2_d.data(), xd.data(), n, static_cast<double>(count));
      for (std::size_t i = 0; i < n; ++i) ops::welford_update(mean[i], m2[i], xd[i], count);
    }
    for (std::size_t i = 0; i < n; ++i) {
      // FMA (the AVX2 loop) against a multiply and an add: a few ulps over 50 steps.
      BOOST_TEST(std::abs(mean_f[i] - mean[i]) <= 1e-14 * std::abs(mean[i]));
      BOOST_TEST(std::abs(m2_f[i] - m2[i]) <= 1e-9 * m2[i]);
      BOOST_TEST(mean_d[i] == mean_f[i]);
      BOOST_TEST(m2_d[i] == m2_f[i]);
    }
  }
}

BOOST_AUTO_TEST_CASE(min_max_matches_the_portable_loop_and_propagates_nan) {
  SplitMix g{11};
  for (const std::size_t n : sizes) {
    auto lo = uniform<float>(g, n, 0.0, 2.0);
    auto hi = lo;
    auto lo_p = lo, hi_p = lo;
    std::vector<double> lo_d(lo.begin(), lo.end()), hi_d = lo_d, lo_dp = lo_d, hi_dp = lo_d;
    for (int pass = 0; pass < 20; ++pass) {
      auto x = uniform<float>(g, n, 0.0, 2.0 + pass);
      if (n > 0 && pass % 5 == 2) x[g.next() % n] = nan_f;
      if (n > 0 && pass == 7) x[g.next() % n] = -inf_f;
      const std::vector<double> xd(x.begin(), x.end());
      loops::min_max(lo.data(), hi.data(), x.data(), n);
      loops::min_max_portable(lo_p.data(), hi_p.data(), x.data(), n);
      loops::min_max(lo_d.data(), hi_d.data(), xd.data(), n);
      loops::min_max_portable(lo_dp.data(), hi_dp.data(), xd.data(), n);
      // Against value_ops' scalar min/max, element by element.
      for (std::size_t i = 0; i < n; ++i) {
        BOOST_TEST(same(lo[i], lo_p[i]));
        BOOST_TEST(same(hi[i], hi_p[i]));
        BOOST_TEST(same(lo_d[i], lo[i]));
        BOOST_TEST(same(hi_d[i], hi[i]));
        BOOST_TEST(same(lo_dp[i], lo[i]));
        BOOST_TEST(same(hi_dp[i], hi[i]));
      }
    }
    // A NaN stays, whatever comes after it.
    std::size_t nans = 0;
    for (std::size_t i = 0; i < n; ++i) nans += std::isnan(lo[i]) && std::isnan(hi[i]);
    const auto x = uniform<float>(g, n, 0.0, 100.0);
    loops::min_max(lo.data(), hi.data(), x.data(), n);
    std::size_t after = 0;
    for (std::size_t i = 0; i < n; ++i) after += std::isnan(lo[i]) && std::isnan(hi[i]);
    BOOST_TEST(after == nans);
    if (n >= 16) BOOST_TEST(nans > 0u);
  }
}

BOOST_AUTO_TEST_CASE(min_max_writes_a_single_changed_element) {
  std::vector<float> lo(64, -1.0f), hi(64, 1.0f), x(64, 0.0f);
  loops::min_max(lo.data(), hi.data(), x.data(), x.size());
  BOOST_TEST(lo == std::vector<float>(64, -1.0f));
  x[37] = 2.0f;
  x[5] = -3.0f;
  loops::min_max(lo.data(), hi.data(), x.data(), x.size());
  for (std::size_t i = 0; i < 64; ++i) {
    BOOST_TEST(lo[i] == (i == 5 ? -3.0f : -1.0f));
    BOOST_TEST(hi[i] == (i == 37 ? 2.0f : 1.0f));
  }
}

namespace {

/// Values that stress the float loop: around a normal bell, exactly on bin edges (as float)
/// and a few ulps either side, on `lo` and `hi`, zeros, NaN and infinities.
std::vector<float> edgy(SplitMix& g, std::size_t n, std::int64_t bins, double lo, double hi) {
  std::vector<float> x(n);
  for (auto& v : x) {
    const auto kind = g.next() % 10;
    if (kind < 4) {
      v = static_cast<float>(lo + (hi - lo) * (0.5 + 0.3 * (g.uniform() + g.uniform() - 1.0)));
    } else if (kind < 7) {
      const auto k = static_cast<double>(g.next() % static_cast<std::uint64_t>(bins + 1));
      v = static_cast<float>(lo + (hi - lo) * k / static_cast<double>(bins));
      for (auto step = static_cast<int>(g.next() % 7) - 3; step != 0; step += step > 0 ? -1 : 1)
        v = std::nextafter(v, step > 0 ? inf_f : -inf_f);
    } else if (kind == 7) {
      v = g.next() % 2 ? static_cast<float>(lo) : static_cast<float>(hi);
    } else if (kind == 8) {
      v = 0.0f;
    } else {
      const float special[] = {nan_f, inf_f, -inf_f, -0.0f};
      v = special[g.next() % 4];
    }
  }
  return x;
}

}  // namespace

BOOST_AUTO_TEST_CASE(float_histogram_equals_histc_in_double) {
  SplitMix g{3};
  struct Range {
    double lo, hi;
    std::int64_t bins;
  };
  std::vector<Range> ranges = {
      {-4.0, 4.0, 64},   {0.0, 1.0, 4},         {-1.5, 1.5, 10},          {1e-3, 7.1, 100},
      {0.0, 6.0, 1},     {1000.0, 1000.01, 50}, {-1e-30, 1e-30, 7},       {-3.0, 5.0, 1024},
      {-3.0, 5.0, 1025}, {-1e300, 1e300, 8},    {0.0, 1.0, (1 << 20) + 1}};
  for (int i = 0; i < 300; ++i) {
    const double lo = 10.0 * (g.uniform() - 0.5);
    ranges.push_back({lo, lo + std::exp(12.0 * (g.uniform() - 0.5)),
                      1 + static_cast<std::int64_t>(g.next() % 300)});
  }
  for (const auto& [lo, hi, bins] : ranges) {
    for (const std::size_t n :
         {std::size_t{1}, std::size_t{9}, std::size_t{300}, std::size_t{3001}}) {
      const auto x = edgy(g, n, bins, lo, hi);
      // Either histc expression (1.13's and 2.x's): the float loop rechecks with the one asked.
      for (const auto rule : {loops::HistcRule::divide_first, loops::HistcRule::multiply_first}) {
        std::vector<std::int64_t> got(static_cast<std::size_t>(bins), 5), want = got;
        loops::histogram(got.data(), x.data(), n, bins, lo, hi, rule);
        loops::histogram_exact(want.data(), x.data(), n, bins, lo, hi, rule);
        BOOST_TEST(got == want, "lo " << lo << ", hi " << hi << ", bins " << bins << ", n " << n
                                      << ", rule " << static_cast<int>(rule));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(portable_float_slots_are_exact) {
  SplitMix g{5};
  for (const auto& [lo, hi, bins] :
       {std::tuple{-4.0, 4.0, std::int64_t{64}}, std::tuple{-1.5, 1.5, std::int64_t{10}},
        std::tuple{1e-3, 7.1, std::int64_t{3}}}) {
    loops::FloatBins b{};
    BOOST_REQUIRE(loops::FloatBins::make(bins, lo, hi, b));
    const auto x = edgy(g, 5000, bins, lo, hi);
    std::vector<std::int32_t> slot(x.size());
    loops::Recheck again;
    loops::float_slots_portable(slot.data(), x.data(), x.size(), b, again);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::int32_t counted = slot[i] == bins + 1 ? 0 : slot[i];  // above hi: not counted
      BOOST_TEST(counted == b.exact_slot(x[i]), "x = " << x[i]);
    }
  }
}

// libtorch 1.13 divides by the range first, 2.x multiplies by the bin count first: -0.3 of
// [-1.5, 1.5] in 10 bins is 1.2 / 3 * 10 = 3.9999999999999996 one way, 1.2 * 10 / 3 = 4 the other.
BOOST_AUTO_TEST_CASE(the_two_histc_expressions_differ_at_a_bin_edge) {
  const double v = -0.30000000000000004;
  BOOST_TEST(loops::histc_bin(v, -1.5, 1.5, 10, loops::HistcRule::divide_first) == 3);
  BOOST_TEST(loops::histc_bin(v, -1.5, 1.5, 10, loops::HistcRule::multiply_first) == 4);
  std::vector<std::int64_t> one(10, 0), other(10, 0);
  const double vd[] = {v};
  loops::histogram(one.data(), vd, 1, 10, -1.5, 1.5, loops::HistcRule::divide_first);
  loops::histogram(other.data(), vd, 1, 10, -1.5, 1.5, loops::HistcRule::multiply_first);
  BOOST_TEST(one[3] == 1);
  BOOST_TEST(other[4] == 1);
}

BOOST_AUTO_TEST_CASE(double_histogram_is_histc) {
  std::vector<double> x = {0.0, 0.25, 0.5, 1.0, 1.0, -0.5, 2.0, std::nan("")};
  std::vector<std::int64_t> counts(4, 0);
  loops::histogram(counts.data(), x.data(), x.size(), 4, 0.0, 1.0);
  BOOST_TEST(counts == (std::vector<std::int64_t>{1, 1, 1, 2}), boost::test_tools::per_element());
}
