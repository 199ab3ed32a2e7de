#pragma once
/// `reduce::value_ops<T>`: the customization point through which reductions act on recorded values (no libtorch).

#include <recorder/policies/reduction/fields.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder::reduce {

/// The arithmetic a reduction needs on a recorded value of type `T`, as static members.
/// Reductions are written once against it, tested on `double`, and used with `at::Tensor`.
///
/// **Requirements** — four named parts, each reduction asking only for the one it uses
/// ("elementwise" is per element for tensors):
///
/// *Elementwise* (`has_elementwise_ops`; `Sum`, `Mean`, `Last`, `MinMax`, `KeepAll`, `custom`):
/// `copy`, `assign`, `add`, `min_into`, `max_into`, `divide`, `bytes` below (`custom` also
/// calls `apply`).
///
/// *Moments* (`has_moment_ops`; `Moments`): `wide_type`, `widen`, `zero_like`,
/// `welford_update`, `welford_merge`, `variance`, and `value_ops<wide_type>::copy`.
///
/// *Histograms* (`has_histogram_ops`; `Histogram`): `histogram_type`, `histogram_zero`,
/// `histogram_add`, `histogram_merge`.
///
/// *Quantiles* (`has_quantile_ops`; `Quantile`): `copy` (as in the elementwise part), `quantile`,
/// and `wide_type`.
///
/// The members:
/// - `wide_type`: the accumulator of running moments (`double`; a double `at::Tensor`); it is
///   itself a value with `value_ops` (so `value_ops<wide_type>::copy` exists);
/// - `histogram_type`: bin counts (`std::vector<std::uint64_t>`; an int64 `at::Tensor`);
/// - `T copy(const T& x)`: an independent copy (tensors: detached, contiguous, own storage);
/// - `void assign(T& acc, const T& x)`: `acc` becomes an independent copy of `x`, reusing its
///   storage when shape and dtype match;
/// - `void add(T& acc, const T& x)`, `void min_into(T& acc, const T& x)`,
///   `void max_into(T& acc, const T& x)`: in place, elementwise; min/max propagate NaN as
///   `torch.minimum`/`torch.maximum` do;
/// - `T divide(const T& acc, double n)`: a new value `acc / n`;
/// - `wide_type widen(const T& x)`: an independent copy at double precision;
/// - `wide_type zero_like(const wide_type& w)`: zeros shaped like `w`;
/// - `void welford_update(wide_type& mean, wide_type& m2, const T& x, std::uint64_t n)`, `n`
///   counting `x`: `delta = x - mean; mean += delta / n; m2 += delta * (x - mean)`;
/// - `void welford_merge(wide_type& mean, wide_type& m2, std::uint64_t n, const wide_type&
///   mean_b, const wide_type& m2_b, std::uint64_t n_b)`: Chan et al.'s parallel update, `n`
///   and `n_b` counted before merging; nothing when `n_b == 0`, a copy of `b` when `n == 0`;
/// - `wide_type variance(const wide_type& m2, std::uint64_t n, std::int64_t correction)`:
///   `m2 / (n - correction)`, NaN where `n <= correction` (as `torch.var`);
/// - `histogram_type histogram_zero(std::size_t bins)`;
///   `void histogram_add(histogram_type& counts, const T& x, std::size_t bins, double lo,
///   double hi)`: `torch.histc` semantics over every element of `x`: `bins` equal-width bins
///   over `[lo, hi]`, an element `e` going to bin `floor((e - lo) * bins / (hi - lo))`
///   computed in double (PyTorch 2.x's histc expression; the tensor ops use the expression of
///   the libtorch in use, `detail::loops::HistcRule`), `hi` in the last bin, elements outside
///   `[lo, hi]` and NaN not counted;
///   `void histogram_merge(histogram_type& counts, const histogram_type& other)`;
/// - `wide_type quantile(std::span<const T> values, double q)`: the `q`-quantile (`q` in [0, 1])
///   of `values` element by element, in `wide_type`: linear interpolation between the two
///   nearest ranks (`torch.quantile`'s and NumPy's default), NaN sorted last (a quantile below
///   the NaNs is a number); every value has one shape; `values` is not empty;
/// - `template <class F> void apply(const F& f, T& acc, const T& x)`: `acc = f(acc, x)` on
///   values that build no autograd graph, the new `acc` independent of `x` (`reduce::custom`);
/// - `std::size_t bytes(const T& x)`: the memory a kept copy takes (`reduce::KeepAll`'s cap).
///
/// **Optional hooks** — one, in the elementwise part: `void min_max_into(T& lo, T& hi, const
/// T& x)`, `min_into(lo, x)` and `max_into(hi, x)` at once (one pass over `x`; it throws before
/// changing either); `MinMax::update` calls it when present (`has_min_max_into`; `at::Tensor`
/// has it). A type may implement only some parts: one with the elementwise part alone works
/// with `Sum`, `Mean`, `Last`, `MinMax` and `KeepAll`, and `check_reduction<Moments, T>()`
/// then names the moment part it lacks. `reducible<T>` is the conjunction of all four: what
/// every shipped reduction accepts.
///
/// **Laws** — no operation modifies its `const` arguments; an operation that throws (a shape
/// mismatch) leaves its accumulators as they were; results never alias their inputs.
///
/// **Models shipped** (all four parts) — every arithmetic type (here), and `at::Tensor` in
/// `<recorder/tensor/value_ops.hpp>` (include it to reduce tensors).
///
/// **Example**
/// ```cpp
/// using ops = recorder::reduce::value_ops<double>;
/// double mean = ops::widen(2.0), m2 = ops::zero_like(mean);
/// ops::welford_update(mean, m2, 4.0, 2);  // mean == 3, m2 == 2
/// ```
template <class T>
struct value_ops;

