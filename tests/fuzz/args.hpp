#pragma once
/// Command-line numbers of the fuzzer programs (fuzz_models, fuzz_script).

#include <cstdint>
#include <string_view>

namespace fuzz {

/// Parses a decimal count into `out`: false (and `out` unchanged) for anything but digits, or
/// a number past `std::uint64_t`.
inline bool parse_count(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return false;
  std::uint64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  out = v;
  return true;
}

}  // namespace fuzz
