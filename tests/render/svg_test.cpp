/// SVG and PNG through Graphviz: output, missing program, failures, no deadlock or SIGPIPE.
#define BOOST_TEST_MODULE render_svg
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"

#include <recorder/render/render.hpp>
#include <recorder/render/svg.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>

#include <unistd.h>

using namespace recorder;
using namespace recorder::testing;
namespace fs = std::filesystem;

namespace {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view rest = path;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    if (!dir.empty() && fs::exists(fs::path(dir) / program)) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

#define REQUIRE_PROGRAM(name)                                          \
  if (!on_path(name)) {                                                \
    BOOST_TEST_MESSAGE("skipped: '" << name << "' is not on PATH");    \
    return;                                                            \
  }

/// Sets an environment variable for the scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

std::string message_of(const auto& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "<no exception>";
}

}  // namespace

BOOST_AUTO_TEST_CASE(svg_document) {
  REQUIRE_PROGRAM("dot");
  const std::string svg = render_to_string<backend::Svg>(residual(), {.depth = 2});
  BOOST_TEST(svg.rfind("<?xml", 0) == 0u);
  BOOST_TEST(svg.find("<svg") != std::string::npos);
  BOOST_TEST(svg.find("layer1.0") == std::string::npos);  // labels show names, not paths
  BOOST_TEST(svg.find("BasicBlock") != std::string::npos);
  const std::string hostile_svg = render_to_string<backend::Svg>(hostile());
  BOOST_TEST(hostile_svg.find("Weird&lt;T&gt;&amp;&quot;x&quot;") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(png_image) {
  REQUIRE_PROGRAM("dot");
  const std::string png = render_to_string<backend::Png>(mlp());
  BOOST_TEST(png.rfind("\x89PNG\r\n\x1a\n", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(svg_to_file) {
  REQUIRE_PROGRAM("dot");
  const fs::path dir = fs::temp_directory_path() / ("recorder_svg_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path written = render_to_file<backend::Svg>(mlp(), {}, dir / "mlp");
  BOOST_TEST(written == dir / "mlp.svg");
  std::ifstream in(written, std::ios::binary);
  const std::string content{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  BOOST_TEST(content.find("<svg") != std::string::npos);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(missing_dot_is_a_clear_error) {
  const fs::path empty = fs::temp_directory_path() / ("recorder_empty_" + std::to_string(::getpid()));
  fs::create_directories(empty);
  {
    ScopedEnv path("PATH", empty.string());
    const std::string msg = message_of([] { render_to_string<backend::Svg>(mlp()); });
    BOOST_TEST(msg.find("'dot' was not found on PATH") != std::string::npos, msg);
    BOOST_TEST(msg.find("graphviz") != std::string::npos, msg);
  }
  fs::remove_all(empty);
  const std::string msg =
      message_of([] { detail::run_program({"recorder-no-such-program"}, "input"); });
  BOOST_TEST(msg.find("'recorder-no-such-program' was not found") != std::string::npos, msg);
}

BOOST_AUTO_TEST_CASE(failing_dot_reports_its_stderr) {
  REQUIRE_PROGRAM("dot");
  const std::string msg =
      message_of([] { detail::run_program({"dot", "-Tsvg"}, "this is not { dot"); });
  BOOST_TEST(msg.find("'dot -Tsvg' exited with status") != std::string::npos, msg);
  BOOST_TEST(msg.find("syntax error") != std::string::npos, msg);
  const std::string format =
      message_of([] { detail::run_program({"dot", "-Tno-such-format"}, "digraph {}"); });
  BOOST_TEST(format.find("exited with status") != std::string::npos, format);
  BOOST_TEST(format.find("no-such-format") != std::string::npos, format);
}

BOOST_AUTO_TEST_CASE(no_deadlock_and_no_sigpipe) {
  REQUIRE_PROGRAM("cat");
  REQUIRE_PROGRAM("true");
  const std::string big(8 << 20, 'x');
  BOOST_TEST(detail::run_program({"cat"}, big) == big);  // both pipes full at once
  BOOST_TEST(detail::run_program({"true"}, big).empty());  // exits without reading stdin
  BOOST_TEST(detail::run_program({"cat"}, "").empty());
}
