// Writes the cases of the viewer's model test (tests/viewer/model_test.mjs, run by Node on
// viewer/model.js), torch-free: for hand-built and synthetic traces, the data document a page
// embeds (write_viewer_data) and what the page's pure model must compute from it, by the C++
// visible graph: the opening picture, the picture at every depth, after expanding and collapsing
// modules by path, and what a search finds. A picture is the visible nodes, the edges, the
// clusters (each call and the call of the cluster around it) and how they nest (the walk every
// backend draws clusters with). Cases: depths, expanded sets, hide_inner_tensors,
// hide_unreached, nested clusters, a module called several times, failed calls, hostile names.
#define BOOST_TEST_MODULE viewer_model_cases
#include <boost/test/unit_test.hpp>

#include "../render/fixtures.hpp"
#include "../render/json_validator.hpp"
#include "../render/synthetic.hpp"
#include "search.hpp"
#include <recorder/detail/json_writer.hpp>
#include <recorder/render/html.hpp>
#include <recorder/render/visible.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#ifndef RECORDER_VIEWER_MODEL_CASES
#error "RECORDER_VIEWER_MODEL_CASES must name the folder the cases are written to"
#endif

namespace {

using viewer_search::search;

using recorder::Graph;
using recorder::ModuleId;
using recorder::NodeId;
using recorder::NodeKind;
using recorder::RenderOptions;
using recorder::Trace;
using recorder::VisibleGraph;
using recorder::testing::Builder;

const std::filesystem::path folder{RECORDER_VIEWER_MODEL_CASES};

std::string json_str(std::string_view s) {
  std::string out;
  recorder::detail::JsonWriter(out, recorder::detail::json_compact,
                               recorder::detail::JsonText::in_script)
      .string(s);
  return out;
}

template <class T, class F>
std::string json_list(const std::vector<T>& items, F&& item) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += item(items[i]);
  }
  out += ']';
  return out;
}

const auto id_text = [](NodeId id) { return std::to_string(id.value); };

/// `{"nodes", "edges", "clusters", "cluster_calls", "nest"}` of a visible graph: recorded ids;
/// `cluster_calls` is [call, call of the enclosing cluster or -1] per cluster; `nest` is the
/// walk of `walk_clusters` as text: node ids, `(c` opening the cluster of call c, `)`.
std::string picture(const VisibleGraph& vg) {
  std::string out = "{\"nodes\": [";
  for (std::size_t i = 0; i < vg.nodes.size(); ++i) {
    if (i) out += ',';
    out += id_text(vg.nodes[i].node);
  }
  out += "], \"edges\": [";
  for (std::size_t i = 0; i < vg.edges.size(); ++i) {
    out += i ? ",[" : "[";
    out += id_text(vg.nodes[vg.edges[i].from].node);
    out += ',';
    out += id_text(vg.nodes[vg.edges[i].to].node);
    out += ']';
  }
  out += "], \"clusters\": ";
  out += std::to_string(vg.clusters.size());
  out += ", \"cluster_calls\": [";
  for (std::size_t k = 0; k < vg.clusters.size(); ++k) {
    const recorder::ClusterId p = vg.clusters[k].parent;
    out += k ? ",[" : "[";
    out += id_text(vg.clusters[k].call);
    out += ',';
    out += p.valid() ? id_text(vg.clusters[p.value].call) : std::string("-1");
    out += ']';
  }
  std::string nest;
  const auto token = [&](std::string_view open, const std::string& t) {
    if (!nest.empty()) nest += ' ';
    nest += open;
    nest += t;
  };
  recorder::walk_clusters(
      vg, [&](std::size_t i, std::size_t) { token("", id_text(vg.nodes[i].node)); },
      [&](std::size_t k, std::size_t) { token("(", id_text(vg.clusters[k].call)); },
      [&](std::size_t, std::size_t) { token(")", ""); });
  out += "], \"nest\": ";
  out += json_str(nest);
  out += '}';
  return out;
}

bool composite(const Graph& g, NodeId id) {
  return g.kind(id) == NodeKind::module && !g.module_of(id).leaf;
}

