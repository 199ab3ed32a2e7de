/// The JSON writer of every JSON backend: each layout, keys and escaping, numbers, fragments.
#define BOOST_TEST_MODULE detail_json_writer
#include <boost/test/unit_test.hpp>

#include <recorder/detail/json_writer.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

using namespace recorder::detail;

namespace {

/// `{"id": 3, "shape": [1, 64], "empty": [], "inner": {"ok": true, "none": null}}` in `layout`.
std::string sample(JsonLayout layout) {
  std::string out;
  JsonWriter w(out, layout);
  w.begin_object();
  w.field("id", 3);
  w.key("shape");
  w.numbers(std::vector<std::int64_t>{1, 64});
  w.key("empty");
  w.begin_array();
  w.end_array();
  w.key("inner");
  w.begin_object();
  w.field("ok", true);
  w.key("none");
  w.null();
  w.end_object();
  w.end_object();
  return out;
}

/// `{key: value}` in `layout`, strings escaped as `text` says.
std::string member(JsonLayout layout, JsonText text, std::string_view key, std::string_view value) {
  std::string out;
  JsonWriter w(out, layout, text);
  w.begin_object();
  w.field(key, value);
  w.end_object();
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(layouts) {
  BOOST_TEST(sample(json_indented) ==
             "{\n  \"id\": 3,\n  \"shape\": [1, 64],\n  \"empty\": [],\n  \"inner\": {\n"
             "    \"ok\": true,\n    \"none\": null\n  }\n}");
  BOOST_TEST(sample(json_one_line) ==
             "{\"id\": 3, \"shape\": [1, 64], \"empty\": [], \"inner\": {\"ok\": true, "
             "\"none\": null}}");
  BOOST_TEST(sample(json_compact) ==
             "{\"id\":3,\"shape\":[1,64],\"empty\":[],\"inner\":{\"ok\":true,\"none\":null}}");
  constexpr JsonLayout open_empty{
      .lines = true, .indent = 2, .close_on_line = true, .close_on_line_when_empty = true};
  BOOST_TEST(sample(open_empty) ==
             "{\n  \"id\": 3,\n  \"shape\": [1, 64],\n  \"empty\": [\n  ],\n  \"inner\": {\n"
             "    \"ok\": true,\n    \"none\": null\n  }\n}");
}

BOOST_AUTO_TEST_CASE(a_container_takes_its_parents_layout_unless_told) {
  std::string out;
  JsonWriter w(out);
  w.begin_array();
  w.begin_object(json_one_line);
  w.key("a");
  w.begin_array();  // one line, as its parent
  w.string("x");
  w.end_array();
  w.end_object();
  w.end_array();
  BOOST_TEST(out == "[\n  {\"a\": [\"x\"]}\n]");
}

BOOST_AUTO_TEST_CASE(line_breaks_and_rows) {
  constexpr JsonLayout rows{.comma = ",", .colon = ":", .lines = true};
  std::string out;
  JsonWriter w(out, json_compact);
  w.begin_object();
  w.field("n", 1);
  w.break_line();
  w.key("rows");
  w.begin_array(rows);
  w.numbers(std::array{1, 2});
  w.numbers(std::array<int, 0>{});
  w.end_array();
  w.end_object();
  BOOST_TEST(out == "{\"n\":1,\n\"rows\":[\n[1,2],\n[]]}");
}

BOOST_AUTO_TEST_CASE(fragments_splice_into_a_list) {
  constexpr JsonLayout events{.lines = true, .close_on_line = true};
  std::string part;
  JsonWriter f(part, json_one_line);
  f.begin_fragment(events);
  f.begin_object(json_one_line);
  f.field("a", 1);
  f.end_object();
  f.begin_object(json_one_line);
  f.field("b", 2);
  f.end_object();
  f.end_fragment();
  BOOST_TEST(part == "{\"a\": 1},\n{\"b\": 2}");

  std::string out;
  JsonWriter w(out, json_one_line);
  w.begin_array(events);
  w.raw(part);
  w.raw(part);
  w.end_array();
  BOOST_TEST(out == "[\n{\"a\": 1},\n{\"b\": 2},\n{\"a\": 1},\n{\"b\": 2}\n]");
}

BOOST_AUTO_TEST_CASE(strings_and_keys_are_escaped) {
  BOOST_TEST(member(json_one_line, JsonText::plain, "k\"\n", "</script> \"x\"\\\x01\xff") ==
             "{\"k\\\"\\n\": \"</script> \\\"x\\\"\\\\\\u0001\xef\xbf\xbd\"}");
  BOOST_TEST(member(json_compact, JsonText::in_script, "<k>", "</script><!--") ==
             "{\"\\u003ck>\":\"\\u003c/script>\\u003c!--\"}");
}

BOOST_AUTO_TEST_CASE(numbers) {
  std::string out;
  JsonWriter w(out, json_compact);
  w.begin_array();
  w.number(std::int64_t{-7});
  w.number(std::uint64_t{18446744073709551615u});
  w.number(std::uint16_t{12});
  w.number_or_null(std::optional<int>{});
  w.number_or_null(std::optional<int>{2});
  w.thousandths(1234567);
  w.thousandths(5);
  w.thousandths(0);
  w.end_array();
  BOOST_TEST(out == "[-7,18446744073709551615,12,null,2,1234.567,0.005,0.000]");
}
