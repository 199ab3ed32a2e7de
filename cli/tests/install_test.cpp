// recorder installed as a user installs it (`cmake --install`), then run from a clean environment
// (`env -i`): the installed program finds the libtorch it was built against with no
// LD_LIBRARY_PATH; a libtorch that is gone is named by the launcher in one line; another
// libtorch put first on the library path is refused in one line by the program and by the
// library's entry points; and README's own build commands, extracted from README.md, work as
// written. Torch-free itself: it only runs programs.
#define BOOST_TEST_MODULE install
#include <boost/test/unit_test.hpp>

#include "programs.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#if !defined(RECORDER_BUILD_DIR) || !defined(RECORDER_SOURCE_DIR) || !defined(RECORDER_CMAKE) || \
    !defined(RECORDER_CLI) || !defined(RECORDER_SCRIPT_MODELS) ||                                \
    !defined(RECORDER_TORCH_VERSION) || !defined(RECORDER_LEG_PYTHON)
#error \
    "RECORDER_BUILD_DIR, RECORDER_SOURCE_DIR, RECORDER_CMAKE, RECORDER_CLI, \
RECORDER_SCRIPT_MODELS, RECORDER_TORCH_VERSION and RECORDER_LEG_PYTHON must be set"
#endif
#ifndef RECORDER_OTHER_TORCH_LIB  // the other leg's libtorch_cpu, "" when not configured
#define RECORDER_OTHER_TORCH_LIB ""
#define RECORDER_OTHER_TORCH_VERSION ""
#endif
#ifndef RECORDER_LOAD_PROBE  // a program whose first call is load_model (load_probe.cpp)
#error "RECORDER_LOAD_PROBE must be set"
#endif

namespace fs = std::filesystem;
using programs::Run;

