#pragma once
/// Test helpers: recorded and visible graphs as lists of short strings, for exact comparisons.

#include <recorder/recorder.hpp>
#include <recorder/render/visible.hpp>

#include <string>
#include <utility>
#include <vector>

namespace test {

inline std::string shape_str(const recorder::Graph& g, recorder::NodeId id) {
  return recorder::to_string(g.shape(id));
}

/// "kind label [path] [shape]" for every recorded node, e.g. "module Linear fc1".
inline std::vector<std::string> describe_nodes(const recorder::Graph& g) {
  std::vector<std::string> out;
  for (auto id : recorder::views::nodes(g)) {
    std::string s(recorder::to_string(g.kind(id)));
    s += ' ';
    s += g.label(id);
    if (g.kind(id) == recorder::NodeKind::module) s.append(" ").append(g.module_of(id).path);
    if (recorder::is_tensor_kind(g.kind(id))) s.append(" ").append(shape_str(g, id));
    out.push_back(std::move(s));
  }
  return out;
}

/// "from->to" for every recorded edge.
inline std::vector<std::string> describe_edges(const recorder::Graph& g) {
  std::vector<std::string> out;
  for (const auto& e : g.edges())
    out.push_back(std::to_string(e.from.value) + "->" + std::to_string(e.to.value));
  return out;
}

/// "Class path -> output shapes [FAILED]" for every module call but the root.
inline std::vector<std::string> describe_calls(const recorder::Trace& t) {
  std::vector<std::string> out;
  for (auto c : recorder::views::module_calls(t.graph)) {
    if (c == t.root) continue;
    std::string s = t.graph.module_of(c).class_name;
    s.append(" ").append(t.graph.module_of(c).path).append(" ->");
    for (auto o : t.graph.call(c).outputs) s.append(" ").append(shape_str(t.graph, o));
    if (t.graph.node(c).failed) s.append(" FAILED");
    out.push_back(std::move(s));
  }
  return out;
}

/// The label of every visible node ("Linear fc1", "relu", "input") and its edges "i->j".
inline std::pair<std::vector<std::string>, std::vector<std::string>> describe_visible(
    const recorder::Trace& t, const recorder::RenderOptions& o) {
  const auto vg = recorder::visible_graph(t.graph, o);
  std::vector<std::string> nodes, edges;
  for (const auto& n : vg.nodes) {
    std::string s(t.graph.label(n.node));
    if (n.kind == recorder::NodeKind::module) s.append(" ").append(t.graph.module_of(n.node).path);
    nodes.push_back(std::move(s));
  }
  for (const auto& e : vg.edges)
    edges.push_back(std::to_string(e.from) + "->" + std::to_string(e.to));
  return {nodes, edges};
}

}  // namespace test
