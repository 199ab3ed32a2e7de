/// The reductions on at::Tensor (tensor/value_ops.hpp): against ATen computing the same
/// thing on the stacked values, with inputs that are views, require grad, or change shape.
#define BOOST_TEST_MODULE tensor_value_ops
#include <boost/test/unit_test.hpp>

#include "../policies/splitmix.hpp"

#include <recorder/tensor/value_ops.hpp>
#include <recorder/policies/reduction.hpp>

#include <ATen/core/Tensor.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/full.h>
#include <ATen/ops/histc.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/quantile.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace reduce = recorder::reduce;

namespace {

static_assert(reduce::reducible<at::Tensor>);
static_assert(reduce::mergeable_reduction<reduce::KeepAll, at::Tensor> &&
              reduce::mergeable_reduction<reduce::Last, at::Tensor> &&
              reduce::mergeable_reduction<reduce::Sum, at::Tensor> &&
              reduce::mergeable_reduction<reduce::Mean, at::Tensor> &&
              reduce::mergeable_reduction<reduce::Moments, at::Tensor> &&
              reduce::mergeable_reduction<reduce::MinMax, at::Tensor> &&
              reduce::mergeable_reduction<reduce::Histogram, at::Tensor> &&
              reduce::mergeable_reduction<reduce::AbsMax, at::Tensor> &&
              reduce::mergeable_reduction<reduce::Quantile, at::Tensor>);
static_assert(std::is_same_v<reduce::result_t<reduce::Quantile, at::Tensor>,
                             reduce::QuantileResult<at::Tensor>>);
static_assert(reduce::has_min_max_into<at::Tensor> && !reduce::has_min_max_into<double>);
static_assert(std::is_same_v<reduce::result_t<reduce::Moments, at::Tensor>,
                             reduce::MomentsResult<at::Tensor>>);
static_assert(
    std::is_same_v<reduce::result_t<reduce::KeepAll, at::Tensor>, const std::vector<at::Tensor>&>);

using recorder::testing::SplitMix;

/// A float32 tensor of shape `sizes`, elements `offset + scale * (u - 0.5)` with u uniform in [0, 1).
at::Tensor make(SplitMix& g, at::IntArrayRef sizes, double offset = 0, double scale = 4) {
  at::Tensor t = at::empty(sizes, at::kFloat);
  float* p = t.data_ptr<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i)
    p[i] = static_cast<float>(offset + scale * (g.uniform() - 0.5));
  return t;
}

std::vector<at::Tensor> values(std::size_t n, std::uint64_t seed = 1, double offset = 0,
                               double scale = 4) {
  SplitMix g{seed};
  std::vector<at::Tensor> xs;
  for (std::size_t i = 0; i < n; ++i) xs.push_back(make(g, {4, 8}, offset, scale));
  return xs;
}

template <class R>
auto run(const R& r, const std::vector<at::Tensor>& xs, std::size_t begin = 0,
         std::size_t end = SIZE_MAX) {
  end = std::min(end, xs.size());
  auto s = r.init(xs[begin]);
  for (std::size_t i = begin + 1; i < end; ++i) r.update(s, xs[i]);
  return s;
}

/// Within `rel` of `want`, elementwise, relative to |want|.
bool near(const at::Tensor& got, const at::Tensor& want, double rel) {
  return got.sizes() == want.sizes() && got.to(at::kDouble)
                                            .sub(want.to(at::kDouble))
                                            .abs()
                                            .le(want.to(at::kDouble).abs().mul(rel))
                                            .all()
                                            .item<bool>();
}

/// A plain accumulator: no autograd, no graph.
bool plain(const at::Tensor& t) { return t.defined() && !t.requires_grad() && !t.grad_fn(); }

/// Owns its storage, exactly its bytes (no view of a larger base).
bool owns_storage(const at::Tensor& t) {
  return t.is_contiguous() && t.storage().nbytes() == t.nbytes();
}

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no exception";
}

}  // namespace

