// EXPECT: recorder: this reduction needs the histogram part of recorder::reduce::value_ops<T> \(has_histogram_ops\)
/// A reduction asks a value type only for the part of value_ops it uses: a type with the
/// elementwise part alone is a value for Sum (the twin), not for Histogram, and the library's
/// checker names the part it lacks.
#include <recorder/policies/reduction.hpp>

#include <cstddef>

struct Metres {
  double v = 0;
};

template <>
struct recorder::reduce::value_ops<Metres> {
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

#ifdef RECORDER_COMPILE_FAIL_TWIN
static_assert(recorder::reduce::check_reduction<recorder::reduce::Sum, Metres>());
#else
static_assert(recorder::reduce::check_reduction<recorder::reduce::Histogram, Metres>());
#endif
