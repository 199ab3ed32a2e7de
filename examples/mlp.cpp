/// Trace the 784-100-50-10 MLP and print its graph as DOT at depth 1.

#include "common.hpp"
#include "models/mlp.hpp"

#include <iostream>

int main() try {
  torch::manual_seed(0);
  models::MLP model;
  const at::Tensor x = torch::randn({1, 784});

  const at::Tensor plain = model->forward(x);
  auto trace = recorder::Tracer<recorder::record::Structure>{}.run(model, x);
  examples::require_equal(plain, trace.output, "MLP");
  examples::print_counts(trace);
  recorder::render<recorder::backend::Dot>(trace, {.depth = 1}, std::cout);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "mlp: " << e.what() << "\n";
  return 1;
}
