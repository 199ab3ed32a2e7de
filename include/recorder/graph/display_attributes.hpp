#pragma once
/// The module attributes a summary row or a drawn box shows beside the parameters, by one rule
/// for both front ends (no libtorch): torchinfo's `kernel_size` for convolutions and poolings,
/// with `groups` for convolutions, decided by the module's class name and written as torchinfo
/// prints them. Each front end reads only the values, from what it has: a C++ module's options;
/// a scripted module's class constants, or a traced one's weight.

#include <recorder/detail/text.hpp>
#include <recorder/graph/graph.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace recorder {

/// Which attributes a module shows (`display_attributes`).
enum class DisplayAttributes : std::uint8_t {
  none,
  convolution,  ///< `kernel_size` as a list ("[3, 3]"), then `groups`
  pooling,      ///< `kernel_size`, one number when square ("3", what a Python user passes)
};

/// The attributes a module of class `class_name` shows: its kernel and groups for a
/// convolution (`Conv2d`, `ConvTranspose1d`, ...), its kernel for a max or average pooling
/// (`MaxPool2d`, `AvgPool1d`, ...; an adaptive pooling has no kernel); nothing otherwise. A
/// class the rule names but whose values its front end cannot read shows nothing.
constexpr DisplayAttributes display_attributes(std::string_view class_name) noexcept {
  constexpr auto npos = std::string_view::npos;
  if (class_name.find("Conv") != npos) return DisplayAttributes::convolution;
  if ((class_name.find("MaxPool") != npos || class_name.find("AvgPool") != npos) &&
      class_name.find("Adaptive") == npos)
    return DisplayAttributes::pooling;
  return DisplayAttributes::none;
}

/// The `kernel_size` a module of kind `kind` shows for `kernel`: "[3, 3]" for a convolution,
/// "3" (or "[3, 2]") for a pooling.
template <class Sizes>
std::string kernel_size_text(DisplayAttributes kind, const Sizes& kernel) {
  return kind == DisplayAttributes::convolution ? detail::sizes_string(kernel)
                                                : detail::pool_kernel_string(kernel);
}

/// Appends to `info.attributes` what `kind` shows: `kernel_size`, and a convolution's `groups`
/// when known.
template <class Sizes>
void append_display_attributes(ModuleInfo& info, DisplayAttributes kind, const Sizes& kernel,
                               std::optional<std::int64_t> groups = std::nullopt) {
  if (kind == DisplayAttributes::none) return;
  info.attributes.emplace_back("kernel_size", kernel_size_text(kind, kernel));
  if (kind == DisplayAttributes::convolution && groups)
    info.attributes.emplace_back("groups", std::to_string(*groups));
}

}  // namespace recorder