/// One step of a case: expand (the viewer's `expand(path)`: the path's composite calls and
/// every composite call around them) or collapse (`collapse(path)`: the path's calls) modules.
struct Step {
  bool expand = true;
  std::vector<std::string> paths{};
};
Step expand(std::vector<std::string> paths) { return Step{true, std::move(paths)}; }
Step collapse(std::vector<std::string> paths) { return Step{false, std::move(paths)}; }

/// What a case does beyond the depths: steps from the opening picture, searches.
struct Expect {
  std::vector<Step> steps{};
  std::vector<std::string> searches{};
  std::size_t budget = 1500;  // backend::Html's open_budget
};

std::vector<std::string> written;  // the cases written so far, in order

/// Writes `<name>.data.json` (the document of `t` with `o`) and `<name>.expect.json`, and the
/// index `cases.json` of every case written so far.
void write_case(const std::string& name, const Trace& t, const RenderOptions& o,
                const Expect& e = {}) {
  std::filesystem::create_directories(folder);
  const Graph& g = t.graph;
  std::string data;
  recorder::detail::write_viewer_data(t, o, {}, e.budget, data);
  BOOST_TEST_REQUIRE(recorder::testing::valid_json(data));
  std::ofstream(folder / (name + ".data.json"), std::ios::binary) << data;

  const std::optional<int> open = recorder::detail::viewer_open_depth(g, o, e.budget);
  RenderOptions at = o;
  at.expand_nested = true;
  at.depth = open;
  std::string out = "{\n\"name\": ";
  out += json_str(name);
  out += ",\n\"recorded\": ";
  out += std::to_string(g.size());
  out += ",\n\"open_depth\": ";
  out += open ? std::to_string(*open) : std::string("null");
  out += ",\n\"open\": ";
  out += picture(recorder::visible_graph(g, at));
  int max_depth = 0;
  for (std::uint32_t i = 0; i < g.size(); ++i)
    if (g.kind(NodeId{i}) == NodeKind::module)
      max_depth = std::max(max_depth, int{g.node(NodeId{i}).depth});
  out += ",\n\"depths\": {";
  for (int d = 0; d <= max_depth + 1; ++d) {
    at.depth = d;
    out += d ? ",\n  " : "\n  ";
    out += json_str(std::to_string(d));
    out += ": ";
    out += picture(recorder::visible_graph(g, at));
  }
  at.depth = std::nullopt;
  out += ",\n  \"all\": ";
  out += picture(recorder::visible_graph(g, at));
  out += "},\n\"steps\": [";

  // The expanded calls: the composite ones above the opening depth, then each step's.
  std::vector<char> expanded(g.size(), 0);
  for (std::uint32_t i = 0; i < g.size(); ++i)
    expanded[i] = composite(g, NodeId{i}) && (!open || g.node(NodeId{i}).depth < *open);
  for (std::size_t s = 0; s < e.steps.size(); ++s) {
    const Step& step = e.steps[s];
    for (const std::string& path : step.paths) {
      std::size_t calls = 0;
      for (std::uint32_t i = 0; i < g.size(); ++i) {
        const NodeId id{i};
        if (g.kind(id) != NodeKind::module || g.module_of(id).path != path) continue;
        ++calls;
        if (!step.expand) {
          expanded[i] = 0;
          continue;
        }
        if (composite(g, id)) expanded[i] = 1;
        for (NodeId p = g.node(id).parent; p.valid(); p = g.node(p).parent)
          if (composite(g, p)) expanded[p.value] = 1;
      }
      BOOST_TEST_REQUIRE(calls > 0u, name << ": no module at path " << path);
    }
    std::vector<NodeId> set;
    for (std::uint32_t i = 0; i < g.size(); ++i)
      if (expanded[i]) set.push_back(NodeId{i});
    out += s ? ",\n  " : "\n  ";
    out += step.expand ? "{\"action\": \"expand\"" : "{\"action\": \"collapse\"";
    out += ", \"paths\": ";
    out += json_list(step.paths, json_str);
    out += ", \"expanded\": ";
    out += json_list(set, id_text);
    out += ", \"picture\": ";
    out += picture(recorder::visible_graph(g, at, set));
    out += '}';
  }
  out += "],\n\"search\": [";
  for (std::size_t s = 0; s < e.searches.size(); ++s) {
    out += s ? ",\n  " : "\n  ";
    out += "{\"text\": ";
    out += json_str(e.searches[s]);
    out += ", \"found\": ";
    out += json_list(search(g, e.searches[s]), json_str);
    out += '}';
  }
  out += "]\n}\n";
  BOOST_TEST_REQUIRE(recorder::testing::valid_json(out));
  std::ofstream(folder / (name + ".expect.json"), std::ios::binary) << out;

  written.push_back(name);
  std::ofstream(folder / "cases.json", std::ios::binary) << json_list(written, json_str) << "\n";
}

