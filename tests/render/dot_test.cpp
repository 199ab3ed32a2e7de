/// The DOT backend: layout of the text, options, and acceptance by Graphviz.
#define BOOST_TEST_MODULE render_dot
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"
#include "../support/preconditions.hpp"

#include <recorder/render/dot.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/svg.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <type_traits>
#include <vector>
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

/// A composite at depth 1 with a hostile class and name, so that it becomes a cluster.
Trace nested_hostile() {
  Builder b("Net");
  const ModuleId root = b.module("", "Net", false);
  const ModuleId inner = b.module("x\ny'", "A<b>&\"c", false);
  const ModuleId fc = b.module("x\ny'.fc", "Linear", true, {{"weight", {2, 2}}});
  const NodeId x = b.input({1, 2}, "x");
  b.begin(root, {x});
  b.begin(inner, {x});
  const NodeId h = b.leaf(fc, x, {1, 2});
  b.end({h});
  b.end({h});
  b.output(h);
  return std::move(b.trace);
}

}  // namespace

BOOST_AUTO_TEST_CASE(header_and_ids) {
  const std::string s = dot(mlp());
  BOOST_TEST(s.rfind("strict digraph \"MLP\" {\n\tgraph [fontname=\"Linux libertine\" ordering=in "
                     "rankdir=TB]\n",
                     0) == 0u);
  BOOST_TEST(s.ends_with("\tn3 -> n4\n}\n"));
  BOOST_TEST(count(s, "[label=<") == 5u);
  BOOST_TEST(count(s, " -> ") == 4u);
  for (int i = 0; i < 5; ++i) BOOST_TEST(count(s, "\tn" + std::to_string(i) + " [label=<") == 1u);
  BOOST_TEST(s.find("0x") == std::string::npos);  // no addresses
}

// One font family for every text of a picture (issue 41): the graph (so cluster titles) and
// edges name the nodes' font, where Graphviz would otherwise draw them in Times, a serif.
BOOST_AUTO_TEST_CASE(every_text_is_in_the_nodes_font) {
  const RenderOptions o{.expand_nested = true, .roll = true};
  const std::string s = dot(reused_block(), o);  // a cluster, and edges labelled " x2"
  BOOST_TEST(count(s, "\tgraph [fontname=\"Linux libertine\" ") == 1u);
  BOOST_TEST(count(s, "\tnode [align=left fontname=\"Linux libertine\" ") == 1u);
  BOOST_TEST(count(s, "\tedge [fontname=\"Linux libertine\" fontsize=10]\n") == 1u);
  BOOST_TEST(count(s, "fontname") == 3u);  // nothing overrides them
  RECORDER_REQUIRE_PROGRAM("dot");
  // Laid out, every text element (node rows, the cluster's title, edge labels) names one family.
  const std::string svg = render_to_string(
      reused_block(), o,
      backend::Svg{.timeout = std::chrono::milliseconds::zero(), .report = nullptr});  // no limit
  const std::regex family("<text [^>]*font-family=\"([^\"]*)\"");
  std::vector<std::string> families;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), family); it != std::sregex_iterator();
       ++it)
    families.push_back((*it)[1]);
  BOOST_TEST_REQUIRE(families.size() > 10u);
  BOOST_TEST(std::count(families.begin(), families.end(), families.front()) ==
             static_cast<std::ptrdiff_t>(families.size()));
  BOOST_TEST(families.front() == "Linux libertine");
  BOOST_TEST(svg.find("> x2</text>") != std::string::npos);  // an edge label is among them
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

