#pragma once
/// Display options shared by every render backend (torchview's names and defaults).

#include <optional>
#include <string>

namespace recorder {

/// Which way the graph flows, as Graphviz's `rankdir` (torchview's `graph_dir`).
enum class Direction { TB, LR, BT, RL };

/// How a trace is shown. A plain aggregate: `render<backend::Dot>(trace, {.depth = 2})`.
///
/// Recording is done once; these options only change the picture. Backends that dump the whole
/// recorded graph (JSON) ignore them.
struct RenderOptions {
  /// Module calls deeper than this are folded into their ancestor at this depth; the root call
  /// is depth 0, its direct children depth 1. `std::nullopt` expands everything.
  std::optional<int> depth = 3;
  /// Contract intermediate tensors (and hide constants and parameters): edges run op to op.
  bool hide_inner_tensors = true;
  /// Print input and output shapes in node labels.
  bool show_shapes = true;
  /// Layout direction (torchview's `graph_dir`).
  Direction direction = Direction::TB;
  /// The graph's name; empty means the trace's `model_name`.
  // `{}`: without a default member initializer, g++ 12's -Wextra warns on `{.depth = 2}`
  // (-Wmissing-field-initializers fires for omitted members in designated initializers).
  std::string graph_name{};
  /// Draw composite module calls above `depth` as dashed clusters around their contents.
  bool expand_nested = false;
  /// Functions recorded inside a leaf module call stay hidden: the leaf is one node. Off: a
  /// leaf call above `depth` that contains recorded functions is drawn through like a
  /// composite call.
  bool hide_module_functions = true;
  /// Draw repeated calls of the same module (one with parameters) and of the same stateless op
  /// feeding the same nodes once; repeated edges are labelled ` x2`, ` x3`, ...
  bool roll = false;
  /// Merge parallel edges into one (Graphviz's `strict digraph`).
  bool strict = true;
  /// Module nodes show their parameter count.
  bool show_params = false;
  /// Ops that no model input reaches are not drawn, nor what they make: they read only
  /// parameters, buffers, constants or nothing (`torch.arange` for positions, a mask sliced
  /// from a buffer, a relative position bias). torchview traces from the inputs and never sees
  /// them. Off: everything recorded is drawn, with the buffers and parameters such an op reads
  /// as its inputs (a constant- or parameter-tensor node, even when `hide_inner_tensors`).
  bool hide_unreached = true;
};

/// Graphviz's spelling of a direction: "TB", "LR", "BT" or "RL".
constexpr const char* to_string(Direction d) noexcept {
  switch (d) {
    case Direction::TB:
      return "TB";
    case Direction::LR:
      return "LR";
    case Direction::BT:
      return "BT";
    case Direction::RL:
      return "RL";
  }
  return "TB";
}

}  // namespace recorder
