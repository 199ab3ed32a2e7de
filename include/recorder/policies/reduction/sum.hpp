#pragma once
/// `reduce::Sum`: the elementwise sum of every recorded value (no libtorch).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace recorder::reduce {

/// The elementwise sum of every value, accumulated in place in `T` (a float32 tensor sums in
/// float32; use `Moments` for a mean that must not drift). Every value needs the same shape.
/// Mergeable: sums add.
struct Sum : CountedFold {
  static constexpr std::string_view name = "sum";

  template <has_elementwise_ops T>
  void update(CountedState<T>& s, const T& x) const {
    value_ops<T>::add(s.value, x);
    ++s.count;
  }

  template <has_elementwise_ops T>
  void merge(CountedState<T>& s, const CountedState<T>& other) const {
    value_ops<T>::add(s.value, other.value);
    s.count += other.count;
  }

  std::string statistic_name() const { return "sum"; }
};

}  // namespace recorder::reduce
