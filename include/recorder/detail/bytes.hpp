#pragma once
/// A flat byte encoding for values sent between processes: little-endian fixed-width numbers,
/// length-prefixed strings and blobs, read back with bounds checks (no libtorch).

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace recorder::detail {

static_assert(std::endian::native == std::endian::little,
              "recorder: the byte encoding of recorder/detail/bytes.hpp assumes a little-endian "
              "machine");

/// Appends values to a byte string: numbers as their bytes, strings and blobs with a 64-bit
/// length first.
class ByteWriter {
 public:
  template <class N>
  requires std::is_arithmetic_v<N>
  void number(N v) {
    char b[sizeof(N)];
    std::memcpy(b, &v, sizeof(N));
    out_.append(b, sizeof(N));
  }
  void u64(std::uint64_t v) { number(v); }
  void i64(std::int64_t v) { number(v); }
  void f64(double v) { number(v); }
  void text(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  /// `n` bytes at `data`, length first.
  void blob(const void* data, std::size_t n) {
    u64(n);
    out_.append(static_cast<const char*>(data), n);
  }
  /// Room for `n` more bytes, to be filled by the caller: returns where they start.
  char* extend(std::size_t n) {
    const std::size_t at = out_.size();
    out_.resize(at + n);
    return out_.data() + at;
  }
  void reserve(std::size_t n) { out_.reserve(n); }
  std::size_t size() const noexcept { return out_.size(); }
  const std::string& bytes() const noexcept { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

/// Reads what a `ByteWriter` wrote, in the same order; a read past the end (a truncated or
/// foreign buffer) throws `std::invalid_argument` naming `what` the bytes were meant to be.
class ByteReader {
 public:
  ByteReader(std::string_view bytes, std::string_view what) : in_(bytes), what_(what) {}

  template <class N>
  requires std::is_arithmetic_v<N> N number() {
    need(sizeof(N));
    N v;
    std::memcpy(&v, in_.data() + at_, sizeof(N));
    at_ += sizeof(N);
    return v;
  }
  std::uint64_t u64() { return number<std::uint64_t>(); }
  std::int64_t i64() { return number<std::int64_t>(); }
  double f64() { return number<double>(); }
  std::string_view text() { return bytes(u64()); }
  /// A blob's bytes (a view into the buffer).
  std::string_view blob() { return bytes(u64()); }
  /// The next `n` raw bytes.
  std::string_view bytes(std::uint64_t n) {
    need(n);
    const std::string_view s = in_.substr(at_, static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return s;
  }
  /// A count that must not exceed what is left divided by `min_each` bytes per item (so a
  /// corrupt length cannot ask for a huge allocation).
  std::size_t count(std::size_t min_each = 1) {
    const std::uint64_t n = u64();
    if (min_each != 0 && n > remaining() / min_each) fail();
    return static_cast<std::size_t>(n);
  }
  std::size_t remaining() const noexcept { return in_.size() - at_; }
  bool done() const noexcept { return at_ == in_.size(); }

  [[noreturn]] void fail() const {
    throw std::invalid_argument("recorder: malformed " + std::string(what_) + " (" +
                                std::to_string(in_.size()) + " bytes, stopped at byte " +
                                std::to_string(at_) + ")");
  }

 private:
  void need(std::uint64_t n) const {
    if (n > remaining()) fail();
  }
  std::string_view in_;
  std::size_t at_ = 0;
  std::string_view what_;
};

/// FNV-1a, 64 bits: a fingerprint of `s` (not cryptographic).
constexpr std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = 14695981039346656037ull) {
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace recorder::detail
