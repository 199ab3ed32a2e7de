/// SVG and PNG through Graphviz: output, missing program, failures, no deadlock or SIGPIPE,
/// time limits, layout limits and the fallback engine for large graphs.
#define BOOST_TEST_MODULE render_svg
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"
#include "synthetic.hpp"

#include "message_of.hpp"
#include "../support/preconditions.hpp"

#include <recorder/render/render.hpp>
#include <recorder/render/svg.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <unistd.h>

using namespace recorder;
using namespace recorder::testing;
namespace fs = std::filesystem;

namespace {

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

/// Captures what is written to `std::cerr` for the scope.
class CaptureCerr {
 public:
  CaptureCerr() : old_(std::cerr.rdbuf(buffer_.rdbuf())) {}
  ~CaptureCerr() { std::cerr.rdbuf(old_); }
  CaptureCerr(const CaptureCerr&) = delete;
  CaptureCerr& operator=(const CaptureCerr&) = delete;
  std::string text() const { return buffer_.str(); }

 private:
  std::ostringstream buffer_;
  std::streambuf* old_;
};

/// A folder holding a fake `dot` (a shell script with `body`), removed at the end.
class FakeDot {
 public:
  explicit FakeDot(const std::string& body)
      : dir_(fs::temp_directory_path() / ("recorder_fake_dot_" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
    std::ofstream(dir_ / "dot") << "#!/bin/sh\n" << body << "\n";
    fs::permissions(dir_ / "dot", fs::perms::owner_all);
  }
  ~FakeDot() { fs::remove_all(dir_); }
  FakeDot(const FakeDot&) = delete;
  FakeDot& operator=(const FakeDot&) = delete;
  /// PATH with the fake first, then the real one (so `sfdp` is still found).
  std::string path() const { return dir_.string() + ":" + std::getenv("PATH"); }

 private:
  fs::path dir_;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

using recorder::testing::message_of;

}  // namespace

BOOST_AUTO_TEST_CASE(svg_document) {
  RECORDER_REQUIRE_PROGRAM("dot");
  const std::string svg = render_to_string<backend::Svg>(residual(), {.depth = 2});
  BOOST_TEST(svg.rfind("<?xml", 0) == 0u);
  BOOST_TEST(svg.find("<svg") != std::string::npos);
  BOOST_TEST(svg.find("layer1.0") != std::string::npos);  // a list item is named with its list
  BOOST_TEST(svg.find("BasicBlock") != std::string::npos);
  const std::string hostile_svg = render_to_string<backend::Svg>(hostile());
  BOOST_TEST(hostile_svg.find("Weird&lt;T&gt;&amp;&quot;x&quot;") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(png_image) {
  RECORDER_REQUIRE_PROGRAM("dot");
  const std::string png = render_to_string<backend::Png>(mlp());
  BOOST_TEST(png.rfind("\x89PNG\r\n\x1a\n", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(svg_to_file) {
  RECORDER_REQUIRE_PROGRAM("dot");
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
  const fs::path empty =
      fs::temp_directory_path() / ("recorder_empty_" + std::to_string(::getpid()));
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
  RECORDER_REQUIRE_PROGRAM("dot");
  const std::string msg = message_of([] {
    detail::run_program({"dot", "-Tsvg"}, "this is not { dot");
  });
  BOOST_TEST(msg.find("'dot -Tsvg' exited with status") != std::string::npos, msg);
  BOOST_TEST(msg.find("syntax error") != std::string::npos, msg);
  const std::string format = message_of([] {
    detail::run_program({"dot", "-Tno-such-format"}, "digraph {}");
  });
  BOOST_TEST(format.find("exited with status") != std::string::npos, format);
  BOOST_TEST(format.find("no-such-format") != std::string::npos, format);
}

BOOST_AUTO_TEST_CASE(no_deadlock_and_no_sigpipe) {
  RECORDER_REQUIRE_PROGRAM("cat");
  RECORDER_REQUIRE_PROGRAM("true");
  const std::string big(8 << 20, 'x');
  BOOST_TEST(detail::run_program({"cat"}, big) == big);    // both pipes full at once
  BOOST_TEST(detail::run_program({"true"}, big).empty());  // exits without reading stdin
  BOOST_TEST(detail::run_program({"cat"}, "").empty());
}

BOOST_AUTO_TEST_CASE(timeout_kills_the_program) {
  RECORDER_REQUIRE_PROGRAM("sleep");
  const auto start = std::chrono::steady_clock::now();
  const std::string msg = message_of([] {
    detail::run_program({"sleep", "10"}, "", std::chrono::milliseconds{200});
  });
  BOOST_TEST(
      msg.find("'sleep 10' ran past its time limit of 0.2 s and was killed") != std::string::npos,
      msg);
  BOOST_TEST(seconds_since(start) < 5.0);
  BOOST_CHECK_THROW(detail::run_program({"sleep", "10"}, "", std::chrono::milliseconds{50}),
                    detail::ProgramTimedOut);
  BOOST_TEST(detail::run_program({"cat"}, "fast", std::chrono::milliseconds{5000}) == "fast");
}

BOOST_AUTO_TEST_CASE(dot_timeout_from_the_environment) {
  {
    ScopedEnv env("RECORDER_DOT_TIMEOUT", "2.5");
    BOOST_TEST(detail::dot_timeout().count() == 2500);
  }
  {
    ScopedEnv env("RECORDER_DOT_TIMEOUT", "0");
    BOOST_TEST(detail::dot_timeout().count() == 0);
  }
  {
    ScopedEnv env("RECORDER_DOT_TIMEOUT", "soon");
    CaptureCerr err;
    BOOST_TEST(detail::dot_timeout().count() == 60000);
    BOOST_TEST(err.text().find("ignoring RECORDER_DOT_TIMEOUT='soon'") != std::string::npos);
  }
  BOOST_TEST(detail::seconds_text(std::chrono::milliseconds{60000}) == "60 s");
  BOOST_TEST(detail::seconds_text(std::chrono::milliseconds{250}) == "0.25 s");
}

BOOST_AUTO_TEST_CASE(large_graph_gets_layout_limits) {
  RECORDER_REQUIRE_PROGRAM("dot");
  const Trace t = synthetic_chain(1998);
  BOOST_TEST_REQUIRE(visible_graph(t.graph, {}).nodes.size() == 2000u);
  // How long it takes is measured in benchmarks/bench_render (BM_Svg_*), not asserted here.
  CaptureCerr err;
  const std::string svg = render_to_string<backend::Svg>(t);
  BOOST_TEST(err.text() ==
             "recorder: 2000 visible nodes (more than 1000): laying out with "
             "'dot -Tsvg -Gnslimit=2 -Gnslimit1=2 -Gmclimit=0.5'\n");
  BOOST_TEST(svg.find("<svg") != std::string::npos);
  BOOST_TEST(svg.find("<title>n1999</title>") != std::string::npos);
  CaptureCerr quiet;
  render_to_string<backend::Svg>(mlp());
  BOOST_TEST(quiet.text().empty());
}

BOOST_AUTO_TEST_CASE(slow_dot_falls_back_to_sfdp) {
  RECORDER_REQUIRE_PROGRAM("sfdp");
  FakeDot fake("exec sleep 20");
  ScopedEnv path("PATH", fake.path());
  ScopedEnv timeout("RECORDER_DOT_TIMEOUT", "0.5");
  const auto start = std::chrono::steady_clock::now();
  CaptureCerr err;
  const std::string svg = render_to_string<backend::Svg>(residual());
  BOOST_TEST(seconds_since(start) < 10.0);
  BOOST_TEST(err.text() ==
             "recorder: dot ran past its time limit of 0.5 s (RECORDER_DOT_TIMEOUT); laying out "
             "with 'sfdp -Tsvg' instead\n");
  BOOST_TEST(svg.find("<svg") != std::string::npos);
  BOOST_TEST(svg.find("BasicBlock") == std::string::npos);  // depth 3: blocks drawn through
  BOOST_TEST(svg.find("Conv2d") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_backend_is_a_value_with_its_settings) {
  RECORDER_REQUIRE_PROGRAM("sfdp");
  RECORDER_REQUIRE_PROGRAM("neato");
  FakeDot fake("exec sleep 20");
  ScopedEnv path("PATH", fake.path());
  ScopedEnv env_timeout("RECORDER_DOT_TIMEOUT", "30");  // the backend's setting wins
  using namespace std::chrono_literals;
  CaptureCerr err;
  // The time limit and the report sink as settings: the steps go to `log`, not to stderr.
  std::ostringstream log, out;
  render(residual(), {}, out, backend::Svg{.timeout = 300ms, .report = &log});
  BOOST_TEST(
      log.str() ==
      "recorder: dot ran past its time limit of 0.3 s; laying out with 'sfdp -Tsvg' instead\n");
  BOOST_TEST(out.str().find("<svg") != std::string::npos);
  // Another fallback engine, and none at all: then the time limit is an error.
  std::ostringstream log2;
  const std::string png = render_to_string(
      mlp(), {}, backend::Png{.timeout = 300ms, .fallback = "neato", .report = &log2});
  BOOST_TEST(png.substr(1, 3) == "PNG");
  BOOST_TEST(
      log2.str() ==
      "recorder: dot ran past its time limit of 0.3 s; laying out with 'neato -Tpng' instead\n");
  const std::string msg = message_of(
      [] { (void)render_to_string(mlp(), {}, backend::Svg{.timeout = 200ms, .fallback = {}}); });
  BOOST_TEST(
      msg.find("'dot -Tsvg' ran past its time limit of 0.2 s and was killed") != std::string::npos,
      msg);
  BOOST_TEST(err.text().empty());
  // render<B> is render(..., B{}); render_to_file takes a value too.
  const fs::path dir =
      fs::temp_directory_path() / ("recorder_svg_value_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  BOOST_TEST(render_to_file(mlp(), {}, dir / "m",
                            backend::Svg{.timeout = 300ms, .report = nullptr}) == dir / "m.svg");
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(failing_dot_falls_back_only_for_large_graphs) {
  RECORDER_REQUIRE_PROGRAM("sfdp");
  FakeDot fake("cat > /dev/null; echo 'trouble in init_rank' >&2; exit 1");
  ScopedEnv path("PATH", fake.path());
  {
    CaptureCerr err;
    const std::string msg = message_of([] { render_to_string<backend::Svg>(mlp()); });
    BOOST_TEST(msg.find("exited with status 1: trouble in init_rank") != std::string::npos, msg);
    BOOST_TEST(err.text().empty());
  }
  CaptureCerr err;
  const std::string svg = render_to_string<backend::Svg>(synthetic_chain(1100));
  BOOST_TEST(svg.find("<svg") != std::string::npos);
  BOOST_TEST(
      err.text().find("recorder: dot failed (recorder: 'dot -Tsvg -Gnslimit=2 "
                      "-Gnslimit1=2 -Gmclimit=0.5' exited with status 1: trouble in "
                      "init_rank); laying out with 'sfdp -Tsvg' instead\n") != std::string::npos,
      err.text());
}

BOOST_AUTO_TEST_CASE(fallback_failing_too_is_an_error) {
  FakeDot fake("while :; do :; done");  // spins without needing any program on PATH
  // Only the fake dot on PATH: no sfdp to fall back on.
  ScopedEnv path("PATH", fake.path().substr(0, fake.path().find(':')));
  ScopedEnv timeout("RECORDER_DOT_TIMEOUT", "0.2");
  CaptureCerr err;
  const std::string msg = message_of([] { render_to_string<backend::Png>(mlp()); });
  BOOST_TEST(msg.find("ran past its time limit of 0.2 s and was killed; then recorder: the "
                      "Graphviz program 'sfdp' was not found") != std::string::npos,
             msg);
  BOOST_TEST(err.text().find("laying out with 'sfdp -Tpng' instead") != std::string::npos);
}
