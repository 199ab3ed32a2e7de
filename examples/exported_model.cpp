// A torch.export archive, read without running it (no inputs, no weights loaded), then run.
//   python3 -c "import torch, torchvision; m = torchvision.models.resnet18().eval();
//     torch.export.save(torch.export.export(m, (torch.randn(1, 3, 224, 224),)), 'resnet18.pt2')"
//   ./exported_model resnet18.pt2
#include <recorder/exported.hpp>
#include <recorder/recorder.hpp>

#include <iostream>

namespace rr = recorder::record;
namespace rd = recorder::reduce;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: exported_model <model.pt2>\n";
    return 2;
  }
  // The program, its signature and its tensors' shapes: the weights stay in the archive.
  const recorder::ExportedProgram program = recorder::load_exported(argv[1]);
  const recorder::Trace t = recorder::static_trace(program);
  std::cout << t.model_name << ": " << t.graph.size() << " nodes, " << t.total_params
            << " parameters, " << recorder::summarize(t).total_mult_adds << " mult-adds\n";
  for (auto call : recorder::resolve(t.graph, recorder::by_class("BasicBlock")))
    std::cout << recorder::depth_index_label(t.graph, call) << " " << t.graph.module_of(call).path
              << "\n";
  recorder::render_to_file<recorder::backend::Dot>(t, {.depth = 2}, "resnet18_exported.dot");
  std::cout << recorder::summary(t, {.depth = 1});

  // Run it, node by node through libtorch's dispatcher with the archive's weights: every
  // recording policy works. layer4's mean output over 3 batches:
  rr::ForwardOutput<rd::Mean> layer4({"layer4"});
  recorder::Tracer<rr::ForwardOutput<rd::Mean>> tracer({.no_grad = true}, layer4);
  for (int i = 0; i < 3; ++i) tracer.run(program, torch::randn({1, 3, 224, 224}));
  std::cout << "layer4 mean output " << layer4["layer4"].result().sizes() << " over "
            << layer4["layer4"].samples() << " batches\n";
}
