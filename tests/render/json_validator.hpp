#pragma once
/// A strict RFC 8259 validator for the JSON backends' tests.

#include <recorder/detail/escape.hpp>

#include <cctype>
#include <cstddef>
#include <string_view>

namespace recorder::testing {

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
      case '{':
        return object(level);
      case '[':
        return array(level);
      case '"':
        return string();
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
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

/// True when `s` is one valid JSON document.
inline bool valid_json(std::string_view s) { return JsonValidator(s).valid(); }

}  // namespace recorder::testing
