/// A custom render backend: a plain-text adjacency list, plugged in through `render_backend`.

#include <recorder/recorder.hpp>

#include <cstdint>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

/// One line per drawn node: the node, then its successors in the picture.
/// `n1 Linear fc1 -> n2 relu`
struct AdjacencyList {
  static constexpr std::string_view extension = ".txt";

  static void render(const recorder::Trace& trace, const recorder::RenderOptions& options,
                     std::ostream& os) {
    const recorder::Graph& g = trace.graph;
    const recorder::VisibleGraph vg = recorder::visible_graph(g, options);
    std::vector<std::vector<std::uint32_t>> next(vg.nodes.size());
    for (const recorder::VisibleEdge& e : vg.edges) next[e.from].push_back(e.to);
    const auto name = [&](std::uint32_t i) {
      std::string out = "n";  // built by appending: g++ 12 -O3 warns on `"n" + s` (-Wrestrict)
      out += std::to_string(i);
      out += ' ';
      out += describe(g, vg.nodes[i].node);
      return out;
    };
    for (std::uint32_t i = 0; i < vg.nodes.size(); ++i) {
      os << name(i);
      const char* sep = " -> ";
      for (std::uint32_t to : next[i]) {
        os << sep << name(to);
        sep = ", ";
      }
      os << '\n';
    }
  }

  /// `Linear fc1` (a module's class and name), `relu` (an op), `input` (a tensor's kind).
  static std::string describe(const recorder::Graph& g, recorder::NodeId id) {
    switch (g.kind(id)) {
      case recorder::NodeKind::module: {
        const recorder::ModuleInfo& m = g.module_of(id);
        std::string out = m.class_name;
        if (!m.name.empty() && m.name != m.class_name) {
          out += ' ';
          out += m.name;
        }
        return out;
      }
      case recorder::NodeKind::function:
        return std::string(g.function(id).op);
      default:
        return std::string(recorder::to_string(g.kind(id)));
    }
  }
};

static_assert(recorder::render_backend<AdjacencyList>);

/// A tiny model: two Linear layers with a ReLU between them and a residual sum.
struct TinyImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc1{register_module("fc1", torch::nn::Linear(4, 4))};
  recorder::Module<torch::nn::Linear> fc2{register_module("fc2", torch::nn::Linear(4, 2))};

  template <recorder::tensor_like T>
  T forward(T x) {
    return fc2(relu(fc1(x)) + x);
  }
};
TORCH_MODULE(Tiny);

int main() try {
  torch::manual_seed(0);
  Tiny model;
  const auto trace =
      recorder::Tracer<recorder::record::Structure>{}.run(model, torch::randn({1, 4}));
  std::cout << "depth 1:\n";
  recorder::render<AdjacencyList>(trace, {.depth = 1}, std::cout);
  std::cout << "depth 1, every tensor:\n";
  recorder::render<AdjacencyList>(trace, {.depth = 1, .hide_inner_tensors = false}, std::cout);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "adjacency_list: " << e.what() << "\n";
  return 1;
}
