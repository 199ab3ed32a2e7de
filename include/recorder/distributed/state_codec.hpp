#pragma once
/// Reduction states as bytes and back, so processes can exchange them (`merge_across`): one
/// codec for every state that describes its fields (`reduce::described`, `fields.hpp`), built
/// on codecs of the values inside (numbers and lists here; `at::Tensor` in `tensor_codec.hpp`),
/// and the schema's descriptions of reductions and states (no libtorch).
///
/// **Requirements** of a `state_codec<S>` (`has_state_codec<S>`):
/// - `static void encode(detail::ByteWriter&, const S&)`;
/// - `static S decode(detail::ByteReader&)`: what `encode` wrote, bit for bit;
/// - `static std::string describe(const S&)`: what states merged with it must share, as text
///   ("Double [4, 100]"); two states whose descriptions differ are not merged.
///
/// A state with `fields()` has one: its fields in order, each through `value_codec<V>`. So a
/// reduction of your own merges across processes once it has `merge` and its state describes
/// its fields; specialize `state_codec<S>` only for a state that cannot.
///
/// **Requirements** of a `value_codec<V>` (`has_value_codec<V>`): `static void encode(
/// detail::ByteWriter&, const V&)`, `static V decode(detail::ByteReader&)`, and `static
/// std::string describe(const V&, bool with_shape)` (what values merged together share: their
/// dtype, with their shape when asked; empty for numbers, which always merge).

#include <recorder/detail/bytes.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/policies/reduction/concepts.hpp>
#include <recorder/policies/reduction/fields.hpp>

#include <concepts>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {

template <class V>
struct value_codec;
template <class S>
struct state_codec;

/// `C` writes values of type `V` as bytes and reads them back (`C::encode(w, v)`,
/// `C::decode(r)`): what `value_codec<V>` and `state_codec<S>` have in common.
template <class C, class V>
concept codec_for = requires(detail::ByteWriter& w, detail::ByteReader& r, const V& v) {
  C::encode(w, v);
  { C::decode(r) } -> std::same_as<V>;
};

/// A value type a state may hold and processes can exchange.
template <class V>
concept has_value_codec = codec_for<value_codec<V>, V> && requires(const V& v) {
  { value_codec<V>::describe(v, true) } -> std::convertible_to<std::string>;
};

/// Numbers: their bytes; any two merge.
template <class N>
requires std::is_arithmetic_v<N>
struct value_codec<N> {
  static void encode(detail::ByteWriter& w, const N& v) { w.number(v); }
  static N decode(detail::ByteReader& r) { return r.number<N>(); }
  static std::string describe(const N&, bool) { return {}; }
};

/// Lists: the length, then each value. Described by their first value ("Double") and, with the
/// shape, their length as a last dimension ("[64]" for 64 numbers).
template <class V>
struct value_codec<std::vector<V>> {
  static void encode(detail::ByteWriter& w, const std::vector<V>& vs) {
    w.u64(vs.size());
    for (const V& v : vs) value_codec<V>::encode(w, v);
  }
  static std::vector<V> decode(detail::ByteReader& r) {
    std::vector<V> out(r.count(1));
    for (V& v : out) v = value_codec<V>::decode(r);
    return out;
  }
  static std::string describe(const std::vector<V>& vs, bool with_shape) {
    std::string s = vs.empty() ? std::string() : value_codec<V>::describe(vs.front(), false);
    if (!with_shape) return s;
    if (!s.empty()) s += ' ';
    return s + '[' + std::to_string(vs.size()) + ']';
  }
};

/// A state type `merge_across` can send between processes: `state_codec<S>` is defined.
template <class S>
concept has_state_codec = codec_for<state_codec<S>, S> && requires(const S& s) {
  { state_codec<S>::describe(s) } -> std::convertible_to<std::string>;
};

/// Every state that describes its fields: each field through its `value_codec`, in order;
/// described by its first field, shape included.
template <class S>
requires reduce::described<S>
struct state_codec<S> {
  static void encode(detail::ByteWriter& w, const S& s) {
    reduce::for_each_field(s, [&w](std::string_view, const auto& v) {
      value_codec<std::remove_cvref_t<decltype(v)>>::encode(w, v);
    });
  }
  static S decode(detail::ByteReader& r) {
    S s{};
    reduce::for_each_field(s, [&r](std::string_view, auto& v) {
      v = value_codec<std::remove_cvref_t<decltype(v)>>::decode(r);
    });
    return s;
  }
  static std::string describe(const S& s, bool with_shape = true) {
    std::string out;
    bool first = true;
    reduce::for_each_field(s, [&](std::string_view, const auto& v) {
      if (first) out = value_codec<std::remove_cvref_t<decltype(v)>>::describe(v, with_shape);
      first = false;
    });
    return out;
  }
};

namespace detail {

/// One parameter of a reduction as the schema writes it: integers in decimal, others shortest.
template <class V>
std::string describe_parameter(const V& v) {
  if constexpr (std::is_integral_v<V>)
    return std::to_string(v);
  else
    return shortest(static_cast<double>(v));
}

/// What states merged under reduction `r` must share besides their own description: the
/// reduction and its described parameters ("histogram(bins=64, lo=-4, hi=4)", "sum").
template <class R>
std::string describe_reduction(const R& r) {
  std::string out(R::name);
  if constexpr (reduce::described<R>) {
    out += '(';
    bool first = true;
    reduce::for_each_field(r, [&](std::string_view name, const auto& v) {
      if (!first) out += ", ";
      first = false;
      out.append(name).append("=").append(describe_parameter(v));
    });
    out += ')';
  }
  return out;
}

/// A state's description for the schema, as reduction `R` says merged states must share
/// (`reduce::merged_states_share<R>()`: `Last` and `KeepAll` only the dtype).
template <class R, class S>
std::string describe_state(const S& s) {
  if constexpr (reduce::described<S>)
    return state_codec<S>::describe(
        s, reduce::merged_states_share<R>() == reduce::Share::dtype_and_shape);
  else
    return state_codec<S>::describe(s);
}

}  // namespace detail

}  // namespace recorder
