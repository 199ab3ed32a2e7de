#pragma once
/// Reduction states as bytes and back, so processes can exchange them (`merge_across`): the
/// customization point `state_codec<S>`, shipped for every mergeable reduction's state over
/// `at::Tensor` and over numbers (ATen core only; no c10d).
///
/// **Requirements** of a `state_codec<S>` specialization (`has_state_codec<S>`):
/// - `static void encode(detail::ByteWriter&, const S&)`;
/// - `static S decode(detail::ByteReader&)`: what `encode` wrote, bit for bit;
/// - `static std::string describe(const S&)`: what states merged with it must share, as text
///   ("Double [4, 100]"); two states whose descriptions differ are not merged.
///
/// A reduction of your own merges across processes once its state has a codec and it has
/// `merge` (`reduce::mergeable_reduction`).

#include <recorder/detail/bytes.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/policies/reduction.hpp>
#include <recorder/tensor/value_ops.hpp>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/ScalarType.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace recorder {

template <class S>
struct state_codec;

/// A state type `merge_across` can send between processes: `state_codec<S>` is specialized.
template <class S>
concept has_state_codec = requires(detail::ByteWriter& w, detail::ByteReader& r, const S& s) {
  state_codec<S>::encode(w, s);
  { state_codec<S>::decode(r) } -> std::same_as<S>;
  { state_codec<S>::describe(s) } -> std::convertible_to<std::string>;
};

namespace detail {

/// "Double [4, 100]"; "undefined" for an undefined tensor.
inline std::string describe_tensor(const at::Tensor& t, bool with_shape = true) {
  if (!t.defined()) return "undefined";
  std::string s = c10::toString(t.scalar_type());
  if (!with_shape) return s;
  s += ' ';
  append_dims(s, t.sizes());
  return s;
}

inline void encode_value(ByteWriter& w, const at::Tensor& t) {
  w.number<std::uint8_t>(t.defined() ? 1 : 0);
  if (!t.defined()) return;
  if (t.is_complex() || t.is_quantized() || !t.device().is_cpu() || t.layout() != c10::kStrided)
    throw std::invalid_argument("recorder: cannot send a " + describe_tensor(t) + " tensor on " +
                                t.device().str() +
                                " between processes (CPU strided real tensors only)");
  const at::Tensor c = t.contiguous();
  w.number(static_cast<std::int8_t>(c.scalar_type()));
  w.u64(static_cast<std::uint64_t>(c.dim()));
  for (const std::int64_t d : c.sizes()) w.i64(d);
  const std::size_t n = c.nbytes();
  w.u64(n);
  if (n != 0) std::memcpy(w.extend(n), c.data_ptr(), n);
}

inline at::Tensor decode_tensor(ByteReader& r) {
  if (r.number<std::uint8_t>() == 0) return {};
  const auto type = r.number<std::int8_t>();
  if (type < 0 || type >= static_cast<std::int8_t>(c10::ScalarType::NumOptions)) r.fail();
  std::vector<std::int64_t> sizes(r.count(8));
  for (std::int64_t& d : sizes) {
    d = r.i64();
    if (d < 0) r.fail();
  }
  at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(static_cast<c10::ScalarType>(type)));
  const std::string_view bytes = r.bytes(r.u64());
  if (bytes.size() != t.nbytes()) r.fail();
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

template <class N>
requires std::is_arithmetic_v<N>
void encode_value(ByteWriter& w, const N& v) { w.number(v); }

template <class V>
void encode_value(ByteWriter& w, const std::vector<V>& vs) {
  w.u64(vs.size());
  for (const V& v : vs) encode_value(w, v);
}

template <class V>
struct value_codec;
template <>
struct value_codec<at::Tensor> {
  static at::Tensor decode(ByteReader& r) { return decode_tensor(r); }
  static std::string describe(const at::Tensor& t, bool with_shape) {
    return describe_tensor(t, with_shape);
  }
};
template <class N>
requires std::is_arithmetic_v<N>
struct value_codec<N> {
  static N decode(ByteReader& r) { return r.number<N>(); }
  static std::string describe(const N&, bool) { return {}; }  // numbers always merge
};
template <class V>
struct value_codec<std::vector<V>> {
  static std::vector<V> decode(ByteReader& r) {
    std::vector<V> out(r.count(1));
    for (V& v : out) v = value_codec<V>::decode(r);
    return out;
  }
  static std::string describe(const std::vector<V>& v, bool) {
    return std::to_string(v.size()) + " bins";
  }
};

template <class V>
V decode_value(ByteReader& r) {
  return value_codec<V>::decode(r);
}
template <class V>
std::string describe_value(const V& v, bool with_shape = true) {
  return value_codec<V>::describe(v, with_shape);
}

}  // namespace detail

// ---- the shipped reductions' states ------------------------------------------------------

/// `Sum`, `Mean`, `Last` (and custom) states: the folded value and the count.
template <class T>
struct state_codec<reduce::CountedState<T>> {
  static void encode(detail::ByteWriter& w, const reduce::CountedState<T>& s) {
    detail::encode_value(w, s.value);
    w.u64(s.count);
  }
  static reduce::CountedState<T> decode(detail::ByteReader& r) {
    reduce::CountedState<T> s{detail::decode_value<T>(r), 0};
    s.count = r.u64();
    return s;
  }
  static std::string describe(const reduce::CountedState<T>& s) {
    return detail::describe_value(s.value);
  }
};