/// `value_ops` for `bool`, integers and floating-point numbers. Integer sums wrap around as
/// tensor sums do (two's complement); `divide` truncates back to `T`; quantiles are doubles.
template <class T>
requires std::is_arithmetic_v<T>
struct value_ops<T> {
  using wide_type = double;
  using histogram_type = std::vector<std::uint64_t>;

  static T copy(const T& x) { return x; }
  static void assign(T& acc, const T& x) { acc = x; }

  static void add(T& acc, const T& x) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      using U = std::make_unsigned_t<T>;
      acc = static_cast<T>(static_cast<U>(static_cast<U>(acc) + static_cast<U>(x)));
    } else {
      acc = static_cast<T>(acc + x);
    }
  }

  static T divide(const T& acc, double n) { return static_cast<T>(static_cast<double>(acc) / n); }

  static void min_into(T& acc, const T& x) {
    if (x < acc || is_nan(x)) acc = x;
  }
  static void max_into(T& acc, const T& x) {
    if (x > acc || is_nan(x)) acc = x;
  }

  static wide_type widen(const T& x) { return static_cast<double>(x); }
  static wide_type zero_like(const wide_type&) { return 0.0; }

  static void welford_update(wide_type& mean, wide_type& m2, const T& x, std::uint64_t n) {
    const double v = static_cast<double>(x);
    const double delta = v - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (v - mean);
  }

  static void welford_merge(wide_type& mean, wide_type& m2, std::uint64_t n,
                            const wide_type& mean_b, const wide_type& m2_b, std::uint64_t n_b) {
    if (n_b == 0) return;
    if (n == 0) {
      mean = mean_b;
      m2 = m2_b;
      return;
    }
    const double na = static_cast<double>(n), nb = static_cast<double>(n_b), nab = na + nb;
    const double delta = mean_b - mean;
    mean += delta * (nb / nab);
    m2 += m2_b + delta * delta * (na * nb / nab);
  }

  static wide_type variance(const wide_type& m2, std::uint64_t n, std::int64_t correction) {
    const double dof = static_cast<double>(n) - static_cast<double>(correction);
    if (!(dof > 0)) return std::numeric_limits<double>::quiet_NaN();
    return m2 / dof;
  }

  static histogram_type histogram_zero(std::size_t bins) { return histogram_type(bins, 0); }

  static void histogram_add(histogram_type& counts, const T& x, std::size_t bins, double lo,
                            double hi) {
    if (counts.size() != bins) throw std::invalid_argument(bins_mismatch(counts.size(), bins));
    const double v = static_cast<double>(x);
    if (!(v >= lo && v <= hi)) return;  // outside, or NaN
    // PyTorch 2.x's torch.histc expression (aten/src/ATen/native/cpu/HistogramKernel.cpp),
    // rounding included: -0.3 of [-1.5, 1.5] in 10 bins is bin 4, where libtorch 1.13, dividing
    // by the range first, gives bin 3 (detail::loops::HistcRule).
    auto pos = static_cast<std::size_t>((v - lo) * static_cast<double>(bins) / (hi - lo));
    if (pos >= bins) pos = bins - 1;
    ++counts[pos];
  }

  static void histogram_merge(histogram_type& counts, const histogram_type& other) {
    if (counts.size() != other.size())
      throw std::invalid_argument(bins_mismatch(counts.size(), other.size()));
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] += other[i];
  }

  static wide_type quantile(std::span<const T> values, double q) {
    std::vector<double> v(values.begin(), values.end());
    if (v.empty()) return 0.0;
    const auto nan_last = [](double a, double b) { return a < b || (a == a && b != b); };
    std::sort(v.begin(), v.end(), nan_last);
    const double at = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(at);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    const double frac = at - static_cast<double>(lo);
    return frac == 0.0 ? v[lo] : v[lo] + (v[hi] - v[lo]) * frac;
  }

  template <class F>
  static void apply(const F& f, T& acc, const T& x) {
    acc = static_cast<T>(std::invoke(f, acc, x));
  }

  static std::size_t bytes(const T&) { return sizeof(T); }

 private:
  static bool is_nan(const T& x) {
    if constexpr (std::is_floating_point_v<T>)
      return std::isnan(x);
    else
      return false;
  }
  static std::string bins_mismatch(std::size_t have, std::size_t got) {
    return "recorder: reduce: histograms of " + std::to_string(have) + " and " +
           std::to_string(got) + " bins cannot be combined";
  }
};

