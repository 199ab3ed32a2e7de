#pragma once
/// Facts about recorded nodes that a picture shows on hover (`backend::Html::facts`): data only,
/// made by `facts_of` (capture/facts.hpp) from a recording or a timing.

#include <recorder/graph/ids.hpp>

#include <string>
#include <utility>
#include <vector>

namespace recorder {

/// Extra facts the viewer shows when a node is hovered, per recorded node: display pairs such
/// as `{"time", "1.25 ms"}` or `{"mean", "0.031"}`, in order.
struct NodeFacts {
  NodeId node;
  std::vector<std::pair<std::string, std::string>> facts{};
};

}  // namespace recorder
