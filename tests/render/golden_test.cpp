/// DOT and JSON output compared byte for byte with tests/golden/render/.
#define BOOST_TEST_MODULE render_golden
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"
#include "golden.hpp"

#include <recorder/render/dot.hpp>
#include <recorder/render/json.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/svg.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

using namespace recorder;
using namespace recorder::testing;

namespace {

std::string dot(const Trace& t, const RenderOptions& o = {}) {
  return render_to_string<backend::Dot>(t, o);
}
std::string json(const Trace& t) { return render_to_string<backend::Json>(t); }

}  // namespace

BOOST_AUTO_TEST_CASE(mlp_golden) {
  const Trace t = mlp();
  check_golden("mlp.dot", dot(t));
  check_golden("mlp_tensors.dot", dot(t, {.hide_inner_tensors = false}));
  check_golden("mlp.json", json(t));
}

BOOST_AUTO_TEST_CASE(residual_golden) {
  const Trace t = residual();
  check_golden("residual.dot", dot(t));
  check_golden("residual_depth1_lr.dot", dot(t, {.depth = 1, .direction = Direction::LR}));
  check_golden("residual_depth2_tensors.dot", dot(t, {.depth = 2, .hide_inner_tensors = false}));
  check_golden("residual_no_shapes.dot",
               dot(t, {.depth = std::nullopt, .show_shapes = false, .graph_name = "Residual"}));
  check_golden("residual.json", json(t));
}

BOOST_AUTO_TEST_CASE(failed_golden) {
  const Trace t = failed();
  check_golden("failed.dot", dot(t));
  check_golden("failed_depth1.dot", dot(t, {.depth = 1}));
  check_golden("failed.json", json(t));
}

BOOST_AUTO_TEST_CASE(hostile_golden) {
  const Trace t = hostile();
  check_golden("hostile.dot", dot(t, {.hide_inner_tensors = false}));
  check_golden("hostile.json", json(t));
}

BOOST_AUTO_TEST_CASE(option_goldens) {
  check_golden("residual_nested.dot",
               dot(residual(), {.depth = std::nullopt, .expand_nested = true}));
  check_golden("rnn_rolled.dot", dot(recursive_net(), {.roll = true}));
  check_golden("rnn_unrolled.dot", dot(recursive_net()));
  check_golden("rnn_rolled_loose.dot", dot(recursive_net(), {.roll = true, .strict = false}));
  check_golden("reused_block_loose.dot", dot(reused_block(), {.strict = false}));
  check_golden("reused_block_nested_rolled.dot",
               dot(reused_block(), {.expand_nested = true, .roll = true}));
  check_golden("observed_mlp_functions.dot", dot(observed_mlp(), {.hide_module_functions = false}));
  check_golden("reused_block_params.dot", dot(reused_block(), {.depth = 1, .show_params = true}));
  check_golden("residual_styled.dot", render_to_string<backend::BasicDot<RedConvs>>(residual()));
}

BOOST_AUTO_TEST_CASE(graphviz_accepts_every_dot_golden) {
  const char* path = std::getenv("PATH");
  bool found = false;
  for (std::string_view rest = path ? path : ""; !rest.empty() && !found;) {
    const auto colon = rest.find(':');
    found =
        std::filesystem::exists(std::filesystem::path(std::string(rest.substr(0, colon))) / "dot");
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
  }
  BOOST_TEST_REQUIRE(found,
                     "Graphviz 'dot' is not on PATH: install Graphviz (scripts/test.sh does)");
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(golden_dir())) {
    if (entry.path().extension() != ".dot") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    BOOST_TEST_CONTEXT(entry.path().filename()) {
      std::string svg;
      BOOST_CHECK_NO_THROW(svg = detail::run_program({"dot", "-Tsvg"}, text));
      BOOST_TEST(svg.find("<svg") != std::string::npos);
    }
    ++checked;
  }
  BOOST_TEST(checked >= 17u);
}
