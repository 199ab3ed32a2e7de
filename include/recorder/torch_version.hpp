#pragma once
/// The libtorch versions recorder supports, and the one place its code may branch on them.
///
/// Supported: libtorch 1.13 (Debian 12's package) and libtorch 2.5 or newer (pytorch.org's
/// download, the `torch` wheel's `torch.utils.cmake_prefix_path`, Debian 13's package). 2.0-2.4
/// are refused: their `c10d::ProcessGroup` constructor took an `Options` argument that 2.5
/// removed (pytorch#132931), and a Gloo group is built differently on each side of that change.
/// CMake refuses them at configure time already; this `#error` catches a build that finds
/// libtorch another way.
///
/// Where 1.13 and 2.x differ for recorder (read from both versions' headers and measured):
/// - a Gloo group: `c10d::ProcessGroupGloo` is a `c10d::ProcessGroup` in 1.13 and a
///   `c10d::Backend` registered on a `c10d::ProcessGroup` from 2.0 (the group-creation code,
///   `<recorder/distributed/launch.hpp>`, branches on `RECORDER_TORCH_AT_LEAST(2, 5)`);
/// - a `c10d::TCPStore` uses libuv by default from 2.4, and libuv-less builds (Debian's) refuse
///   it, so recorder asks for the classic backend (`<recorder/distributed/launch.hpp>`);
/// - TorchScript files that PyTorch 2.x saves may call ops 1.13 lacks (every scripted
///   `nn.MultiheadAttention` calls `aten::scaled_dot_product_attention`): `load_model` refuses
///   them with `NewerModelError`;
/// - `torch.histc` rounds a value near a bin edge differently (`histc_divides_first`), and the
///   histogram reduction follows the libtorch in use;
/// - PyTorch 2.x compiles `nn.MultiheadAttention`'s functional form differently in a TorchScript
///   graph; recorder records what runs, so the op nodes under the module differ, not the modules.
/// Nothing else in recorder's headers depends on the version: they keep the `c10::optional` and
/// `c10::string_view` spellings, which are aliases of `std::`'s in 2.x.

#include <torch/version.h>

#include <string>

/// True when the libtorch being compiled against is version `major.minor` or newer. Debian's
/// 1.13.1 header says 1.13.0, so only the major and minor numbers are compared.
#define RECORDER_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||           \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

#if !RECORDER_TORCH_AT_LEAST(1, 13) || (TORCH_VERSION_MAJOR == 2 && !RECORDER_TORCH_AT_LEAST(2, 5))
#error "recorder supports libtorch 1.13 and libtorch 2.5 or newer (this libtorch is " TORCH_VERSION ")"
#endif

namespace recorder {

/// The major and minor version of the libtorch recorder was compiled against.
inline constexpr int torch_version_major = TORCH_VERSION_MAJOR;
inline constexpr int torch_version_minor = TORCH_VERSION_MINOR;

/// True when this libtorch's `torch.histc` computes a bin as `(v - lo) / (hi - lo) * bins`
/// (1.13), false when as `(v - lo) * bins / (hi - lo)` (2.0 and later, pytorch#87832): the
/// histogram reduction counts as the libtorch in use does (`detail::loops::HistcRule`).
inline constexpr bool histc_divides_first = !RECORDER_TORCH_AT_LEAST(2, 0);

/// "1.13", "2.13": the libtorch version in messages (the patch number is left out: Debian's
/// 1.13.1 calls itself 1.13.0).
inline std::string torch_version() {
  return std::to_string(torch_version_major) + "." + std::to_string(torch_version_minor);
}

}  // namespace recorder
