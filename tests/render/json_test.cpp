/// The JSON backends: strictly valid, complete, and faithful to the recorded graph (`Json`)
/// or to the visible graph (`JsonView`).
#define BOOST_TEST_MODULE render_json
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"
#include "golden.hpp"
#include "json_validator.hpp"

#include <recorder/render/json.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/visible.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>

using namespace recorder;
using namespace recorder::testing;

namespace {

std::string json(const Trace& t) { return render_to_string<backend::Json>(t); }
std::string view(const Trace& t, const RenderOptions& o = {}) {
  return render_to_string<backend::JsonView>(t, o);
}

std::size_t count(const std::string& s, std::string_view what) {
  std::size_t n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(validator_is_strict) {
  BOOST_TEST(valid_json("{\"a\": [1, -2.5e3, true, false, null, \"x\\n\\u00e9\"]}"));
  BOOST_TEST(valid_json("[]"));
  BOOST_TEST(!valid_json("[1, 2,]"));
  BOOST_TEST(!valid_json("{\"a\": 1,}"));
  BOOST_TEST(!valid_json("{a: 1}"));
  BOOST_TEST(!valid_json("[\"tab\there\"]"));
  BOOST_TEST(!valid_json("[\"bad \\x escape\"]"));
  BOOST_TEST(!valid_json("[01]"));
  BOOST_TEST(!valid_json("[1] [2]"));
  BOOST_TEST(!valid_json("[\"\xff\"]"));
  BOOST_TEST(!valid_json("[\"unterminated]"));
}

BOOST_AUTO_TEST_CASE(every_fixture_is_valid_json) {
  using Make = Trace (*)();
  for (Make make : {Make{mlp}, Make{residual}, Make{failed}, Make{hostile}, Make{resnet18}}) {
    const std::string s = json(make());
    JsonValidator v(s);
    BOOST_TEST(v.valid(), "invalid JSON near byte " << v.position());
    BOOST_TEST(s.ends_with("}\n"));
  }
}

BOOST_AUTO_TEST_CASE(the_whole_graph_ignoring_depth) {
  const Trace t = resnet18();
  const std::string s = json(t);
  BOOST_TEST(count(s, "\"kind\": ") == t.graph.size());
  BOOST_TEST(count(s, "\"class\": \"Conv2d\"") == 2 * 20u);  // modules + calls
  BOOST_TEST(render_to_string<backend::Json>(t, {.depth = 1}) == s);
  BOOST_TEST(s.find("\"model\": \"ResNet\",\n  \"complete\": true,\n  \"failure\": null,") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(node_fields) {
  const std::string s = json(residual());
  BOOST_TEST(s.find("\"depth_index\": \"2-2\"") != std::string::npos);
  BOOST_TEST(s.find("\"depth_index\": \"3-1\"") != std::string::npos);
  BOOST_TEST(s.find("\"call_index\": 1,") != std::string::npos);
  BOOST_TEST(s.find("\"op\": \"add\",\n      \"inplace\": true") != std::string::npos);
  BOOST_TEST(s.find("\"shape\": [1, 3, 8, 8],\n      \"dtype\": \"Float\",\n      \"device\": "
                    "\"cpu\",\n      \"producer\": null") != std::string::npos);
  BOOST_TEST(s.find("\"edges\": [\n    [0, 2],\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(failure_is_reported) {
  const std::string s = json(failed());
  BOOST_TEST(s.find("\"complete\": false") != std::string::npos);
  BOOST_TEST(s.find("\"module_path\": \"block.fc2\"") != std::string::npos);
  BOOST_TEST(count(s, "\"failed\": true") == 3u);
  BOOST_TEST(s.find("\"outputs\": [],") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(hostile_strings) {
  const std::string s = json(hostile());
  BOOST_TEST(valid_json(s));
  BOOST_TEST(s.find("\"model\": \"My \\\"Net\\\"\\\\\\n<x>\"") != std::string::npos);
  BOOST_TEST(s.find("\\u0002") != std::string::npos);
  BOOST_TEST(s.find("\\t") != std::string::npos);
  BOOST_TEST(s.find('\xff') == std::string::npos);
}

BOOST_AUTO_TEST_CASE(empty_graph) {
  const Trace t;
  const std::string s = json(t);
  BOOST_TEST(valid_json(s));
  BOOST_TEST(s ==
             "{\n  \"model\": \"\",\n  \"complete\": true,\n  \"failure\": null,\n"
             "  \"total_params\": 0,\n  \"trainable_params\": 0,\n  \"modules\": [],\n"
             "  \"nodes\": [],\n  \"edges\": []\n}\n");
}

// ---- JsonView: the visible graph -----------------------------------------------------------

BOOST_AUTO_TEST_CASE(view_golden_files) {
  check_golden("json_visible_mlp.json", view(mlp()));
  const Trace r = residual();
  check_golden("json_visible_residual_depth1.json", view(r, {.depth = 1}));
  check_golden("json_visible_residual_nested.json", view(r, {.depth = std::nullopt,
                                                             .hide_inner_tensors = false,
                                                             .direction = Direction::LR,
                                                             .expand_nested = true,
                                                             .show_params = true}));
  check_golden("json_visible_failed.json", view(failed(), {.expand_nested = true}));
  check_golden("json_visible_recursive_rolled.json", view(recursive_net(), {.roll = true}));
  check_golden("json_visible_hostile.json",
               view(hostile(), {.hide_inner_tensors = false, .show_shapes = false}));
}

BOOST_AUTO_TEST_CASE(view_is_valid_json_for_every_fixture_and_option) {
  using Make = Trace (*)();
  for (Make make : {Make{mlp}, Make{residual}, Make{failed}, Make{hostile}, Make{resnet18}})
    for (const RenderOptions& o :
         {RenderOptions{}, RenderOptions{.depth = 0}, RenderOptions{.depth = std::nullopt},
          RenderOptions{.hide_inner_tensors = false,
          .show_shapes = false,
          .expand_nested = true,
          .hide_module_functions = false,
          .roll = true,
          .strict = false,
          .show_params = true}}) {
      const std::string s = view(make(), o);
      JsonValidator v(s);
      BOOST_TEST(v.valid(), "invalid JSON near byte " << v.position());
      BOOST_TEST(s.ends_with("}\n"));
    }
  const Trace empty;
  BOOST_TEST(valid_json(view(empty)));
}

BOOST_AUTO_TEST_CASE(view_follows_the_visible_graph) {
  const Trace t = resnet18();
  // torchview's ResNet-18 counts: 13 / 12 at depth 1, 68 / 75 at depth 3.
  for (const auto& [depth, nodes, edges] : {std::tuple{1, 13u, 12u}, std::tuple{3, 68u, 75u}}) {
    const std::string s = view(t, {.depth = depth});
    BOOST_TEST(count(s, "\"index\": ") == nodes);
    BOOST_TEST(count(s, "{\"from\": ") == edges);
  }
  const std::string s = view(t, {.depth = 1});
  BOOST_TEST(s.find("\"options\": {\n    \"depth\": 1,\n    \"expand_nested\": false,") !=
             std::string::npos);
  BOOST_TEST(s.find("\"label\": \"Sequential\\nlayer1\"") != std::string::npos);
  BOOST_TEST(s.find("\"collapsed\": true") != std::string::npos);
  BOOST_TEST(s.find("\"inputs\": [[1, 64, 56, 56]],\n      \"outputs\": [[1, 64, 56, 56]]") !=
             std::string::npos);
  BOOST_TEST(s.find("\"clusters\": []\n}\n") != std::string::npos);
  BOOST_TEST(view(t, {.depth = std::nullopt}).find("\"depth\": null,") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(view_options_shapes_params_clusters) {
  const Trace r = residual();
  const std::string bare = view(r, {.show_shapes = false});
  BOOST_TEST(bare.find("\"inputs\"") == std::string::npos);
  BOOST_TEST(bare.find("\"shape\"") == std::string::npos);
  BOOST_TEST(bare.find("\"params\"") == std::string::npos);
  BOOST_TEST(view(r, {.show_params = true}).find("\"params\": 216,") != std::string::npos);

  const RenderOptions nested{.depth = std::nullopt, .expand_nested = true};
  const VisibleGraph vg = visible_graph(r.graph, nested);
  const std::string s = view(r, nested);
  BOOST_TEST(count(s, "\"call\": ") == vg.clusters.size());
  BOOST_TEST(s.find("\"index\": 1,\n      \"call\": ") != std::string::npos);
  BOOST_TEST(
      s.find("\"parent\": 0,\n      \"path\": \"layer1.0\",\n      \"class\": \"BasicBlock\","
             "\n      \"label\": \"BasicBlock\\nlayer1.0\"") != std::string::npos);
  BOOST_TEST(s.find("\"cluster\": null") != std::string::npos);
  BOOST_TEST(s.find("\"cluster\": 2") != std::string::npos);  // downsample, inside layer1.0
}

BOOST_AUTO_TEST_CASE(view_edge_counts) {
  Builder b("Par");
  const ModuleId root = b.module("", "Par", false);
  const NodeId x = b.input({2, 4}, "x");
  b.begin(root, {x});
  const NodeId first = b.fn("split", {x}, {2, 2});
  const NodeId split = b.last_call;
  const NodeId second =
      b.g().add_tensor(NodeKind::tensor, b.trace.root, 1, Shape(Dims{2, 2}), "Float", "cpu", split);
  b.g().add_edge(split, second);
  const NodeId sum = b.fn("add", {first, second}, {2, 2});
  b.end({sum});
  b.output(sum);
  const std::string s = view(b.trace);
  BOOST_TEST(s.find("{\"from\": 1, \"to\": 2, \"count\": 2}") != std::string::npos);
  BOOST_TEST(s.find("\"inputs\": [[2, 2], [2, 2]]") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(view_hostile_strings) {
  const std::string s = view(hostile(), {.graph_name = "a\"b\n"});
  BOOST_TEST(valid_json(s));
  BOOST_TEST(s.find("\"graph_name\": \"a\\\"b\\n\"") != std::string::npos);
  BOOST_TEST(s.find("\"label\": \"Weird<T>&\\\"x\\\"\\n\\\"quote\\\"\"") != std::string::npos);
  BOOST_TEST(s.find('\xff') == std::string::npos);
}
