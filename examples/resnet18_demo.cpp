/// The main demo: trace torchvision's ResNet-18 at 1x3x224x224 and write its graph (DOT, SVG),
/// the full trace (JSON), torchinfo's summary table (text) and the interactive viewer (one
/// HTML file: open it in a browser) into a folder.
///
///   resnet18_demo [outdir]     (default: recorder-out)

#include "common.hpp"
#include "models/resnet.hpp"

#include <recorder/render/html.hpp>

#include <filesystem>
#include <iostream>

int main(int argc, char** argv) try {
  const std::filesystem::path out = argc > 1 ? argv[1] : "recorder-out";
  std::filesystem::create_directories(out);

  torch::manual_seed(0);
  models::ResNet model = models::ResNet18();
  model->eval();
  const at::Tensor x = torch::randn({1, 3, 224, 224});

  torch::NoGradGuard no_grad;
  const at::Tensor plain = model->forward(x);  // plain libtorch: no recording at all
  recorder::Tracer<recorder::record::Structure> tracer;
  auto trace = tracer.run(model, x);
  examples::require_equal(plain, trace.output, "ResNet-18");
  examples::print_counts(trace);
  const recorder::SummaryTable table = recorder::summarize(trace);
  std::cout << "summary: " << table.total_params << " parameters, " << table.total_mult_adds
            << " mult-adds (torchinfo: 1.81 G)\n";

  const recorder::RenderOptions options{.depth = 3};
  for (const auto& written :
       {recorder::render_to_file<recorder::backend::Dot>(trace, options, out / "resnet18"),
        recorder::render_to_file<recorder::backend::Svg>(trace, options, out / "resnet18"),
        recorder::render_to_file<recorder::backend::Json>(trace, options, out / "resnet18"),
        recorder::render_to_file<recorder::backend::Summary>(trace, options, out / "resnet18"),
        recorder::render_to_file<recorder::backend::Html>(trace, {.depth = 1}, out / "resnet18")})
    std::cout << "wrote " << written.filename().string() << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "resnet18_demo: " << e.what() << "\n";
  return 1;
}