// Issue 34: where local names repeat (four GPT blocks, ResNet's layers), a node is named by the
// shortest ending of its path that is its alone; an ending never starts with a list index.
BOOST_AUTO_TEST_CASE(repeated_names_are_told_apart_by_their_path) {
  testing::Builder b("GPT");
  const ModuleId root = b.module("", "GPT", false);
  const ModuleId tok = b.module("tok", "Embedding", true);
  const ModuleId blocks = b.module("blocks", "ModuleList", false);
  std::vector<ModuleId> block, ln1, fc;
  for (int i = 0; i < 2; ++i) {
    const std::string p = "blocks." + std::to_string(i);
    block.push_back(b.module(p, "Block", false));
    ln1.push_back(b.module(p + ".ln1", "LayerNorm", true));
    b.module(p + ".mlp", "Mlp", false);
    fc.push_back(b.module(p + ".mlp.fc", "Linear", true));
  }
  const ModuleId seq0 = b.module("head.0", "Linear", true);  // `0` alone is unique: still widened
  const ModuleId fc_top = b.module("fc", "Linear", true);    // the whole path: nothing to widen
  const detail::ModuleLabels labels = detail::module_labels(b.trace.graph);
  BOOST_TEST(labels.size() == b.trace.graph.module_count());
  BOOST_TEST(labels[root.value] == "GPT");
  BOOST_TEST(labels[tok.value] == "tok");
  BOOST_TEST(labels[blocks.value] == "blocks");
  BOOST_TEST(labels[block[0].value] == "blocks.0");
  BOOST_TEST(labels[block[1].value] == "blocks.1");
  BOOST_TEST(labels[ln1[0].value] == "blocks.0.ln1");
  BOOST_TEST(labels[ln1[1].value] == "blocks.1.ln1");
  BOOST_TEST(labels[fc[1].value] == "blocks.1.mlp.fc");
  BOOST_TEST(labels[seq0.value] == "head.0");
  BOOST_TEST(labels[fc_top.value] == "fc");

  // In the picture: the block call is drawn with its unambiguous name.
  const NodeId x = b.input({1, 4});
  b.begin(root, {x});
  const NodeId h = b.leaf(tok, x, {1, 4, 8});
  b.begin(block[0], {h});
  const NodeId y = b.leaf(ln1[0], h, {1, 4, 8});
  b.end({y});
  b.end({y});
  b.output(y);
  const std::string s = dot(b.trace, {.depth = 1});
  BOOST_TEST(s.find("Block<BR/>blocks.0<BR/>depth:1") != std::string::npos);
  BOOST_TEST(dot(b.trace, {.depth = 2}).find("LayerNorm<BR/>blocks.0.ln1<BR/>depth:2") !=
             std::string::npos);
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
  RECORDER_REQUIRE_PROGRAM("dot");
  using Make = Trace (*)();
  for (Make make : {Make{mlp}, Make{residual}, Make{failed}, Make{hostile}, Make{resnet18},
                    Make{recursive_net}, Make{observed_mlp}, Make{reused_block}})
    for (bool hide : {true, false})
      for (std::optional<int> depth :
           {std::optional<int>{0}, std::optional<int>{2}, std::optional<int>{}}) {
        const std::string text = dot(make(), {.depth = depth, .hide_inner_tensors = hide});
        std::string svg;
        BOOST_CHECK_NO_THROW(svg = detail::run_program({"dot", "-Tsvg"}, text));
        BOOST_TEST(svg.find("<svg") != std::string::npos);
      }
  // Every new option, alone and together, with the custom styler too.
  for (Make make : {Make{residual}, Make{hostile}, Make{recursive_net}, Make{observed_mlp},
                    Make{reused_block}, Make{nested_hostile}})
    for (const RenderOptions& o :
         {RenderOptions{.depth = std::nullopt, .expand_nested = true}, RenderOptions{.roll = true},
          RenderOptions{.strict = false}, RenderOptions{.roll = true, .strict = false},
          RenderOptions{.show_params = true}, RenderOptions{.hide_module_functions = false},
          RenderOptions{.depth = std::nullopt,
          .hide_inner_tensors = false,
          .show_shapes = false,
          .expand_nested = true,
          .hide_module_functions = false,
          .roll = true,
          .strict = false,
          .show_params = true}}) {
      for (const std::string& text :
           {dot(make(), o), render_to_string<backend::BasicDot<RedConvs>>(make(), o)}) {
        std::string svg;
        BOOST_CHECK_NO_THROW(svg = detail::run_program({"dot", "-Tsvg"}, text));
        BOOST_TEST(svg.find("<svg") != std::string::npos);
      }
    }
}

BOOST_AUTO_TEST_CASE(strict_merges_parallel_edges) {
  const Trace t = reused_block();  // Split's two outputs both feed add
  const std::string strict = dot(t);
  BOOST_TEST(strict.rfind("strict digraph \"Net\" {\n", 0) == 0u);
  BOOST_TEST(count(strict, "\tn7 -> n8\n") == 1u);
  BOOST_TEST(strict.find("label=\"") == std::string::npos);  // not rolled: no count shown
  const std::string loose = dot(t, {.strict = false});
  BOOST_TEST(loose.rfind("digraph \"Net\" {\n", 0) == 0u);
  BOOST_TEST(count(loose, "\tn7 -> n8\n") == 1u);
  BOOST_TEST(count(loose, "\tn7 -> n8 [label=\" x2\"]\n") == 1u);
  BOOST_TEST(count(loose, " -> ") == count(strict, " -> ") + 1);
}

