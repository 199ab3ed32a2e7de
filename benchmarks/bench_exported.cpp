/// torch.export programs (`.pt2`): reading without running, and running through the
/// dispatcher, against TorchScript's forward of the same model and against the runner itself with
/// nothing recorded. Every ratio comes from one run of this program.
///
///   ExportedRead50k                 parse_program + exported_trace of a 50,000-node program
///                                   (a chain of relu ops in 100 modules, made here)
///   ExportedResNet18_Paired         runner with record::Off vs TorchScript's plain forward of
///                                   ResNet-18 (counter traced_over_plain: the interpreter's cost)
///   ExportedResNet18_Structure      runner with record::Structure vs TorchScript's plain forward
///   ExportedChain1000_Paired        benchmarks/chain.hpp exported: Structure vs Off; counter
///                                   overhead_ns_per_op: what recording costs per op
///
/// The archives come from tests/export/make_exports.py ($RECORDER_EXPORT_MODELS, else
/// build/export-models); the TorchScript ResNet-18 from tests/script/make_models.py
/// ($RECORDER_SCRIPT_MODELS, else build/script-models). Both ResNet-18s are the same
/// architecture (torchvision's, and models.py's plain-PyTorch copy).

#include "paired.hpp"

#include <recorder/exported.hpp>
#include <recorder/script.hpp>

#include <torch/script.h>
#include <torch/torch.h>

#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace rr = recorder::record;

std::filesystem::path folder(const char* env, const char* fallback) {
  if (const char* v = std::getenv(env); v != nullptr && *v != '\0') return v;
  return fallback;
}

using bench::bm_paired;

/// The text of a program of `n` relu nodes in a chain, in `n / 500` modules of class Block,
/// every 50th in the block's ReLU child (so that a Block is not a leaf: its ops are drawn).
std::string chain_program(int n) {
  using json = nlohmann::json;
  json nodes = json::array();
  json values = json::object();
  const auto meta = [] {
    return json{{"dtype", 7},
                {"sizes", {{{"as_int", 1}}, {{"as_int", 64}}}},
                {"strides", {{{"as_int", 64}}, {{"as_int", 1}}}},
                {"requires_grad", false},
                {"device", {{"type", "cpu"}, {"index", nullptr}}}};
  };
  values["x"] = meta();
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string name = "relu_" + std::to_string(i);
    const std::string block = "blocks." + std::to_string(i / 500);
    std::string stack = "L__self__,,__main__.M;L__self__" + block + "," + block + ",__main__.Block";
    if (i % 50 == 0)
      stack += ";L__self__" + block + ".act," + block + ".act,torch.nn.modules.activation.ReLU";
    nodes.push_back(
        {{"target", "torch.ops.aten.relu.default"},
         {"name", name},
         {"inputs", {{{"name", "self"}, {"arg", {{"as_tensor", {{"name", prev}}}}}, {"kind", 1}}}},
         {"outputs", {{{"as_tensor", {{"name", name}}}}}},
         {"metadata",
          {{"nn_module_stack", stack}, {"torch_fn", name + ";builtin_function_or_method.relu"}}}});
    values[name] = meta();
    prev = name;
  }
  json program = {
      {"graph_module",
       {{"graph", {{"nodes", nodes}, {"tensor_values", values}}},
        {"signature",
         {{"input_specs", {{{"user_input", {{"arg", {{"as_tensor", {{"name", "x"}}}}}}}}}},
          {"output_specs", {{{"user_output", {{"arg", {{"as_tensor", {{"name", prev}}}}}}}}}}}},
        {"module_call_graph", json::array()}}},
      {"schema_version", {{"major", 8}, {"minor", 20}}}};
  return program.dump();
}

void BM_ExportedRead50k(benchmark::State& state) {
  static const std::string text = chain_program(50'000);
  std::size_t nodes = 0;
  for (auto _ : state) {
    const recorder::exported::Program p = recorder::exported::parse_program(text, "chain.pt2");
    const recorder::Trace t = recorder::exported::exported_trace(p);
    nodes = t.graph.size();
    benchmark::DoNotOptimize(nodes);
  }
  state.counters["graph_nodes"] = static_cast<double>(nodes);
  state.counters["program_nodes"] = 50'000;
}

struct Fixture {
  std::optional<recorder::ExportedProgram> resnet, chain;
  torch::jit::Module script;
  at::Tensor image = torch::randn({1, 3, 224, 224});
  at::Tensor row = torch::randn({1, 64});
  recorder::Tracer<rr::Off> off;
  recorder::Tracer<rr::Structure> structure;
  recorder::Tracer<rr::Off> chain_off;
  recorder::Tracer<rr::Structure> chain_structure;
  std::string error;

  Fixture() {
    const auto exports = folder("RECORDER_EXPORT_MODELS", "build/export-models");
    const auto scripts = folder("RECORDER_SCRIPT_MODELS", "build/script-models");
    try {
      resnet.emplace(recorder::load_exported(exports / "resnet18.pt2"));
      chain.emplace(recorder::load_exported(exports / "chain1000.pt2"));
      script = recorder::load_model(scripts / "resnet18_script.pt");
      script.eval();
      torch::NoGradGuard no_grad;
      for (int i = 0; i < 3; ++i) {  // warm up: the profiling executor, the runners' weights
        script.forward({image});
        off.run(*resnet, image);
        structure.run(*resnet, image);
        chain_off.run(*chain, row);
        chain_structure.run(*chain, row);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_ExportedResNet18_Paired(benchmark::State& state) {
  Fixture& f = fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  bm_paired(
      state, [&] { benchmark::DoNotOptimize(f.script.forward({f.image})); },
      [&] { benchmark::DoNotOptimize(f.off.run(*f.resnet, f.image)); }, 0);
}

void BM_ExportedResNet18_Structure(benchmark::State& state) {
  Fixture& f = fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  bm_paired(
      state, [&] { benchmark::DoNotOptimize(f.script.forward({f.image})); },
      [&] { benchmark::DoNotOptimize(f.structure.run(*f.resnet, f.image)); }, 0);
}

void BM_ExportedChain1000_Paired(benchmark::State& state) {
  Fixture& f = fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  bm_paired(
      state, [&] { benchmark::DoNotOptimize(f.chain_off.run(*f.chain, f.row)); },
      [&] { benchmark::DoNotOptimize(f.chain_structure.run(*f.chain, f.row)); }, 1000);
}

}  // namespace

BENCHMARK(BM_ExportedRead50k)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ExportedResNet18_Paired)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);
BENCHMARK(BM_ExportedResNet18_Structure)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3);
BENCHMARK(BM_ExportedChain1000_Paired)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(2);

int main(int argc, char** argv) {
  at::set_num_threads(1);  // stable numbers: every op on the calling thread
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
