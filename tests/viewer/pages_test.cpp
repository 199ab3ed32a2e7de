// Writes the HTML viewer pages the browser tests open (tests/viewer/viewer_e2e.mjs), with what
// each page must show, computed here by the C++ visible graph: ResNet-18 traced from the
// templated model and from TorchScript, a hand-written 4-block GPT from TorchScript, a trace
// with hostile names, and synthetic transformer traces of ~1k, 10k and 50k nodes. Checks the
// C++ side's numbers on the way.
#define BOOST_TEST_MODULE viewer_pages
#include <boost/test/unit_test.hpp>

#include "../render/synthetic.hpp"
#include "search.hpp"
#include "models/resnet.hpp"
#include <recorder/capture/facts.hpp>
#include <recorder/render/html.hpp>
#include <recorder/render/model_explorer.hpp>
#include <recorder/script.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#ifndef RECORDER_VIEWER_PAGES
#error "RECORDER_VIEWER_PAGES must name the folder the pages are written to"
#endif
#ifndef RECORDER_SCRIPT_MODELS
#error "RECORDER_SCRIPT_MODELS must name the folder of the TorchScript test models"
#endif

namespace {

using viewer_search::search;

using recorder::Graph;
using recorder::NodeId;
using recorder::NodeKind;
using recorder::RenderOptions;
using recorder::Trace;
using recorder::VisibleGraph;

const std::filesystem::path pages{RECORDER_VIEWER_PAGES};

std::string json_str(std::string_view s) { return '"' + recorder::detail::json_escape(s) + '"'; }

/// `{"nodes": [ids], "edges": [[from, to]...], "clusters": n}` of a visible graph.
std::string picture(const Graph& g, const VisibleGraph& vg) {
  static_cast<void>(g);
  std::string out = "{\"nodes\": [";
  for (std::size_t i = 0; i < vg.nodes.size(); ++i)
    out += (i ? "," : "") + std::to_string(vg.nodes[i].node.value);
  out += "], \"edges\": [";
  for (std::size_t i = 0; i < vg.edges.size(); ++i)
    out += std::string(i ? "," : "") + "[" + std::to_string(vg.nodes[vg.edges[i].from].node.value) +
           "," + std::to_string(vg.nodes[vg.edges[i].to].node.value) + "]";
  out += "], \"clusters\": " + std::to_string(vg.clusters.size()) + "}";
  return out;
}

/// The composite calls of depth < d, and the calls of the modules at `paths` and around them.
std::vector<NodeId> expanded_set(const Graph& g, int d, const std::vector<std::string>& paths) {
  std::vector<NodeId> out;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    if (g.kind(id) != NodeKind::module || g.module_of(id).leaf) continue;
    const bool named = std::find(paths.begin(), paths.end(), g.module_of(id).path) != paths.end();
    if (g.node(id).depth < d || named) out.push_back(id);
  }
  return out;
}

struct Expect {
  std::vector<std::vector<std::string>> expand_steps{};  // each: paths expanded in turn
  std::vector<std::string> searches{};
  std::vector<std::pair<std::string, std::vector<std::string>>> hovers{};
};

