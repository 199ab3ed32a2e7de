#pragma once
/// The `render_backend` concept: what a type needs to be used with `recorder::render`.

#include <recorder/graph/trace.hpp>
#include <recorder/render/options.hpp>

#include <concepts>
#include <ostream>
#include <string>
#include <string_view>

namespace recorder {

/// Part of `render_backend`: `B::render(trace, options, os)` is a static function that writes
/// the picture of `trace` to `os`.
template <class B>
concept has_render_function =
    requires(const Trace& trace, const RenderOptions& options, std::ostream& os) {
      B::render(trace, options, os);
    };

/// Part of `render_backend`: `B::extension` is a static string such as `".dot"`.
template <class B>
concept has_file_extension = requires {
  { B::extension } -> std::convertible_to<std::string_view>;
};

/// A way to show a `Trace`: Graphviz DOT, SVG, JSON, or a user's own format.
///
/// **Requirements**
/// - `B::render(const Trace&, const RenderOptions&, std::ostream&)`, a static function that
///   writes one complete document to the stream (`has_render_function`);
/// - `B::extension`, a static `std::string_view`-convertible file extension with its leading
///   dot, used by `render_to_file` when the path has none (`has_file_extension`).
///
/// **Optional hooks** — `B::render_to(const Trace&, const RenderOptions&, std::string&)`
/// appends the document to a string (`has_string_render`); `render_to_string` and
/// `render_to_file` then skip the stream copy. A backend needs no state and no registration.
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
/// through the `dot` program, `backend::Mermaid` (`.mmd`, a Mermaid flowchart),
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
/// static_assert(recorder::render_backend<NodeCount>);
/// recorder::render<NodeCount>(trace, {.depth = 1});   // prints "13 nodes" for ResNet-18
/// ```
template <class B>
concept render_backend = has_render_function<B> && has_file_extension<B>;

/// The optional hook of `render_backend`: `B::render_to(trace, options, out)` appends the
/// document to a `std::string`.
template <class B>
concept has_string_render =
    requires(const Trace& trace, const RenderOptions& options, std::string& out) {
      B::render_to(trace, options, out);
    };

}  // namespace recorder