BOOST_AUTO_TEST_CASE(sum_and_mean_match_the_stacked_values) {
  const auto xs = values(20);
  const at::Tensor stacked = at::stack(xs);
  const reduce::Sum sum;
  auto s = run(sum, xs);
  BOOST_TEST(sum.count(s) == 20u);
  BOOST_TEST(at::allclose(sum.result(s), stacked.sum(0), 1e-5, 1e-5));
  const reduce::Mean mean;
  auto m = run(mean, xs);
  BOOST_TEST(at::allclose(mean.result(m), stacked.mean(0), 1e-5, 1e-6));
  BOOST_TEST(mean.result(m).scalar_type() == at::kFloat);

  // Merge: sums of halves.
  auto a = run(sum, xs, 0, 7);
  sum.merge(a, run(sum, xs, 7));
  BOOST_TEST(sum.count(a) == 20u);
  BOOST_TEST(at::allclose(sum.result(a), stacked.sum(0), 1e-5, 1e-5));
  auto ma = run(mean, xs, 0, 13);
  mean.merge(ma, run(mean, xs, 13));
  BOOST_TEST(at::allclose(mean.result(ma), stacked.mean(0), 1e-5, 1e-6));

  // A result is a copy: later updates leave it alone.
  const at::Tensor before = sum.result(s);
  const at::Tensor kept = before.clone();
  sum.update(s, xs[0]);
  BOOST_TEST(at::equal(before, kept));
}

