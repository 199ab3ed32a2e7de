#pragma once
/// The parameters registered directly on a plain C++ module, read in place.

#include <torch/nn/module.h>
#include <torch/ordered_dict.h>

#include <cstdint>
#include <string>
#include <utility>

namespace recorder::detail {

/// libtorch 1.13 offers a module's own parameters only as copies (`named_parameters(false)` and
/// `parameters(false)` build a new `OrderedDict` or vector, with a hash index and a string per
/// name): that was 40% of registering a `Linear`. `Module::parameters_` is protected (for
/// `ParameterDict` and `ParameterList`), so a class derived from `Module` may form a pointer to
/// it, and the pointer reads it in any module.
struct ParameterReader : torch::nn::Module {
  static const torch::OrderedDict<std::string, at::Tensor>& of(
      const torch::nn::Module& m) noexcept {
    return m.*(&ParameterReader::parameters_);  // a pointer to torch::nn::Module's member
  }
};

/// Calls `f(name, tensor)` for each parameter registered directly on `m`, in order, skipping
/// undefined ones as `named_parameters(false)` does (a `Linear` without bias registers an
/// undefined `bias`).
template <class F>
void for_each_own_parameter(const torch::nn::Module& m, F&& f) {
  for (const auto& item : ParameterReader::of(m))
    if (item.value().defined()) f(item.key(), item.value());
}

/// The number of parameters registered directly on `m` (all, trainable), each counted where it
/// is registered.
inline std::pair<std::uint64_t, std::uint64_t> own_parameter_counts(const torch::nn::Module& m) {
  std::pair<std::uint64_t, std::uint64_t> n{0, 0};
  for_each_own_parameter(m, [&n](const std::string&, const at::Tensor& p) {
    const auto k = static_cast<std::uint64_t>(p.numel());
    n.first += k;
    if (p.requires_grad()) n.second += k;
  });
  return n;
}

}  // namespace recorder::detail
