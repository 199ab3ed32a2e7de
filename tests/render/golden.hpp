#pragma once
/// Byte-for-byte comparison with golden files; RECORDER_UPDATE_GOLDEN=1 rewrites them. An output
/// that differs by libtorch (torchinfo's `Input size` counts a 64-byte storage header under
/// PyTorch 2.x, 56 under 1.x) has a second file, `<stem>.torch2<ext>`, checked by tests built
/// against libtorch 2.x (RECORDER_TORCH_MAJOR, set by recorder_add_test).

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#ifndef RECORDER_GOLDEN_DIR
#error "RECORDER_GOLDEN_DIR must name the folder of the golden files"
#endif

namespace recorder::testing {

/// The folder holding the golden files of these tests.
inline std::filesystem::path golden_dir() { return RECORDER_GOLDEN_DIR; }

/// True when the environment asks to rewrite golden files instead of checking them.
inline bool updating_golden() {
  const char* v = std::getenv("RECORDER_UPDATE_GOLDEN");
  return v != nullptr && std::string_view(v) == "1";
}

/// The first line where `a` and `b` differ, for failure messages.
inline std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(sa, la));
    const bool gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return "sizes differ only in the final newline";
    if (!ga || !gb || la != lb)
      return "line " + std::to_string(line) + ":\n  got:      " + (ga ? la : "<end>") +
             "\n  expected: " + (gb ? lb : "<end>");
  }
}

/// The libtorch major version these tests run (1 for torch-free tests).
inline constexpr int golden_torch_major() {
#ifdef RECORDER_TORCH_MAJOR
  return RECORDER_TORCH_MAJOR;
#else
  return 1;
#endif
}

/// `name`'s libtorch 2.x file: `summary/lstm.txt` -> `summary/lstm.torch2.txt`.
inline std::filesystem::path torch2_variant(const std::filesystem::path& path) {
  std::filesystem::path v = path;
  v.replace_filename(path.stem().string() + ".torch2" + path.extension().string());
  return v;
}

/// The whole of file `path`, or nothing when it cannot be read.
inline std::optional<std::string> read_golden(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Golden file `name` of this libtorch: its `.torch2` file under libtorch 2.x when there is one.
inline std::filesystem::path golden_path(const std::string& name) {
  const std::filesystem::path base = golden_dir() / name;
  const std::filesystem::path variant = torch2_variant(base);
  return golden_torch_major() >= 2 && std::filesystem::exists(variant) ? variant : base;
}

/// Checks `actual` against golden file `name` (its `.torch2` file under libtorch 2.x when there
/// is one), or rewrites it under RECORDER_UPDATE_GOLDEN=1: under 2.x only the `.torch2` file,
/// written when the output differs from `name`'s and removed when it no longer does.
inline void check_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path base = golden_dir() / name;
  const std::filesystem::path variant = torch2_variant(base);
  const bool torch2 = golden_torch_major() >= 2;
  if (updating_golden()) {
    if (torch2 && read_golden(base) == actual) {
      std::filesystem::remove(variant);
    } else {
      std::ofstream(torch2 ? variant : base, std::ios::binary) << actual;
      BOOST_TEST_MESSAGE("rewrote golden file " << (torch2 ? variant : base));
    }
    return;
  }
  const std::filesystem::path path = golden_path(name);
  const std::optional<std::string> read = read_golden(path);
  BOOST_REQUIRE_MESSAGE(
      read, "missing golden file " << path << " (run with RECORDER_UPDATE_GOLDEN=1 to create it)");
  const std::string& expected = *read;
  BOOST_TEST(actual == expected, path.filename().string()
                                     << " differs from its golden file at "
                                     << first_difference(actual, expected)
                                     << "\n(review, then run with RECORDER_UPDATE_GOLDEN=1)");
}

}  // namespace recorder::testing
