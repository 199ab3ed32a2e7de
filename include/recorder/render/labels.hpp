#pragma once
/// The render layer's shared vocabulary (no libtorch): what a drawn node says (title lines,
/// tensor roles), shape lists, and the house colours of each node kind.

#include <recorder/detail/id_map.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/graph/graph.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

namespace detail {

/// The house colours of one node kind, as the DOT backend names them (X11) and as CSS does.
struct KindColors {
  std::string_view x11;  ///< "darkseagreen1"
  std::string_view hex;  ///< "#c1ffc1", the same colour
};

/// The house look, indexed by `NodeKind`: tensors light yellow, constants and parameters grey,
/// functions blue, modules green.
inline constexpr std::array<KindColors, node_kind_count> house_palette = {{
    {"lightyellow", "#ffffe0"},    // input
    {"lightyellow", "#ffffe0"},    // output
    {"lightyellow", "#ffffe0"},    // tensor
    {"gray90", "#e5e5e5"},         // constant
    {"gray90", "#e5e5e5"},         // parameter
    {"aliceblue", "#f0f8ff"},      // function
    {"darkseagreen1", "#c1ffc1"},  // module
}};

/// The house colours of node kind `k`.
constexpr const KindColors& house_colors(NodeKind k) noexcept {
  return house_palette[static_cast<std::size_t>(k)];
}

/// What a picture calls a tensor of kind `k`: `input-tensor`, `hidden-tensor` (an intermediate
/// one), `constant-tensor`, ...; empty for the op kinds. In `NodeKind`'s order.
inline constexpr std::string_view tensor_roles[node_kind_count] = {"input-tensor",
                                                                   "output-tensor",
                                                                   "hidden-tensor",
                                                                   "constant-tensor",
                                                                   "parameter-tensor",
                                                                   "",
                                                                   ""};
constexpr std::string_view tensor_role(NodeKind k) noexcept {
  return tensor_roles[static_cast<std::size_t>(k)];
}

/// The name a picture gives each module, indexed by `ModuleId`: its registered name
/// (`ln1`) where no other module's path ends in it, else the shortest ending of its path that
/// is its alone (`blocks.0.ln1`, `layer1.0.conv1`); an ending that would start with a list
/// index takes one more part (`blocks.0`, not `0`). The root keeps its name (its class).
/// torchview draws no names; where names are unambiguous this is the registered name as
/// before, and a repeated one no longer reads the same in every block.
using ModuleLabels = std::vector<std::string_view>;  // views into the graph's module records

inline ModuleLabels module_labels(const Graph& g) {
  const std::vector<ModuleInfo>& modules = g.modules();
  // Endings grow one part at a time, and only for the modules whose ending is still shared:
  // an ending gets an id (its last part's, then (shorter ending's id, part) -> a new id), and
  // `uses` counts the modules whose current ending it is. Two records of one path stay shared
  // to the whole path.
  struct Open {
    std::uint32_t module;
    std::uint32_t ending;  // the id of its current ending
    std::size_t start;     // where that ending starts in its path
  };
  StringIds parts;
  IdMap longer;
  std::vector<std::uint32_t> uses;
  std::vector<Open> open;
  std::vector<std::size_t> starts(modules.size(), 0);
  // The part of `p` that ends just before `end` (a dot, or the path's end), and where it starts.
  const auto part_before = [](std::string_view p, std::size_t end) {
    const std::size_t dot = end == 0 ? std::string_view::npos : p.rfind('.', end - 1);
    const std::size_t start = dot == std::string_view::npos ? 0 : dot + 1;
    return std::pair{p.substr(start, end - start), start};
  };
  for (std::uint32_t m = 0; m < modules.size(); ++m) {
    const std::string_view p = modules[m].path;
    if (p.empty()) continue;
    const auto [part, start] = part_before(p, p.size());
    const std::uint32_t id = parts.id(part).first;
    open.push_back(Open{m, id, start});
    starts[m] = start;
  }
  uses.assign(parts.size(), 0);
  while (!open.empty()) {
    for (const Open& o : open) ++uses[o.ending];
    std::vector<Open> next;
    for (const Open& o : open) {
      if (uses[o.ending] == 1 || o.start == 0) continue;  // its own, or the whole path
      const std::string_view p = modules[o.module].path;
      const auto [part, start] = part_before(p, o.start - 1);
      const std::uint64_t key = IdMap::pair_key(o.ending, parts.id(part).first);
      const auto [id, fresh] = longer.try_emplace(key, uses.size());
      if (fresh) uses.push_back(0);
      next.push_back(Open{o.module, static_cast<std::uint32_t>(*id), start});
      starts[o.module] = start;
    }
    // `next` ids are all new (each key extends an id of this round), so counts start at 0.
    open = std::move(next);
  }
  const auto is_index = [](std::string_view part) {
    return !part.empty() &&
           std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  ModuleLabels out;
  out.reserve(modules.size());
  for (std::size_t m = 0; m < modules.size(); ++m) {
    const std::string_view p = modules[m].path;
    if (p.empty()) {
      out.emplace_back(modules[m].name);
      continue;
    }
    std::size_t start = starts[m];
    // An ending never starts with a list index: one part more.
    if (start > 0 && is_index(p.substr(start, p.find('.', start) - start)))
      start = part_before(p, start - 1).second;
    out.push_back(p.substr(start));
  }
  return out;
}

/// What a picture says a node is, one unescaped line per item: a module call's class, then its
/// `module_labels` name when it differs, with ` (call 2/3)` for a reused module or ` (4 calls)`
/// for a node `rolled` from several calls; an op's name (`add_` when in place, ` (4 calls)` when
/// rolled); a tensor's role (`input-tensor`, `hidden-tensor`, ...) and name. With
/// `mark_inferred`, a call inferred from parameters (`Graph::Node::inferred`) ends in
/// ` (inferred)` (DOT says so; Mermaid and the JSON view do not). `labels` is
/// `module_labels(g)`.
inline std::vector<std::string> title_lines(const Graph& g, const ModuleLabels& labels, NodeId id,
                                            std::uint32_t rolled = 1, bool mark_inferred = false) {
  const Graph::Node& n = g.node(id);
  const std::string times = rolled > 1 ? " (" + std::to_string(rolled) + " calls)" : "";
  switch (n.kind) {
    case NodeKind::function:
      return {std::string(g.function(id).op) + (n.inplace ? "_" : "") + times};
    case NodeKind::module: {
      const ModuleId mid = g.call(id).module;
      const ModuleInfo& m = g.module(mid);
      const std::string_view name = mid.value < labels.size() ? labels[mid.value] : m.name;
      std::vector<std::string> out{m.class_name};
      std::string suffix = times;
      if (rolled <= 1 && m.calls > 1)
        suffix = " (call " + std::to_string(g.call(id).call_index + 1) + "/" +
                 std::to_string(m.calls) + ")";
      if (mark_inferred && n.inferred) suffix += " (inferred)";
      if (!name.empty() && name != m.class_name)
        out.push_back(std::string(name) + suffix);
      else
        out.back() += suffix;
      return out;
    }
    default: {
      std::vector<std::string> out{std::string(tensor_role(n.kind))};
      const std::string_view name = g.tensor(id).name;
      if (!name.empty()) out.emplace_back(name);
      return out;
    }
  }
}

/// What a drawn node says after its `title_lines`: `depth:N`, then `failed` for a module call
/// that did not complete.
inline std::vector<std::string> status_lines(const Graph& g, NodeId id) {
  const Graph::Node& n = g.node(id);
  std::vector<std::string> out{"depth:" + std::to_string(n.depth)};
  if (n.failed) out.emplace_back("failed");
  return out;
}

/// How a shape is written: as Python prints a tuple (`(1, 128)`, `(5,)`, `()`: torchview) or
/// as a list (`[1, 128]`: torchinfo, `to_string(Shape)`).
enum class ShapeStyle : std::uint8_t { tuple, list };

/// Appends `shape` in `style`.
inline void append_shape(std::string& out, Shape shape, ShapeStyle style = ShapeStyle::tuple) {
  if (style == ShapeStyle::list) {
    out += to_string(shape);
    return;
  }
  out += '(';
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    if (const std::string_view name = shape.name(i); !name.empty())
      out += name;
    else
      append_int(out, shape[i]);
  }
  if (shape.size() == 1) out += ',';
  out += ')';
}

/// A shape as Python prints a tuple: `(1, 128)`, `(5,)`, `()`.
inline std::string shape_repr(Shape shape) {
  std::string out;
  append_shape(out, shape);
  return out;
}

/// Appends the shapes of `tensors` in `style`, equal ones merged in order of first appearance
/// as torchview does: `2 x (1, 64), (1, 32)`; `-` when there are none.
inline void append_shapes(std::string& out, const Graph& g, NodeList tensors,
                          ShapeStyle style = ShapeStyle::tuple) {
  if (tensors.empty()) {
    out += '-';
    return;
  }
  // Groups in order of first appearance; models have a handful of tensors per op.
  std::vector<std::pair<Shape, std::size_t>> groups;
  groups.reserve(tensors.size());
  for (NodeId t : tensors) {
    const Shape shape = g.shape(t);
    const auto same = [&](const auto& group) { return same_shape(group.first, shape); };
    if (const auto it = std::find_if(groups.begin(), groups.end(), same); it != groups.end())
      ++it->second;
    else
      groups.emplace_back(shape, 1);
  }
  bool first = true;
  for (const auto& [shape, count] : groups) {
    if (!first) out += ", ";
    first = false;
    if (count > 1) {
      append_int(out, count);
      out += " x ";
    }
    append_shape(out, shape, style);
  }
}

/// The shapes of `tensors` as `append_shapes` writes them.
inline std::string shapes_repr(const Graph& g, NodeList tensors,
                               ShapeStyle style = ShapeStyle::tuple) {
  std::string out;
  append_shapes(out, g, tensors, style);
  return out;
}

}  // namespace detail
}  // namespace recorder
