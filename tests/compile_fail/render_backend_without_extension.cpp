// EXPECT: recorder: a render backend needs `static constexpr std::string_view extension = "\.ext";`
/// A backend names its file extension, for render_to_file: one without it is named as such
/// at the entry point.
#include <recorder/render/render.hpp>

#include <ostream>
#include <sstream>
#include <string_view>

struct NodeCount {
#ifdef RECORDER_COMPILE_FAIL_TWIN
  static constexpr std::string_view extension = ".txt";
#endif
  static void render(const recorder::Trace& t, const recorder::RenderOptions&, std::ostream& os) {
    os << t.graph.nodes().size() << " nodes\n";
  }
};

void picture(const recorder::Trace& trace, std::ostream& os) {
  recorder::render(trace, {}, os, NodeCount{});
}
