#pragma once
/// `reduce::Last`: keeps only the latest recorded value (no libtorch).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace recorder::reduce {

/// Keeps the latest value only, overwriting its copy in place on every pass (no allocation once
/// shapes settle). The result is a copy of it. Mergeable: the merged state holds the other
/// state's value (the other is taken to come later).
struct Last : CountedFold {
  static constexpr std::string_view name = "last";

  template <has_elementwise_ops T>
  void update(CountedState<T>& s, const T& x) const {
    value_ops<T>::assign(s.value, x);
    ++s.count;
  }

  /// Takes `other`'s value when it has seen any; counts add.
  template <has_elementwise_ops T>
  void merge(CountedState<T>& s, const CountedState<T>& other) const {
    if (other.count != 0) value_ops<T>::assign(s.value, other.value);
    s.count += other.count;
  }

  /// Merged states share a dtype only: the later value wins, whatever its shape.
  static constexpr Share merged_states_share = Share::dtype;

  std::string statistic_name() const { return "last"; }
};

}  // namespace recorder::reduce
