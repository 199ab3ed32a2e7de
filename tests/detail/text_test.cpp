/// The text helpers every renderer shares (detail/text.hpp), exactly.
#define BOOST_TEST_MODULE detail_text
#include <boost/test/unit_test.hpp>

#include <recorder/detail/text.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace rd = recorder::detail;

BOOST_AUTO_TEST_CASE(pieces_and_integers_append_in_place) {
  std::string s = "x";
  rd::append(s, "ab", std::string("cd"), std::string_view("ef"));
  rd::append_int(s, -42);
  rd::append_int(s, std::numeric_limits<std::int64_t>::min());
  rd::append_int(s, std::numeric_limits<std::uint64_t>::max());
  BOOST_TEST(s == "xabcdef-42-922337203685477580818446744073709551615");
}

BOOST_AUTO_TEST_CASE(dims_are_bracketed_lists) {
  std::string s;
  rd::append_dims(s, std::vector<std::int64_t>{});
  rd::append_dims(s, std::array<int, 1>{7});
  rd::append_dims(s, std::vector<std::int64_t>{1, 3, 224, 224});
  BOOST_TEST(s == "[][7][1, 3, 224, 224]");
  BOOST_TEST(rd::sizes_string(std::vector<unsigned>{3u, 3u}) == "[3, 3]");
}

BOOST_AUTO_TEST_CASE(pool_kernels_are_an_int_when_square) {
  BOOST_TEST(rd::pool_kernel_string(std::vector<std::int64_t>{3, 3}) == "3");
  BOOST_TEST(rd::pool_kernel_string(std::vector<std::int64_t>{3, 2}) == "[3, 2]");
  BOOST_TEST(rd::pool_kernel_string(std::vector<std::int64_t>{}) == "[]");
}

BOOST_AUTO_TEST_CASE(thousands_separators_at_every_boundary) {
  BOOST_TEST(rd::with_thousands(0) == "0");
  BOOST_TEST(rd::with_thousands(999) == "999");
  BOOST_TEST(rd::with_thousands(1000) == "1,000");
  BOOST_TEST(rd::with_thousands(9408) == "9,408");
  BOOST_TEST(rd::with_thousands(11689512) == "11,689,512");
  BOOST_TEST(rd::with_thousands(std::numeric_limits<std::uint64_t>::max()) ==
             "18,446,744,073,709,551,615");
}

BOOST_AUTO_TEST_CASE(lines_join_through_an_escape) {
  const std::vector<std::string> lines{"Linear", "a<b"};
  BOOST_TEST(rd::join_lines(lines, "\\n") == "Linear\\na<b");
  BOOST_TEST(rd::join_lines(lines, "<BR/>", [](const std::string& l) { return "[" + l + "]"; }) ==
             "[Linear]<BR/>[a<b]");
  BOOST_TEST(rd::join_lines({}, ",") == "");
}

BOOST_AUTO_TEST_CASE(text_built_in_a_string_is_streamed_once) {
  std::ostringstream os;
  os << "head:";
  rd::write_through_string(os, [](std::string& t) { t += "body"; });
  BOOST_TEST(os.str() == "head:body");
}
