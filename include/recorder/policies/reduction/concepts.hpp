#pragma once
/// Concepts for reduction policies: what happens to a recorded value over many passes (no libtorch).
///
/// ## reduction
/// **Requirements** (each a named part, so a failure names what is missing)
/// - `typename R::reduction_policy_tag` — opts the type in (`tagged_reduction`);
/// - `R::name`, a `std::string_view` constant such as `"sum"`, and `R::constant_memory`, a
///   `bool` constant: does the state stay the same size however many values it sees?
///   (`described_reduction`);
/// - `typename R::template state<T>`, a copyable value type (`has_reduction_state`);
/// - for `const R r`, `const T x`, a `state<T> s`: `r.init(x)` returns the state after one
///   value, `r.update(s, x)` folds one more in, `r.result(s)` gives what was recorded and
///   `r.count(s)` (a `std::uint64_t`) how many values the state has seen
///   (`reduction_steps`).
///
/// **Optional hooks**
/// - `r.merge(s, other)` folds a state of the same reduction, built from other values (another
///   process, another data shard), into `s` (`mergeable_reduction`); without it a reduction is
///   not mergeable;
/// - `using values_part = elementwise_part;` (or `moment_part`, `histogram_part`,
///   `quantile_part`, of `value_ops.hpp`): the part of `value_ops<T>` the reduction uses. When `R::state<T>` is
///   missing, `check_reduction` then says which part `T` lacks and what to add; without it the
///   message is a general one;
/// - `static constexpr auto fields()` on the state, on a result struct and on the reduction
///   itself when it has parameters (`fields.hpp`): with them, a mergeable reduction's states
///   cross processes (`merge_across`), its results are saved for Python as dicts and shown on
///   hover field by field, and the merge schema names its parameters — nothing else to write;
/// - `static constexpr Share merged_states_share` (`fields.hpp`): what merged states share;
/// - `r.statistic(result)` (a `double`) and `r.statistic_name()` (`"mean"`, `"p90"`): the one
///   number a summary shows for values reduced by `R`, and what it is (`has_statistic`; the
///   time columns of `record::Timing<R>`).
///
/// **Laws** (checked for every shipped model by the laws kit in
/// `tests/policies/reduction_laws.hpp`)
/// - `r.result(s)` after `init(x0)` and `update`s with `x1 ... xn` equals the reduction computed
///   directly on `x0 ... xn`, and `r.count(s) == n + 1`;
/// - states and results are values: a copy of a state is independent of it, and a result
///   (once held by value: `KeepAll` returns a reference) is independent of later updates (for
///   `at::Tensor`, whose copies share storage, a step copies an accumulator it shares before
///   writing to it);
/// - merge: for any split of a sequence, merging the state of the second part into the state
///   of the first gives the state of the whole (exactly, or up to rounding for floating sums);
/// - an `update` or `merge` that throws (shape mismatch, `CapacityExceeded`) leaves `s` as it
///   was.
///
/// **Models shipped** — `reduce::KeepAll`, `reduce::Last`, `reduce::Sum`, `reduce::Mean`,
/// `reduce::Moments`, `reduce::MinMax`, `reduce::AbsMax`, `reduce::Histogram`,
/// `reduce::Quantile` (all mergeable), and
/// `reduce::Custom<F>` (made by `reduce::custom(f)`; not mergeable). See `reduction.hpp`.
///
/// **Example**
/// ```cpp
/// struct Count {  // how many values were seen
///   using reduction_policy_tag = void;
///   static constexpr std::string_view name = "count";
///   static constexpr bool constant_memory = true;
///   template <class T> using state = std::uint64_t;
///   template <class T> std::uint64_t init(const T&) const { return 1; }
///   template <class T> void update(std::uint64_t& s, const T&) const { ++s; }
///   std::uint64_t result(std::uint64_t s) const { return s; }
///   std::uint64_t count(std::uint64_t s) const { return s; }
///   void merge(std::uint64_t& s, std::uint64_t other) const { s += other; }
/// };
/// static_assert(recorder::reduce::mergeable_reduction<Count, double>);
/// ```

