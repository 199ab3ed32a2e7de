#pragma once
/// Byte-for-byte comparison with golden files; RECORDER_UPDATE_GOLDEN=1 rewrites them.

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
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

/// Checks `actual` against golden file `name`, or rewrites it under RECORDER_UPDATE_GOLDEN=1.
inline void check_golden(const std::string& name, const std::string& actual) {
  const std::filesystem::path path = golden_dir() / name;
  if (updating_golden()) {
    std::ofstream(path, std::ios::binary) << actual;
    BOOST_TEST_MESSAGE("rewrote golden file " << path);
    return;
  }
  std::ifstream in(path, std::ios::binary);
  BOOST_REQUIRE_MESSAGE(
      in, "missing golden file " << path << " (run with RECORDER_UPDATE_GOLDEN=1 to create it)");
  const std::string expected{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  BOOST_TEST(actual == expected, name << " differs from its golden file at "
                                      << first_difference(actual, expected)
                                      << "\n(review, then run with RECORDER_UPDATE_GOLDEN=1)");
}

}  // namespace recorder::testing