/// visible_test.cpp's decoder: ops no input reaches (a slice of a constant, `arange`, `full`),
/// a leaf fed only by them, and a leaf whose output its inside made from a constant.
Trace unreached() {
  Builder b("Decoder");
  const ModuleId root = b.module("", "Decoder", false);
  const ModuleId block = b.module("block", "Block", false);
  const ModuleId pos = b.module("block.pos", "Embedding", true, {{"weight", {16, 8}}});
  const ModuleId fc = b.module("block.fc", "Linear", true, {{"weight", {8, 8}}});
  const ModuleId rel = b.module("rel", "Bias", true, {{"table", {16, 16}}});
  const ModuleId scratch = b.module("scratch", "Scratch", true);
  const NodeId x = b.input({4, 8}, "x");
  b.begin(root, {x});
  b.begin(block, {x});
  const NodeId e = b.leaf(pos, b.fn("arange", {}, {4}), {4, 8});
  NodeId h = b.leaf(fc, x, {4, 8});
  h = b.fn("add", {h, e}, {4, 8});
  b.end({h});
  h = b.fn("mul", {h, b.fn("triu", {b.fn("full", {}, {4, 4})}, {4, 4})}, {4, 8});
  const NodeId cut = b.fn("slice", {b.constant({16, 16})}, {4, 4});
  h = b.fn("sub", {h, b.leaf(rel, cut, {4, 4})}, {4, 8});
  b.open_leaf(scratch, h);
  const NodeId made = b.close_leaf(b.fn("clone", {b.constant({4, 8})}, {4, 8}));
  h = b.fn("div", {h, b.fn("relu", {made}, {4, 8})}, {4, 8});
  b.end({h});
  b.output(h);
  return std::move(b.trace);
}

/// A graph without inputs: everything is reached.
Trace no_input() {
  Builder b("Constant");
  const ModuleId root = b.module("", "Constant", false);
  b.begin(root, {});
  const NodeId r = b.fn("arange", {}, {4});
  b.end({r});
  b.output(r);
  return std::move(b.trace);
}

/// pages_test.cpp's hostile chain: blocks and layers named to leave a string, an attribute, a
/// tag.
Trace hostile_chain() {
  Trace t = recorder::testing::synthetic_chain(24);
  t.model_name = "Net</script><script>window.pwned=1</script>";
  const std::vector<std::string> names{
      "</script><script>window.pwned=2</script>", "\"quoted\" 'single' `back`",
      "<img src=x onerror=\"window.pwned=3\">", "\xE5\xB1\x82\xE2\x80\x94\xF0\x9F\x94\xA5 unicode",
      "a&amp;b <!-- c --> \\ \u2028 \n line"};
  for (std::size_t i = 1; i < t.graph.modules().size(); ++i) {
    // Graph offers no rename: the test renames its own graph's modules in place.
    auto& m = const_cast<recorder::ModuleInfo&>(t.graph.modules()[i]);
    const std::string& n = names[i % names.size()];
    m.name = n;
    m.class_name = n + " class";
    m.path = "blocks." + std::to_string(i) + "." + n;
  }
  return t;
}

const std::string& path_of_module(const Trace& t, std::size_t m) {
  return t.graph.modules()[m].path;
}

}  // namespace