BOOST_AUTO_TEST_CASE(rolled_edges_are_labelled_with_their_count) {
  const Trace t = recursive_net();
  const std::string strict = dot(t, {.roll = true});
  BOOST_TEST(count(strict, "[label=<") == 5u);
  BOOST_TEST(
      strict.ends_with("\tn0 -> n1 [label=\" x4\"]\n"
                       "\tn1 -> n2 [label=\" x3\"]\n"
                       "\tn2 -> n1 [label=\" x3\"]\n"
                       "\tn1 -> n1 [label=\" x3\"]\n"
                       "\tn1 -> n3\n"
                       "\tn3 -> n4\n}\n"));
  BOOST_TEST(strict.find("LSTMCell<BR/>cell (4 calls)<BR/>depth:1") != std::string::npos);
  BOOST_TEST(strict.find("LeakyReLU<BR/>act (3 calls)<BR/>depth:1") != std::string::npos);
  BOOST_TEST(strict.find("LeakyReLU<BR/>act (call 4/4)<BR/>depth:1") != std::string::npos);
  // Not strict: torchview's text, one line per occurrence, the k-th labelled " xk".
  const std::string loose = dot(t, {.roll = true, .strict = false});
  BOOST_TEST(count(loose, " -> ") == 15u);
  BOOST_TEST(loose.find("\tn0 -> n1\n\tn0 -> n1 [label=\" x2\"]\n\tn0 -> n1 [label=\" x3\"]\n"
                        "\tn0 -> n1 [label=\" x4\"]\n") != std::string::npos);
  const std::string unrolled = dot(t);
  BOOST_TEST(count(unrolled, "[label=<") == 10u);
  BOOST_TEST(count(unrolled, " -> ") == 15u);
  BOOST_TEST(unrolled.find("label=\"") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(clusters_nest_and_hold_their_nodes) {
  const std::string s = dot(residual(), {.depth = std::nullopt, .expand_nested = true});
  BOOST_TEST(count(s, "subgraph cluster_") == 4u);
  BOOST_TEST(count(s, "[label=<") == 23u);
  BOOST_TEST(s.find("\tsubgraph cluster_0 {\n"
                    "\t\tfontsize=12 label=<Sequential<BR/>layer1> labeljust=l style=dashed\n"
                    "\t\tsubgraph cluster_1 {\n"
                    "\t\t\tfontsize=12 label=<BasicBlock<BR/>layer1.0> labeljust=l style=dashed\n"
                    "\t\t\tn4 [label=<\n") != std::string::npos);
  BOOST_TEST(s.find("\t\t\tsubgraph cluster_2 {\n"
                    "\t\t\t\tfontsize=12 label=<Sequential<BR/>downsample> labeljust=l "
                    "style=dashed\n") != std::string::npos);
  // Edges come after every node, at the top level.
  const auto last_node = s.rfind("[label=<");
  BOOST_TEST(s.find(" -> ") > last_node);
  // Without expand_nested the text is today's.
  BOOST_TEST(dot(residual(), {.depth = std::nullopt}).find("subgraph") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(cluster_labels_are_escaped) {
  const std::string s = dot(nested_hostile(), {.expand_nested = true});
  BOOST_TEST(s.find("label=<A&lt;b&gt;&amp;&quot;c<BR/>x<BR/>y&#39;> labeljust=l") !=
             std::string::npos);
  const std::regex tag("<(/?)(TABLE|TR|TD|BR)\\b[^<>]*>|<\\n");
  const std::string stripped = std::regex_replace(s, tag, "");
  const auto at = stripped.find("fontsize=12 label=");
  BOOST_REQUIRE(at != std::string::npos);
  const std::string label = stripped.substr(at, stripped.find(" labeljust", at) - at);
  BOOST_TEST(std::count(label.begin(), label.end(), '<') == 1);  // the opening one
}

BOOST_AUTO_TEST_CASE(parameter_counts_have_thousands_separators) {
  BOOST_TEST(detail::with_thousands(0) == "0");
  BOOST_TEST(detail::with_thousands(999) == "999");
  BOOST_TEST(detail::with_thousands(1000) == "1,000");
  BOOST_TEST(detail::with_thousands(9408) == "9,408");
  BOOST_TEST(detail::with_thousands(11689512) == "11,689,512");
  const std::string s = dot(resnet18(), {.depth = 1, .show_params = true});
  BOOST_TEST(s.find("Conv2d<BR/>conv1<BR/>depth:1</TD><TD COLSPAN=\"2\">input:") !=
             std::string::npos);
  BOOST_TEST(s.find("<TR><TD COLSPAN=\"5\">params: 9,408</TD></TR>") != std::string::npos);
  BOOST_TEST(s.find("params: 513,000") != std::string::npos);  // fc
  BOOST_TEST(count(s, "params: ") == 10u);                     // every module node
  const std::string plain =
      dot(resnet18(), {.depth = 1, .show_shapes = false, .show_params = true});
  BOOST_TEST(plain.find("<TR><TD>params: 9,408</TD></TR>") != std::string::npos);
  BOOST_TEST(dot(resnet18(), {.depth = 1}).find("params:") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(module_functions_are_drawn_when_asked) {
  const std::string hidden = dot(observed_mlp());
  BOOST_TEST(count(hidden, "[label=<") == 5u);
  BOOST_TEST(hidden.find("addmm") == std::string::npos);
  // The weight's transpose `t` reads a parameter alone: no input reaches it.
  BOOST_TEST(count(dot(observed_mlp(), {.hide_module_functions = false}), "[label=<") == 5u);
  const std::string shown =
      dot(observed_mlp(), {.hide_module_functions = false, .hide_unreached = false});
  BOOST_TEST(count(shown, "[label=<") == 7u);  // and the weight `t` reads (issue 34)
  BOOST_TEST(shown.find("<TR><TD>constant-tensor<BR/>depth:2</TD><TD>(64, 128)</TD></TR>") !=
             std::string::npos);
  BOOST_TEST(shown.find("<TD ROWSPAN=\"2\">addmm<BR/>depth:2</TD>") != std::string::npos);
  BOOST_TEST(shown.find("Linear") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(default_styler_is_the_house_look) {
  for (const RenderOptions& o : {RenderOptions{}, RenderOptions{.depth = std::nullopt},
                                 RenderOptions{.hide_inner_tensors = false}})
    for (const Trace& t : {residual(), failed(), hostile()})
      BOOST_TEST(render_to_string<backend::BasicDot<DefaultStyler>>(t, o) == dot(t, o));
  static_assert(std::is_same_v<backend::Dot, backend::BasicDot<DefaultStyler>>);
  static_assert(dot_styler<RedConvs>);
  static_assert(!dot_styler<int>);
  static_assert(has_node_style<DefaultStyler> && has_edge_style<DefaultStyler>);
}

namespace {

struct OnlyNodes {
  static NodeStyle node_style(const Trace&, const VisibleGraph&, std::uint32_t) { return {}; }
};
static_assert(has_node_style<OnlyNodes> && !has_edge_style<OnlyNodes> && !dot_styler<OnlyNodes>);

}  // namespace

BOOST_AUTO_TEST_CASE(a_user_styler_changes_exactly_its_nodes) {
  const Trace t = residual();
  const RenderOptions o{.depth = std::nullopt};
  const std::string plain = dot(t, o);
  const std::string red = render_to_string<backend::BasicDot<RedConvs>>(t, o);
  std::istringstream a(plain), b(red);
  std::string la, lb;
  std::vector<std::string> changed;
  while (std::getline(a, la) && std::getline(b, lb))
    if (la != lb) changed.push_back(lb);
  BOOST_TEST(!std::getline(b, lb));  // same number of lines
  // Six Conv2d calls: conv1, two in each block, and the downsample one.
  std::size_t nodes = 0, edges = 0;
  for (const std::string& line : changed) {
    if (line.find("</TABLE>> fillcolor=\"#ff9999\" penwidth=2]") != std::string::npos)
      ++nodes;
    else if (line.ends_with(" [color=red]"))
      ++edges;
    else
      BOOST_ERROR("unexpected change: " << line);
  }
  BOOST_TEST(nodes == 6u);
  BOOST_TEST(edges == 6u);
  BOOST_TEST(count(red, "fillcolor=\"#ff9999\"") == 6u);
  BOOST_TEST(count(red, "fillcolor=darkseagreen1") == count(plain, "fillcolor=darkseagreen1") - 6);
}
