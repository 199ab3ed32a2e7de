/// What ranks send each other before their states (distributed/protocol.hpp): the header, the
/// schema as bytes, its fingerprint and the first difference between two. Torch-free: runs in
/// the fast (sanitizer) stage; the exchange itself is distributed_test.cpp's. Also what the
/// schema says of each shipped reduction and its states, derived from their described fields.
#define BOOST_TEST_MODULE distributed_protocol
#include <boost/test/unit_test.hpp>

#include <recorder/distributed/options.hpp>
#include <recorder/distributed/protocol.hpp>
#include <recorder/distributed/state_codec.hpp>
#include <recorder/policies/reduction.hpp>

#include <string>
#include <vector>

using namespace recorder::detail;

namespace {

Schema two_layers() {
  return Schema{"moments(correction=1)",
                {SchemaEntry{"fc1", "Linear", {std::string("Float[2, 64]")}},
                 SchemaEntry{"fc2", "Linear", {std::string("Float[2, 10]"), std::nullopt}}}};
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_header_says_what_is_merged_to_whom) {
  const MergeHeader h = MergeHeader::make(MergeKind::timing, 0, -1, 1234);
  BOOST_TEST(h[MergeHeader::f_magic] == 0x7265636f72646572);
  BOOST_TEST(h[MergeHeader::f_version] == 1);
  BOOST_TEST(h[MergeHeader::f_kind] == 2);
  BOOST_TEST(h[MergeHeader::f_root] == 0);
  BOOST_TEST(h[MergeHeader::f_last] == -1);
  BOOST_TEST(h[MergeHeader::f_payload_bytes] == 1234);
  BOOST_TEST(h[MergeHeader::f_schema_hash] == 0);
  BOOST_TEST(to_string(MergeKind::chrome_trace) == "a Chrome trace (gather_chrome_trace)");
}

BOOST_AUTO_TEST_CASE(a_schema_survives_its_bytes) {
  const Schema s = two_layers();
  const Schema back = decode_schema(encode_schema(s));
  BOOST_TEST(back.reduction == s.reduction);
  BOOST_TEST_REQUIRE(back.entries.size() == 2u);
  BOOST_TEST(back.entries[1].key == "fc2");
  BOOST_TEST(back.entries[1].kind == "Linear");
  BOOST_TEST_REQUIRE(back.entries[1].slots.size() == 2u);
  BOOST_TEST(*back.entries[1].slots[0] == "Float[2, 10]");
  BOOST_TEST(!back.entries[1].slots[1].has_value());
  BOOST_TEST(schema_hash(back.entries) == schema_hash(s.entries));
  // Truncated bytes are refused by name, never read past.
  const std::string bytes = encode_schema(s);
  BOOST_CHECK_THROW(decode_schema(bytes.substr(0, bytes.size() - 3)), std::exception);
}

BOOST_AUTO_TEST_CASE(absent_tensors_match_anything) {
  Schema a = two_layers(), b = two_layers();
  b.entries[1].slots[1] = std::string("Float[2, 64]");  // a gradient only rank b recorded
  BOOST_TEST(schema_hash(a.entries) != schema_hash(b.entries));
  BOOST_TEST(schema_difference(a.entries, 0, b.entries, 1, "layer").empty());
}

BOOST_AUTO_TEST_CASE(the_first_difference_is_spelled_for_the_error) {
  const Schema a = two_layers();
  Schema b = two_layers();
  b.entries[1].key = "head";
  BOOST_TEST(schema_difference(a.entries, 0, b.entries, 2, "layer") ==
             "layer 2 is 'fc2' on rank 0 but 'head' on rank 2");
  b = two_layers();
  b.entries[0].kind = "Conv2d";
  BOOST_TEST(schema_difference(a.entries, 0, b.entries, 1, "layer") ==
             "layer 'fc1' is a Linear on rank 0 but a Conv2d on rank 1");
  b = two_layers();
  b.entries[0].slots[0] = std::string("Half[2, 64]");
  BOOST_TEST(schema_difference(a.entries, 0, b.entries, 1, "layer") ==
             "layer 'fc1' records tensor 0 as Float[2, 64] on rank 0 but as Half[2, 64] on rank 1");
  b = two_layers();
  b.entries.pop_back();
  BOOST_TEST(schema_difference(a.entries, 0, b.entries, 1, "key") ==
             "key 'fc2' is recorded on rank 0 but not on rank 1 (2 against 1)");
}

BOOST_AUTO_TEST_CASE(a_merge_error_names_the_rank) {
  const recorder::MergeError e(1, 4, "boom");
  BOOST_TEST(e.rank() == 1);
  BOOST_TEST(e.world() == 4);
  BOOST_TEST(std::string(e.what()) == "boom");
}

BOOST_AUTO_TEST_CASE(a_reduction_is_described_by_its_name_and_parameters) {
  namespace reduce = recorder::reduce;
  BOOST_TEST(describe_reduction(reduce::Sum{}) == "sum");
  BOOST_TEST(describe_reduction(reduce::Mean{}) == "mean");
  BOOST_TEST(describe_reduction(reduce::Last{}) == "last");
  BOOST_TEST(describe_reduction(reduce::MinMax{}) == "min_max");
  BOOST_TEST(describe_reduction(reduce::Moments{}) == "moments(correction=1)");
  BOOST_TEST(describe_reduction(reduce::KeepAll{.max_bytes = 4096}) == "keep_all(max_bytes=4096)");
  BOOST_TEST(describe_reduction(reduce::Quantile{.q = 0.9}) == "quantile(q=0.9)");
  BOOST_TEST(describe_reduction(reduce::Histogram{64, -4.0, 4.5}) ==
             "histogram(bins=64, lo=-4, hi=4.5)");
}

BOOST_AUTO_TEST_CASE(states_of_numbers_always_merge_but_histograms_name_their_bins) {
  namespace reduce = recorder::reduce;
  const reduce::Histogram h{8, 0.0, 1.0};
  BOOST_TEST(describe_state<reduce::Histogram>(h.init(0.5)) == "[8]");
  BOOST_TEST(describe_state<reduce::Moments>(reduce::Moments{}.init(2.0)).empty());
  BOOST_TEST(describe_state<reduce::KeepAll>(reduce::KeepAll{}.init(2.0)).empty());
  BOOST_TEST(describe_state<reduce::Quantile>(reduce::Quantile{}.init(2.0)).empty());
  // Every shipped mergeable state has a codec, from its described fields.
  static_assert(recorder::has_state_codec<reduce::state_t<reduce::Sum, float>> &&
                recorder::has_state_codec<reduce::state_t<reduce::Moments, double>> &&
                recorder::has_state_codec<reduce::state_t<reduce::MinMax, int>> &&
                recorder::has_state_codec<reduce::state_t<reduce::Histogram, double>> &&
                recorder::has_state_codec<reduce::state_t<reduce::KeepAll, double>> &&
                recorder::has_state_codec<reduce::state_t<reduce::Quantile, double>>);
}
