#include <models/mlp.hpp>  // 784-100-50-10 with ReLU, forward templated on its tensor type

#include <recorder/capture/save.hpp>  // recorder::save: files for Python's torch.load
#include <recorder/recorder.hpp>

#include <iostream>

namespace rr = recorder::record;
namespace rd = recorder::reduce;

int main() {
  torch::manual_seed(0);
  models::MLP mlp;

  // torchfunc's scenario: the inputs of the 2nd and 3rd Linear, summed over 1,000 forwards,
  // and running moments of the logits, in one tracer.
  rr::ForwardInput<rd::Sum> inputs({"fc2", "fc3"});
  rr::ForwardOutput<rd::Moments> logits({"fc3"});
  recorder::Tracer<rr::ForwardInput<rd::Sum>, rr::ForwardOutput<rd::Moments>> tracer(
      {.no_grad = true}, inputs, logits);
  for (int i = 0; i < 1000; ++i) tracer.run(mlp, torch::randn({1, 784}));

  for (const auto& layer : inputs.records())
    std::cout << layer->key << " (" << layer->class_name << ", " << layer->label << "): input sum "
              << layer->result().sizes() << " over " << layer->samples() << " forwards\n";
  const auto m = logits["fc3"].result();
  std::cout << "fc3 output: mean " << m.mean.sizes() << ", variance " << m.variance.sizes() << " ("
            << m.mean.dtype() << ") over " << m.count << " forwards\n";

  // For Python: torch.load("mlp_inputs.pt") is {"fc2": tensor, "fc3": tensor}.
  recorder::save(inputs, "mlp_inputs.pt");
  const auto back = recorder::load_recording("mlp_inputs.pt");
  std::cout << "saved " << back.size() << " layers; fc2 read back equal: " << std::boolalpha
            << torch::equal(back.at("fc2").toTensor(), inputs["fc2"].result()) << "\n";
}
