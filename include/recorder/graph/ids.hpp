#pragma once
/// Strong ids and node kinds of the recorded graph (no libtorch).

#include <compare>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string_view>

namespace recorder {

/// An index into one table, a type of its own per `Tag`; default-constructed ids are invalid.
template <class Tag>
struct StrongIndex {
  static constexpr std::uint32_t invalid = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t value = invalid;

  constexpr bool valid() const noexcept { return value != invalid; }
  friend constexpr auto operator<=>(StrongIndex, StrongIndex) = default;
};

/// Index of a node in a `Graph`.
using NodeId = StrongIndex<struct NodeTag>;

/// Prints `#<index>`, or `#invalid`.
inline std::ostream& operator<<(std::ostream& os, NodeId id) {
  if (!id.valid()) return os << "#invalid";
  return os << '#' << id.value;
}

/// Index of a distinct module object (shared by every call of that module).
using ModuleId = StrongIndex<struct ModuleTag>;

/// What a node stands for, with torchview's vocabulary.
enum class NodeKind : std::uint8_t {
  input,      ///< a tensor given to the traced model
  output,     ///< a tensor returned by the traced model
  tensor,     ///< an intermediate tensor produced inside the forward
  constant,   ///< a plain tensor (not a parameter) used as an operand
  parameter,  ///< a plain tensor that requires grad, used as an operand
  function,   ///< a traced tensor op (`relu`, `matmul`, `add`, ...)
  module,     ///< one call of a module
};

inline constexpr int node_kind_count = 7;

/// The lower-case name of a kind: "input", "output", "tensor", ...
constexpr std::string_view to_string(NodeKind k) noexcept {
  switch (k) {
    case NodeKind::input:
      return "input";
    case NodeKind::output:
      return "output";
    case NodeKind::tensor:
      return "tensor";
    case NodeKind::constant:
      return "constant";
    case NodeKind::parameter:
      return "parameter";
    case NodeKind::function:
      return "function";
    case NodeKind::module:
      return "module";
  }
  return "unknown";
}

inline std::ostream& operator<<(std::ostream& os, NodeKind k) { return os << to_string(k); }

/// True for the kinds that stand for a tensor value.
constexpr bool is_tensor_kind(NodeKind k) noexcept {
  return k == NodeKind::input || k == NodeKind::output || k == NodeKind::tensor ||
         k == NodeKind::constant || k == NodeKind::parameter;
}

}  // namespace recorder
