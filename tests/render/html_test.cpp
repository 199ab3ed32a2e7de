// The HTML viewer's C++ side (render/html.hpp) and Model Explorer's JSON (render/model_explorer.hpp),
// torch-free: the generated assets against their sources, the embedded data, escaping of
// hostile names, the opening depth, and visible_graph over a chosen set of expanded calls.
// What the page does in a browser is tested by tests/viewer (headless Chromium).
#define BOOST_TEST_MODULE render_html
#include <boost/test/unit_test.hpp>

#include "json_validator.hpp"
#include "synthetic.hpp"
#include <recorder/render/html.hpp>
#include <recorder/render/model_explorer.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/visible.hpp>

#include <cstddef>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#ifndef RECORDER_SOURCE_DIR
#error "RECORDER_SOURCE_DIR must name the repository"
#endif

namespace {

using recorder::NodeId;
using recorder::NodeKind;
using recorder::RenderOptions;
using recorder::Trace;

std::string read_source(const std::string& rel) {
  std::ifstream in(std::string(RECORDER_SOURCE_DIR) + "/" + rel, std::ios::binary);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " << rel);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <std::size_t N>
std::string joined(const std::string_view (&chunks)[N], std::size_t& largest) {
  std::string out;
  for (std::string_view c : chunks) {
    largest = std::max(largest, c.size());
    out += c;
  }
  return out;
}

std::size_t count(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

/// The data document embedded in a page.
std::string_view embedded_data(std::string_view page) {
  const std::string_view open = "<script type=\"application/json\" id=\"recorder-data\">";
  const std::size_t from = page.find(open);
  BOOST_REQUIRE(from != std::string_view::npos);
  const std::size_t begin = from + open.size();
  const std::size_t end = page.find("</script>", begin);
  BOOST_REQUIRE(end != std::string_view::npos);
  return page.substr(begin, end - begin);
}

/// Every composite call of depth < d.
std::vector<NodeId> composite_calls_above(const recorder::Graph& g, int d) {
  std::vector<NodeId> out;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    if (g.kind(id) == NodeKind::module && !g.module_of(id).leaf && g.node(id).depth < d)
      out.push_back(id);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(generated_assets_are_the_sources_in_chunks_of_at_most_16000_bytes) {
  namespace va = recorder::detail::viewer_assets;
  std::size_t largest = 0;
  BOOST_TEST(joined(va::css, largest) == read_source("viewer/viewer.css"));
  BOOST_TEST(joined(va::body, largest) == read_source("viewer/body.html"));
  BOOST_TEST(joined(va::worker, largest) == read_source("viewer/layout_worker.js"));
  BOOST_TEST(joined(va::viewer, largest) == read_source("viewer/viewer.js"));
  BOOST_TEST(joined(va::dagre, largest) == read_source("third_party/dagre/dagre.min.js"));
  BOOST_TEST(joined(va::dagre_license, largest) == read_source("third_party/dagre/LICENSE"));
  BOOST_TEST(largest <= 16000u);
  BOOST_TEST(largest > 10000u);  // dagre alone is 49 KB: chunking happened
}

BOOST_AUTO_TEST_CASE(page_embeds_every_recorded_node_and_ends_its_four_scripts) {
  const Trace t = recorder::testing::synthetic_transformer(3);
  const std::string page = recorder::render_to_string<recorder::backend::Html>(t, {.depth = 1});
  BOOST_TEST(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  BOOST_TEST(page.ends_with("</body>\n</html>\n"));
  BOOST_TEST(count(page, "<script") == 4u);
  BOOST_TEST(count(page, "</script>") == 4u);
  BOOST_TEST(count(page, "Copyright (c) 2012-2014 Chris Pettitt") == 1u);  // dagre's MIT notice
  const std::string_view data = embedded_data(page);
  BOOST_TEST(recorder::testing::valid_json(data));
  BOOST_TEST(data.starts_with("{\"format\":1,\"model\":\"Encoder\""));
  BOOST_TEST(count(data, "\n[") == t.graph.size());  // one line per recorded node
  BOOST_TEST(count(data, "\"depth\":1,\"requested_depth\":1") == 1u);
  // A module call's row: kind 6, parent, depth, label, module, depth-index, inputs, outputs.
  // Its depth-index is torchinfo's: `layers` (never called) is 1-1, `layers.0` 2-1.
  BOOST_TEST(count(data, "\n[6,1,1,\"EncoderLayer\\nlayers.0\",1,\"2-1\",[0],") == 1u);
}

BOOST_AUTO_TEST_CASE(hostile_names_are_data_not_markup) {
  Trace t = recorder::testing::synthetic_chain(16);
  t.model_name = "Net</script><script>window.pwned=1</script>";
  RenderOptions o{.depth = 2};
  o.graph_name = "\"quoted\" <img src=x onerror=\"window.pwned=2\"> \xE5\xB1\x82 \xF0\x9F\x94\xA5";
  const std::string page = recorder::render_to_string<recorder::backend::Html>(t, o);
  BOOST_TEST(count(page, "</script>") == 4u);  // only the page's own
  // In the title (as HTML text) and twice in the data (as JSON strings), never as code.
  BOOST_TEST(count(page, "window.pwned") == 3u);
  BOOST_TEST(count(page, "<img") == 0u);
  BOOST_TEST(count(page, "\\u003c/script>\\u003cscript>window.pwned=1") == 1u);
  // The title is HTML-escaped text.
  BOOST_TEST(count(page, "<title>&quot;quoted&quot; &lt;img src=x onerror=&quot;window.pwned=2") ==
             1u);
  BOOST_TEST(recorder::testing::valid_json(embedded_data(page)));
}

BOOST_AUTO_TEST_CASE(opening_depth_keeps_the_first_picture_within_the_budget) {
  const Trace t = recorder::testing::synthetic_transformer(50);
  const auto& g = t.graph;
  // 50 layers: depth 1 shows 52 nodes, depth 2 302, depth 3 1,052 (and so does "all").
  BOOST_TEST(recorder::visible_graph(g, {.depth = 1}).nodes.size() == 52u);
  BOOST_TEST(recorder::visible_graph(g, {.depth = 2}).nodes.size() == 302u);
  BOOST_TEST(recorder::visible_graph(g, {.depth = 3}).nodes.size() == 1052u);
  using recorder::detail::viewer_open_depth;
  BOOST_TEST((viewer_open_depth(g, {.depth = 3}, 1500) == std::optional<int>(3)));
  BOOST_TEST((viewer_open_depth(g, {.depth = 3}, 1000) == std::optional<int>(2)));
  BOOST_TEST((viewer_open_depth(g, {.depth = std::nullopt}, 500) == std::optional<int>(2)));
  BOOST_TEST((viewer_open_depth(g, {.depth = 3}, 10) == std::optional<int>(1)));
  BOOST_TEST((viewer_open_depth(g, {.depth = 9}, 1500) == std::nullopt));  // deeper than any call
  BOOST_TEST((viewer_open_depth(g, {.depth = -2}, 1500) == std::optional<int>(0)));
}

BOOST_AUTO_TEST_CASE(expanded_calls_give_the_picture_at_a_depth) {
  for (const Trace& t :
       {recorder::testing::synthetic_transformer(4), recorder::testing::synthetic_chain(40)}) {
    for (const bool hide : {true, false}) {
      for (int d = 0; d <= 4; ++d) {
        RenderOptions o{.depth = d, .hide_inner_tensors = hide, .expand_nested = true};
        const auto by_depth = recorder::visible_graph(t.graph, o);
        const auto by_set = recorder::visible_graph(t.graph, o, composite_calls_above(t.graph, d));
        BOOST_TEST_CONTEXT("model " << t.model_name << " depth " << d << " hide " << hide) {
          BOOST_TEST_REQUIRE(by_set.nodes.size() == by_depth.nodes.size());
          for (std::size_t i = 0; i < by_set.nodes.size(); ++i)
            BOOST_TEST((by_set.nodes[i].node == by_depth.nodes[i].node));
          BOOST_TEST((by_set.edges == by_depth.edges));
          BOOST_TEST((by_set.clusters == by_depth.clusters));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(expanding_one_branch_shows_that_branch_only) {
  const Trace t = recorder::testing::synthetic_transformer(3);
  const auto& g = t.graph;
  // Expand the root and layers.1 (node ids: the root is 1, layers.1 the second layer call).
  std::vector<NodeId> open{t.root};
  NodeId layer1;
  for (std::uint32_t i = 0; i < g.size(); ++i)
    if (g.kind(NodeId{i}) == NodeKind::module && g.module_of(NodeId{i}).path == "layers.1")
      layer1 = NodeId{i};
  BOOST_TEST_REQUIRE(layer1.valid());
  open.push_back(layer1);
  const auto vg = recorder::visible_graph(g, {}, open);
  // x, layers.0, [layer_norm, attn, add, layer_norm, mlp, add], layers.2, y.
  BOOST_TEST(vg.nodes.size() == 10u);
  // The chain (9 edges) and the two residuals: layers.0 -> add, add -> add.
  BOOST_TEST(vg.edges.size() == 11u);
  // A call inside an unexpanded one stays hidden even when listed.
  NodeId attn0;
  for (std::uint32_t i = 0; i < g.size(); ++i)
    if (g.kind(NodeId{i}) == NodeKind::module && g.module_of(NodeId{i}).path == "layers.0.attn")
      attn0 = NodeId{i};
  open.push_back(attn0);
  BOOST_TEST(recorder::visible_graph(g, {}, open).nodes.size() == 10u);
}

BOOST_AUTO_TEST_CASE(model_explorer_graph_has_namespaces_per_composite_call) {
  const Trace t = recorder::testing::synthetic_transformer(2);
  const std::string json = recorder::render_to_string<recorder::backend::ModelExplorer>(t, {});
  BOOST_TEST(recorder::testing::valid_json(json));
  const auto all = recorder::visible_graph(t.graph, {.depth = std::nullopt});
  BOOST_TEST(count(json, "\"namespace\": ") == all.nodes.size());
  BOOST_TEST(count(json, "\"sourceNodeId\": ") == all.edges.size());
  BOOST_TEST(count(json, "\"label\": \"Linear\", \"namespace\": \"layers.1/attn\"") == 4u);
  BOOST_TEST(count(json, "\"label\": \"gelu\", \"namespace\": \"layers.0/mlp\"") == 1u);
  BOOST_TEST(count(json, "\"label\": \"add\", \"namespace\": \"layers.0\"") == 2u);
  BOOST_TEST(count(json,
                   "\n        \"layers.0/attn\": {\"path\": \"layers.0.attn\", \"class\": "
                   "\"Attention\", \"depth_index\": \"3-1\"") == 1u);
  BOOST_TEST(json.starts_with("{\n  \"label\": \"Encoder\",\n  \"graphs\": ["));
  BOOST_TEST(std::string_view(recorder::backend::ModelExplorer::extension) == ".explorer.json");
}
