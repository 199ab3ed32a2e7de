/// The JSON backend: strictly valid, complete, and faithful to the recorded graph.
#define BOOST_TEST_MODULE render_json
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"

#include <recorder/render/json.hpp>
#include <recorder/render/render.hpp>

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

using namespace recorder;
using namespace recorder::testing;

namespace {

/// A strict RFC 8259 validator (no trailing commas, no comments, no control characters in
/// strings, valid escapes and UTF-8, one value and nothing after it but whitespace).
class JsonValidator {
 public:
  explicit JsonValidator(std::string_view s) : s_(s) {}

  bool valid() {
    ws();
    if (!value(0)) return false;
    ws();
    return i_ == s_.size();
  }
  std::size_t position() const { return i_; }

 private:
  bool value(int level) {
    if (level > 64 || i_ >= s_.size()) return false;
    switch (s_[i_]) {
      case '{': return object(level);
      case '[': return array(level);
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }
  bool object(int level) {
    ++i_;
    ws();
    if (peek('}')) return ++i_, true;
    for (;;) {
      ws();
      if (!peek('"') || !string()) return false;
      ws();
      if (!peek(':')) return false;
      ++i_;
      ws();
      if (!value(level + 1)) return false;
      ws();
      if (peek('}')) return ++i_, true;
      if (!peek(',')) return false;
      ++i_;
    }
  }
  bool array(int level) {
    ++i_;
    ws();
    if (peek(']')) return ++i_, true;
    for (;;) {
      ws();
      if (!value(level + 1)) return false;
      ws();
      if (peek(']')) return ++i_, true;
      if (!peek(',')) return false;
      ++i_;
    }
  }
  bool string() {
    ++i_;
    while (i_ < s_.size()) {
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') return ++i_, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        const char e = s_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k) {
            if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_])))
              return false;
          }
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        }
        ++i_;
      } else if (c >= 0x80) {
        std::size_t j = i_;
        if (detail::next_code_point(s_, j) == detail::replacement_char &&
            s_.substr(i_, 3) != "\xef\xbf\xbd")
          return false;
        i_ = j;
      } else {
        ++i_;
      }
    }
    return false;
  }
  bool number() {
    const std::size_t start = i_;
    if (peek('-')) ++i_;
    if (peek('0')) {
      ++i_;
    } else if (!digits()) {
      return false;
    }
    if (peek('.')) {
      ++i_;
      if (!digits()) return false;
    }
    if (peek('e') || peek('E')) {
      ++i_;
      if (peek('+') || peek('-')) ++i_;
      if (!digits()) return false;
    }
    return i_ > start;
  }
  bool digits() {
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    return i_ > start;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

bool valid_json(std::string_view s) { return JsonValidator(s).valid(); }

std::string json(const Trace& t) { return render_to_string<backend::Json>(t); }

std::size_t count(const std::string& s, std::string_view what) {
  std::size_t n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(validator_is_strict) {
  BOOST_TEST(valid_json("{\"a\": [1, -2.5e3, true, false, null, \"x\\n\\u00e9\"]}"));
  BOOST_TEST(valid_json("[]"));
  BOOST_TEST(!valid_json("[1, 2,]"));
  BOOST_TEST(!valid_json("{\"a\": 1,}"));
  BOOST_TEST(!valid_json("{a: 1}"));
  BOOST_TEST(!valid_json("[\"tab\there\"]"));
  BOOST_TEST(!valid_json("[\"bad \\x escape\"]"));
  BOOST_TEST(!valid_json("[01]"));
  BOOST_TEST(!valid_json("[1] [2]"));
  BOOST_TEST(!valid_json("[\"\xff\"]"));
  BOOST_TEST(!valid_json("[\"unterminated]"));
}

BOOST_AUTO_TEST_CASE(every_fixture_is_valid_json) {
  using Make = Trace (*)();
  for (Make make : {Make{mlp}, Make{residual}, Make{failed}, Make{hostile}, Make{resnet18}}) {
    const std::string s = json(make());
    JsonValidator v(s);
    BOOST_TEST(v.valid(), "invalid JSON near byte " << v.position());
    BOOST_TEST(s.ends_with("}\n"));
  }
}

BOOST_AUTO_TEST_CASE(the_whole_graph_ignoring_depth) {
  const Trace t = resnet18();
  const std::string s = json(t);
  BOOST_TEST(count(s, "\"kind\": ") == t.graph.size());
  BOOST_TEST(count(s, "\"class\": \"Conv2d\"") == 2 * 20u);  // modules + calls
  BOOST_TEST(render_to_string<backend::Json>(t, {.depth = 1}) == s);
  BOOST_TEST(s.find("\"model\": \"ResNet\",\n  \"complete\": true,\n  \"failure\": null,") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(node_fields) {
  const std::string s = json(residual());
  BOOST_TEST(s.find("\"depth_index\": \"2-2\"") != std::string::npos);
  BOOST_TEST(s.find("\"depth_index\": \"3-1\"") != std::string::npos);
  BOOST_TEST(s.find("\"call_index\": 1,") != std::string::npos);
  BOOST_TEST(s.find("\"op\": \"add\",\n      \"inplace\": true") != std::string::npos);
  BOOST_TEST(s.find("\"shape\": [1, 3, 8, 8],\n      \"dtype\": \"Float\",\n      \"device\": "
                    "\"cpu\",\n      \"producer\": null") != std::string::npos);
  BOOST_TEST(s.find("\"edges\": [\n    [0, 2],\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(failure_is_reported) {
  const std::string s = json(failed());
  BOOST_TEST(s.find("\"complete\": false") != std::string::npos);
  BOOST_TEST(s.find("\"module_path\": \"block.fc2\"") != std::string::npos);
  BOOST_TEST(count(s, "\"failed\": true") == 3u);
  BOOST_TEST(s.find("\"outputs\": [],") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(hostile_strings) {
  const std::string s = json(hostile());
  BOOST_TEST(valid_json(s));
  BOOST_TEST(s.find("\"model\": \"My \\\"Net\\\"\\\\\\n<x>\"") != std::string::npos);
  BOOST_TEST(s.find("\\u0002") != std::string::npos);
  BOOST_TEST(s.find("\\t") != std::string::npos);
  BOOST_TEST(s.find('\xff') == std::string::npos);
}

BOOST_AUTO_TEST_CASE(empty_graph) {
  const Trace t;
  const std::string s = json(t);
  BOOST_TEST(valid_json(s));
  BOOST_TEST(s ==
             "{\n  \"model\": \"\",\n  \"complete\": true,\n  \"failure\": null,\n"
             "  \"total_params\": 0,\n  \"trainable_params\": 0,\n  \"modules\": [],\n"
             "  \"nodes\": [],\n  \"edges\": []\n}\n");
}
