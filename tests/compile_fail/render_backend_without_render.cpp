// EXPECT: recorder: a render backend needs a `render\(const recorder::Trace&, const recorder::RenderOptions&, std::ostream&\)` callable on a const backend
/// render_to_string's backend writes a document: one without `render` is named as such at the
/// entry point.
#include <recorder/render/render.hpp>

#include <ostream>
#include <string>
#include <string_view>

struct NodeCount {
  static constexpr std::string_view extension = ".txt";
#ifdef RECORDER_COMPILE_FAIL_TWIN
  static void render(const recorder::Trace& t, const recorder::RenderOptions&, std::ostream& os) {
    os << t.graph.nodes().size() << " nodes\n";
  }
#else
  static void draw(const recorder::Trace& t, std::ostream& os) {
    os << t.graph.nodes().size() << " nodes\n";
  }
#endif
};

std::string picture(const recorder::Trace& trace) {
  return recorder::render_to_string(trace, {}, NodeCount{});
}
