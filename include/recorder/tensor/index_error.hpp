#pragma once
/// What libtorch's index errors leave out: an `Embedding` given a token id outside its table
/// fails with "index out of range in self". Which index, and how many rows the table has, are
/// what a user needs to fix the input or the vocabulary size (ATen only).

#include <recorder/graph/graph.hpp>

#include <ATen/core/Tensor.h>
#include <ATen/ops/aminmax.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace recorder::detail {

/// `message` (libtorch's error of a call of module `m` with tensor arguments `inputs`), with
/// the offending index and the table's size added when `m` is an `Embedding` or `EmbeddingBag`
/// that refused an index: "index out of range in self (index 5321 given to an Embedding of
/// 5000 rows: ids must lie in [0, 5000))". Otherwise `message` unchanged. Never throws.
inline std::string explain_index_error(std::string message, const ModuleInfo& m,
                                       std::span<const at::Tensor> inputs) noexcept {
  try {
    if (message.find("index out of range") == std::string::npos || inputs.empty()) return message;
    if (m.class_name != "Embedding" && m.class_name != "EmbeddingBag") return message;
    std::int64_t rows = -1;
    for (const ParamInfo& p : m.params)
      if (p.name == "weight" && p.shape.size() == 2) rows = p.shape[0];
    const at::Tensor& ids = inputs.front();
    if (rows < 0 || !ids.defined() || ids.numel() == 0 ||
        !at::isIntegralType(ids.scalar_type(), /*includeBool=*/false))
      return message;
    const auto [lo, hi] = at::aminmax(ids);
    const std::int64_t low = lo.item<std::int64_t>();
    const std::int64_t high = hi.item<std::int64_t>();
    if (low >= 0 && high < rows) return message;  // not the indices' fault: libtorch's word
    const std::int64_t bad = high >= rows ? high : low;
    return message + " (index " + std::to_string(bad) + " given to an " + m.class_name + " of " +
           std::to_string(rows) + " rows: ids must lie in [0, " + std::to_string(rows) + "))";
  } catch (...) {
    return message;
  }
}

}  // namespace recorder::detail
