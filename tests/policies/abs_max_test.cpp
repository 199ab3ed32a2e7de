// reduce::AbsMax, a reduction added by its header alone: the laws kit, NaN, and what the
// library derives from the fields its state and result describe — the wire codec, the merge
// schema's descriptions and the summary statistic — without a line written for it elsewhere.
// (Over tensors, tests/capture/capture_test.cpp records, saves and shows it on a real model.)
#include <boost/test/unit_test.hpp>

#include "reduction_laws.hpp"

#include <recorder/distributed/state_codec.hpp>
#include <recorder/policies/reduction.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace reduce = recorder::reduce;

/// The reference: the largest |x|, computed directly.
template <>
struct recorder::testing::ReductionReference<reduce::AbsMax> : recorder::testing::ExactReference {
  template <class T>
  static T of(const reduce::AbsMax&, const std::vector<T>& xs) {
    T best = 0;
    for (const T& x : xs) best = std::max<T>(best, x < 0 ? static_cast<T>(-x) : x);
    return best;
  }
};

namespace {

const std::vector<double> mixed = {0.5, -1.25, 3.0, 2.0, -0.75, 0.125, 4.5, -7.0, 1.0};
const std::vector<int> integers = {7, -3, 12, 0, 5, -8, 21};
const std::vector<double> negative = {-2.0, -0.5, -9.25};

static_assert(reduce::mergeable_reduction<reduce::AbsMax, double>);
static_assert(reduce::has_statistic<reduce::AbsMax, double>);
static_assert(recorder::has_state_codec<reduce::state_t<reduce::AbsMax, double>>);

BOOST_AUTO_TEST_SUITE(abs_max)

BOOST_AUTO_TEST_CASE(obeys_the_laws_of_every_reduction) {
  recorder::testing::check_reduction_laws(reduce::AbsMax{}, mixed);
  recorder::testing::check_reduction_laws(reduce::AbsMax{}, integers);
  recorder::testing::check_reduction_laws(reduce::AbsMax{}, negative);
}

BOOST_AUTO_TEST_CASE(is_the_largest_magnitude_and_propagates_nan) {
  const reduce::AbsMax r;
  auto s = r.init(-3.5);
  r.update(s, 2.0);
  BOOST_TEST(r.result(s) == 3.5);
  r.update(s, 4.0);
  BOOST_TEST(r.result(s) == 4.0);
  BOOST_TEST(r.count(s) == 3u);
  r.update(s, std::numeric_limits<double>::quiet_NaN());
  BOOST_TEST(std::isnan(r.result(s)));
}

BOOST_AUTO_TEST_CASE(its_state_crosses_processes_through_the_generic_codec) {
  const reduce::AbsMax r;
  auto a = r.init(-6.0);
  r.update(a, 1.5);
  using S = reduce::state_t<reduce::AbsMax, double>;
  recorder::detail::ByteWriter w;
  recorder::state_codec<S>::encode(w, a);
  const std::string bytes = w.take();
  // min, max (8 bytes each), count (8 bytes): the fields, in their described order.
  BOOST_TEST(bytes.size() == 24u);
  recorder::detail::ByteReader reader(bytes, "abs_max state");
  const S back = recorder::state_codec<S>::decode(reader);
  BOOST_TEST(back.min == -6.0);
  BOOST_TEST(back.max == 1.5);
  BOOST_TEST(back.count == 2u);

  auto b = r.init(4.0);
  r.merge(b, back);
  BOOST_TEST(r.result(b) == 6.0);
  BOOST_TEST(r.count(b) == 3u);
}

BOOST_AUTO_TEST_CASE(the_schema_and_the_summary_name_it) {
  const reduce::AbsMax r;
  BOOST_TEST(recorder::detail::describe_reduction(r) == "abs_max");
  // Numbers always merge: nothing to share but the reduction.
  BOOST_TEST(recorder::detail::describe_state<reduce::AbsMax>(r.init(1.0)).empty());
  BOOST_TEST(r.statistic_name() == "abs max");
  auto s = r.init(2.5);
  r.update(s, -3.0);
  BOOST_TEST(r.statistic(r.result(s)) == 3.0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