#include <recorder/policies/reduction/value_ops.hpp>

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace recorder::reduce {

/// Part of `reduction`: the type opted in with `using reduction_policy_tag = void;`.
template <class R>
concept tagged_reduction = requires {
  typename R::reduction_policy_tag;
};

/// Part of `reduction`: `R::name` (a `std::string_view`) and `R::constant_memory` (a `bool`)
/// are compile-time constants.
template <class R>
concept described_reduction = requires {
  { R::name } -> std::convertible_to<std::string_view>;
  { R::constant_memory } -> std::convertible_to<bool>;
  typename std::bool_constant<R::constant_memory>;  // a constant expression (else: false)
};

/// Part of `reduction`: `R::state<T>` names a copyable state type.
template <class R, class T>
concept has_reduction_state = requires {
  typename R::template state<T>;
}
&&std::copyable<typename R::template state<T>>;

/// The state `R` keeps for values of type `T`.
template <class R, class T>
requires has_reduction_state<R, T>
using state_t = typename R::template state<T>;

/// Part of `reduction`: `init`, `update`, `result` and `count` with the state's type.
template <class R, class T>
concept reduction_steps = has_reduction_state<R, T> &&
    requires(const R& r, const T& x, state_t<R, T>& s, const state_t<R, T>& cs) {
  { r.init(x) } -> std::same_as<state_t<R, T>>;
  r.update(s, x);
  r.result(cs);
  { r.count(cs) } -> std::same_as<std::uint64_t>;
};

/// A policy for what happens to values of type `T` recorded over many passes.
template <class R, class T>
concept reduction = tagged_reduction<R> && described_reduction<R> && reduction_steps<R, T>;

/// Part of `mergeable_reduction`: `r.merge(s, other)` folds another state into `s`.
template <class R, class T>
concept has_merge = has_reduction_state<R, T> &&
    requires(const R& r, state_t<R, T>& s, const state_t<R, T>& other) {
  r.merge(s, other);
};

/// A reduction whose states built separately can be combined.
template <class R, class T>
concept mergeable_reduction = reduction<R, T> && has_merge<R, T>;

/// What `R` gives for values of type `T`: `decltype(r.result(s))`.
template <class R, class T>
requires reduction<R, T>
using result_t = decltype(std::declval<const R&>().result(std::declval<const state_t<R, T>&>()));

/// The optional summary hook: `r.statistic(result)` and `r.statistic_name()` (see above).
template <class R, class T>
concept has_statistic = reduction<R, T> && requires(const R& r, const result_t<R, T>& x) {
  { r.statistic(x) } -> std::convertible_to<double>;
  { r.statistic_name() } -> std::convertible_to<std::string>;
};

/// `true`, with a `static_assert` naming the first missing part of `reduction<R, T>` otherwise:
/// `static_assert(recorder::reduce::check_reduction<MyReduction, double>());`
template <class R, class T>
consteval bool check_reduction() {
  if constexpr (!tagged_reduction<R>) {
    static_assert(
        tagged_reduction<R>,
        "recorder: not a reduction policy: add `using reduction_policy_tag = void;` to it "
        "(or use a shipped one such as recorder::reduce::Mean, or recorder::reduce::custom(f))");
  } else if constexpr (!described_reduction<R>) {
    static_assert(
        described_reduction<R>,
        "recorder: a reduction needs `static constexpr std::string_view name = \"...\";` and "
        "`static constexpr bool constant_memory = ...;`");
  } else if constexpr (!has_reduction_state<R, T>) {
    // A reduction that names its `values_part` gets the message of the part of `value_ops<T>`
    // it uses and `T` lacks; the general message is for the rest.
    constexpr bool values_ok = [] {
      if constexpr (requires { typename R::values_part; })
        return check_part<typename R::values_part, T>();
      else
        return true;
    }();
    static_assert(
        !values_ok || has_reduction_state<R, T>,
        "recorder: a reduction needs `template <class T> using state = ...;`, a copyable type "
        "(is the value type reducible? for at::Tensor include <recorder/tensor/value_ops.hpp>)");
  } else {
    static_assert(reduction_steps<R, T>,
                  "recorder: a reduction needs const members `state<T> init(const T&)`, "
                  "`void update(state<T>&, const T&)`, `result(const state<T>&)` and "
                  "`std::uint64_t count(const state<T>&)`");
  }
  return reduction<R, T>;
}

}  // namespace recorder::reduce