namespace {

const std::string version_line = std::string("0.1.0 (libtorch ") + RECORDER_TORCH_VERSION + ")\n";

fs::path scratch(const std::string& name) {
  return programs::scratch(fs::current_path() / "install-test", name);
}

/// Where this process's programs write their output: the suites run as separate CTest tests,
/// side by side.
const fs::path outputs =
    fs::current_path() / "install-test" / ("run-" + std::to_string(::getpid()));

Run run(const std::string& program, const std::vector<std::string>& args) {
  return programs::run(outputs, program, args);
}

/// `env -i [vars...] program args...`: nothing of the caller's environment.
Run run_clean(const std::vector<std::string>& vars, const std::string& program,
              std::vector<std::string> args) {
  std::vector<std::string> all{"-i"};
  all.insert(all.end(), vars.begin(), vars.end());
  all.push_back(program);
  all.insert(all.end(), args.begin(), args.end());
  return run("/usr/bin/env", all);
}

std::string model(const std::string& name) {
  return (fs::path(RECORDER_SCRIPT_MODELS) / name).string();
}

std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

/// This build tree installed into a fresh prefix of its own.
fs::path install(const std::string& name) {
  const fs::path prefix = scratch(name);
  const Run r = run(RECORDER_CMAKE, {"--install", RECORDER_BUILD_DIR, "--prefix", prefix.string()});
  BOOST_TEST_REQUIRE(r.code == 0, "cmake --install failed: " << r.out << r.err);
  return prefix;
}

/// A folder of libraries named as this leg's program asks for them (libtorch_cpu.so,
/// libtorch_cpu.so.1.13, ...) that are the other leg's, with the other leg's companions.
fs::path other_leg_libraries() {
  const fs::path other = fs::path(RECORDER_OTHER_TORCH_LIB).parent_path();
  const fs::path dir = scratch("other-leg-libs");
  for (const auto& e : fs::directory_iterator(other)) {
    const std::string n = e.path().filename().string();
    for (const char* stem : {"libtorch", "libc10", "libgomp", "libshm"})
      if (n.rfind(stem, 0) == 0 && !fs::exists(dir / n)) fs::create_symlink(e.path(), dir / n);
  }
  for (const char* lib : {"libtorch", "libtorch_cpu", "libc10"}) {
    fs::path target;
    for (const auto& e : fs::directory_iterator(other)) {
      const std::string n = e.path().filename().string();
      if (n == std::string(lib) + ".so" ||
          (target.empty() && n.rfind(std::string(lib) + ".so.", 0) == 0))
        target = e.path();
    }
    BOOST_TEST_REQUIRE(!target.empty(), "no " << lib << " in " << other);
    for (const std::string& alias :
         {std::string(lib) + ".so", std::string(lib) + ".so." + RECORDER_TORCH_VERSION}) {
      fs::remove(dir / alias);
      fs::create_symlink(target, dir / alias);
    }
  }
  return dir;
}

/// The one-line refusal of the other leg's libtorch, loaded from `dir`, and exit code `code`.
void check_refusal(const Run& r, const fs::path& dir, int code = 2) {
  const std::string start = std::string("recorder: built against libtorch ") +
                            RECORDER_TORCH_VERSION + " but running on libtorch " +
                            RECORDER_OTHER_TORCH_VERSION + " (" +
                            (dir / "libtorch_cpu.so").string();
  BOOST_TEST(r.code == code);
  BOOST_TEST(r.out == "");
  BOOST_TEST(r.err.rfind(start, 0) == 0, "stderr: " << r.err);
  BOOST_TEST(r.err.ends_with(
      "run it with the libtorch it was built against (is LD_LIBRARY_PATH set?), or rebuild it "
      "against this one\n"));
  BOOST_TEST(lines(r.err) == 1u);
}

/// The lines of the ```sh block that follows `marker` in README.md.
std::vector<std::string> readme_block(const std::string& marker) {
  std::ifstream in(fs::path(RECORDER_SOURCE_DIR) / "README.md");
  std::vector<std::string> block;
  std::string line;
  bool seen = false, inside = false;
  while (std::getline(in, line)) {
    if (!seen) {
      seen = line == marker;
    } else if (!inside) {
      inside = line == "```sh";
    } else if (line == "```") {
      return block;
    } else {
      block.push_back(line);
    }
  }
  BOOST_TEST_REQUIRE(false, "README.md has no ```sh block after " << marker);
  return block;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(installed)

BOOST_AUTO_TEST_CASE(runs_on_its_libtorch_from_a_clean_environment) {
  const fs::path prefix = install("prefix");
  for (const char* f :
       {"bin/recorder", "libexec/recorder/recorder", "include/recorder/recorder.hpp",
        "share/recorder/cmake/recorderConfig.cmake"})
    BOOST_TEST(fs::exists(prefix / f), f);

  const Run v = run_clean({}, (prefix / "bin/recorder").string(), {"--version"});
  BOOST_TEST(v.code == 0);
  BOOST_TEST(v.out == version_line);
  BOOST_TEST(v.err == "");

  const std::vector<std::string> args{"summary", model("mlp_script.pt"), "--input-size", "1,784"};
  const Run installed = run_clean({}, (prefix / "bin/recorder").string(), args);
  const Run built = run(RECORDER_CLI, args);
  BOOST_TEST(installed.code == 0, installed.err);
  BOOST_TEST(installed.err == "");
  BOOST_TEST(installed.out.find("Total params: 84,060\n") != std::string::npos, installed.out);
  BOOST_TEST(installed.out == built.out);

  // Through a symbolic link elsewhere, as a user links it into ~/bin.
  const fs::path links = scratch("links");
  fs::create_symlink(prefix / "bin/recorder", links / "recorder");
  const Run linked = run_clean({}, (links / "recorder").string(), {"--version"});
  BOOST_TEST(linked.code == 0, linked.err);
  BOOST_TEST(linked.out == version_line);
}

BOOST_AUTO_TEST_CASE(a_libtorch_that_is_gone_is_named_in_one_line) {
  // The launcher of an installation whose libtorch was removed (a venv moved, recorder copied to
  // another machine): its recorded libtorch path no longer exists.
  const fs::path prefix = install("prefix-gone");
  const fs::path launcher = prefix / "bin/recorder";
  std::string text = programs::read(launcher);
  const std::string key = "\ntorch='";
  const auto at = text.find(key);
  BOOST_TEST_REQUIRE(at != std::string::npos, "no torch= line in " << launcher);
  const auto end = text.find('\'', at + key.size());
  const std::string recorded = text.substr(at + key.size(), end - at - key.size());
  BOOST_TEST(fs::exists(recorded), recorded);
  const std::string gone = (scratch("moved-venv") / "lib/libtorch_cpu.so").string();
  text.replace(at + key.size(), end - at - key.size(), gone);
  std::ofstream(launcher, std::ios::trunc) << text;

  const Run r = run_clean({}, launcher.string(),
                          {"summary", model("mlp_script.pt"), "--input-size", "1,784"});
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.out == "");
  BOOST_TEST(r.err.rfind(std::string("recorder: the libtorch it was built against (libtorch ") +
                             RECORDER_TORCH_VERSION + ", " + gone + ") is gone: ",
                         0) == 0,
             r.err);
  BOOST_TEST(lines(r.err) == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(other_libtorch)

BOOST_AUTO_TEST_CASE(another_libtorch_first_on_the_path_is_refused_in_one_line) {
  BOOST_TEST_REQUIRE(std::string(RECORDER_OTHER_TORCH_LIB) != "");
  const fs::path prefix = install("prefix-other");
  const fs::path dir = other_leg_libraries();
  const std::string path_var = "LD_LIBRARY_PATH=" + dir.string();
  const std::vector<std::string> args{"summary", model("mlp_script.pt"), "--input-size", "1,784"};
  check_refusal(run_clean({path_var}, (prefix / "bin/recorder").string(), args), dir);
  check_refusal(run_clean({path_var}, (prefix / "bin/recorder").string(), {"--version"}), dir);
  check_refusal(run_clean({path_var}, RECORDER_CLI, args), dir);
}

BOOST_AUTO_TEST_CASE(the_library_refuses_another_libtorch_at_its_entry_points) {
  BOOST_TEST_REQUIRE(std::string(RECORDER_OTHER_TORCH_LIB) != "");
  const fs::path dir = other_leg_libraries();
  // On its own libtorch the probe loads the model; on the other one, load_model throws
  // recorder::TorchMismatch with the program's line before it calls libtorch.
  const Run own = run_clean({}, RECORDER_LOAD_PROBE, {model("mlp_script.pt")});
  BOOST_TEST(own.code == 0, own.err);
  BOOST_TEST(own.out == "loaded MLP\n");
  const Run r =
      run_clean({"LD_LIBRARY_PATH=" + dir.string()}, RECORDER_LOAD_PROBE, {model("mlp_script.pt")});
  check_refusal(r, dir, 3);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(readme)

// README's build commands for this leg's libtorch, as written: run by sh in a scratch folder
// with HOME there (the README installs into ~/.local), `-S .` meaning this source tree, and the
// venv of the pip block being the one whose torch this leg builds against (its creation, the
// first line, is not run: pip would download torch again).
BOOST_AUTO_TEST_CASE(readme_build_commands_work_as_written) {
  // The leg's torch is a pip wheel when its Python is a venv's (scripts/test.sh's leg 2).
  const fs::path venv = fs::path(RECORDER_LEG_PYTHON).parent_path().parent_path();
  const bool pip = fs::exists(venv / "pyvenv.cfg");
  const std::vector<std::string> block =
      readme_block(pip ? "<!-- readme-commands: pip -->" : "<!-- readme-commands: debian -->");
  const fs::path work = scratch("readme-commands");
  fs::create_directories(work / "home");
  std::ostringstream script;
  script << "set -e\ncd " << programs::quoted(work.string()) << "\n";
  bool ran_cmake = false;
  for (std::string line : block) {
    if (line.rfind("python3 -m venv", 0) == 0) continue;
    if (line.rfind("venv=", 0) == 0) line = "venv=" + programs::quoted(venv.string());
    for (auto at = line.find("-S . "); at != std::string::npos; at = line.find("-S . ", at + 1))
      line.replace(at, 5, "-S " + programs::quoted(RECORDER_SOURCE_DIR) + " ");
    ran_cmake = ran_cmake || line.rfind("cmake", 0) == 0;
    script << line << "\n";
  }
  BOOST_TEST_REQUIRE(ran_cmake);
  std::ofstream(work / "commands.sh") << script.str();
  const Run r = run_clean({"HOME=" + (work / "home").string(), "PATH=/usr/bin:/bin"}, "/bin/sh",
                          {(work / "commands.sh").string()});
  BOOST_TEST_REQUIRE(r.code == 0, "README's commands failed:\n" << script.str() << r.out << r.err);
  // Configured against this leg's libtorch (on the pip leg: the wheel's, not Debian's beside it),
  // with the tests off: the build made the command line alone.
  const std::string status = std::string("-- recorder: libtorch ") + RECORDER_TORCH_VERSION + " (";
  BOOST_TEST(r.out.find(status) != std::string::npos, r.out);
  if (pip) BOOST_TEST(r.out.find(status + venv.string()) != std::string::npos, r.out);
  BOOST_TEST(!fs::exists(work / "build/tests"));
  const Run v = run_clean({}, (work / "home/.local/bin/recorder").string(), {"--version"});
  BOOST_TEST(v.code == 0, v.err);
  BOOST_TEST(v.out == version_line);
}

BOOST_AUTO_TEST_SUITE_END()