/// Writes `<name>.html` and `<name>.expect.json`; returns the page's size in bytes.
std::size_t write_page(const std::string& name, const Trace& t, const RenderOptions& o,
                       const Expect& e = {}, const recorder::backend::Html& html = {}) {
  const auto file = recorder::render_to_file(t, o, pages / (name + ".html"), html);
  const Graph& g = t.graph;
  const std::optional<int> open = recorder::detail::viewer_open_depth(g, o, html.open_budget);
  RenderOptions at = o;
  at.expand_nested = true;
  at.depth = open;
  std::string out = "{\n\"file\": " + json_str(file.filename().string()) +
                    ",\n\"nodes\": " + std::to_string(g.size()) +
                    ",\n\"open_depth\": " + (open ? std::to_string(*open) : std::string("null")) +
                    ",\n\"open\": " + picture(g, recorder::visible_graph(g, at));
  int max_depth = 0;
  for (std::uint32_t i = 0; i < g.size(); ++i)
    if (g.kind(NodeId{i}) == NodeKind::module)
      max_depth = std::max(max_depth, int{g.node(NodeId{i}).depth});
  out += ",\n\"depths\": {";
  for (int d = 0; d <= max_depth + 1 && g.size() < 20000; ++d) {
    at.depth = d;
    out += (d ? ",\n  " : "\n  ") + json_str(std::to_string(d)) + ": " +
           picture(g, recorder::visible_graph(g, at));
  }
  at.depth = std::nullopt;
  out += g.size() < 20000 ? ",\n  \"all\": " + picture(g, recorder::visible_graph(g, at)) : "";
  out += "},\n\"expand\": [";
  std::vector<std::string> opened;
  for (std::size_t s = 0; s < e.expand_steps.size(); ++s) {
    for (const auto& p : e.expand_steps[s]) opened.push_back(p);
    const VisibleGraph vg =
        recorder::visible_graph(g, at, expanded_set(g, open.value_or(99), opened));
    out += std::string(s ? ",\n  " : "\n  ") + "{\"paths\": [";
    for (std::size_t k = 0; k < e.expand_steps[s].size(); ++k)
      out += (k ? "," : "") + json_str(e.expand_steps[s][k]);
    out += "], \"picture\": " + picture(g, vg) + "}";
  }
  out += "],\n\"search\": [";
  for (std::size_t s = 0; s < e.searches.size(); ++s) {
    out += std::string(s ? ",\n  " : "\n  ") + "{\"text\": " + json_str(e.searches[s]) +
           ", \"found\": [";
    const auto found = search(g, e.searches[s]);
    for (std::size_t k = 0; k < found.size(); ++k) out += (k ? "," : "") + json_str(found[k]);
    out += "]}";
  }
  out += "],\n\"hover\": [";
  for (std::size_t s = 0; s < e.hovers.size(); ++s) {
    out += std::string(s ? ",\n  " : "\n  ") + "{\"path\": " + json_str(e.hovers[s].first) +
           ", \"contains\": [";
    for (std::size_t k = 0; k < e.hovers[s].second.size(); ++k)
      out += (k ? "," : "") + json_str(e.hovers[s].second[k]);
    out += "]}";
  }
  out += "]\n}\n";
  std::ofstream(pages / (name + ".expect.json"), std::ios::binary) << out;
  return std::filesystem::file_size(file);
}

const recorder::TraceOptions eval{.mode = recorder::TrainMode::eval, .no_grad = true};

std::size_t count_nodes(const Trace& t, std::optional<int> d) {
  return recorder::visible_graph(t.graph, {.depth = d}).nodes.size();
}

/// ResNet-18 traced while recording the running moments of layer2.0.downsample's output over
/// two forwards (`x`, then `x / 2`): the trace of the second, and hover facts made from the
/// recording.
template <class Model>
std::pair<Trace, recorder::backend::Html> traced_with_facts(Model& model, const at::Tensor& x) {
  namespace rr = recorder::record;
  rr::ForwardOutput<recorder::reduce::Moments> outputs({"layer2.0.downsample"});
  recorder::Tracer<rr::ForwardOutput<recorder::reduce::Moments>> tracer(eval, outputs);
  tracer.run(model, x);
  Trace t = tracer.run(model, x / 2);
  recorder::backend::Html html{.facts = recorder::facts_of(t, outputs)};
  return {std::move(t), std::move(html)};
}

const Expect resnet_expect{
    .expand_steps = {{"layer1"}, {"layer1.0"}},
    .searches = {"conv1", "Downsample", "adaptive_avg"},
    .hovers = {{"layer2.0.downsample",
                {"layer2.0.downsample", "Sequential", "3-18", "8,448", "[1, 128, 28, 28]",
                 "forward_output, reduce::moments", "samples", "mean", "variance"}},
               {"layer1.0.conv1", {"Conv2d", "3-1", "36,864", "kernel_size", "[3, 3]"}}}};

}  // namespace

