#include <recorder/recorder.hpp>

#include <iostream>
#include <sstream>

// A model written once, generic over its tensor type.
struct BlockImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc1{register_module("fc1", torch::nn::Linear(64, 64))};
  recorder::Module<torch::nn::LayerNorm> norm{
      register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({64})))};

  template <recorder::tensor_like T>  // torch::Tensor, or a RecorderTensor<...>
  T forward(T x) {
    return norm(relu(fc1(x)) + x);  // unqualified calls: ADL picks the overload
  }
};
TORCH_MODULE(Block);

int main() {
  Block block;
  torch::Tensor y = block->forward(torch::randn({8, 64}));  // plain libtorch, nothing recorded

  recorder::Tracer<recorder::record::Structure> tracer;
  auto trace = tracer.run(block, torch::randn({8, 64}));  // the same forward, on RecorderTensors

  // What a drawing at depth 1 shows: one line per node, with its input and output shapes.
  auto shapes = [&](const std::vector<recorder::NodeId>& ids) {
    std::ostringstream s;
    for (auto id : ids) s << " " << trace.graph.shape(id);  // prints [8, 64]
    return s.str();
  };
  for (const auto& n : recorder::visible_graph(trace.graph, {.depth = 1}).nodes) {
    std::cout << trace.graph.label(n.node);
    if (n.kind == recorder::NodeKind::module)
      std::cout << " " << trace.graph.module_of(n.node).name;
    if (recorder::is_tensor_kind(n.kind))
      std::cout << shapes({n.node}) << "\n";
    else
      std::cout << ":" << shapes(n.inputs) << " ->" << shapes(n.outputs) << "\n";
  }
  std::cout << trace.total_params << " parameters\n";

  recorder::render_to_file<recorder::backend::Svg>(trace, {.depth = 1}, "block.svg");  // Graphviz
  recorder::render_to_file<recorder::backend::Json>(trace, {},
                                                    "block.json");  // everything recorded
}
