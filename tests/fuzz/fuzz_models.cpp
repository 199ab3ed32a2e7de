/// fuzz_models: the differential fuzzer. Generates a random model per seed (tests/fuzz/spec.hpp),
/// runs it plain and traced, and checks the trace against independent accounts of the same
/// forward (tests/fuzz/accounts.hpp). A failure prints its seed, what disagreed, and the
/// smallest model found that still fails the same way.
///
///   fuzz_models --seeds N [--start S] [--svg-every K] [--verbose] [--coverage]
///   fuzz_models --list S            # prints the model of seed S
///
/// Ends with the line "N passed, F failed"; exits 0 when nothing failed.

#include "accounts.hpp"
#include "args.hpp"
#include "net.hpp"
#include "spec.hpp"

#include <recorder/recorder.hpp>

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

/// What the seeds reached, for `--coverage`: op names recorded outside leaves, leaf classes.
struct Coverage {
  std::set<std::string> ops, leaves;
};

/// The names of `ops_table.hpp`'s lines, in-place forms with their '_'.
std::set<std::string> table_ops() {
  std::set<std::string> names;
#define RECORDER_FUZZ_NAME(name, params, args) names.insert(#name);
#define RECORDER_FUZZ_INPLACE(name, params, args) names.insert(#name "_");
  RECORDER_METHOD_AND_FREE_OPS(RECORDER_FUZZ_NAME)
  RECORDER_METHOD_OPS(RECORDER_FUZZ_NAME)
  RECORDER_FREE_OPS(RECORDER_FUZZ_NAME)
  RECORDER_LIST_OPS(RECORDER_FUZZ_NAME)
  RECORDER_INPLACE_CAPABLE_OPS(RECORDER_FUZZ_INPLACE)
#undef RECORDER_FUZZ_NAME
#undef RECORDER_FUZZ_INPLACE
  return names;
}

/// Runs every account on the model of `spec`; returns what disagreed.
/// How much one seed checked (for `--verbose`).
struct Checked {
  std::size_t nodes = 0, ops = 0, calls = 0, outputs = 0;
};

fuzz::Problems check(const fuzz::ModelSpec& spec, bool svg, Coverage* coverage,
                     Checked* checked = nullptr) {
  fuzz::Problems problems;
  try {
    torch::manual_seed(static_cast<std::uint64_t>(spec.seed));
    fuzz::FuzzNet net(spec.root);
    net->eval();
    const at::Tensor x = torch::randn({fuzz::kRows, fuzz::kFeatures});
    const at::Tensor y = torch::randn({fuzz::kRows, fuzz::kFeatures});

    std::vector<at::Tensor> plain, traced;
    {
      torch::NoGradGuard no_grad;
      if (spec.pair_root)
        fuzz::flatten_outputs(net->forward(x.clone(), y.clone()), plain);
      else
        fuzz::flatten_outputs(net->forward(x.clone()), plain);
    }

    recorder::Tracer<recorder::record::AtenOps> tracer(
        recorder::TraceOptions{.mode = recorder::TrainMode::eval, .no_grad = true});
    fuzz::AtenLog log;
    auto run = [&](auto&&... inputs) {
      log.active = true;
      auto t = tracer.run(net, inputs...);
      log.active = false;
      fuzz::flatten_outputs(t.output, traced);
      return recorder::Trace(std::move(t));
    };
    const recorder::Trace trace = spec.pair_root ? run(x.clone(), y.clone()) : run(x.clone());

    fuzz::compare_outputs(plain, traced, problems);
    fuzz::compare_ops(trace.graph, log.ops, problems);
    const auto called = fuzz::compare_calls(trace.graph, spec, problems);
    fuzz::check_summary(trace, *net, called, problems);
    fuzz::check_addresses(trace.graph, problems);
    fuzz::check_renders(trace, svg, problems);

    if (checked != nullptr)
      *checked = {trace.graph.size(), log.ops.size(), called.size(), traced.size()};
    if (coverage != nullptr) {
      const recorder::Graph& g = trace.graph;
      for (std::uint32_t i = 0; i < g.size(); ++i) {
        const recorder::NodeId id{i};
        if (g.kind(id) == recorder::NodeKind::function && !g.module_of(g.node(id).parent).leaf)
          coverage->ops.insert(std::string(g.label(id)) + (g.node(id).inplace ? "_" : ""));
        if (g.kind(id) == recorder::NodeKind::module && g.module_of(id).leaf)
          coverage->leaves.insert(g.module_of(id).class_name);
      }
    }
  } catch (const std::exception& e) {
    problems.add("threw", e.what());
  }
  return problems;
}

