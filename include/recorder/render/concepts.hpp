#pragma once
/// The `render_backend` concept: what a type needs to be used with `recorder::render`.

#include <recorder/graph/trace.hpp>
#include <recorder/render/options.hpp>

#include <concepts>
#include <ostream>
#include <string>
#include <string_view>

namespace recorder {

/// Part of `render_backend`: `b.render(trace, options, os)` on a `const B` writes the picture
/// of `trace` to `os` (a static function, or a const member when the backend has settings).
template <class B>
concept has_render_function = requires(const B& b, const Trace& trace, const RenderOptions& options,
                                       std::ostream& os) {
  b.render(trace, options, os);
};

/// Part of `render_backend`: `B::extension` is a static string such as `".dot"`.
template <class B>
concept has_file_extension = requires {
  { B::extension } -> std::convertible_to<std::string_view>;
};

/// A way to show a `Trace`: Graphviz DOT, SVG, JSON, or a user's own format.
///
/// **Requirements**
/// - `b.render(const Trace&, const RenderOptions&, std::ostream&)` on a `const B& b`, a static
///   or const member function that writes one complete document to the stream
///   (`has_render_function`);
/// - `B::extension`, a static `std::string_view`-convertible file extension with its leading
///   dot, used by `render_to_file` when the path has none (`has_file_extension`).
///
/// **Optional hooks** — `b.render_to(const Trace&, const RenderOptions&, std::string&)`
/// appends the document to a string (`has_string_render`); `render_to_string` and
/// `render_to_file` then skip the stream copy. A backend needs no registration. It is a value:
/// `render<B>(...)` renders with `B{}`, `render(..., backend)` with the settings `backend`
/// carries (`backend::Svg{.timeout = 30s}`); a backend without settings has static functions.
///
/// **Laws** (checked for every shipped model by the laws kit in `tests/render/backend_laws.hpp`)
/// - deterministic: the same trace and options give the same bytes, and two equal traces
///   built separately give the same bytes (no addresses, no clock, no locale);
/// - total: a partial trace (`!trace.complete()`, failed calls without outputs) renders too;
/// - `render` writes only to the stream; on failure it throws and `render_to_file` leaves the
///   target untouched;
/// - `extension` is non-empty and starts with `.`.
///
/// **Models shipped** — `backend::Dot` (`.dot`, Graphviz source; `backend::BasicDot<Styler>`
/// with a `dot_styler` of your own), `backend::Svg` (`.svg`) and `backend::Png` (`.png`)
/// through the `dot` program (with `timeout`, `fallback` and `report` settings), `backend::Mermaid` (`.mmd`, a Mermaid flowchart),
/// `backend::Json` (`.json`, the whole recorded graph) and `backend::JsonView` (`.view.json`,
/// the visible graph for the options).
///
/// **Example**
/// ```cpp
/// struct NodeCount {
///   static constexpr std::string_view extension = ".txt";
///   static void render(const recorder::Trace& t, const recorder::RenderOptions& o,
///                      std::ostream& os) {
///     os << recorder::visible_graph(t.graph, o).nodes.size() << " nodes\n";
///   }
/// };
/// static_assert(recorder::check_render_backend<NodeCount>());
/// recorder::render<NodeCount>(trace, {.depth = 1});   // prints "13 nodes" for ResNet-18
/// ```
template <class B>
concept render_backend = has_render_function<B> && has_file_extension<B>;

/// `true`, with a `static_assert` per missing part of `render_backend<B>` otherwise, saying what
/// to add. `render`, `render_to_string` and `render_to_file` call it on their backend:
/// `static_assert(recorder::check_render_backend<MyBackend>());`
template <class B>
consteval bool check_render_backend() {
  static_assert(has_render_function<B>,
                "recorder: a render backend needs a `render(const recorder::Trace&, const "
                "recorder::RenderOptions&, std::ostream&)` callable on a const backend (a static "
                "function, or a const member function when it has settings)");
  static_assert(has_file_extension<B>,
                "recorder: a render backend needs `static constexpr std::string_view extension = "
                "\".ext\";` (the file extension render_to_file adds, with its leading dot)");
  return render_backend<B>;
}

/// The optional hook of `render_backend`: `b.render_to(trace, options, out)` appends the
/// document to a `std::string`.
template <class B>
concept has_string_render = requires(const B& b, const Trace& trace, const RenderOptions& options,
                                     std::string& out) {
  b.render_to(trace, options, out);
};

}  // namespace recorder
