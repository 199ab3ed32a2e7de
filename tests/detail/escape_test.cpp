/// Escaping of hostile strings for HTML labels, DOT ids, JSON and file names.
#define BOOST_TEST_MODULE detail_escape
#include <boost/test/unit_test.hpp>

#include <recorder/detail/escape.hpp>

#include <string>

using namespace recorder::detail;

BOOST_AUTO_TEST_CASE(html) {
  BOOST_TEST(html_escape("plain name_1.x") == "plain name_1.x");
  BOOST_TEST(html_escape("\"quote\"") == "&quot;quote&quot;");
  BOOST_TEST(html_escape("<b>") == "&lt;b&gt;");
  BOOST_TEST(html_escape("a&b") == "a&amp;b");
  BOOST_TEST(html_escape("it's") == "it&#39;s");
  BOOST_TEST(html_escape("one\ntwo") == "one<BR/>two");
  BOOST_TEST(html_escape("tab\there") == "tab here");
  BOOST_TEST(html_escape(std::string("nul\0x", 5)) == "nul&#65533;x");
  BOOST_TEST(html_escape("bell\x07") == "bell&#65533;");
  BOOST_TEST(html_escape("caf\xc3\xa9 \xe2\x86\x92") == "caf\xc3\xa9 \xe2\x86\x92");
  BOOST_TEST(html_escape("bad\xff") == "bad&#65533;");
  BOOST_TEST(html_escape("&amp;") == "&amp;amp;");
}

BOOST_AUTO_TEST_CASE(dot_ids) {
  BOOST_TEST(dot_quoted("MLP") == "\"MLP\"");
  BOOST_TEST(dot_quoted("") == "\"\"");
  BOOST_TEST(dot_quoted("My \"Net\"") == "\"My \\\"Net\\\"\"");
  BOOST_TEST(dot_quoted("back\\") == "\"back\\\\\"");
  BOOST_TEST(dot_quoted("a\nb") == "\"a\\nb\"");
  BOOST_TEST(dot_quoted("x\x01y") == "\"x\xef\xbf\xbdy\"");
  BOOST_TEST(dot_quoted("<b>&") == "\"<b>&\"");
}

BOOST_AUTO_TEST_CASE(json_strings) {
  BOOST_TEST(json_escape("plain") == "plain");
  BOOST_TEST(json_escape("\"q\" \\") == "\\\"q\\\" \\\\");
  BOOST_TEST(json_escape("\n\t\r\b\f") == "\\n\\t\\r\\b\\f");
  BOOST_TEST(json_escape("\x01\x1f") == "\\u0001\\u001f");
  BOOST_TEST(json_escape(std::string("\0", 1)) == "\\u0000");
  BOOST_TEST(json_escape("\x7f") == "\x7f");  // DEL is allowed unescaped in JSON
  BOOST_TEST(json_escape("</script>") == "</script>");
  BOOST_TEST(json_escape("\xe2\x82\xac") == "\xe2\x82\xac");
  BOOST_TEST(json_escape("\xc0\xaf") == "\xef\xbf\xbd\xef\xbf\xbd");  // overlong '/'
  BOOST_TEST(json_escape("\xed\xa0\x80") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // surrogate
  BOOST_TEST(json_escape("\xe2\x82") == "\xef\xbf\xbd\xef\xbf\xbd");                  // truncated
}

BOOST_AUTO_TEST_CASE(utf8_decoding) {
  const std::string s = "a\xc3\xa9\xf0\x9f\x98\x80\x80";
  std::size_t i = 0;
  BOOST_TEST(static_cast<unsigned>(next_code_point(s, i)) == 0x61u);
  BOOST_TEST(static_cast<unsigned>(next_code_point(s, i)) == 0xE9u);
  BOOST_TEST(static_cast<unsigned>(next_code_point(s, i)) == 0x1F600u);
  BOOST_TEST(static_cast<unsigned>(next_code_point(s, i)) == 0xFFFDu);
  BOOST_TEST(i == s.size());
  std::string out;
  append_utf8(out, 0x1F600);
  BOOST_TEST(out == "\xf0\x9f\x98\x80");
}

BOOST_AUTO_TEST_CASE(file_names) {
  BOOST_TEST(sanitize_filename("layer1.0.conv1") == "layer1.0.conv1");
  BOOST_TEST(sanitize_filename("../x") == "___x");
  BOOST_TEST(sanitize_filename("a/b:c") == "a_b_c");
  BOOST_TEST(sanitize_filename("a\\b") == "a_b");
  BOOST_TEST(sanitize_filename(".hidden") == "_hidden");
  BOOST_TEST(sanitize_filename(".") == "_");
  BOOST_TEST(sanitize_filename("..") == "__");
  BOOST_TEST(sanitize_filename("") == "_");
  BOOST_TEST(sanitize_filename("new\nline\x01") == "new_line_");
  BOOST_TEST(sanitize_filename("<>|?*\"") == "______");
  BOOST_TEST(sanitize_filename("caf\xc3\xa9") == "caf\xc3\xa9");
  BOOST_TEST(sanitize_filename("bad\xff") == "bad_");

  const std::string long_name(500, 'x');
  BOOST_TEST(sanitize_filename(long_name).size() == 200u);
  std::string accents;
  for (int i = 0; i < 150; ++i) accents += "\xc3\xa9";  // 300 bytes of 2-byte characters
  const std::string cut = sanitize_filename(accents);
  BOOST_TEST(cut.size() == 200u);
  std::size_t i = 0;
  while (i < cut.size()) BOOST_TEST(static_cast<unsigned>(next_code_point(cut, i)) == 0xE9u);
  BOOST_TEST(sanitize_filename("abcdef", 3) == "abc");

  for (const char* hostile : {"../../etc/passwd", "/abs", "\\\\server\\share", "..\\..", "a\0b"}) {
    const std::string s = sanitize_filename(hostile);
    BOOST_TEST(!s.empty());
    BOOST_TEST(s.find('/') == std::string::npos);
    BOOST_TEST(s.find('\\') == std::string::npos);
    BOOST_TEST(s.front() != '.');
  }
}
