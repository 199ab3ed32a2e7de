/// DOT and JSON output compared byte for byte with tests/golden/render/.
#define BOOST_TEST_MODULE render_golden
#include <boost/test/unit_test.hpp>

#include "fixtures.hpp"
#include "golden.hpp"

#include <recorder/render/dot.hpp>
#include <recorder/render/json.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/summary.hpp>
#include <recorder/render/svg.hpp>
#include <recorder/render/time_dot.hpp>

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
  check_golden("observed_mlp_functions.dot",
               dot(observed_mlp(), {.hide_module_functions = false, .hide_unreached = false}));
  check_golden("reused_block_params.dot", dot(reused_block(), {.depth = 1, .show_params = true}));
  check_golden("residual_styled.dot", render_to_string<backend::BasicDot<RedConvs>>(residual()));
}

namespace {

/// Times for the residual fixture's calls (ms): layer1.0 is the hot one. The calls inside
/// layer1.1 and the relu were not timed.
CallTimes residual_times() {
  CallTimes t;
  t.statistic = "mean of 4 runs";
  for (const auto& [key, ms] :
       std::vector<std::pair<std::string, double>>{{"<root>", 10.0},
                                                   {"conv1", 1.25},
                                                   {"bn1", 0.5},
                                                   {"layer1", 6.0},
                                                   {"layer1.0", 4.0},
                                                   {"layer1.0.conv1", 1.0},
                                                   {"layer1.0.downsample", 0.75},
                                                   {"layer1.1", 1.5},
                                                   {"fc", 0.2}})
    t.ns.emplace(key, ms * 1e6);
  return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(time_golden) {
  const Trace t = residual();
  const CallTimes times = residual_times();
  check_golden("residual_time_depth2.dot",
               render_to_string(t, {.depth = 2}, backend::TimeDot{.times = &times}));
  // The hottest drawn call gets the darkest step, and a call never timed keeps the house look.
  const std::string d1 = render_to_string(t, {.depth = 1}, backend::TimeDot{.times = &times});
  BOOST_TEST(d1.find("fillcolor=\"#7f0000\"") != std::string::npos);
  // Each time is the last row of its node's table, where it cannot be read as another node's
  // (an `xlabel` floats beside edges: issue 34).
  BOOST_TEST(d1.find("xlabel") == std::string::npos);
  BOOST_TEST(d1.find("<TR><TD COLSPAN=\"5\">6 ms (60.0%)</TD></TR>\n\t\t</TABLE>> "
                     "fillcolor=\"#7f0000\" tooltip=\"6 ms (60.0%)\"") != std::string::npos);
  BOOST_TEST(d1.find("<TD COLSPAN=\"5\">1.25 ms (12.5%)</TD>") != std::string::npos);
  BOOST_TEST(d1.find("<TD COLSPAN=\"5\">200 us (2.0%)</TD>") != std::string::npos);
  BOOST_CHECK_THROW(render_to_string<backend::TimeDot>(t, {}), std::invalid_argument);
  // Nested: each timed cluster gets a border of its step among the clusters and its time under
  // its title; layer1.1's calls inside were not timed, so its nodes keep the house look.
  const std::string nested = render_to_string(t, {.depth = std::nullopt, .expand_nested = true},
                                              backend::TimeDot{.times = &times});
  check_golden("residual_time_nested.dot", nested);
  BOOST_TEST(nested.find("<BR/>6 ms (60.0%)> labeljust=l style=dashed color=\"#7f0000\" "
                         "penwidth=2 tooltip=\"6 ms (60.0%)\"\n") != std::string::npos);
  BOOST_TEST(nested.find("<BR/>4 ms (40.0%)> labeljust=l style=dashed color=\"#d7301f\"") !=
             std::string::npos);

  const SummaryOptions o{.depth = 2,
                         .columns = {SummaryColumn::output_size, SummaryColumn::time,
                                     SummaryColumn::self_time, SummaryColumn::time_percent},
                         .times = &times};
  check_golden("residual_time_summary.txt", summary(t, o));
  const SummaryTable table = summarize(t, o);
  // The self times of the rows add up to the root's time; a row's time is its self time plus
  // the times of the rows shown directly under it.
  double self = 0;
  for (const SummaryRow& r : table.rows) self += r.self_ns.value_or(0);
  BOOST_TEST(self == 10e6, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(table.total_time_ns.value() == 10e6);
  BOOST_TEST_REQUIRE(table.rows[4].label == "Sequential: 1-4");
  BOOST_TEST(*table.rows[4].self_ns == 0.5e6);  // 6 - 4 - 1.5
  BOOST_TEST(table.rows[4].cells[3] == " 60.00%");
  BOOST_CHECK_THROW(summary(t, {.columns = {SummaryColumn::time}}), std::invalid_argument);
}

// The rule behind a profile's cluster borders, on fixed times: a profile draws one real run,
// whose order no test may assume (issue 41). Each timed cluster's step is its time over the
// slowest cluster's, so the slowest always gets the darkest, and any within a ninth of it share
// it.
BOOST_AUTO_TEST_CASE(cluster_borders_step_by_time_over_the_slowest_cluster) {
  const Trace t = resnet18();
  const auto borders = [&t](double layer3_ms) {
    CallTimes times;
    for (const auto& [key, ms] : std::vector<std::pair<std::string, double>>{{"<root>", 100.0},
                                                                             {"layer1", 8.0},
                                                                             {"layer2", 19.0},
                                                                             {"layer3", layer3_ms},
                                                                             {"layer4", 30.0}})
      times.ns.emplace(key, ms * 1e6);
    const std::string dot =
        render_to_string(t, {.depth = 2, .expand_nested = true}, backend::TimeDot{.times = &times});
    std::vector<std::string> out;  // "layer1 #fdd49e": each cluster's name and border colour
    const std::string border = "> labeljust=l style=dashed color=\"";
    for (std::size_t at = dot.find(border); at != std::string::npos;
         at = dot.find(border, at + 1)) {
      const std::size_t name = dot.rfind("label=<Sequential<BR/>", at) + 22;
      const std::size_t colour = at + border.size();
      out.push_back(dot.substr(name, dot.find("<BR/>", name) - name) + " " +
                    dot.substr(colour, dot.find('"', colour) - colour));
    }
    return out;
  };
  using Names = std::vector<std::string>;
  BOOST_TEST(borders(25.0) ==
                 (Names{"layer1 #fdd49e", "layer2 #ef6548", "layer3 #b30000", "layer4 #7f0000"}),
             boost::test_tools::per_element());
  BOOST_TEST(borders(27.5) ==
                 (Names{"layer1 #fdd49e", "layer2 #ef6548", "layer3 #7f0000", "layer4 #7f0000"}),
             boost::test_tools::per_element());
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
