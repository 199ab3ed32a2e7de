#pragma once
/// `value_codec<at::Tensor>`: a tensor as bytes and back (dtype, sizes, contiguous data), for
/// the states `merge_across` sends (ATen core only; no c10d). CPU strided real tensors only.

#include <recorder/detail/bytes.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/distributed/state_codec.hpp>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/ScalarType.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace recorder {

/// Tensors: defined or not, dtype, sizes, then the bytes of a contiguous copy. Described as
/// "Double [4, 100]" ("Double" without the shape; "undefined" for an undefined tensor).
template <>
struct value_codec<at::Tensor> {
  static void encode(detail::ByteWriter& w, const at::Tensor& t) {
    w.number<std::uint8_t>(t.defined() ? 1 : 0);
    if (!t.defined()) return;
    if (t.is_complex() || t.is_quantized() || !t.device().is_cpu() || t.layout() != c10::kStrided)
      throw std::invalid_argument("recorder: cannot send a " + describe(t, true) + " tensor on " +
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

  static at::Tensor decode(detail::ByteReader& r) {
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

  static std::string describe(const at::Tensor& t, bool with_shape) {
    if (!t.defined()) return "undefined";
    std::string s = c10::toString(t.scalar_type());
    if (!with_shape) return s;
    s += ' ';
    detail::append_dims(s, t.sizes());
    return s;
  }
};

}  // namespace recorder
