#pragma once
/// `reduce::Last`: keeps only the latest recorded value (no libtorch).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstdint>
#include <string_view>

namespace recorder::reduce {

/// The state of `Last`: the latest value and how many values were seen.
template <class T>
struct LastState {
  T value;
  std::uint64_t count = 0;
};

/// Keeps the latest value only, overwriting its copy in place on every pass (no allocation once
/// shapes settle). The result is a copy of it. Mergeable: the merged state holds the other
/// state's value (the other is taken to come later).
struct Last {
  using reduction_policy_tag = void;
  static constexpr std::string_view name = "last";
  static constexpr bool constant_memory = true;

  /// The part of `value_ops<T>` this reduction uses (`check_reduction` names it when missing).
  template <class T>
  static consteval bool check_values() {
    return check_elementwise_ops<T>();
  }

  template <has_elementwise_ops T>
  using state = LastState<T>;

  template <has_elementwise_ops T>
  LastState<T> init(const T& first) const {
    return {value_ops<T>::copy(first), 1};
  }

  template <has_elementwise_ops T>
  void update(LastState<T>& s, const T& x) const {
    value_ops<T>::assign(s.value, x);
    ++s.count;
  }

  /// A copy of the latest value.
  template <has_elementwise_ops T>
  T result(const LastState<T>& s) const {
    return value_ops<T>::copy(s.value);
  }

  template <has_elementwise_ops T>
  std::uint64_t count(const LastState<T>& s) const {
    return s.count;
  }

  /// Takes `other`'s value when it has seen any; counts add.
  template <has_elementwise_ops T>
  void merge(LastState<T>& s, const LastState<T>& other) const {
    if (other.count != 0) value_ops<T>::assign(s.value, other.value);
    s.count += other.count;
  }
};

}  // namespace recorder::reduce
