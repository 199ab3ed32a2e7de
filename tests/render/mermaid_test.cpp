/// The Mermaid backend: golden files, every option honoured, escaping.
#define BOOST_TEST_MODULE render_mermaid
#include <boost/test/unit_test.hpp>

#include "backend_laws.hpp"
#include "fixtures.hpp"
#include "golden.hpp"

#include <recorder/render/mermaid.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/visible.hpp>

#include <cstddef>
#include <string>
#include <string_view>

using namespace recorder;
using namespace recorder::testing;

namespace {

std::string mermaid(const Trace& t, const RenderOptions& o = {}) {
  return render_to_string<backend::Mermaid>(t, o);
}

std::size_t count(const std::string& s, std::string_view what) {
  std::size_t n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(golden_files) {
  check_golden("mermaid_mlp.mmd", mermaid(mlp()));
  check_golden("mermaid_mlp_tensors_lr.mmd",
               mermaid(mlp(), {.hide_inner_tensors = false, .direction = Direction::LR}));
  const Trace r = residual();
  check_golden("mermaid_residual_depth1.mmd", mermaid(r, {.depth = 1}));
  check_golden("mermaid_residual_nested.mmd",
               mermaid(r, {.depth = std::nullopt, .expand_nested = true, .show_params = true}));
  check_golden("mermaid_residual_no_shapes.mmd",
               mermaid(r, {.depth = 2, .show_shapes = false, .graph_name = "Residual"}));
  check_golden("mermaid_failed.mmd", mermaid(failed(), {.expand_nested = true}));
  check_golden("mermaid_hostile.mmd", mermaid(hostile(), {.hide_inner_tensors = false}));
  const Trace rnn = recursive_net();
  check_golden("mermaid_recursive_rolled.mmd", mermaid(rnn, {.roll = true}));
  check_golden("mermaid_recursive_unrolled.mmd", mermaid(rnn));
  check_golden("mermaid_reused_not_strict.mmd", mermaid(reused_block(), {.strict = false}));
  check_golden("mermaid_observed_functions.mmd",
               mermaid(observed_mlp(), {.depth = std::nullopt,
                                        .expand_nested = true,
                                        .hide_module_functions = false,
                                        .hide_unreached = false}));
}

BOOST_AUTO_TEST_CASE(escaping) {
  BOOST_TEST(detail::mermaid_escape("a<b>\n\"&\"") == "a#lt;b#gt;<br>#quot;#amp;#quot;");
  BOOST_TEST(detail::mermaid_escape("#1 `x`\ttab") == "#35;1 #96;x#96; tab");
  BOOST_TEST(detail::mermaid_escape("bad \x01 \xff end") == "bad \xef\xbf\xbd \xef\xbf\xbd end");
  BOOST_TEST(detail::mermaid_escape("caf\xc3\xa9") == "caf\xc3\xa9");
  const std::string s = mermaid(hostile(), {.hide_inner_tensors = false});
  BOOST_TEST(s.find("Weird#lt;T#gt;#amp;#quot;x#quot;<br>#quot;quote#quot;") != std::string::npos);
  BOOST_TEST(s.find("#lt;b#gt; bold\xef\xbf\xbd") != std::string::npos);
  BOOST_TEST(s.find("title: \"My \\\"Net\\\"\\\\\\n<x>\"") != std::string::npos);
  BOOST_TEST(BackendFormat<backend::Mermaid>::well_formed(s));
}

BOOST_AUTO_TEST_CASE(direction_and_title) {
  for (Direction d : {Direction::TB, Direction::LR, Direction::BT, Direction::RL}) {
    const std::string s = mermaid(mlp(), {.direction = d});
    BOOST_TEST(s.find(std::string("\nflowchart ") + to_string(d) + "\n") != std::string::npos);
  }
  BOOST_TEST(mermaid(mlp()).rfind("---\ntitle: \"MLP\"\n---\nflowchart TB\n", 0) == 0u);
  BOOST_TEST(mermaid(mlp(), {.graph_name = "Other"}).rfind("---\ntitle: \"Other\"\n", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(depth_and_tensors_follow_the_visible_graph) {
  const Trace r = resnet18();
  for (const RenderOptions& o :
       {RenderOptions{.depth = 1}, RenderOptions{}, RenderOptions{.depth = std::nullopt},
        RenderOptions{.hide_inner_tensors = false}}) {
    const VisibleGraph vg = visible_graph(r.graph, o);
    const std::string s = mermaid(r, o);
    BOOST_TEST(count(s, "[\"") == vg.nodes.size());
    BOOST_TEST(count(s, " -->") == vg.edges.size());
  }
  // torchview's ResNet-18 counts at depth 1: 13 nodes, 12 edges.
  const std::string s = mermaid(r, {.depth = 1});
  BOOST_TEST(count(s, "[\"") == 13u);
  BOOST_TEST(count(s, " -->") == 12u);
}

BOOST_AUTO_TEST_CASE(shapes_params_and_failure) {
  const std::string shapes = mermaid(mlp());
  BOOST_TEST(
      shapes.find("n1[\"Linear<br>fc1<br>depth:1<br>input: (1, 128)<br>output: (1, 64)\"]") !=
      std::string::npos);
  const std::string bare = mermaid(mlp(), {.show_shapes = false, .show_params = true});
  BOOST_TEST(bare.find("(1, 128)") == std::string::npos);
  BOOST_TEST(bare.find("n1[\"Linear<br>fc1<br>depth:1<br>params: 8,256\"]") != std::string::npos);
  const std::string f = mermaid(failed());
  BOOST_TEST(f.find("<br>failed") != std::string::npos);
  BOOST_TEST(count(f, "\tclass ") == 4u);  // input, function, module, failed
  BOOST_TEST(f.find(" failed\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(nested_subgraphs) {
  const Trace r = residual();
  const VisibleGraph vg = visible_graph(r.graph, {.depth = std::nullopt, .expand_nested = true});
  BOOST_TEST_REQUIRE(!vg.clusters.empty());
  const std::string s = mermaid(r, {.depth = std::nullopt, .expand_nested = true});
  BOOST_TEST(count(s, "subgraph c") == vg.clusters.size());
  BOOST_TEST(count(s, "\tend\n") == vg.clusters.size());
  BOOST_TEST(
      s.find(
          "\tsubgraph c0[\"Sequential<br>layer1\"]\n\t\tsubgraph c1[\"BasicBlock<br>layer1.0\"]") !=
      std::string::npos);
  BOOST_TEST(mermaid(r, {.depth = std::nullopt}).find("subgraph") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(parallel_edges_strict_and_rolled) {
  // Two edges between the same pair: `split`'s two outputs both feed `add`.
  Builder b("Par");
  const ModuleId root = b.module("", "Par", false);
  const NodeId x = b.input({2, 4}, "x");
  b.begin(root, {x});
  const NodeId s = b.fn("split", {x}, {2, 2});
  const NodeId split = b.last_call;
  const NodeId second =
      b.g().add_tensor(NodeKind::tensor, b.trace.root, 1, Shape(Dims{2, 2}), "Float", "cpu", split);
  b.g().add_edge(split, second);
  const NodeId sum = b.fn("add", {s, second}, {2, 2});
  b.end({sum});
  b.output(sum);
  const Trace t = std::move(b.trace);
  const VisibleGraph vg = visible_graph(t.graph, {.strict = false});
  std::uint32_t most = 0;
  for (const VisibleEdge& e : vg.edges) most = std::max(most, e.count);
  BOOST_TEST_REQUIRE(most == 2u);
  const std::string loose = mermaid(t, {.strict = false});
  BOOST_TEST(loose.find("\tn1 --> n2\n\tn1 -->|x2| n2\n") != std::string::npos);
  const std::string strict = mermaid(t);
  BOOST_TEST(strict.find("\tn1 --> n2\n") != std::string::npos);
  BOOST_TEST(strict.find("|x2|") == std::string::npos);
  const std::string rolled = mermaid(t, {.roll = true});
  BOOST_TEST(rolled.find("\tn1 -->|x2| n2\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(obeys_the_laws) { check_backend_laws<backend::Mermaid>(); }
