// One translation unit of a user's model, for scripts/compile_cost.sh: the model (-DMODEL_VIT: a
// small vision transformer, else ResNet-18) compiled with its forward called on plain tensors
// (-DMODE=0), traced with record::Structure (MODE=1), or traced with Structure and an
// activation recording (MODE=2). Each program also runs, so the measurement cannot be of code
// that does not work.
#ifdef MODEL_VIT
#include "vit.hpp"
#else
#include <models/resnet.hpp>
#endif

#include <iostream>
#include <string>

#ifndef MODE
#define MODE 1
#endif

int main() {
#ifdef MODEL_VIT
  compile_cost::VisionTransformer model;
  const torch::Tensor x = torch::randn({2, 3, 32, 32});
  const std::string last = "head";
#else
  models::ResNet model = models::ResNet18();
  const torch::Tensor x = torch::randn({1, 3, 64, 64});
  const std::string last = "fc";
#endif
  model->eval();
#if MODE == 0
  const torch::Tensor y = model->forward(x);
  std::cout << y.sizes() << "\n";
#elif MODE == 1
  const auto traced = recorder::Tracer<recorder::record::Structure>{}.run(model, x);
  std::cout << traced.output.sizes() << " " << traced.graph.size() << " nodes\n";
#else
  namespace rr = recorder::record;
  rr::ForwardOutput<recorder::reduce::Mean> outputs({last});
  recorder::Tracer<rr::Structure, rr::ForwardOutput<recorder::reduce::Mean>> tracer(
      {.no_grad = true}, rr::Structure{}, outputs);
  const auto traced = tracer.run(model, x);
  std::cout << traced.output.sizes() << " " << traced.graph.size() << " nodes, " << last << " "
            << outputs[last].result().sizes() << "\n";
#endif
}
