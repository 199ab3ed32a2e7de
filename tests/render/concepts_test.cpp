/// `render_backend`: compile-time checks and the laws kit run on every shipped model.
#define BOOST_TEST_MODULE render_concepts
#include <boost/test/unit_test.hpp>

#include "backend_laws.hpp"
#include "../support/preconditions.hpp"

#include <recorder/render/concepts.hpp>
#include <recorder/render/dot.hpp>
#include <recorder/render/json.hpp>
#include <recorder/render/mermaid.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/svg.hpp>
#include <recorder/render/visible.hpp>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>

using namespace recorder;
using namespace recorder::testing;

namespace {

/// A user backend, as in the concept's documentation.
struct NodeCount {
  static constexpr std::string_view extension = ".txt";
  static void render(const Trace& t, const RenderOptions& o, std::ostream& os) {
    os << visible_graph(t.graph, o).nodes.size() << " nodes\n";
  }
};

struct NoExtension {
  static void render(const Trace&, const RenderOptions&, std::ostream&) {}
};
struct NoRender {
  static constexpr std::string_view extension = ".x";
};
struct MemberRender {  // `render` must be static
  static constexpr std::string_view extension = ".x";
  void render(const Trace&, const RenderOptions&, std::ostream&) {}
};
struct WrongSignature {
  static constexpr std::string_view extension = ".x";
  static void render(const Trace&, std::ostream&) {}
};
struct IntExtension {
  static constexpr int extension = 3;
  static void render(const Trace&, const RenderOptions&, std::ostream&) {}
};
struct CharPointerExtension {
  static constexpr const char* extension = ".c";
  static void render(const Trace&, const RenderOptions&, std::ostream&) {}
};

}  // namespace

static_assert(render_backend<backend::Dot>);
static_assert(render_backend<backend::Json>);
static_assert(render_backend<backend::JsonView>);
static_assert(render_backend<backend::Mermaid>);
static_assert(render_backend<backend::Svg>);
static_assert(render_backend<backend::Png>);
static_assert(render_backend<NodeCount>);
static_assert(render_backend<CharPointerExtension>);
static_assert(!render_backend<NoExtension> && has_render_function<NoExtension>);
static_assert(!render_backend<NoRender> && has_file_extension<NoRender>);
static_assert(!has_render_function<MemberRender>);
static_assert(!has_render_function<WrongSignature>);
static_assert(!has_file_extension<IntExtension>);
static_assert(!render_backend<int>);

BOOST_AUTO_TEST_CASE(dot_obeys_the_laws) { check_backend_laws<backend::Dot>(); }
BOOST_AUTO_TEST_CASE(json_obeys_the_laws) { check_backend_laws<backend::Json>(); }
BOOST_AUTO_TEST_CASE(json_view_obeys_the_laws) { check_backend_laws<backend::JsonView>(); }
BOOST_AUTO_TEST_CASE(mermaid_obeys_the_laws) { check_backend_laws<backend::Mermaid>(); }
BOOST_AUTO_TEST_CASE(user_backend_obeys_the_laws) { check_backend_laws<NodeCount>(); }

BOOST_AUTO_TEST_CASE(svg_obeys_the_laws) {
  RECORDER_REQUIRE_PROGRAM("dot");
  // With no time limit on the layout: under one, a loaded machine could make one of the runs
  // fall back to sfdp, and "same trace, same bytes" would depend on its speed (issue 41).
  const char* old = std::getenv("RECORDER_DOT_TIMEOUT");
  const std::string kept = old != nullptr ? old : "";
  ::setenv("RECORDER_DOT_TIMEOUT", "0", 1);
  check_backend_laws<backend::Svg>();
  if (old != nullptr)
    ::setenv("RECORDER_DOT_TIMEOUT", kept.c_str(), 1);
  else
    ::unsetenv("RECORDER_DOT_TIMEOUT");
}

BOOST_AUTO_TEST_CASE(user_backend_example_output) {
  BOOST_TEST(render_to_string<NodeCount>(resnet18(), {.depth = 1}) == "13 nodes\n");
  std::ostringstream os;
  render<NodeCount>(mlp(), {}, os);
  BOOST_TEST(os.str() == "5 nodes\n");
}
