/// Trace a 2-layer Transformer encoder (d_model 64, 4 heads) and print its JSON trace summary
/// and its DOT graph at depth 2.

#include "common.hpp"
#include "models/transformer.hpp"

#include <iostream>

int main() try {
  torch::manual_seed(0);
  models::TransformerEncoderModel model;
  model->eval();  // dropout off: plain and traced runs compute the same numbers
  const at::Tensor tokens = torch::randint(0, 100, {10, 2}, torch::kLong);

  const at::Tensor plain = model->forward(tokens);
  auto trace = recorder::Tracer<recorder::record::Structure>{}.run(model, tokens);
  examples::require_equal(plain, trace.output, "Transformer encoder");
  examples::print_counts(trace);
  recorder::render<recorder::backend::Dot>(trace, {.depth = 2}, std::cout);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "transformer: " << e.what() << "\n";
  return 1;
}
