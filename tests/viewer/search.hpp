#pragma once
/// What the viewer's search finds, computed from the graph: the expectation both the browser
/// pages (pages_test.cpp) and the pure model's cases (model_cases_test.cpp) are checked against.

#include <recorder/graph/graph.hpp>

#include <cctype>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace viewer_search {

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// What the viewer's search for `text` (trimmed, case-insensitive) finds: module paths (path,
/// name or class matches) and `path:op` of functions whose op matches, sorted, each once.
inline std::vector<std::string> search(const recorder::Graph& g, const std::string& text) {
  using recorder::NodeId;
  using recorder::NodeKind;
  std::string t = lower(text);
  t.erase(0, t.find_first_not_of(" \t\n\r"));
  t.erase(t.find_last_not_of(" \t\n\r") + 1);
  std::set<std::string> found;
  if (t.empty()) return {};
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    if (g.kind(id) == NodeKind::module) {
      const auto& m = g.module_of(id);
      if (lower(m.path).find(t) != std::string::npos ||
          lower(m.name).find(t) != std::string::npos ||
          lower(m.class_name).find(t) != std::string::npos)
        found.insert(m.path);
    } else if (g.kind(id) == NodeKind::function) {
      const std::string op(g.function(id).op);
      if (lower(op).find(t) == std::string::npos) continue;
      const NodeId p = g.node(id).parent;
      found.insert((p.valid() ? g.module_of(p).path : std::string()) + ":" + op);
    }
  }
  return {found.begin(), found.end()};
}

}  // namespace viewer_search
