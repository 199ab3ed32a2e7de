#pragma once
/// The templated front end's fixtures and benchmark bodies that bench_models and bench_script
/// share: ResNet-18 and the 1,000-op chain as templated modules with their inputs, run plain,
/// through `Tracer<record::Structure>::run` and through `torch::jit::tracer::trace`.

#include "chain.hpp"

#include <models/resnet.hpp>

#include <recorder/recorder.hpp>

#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/torch.h>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>

namespace bench {

/// The chain of bench_ops as a module: 1,000 tiny ops on a [4] tensor.
struct ChainImpl : torch::nn::Module {
  ChainImpl() : torch::nn::Module("Chain") {}
  template <recorder::tensor_like T>
  T forward(T x) {
    return bench::chain(x);
  }
};
TORCH_MODULE(Chain);

/// A model and its input, built once (the first benchmark that needs it).
template <class M>
struct Fixture {
  M model;
  at::Tensor input;
};

/// For `torch::jit::tracer::trace` without a `torch::jit::Module` (`self` is null), the
/// parameters are captured as constants, and libtorch refuses a constant that requires grad.
/// The JitTrace benchmarks therefore run on a twin of the model (same seed, same weights) whose
/// parameters do not require grad; in eval mode under NoGradGuard its forward does the same work.
template <class M>
Fixture<M> frozen(Fixture<M> f) {
  for (auto& p : f.model->parameters()) p.requires_grad_(false);
  return f;
}

/// ResNet-18 (examples/models/resnet.hpp) in eval mode, seed 0, at 1x3x224x224.
inline Fixture<models::ResNet> make_resnet() {
  torch::manual_seed(0);
  models::ResNet m = models::ResNet18();
  m->eval();
  return {m, torch::randn({1, 3, 224, 224})};
}

/// The chain module on ones of shape [4].
inline Fixture<Chain> make_chain() { return {Chain(), torch::ones({4})}; }

/// The fixture `Make` builds, built on first use.
template <auto Make>
auto& fixture() {
  static auto f = Make();
  return f;
}

/// The `frozen` twin of the fixture `Make` builds, built on first use.
template <auto Make>
auto& frozen_fixture() {
  static auto f = frozen(Make());
  return f;
}

/// `model->forward(input)` on `at::Tensor`.
template <class F>
void bm_plain(benchmark::State& state, F& f) {
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    at::Tensor y = f.model->forward(f.input);
    benchmark::DoNotOptimize(y);
  }
}

/// `Tracer<record::Structure>::run(model, input)`, one tracer with `options` reused by every
/// iteration (on a templated model a run keeps nothing in the tracer); counters: the last
/// trace's nodes and edges.
template <class F>
void bm_traced(benchmark::State& state, F& f, const recorder::TraceOptions& options = {}) {
  torch::NoGradGuard no_grad;
  recorder::Tracer<recorder::record::Structure> tracer(options);
  std::size_t nodes = 0;
  std::size_t edges = 0;
  for (auto _ : state) {
    auto trace = tracer.run(f.model, f.input);
    benchmark::DoNotOptimize(trace);
    nodes = trace.graph.size();
    edges = trace.graph.edge_count();
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["edges"] = static_cast<double>(edges);
}

/// One `torch::jit::tracer::trace` call (libtorch 1.13) around the plain forward:
///   trace(Stack inputs, const std::function<Stack(Stack)>& traced_fn,
///         std::function<std::string(const Variable&)> var_name_lookup_fn,
///         bool strict = true, bool force_outplace = false, Module* self = nullptr,
///         const std::vector<std::string>& argument_names = {})
/// The parameters are not inputs (self is null): the tracer records them as constants
/// (see `frozen`). Counter: the last TorchScript graph's nodes.
template <class F>
void bm_jit_trace(benchmark::State& state, F& f) {
  torch::NoGradGuard no_grad;
  std::size_t nodes = 0;
  for (auto _ : state) {
    auto traced = torch::jit::tracer::trace(
        torch::jit::Stack{c10::IValue(f.input)},
        [&f](torch::jit::Stack in) -> torch::jit::Stack {
          return {c10::IValue(f.model->forward(in.at(0).toTensor()))};
        },
        [](const torch::autograd::Variable&) { return std::string(); },
        /*strict=*/true, /*force_outplace=*/false);
    benchmark::DoNotOptimize(traced);
    nodes = 0;
    for (auto* n : traced.first->graph->nodes()) {
      (void)n;
      ++nodes;
    }
  }
  state.counters["jit_nodes"] = static_cast<double>(nodes);
}

}  // namespace bench