/// The accumulator type of `T`'s running moments: `value_ops<T>::wide_type`.
template <class T>
using wide_t = typename value_ops<T>::wide_type;

/// The bin-count type of `T`'s histograms: `value_ops<T>::histogram_type`.
template <class T>
using histogram_t = typename value_ops<T>::histogram_type;

/// Part of `reducible`: `value_ops<T>` is defined and names its two associated types.
template <class T>
concept has_value_ops = requires {
  typename value_ops<T>::wide_type;
  typename value_ops<T>::histogram_type;
};

/// Part of `reducible`, what `Sum`, `Mean`, `Last`, `MinMax`, `KeepAll` and `custom` use:
/// copying, assigning, combining and sizing values of `T`.
template <class T>
concept has_elementwise_ops = requires(T& acc, const T& x, double n) {
  { value_ops<T>::copy(x) } -> std::same_as<T>;
  value_ops<T>::assign(acc, x);
  value_ops<T>::add(acc, x);
  { value_ops<T>::divide(x, n) } -> std::same_as<T>;
  value_ops<T>::min_into(acc, x);
  value_ops<T>::max_into(acc, x);
  { value_ops<T>::bytes(x) } -> std::same_as<std::size_t>;
};

/// The optional hook of the elementwise part: `value_ops<T>::min_max_into(lo, hi, x)`, both
/// extremes in one step (`MinMax` falls back to `min_into` and `max_into` without it).
template <class T>
concept has_min_max_into = requires(T& lo, T& hi, const T& x) {
  value_ops<T>::min_max_into(lo, hi, x);
};

/// Part of `reducible`, what `Moments` uses: running moments in `wide_type`.
template <class T>
concept has_moment_ops = requires {
  typename value_ops<T>::wide_type;
}
&&requires(const T& x, wide_t<T>& w, const wide_t<T>& cw, std::uint64_t n, std::int64_t c) {
  { value_ops<T>::widen(x) } -> std::same_as<wide_t<T>>;
  { value_ops<T>::zero_like(cw) } -> std::same_as<wide_t<T>>;
  value_ops<T>::welford_update(w, w, x, n);
  value_ops<T>::welford_merge(w, w, n, cw, cw, n);
  { value_ops<T>::variance(cw, n, c) } -> std::same_as<wide_t<T>>;
  { value_ops<wide_t<T>>::copy(cw) } -> std::same_as<wide_t<T>>;
};

/// Part of `reducible`, what `Histogram` uses: histograms in `histogram_type`.
template <class T>
concept has_histogram_ops = requires {
  typename value_ops<T>::histogram_type;
}
&&requires(const T& x, histogram_t<T>& h, const histogram_t<T>& ch, std::size_t bins, double lo) {
  { value_ops<T>::histogram_zero(bins) } -> std::same_as<histogram_t<T>>;
  value_ops<T>::histogram_add(h, x, bins, lo, lo);
  value_ops<T>::histogram_merge(h, ch);
};

/// Part of `reducible`, what `Quantile` uses: copies of every value, and their quantiles.
template <class T>
concept has_quantile_ops = requires {
  typename value_ops<T>::wide_type;
}
&&requires(const T& x, std::span<const T> values, double q) {
  { value_ops<T>::copy(x) } -> std::same_as<T>;
  { value_ops<T>::quantile(values, q) } -> std::same_as<wide_t<T>>;
};

/// A value type every shipped reduction accepts: one with all four parts of `value_ops<T>`.
/// A reduction asks only for the part it uses (`has_elementwise_ops`, `has_moment_ops`,
/// `has_histogram_ops`, `has_quantile_ops`). For `at::Tensor`, include
/// `<recorder/tensor/value_ops.hpp>`.
template <class T>
concept reducible = std::copyable<T> && has_value_ops<T> && has_elementwise_ops<T> &&
    has_moment_ops<T> && has_histogram_ops<T> && has_quantile_ops<T>;

