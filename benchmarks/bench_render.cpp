/// Render time (torch-free): DOT, JSON, JsonView and Mermaid text for synthetic traces of 1k, 10k
/// and 100k drawn nodes; SVG through Graphviz for ResNet-18 and a 5,000-node graph.

#include "render/fixtures.hpp"
#include "render/synthetic.hpp"

#include <benchmark/benchmark.h>

#include <recorder/render/dot.hpp>
#include <recorder/render/json.hpp>
#include <recorder/render/mermaid.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/svg.hpp>
#include <recorder/render/visible.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace {

using recorder::RenderOptions;
using recorder::Trace;

/// One synthetic trace per size, built once: `ops` ops, so `ops + 2` drawn nodes by default.
const Trace& chain(std::size_t ops) {
  static std::map<std::size_t, Trace> cache;
  auto it = cache.find(ops);
  if (it == cache.end()) it = cache.emplace(ops, recorder::testing::synthetic_chain(ops)).first;
  return it->second;
}

/// Ops for N drawn nodes (the input and output are the other two).
std::size_t ops_for(benchmark::State& state) {
  return static_cast<std::size_t>(state.range(0)) - 2;
}

void set_counters(benchmark::State& state, const Trace& t, std::size_t bytes) {
  state.counters["drawn_nodes"] =
      static_cast<double>(recorder::visible_graph(t.graph, {}).nodes.size());
  state.counters["recorded_nodes"] = static_cast<double>(t.graph.size());
  state.counters["bytes"] = static_cast<double>(bytes);
}

template <recorder::render_backend B>
void BM_Text(benchmark::State& state) {
  const Trace& t = chain(ops_for(state));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = recorder::render_to_string<B>(t, RenderOptions{});
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  set_counters(state, t, bytes);
}

void BM_VisibleGraph(benchmark::State& state) {
  const Trace& t = chain(ops_for(state));
  for (auto _ : state) {
    const recorder::VisibleGraph vg = recorder::visible_graph(t.graph, RenderOptions{});
    benchmark::DoNotOptimize(vg.nodes.data());
  }
  set_counters(state, t, 0);
}

/// DOT with every cluster drawn (`expand_nested`): the blocks of 8 ops become clusters.
void BM_DotNested(benchmark::State& state) {
  const Trace& t = chain(ops_for(state));
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text =
        recorder::render_to_string<recorder::backend::Dot>(t, {.expand_nested = true});
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  set_counters(state, t, bytes);
}

void svg(benchmark::State& state, const Trace& t) {
  if (!recorder::detail::on_path("dot")) {
    state.SkipWithError("Graphviz 'dot' is not on PATH");
    return;
  }
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string image =
        recorder::render_to_string<recorder::backend::Svg>(t, RenderOptions{});
    bytes = image.size();
    benchmark::DoNotOptimize(image.data());
  }
  set_counters(state, t, bytes);
}

void BM_Svg_ResNet18(benchmark::State& state) {
  static const Trace t = recorder::testing::resnet18();
  svg(state, t);
}

void BM_Svg_Chain(benchmark::State& state) { svg(state, chain(ops_for(state))); }

}  // namespace

#define RECORDER_SIZES ->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_VisibleGraph) RECORDER_SIZES;
BENCHMARK_TEMPLATE(BM_Text, recorder::backend::Dot) RECORDER_SIZES;
BENCHMARK(BM_DotNested) RECORDER_SIZES;
BENCHMARK_TEMPLATE(BM_Text, recorder::backend::Mermaid) RECORDER_SIZES;
BENCHMARK_TEMPLATE(BM_Text, recorder::backend::JsonView) RECORDER_SIZES;
BENCHMARK_TEMPLATE(BM_Text, recorder::backend::Json) RECORDER_SIZES;
#undef RECORDER_SIZES
BENCHMARK(BM_Svg_ResNet18)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Svg_Chain)->Arg(2'000)->Arg(5'000)->Iterations(1)->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
