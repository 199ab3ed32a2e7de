#pragma once
/// The laws kit of `render_backend`: one check every backend model must pass.

#include "fixtures.hpp"
#include "json_validator.hpp"

#include <boost/test/unit_test.hpp>

#include <recorder/render/concepts.hpp>
#include <recorder/render/dot.hpp>
#include <recorder/render/json.hpp>
#include <recorder/render/mermaid.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/svg.hpp>
#include <recorder/render/visible.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace recorder::testing {

/// What one document shows: the index of every node statement found (in order) and how many
/// edge statements it has.
struct Census {
  std::vector<std::size_t> nodes;
  std::size_t edges = 0;
};

/// What a shipped backend's documents look like, for the laws that read them. A backend
/// without a specialization is checked by the generic laws only.
template <class B>
struct BackendFormat;

namespace laws_detail {

/// Every match of `pattern`'s first group, as a number.
inline std::vector<std::size_t> numbers(const std::string& doc, const std::regex& pattern) {
  std::vector<std::size_t> out;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), pattern);
       it != std::sregex_iterator(); ++it)
    out.push_back(static_cast<std::size_t>(std::stoull((*it)[1].str())));
  return out;
}

/// How many times `pattern` matches.
inline std::size_t matches(const std::string& doc, const std::regex& pattern) {
  return static_cast<std::size_t>(
      std::distance(std::sregex_iterator(doc.begin(), doc.end(), pattern), std::sregex_iterator()));
}

/// The edge statements a strict or non-strict picture of `vg` has.
inline std::size_t drawn_edges(const VisibleGraph& vg, const RenderOptions& o) {
  std::size_t n = 0;
  for (const VisibleEdge& e : vg.edges) n += drawn_copies(e, o);
  return n;
}

}  // namespace laws_detail

template <dot_styler S>
struct BackendFormat<backend::BasicDot<S>> {
  static Census census(const std::string& doc) {
    static const std::regex node(R"(\n\t+n(\d+) \[label=<)");
    static const std::regex edge(R"(\n\tn\d+ -> n\d+)");
    return {laws_detail::numbers(doc, node), laws_detail::matches(doc, edge)};
  }
  static std::size_t expected_edges(const VisibleGraph& vg, const RenderOptions& o) {
    return laws_detail::drawn_edges(vg, o);
  }
  /// HTML labels hold only the tags the backend writes (`<b>` comes out as `&lt;b&gt;`).
  /// (The first line, `digraph "name" {`, holds the graph's name as a quoted DOT id.)
  static bool well_formed(const std::string& doc) {
    static const std::regex tag(R"(<(/?)([A-Za-z]+)[^<>]*>)");
    const auto body =
        doc.begin() + static_cast<std::ptrdiff_t>(std::min(doc.find('\n'), doc.size()));
    for (auto it = std::sregex_iterator(body, doc.end(), tag); it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[2].str();
      if (name != "TABLE" && name != "TR" && name != "TD" && name != "BR") return false;
    }
    return true;
  }
};