BOOST_AUTO_TEST_CASE(resnet18_from_the_templated_model) {
  std::filesystem::create_directories(pages);
  torch::manual_seed(0);
  auto model = models::ResNet18();
  const auto [t, html] = traced_with_facts(model, torch::randn({1, 3, 224, 224}));
  BOOST_TEST(count_nodes(t, 1) == 13u);
  BOOST_TEST(count_nodes(t, std::nullopt) == 71u);
  // The recording's facts: what, how many samples, the moments' three fields.
  BOOST_TEST_REQUIRE(html.facts.size() == 1u);
  BOOST_TEST(t.graph.module_of(html.facts[0].node).path == "layer2.0.downsample");
  BOOST_TEST_REQUIRE(html.facts[0].facts.size() == 5u);
  BOOST_TEST(html.facts[0].facts[0].second == "forward_output, reduce::moments");
  BOOST_TEST(html.facts[0].facts[1].second == "2");
  BOOST_TEST(html.facts[0].facts[2].first == "mean");
  BOOST_TEST(html.facts[0].facts[2].second.starts_with("[1, 128, 28, 28] "));
  BOOST_TEST(html.facts[0].facts[4].first == "count");
  BOOST_TEST(recorder::visible_graph(t.graph, {.depth = std::nullopt}).edges.size() == 78u);
  // Expanding layer1 then layer1.0 from depth 1: layer1's box gives way to layer1.1's box and
  // layer1.0's 7 nodes (conv1, bn1, relu, conv2, bn2, add_, relu).
  const auto g2 =
      recorder::visible_graph(t.graph, {}, expanded_set(t.graph, 1, {"layer1", "layer1.0"}));
  BOOST_TEST(g2.nodes.size() == 13u - 1u + 1u + 7u);
  BOOST_TEST(search(t.graph, "conv1").size() == 9u);
  const std::size_t bytes = write_page("resnet18", t, {.depth = 1}, resnet_expect, html);
  BOOST_TEST_MESSAGE("resnet18.html: " << bytes << " bytes for " << t.graph.size() << " nodes");
  // The same trace for Model Explorer, beside it.
  recorder::render_to_file<recorder::backend::ModelExplorer>(t, {}, pages / "resnet18");
  // The screenshots' pages: collapsed at depth 1 and fully expanded.
  write_page("resnet18_all", t, {.depth = std::nullopt});
}

BOOST_AUTO_TEST_CASE(resnet18_from_torchscript) {
  std::filesystem::create_directories(pages);
  auto m =
      recorder::load_model(std::filesystem::path(RECORDER_SCRIPT_MODELS) / "resnet18_script.pt");
  const auto [t, html] = traced_with_facts(m, torch::zeros({1, 3, 224, 224}));
  BOOST_TEST(count_nodes(t, 1) == 13u);
  BOOST_TEST(html.facts.size() == 1u);
  write_page("resnet18_script", t, {.depth = 1}, resnet_expect, html);
}

// Ops no input reaches (a mask sliced from a buffer, and its sum) and one without operands
// (`arange`) are recorded but not drawn: the viewer follows the C++ rule (hide_unreached).
// Drawn (hide_unreached off), they bring the buffer they read: 13 + 3 + 1 nodes.
BOOST_AUTO_TEST_CASE(unreached_ops_from_torchscript) {
  std::filesystem::create_directories(pages);
  auto m =
      recorder::load_model(std::filesystem::path(RECORDER_SCRIPT_MODELS) / "subscripts_script.pt");
  const Trace t =
      recorder::Tracer<recorder::record::Structure>(eval).run(m, torch::randn({2, 5, 4}));
  BOOST_TEST(count_nodes(t, std::nullopt) == 13u);
  BOOST_TEST(recorder::visible_graph(t.graph, {.hide_unreached = false}).nodes.size() == 17u);
  write_page("unreached", t, {.depth = std::nullopt});
}

