#pragma once
/// Escaping of user-derived strings for HTML labels, DOT ids, JSON strings and file names.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace recorder::detail {

/// The Unicode replacement character, used for invalid UTF-8 and forbidden control characters.
inline constexpr char32_t replacement_char = 0xFFFD;

/// Decodes the UTF-8 sequence at `s[i]`, advancing `i` past it.
///
/// Invalid, overlong or truncated sequences and surrogates decode to `replacement_char` and
/// consume one byte, so every input byte string maps to a valid code point sequence.
inline char32_t next_code_point(std::string_view s, std::size_t& i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  std::size_t len = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    ++i;
    return replacement_char;
  }
  if (i + len > s.size()) {
    ++i;
    return replacement_char;
  }
  for (std::size_t k = 1; k < len; ++k) {
    const unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return replacement_char;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return replacement_char;
  }
  i += len;
  return cp;
}

/// Appends code point `cp` to `out` as UTF-8.
inline void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// True for C0 controls and DEL.
constexpr bool is_control(char32_t cp) noexcept { return cp < 0x20 || cp == 0x7F; }

/// Appends `cp` as UTF-8, a control character as U+FFFD.
inline void append_printable(std::string& out, char32_t cp) {
  append_utf8(out, is_control(cp) ? replacement_char : cp);
}

/// One ASCII character an escaper replaces, and the text that stands for it.
struct Escape {
  char c;
  std::string_view text;
};

/// A table of replacements: `apply(s, other)` rewrites `s` one code point at a time, an ASCII
/// character of the table becoming its text and any other code point going to `other(out,
/// cp)` (invalid UTF-8 arrives as `replacement_char`). The escapers below are each one table
/// and one rule for the rest.
template <std::size_t N>
class Escapes {
 public:
  constexpr explicit Escapes(std::array<Escape, N> items) : items_(items) {
    for (std::int8_t& k : index_) k = -1;
    for (std::size_t k = 0; k < N; ++k)
      index_[static_cast<unsigned char>(items_[k].c)] = static_cast<std::int8_t>(k);
  }

  /// `s` rewritten (see above).
  template <class Other>
  std::string escape(std::string_view s, Other other) const {
    std::string out;
    out.reserve(s.size());
    apply(out, s, other);
    return out;
  }

  /// Appends `s` rewritten to `out`.
  template <class Other>
  void apply(std::string& out, std::string_view s, Other other) const {
    for (std::size_t i = 0; i < s.size();) {
      const char32_t cp = next_code_point(s, i);
      if (cp < 0x80 && index_[cp] >= 0)
        out += items_[static_cast<std::size_t>(index_[cp])].text;
      else
        other(out, cp);
    }
  }

 private:
  std::array<Escape, N> items_;
  std::array<std::int8_t, 0x80> index_{};
};

template <std::size_t N>
Escapes(std::array<Escape, N>) -> Escapes<N>;

/// Escapes `s` for the inside of a Graphviz HTML-like label (`label=<...>`).
///
/// `&`, `<`, `>`, `"` and `'` become entities, a newline becomes `<BR/>`, a tab a space, and
/// other control characters and invalid UTF-8 become U+FFFD.
/// Example: `html_escape("a<b>\n&")` is `"a&lt;b&gt;<BR/>&amp;"`.
inline std::string html_escape(std::string_view s) {
  static constexpr Escapes table(std::array{
      Escape{'&', "&amp;"}, Escape{'<', "&lt;"}, Escape{'>', "&gt;"}, Escape{'"', "&quot;"},
      Escape{'\'', "&#39;"}, Escape{'\n', "<BR/>"}, Escape{'\t', " "}});
  return table.escape(s, [](std::string& o, char32_t cp) {
    if (is_control(cp) || cp == replacement_char)
      o += "&#65533;";
    else
      append_utf8(o, cp);
  });
}

/// `s` as a double-quoted DOT id: `"` and `\` are backslash-escaped, a newline becomes `\n`,
/// other control characters and invalid UTF-8 become U+FFFD.
/// Example: `dot_quoted("My \"Net\"")` is `"\"My \\\"Net\\\"\""`.
inline std::string dot_quoted(std::string_view s) {
  static constexpr Escapes table(
      std::array{Escape{'"', "\\\""}, Escape{'\\', "\\\\"}, Escape{'\n', "\\n"}});
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  table.apply(out, s, append_printable);
  out += '"';
  return out;
}

/// Escapes `s` for the inside of a JSON string (without the quotes).
///
/// `"` and `\` are backslash-escaped, `\b \f \n \r \t` use their short forms, other control
/// characters become `\u00XX`, and invalid UTF-8 becomes U+FFFD, so the result is always valid.
inline std::string json_escape(std::string_view s) {
  static constexpr Escapes table(std::array{
      Escape{'"', "\\\""}, Escape{'\\', "\\\\"}, Escape{'\b', "\\b"}, Escape{'\f', "\\f"},
      Escape{'\n', "\\n"}, Escape{'\r', "\\r"}, Escape{'\t', "\\t"}});
  return table.escape(s, [](std::string& o, char32_t cp) {
    static constexpr char hex[] = "0123456789abcdef";
    if (cp < 0x20) {
      o += "\\u00";
      o += hex[cp >> 4];
      o += hex[cp & 0xF];
    } else {
      append_utf8(o, cp);
    }
  });
}

/// Maps any string (a module path such as `layer1.0/conv:1` or `../x`) to one safe path
/// component: no `/` or `\`, none of `: * ? " < > |`, no control characters or invalid UTF-8
/// (each becomes `_`), no leading dot (each leading `.` becomes `_`), never empty (`"_"`), and
/// at most `max_bytes` bytes (200 by default), cut on a UTF-8 boundary.
/// Example: `sanitize_filename("../x")` is `"___x"`.
inline std::string sanitize_filename(std::string_view s, std::size_t max_bytes = 200) {
  if (max_bytes == 0) max_bytes = 1;
  std::string out;
  out.reserve(s.size());
  bool leading = true;
  for (std::size_t i = 0; i < s.size();) {
    const char32_t cp = next_code_point(s, i);
    std::string piece;
    switch (cp) {
      case '/':
      case '\\':
      case ':':
      case '*':
      case '?':
      case '"':
      case '<':
      case '>':
      case '|':
        piece = "_";
        break;
      case '.':
        piece = leading ? "_" : ".";
        break;
      default:
        if (is_control(cp) || cp == replacement_char)
          piece = "_";
        else
          append_utf8(piece, cp);
    }
    if (cp != '.') leading = false;
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
  }
  if (out.empty()) out = "_";
  return out;
}

}  // namespace recorder::detail