/// `true` when `T` has the elementwise part of `value_ops`, a `static_assert` saying what to
/// add otherwise. A reduction names the part it uses with `using values_part = ...;` (the tags
/// below), so `check_reduction<R, T>()` calls the checker of that part and names what a value
/// type lacks.
template <class T>
consteval bool check_elementwise_ops() {
  static_assert(
      has_elementwise_ops<T>,
      "recorder: this reduction needs the elementwise part of recorder::reduce::value_ops<T> "
      "(has_elementwise_ops): specialize value_ops<T> with static copy, assign, add, divide, "
      "min_into, max_into and bytes (for at::Tensor include <recorder/tensor/value_ops.hpp>)");
  return has_elementwise_ops<T>;
}

/// `true` when `T` has the moment part of `value_ops`, a `static_assert` saying what to add
/// otherwise.
template <class T>
consteval bool check_moment_ops() {
  static_assert(has_moment_ops<T>,
                "recorder: this reduction needs the moment part of recorder::reduce::value_ops<T> "
                "(has_moment_ops): add `using wide_type = ...;` and static widen, zero_like, "
                "welford_update, welford_merge and variance to value_ops<T>, or use a reduction "
                "that needs only has_elementwise_ops (Sum, Mean)");
  return has_moment_ops<T>;
}

/// `true` when `T` has the histogram part of `value_ops`, a `static_assert` saying what to add
/// otherwise.
template <class T>
consteval bool check_histogram_ops() {
  static_assert(
      has_histogram_ops<T>,
      "recorder: this reduction needs the histogram part of recorder::reduce::value_ops<T> "
      "(has_histogram_ops): add `using histogram_type = ...;` and static histogram_zero, "
      "histogram_add and histogram_merge to value_ops<T>");
  return has_histogram_ops<T>;
}

/// `true` when `T` has the quantile part of `value_ops`, a `static_assert` saying what to add
/// otherwise.
template <class T>
consteval bool check_quantile_ops() {
  static_assert(has_quantile_ops<T>,
                "recorder: this reduction needs the quantile part of "
                "recorder::reduce::value_ops<T> (has_quantile_ops): add `using wide_type = ...;` "
                "and static copy and quantile(std::span<const T>, double q) to value_ops<T>");
  return has_quantile_ops<T>;
}

/// The parts of `value_ops<T>` a reduction can name as its `values_part`.
struct elementwise_part {};  ///< `has_elementwise_ops`: Sum, Mean, Last, MinMax, KeepAll, custom
struct moment_part {};       ///< `has_moment_ops`: Moments
struct histogram_part {};    ///< `has_histogram_ops`: Histogram
struct quantile_part {};     ///< `has_quantile_ops`: Quantile

/// The checker of part `Part` for values of type `T` (`check_elementwise_ops<T>()`, ...).
template <class Part, class T>
consteval bool check_part() {
  if constexpr (std::is_same_v<Part, moment_part>)
    return check_moment_ops<T>();
  else if constexpr (std::is_same_v<Part, histogram_part>)
    return check_histogram_ops<T>();
  else if constexpr (std::is_same_v<Part, quantile_part>)
    return check_quantile_ops<T>();
  else
    return check_elementwise_ops<T>();
}

/// The state of the reductions that fold every value into one `T` (Sum, Mean, Last, custom):
/// the folded value and how many values it holds.
template <class T>
struct CountedState {
  T value;
  std::uint64_t count = 0;

  static constexpr auto fields() {
    return std::tuple{field("value", &CountedState::value), field("count", &CountedState::count)};
  }
};

/// What the reductions that fold every value into one `T` share (Sum, Last, custom; Mean
/// through Sum): the tag, constant memory, the elementwise part of `value_ops<T>`, the state, a
/// copy of the first value as the first step, the count, and a copy of the folded value as the
/// result. Each adds its name, `update` and, when mergeable, `merge`.
struct CountedFold {
  using reduction_policy_tag = void;
  static constexpr bool constant_memory = true;
  using values_part = elementwise_part;  ///< what it needs of `value_ops<T>`

  template <has_elementwise_ops T>
  using state = CountedState<T>;

  template <has_elementwise_ops T>
  CountedState<T> init(const T& first) const {
    return {value_ops<T>::copy(first), 1};
  }

  template <has_elementwise_ops T>
  std::uint64_t count(const CountedState<T>& s) const {
    return s.count;
  }

  /// A copy of the folded value (the sum, the latest value, the accumulator; `Mean` divides).
  template <has_elementwise_ops T>
  T result(const CountedState<T>& s) const {
    return value_ops<T>::copy(s.value);
  }

  /// The summary statistic of a folded number (a timing's one number): the result itself;
  /// each reduction names it (`statistic_name`).
  template <class T>
  requires std::is_arithmetic_v<T>
  double statistic(const T& r) const { return static_cast<double>(r); }
};

}  // namespace recorder::reduce
