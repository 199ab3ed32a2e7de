#pragma once
/// The one JSON writer of every backend that writes JSON (`JsonWriter`): objects, arrays, keys,
/// escaped strings, numbers, each container laid out as its format wants (`JsonLayout`).

#include <recorder/detail/escape.hpp>
#include <recorder/detail/text.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder::detail {

/// How a JSON container lays out its items. The backends' layouts:
/// - `json_indented`: one item a line, two spaces of indent a nesting level, the closing
///   bracket on a line of its own (`[]` when empty): `Json`, `JsonView`;
/// - `json_one_line`: `{"a": 1, "b": [1, 2]}`: Chrome trace events, Model Explorer's nodes;
/// - `json_compact`: `{"a":1,"b":[1,2]}`: the HTML viewer's data.
struct JsonLayout {
  std::string_view comma = ", ";  ///< between two items on one line
  std::string_view colon = ": ";  ///< between a key and its value
  bool lines = false;             ///< each item on a line of its own
  std::uint8_t indent = 0;        ///< with `lines`: spaces a nesting level before each item
  bool close_on_line = false;     ///< with `lines`: the closing bracket on a line of its own
  bool close_on_line_when_empty = false;  ///< ... even without items (`[\n  ]`)

  /// This layout's separators on one line (a list of numbers in an indented object).
  constexpr JsonLayout one_line() const { return {.comma = comma, .colon = colon}; }
};

inline constexpr JsonLayout json_indented{.lines = true, .indent = 2, .close_on_line = true};
inline constexpr JsonLayout json_one_line{};
inline constexpr JsonLayout json_compact{.comma = ",", .colon = ":"};

/// How a `JsonWriter` escapes strings and keys.
enum class JsonText : std::uint8_t {
  plain,      ///< as `json_escape` does
  in_script,  ///< and every `<` as `\u003c`: no `</script>` or `<!--` in an HTML `<script>`
};

/// Writes JSON to the end of a string, one call a token: the caller says what comes, the
/// writer puts the separators, line breaks and indents of each container's `JsonLayout`.
/// A container opened without a layout takes its parent's (the outermost, the writer's).
///
/// Example: `JsonWriter w(out); w.begin_object(); w.field("id", 3); w.key("shape");
/// w.numbers(dims); w.end_object();` writes `{\n  "id": 3,\n  "shape": [1, 64]\n}`.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out, JsonLayout layout = json_indented,
                      JsonText text = JsonText::plain)
      : out_(out), layout_(layout), text_(text) {}

  void begin_object() { open('{', layout()); }
  void begin_object(JsonLayout layout) { open('{', layout); }
  void end_object() { close('}'); }
  void begin_array() { open('[', layout()); }
  void begin_array(JsonLayout layout) { open('[', layout); }
  void end_array() { close(']'); }

  /// Starts the items of a list laid out as `list` without writing its brackets or anything
  /// before its first item: a fragment that `raw` splices into such a list of another writer
  /// (each rank's Chrome trace events, gathered into one trace).
  void begin_fragment(JsonLayout list) { frames_.push_back(Frame{list, true, true}); }
  void end_fragment() { frames_.pop_back(); }

  /// Starts member `k` of the current object; the next call writes its value.
  void key(std::string_view k) {
    separate();
    quoted(k);
    out_ += frames_.empty() ? layout_.colon : frames_.back().layout.colon;
    after_key_ = true;
  }
  /// Puts the next item of the current container on a line of its own (after `,`).
  void break_line() { break_line_ = true; }

  void string(std::string_view s) {
    separate();
    quoted(s);
  }
  template <std::integral Int>
  requires(!std::same_as<Int, bool>) void number(Int v) {
    separate();
    append_int(out_, v);
  }
  /// Writes `*v`, or `null` without a value.
  template <std::integral Int>
  void number_or_null(const std::optional<Int>& v) {
    if (v)
      number(*v);
    else
      null();
  }
  /// Writes `n` thousandths with three decimals, exactly: `1234567` is `1234.567`.
  void thousandths(std::int64_t n) {
    separate();
    char buf[48];
    std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(n / 1000),
                  static_cast<long long>(n % 1000));
    out_ += buf;
  }
  void boolean(bool b) {
    separate();
    out_ += b ? "true" : "false";
  }
  void null() {
    separate();
    out_ += "null";
  }
  /// Writes `json`, already written (by a fragment writer), as it is.
  void raw(std::string_view json) {
    separate();
    out_ += json;
  }

  /// Writes member `k` with value `v`: a bool, an integer or a string.
  template <class T>
  void field(std::string_view k, const T& v) {
    key(k);
    if constexpr (std::is_same_v<T, bool>)
      boolean(v);
    else if constexpr (std::is_integral_v<T>)
      number(v);
    else
      string(v);
  }

  /// Writes the integers `proj(v)` of `values` as a list on one line: `[1, 3, 224, 224]`
  /// (`[1,3]` in a compact layout).
  template <class Range, class Proj = std::identity>
  void numbers(const Range& values, Proj proj = {}) {
    open('[', layout().one_line());
    for (const auto& v : values) number(std::invoke(proj, v));
    close(']');
  }

 private:
  struct Frame {
    JsonLayout layout;
    bool empty = true;
    bool fragment = false;  ///< no brackets, nothing before the first item
  };

  const JsonLayout& layout() const { return frames_.empty() ? layout_ : frames_.back().layout; }

  void quoted(std::string_view s) {
    out_ += '"';
    if (text_ == JsonText::in_script) {
      for (char c : json_escape(s)) {
        if (c == '<')
          out_ += "\\u003c";
        else
          out_ += c;
      }
    } else {
      out_ += json_escape(s);
    }
    out_ += '"';
  }
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    const bool first = f.empty;
    const bool line = f.layout.lines || break_line_;
    f.empty = false;
    break_line_ = false;
    if (first && f.fragment) return;
    if (!first) out_ += line ? std::string_view(",") : f.layout.comma;
    if (line) {
      out_ += '\n';
      indent(f.layout, frames_.size());
    }
  }
  void open(char c, JsonLayout layout) {
    separate();
    out_ += c;
    frames_.push_back(Frame{layout});
  }
  void close(char c) {
    const Frame f = frames_.back();
    frames_.pop_back();
    if (f.layout.close_on_line && (!f.empty || f.layout.close_on_line_when_empty)) {
      out_ += '\n';
      indent(f.layout, frames_.size());
    }
    out_ += c;
  }
  void indent(const JsonLayout& layout, std::size_t level) {
    out_.append(layout.indent * level, ' ');
  }

  std::string& out_;
  JsonLayout layout_;
  JsonText text_;
  std::vector<Frame> frames_;
  bool after_key_ = false;
  bool break_line_ = false;
};

}  // namespace recorder::detail