/// `Moments`: mean and sum of squared deviations (double), and the count.
template <class T>
struct state_codec<reduce::MomentsState<T>> {
  using W = reduce::wide_t<T>;
  static void encode(detail::ByteWriter& w, const reduce::MomentsState<T>& s) {
    detail::encode_value(w, s.mean);
    detail::encode_value(w, s.m2);
    w.u64(s.count);
  }
  static reduce::MomentsState<T> decode(detail::ByteReader& r) {
    reduce::MomentsState<T> s;
    s.mean = detail::decode_value<W>(r);
    s.m2 = detail::decode_value<W>(r);
    s.count = r.u64();
    return s;
  }
  static std::string describe(const reduce::MomentsState<T>& s) {
    return detail::describe_value(s.mean);
  }
};

/// `MinMax`: the extremes and the count.
template <class T>
struct state_codec<reduce::MinMaxState<T>> {
  static void encode(detail::ByteWriter& w, const reduce::MinMaxState<T>& s) {
    detail::encode_value(w, s.min);
    detail::encode_value(w, s.max);
    w.u64(s.count);
  }
  static reduce::MinMaxState<T> decode(detail::ByteReader& r) {
    reduce::MinMaxState<T> s;
    s.min = detail::decode_value<T>(r);
    s.max = detail::decode_value<T>(r);
    s.count = r.u64();
    return s;
  }
  static std::string describe(const reduce::MinMaxState<T>& s) {
    return detail::describe_value(s.min);
  }
};

/// `Histogram`: the bin counts and the count of values.
template <class T>
struct state_codec<reduce::HistogramState<T>> {
  using H = reduce::histogram_t<T>;
  static void encode(detail::ByteWriter& w, const reduce::HistogramState<T>& s) {
    detail::encode_value(w, s.counts);
    w.u64(s.count);
  }
  static reduce::HistogramState<T> decode(detail::ByteReader& r) {
    reduce::HistogramState<T> s;
    s.counts = detail::decode_value<H>(r);
    s.count = r.u64();
    return s;
  }
  static std::string describe(const reduce::HistogramState<T>& s) {
    return detail::describe_value(s.counts);
  }
};

/// `KeepAll`: every value kept (each may have its own shape) and their bytes.
template <class T>
struct state_codec<reduce::KeepAllState<T>> {
  static void encode(detail::ByteWriter& w, const reduce::KeepAllState<T>& s) {
    detail::encode_value(w, s.values);
    w.u64(s.bytes);
  }
  static reduce::KeepAllState<T> decode(detail::ByteReader& r) {
    reduce::KeepAllState<T> s;
    s.values = detail::decode_value<std::vector<T>>(r);
    s.bytes = static_cast<std::size_t>(r.u64());
    return s;
  }
  /// The dtype only: kept values may change shape (a last, smaller batch).
  static std::string describe(const reduce::KeepAllState<T>& s) {
    return s.values.empty() ? std::string() : detail::describe_value(s.values.front(), false);
  }
};

/// `Quantile`: every number.
template <class T>
struct state_codec<reduce::QuantileState<T>> {
  static void encode(detail::ByteWriter& w, const reduce::QuantileState<T>& s) {
    detail::encode_value(w, s.values);
  }
  static reduce::QuantileState<T> decode(detail::ByteReader& r) {
    return {detail::decode_value<std::vector<T>>(r)};
  }
  static std::string describe(const reduce::QuantileState<T>&) { return {}; }
};

namespace detail {

/// What states merged under reduction `r` must share besides their own description: the
/// reduction and its parameters ("histogram(bins=64, lo=-4, hi=4)").
template <class R>
std::string describe_reduction(const R&) {
  return std::string(R::name);
}
inline std::string describe_reduction(const reduce::Histogram& h) {
  return "histogram(bins=" + std::to_string(h.bins()) + ", lo=" + shortest(h.lo()) +
         ", hi=" + shortest(h.hi()) + ")";
}
inline std::string describe_reduction(const reduce::Moments& m) {
  return "moments(correction=" + std::to_string(m.correction) + ")";
}
inline std::string describe_reduction(const reduce::KeepAll& k) {
  return "keep_all(max_bytes=" + std::to_string(k.max_bytes) + ")";
}
inline std::string describe_reduction(const reduce::Quantile& q) {
  return "quantile(q=" + shortest(q.q) + ")";
}

/// A state's description for the schema: `Last` keeps only the dtype (the chosen rank's value
/// wins, whatever its shape).
template <class R, class S>
std::string describe_state(const S& s) {
  if constexpr (std::is_same_v<R, reduce::Last> && requires { s.value; }) {
    if constexpr (std::is_same_v<std::decay_t<decltype(s.value)>, at::Tensor>)
      return describe_tensor(s.value, false);
    else
      return {};
  } else {
    return state_codec<S>::describe(s);
  }
}

}  // namespace detail

}  // namespace recorder
