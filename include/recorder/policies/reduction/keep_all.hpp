#pragma once
/// `reduce::KeepAll`: keeps an independent copy of every recorded value, optionally under a memory cap (no libtorch).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace recorder::reduce {

/// Thrown by `KeepAll` when keeping one more value would pass its `max_bytes` cap; nothing is
/// dropped: the values kept so far stay recorded.
class CapacityExceeded : public std::length_error {
 public:
  CapacityExceeded(std::size_t cap, std::uint64_t kept, std::size_t needed)
      : std::length_error(describe(cap, kept, needed)), cap_(cap), kept_(kept), needed_(needed) {}

  /// The cap, in bytes (`KeepAll::max_bytes`).
  std::size_t cap() const noexcept { return cap_; }
  /// How many values were kept when the cap was reached.
  std::uint64_t kept() const noexcept { return kept_; }
  /// The bytes the value that did not fit needs.
  std::size_t needed() const noexcept { return needed_; }

 private:
  static std::string describe(std::size_t cap, std::uint64_t kept, std::size_t needed) {
    return "keep-all memory cap of " + std::to_string(cap) + " bytes exceeded after " +
           std::to_string(kept) + (kept == 1 ? " sample" : " samples") + " (the next needs " +
           std::to_string(needed) + " bytes)";
  }
  std::size_t cap_;
  std::uint64_t kept_;
  std::size_t needed_;
};

/// The state of `KeepAll`: every value in recording order, and the bytes they take.
template <class T>
struct KeepAllState {
  std::vector<T> values;
  std::size_t bytes = 0;  ///< sum of `value_ops<T>::bytes` over `values`

  static constexpr auto fields() {
    return std::tuple{field("values", &KeepAllState::values), field("bytes", &KeepAllState::bytes)};
  }
};

/// Keeps an independent copy of every value (torchfunc's and scio's default): the result is the
/// `std::vector<T>` of them in recording order. Memory grows with every pass; `max_bytes`
/// (0: no cap) bounds it, `update` throwing `CapacityExceeded` once the next copy would pass it.
/// Mergeable: merging appends the other state's values.
///
/// Example: `reduce::KeepAll{.max_bytes = std::size_t{1} << 30}` keeps at most 1 GiB.
struct KeepAll {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "keep_all";
  static constexpr bool constant_memory = false;

  std::size_t max_bytes = 0;  ///< 0: no cap

  static constexpr auto fields() { return std::tuple{field("max_bytes", &KeepAll::max_bytes)}; }

  using values_part = elementwise_part;  ///< what it needs of `value_ops<T>`

  template <has_elementwise_ops T>
  using state = KeepAllState<T>;

  template <has_elementwise_ops T>
  KeepAllState<T> init(const T& first) const {
    const std::size_t need = value_ops<T>::bytes(first);
    check(0, 0, need);
    KeepAllState<T> s;
    s.values.push_back(value_ops<T>::copy(first));
    s.bytes = need;
    return s;
  }

  template <has_elementwise_ops T>
  void update(KeepAllState<T>& s, const T& x) const {
    const std::size_t need = value_ops<T>::bytes(x);
    check(s.bytes, s.values.size(), need);
    s.values.push_back(value_ops<T>::copy(x));
    s.bytes += need;
  }

  /// Every value kept, in recording order.
  template <has_elementwise_ops T>
  const std::vector<T>& result(const KeepAllState<T>& s) const {
    return s.values;
  }

  template <has_elementwise_ops T>
  std::uint64_t count(const KeepAllState<T>& s) const {
    return s.values.size();
  }

  /// Appends `other`'s values (copies of them) after `s`'s; throws `CapacityExceeded`, leaving
  /// `s` as it was, when they do not all fit under the cap.
  template <has_elementwise_ops T>
  void merge(KeepAllState<T>& s, const KeepAllState<T>& other) const {
    check(s.bytes, s.values.size(), other.bytes);
    std::vector<T> values;
    values.reserve(s.values.size() + other.values.size());
    values.insert(values.end(), s.values.begin(), s.values.end());
    for (const T& v : other.values) values.push_back(value_ops<T>::copy(v));
    s.values = std::move(values);
    s.bytes += other.bytes;
  }

  /// The summary statistic (a timing's one number): the mean of the kept numbers.
  std::string statistic_name() const { return "mean"; }
  template <class T>
  requires std::is_arithmetic_v<T>
  double statistic(const std::vector<T>& kept) const {
    double sum = 0;
    for (const T& v : kept) sum += static_cast<double>(v);
    return kept.empty() ? 0.0 : sum / static_cast<double>(kept.size());
  }

 private:
  void check(std::size_t used, std::uint64_t kept, std::size_t need) const {
    if (max_bytes != 0 && (used > max_bytes || need > max_bytes - used))
      throw CapacityExceeded(max_bytes, kept, need);
  }
};

}  // namespace recorder::reduce
