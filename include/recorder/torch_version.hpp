#pragma once
/// The libtorch versions recorder supports, the one place its code may branch on them, and the
/// check that a program runs on the libtorch it was compiled against.
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

#include <ATen/Version.h>
#include <torch/version.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#if defined(__linux__)
#include <link.h>  // dl_iterate_phdr: which libtorch_cpu the process loaded
#endif

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

/// The libtorch a process runs on, as it reports itself: `version` ("2.13", major and minor)
/// and `library`, the path its `libtorch_cpu` was loaded from. Either is "" where it cannot be
/// told (`library` is found on Linux only).
struct RunningTorch {
  std::string version;
  std::string library;
};

/// Thrown by `check_torch()` (and so by `Tracer::run` and `load_model`) when the program runs on
/// another libtorch than the one it was compiled against: a program built against 2.13 that an
/// `LD_LIBRARY_PATH`, or a library path without the right one, gives 1.13 instead. Such a process
/// can crash or hang anywhere (the two versions' classes differ in size), so nothing is run.
class TorchMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

/// "2.13" from "2.13.0+cpu" (or from "1.13.0" and a library file's "1.13.0" suffix); "" when it
/// does not start with two numbers.
inline std::string major_minor(std::string_view v) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    return i > from;
  };
  if (!digits() || i == v.size() || v[i] != '.') return {};
  ++i;
  if (!digits()) return {};
  return std::string(v.substr(0, i));
}

#if defined(__linux__)
inline int find_torch_cpu(dl_phdr_info* info, std::size_t, void* out) {
  const std::string_view path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const std::size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (!base.starts_with("libtorch_cpu.so")) return 0;
  *static_cast<std::string*>(out) = std::string(path);
  return 1;
}
#endif

}  // namespace detail

/// The libtorch this process runs on. Asks it (`at::show_config()`'s `TORCH_VERSION=`), else
/// reads the version off its library's file name (`libtorch_cpu.so.1.13.0`).
inline RunningTorch running_torch() {
  RunningTorch r;
#if defined(__linux__)
  dl_iterate_phdr(detail::find_torch_cpu, &r.library);
#endif
  const std::string config = at::show_config();
  constexpr std::string_view key = "TORCH_VERSION=";
  if (const std::size_t pos = config.find(key); pos != std::string::npos)
    r.version = detail::major_minor(std::string_view(config).substr(pos + key.size()));
  if (r.version.empty() && !r.library.empty()) {
    std::string real = r.library;
#if defined(__linux__)
    if (char* p = ::realpath(r.library.c_str(), nullptr)) {
      real = p;
      std::free(p);
    }
#endif
    if (const std::size_t so = real.rfind(".so."); so != std::string::npos)
      r.version = detail::major_minor(std::string_view(real).substr(so + 4));
  }
  return r;
}

/// "" when this process runs on the libtorch version it was compiled against (or the running
/// one cannot be told); otherwise the one line saying both and what to do:
///
/// ```
/// recorder: built against libtorch 2.13 but running on libtorch 1.13
/// (/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13): run it with the libtorch it was built
/// against (is LD_LIBRARY_PATH set?), or rebuild it against this one
/// ```
///
/// Asked once per process; later calls return the first answer.
inline const std::string& torch_mismatch() {
  static const std::string line = [] {
    const RunningTorch r = running_torch();
    if (r.version.empty() || r.version == torch_version()) return std::string();
    return "recorder: built against libtorch " + torch_version() + " but running on libtorch " +
           r.version + " (" +
           (r.library.empty() ? std::string("library path unknown") : r.library) +
           "): run it with the libtorch it was built against (is LD_LIBRARY_PATH set?), or "
           "rebuild it against this one";
  }();
  return line;
}

/// Throws `TorchMismatch` with `torch_mismatch()`'s line when the process runs on another
/// libtorch than the one it was compiled against. `Tracer::run` and `load_model` call it; a
/// program can call it first thing in `main` to refuse before doing anything.
inline void check_torch() {
  if (const std::string& line = torch_mismatch(); !line.empty()) throw TorchMismatch(line);
}

}  // namespace recorder