BOOST_AUTO_TEST_CASE(welford_over_ten_thousand_float_tensors_matches_two_passes_in_double) {
  // A large offset, where float32 sums of squares are hopeless.
  const auto xs = values(10'000, 3, 1000.0, 1.0);
  const at::Tensor stacked = at::stack(xs).to(at::kDouble);
  const double n = static_cast<double>(xs.size());
  const at::Tensor mean = stacked.sum(0).div(n);
  const at::Tensor var = stacked.sub(mean).square().sum(0).div(n - 1);

  const reduce::Moments r;
  auto s = run(r, xs);
  const auto got = r.result(s);
  BOOST_TEST(got.count == xs.size());
  BOOST_TEST(got.mean.scalar_type() == at::kDouble);
  BOOST_TEST(near(got.mean, mean, 1e-12));
  BOOST_TEST(near(got.variance, var, 1e-6));

  auto a = run(r, xs, 0, 5'000);
  r.merge(a, run(r, xs, 5'000));
  const auto merged = r.result(a);
  BOOST_TEST(merged.count == xs.size());
  BOOST_TEST(near(merged.mean, got.mean, 1e-12));
  BOOST_TEST(near(merged.variance, got.variance, 1e-9));

  // The fused loop (contiguous float32) and the ATen fallback (here: transposed views and
  // float64) agree.
  auto fused = run(r, xs, 0, 100);
  auto viaview = r.init(xs[0].t().contiguous().t());
  auto viadouble = r.init(xs[0].to(at::kDouble));
  for (std::size_t i = 1; i < 100; ++i) {
    r.update(viaview, xs[i].t().contiguous().t());
    r.update(viadouble, xs[i].to(at::kDouble));
  }
  BOOST_TEST(at::allclose(r.result(viaview).variance, r.result(fused).variance, 1e-12, 0));
  BOOST_TEST(at::allclose(r.result(viadouble).variance, r.result(fused).variance, 1e-12, 0));
  BOOST_TEST(at::allclose(r.result(viaview).mean, r.result(fused).mean, 1e-14, 0));
}

BOOST_AUTO_TEST_CASE(moments_of_integer_tensors_and_nan_variance) {
  const reduce::Moments r;
  const at::Tensor one = at::zeros({3}, at::kLong).add_(2);
  auto s = r.init(one);
  BOOST_TEST(r.result(s).variance.isnan().all().item<bool>());
  r.update(s, at::zeros({3}, at::kLong).add_(4));
  BOOST_TEST(at::equal(r.result(s).mean, at::zeros({3}, at::kDouble).add_(3)));
  BOOST_TEST(at::equal(r.result(s).variance, at::zeros({3}, at::kDouble).add_(2)));
}

BOOST_AUTO_TEST_CASE(min_max_match_the_stacked_values_and_propagate_nan) {
  auto xs = values(15);
  const at::Tensor stacked = at::stack(xs);
  const reduce::MinMax r;
  auto s = run(r, xs);
  BOOST_TEST(at::equal(r.result(s).min, stacked.amin(0)));
  BOOST_TEST(at::equal(r.result(s).max, stacked.amax(0)));
  auto a = run(r, xs, 0, 4);
  r.merge(a, run(r, xs, 4));
  BOOST_TEST(at::equal(r.result(a).min, stacked.amin(0)));
  BOOST_TEST(at::equal(r.result(a).max, stacked.amax(0)));

  // Non-contiguous and integer inputs take ATen's minimum/maximum: same answers.
  auto v = run(
      r, std::vector<at::Tensor>{xs[0].t().contiguous().t(), xs[1].t().contiguous().t(), xs[2]});
  auto f = run(r, std::vector<at::Tensor>{xs[0], xs[1], xs[2]});
  BOOST_TEST(at::equal(r.result(v).min, r.result(f).min));
  BOOST_TEST(at::equal(r.result(v).max, r.result(f).max));

  at::Tensor with_nan = xs[3].clone();
  with_nan[1][2] = std::numeric_limits<float>::quiet_NaN();
  r.update(s, with_nan);
  r.update(s, xs[4]);
  BOOST_TEST(std::isnan(r.result(s).min[1][2].item<float>()));
  BOOST_TEST(std::isnan(r.result(s).max[1][2].item<float>()));
  BOOST_TEST(!std::isnan(r.result(s).max[1][3].item<float>()));
}

// Quantile over tensors (`recorder record --reduce quantile`): each element's quantile over the
// values, as torch.quantile of the stacked values along the first dimension, in float64.
BOOST_AUTO_TEST_CASE(quantile_is_each_elements_quantile_over_the_values) {
  SplitMix g(41);
  std::vector<at::Tensor> xs;
  for (int i = 0; i < 7; ++i) xs.push_back(make(g, {3, 5}));
  const at::Tensor stacked = at::stack(xs, 0).to(at::kDouble);
  for (const double q : {0.0, 0.3, 0.5, 0.9, 1.0}) {
    BOOST_TEST_CONTEXT("q " << q) {
      const reduce::Quantile r{.q = q};
      auto s = r.init(xs[0]);
      for (std::size_t i = 1; i < xs.size(); ++i) r.update(s, xs[i]);
      const auto got = r.result(s);
      BOOST_TEST(got.q == q);
      BOOST_TEST(got.value.scalar_type() == at::kDouble);
      BOOST_TEST((got.value.sizes() == at::IntArrayRef{3, 5}));
      BOOST_TEST(at::allclose(got.value, at::quantile(stacked, q, 0), 1e-12, 0));
      // Element by element, the quantile of the numbers.
      const at::Tensor column = stacked.select(1, 2).select(1, 4).contiguous();
      std::vector<double> numbers(column.data_ptr<double>(), column.data_ptr<double>() + 7);
      BOOST_TEST(got.value[2][4].item<double>() == reduce::value_ops<double>::quantile(numbers, q),
                 boost::test_tools::tolerance(1e-12));
    }
  }
}

BOOST_AUTO_TEST_CASE(quantile_keeps_copies_sorts_nan_last_and_needs_one_shape) {
  at::Tensor x = at::arange(4, at::kFloat);  // 0 1 2 3
  const reduce::Quantile median;
  auto s = median.init(x);
  x.mul_(10);                     // the state kept a copy
  median.update(s, x.view({4}));  // 0 10 20 30
  at::Tensor nan = at::arange(4, at::kFloat);
  nan[1] = std::numeric_limits<float>::quiet_NaN();
  median.update(s, nan.requires_grad_());  // 0 NaN 2 3
  const at::Tensor m = median.result(s).value;
  BOOST_TEST(!m.requires_grad());
  // Per element, sorted with NaN last: {0, 0, 0}, {1, 10, NaN}, {2, 2, 20}, {3, 3, 30}.
  BOOST_TEST(m[0].item<double>() == 0.0);
  BOOST_TEST(m[1].item<double>() == 10.0);
  BOOST_TEST(m[2].item<double>() == 2.0);
  BOOST_TEST(m[3].item<double>() == 3.0);
  BOOST_TEST(std::isnan(reduce::Quantile{.q = 1.0}.result(s).value[1].item<double>()));
  // Merging appends the other's values.
  auto other = median.init(at::full({4}, 100.0f));
  median.update(other, at::full({4}, 100.0f));
  median.merge(s, other);
  BOOST_TEST(median.count(s) == 5u);
  BOOST_TEST(median.result(s).value[0].item<double>() == 0.0);   // 0 0 0 100 100
  BOOST_TEST(median.result(s).value[3].item<double>() == 30.0);  // 3 3 30 100 100
  median.update(s, at::zeros({2, 2}));
  BOOST_CHECK_THROW(median.result(s), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(histogram_equals_summed_histc) {
  const auto xs = values(30);
  const reduce::Histogram r{16, -1.5, 1.5};  // values span [-2, 2): some fall outside
  auto s = run(r, xs);
  at::Tensor want = at::zeros({16}, at::kLong);
  for (const at::Tensor& x : xs)
    want.add_(at::histc(x.to(at::kDouble), 16, -1.5, 1.5).to(at::kLong));
  const auto got = r.result(s);
  BOOST_TEST(got.counts.scalar_type() == at::kLong);
  BOOST_TEST(at::equal(got.counts, want));
  BOOST_TEST(got.bins == 16u);

  // Edges: lo in the first bin, hi in the last, outside and NaN not counted.
  const reduce::Histogram unit{4, 0.0, 1.0};
  at::Tensor edges = at::zeros({8}, at::kFloat);
  const float special[] = {0.0f, 0.25f, 0.5f, 1.0f,
                           1.0f, -0.5f, 2.0f, std::numeric_limits<float>::quiet_NaN()};
  for (int i = 0; i < 8; ++i) edges[i] = special[i];
  const at::Tensor counts = unit.result(unit.init(edges)).counts;
  // (libtorch 1.13's histc counts NaN in the first bin: compare without it.)
  BOOST_TEST(at::equal(
      counts, at::histc(edges.narrow(0, 0, 7).to(at::kDouble), 4, 0.0, 1.0).to(at::kLong)));
  BOOST_TEST(counts[3].item<std::int64_t>() == 2);
  BOOST_TEST(counts.sum().item<std::int64_t>() == 5);
  const at::Tensor strided = at::stack({edges, edges}, 1).select(1, 0);  // the ATen fallback
  BOOST_TEST(!strided.is_contiguous());
  BOOST_TEST(at::equal(unit.result(unit.init(strided)).counts, counts));

  // Values on and next to bin edges land where histc puts them, on both paths.
  for (const auto& [lo, hi] : {std::pair{0.0, 1.0}, {-1.5, 1.5}, {1e-3, 7.1}}) {
    for (const std::int64_t bins : {3, 10, 100}) {
      const at::Tensor sweep = at::arange(0, 20001, at::kDouble).mul((hi - lo) / 20000).add(lo);
      const reduce::Histogram h{static_cast<std::size_t>(bins), lo, hi};
      const at::Tensor want_sweep = at::histc(sweep, bins, lo, hi).to(at::kLong);
      BOOST_TEST(at::equal(h.result(h.init(sweep)).counts, want_sweep),
                 "lo " << lo << ", bins " << bins);
      BOOST_TEST(at::equal(h.result(h.init(at::stack({sweep, sweep}, 1).select(1, 1))).counts,
                           want_sweep));
      const at::Tensor sweep32 = sweep.to(at::kFloat);
      BOOST_TEST(at::equal(h.result(h.init(sweep32)).counts,
                           at::histc(sweep32.to(at::kDouble), bins, lo, hi).to(at::kLong)));
    }
  }

  // The fallback (non-contiguous, integer) agrees with the fused loop.
  auto viaview = run(r, std::vector<at::Tensor>{xs[0].t().contiguous().t(), xs[1]});
  auto fused = run(r, std::vector<at::Tensor>{xs[0], xs[1]});
  BOOST_TEST(at::equal(r.result(viaview).counts, r.result(fused).counts));
  const reduce::Histogram ints{4, 0.0, 4.0};
  const at::Tensor iv = at::zeros({5}, at::kInt).add_(3);
  at::Tensor five_in_bin_3 = at::zeros({4}, at::kLong);
  five_in_bin_3[3] = 5;
  BOOST_TEST(at::equal(ints.result(ints.init(iv)).counts, five_in_bin_3));

  // Merge: counts add.
  auto a = run(r, xs, 0, 11);
  r.merge(a, run(r, xs, 11));
  BOOST_TEST(at::equal(r.result(a).counts, want));
}

// The loops of detail/reduce_loops.hpp work in vectors of 4 or 8 elements: sizes that leave a
// tail, in float32 and float64, against ATen on the same values.
BOOST_AUTO_TEST_CASE(single_pass_loops_agree_with_aten_on_odd_sizes) {
  SplitMix g{23};
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    std::vector<at::Tensor> xs;
    for (int i = 0; i < 40; ++i) xs.push_back(make(g, {3, 7}, 10.0, 4.0).to(dtype));
    const at::Tensor stacked = at::stack(xs);

    const reduce::Moments moments;
    auto fused = run(moments, xs);
    auto viaview = moments.init(xs[0].t().contiguous().t());
    for (std::size_t i = 1; i < xs.size(); ++i) moments.update(viaview, xs[i].t().contiguous().t());
    BOOST_TEST(at::allclose(moments.result(fused).mean, moments.result(viaview).mean, 1e-14, 0));
    BOOST_TEST(
        at::allclose(moments.result(fused).variance, moments.result(viaview).variance, 1e-12, 0));

    const reduce::MinMax minmax;
    auto s = run(minmax, xs);
    BOOST_TEST(at::equal(minmax.result(s).min, stacked.amin(0)));
    BOOST_TEST(at::equal(minmax.result(s).max, stacked.amax(0)));
    at::Tensor with_nan = xs[5].clone();
    with_nan[2][6] = std::numeric_limits<double>::quiet_NaN();  // in the tail
    minmax.update(s, with_nan);
    minmax.update(s, xs[6]);
    BOOST_TEST(std::isnan(minmax.result(s).min[2][6].item<double>()));
    BOOST_TEST(std::isnan(minmax.result(s).max[2][6].item<double>()));
    BOOST_TEST(!std::isnan(minmax.result(s).max[2][5].item<double>()));
  }

  // Float32 values on bin edges, a few ulps either side, NaN and infinities: histc's counts.
  const double lo = -1.5, hi = 1.5;
  const std::int64_t bins = 10;
  at::Tensor edges = at::empty({3, 7, 11}, at::kFloat);
  float* p = edges.data_ptr<float>();
  for (std::int64_t i = 0; i < edges.numel(); ++i) {
    float v = static_cast<float>(lo + (hi - lo) * static_cast<double>(i % (bins + 1)) / bins);
    for (std::int64_t step = i % 5 - 2; step != 0; step += step > 0 ? -1 : 1)
      v = std::nextafter(v, step > 0 ? 1e9f : -1e9f);
    p[i] = v;
  }
  p[3] = std::numeric_limits<float>::quiet_NaN();
  p[8] = std::numeric_limits<float>::infinity();
  p[13] = -std::numeric_limits<float>::infinity();
  const reduce::Histogram h{static_cast<std::size_t>(bins), lo, hi};
  at::Tensor finite = edges.to(at::kDouble).flatten();
  finite = finite.masked_select(finite.isfinite());
  BOOST_TEST(
      at::equal(h.result(h.init(edges)).counts, at::histc(finite, bins, lo, hi).to(at::kLong)));
}

BOOST_AUTO_TEST_CASE(keep_all_copies_are_independent_contiguous_and_own_their_storage) {
  SplitMix g{5};
  at::Tensor x = make(g, {4, 8});
  const at::Tensor original = x.clone();
  const reduce::KeepAll r;
  auto s = r.init(x);
  x.add_(1);  // an in-place change after recording
  BOOST_TEST(at::equal(r.result(s)[0], original));

  const at::Tensor base = make(g, {16, 8});
  const at::Tensor narrow = base.narrow(0, 4, 4);
  const at::Tensor transposed = base.t();
  r.update(s, narrow);
  r.update(s, transposed);
  const auto& kept = r.result(s);
  BOOST_TEST(kept.size() == 3u);
  for (const at::Tensor& k : kept) BOOST_TEST(owns_storage(k));
  BOOST_TEST(at::equal(kept[1], narrow));
  BOOST_TEST(at::equal(kept[2], transposed));
  BOOST_TEST(!narrow.is_alias_of(kept[1]));

  // Last and Custom keep copies too.
  const reduce::Last last;
  auto l = last.init(narrow);
  BOOST_TEST(owns_storage(last.result(l)));
  last.update(l, transposed);  // another shape: a fresh copy
  BOOST_TEST(at::equal(last.result(l), transposed));
  const auto identity = reduce::custom([](at::Tensor, const at::Tensor& v) { return v; });
  auto c = identity.init(x);
  at::Tensor y = x.clone();
  identity.update(c, y);
  y.add_(100);
  BOOST_TEST(at::equal(identity.result(c), x));
}

BOOST_AUTO_TEST_CASE(keep_all_cap_counts_tensor_bytes) {
  const auto xs = values(3);  // 4 x 8 float32: 128 bytes each
  const reduce::KeepAll r{.max_bytes = 256};
  auto s = run(r, xs, 0, 2);
  BOOST_CHECK_EXCEPTION(r.update(s, xs[2]), reduce::CapacityExceeded,
                        [](const reduce::CapacityExceeded& e) {
                          return e.cap() == 256 && e.kept() == 2 && e.needed() == 128 &&
                                 std::string(e.what()) ==
                                     "keep-all memory cap of 256 bytes exceeded after 2 samples "
                                     "(the next needs 128 bytes)";
                        });
  BOOST_TEST(r.count(s) == 2u);
  BOOST_TEST(at::equal(r.result(s)[1], xs[1]));
}

BOOST_AUTO_TEST_CASE(inputs_that_require_grad_leave_plain_accumulators) {
  SplitMix g{9};
  const at::Tensor leaf = make(g, {4, 8}).requires_grad_(true);
  const at::Tensor y = leaf.mul(2);  // has a grad_fn
  const at::Tensor y2 = leaf.mul(3);
  BOOST_TEST_REQUIRE(y.requires_grad());

  const reduce::KeepAll keep;
  auto k = keep.init(y);
  keep.update(k, y2);
  for (const at::Tensor& t : keep.result(k)) BOOST_TEST(plain(t));
  const reduce::Last last;
  auto l = last.init(y);
  last.update(l, y2);
  BOOST_TEST(plain(l.value));
  const reduce::Sum sum;
  auto s = sum.init(y);
  sum.update(s, y2);
  BOOST_TEST(plain(s.value));
  BOOST_TEST(plain(sum.result(s)));
  const reduce::Mean mean;
  auto m = mean.init(y);
  mean.update(m, y2);
  BOOST_TEST(plain(m.value));
  BOOST_TEST(plain(mean.result(m)));
  const reduce::Moments moments;
  auto mo = moments.init(y);
  moments.update(mo, y2);
  moments.merge(mo, moments.init(y));
  BOOST_TEST(plain(mo.mean));
  BOOST_TEST(plain(mo.m2));
  BOOST_TEST(plain(moments.result(mo).variance));
  const reduce::MinMax minmax;
  auto mm = minmax.init(y);
  minmax.update(mm, y2);
  BOOST_TEST(plain(mm.min));
  BOOST_TEST(plain(mm.max));
  const reduce::Histogram hist{8, -4.0, 4.0};
  auto h = hist.init(y);
  hist.update(h, y2);
  BOOST_TEST(plain(h.counts));
  const auto running_max =
      reduce::custom([](at::Tensor acc, const at::Tensor& x) { return at::maximum(acc, x); });
  auto c = running_max.init(y);
  running_max.update(c, y2);
  BOOST_TEST(plain(c.value));
  BOOST_TEST(at::equal(c.value, at::maximum(y, y2).detach()));

  // The recorded graph is untouched: backward still works through y and y2.
  y.add(y2).sum().backward();
  BOOST_TEST(at::allclose(leaf.grad(), at::zeros({4, 8}).add_(5)));
}

BOOST_AUTO_TEST_CASE(shape_mismatch_throws_before_any_change) {
  const auto xs = values(2);
  SplitMix g{11};
  const at::Tensor other = make(g, {8});
  const at::Tensor wrong = make(g, {2, 16});

  const reduce::Sum sum;
  auto s = run(sum, xs);
  const at::Tensor before = s.value.clone();
  const std::string what = message_of([&] { sum.update(s, other); });
  BOOST_TEST(what.find("shape mismatch") != std::string::npos, what);
  BOOST_TEST(what.find("[4, 8]") != std::string::npos, what);
  BOOST_TEST(what.find("[8]") != std::string::npos, what);
  BOOST_CHECK_THROW(sum.update(s, wrong), std::invalid_argument);  // same numel, other shape
  BOOST_TEST(at::equal(s.value, before));
  BOOST_TEST(sum.count(s) == 2u);

  const reduce::Mean mean;
  auto m = run(mean, xs);
  BOOST_CHECK_THROW(mean.update(m, other), std::invalid_argument);
  BOOST_TEST(mean.count(m) == 2u);

  const reduce::Moments moments;
  auto mo = run(moments, xs);
  const at::Tensor mean_before = mo.mean.clone(), m2_before = mo.m2.clone();
  BOOST_CHECK_THROW(moments.update(mo, other), std::invalid_argument);
  BOOST_CHECK_THROW(moments.merge(mo, moments.init(other)), std::invalid_argument);
  BOOST_TEST(at::equal(mo.mean, mean_before));
  BOOST_TEST(at::equal(mo.m2, m2_before));
  BOOST_TEST(moments.count(mo) == 2u);

  const reduce::MinMax minmax;
  auto mm = run(minmax, xs);
  const at::Tensor min_before = mm.min.clone(), max_before = mm.max.clone();
  BOOST_CHECK_THROW(minmax.update(mm, other), std::invalid_argument);
  BOOST_TEST(at::equal(mm.min, min_before));
  BOOST_TEST(at::equal(mm.max, max_before));
  BOOST_TEST(minmax.count(mm) == 2u);

  // Keep-all, last and histogram take values of any shape.
  const reduce::Histogram hist{4, -1.0, 1.0};
  auto h = run(hist, xs);
  hist.update(h, other);
  BOOST_TEST(hist.count(h) == 3u);
}

BOOST_AUTO_TEST_CASE(copies_of_states_are_independent) {
  const auto xs = values(4);
  const reduce::Sum sum;
  auto s = run(sum, xs, 0, 2);
  const at::Tensor before = sum.result(s);
  auto copy = s;  // shares the accumulator until one of them writes
  sum.update(copy, xs[2]);
  BOOST_TEST(at::equal(sum.result(s), before));
  sum.update(s, xs[3]);
  BOOST_TEST(at::allclose(sum.result(copy), before.add(xs[2])));
  BOOST_TEST(at::allclose(sum.result(s), before.add(xs[3])));

  const reduce::Moments moments;
  auto mo = run(moments, xs, 0, 2);
  const auto mo_before = moments.result(mo);
  auto mo_copy = mo;
  moments.update(mo_copy, xs[2]);
  BOOST_TEST(at::equal(moments.result(mo).mean, mo_before.mean));
  BOOST_TEST(at::equal(moments.result(mo).variance, mo_before.variance));

  const reduce::Last last;
  auto l = last.init(xs[0]);
  auto l_copy = l;
  last.update(l_copy, xs[1]);
  BOOST_TEST(at::equal(last.result(l), xs[0]));

  const reduce::Histogram hist{4, -1.0, 1.0};
  auto h = hist.init(xs[0]);
  const at::Tensor h_before = hist.result(h).counts;
  auto h_copy = h;
  hist.update(h_copy, xs[1]);
  BOOST_TEST(at::equal(hist.result(h).counts, h_before));

  const auto in_place =
      reduce::custom([](at::Tensor acc, const at::Tensor& x) { return acc.add_(x); });
  auto c = in_place.init(xs[0]);
  auto c_copy = c;
  in_place.update(c_copy, xs[1]);
  BOOST_TEST(at::equal(in_place.result(c), xs[0]));
  BOOST_TEST(at::allclose(in_place.result(c_copy), xs[0].add(xs[1])));
}
