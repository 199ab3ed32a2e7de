/// render_to_file and atomic writes: extensions, errors, nothing partial left behind.
#define BOOST_TEST_MODULE render_file
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"

#include "message_of.hpp"

#include <recorder/detail/atomic_file.hpp>
#include <recorder/render/dot.hpp>
#include <recorder/render/json.hpp>
#include <recorder/render/render.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

#include <sys/stat.h>
#include <unistd.h>

using namespace recorder;
using namespace recorder::testing;
namespace fs = std::filesystem;

namespace {

/// A fresh folder for one test, removed afterwards.
struct TempDir {
  fs::path path;
  explicit TempDir(std::string_view tag) {
    path = fs::temp_directory_path() /
           ("recorder_" + std::string(tag) + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& p, std::string_view s) { std::ofstream(p, std::ios::binary) << s; }

using recorder::testing::message_of;

/// A backend that fails half-way.
struct Throwing {
  static constexpr std::string_view extension = ".txt";
  static void render(const Trace&, const RenderOptions&, std::ostream& os) {
    os << "partial";
    throw std::runtime_error("backend failed");
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(extension_is_appended_only_when_missing) {
  TempDir dir("ext");
  const Trace t = mlp();
  BOOST_TEST(render_to_file<backend::Dot>(t, {}, dir.path / "net") == dir.path / "net.dot");
  BOOST_TEST(render_to_file<backend::Json>(t, {}, dir.path / "net") == dir.path / "net.json");
  BOOST_TEST(render_to_file<backend::Dot>(t, {}, dir.path / "net.gv") == dir.path / "net.gv");
  BOOST_TEST(read(dir.path / "net.dot") == render_to_string<backend::Dot>(t));
  BOOST_TEST(read(dir.path / "net.json") == render_to_string<backend::Json>(t));
  BOOST_TEST(listing(dir.path) == (std::set<std::string>{"net.dot", "net.gv", "net.json"}));
}

BOOST_AUTO_TEST_CASE(relative_path_and_overwrite) {
  TempDir dir("rel");
  const fs::path old_cwd = fs::current_path();
  fs::current_path(dir.path);
  write("graph.dot", "old content");
  const fs::path written = render_to_file<backend::Dot>(mlp(), {.depth = 1}, "graph");
  fs::current_path(old_cwd);
  BOOST_TEST(written == fs::path("graph.dot"));
  BOOST_TEST(read(dir.path / "graph.dot") == render_to_string<backend::Dot>(mlp(), {.depth = 1}));
  BOOST_TEST(listing(dir.path) == (std::set<std::string>{"graph.dot"}));
}

BOOST_AUTO_TEST_CASE(missing_folder) {
  TempDir dir("missing");
  const fs::path target = dir.path / "no" / "such" / "folder" / "net.dot";
  const std::string msg = message_of([&] { render_to_file<backend::Dot>(mlp(), {}, target); });
  BOOST_TEST(msg.find(target.string()) != std::string::npos, msg);
  BOOST_TEST(msg.find("No such file or directory") != std::string::npos, msg);
  BOOST_TEST(listing(dir.path).empty());
  // A recorder::FileError naming the path, said before the backend runs: no folder is made.
  try {
    render_to_file<Throwing>(mlp(), {}, target.parent_path() / "net");
    BOOST_FAIL("no error");
  } catch (const recorder::FileError& e) {
    BOOST_TEST(e.path() == target.parent_path() / "net.txt");
    BOOST_TEST(std::string(e.what()) == "recorder: cannot write '" +
                                            (target.parent_path() / "net.txt").string() +
                                            "': No such file or directory (folder '" +
                                            target.parent_path().string() + "' does not exist)");
  }
  BOOST_TEST(listing(dir.path).empty());
}

BOOST_AUTO_TEST_CASE(parent_is_a_file) {
  TempDir dir("notdir");
  write(dir.path / "file", "x");
  const fs::path target = dir.path / "file" / "net.dot";
  const std::string msg = message_of([&] { render_to_file<backend::Dot>(mlp(), {}, target); });
  BOOST_TEST(msg.find(target.string()) != std::string::npos, msg);
  BOOST_TEST(msg.find("Not a directory") != std::string::npos, msg);
  BOOST_TEST(listing(dir.path) == (std::set<std::string>{"file"}));
  BOOST_TEST(read(dir.path / "file") == "x");
}

BOOST_AUTO_TEST_CASE(target_is_a_folder) {
  TempDir dir("isdir");
  fs::create_directories(dir.path / "net.dot");
  const std::string msg =
      message_of([&] { render_to_file<backend::Dot>(mlp(), {}, dir.path / "net.dot"); });
  BOOST_TEST(msg.find((dir.path / "net.dot").string()) != std::string::npos, msg);
  BOOST_TEST(msg.find("Is a directory") != std::string::npos, msg);
  BOOST_TEST(listing(dir.path) == (std::set<std::string>{"net.dot"}));  // no temporary left
  BOOST_TEST(fs::is_directory(dir.path / "net.dot"));
}

/// Boost.Test precondition: permissions do not bind root (the test is reported as skipped).
boost::test_tools::assertion_result not_root(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(::geteuid() != 0);
  r.message() << "permissions do not apply to root";
  return r;
}

BOOST_AUTO_TEST_CASE(unwritable_folder, *boost::unit_test::precondition(not_root)) {
  TempDir dir("ro");
  write(dir.path / "net.dot", "keep me");
  fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string msg =
      message_of([&] { render_to_file<backend::Dot>(mlp(), {}, dir.path / "net.dot"); });
  fs::permissions(dir.path, fs::perms::owner_all);
  BOOST_TEST(msg.find("Permission denied") != std::string::npos, msg);
  BOOST_TEST(read(dir.path / "net.dot") == "keep me");
  BOOST_TEST(listing(dir.path) == (std::set<std::string>{"net.dot"}));
}

/// Boost.Test precondition: /proc is mounted (read-only files to write to).
boost::test_tools::assertion_result has_proc(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(fs::is_directory("/proc/self"));
  r.message() << "/proc is not mounted";
  return r;
}

BOOST_AUTO_TEST_CASE(read_only_file_system, *boost::unit_test::precondition(has_proc)) {
  const std::string msg =
      message_of([] { render_to_file<backend::Dot>(mlp(), {}, "/proc/self/recorder.dot"); });
  BOOST_TEST(msg.find("'/proc/self/recorder.dot'") != std::string::npos, msg);
}

BOOST_AUTO_TEST_CASE(failing_backend_leaves_the_old_file) {
  TempDir dir("throw");
  write(dir.path / "out.txt", "previous picture");
  BOOST_CHECK_THROW(render_to_file<Throwing>(mlp(), {}, dir.path / "out"), std::runtime_error);
  BOOST_TEST(read(dir.path / "out.txt") == "previous picture");
  BOOST_TEST(listing(dir.path) == (std::set<std::string>{"out.txt"}));
}

BOOST_AUTO_TEST_CASE(atomic_write_directly) {
  TempDir dir("atomic");
  const fs::path p = dir.path / "data.bin";
  const std::string binary("a\0b\xff\n", 5);
  detail::write_file_atomically(p, binary);
  BOOST_TEST(read(p) == binary);
  detail::write_file_atomically(p, "");
  BOOST_TEST(read(p).empty());
  BOOST_TEST(listing(dir.path) == (std::set<std::string>{"data.bin"}));
  struct stat st {};
  BOOST_REQUIRE(::stat(p.c_str(), &st) == 0);
  const ::mode_t mask = ::umask(0);
  ::umask(mask);
  BOOST_TEST((st.st_mode & 0777u) == (0666u & ~mask));  // the usual mode, not mkstemp's 0600
  BOOST_CHECK_THROW(detail::write_file_atomically("", "x"), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(stream_errors_are_reported) {
  std::ostringstream bad;
  bad.setstate(std::ios::badbit);
  BOOST_CHECK_THROW(render<backend::Dot>(mlp(), {}, bad), std::runtime_error);
}