// A 4-block GPT written by hand (tests/script/models.py's Gpt4): a deep picture the viewer must
// open readable, and causal masks sliced from a registered buffer, drawn with what feeds them
// (hide_unreached off).
BOOST_AUTO_TEST_CASE(gpt4_from_torchscript) {
  std::filesystem::create_directories(pages);
  auto m = recorder::load_model(std::filesystem::path(RECORDER_SCRIPT_MODELS) / "gpt4_script.pt");
  torch::manual_seed(0);
  const Trace t = recorder::Tracer<recorder::record::Structure>(eval).run(
      m, torch::randint(0, 100, {2, 12}, torch::kLong));
  RenderOptions o;
  o.hide_unreached = false;
  write_page("gpt4_script", t, o,
             Expect{.expand_steps = {{"blocks.0.attn"}},
                    .searches = {"mask", "Mlp"},
                    .hovers = {{"blocks.0.mlp", {"Mlp", "blocks.0.mlp"}}}});
}

BOOST_AUTO_TEST_CASE(hostile_names) {
  std::filesystem::create_directories(pages);
  Trace t = recorder::testing::synthetic_chain(16);
  t.model_name = "Net</script><script>window.pwned=1</script>";
  recorder::Graph& g = t.graph;
  // Give the blocks and their layers names that try to leave a string, an attribute, a tag.
  const std::vector<std::string> names{
      "</script><script>window.pwned=2</script>", "\"quoted\" 'single' `back`",
      "<img src=x onerror=\"window.pwned=3\">", "\xE5\xB1\x82\xE2\x80\x94\xF0\x9F\x94\xA5 unicode",
      "a&amp;b <!-- c -->"};
  for (std::size_t i = 1; i < g.modules().size(); ++i) {
    // Graph offers no rename: the test renames its own graph's modules in place.
    recorder::ModuleInfo& m = const_cast<recorder::ModuleInfo&>(g.modules()[i]);
    const std::string& n = names[i % names.size()];
    m.name = n;
    m.class_name = n + " class";
    m.path = "blocks." + std::to_string(i) + "." + n;
  }
  RenderOptions o{.depth = 1};
  o.graph_name = names[2];
  write_page("hostile", t, o,
             Expect{.expand_steps = {{g.modules()[1].path}},
                    .searches = {"pwned", "unicode"},
                    .hovers = {{g.modules()[1].path, {names[1 % names.size()]}}}});
}

BOOST_AUTO_TEST_CASE(synthetic_transformers_for_the_speed_benchmark) {
  std::filesystem::create_directories(pages);
  // 45 recorded nodes per layer, plus 3: ~1k, ~10k, ~50k nodes.
  for (const auto& [name, layers] : {std::pair<const char*, std::size_t>{"synthetic_1k", 22},
                                     {"synthetic_10k", 222},
                                     {"synthetic_50k", 1111}}) {
    const Trace t = recorder::testing::synthetic_transformer(layers);
    const std::size_t bytes =
        write_page(name, t, {}, Expect{.expand_steps = {{"layers.7"}}, .searches = {"q_proj"}});
    BOOST_TEST_MESSAGE(name << ": " << t.graph.size() << " nodes, " << bytes << " bytes, "
                            << bytes / t.graph.size() << " bytes per node");
  }
  // For the pan benchmark: 476 layers opened fully, 9,998 visible nodes (21 per layer, plus 2).
  const Trace t = recorder::testing::synthetic_transformer(476);
  BOOST_TEST(recorder::visible_graph(t.graph, {.depth = std::nullopt}).nodes.size() == 9998u);
  write_page("synthetic_pan10k", t, {.depth = std::nullopt}, Expect{},
             recorder::backend::Html{.open_budget = 20000});
}
