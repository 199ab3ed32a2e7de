#pragma once
/// Small text helpers shared by the front ends and renderers (no libtorch).

#include <cstddef>
#include <string>

namespace recorder::detail {

/// "[3, 3]" for sizes of any length.
template <class Sizes>
std::string sizes_string(const Sizes& sizes) {
  std::string s = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i != 0) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

/// A pooling kernel as torchinfo shows it: "3" when square (the int a Python user passes),
/// else "[3, 2]".
template <class Sizes>
std::string pool_kernel_string(const Sizes& sizes) {
  for (std::size_t i = 1; i < sizes.size(); ++i)
    if (sizes[i] != sizes[0]) return sizes_string(sizes);
  return sizes.size() == 0 ? std::string("[]") : std::to_string(sizes[0]);
}

}  // namespace recorder::detail
