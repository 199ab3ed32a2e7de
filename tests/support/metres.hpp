#pragma once
/// A user's value type for the reductions: a length in metres, with the elementwise part of
/// `reduce::value_ops` only (no moments, no histograms). Shared by tests/policies and the
/// compile-fail cases that show which reductions refuse it (torch-free).

#include <recorder/policies/reduction/value_ops.hpp>

#include <cstddef>

namespace test {

struct Metres {
  double v = 0;
  friend bool operator==(const Metres&, const Metres&) = default;
};

}  // namespace test

template <>
struct recorder::reduce::value_ops<test::Metres> {
  using Metres = test::Metres;
  static Metres copy(const Metres& x) { return x; }
  static void assign(Metres& acc, const Metres& x) { acc = x; }
  static void add(Metres& acc, const Metres& x) { acc.v += x.v; }
  static Metres divide(const Metres& acc, double n) { return {acc.v / n}; }
  static void min_into(Metres& acc, const Metres& x) {
    if (x.v < acc.v) acc = x;
  }
  static void max_into(Metres& acc, const Metres& x) {
    if (x.v > acc.v) acc = x;
  }
  static std::size_t bytes(const Metres&) { return sizeof(Metres); }
};
