#include <recorder/recorder.hpp>

#include <iostream>

// A render backend: any type with a static `render` and an `extension`.
struct EdgeList {
  static constexpr std::string_view extension = ".txt";
  static void render(const recorder::Trace& trace, const recorder::RenderOptions& options,
                     std::ostream& os) {
    const auto picture = recorder::visible_graph(trace.graph, options);
    for (const auto& e : picture.edges)
      os << trace.graph.label(picture.nodes[e.from].node) << " -> "
         << trace.graph.label(picture.nodes[e.to].node) << "\n";
  }
};
static_assert(recorder::render_backend<EdgeList>);

// A recording policy: a tag and what it records (later policies add hooks).
struct GraphOnly {
  using recording_policy_tag = void;
  static constexpr bool records_graph = true;
};
static_assert(recorder::recording_policy<GraphOnly>);

// An op the table does not cover, recorded as one function node.
struct ScaledImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc{register_module("fc", torch::nn::Linear(4, 4))};
  template <recorder::tensor_like T>
  T forward(T x) {
    T y = fc(x);
    return recorder::op("erf", [](const torch::Tensor& t) { return torch::erf(t); }, y);
  }
};
TORCH_MODULE(Scaled);

int main() {
  Scaled model;
  auto trace = recorder::Tracer<GraphOnly>{}.run(model, torch::randn({2, 4}));
  recorder::render<EdgeList>(trace, {.depth = 1}, std::cout);
}
