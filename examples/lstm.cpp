/// Trace torchinfo's LSTMNet (Embedding -> 2-layer LSTM -> Linear) and list its module calls.

#include "common.hpp"
#include "models/lstm.hpp"

#include <iostream>

int main() try {
  torch::manual_seed(0);
  models::LSTMNet model;
  model->eval();
  const at::Tensor tokens = torch::randint(0, 20, {1, 100}, torch::kLong);

  const auto plain = model->forward(tokens);
  auto trace = recorder::Tracer<recorder::record::Structure>{}.run(model, tokens);
  examples::require_equal(std::get<0>(plain), std::get<0>(trace.output), "logits");
  examples::require_equal(std::get<0>(std::get<1>(plain)), std::get<0>(std::get<1>(trace.output)),
                          "h");
  examples::require_equal(std::get<1>(std::get<1>(plain)), std::get<1>(std::get<1>(trace.output)),
                          "c");
  examples::print_counts(trace);
  for (auto call : recorder::views::module_calls(trace.graph)) {
    const auto& m = trace.graph.module_of(call);
    std::cout << (m.path.empty() ? "<root>" : m.path) << " (" << m.class_name << ") params "
              << m.param_count << " outputs";
    for (auto o : trace.graph.call(call).outputs) {
      std::cout << " [";
      const char* sep = "";
      for (auto d : trace.graph.shape(o)) std::cout << sep << d, sep = ", ";
      std::cout << "]";
    }
    std::cout << "\n";
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "lstm: " << e.what() << "\n";
  return 1;
}