int usage(const char* argv0) {
  std::cerr << "usage: " << argv0
            << " --seeds N [--start S] [--svg-every K] [--verbose] [--coverage]\n"
               "       "
            << argv0 << " --list S\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seeds = 0, start = 1, svg_every = 10, list = 0;
  bool have_seeds = false, have_list = false, verbose = false, want_coverage = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--seeds" && has_value && fuzz::parse_count(argv[i + 1], seeds)) {
      have_seeds = true;
      ++i;
    } else if (a == "--start" && has_value && fuzz::parse_count(argv[i + 1], start)) {
      ++i;
    } else if (a == "--svg-every" && has_value && fuzz::parse_count(argv[i + 1], svg_every)) {
      ++i;
    } else if (a == "--list" && has_value && fuzz::parse_count(argv[i + 1], list)) {
      have_list = true;
      ++i;
    } else if (a == "--verbose") {
      verbose = true;
    } else if (a == "--coverage") {
      want_coverage = true;
    } else {
      std::cerr << "fuzz_models: unknown or malformed argument '" << a << "'\n";
      return usage(argv[0]);
    }
  }
  if (have_list) {
    std::cout << fuzz::listing(fuzz::generate(list));
    return 0;
  }
  if (!have_seeds) return usage(argv[0]);

  at::set_num_threads(1);
  Coverage coverage;
  std::uint64_t passed = 0, failed = 0;
  const auto began = std::chrono::steady_clock::now();
  for (std::uint64_t seed = start; seed < start + seeds; ++seed) {
    const fuzz::ModelSpec spec = fuzz::generate(seed);
    const bool svg = svg_every > 0 && (seed - start) % svg_every == 0;
    Checked checked;
    const fuzz::Problems problems = check(spec, svg, &coverage, &checked);
    if (problems.empty()) {
      ++passed;
      if (verbose)
        std::cout << "seed " << seed << ": ok (" << fuzz::size(spec.root) << " steps and children, "
                  << checked.nodes << " nodes, " << checked.ops << " aten ops, " << checked.calls
                  << " modules called, " << checked.outputs << " outputs)\n";
      continue;
    }
    ++failed;
    std::cout << "seed " << seed << " FAILED:\n";
    for (const auto& p : problems.items) std::cout << "  " << p << '\n';
    const std::string account = problems.first_account();
    const fuzz::ModelSpec small = fuzz::shrink(spec, [&](const fuzz::ModelSpec& m) {
      const fuzz::Problems again = check(m, false, nullptr);
      return !again.empty() && again.first_account() == account;
    });
    std::cout << "  smallest model failing the same way (" << fuzz::size(small.root)
              << " steps and children, from " << fuzz::size(spec.root) << "):\n";
    std::string listing = fuzz::listing(small);
    for (std::size_t b = 0, e; b < listing.size(); b = e + 1) {
      e = listing.find('\n', b);
      std::cout << "    " << listing.substr(b, e - b) << '\n';
    }
    for (const auto& p : check(small, false, nullptr).items) std::cout << "    -> " << p << '\n';
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  if (want_coverage) {
    std::size_t reached = 0;
    std::string missing;
    for (const auto& name : table_ops()) {
      if (coverage.ops.count(name)) {
        ++reached;
      } else {
        missing += ' ' + name;
      }
    }
    std::cout << "ops_table names reached: " << reached << " of " << table_ops().size()
              << (missing.empty() ? std::string() : "; not reached:" + missing) << '\n'
              << "leaf classes reached: " << coverage.leaves.size() << '\n';
  }
  std::cout << "(" << seeds << " seeds in " << static_cast<int>(seconds * 10) / 10.0 << " s)\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}
