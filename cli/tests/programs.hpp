#pragma once
/// Running programs as a user runs them, with their standard output and error captured: shared
/// by the tests that run `recorder` and Python (torch-free themselves).

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace programs {

namespace fs = std::filesystem;

/// The bytes of a file ("" when it cannot be read).
inline std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A shell word: 'it''s' quoted.
inline std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Run {
  int code = -1;  ///< exit code; 128 + signal when killed
  std::string out;
  std::string err;
};

/// A fresh, empty folder `<folder>/<name>` for one test's files.
inline fs::path scratch(const fs::path& folder, const std::string& name) {
  const fs::path dir = folder / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// Runs `program args...` with no input, its output captured through files in `folder` (one
/// folder per test program: CTest runs programs side by side).
inline Run run(const fs::path& folder, const std::string& program,
               const std::vector<std::string>& args) {
  fs::create_directories(folder);
  const fs::path out = folder / "stdout.txt", err = folder / "stderr.txt";
  std::string command = quoted(program);
  for (const std::string& a : args) command.append(" ").append(quoted(a));
  command.append(" >").append(quoted(out.string())).append(" 2>").append(quoted(err.string()));
  command.append(" </dev/null");
  const int status = std::system(command.c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read(out);
  r.err = read(err);
  return r;
}

}  // namespace programs
