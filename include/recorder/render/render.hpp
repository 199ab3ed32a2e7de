#pragma once
/// Entry points of the render layer: `render`, `render_to_string`, `render_to_file`.

#include <recorder/detail/atomic_file.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/concepts.hpp>
#include <recorder/render/options.hpp>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace recorder {

namespace detail {

/// Throws when `os` is in a failed state after a backend wrote to it.
inline void check_stream(const std::ostream& os) {
  if (!os) throw std::runtime_error("recorder: writing the rendered graph to the stream failed");
}

/// `path`, with `extension` appended when it has none.
inline std::filesystem::path with_extension(const std::filesystem::path& path,
                                            std::string_view extension) {
  if (path.has_extension() || path.filename().empty()) return path;
  std::filesystem::path out = path;
  out += std::string(extension);
  return out;
}

}  // namespace detail

// The entry points take any `B` and check it with `check_render_backend<B>()`, so a type that
// is not a backend gets the part it lacks named, not a constraint dump.

/// Writes the picture of `trace` made by `backend` to `os`.
///
/// Example: `recorder::render(trace, {.depth = 2}, std::cout, recorder::backend::Svg{.timeout = 30s});`
template <class B>
void render(const Trace& trace, const RenderOptions& options, std::ostream& os, const B& backend) {
  static_assert(check_render_backend<B>());
  backend.render(trace, options, os);
  detail::check_stream(os);
}

/// Writes the picture of `trace` made by backend `B{}` to `os` (standard output by default).
///
/// Example: `recorder::render<recorder::backend::Dot>(trace, {.depth = 2});`
template <class B>
void render(const Trace& trace, const RenderOptions& options = {}, std::ostream& os = std::cout) {
  static_assert(check_render_backend<B>());
  render(trace, options, os, B{});
}

/// The picture of `trace` made by `backend` (`B{}` unless given), as a string.
///
/// Example: `std::string json = recorder::render_to_string<recorder::backend::Json>(trace);`
template <class B>
std::string render_to_string(const Trace& trace, const RenderOptions& options = {},
                             const B& backend = B{}) {
  static_assert(check_render_backend<B>());
  if constexpr (has_string_render<B>) {
    std::string out;
    backend.render_to(trace, options, out);
    return out;
  } else {
    std::ostringstream os;
    backend.render(trace, options, os);
    return std::move(os).str();
  }
}

/// Writes `text` to `path` as every recorder writer writes (`render_to_file`, `save`): the
/// whole file or nothing (a temporary file renamed over `path`, which an error leaves as it
/// was), never creating a missing parent folder, a `FileError` naming `path` and the reason
/// otherwise; `extension` is appended when `path` has none. For text rendered elsewhere (a
/// Chrome trace merged across ranks, a summary table). Returns the path written.
inline std::filesystem::path write_to_file(const std::filesystem::path& path, std::string_view text,
                                           std::string_view extension = {}) {
  const std::filesystem::path target = detail::with_extension(path, extension);
  detail::write_file_atomically(target, text);
  return target;
}

/// Writes the picture of `trace` made by `backend` (`B{}` unless given) to `path` and returns
/// the path written.
///
/// A path without extension gets `B::extension` (`"resnet"` becomes `"resnet.dot"`). The whole
/// picture is made first and then written atomically (temporary file and rename): when the
/// backend fails, its exception leaves; when the write fails, a `recorder::FileError` naming the
/// path and the reason is thrown (a missing folder before anything is rendered); an existing
/// file stays untouched and no temporary file is left behind.
///
/// Example: `recorder::render_to_file<recorder::backend::Svg>(trace, {.depth = 1}, "out/net");`
template <class B>
std::filesystem::path render_to_file(const Trace& trace, const RenderOptions& options,
                                     const std::filesystem::path& path, const B& backend = B{}) {
  static_assert(check_render_backend<B>());
  const std::filesystem::path target = detail::with_extension(path, B::extension);
  detail::check_parent_folder(target);
  return write_to_file(target, render_to_string(trace, options, backend));
}

}  // namespace recorder
