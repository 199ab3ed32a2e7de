#pragma once
/// Small text helpers shared by the front ends and renderers (no libtorch): pieces, integers,
/// "[a, b]" dims, thousands separators, joined lines, text built in a string then streamed.

#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder::detail {

/// Appends every piece to `out`, without building temporaries.
template <class... Pieces>
void append(std::string& out, const Pieces&... pieces) {
  (out.append(std::string_view(pieces)), ...);
}

/// Appends the integer `n` in decimal (as `std::to_string` writes it).
template <std::integral Int>
void append_int(std::string& out, Int n) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, r.ptr);
}

/// The shortest decimal spelling that reads back as `v`: "0.5", "-3", "1e-06".
inline std::string shortest(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return r.ec == std::errc() ? std::string(buf, r.ptr) : std::string("?");
}

/// Appends integers as a list on one line: `[3, 3]`, `[]`.
template <class Sizes>
void append_dims(std::string& out, const Sizes& sizes) {
  out += '[';
  bool first = true;
  for (const auto& v : sizes) {
    if (!first) out += ", ";
    first = false;
    if constexpr (std::integral<std::remove_cvref_t<decltype(v)>>)
      append_int(out, v);
    else
      append_int(out, static_cast<std::int64_t>(v));
  }
  out += ']';
}

/// "[3, 3]" for sizes of any length.
template <class Sizes>
std::string sizes_string(const Sizes& sizes) {
  std::string s;
  append_dims(s, sizes);
  return s;
}

/// A pooling kernel as torchinfo shows it: "3" when square (the int a Python user passes),
/// else "[3, 2]".
template <class Sizes>
std::string pool_kernel_string(const Sizes& sizes) {
  for (std::size_t i = 1; i < sizes.size(); ++i)
    if (sizes[i] != sizes[0]) return sizes_string(sizes);
  return sizes.size() == 0 ? std::string("[]") : std::to_string(sizes[0]);
}

/// `n` with thousands separators: `9,408`, `11,689,512`.
inline std::string with_thousands(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

/// `lines`, each passed through `escape`, joined with `sep`:
/// `join_lines({"Linear", "fc1"}, "<BR/>", html_escape)`.
template <class Escape = std::identity>
std::string join_lines(const std::vector<std::string>& lines, std::string_view sep,
                       Escape escape = {}) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += sep;
    out += escape(lines[i]);
  }
  return out;
}

/// Writes to `os`, in one call, the text `fill(text)` appends to an empty string: a backend
/// that builds its text in a string streams it without a copy.
template <class Fill>
void write_through_string(std::ostream& os, Fill&& fill) {
  std::string text;
  std::forward<Fill>(fill)(text);
  os.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace recorder::detail
