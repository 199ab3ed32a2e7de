#pragma once
/// The laws kit of `render_backend`: one check every backend model must pass.

#include "fixtures.hpp"

#include <boost/test/unit_test.hpp>

#include <recorder/render/concepts.hpp>
#include <recorder/render/render.hpp>

#include <string>
#include <string_view>

namespace recorder::testing {

/// Checks the laws of `render_backend` for `B` on the shared fixtures:
/// the extension is well formed; every fixture (partial traces included) renders to a
/// non-empty document; rendering twice, and rendering two separately built equal traces,
/// gives the same bytes; `render` and `render_to_string` agree.
template <render_backend B>
void check_backend_laws() {
  const std::string_view ext = B::extension;
  BOOST_TEST(ext.size() >= 2u);
  BOOST_TEST(ext.front() == '.');
  BOOST_TEST(ext.find('/') == std::string_view::npos);

  using Make = Trace (*)();
  for (Make make : {Make{mlp}, Make{residual}, Make{failed}, Make{hostile}}) {
    for (const RenderOptions& o :
         {RenderOptions{}, RenderOptions{.depth = 1}, RenderOptions{.depth = std::nullopt},
          RenderOptions{.depth = 2, .hide_inner_tensors = false, .show_shapes = false,
                        .direction = Direction::RL, .graph_name = "named"}}) {
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
    }
  }
}

}  // namespace recorder::testing