template <>
struct BackendFormat<backend::Mermaid> {
  static Census census(const std::string& doc) {
    static const std::regex node(R"(\n\t+n(\d+)\[")");
    static const std::regex edge(R"(\n\tn\d+ -->)");
    return {laws_detail::numbers(doc, node), laws_detail::matches(doc, edge)};
  }
  static std::size_t expected_edges(const VisibleGraph& vg, const RenderOptions& o) {
    return laws_detail::drawn_edges(vg, o);
  }
  /// Every line is one of the statements the backend writes, and labels hold no raw `"`, `<`,
  /// `>` or `&` (only `<br>` and `#entity;` codes).
  static bool well_formed(const std::string& doc) {
    static const std::regex line(
        R"(---|title: "([^"\\]|\\.)*"|flowchart (TB|LR|BT|RL)|)"
        R"(\t+n\d+\["[^"]*"\]|\t+subgraph c\d+\["[^"]*"\]|\t+end|)"
        R"(\tn\d+ -->(\|[^|"<>&]*\|)? n\d+|\tclassDef [a-z]+ [a-z:#0-9,-]+|\tclass (n\d+,)*n\d+ [a-z]+)");
    static const std::regex label(R"re(\["([^"]*)"\])re");
    std::istringstream in(doc);
    for (std::string l; std::getline(in, l);)
      if (!std::regex_match(l, line)) return false;
    for (auto it = std::sregex_iterator(doc.begin(), doc.end(), label);
         it != std::sregex_iterator(); ++it) {
      std::string text = std::regex_replace((*it)[1].str(), std::regex("<br>"), "");
      text = std::regex_replace(text, std::regex("#[a-z0-9]+;"), "");
      if (text.find_first_of("<>&#") != std::string::npos) return false;
    }
    return true;
  }
};

template <>
struct BackendFormat<backend::JsonView> {
  static Census census(const std::string& doc) {
    static const std::regex node(R"(\n      "index": (\d+),\n      "id")");
    static const std::regex edge(R"(\{"from": \d+, "to": \d+, "count": \d+\})");
    return {laws_detail::numbers(doc, node), laws_detail::matches(doc, edge)};
  }
  static std::size_t expected_edges(const VisibleGraph& vg, const RenderOptions&) {
    return vg.edges.size();
  }
  static bool well_formed(const std::string& doc) { return valid_json(doc); }
};

template <>
struct BackendFormat<backend::Json> {
  static Census census(const std::string& doc) {
    static const std::regex node(R"(\n      "id": (\d+),\n      "kind")");
    static const std::regex edge(R"(\n    \[\d+, \d+\])");
    return {laws_detail::numbers(doc, node), laws_detail::matches(doc, edge)};
  }
  static bool well_formed(const std::string& doc) { return valid_json(doc); }
};

template <>
struct BackendFormat<backend::Svg> {
  static Census census(const std::string& doc) {
    static const std::regex node(R"(<g id="node\d+" class="node">\n<title>n(\d+)</title>)");
    static const std::regex edge(R"(<g id="edge\d+" class="edge">)");
    return {laws_detail::numbers(doc, node), laws_detail::matches(doc, edge)};
  }
  static std::size_t expected_edges(const VisibleGraph& vg, const RenderOptions& o) {
    return laws_detail::drawn_edges(vg, o);
  }
  /// An XML document whose text holds no raw tag of the user's (`<b>`).
  static bool well_formed(const std::string& doc) {
    return doc.rfind("<?xml", 0) == 0 && doc.find("<b>") == std::string::npos &&
           doc.find("</svg>") != std::string::npos;
  }
};

/// The traces the laws are checked on: the shared fixtures, partial, hostile, looped (roll)
/// and op-level ones included.
inline std::vector<Trace (*)()> law_fixtures() {
  return {mlp, residual, failed, hostile, recursive_net, reused_block, observed_mlp};
}

/// The option sets the laws are checked with: defaults, every depth kind, each display switch.
inline std::vector<RenderOptions> law_options() {
  return {RenderOptions{},
          RenderOptions{.depth = 1},
          RenderOptions{.depth = std::nullopt},
          RenderOptions{.depth = 2,
                        .hide_inner_tensors = false,
                        .show_shapes = false,
                        .direction = Direction::RL,
                        .graph_name = "named"},
          RenderOptions{.depth = std::nullopt, .expand_nested = true},
          RenderOptions{.hide_inner_tensors = false, .expand_nested = true, .roll = true},
          RenderOptions{.depth = std::nullopt, .hide_module_functions = false, .strict = false},
          RenderOptions{.show_params = true}};
}

/// Checks the laws of `render_backend` for `B` on the shared fixtures:
/// the extension is well formed; every fixture (partial traces included) renders to a
/// non-empty document with every option set; rendering twice, and rendering two separately
/// built equal traces, gives the same bytes; `render` and `render_to_string` agree.
///
/// For the shipped backends (`BackendFormat<B>` specialized) also: the document is well formed
/// for its format, hostile names included (quotes, `<b>`, `&`, newlines come out escaped);
/// every visible node is emitted exactly once, as `n<i>` for i = 0 .. N-1 in order (the whole
/// recorded graph for `Json`); and it has one edge statement per visible edge (per drawn
/// copy when not `strict`).
template <render_backend B>
void check_backend_laws(const std::vector<Trace (*)()>& fixtures = law_fixtures(),
                        const std::vector<RenderOptions>& options = law_options()) {
  const std::string_view ext = B::extension;
  BOOST_TEST(ext.size() >= 2u);
  BOOST_TEST(ext.front() == '.');
  BOOST_TEST(ext.find('/') == std::string_view::npos);

  for (Trace (*make)() : fixtures) {
    for (const RenderOptions& o : options) {
      const Trace a = make();
      const Trace b = make();
      const std::string first = render_to_string<B>(a, o);
      BOOST_TEST(!first.empty());
      BOOST_TEST(render_to_string<B>(a, o) == first);  // same trace, same bytes
      BOOST_TEST(render_to_string<B>(b, o) == first);  // equal traces, same bytes
      const Trace copy = a;
      BOOST_TEST(render_to_string<B>(copy, o) == first);
      std::ostringstream os;
      render<B>(a, o, os);
      BOOST_TEST(os.str() == first);

      if constexpr (requires { BackendFormat<B>::census(first); }) {
        const std::string where =
            a.model_name + " depth " + (o.depth ? std::to_string(*o.depth) : std::string("all"));
        BOOST_TEST(BackendFormat<B>::well_formed(first), "malformed document: " << where);
        const Census c = BackendFormat<B>::census(first);
        std::vector<std::size_t> expected;
        std::size_t edges = 0;
        if constexpr (requires(const VisibleGraph& vg) {
                        BackendFormat<B>::expected_edges(vg, o);
                      }) {
          const VisibleGraph vg = visible_graph(a.graph, o);
          for (std::size_t i = 0; i < vg.nodes.size(); ++i) expected.push_back(i);
          edges = BackendFormat<B>::expected_edges(vg, o);
        } else {  // the whole recorded graph
          for (std::size_t i = 0; i < a.graph.size(); ++i) expected.push_back(i);
          edges = a.graph.edge_count();
        }
        std::vector<std::size_t> sorted = c.nodes;
        std::sort(sorted.begin(), sorted.end());
        BOOST_TEST(sorted == expected, "each node once: " << where);
        BOOST_TEST(c.edges == edges, "each edge once: " << where);
      }
    }
  }
}

}  // namespace recorder::testing
