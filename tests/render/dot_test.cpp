/// The DOT backend: layout of the text, options, and acceptance by Graphviz.
#define BOOST_TEST_MODULE render_dot
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"

#include <recorder/render/dot.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/svg.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>

using namespace recorder;
using namespace recorder::testing;

namespace {

std::string dot(const Trace& t, const RenderOptions& o = {}) {
  return render_to_string<backend::Dot>(t, o);
}

std::size_t count(const std::string& s, std::string_view what) {
  std::size_t n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view rest = path;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    if (!dir.empty() && std::filesystem::exists(std::filesystem::path(dir) / program)) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(header_and_ids) {
  const std::string s = dot(mlp());
  BOOST_TEST(s.rfind("strict digraph \"MLP\" {\n\tgraph [ordering=in rankdir=TB]\n", 0) == 0u);
  BOOST_TEST(s.ends_with("\tn3 -> n4\n}\n"));
  BOOST_TEST(count(s, "[label=<") == 5u);
  BOOST_TEST(count(s, " -> ") == 4u);
  for (int i = 0; i < 5; ++i) BOOST_TEST(count(s, "\tn" + std::to_string(i) + " [label=<") == 1u);
  BOOST_TEST(s.find("0x") == std::string::npos);  // no addresses
}

BOOST_AUTO_TEST_CASE(options_change_the_text) {
  const Trace t = residual();
  BOOST_TEST(dot(t, {.direction = Direction::LR}).find("rankdir=LR") != std::string::npos);
  BOOST_TEST(dot(t, {.direction = Direction::BT}).find("rankdir=BT") != std::string::npos);
  BOOST_TEST(dot(t, {.direction = Direction::RL}).find("rankdir=RL") != std::string::npos);
  BOOST_TEST(dot(t, {.graph_name = "Other"}).rfind("strict digraph \"Other\" {", 0) == 0u);
  BOOST_TEST(count(dot(t, {.depth = 1}), "[label=<") == 8u);
  BOOST_TEST(count(dot(t, {.depth = std::nullopt}), "[label=<") == 23u);
  const std::string no_shapes = dot(t, {.show_shapes = false});
  BOOST_TEST(no_shapes.find("input:") == std::string::npos);
  BOOST_TEST(no_shapes.find("(1, 3, 8, 8)") == std::string::npos);
  BOOST_TEST(count(no_shapes, "[label=<") == count(dot(t), "[label=<"));
}

BOOST_AUTO_TEST_CASE(labels_look_like_torchview) {
  const std::string s = dot(residual());
  BOOST_TEST(s.find("<TR><TD>input-tensor<BR/>x<BR/>depth:0</TD><TD>(1, 3, 8, 8)</TD></TR>") !=
             std::string::npos);
  BOOST_TEST(s.find("<TD ROWSPAN=\"2\">Conv2d<BR/>conv1<BR/>depth:1</TD>") != std::string::npos);
  BOOST_TEST(s.find("<TD ROWSPAN=\"2\">add_<BR/>depth:3</TD><TD COLSPAN=\"2\">input:</TD>"
                    "<TD COLSPAN=\"2\">2 x (1, 16, 4, 4)</TD>") != std::string::npos);
  BOOST_TEST(s.find("relu (call 2/2)") != std::string::npos);
  BOOST_TEST(count(s, "fillcolor=aliceblue") == 3u);  // add_, add_, flatten
  BOOST_TEST(count(s, "fillcolor=lightyellow") == 2u);
  BOOST_TEST(s.find("red") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(shape_text) {
  const std::int64_t dims[] = {1, 128, 7};
  BOOST_TEST(detail::shape_repr(Shape(dims, 2)) == "(1, 128)");
  BOOST_TEST(detail::shape_repr(Shape(dims, 1)) == "(1,)");
  BOOST_TEST(detail::shape_repr(Shape(dims, 0)) == "()");
  Graph g;
  const std::int64_t a[] = {2, 3}, b[] = {4};
  const NodeId x = g.add_tensor(NodeKind::tensor, {}, 0, a, "Float", "cpu");
  const NodeId y = g.add_tensor(NodeKind::tensor, {}, 0, b, "Float", "cpu");
  BOOST_TEST(detail::shapes_repr(g, {x, y, x, x}) == "3 x (2, 3), (4,)");
  BOOST_TEST(detail::shapes_repr(g, {}) == "-");
}

BOOST_AUTO_TEST_CASE(failed_calls_are_marked) {
  const std::string all = dot(failed(), {.depth = std::nullopt});
  BOOST_TEST(count(all, "COLOR=\"red\"") == 1u);
  BOOST_TEST(count(all, "color=red") == 1u);
  BOOST_TEST(all.find("Linear<BR/>fc2<BR/>depth:2<BR/>failed") != std::string::npos);
  BOOST_TEST(all.find("output-tensor") == std::string::npos);
  const std::string d0 = dot(failed(), {.depth = 0});
  BOOST_TEST(d0.find("Net<BR/>depth:0<BR/>failed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(hostile_names_are_escaped) {
  for (bool hide : {true, false}) {
    const std::string s = dot(hostile(), {.hide_inner_tensors = hide});
    BOOST_TEST(s.rfind("strict digraph \"My \\\"Net\\\"\\\\\\n<x>\" {\n", 0) == 0u);
    BOOST_TEST(s.find("Weird&lt;T&gt;&amp;&quot;x&quot;") != std::string::npos);
    BOOST_TEST(s.find("a&amp;b<BR/>c") != std::string::npos);
    // Inside labels, no raw markup from names survives: every '<' opens a known tag.
    const std::regex tag("<(/?)(TABLE|TR|TD|BR)\\b[^<>]*>|<\\n");
    const std::string stripped = std::regex_replace(s, tag, "");
    std::string labels;
    for (auto pos = stripped.find("[label="); pos != std::string::npos;
         pos = stripped.find("[label=", pos + 1))
      labels += stripped.substr(pos, stripped.find(" fillcolor", pos) - pos);
    BOOST_TEST(std::count(labels.begin(), labels.end(), '<') == 0);
    // No name starts a line of its own: every line but the first and last is indented.
    std::istringstream lines(s);
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line))
      BOOST_TEST((line == "}" || line.starts_with("\t")), "unexpected line: " << line);
  }
}

BOOST_AUTO_TEST_CASE(graphviz_accepts_every_fixture) {
  if (!on_path("dot")) {
    BOOST_TEST_MESSAGE("skipped: Graphviz 'dot' is not on PATH");
    return;
  }
  using Make = Trace (*)();
  for (Make make : {Make{mlp}, Make{residual}, Make{failed}, Make{hostile}, Make{resnet18}})
    for (bool hide : {true, false})
      for (std::optional<int> depth : {std::optional<int>{0}, std::optional<int>{2},
                                       std::optional<int>{}}) {
        const std::string text = dot(make(), {.depth = depth, .hide_inner_tensors = hide});
        std::string svg;
        BOOST_CHECK_NO_THROW(svg = detail::run_program({"dot", "-Tsvg"}, text));
        BOOST_TEST(svg.find("<svg") != std::string::npos);
      }
}