BOOST_AUTO_TEST_CASE(small_models) {
  using namespace recorder::testing;
  write_case("mlp", mlp(), {.depth = 1}, {.searches = {"fc", "relu"}});
  write_case(
      "mlp_tensors_lr", mlp(),
      {.depth = std::nullopt, .hide_inner_tensors = false, .direction = recorder::Direction::LR});
  write_case("failed", failed(), {.depth = 2});
  write_case("failed_tensors", failed(), {.depth = std::nullopt, .hide_inner_tensors = false});
  write_case("recursive", recursive_net(), {.depth = 1});
  write_case("recursive_tensors", recursive_net(), {.depth = 1, .hide_inner_tensors = false});
  write_case("observed_mlp", observed_mlp(), {});
  write_case("observed_mlp_unreached", observed_mlp(),
             {.hide_inner_tensors = false, .hide_unreached = false});
}

BOOST_AUTO_TEST_CASE(nested_clusters) {
  using namespace recorder::testing;
  write_case("residual", residual(), {.depth = 1},
             {.steps = {expand({"layer1"}), expand({"layer1.0"}), expand({"layer1.0.downsample"}),
                        collapse({"layer1.0"}), collapse({"layer1"})},
              .searches = {"conv", "add", "Sequential", "  DOWN  "}});
  write_case("residual_tensors", residual(), {.depth = 2, .hide_inner_tensors = false},
             {.steps = {expand({"layer1.1"}), expand({"layer1.0.downsample"})}});
  write_case("resnet18", resnet18(), {.depth = 1},
             {.steps = {expand({"layer1"}), expand({"layer1.0"}), expand({"layer4.0.downsample"}),
                        collapse({"layer4.0"})},
              .searches = {"conv1", "downsample", "flatten"}});
  write_case("transformer_branch", synthetic_transformer(4), {.depth = 1},
             {.steps = {expand({"layers.1"}), expand({"layers.1.attn"}), expand({"layers.3.mlp"}),
                        collapse({"layers.1"})},
              .searches = {"q_proj", "softmax", "mlp"}});
  write_case("transformer_all", synthetic_transformer(3), {.depth = std::nullopt},
             {.steps = {collapse({"layers.1.attn"}), collapse({"layers.0", "layers.2.mlp"}),
                        collapse({""})}});
  write_case("transformer_tensors", synthetic_transformer(2),
             {.depth = 2, .hide_inner_tensors = false}, {.steps = {expand({"layers.0.attn"})}});
  // Opened at depth 1, not 3: depth 2 would show 302 nodes, more than the budget.
  write_case("transformer_budget", synthetic_transformer(50), {.depth = 3},
             {.steps = {expand({"layers.7.attn"})}, .budget = 100});
  write_case("chain", synthetic_chain(40), {.depth = 1},
             {.steps = {expand({"blocks.2"}), expand({"blocks.4"})}});
  write_case("chain_tensors", synthetic_chain(40),
             {.depth = std::nullopt, .hide_inner_tensors = false});
}

// A module called several times (its calls expand and collapse together), and parallel edges.
BOOST_AUTO_TEST_CASE(reused_module) {
  using namespace recorder::testing;
  write_case("reused_block", reused_block(), {.depth = 1},
             {.steps = {expand({"block"}), collapse({"block"})}, .searches = {"block", "add"}});
  write_case("reused_block_tensors", reused_block(),
             {.depth = std::nullopt, .hide_inner_tensors = false});
}

BOOST_AUTO_TEST_CASE(unreached_ops) {
  write_case("unreached", unreached(), {.depth = std::nullopt}, {.steps = {collapse({"block"})}});
  write_case("unreached_tensors", unreached(),
             {.depth = std::nullopt, .hide_inner_tensors = false});
  write_case("unreached_shown", unreached(), {.depth = std::nullopt, .hide_unreached = false});
  write_case("no_input", no_input(), {.depth = std::nullopt});
}

BOOST_AUTO_TEST_CASE(hostile_names) {
  const Trace chain = hostile_chain();
  // A block, then a leaf Linear in another block: its block opens around it.
  write_case("hostile_chain", chain, {.depth = 1},
             {.steps = {expand({path_of_module(chain, 1)}), expand({path_of_module(chain, 8)})},
              .searches = {"pwned", "unicode", "\"quoted\"", "<!--"}});
  write_case("hostile", recorder::testing::hostile(),
             {.depth = std::nullopt, .hide_inner_tensors = false}, {.searches = {"<", "\"", "op"}});
}
