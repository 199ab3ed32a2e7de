#pragma once
/// Fields described once: a reduction's state, its result and its parameters list their
/// members by name, and everything generic (the wire codec, Python saving, hover facts, the
/// merge schema) walks that list (no libtorch).
///
/// ## described
/// **Requirements** — `S::fields()`, a static constexpr function returning a `std::tuple` of
/// `reduce::field("name", &S::member)`, in a fixed order (the order things are written in).
///
/// A reduction describes:
/// - its **state** (`MomentsState<T>`: `mean`, `m2`, `count`), so the state crosses processes
///   without a codec of its own (`distributed/state_codec.hpp`); its first field says what
///   states merged together must share (its dtype, and its shape unless the reduction's
///   `merged_states_share` says `Share::dtype`);
/// - its **result**, when it is a struct (`MomentsResult<W>`: `mean`, `variance`, `count`), so
///   it is saved for Python as a dict and shown on hover field by field;
/// - its **parameters**, when it has any (`Histogram`: `bins`, `lo`, `hi`), so the merge
///   schema names them ("histogram(bins=64, lo=-4, hi=4)") and refuses to mix two settings.
///
/// **Example**
/// ```cpp
/// template <class T>
/// struct RangeState {
///   T lo, hi;
///   std::uint64_t count = 0;
///   static constexpr auto fields() {
///     return std::tuple{reduce::field("lo", &RangeState::lo), reduce::field("hi", &RangeState::hi),
///                       reduce::field("count", &RangeState::count)};
///   }
/// };
/// ```
/// Members stay plain members: the type stays an aggregate (`RangeState<double>{0, 1, 1}`).

#include <string_view>
#include <tuple>
#include <type_traits>

namespace recorder::reduce {

/// One described member: its name and a pointer to it.
template <class S, class M>
struct Field {
  std::string_view name;
  M S::*member;
};

/// `Field` for `&S::member`, named `name`.
template <class S, class M>
constexpr Field<S, M> field(std::string_view name, M S::*member) {
  return {name, member};
}

/// A type whose members are described by `S::fields()` (see above).
template <class S>
concept described = requires {
  S::fields();
  std::tuple_size<std::remove_cvref_t<decltype(S::fields())>>::value;
};

/// Calls `f(name, s.member)` for each described member of `s`, in order; const-ness follows
/// `s` (a non-const `s` lends its members for writing, as a decoder does).
template <class S, class F>
requires described<std::remove_cvref_t<S>>
constexpr void for_each_field(S&& s, F&& f) {
  std::apply([&](const auto&... fd) { (f(fd.name, s.*(fd.member)), ...); },
             std::remove_cvref_t<S>::fields());
}

/// The name of the first described member of `S` (the one that says what merged states share).
template <described S>
constexpr std::string_view first_field_name() {
  return std::get<0>(S::fields()).name;
}

/// What two states of one reduction must share to merge, besides the reduction's parameters:
/// the dtype and shape of their first field (elementwise sums, extremes, moments), or its dtype
/// alone (`Last` takes one side's value whatever its shape; `KeepAll` keeps values of any
/// shape). A reduction says which with `static constexpr Share merged_states_share = ...;`;
/// without it, constant-memory reductions need the shape and the others the dtype.
enum class Share { dtype_and_shape, dtype };

/// What reduction `R`'s merged states share (`R::merged_states_share`, or the default above).
template <class R>
constexpr Share merged_states_share() {
  if constexpr (requires { R::merged_states_share; })
    return R::merged_states_share;
  else
    return R::constant_memory ? Share::dtype_and_shape : Share::dtype;
}

}  // namespace recorder::reduce
