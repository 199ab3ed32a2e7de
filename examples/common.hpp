#pragma once
/// Shared output helpers of the examples: counts by node kind, shapes, a plain-vs-traced check.

#include <recorder/recorder.hpp>

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <string_view>

namespace examples {

/// Prints the number of nodes of each kind, and the edges.
inline void print_counts(const recorder::Trace& trace) {
  using recorder::NodeKind;
  std::cout << "nodes: " << trace.graph.size() << " (";
  const char* sep = "";
  for (NodeKind k : {NodeKind::input, NodeKind::output, NodeKind::tensor, NodeKind::constant,
                     NodeKind::parameter, NodeKind::function, NodeKind::module}) {
    std::cout << sep << recorder::to_string(k) << " " << recorder::views::count(trace.graph, k);
    sep = ", ";
  }
  std::cout << ")\nedges: " << trace.graph.edge_count() << " (";
  std::map<std::string, int> by_kind;  // "tensor -> module": how many edges go that way
  for (const auto& e : trace.graph.edges())
    ++by_kind[std::string(recorder::to_string(trace.graph.kind(e.from))) + " -> " +
              std::string(recorder::to_string(trace.graph.kind(e.to)))];
  sep = "";
  for (const auto& [kinds, n] : by_kind) {
    std::cout << sep << kinds << " " << n;
    sep = ", ";
  }
  std::cout << ")\n";
  std::cout << "parameters: " << trace.total_params << " (trainable " << trace.trainable_params
            << ")\n";
}

/// Exits with an error when the traced forward did not compute what the plain one did.
inline void require_equal(const at::Tensor& plain, const at::Tensor& traced,
                          std::string_view what) {
  if (!plain.equal(traced)) {
    std::cerr << what << ": traced output differs from the plain forward\n";
    std::exit(1);
  }
  std::cout << what << ": plain and traced outputs are equal, shape " << traced.sizes() << "\n";
}

}  // namespace examples
