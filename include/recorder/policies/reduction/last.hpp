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

  template <reducible T>
  using state = LastState<T>;

  template <reducible T>
  LastState<T> init(const T& first) const {
    return {value_ops<T>::copy(first), 1};
  }

  template <reducible T>
  void update(LastState<T>& s, const T& x) const {
    value_ops<T>::assign(s.value, x);
    ++s.count;
  }

  /// A copy of the latest value.
  template <reducible T>
  T result(const LastState<T>& s) const {
    return value_ops<T>::copy(s.value);
  }

  template <reducible T>
  std::uint64_t count(const LastState<T>& s) const {
    return s.count;
  }

  /// Takes `other`'s value when it has seen any; counts add.
  template <reducible T>
  void merge(LastState<T>& s, const LastState<T>& other) const {
    if (other.count != 0) value_ops<T>::assign(s.value, other.value);
    s.count += other.count;
  }
};

}  // namespace recorder::reduce
