/// DOT and JSON output compared byte for byte with tests/golden/render/.
#define BOOST_TEST_MODULE render_golden
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"
#include "golden.hpp"

#include <recorder/render/dot.hpp>
#include <recorder/render/json.hpp>
#include <recorder/render/render.hpp>

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
