// A TorchScript file exported from Python, traced as it is:
//   python3 -c "import torch, torchvision; torch.jit.script(torchvision.models.resnet18()).save('resnet18.pt')"
//   ./script_model resnet18.pt
#include <recorder/script.hpp>

#include <iostream>

namespace rr = recorder::record;
namespace rd = recorder::reduce;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: script_model <model.pt>\n";
    return 2;
  }
  torch::jit::Module model = recorder::load_model(argv[1]);  // torch::jit::load, with clear errors

  // The graph, as the templated front end gives it: full paths, classes, labels, shapes.
  const auto t =
      recorder::Tracer<rr::Structure>{{.no_grad = true}}.run(model, torch::randn({1, 3, 224, 224}));
  std::cout << t.model_name << ": " << t.graph.size() << " nodes, " << t.total_params
            << " parameters, " << recorder::summarize(t).total_mult_adds << " mult-adds\n";
  for (auto call : recorder::resolve(t.graph, recorder::by_class("BasicBlock")))
    std::cout << recorder::depth_index_label(t.graph, call) << " " << t.graph.module_of(call).path
              << "\n";
  recorder::render_to_file<recorder::backend::Dot>(t, {.depth = 2}, "resnet18.dot");

  // Recording policies work the same: layer4's mean output over 10 batches.
  rr::ForwardOutput<rd::Mean> layer4({"layer4"});
  recorder::Tracer<rr::ForwardOutput<rd::Mean>> tracer({.no_grad = true}, layer4);
  for (int i = 0; i < 10; ++i) tracer.run(model, torch::randn({2, 3, 224, 224}));
  std::cout << "layer4 mean output " << layer4["layer4"].result().sizes() << " over "
            << layer4["layer4"].samples() << " batches\n";
}
