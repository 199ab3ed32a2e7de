#pragma once
/// `recorder profile`: every module call timed over several runs, alone or over ranks.

#include "common.hpp"
#include "ranks.hpp"

#include <recorder/capture/facts.hpp>
#include <recorder/capture/timing.hpp>
#include <recorder/render/html.hpp>
#include <recorder/render/time_dot.hpp>

#include <filesystem>
#include <string>

namespace recorder::cli {

// ---- profile --------------------------------------------------------------------------------

struct ProfileArgs {
  Common common;
  int warmup = 3;
  int runs = 20;
  TableArgs table{.col_width = 16};
  bool backward = false;
  bool expand_nested = false;
  std::string out;
  std::string draw;
  RankArgs ranks;
};

/// Times `model` over `a.runs` runs after `a.warmup` (record::Timing<Mean>, with the aten ops
/// of leaves under --aten-ops), then prints the summary with time columns, and writes the trace
/// and the drawing with the times when asked (in --draw's format: `parse_time_format`). On ranks
/// (`ranks.joined()`), rank r runs batches r, r + world, ...; the times are merged on rank 0,
/// which prints and writes everything, the Chrome trace with a process per rank.
template <class... Extra>
inline int profile_with(const ProfileArgs& a, Ranks& ranks) {
  const RankPlace& place = ranks.place();
  const auto batch_of = [&](const Inputs& inputs, int i) {
    const auto k = static_cast<std::size_t>(i * place.world + place.rank);
    if (place.joined) torch::manual_seed(static_cast<std::uint64_t>(a.common.seed) + k);
    return inputs.batch(k);
  };
  torch::manual_seed(static_cast<std::uint64_t>(a.common.seed));
  const Model model = load_any(a.common);
  const Inputs inputs(a.common, default_inputs(a.common, model));
  using Timed = rr::Timing<rd::Mean>;
  Timed warm;
  recorder::Tracer<Extra..., Timed> warming(trace_options(a.common), Extra{}..., warm);
  for (int i = 0; i < a.warmup; ++i) run_model(warming, model, batch_of(inputs, i));
  Timed timing(rd::Mean{}, {.backward = a.backward});
  recorder::TraceOptions options = trace_options(a.common);
  if (a.backward) options.no_grad = false;
  recorder::Tracer<Extra..., Timed> tracer(options, Extra{}..., timing);
  std::optional<recorder::Trace> last;
  for (int i = 0; i < a.runs; ++i) {
    std::vector<c10::IValue> batch = batch_of(inputs, i);
    if (a.backward)
      for (c10::IValue& v : batch)
        if (v.isTensor() && v.toTensor().is_floating_point())
          v = v.toTensor().detach().requires_grad_();
    auto traced = run_model(tracer, model, std::move(batch));
    if (a.backward) {
      at::Tensor sum;
      recorder::for_each_tensor(traced.output, [&sum](const at::Tensor& t) {
        if (t.requires_grad()) sum = sum.defined() ? sum + t.sum() : t.sum();
      });
      if (!sum.defined())
        throw std::runtime_error("recorder: --backward: the model's output needs no gradient");
      sum.backward();
    }
    last.emplace(std::move(traced));
  }
  const auto& runs = timing.runs();
  const std::string name = last->model_name;
  std::string chrome;  // the Chrome trace of every rank, on rank 0
  if (ranks.joined()) {
    ranks.merge_times(timing);
    if (!a.out.empty()) chrome = ranks.chrome_trace(runs, name);
    if (place.rank != 0) return 0;
  }
  const recorder::CallTimes times = recorder::call_times(timing);
  recorder::SummaryOptions o = table_options(a.table);  // then the time columns
  for (const auto c : {recorder::SummaryColumn::time, recorder::SummaryColumn::self_time,
                       recorder::SummaryColumn::time_percent})
    o.columns.push_back(c);
  o.times = &times;
  std::cout << recorder::summary(*last, o);
  std::cout << "Timed: " << counted(static_cast<std::size_t>(a.runs), "run");
  if (place.joined)
    std::cout << " on each of " << counted(static_cast<std::size_t>(place.world), "rank");
  std::cout << " after " << a.warmup << " warm-up; " << runs.back().ops.size() << " ops a run";
  if (a.backward)
    std::cout << "; " << recorder::backward_spans(runs.back()).size() << " backward spans";
  std::cout << "\n";
  if (!a.out.empty()) {
    std::filesystem::path written;
    if (ranks.joined()) {
      written = recorder::write_to_file(a.out, chrome, recorder::backend::ChromeTrace::extension);
    } else {
      written =
          recorder::render_to_file(*last, {}, a.out, recorder::backend::ChromeTrace{.runs = &runs});
    }
    std::cerr << "recorder: wrote " << written.string() << ": ";
    if (place.joined) std::cerr << counted(static_cast<std::size_t>(place.world), "rank") << " of ";
    std::cerr << counted(runs.size(), "run") << ", " << runs.back().spans.size()
              << " module calls and " << runs.back().ops.size() << " ops each\n";
  }
  if (!a.draw.empty()) {
    const recorder::RenderOptions ro{.depth = a.table.depth, .expand_nested = a.expand_nested};
    const std::filesystem::path path(a.draw);
    std::filesystem::path written;
    const cli::Format format = cli::parse_time_format(path);
    switch (format) {
      case cli::Format::svg:
        written = recorder::render_to_file(
            *last, ro, path, recorder::backend::Svg{.report = nullptr, .times = &times});
        break;
      case cli::Format::png:
        written = recorder::render_to_file(
            *last, ro, path, recorder::backend::Png{.report = nullptr, .times = &times});
        break;
      case cli::Format::html:  // the viewer, each call's time and runs on hover
        written = recorder::render_to_file(
            *last, ro, path, recorder::backend::Html{.facts = recorder::facts_of(*last, timing)});
        break;
      default:  // .dot, .gv, or no extension
        written =
            recorder::render_to_file(*last, ro, path, recorder::backend::TimeDot{.times = &times});
    }
    std::cerr << "recorder: wrote " << written.string()
              << (format == cli::Format::html ? ": module calls with their times on hover"
                                              : ": module calls coloured by time");
    if (place.joined)
      std::cerr << " (over " << counted(static_cast<std::size_t>(place.world), "rank") << ")";
    std::cerr << "\n";
  }
  return 0;
}

/// `recorder profile`: the summary table with each call's time, self time and share (mean over
/// `--runs` after `--warmup`, over every rank with --local-ranks / --distributed), `-o` the
/// Chrome/Perfetto trace, `--draw` the drawing with the times (refused before the run in a
/// format that cannot carry them).
inline int run_profile(const ProfileArgs& a) {
  if (a.runs < 1) throw UsageError("recorder: --runs must be at least 1");
  if (a.warmup < 0) throw UsageError("recorder: --warmup must be 0 or more");
  if (!a.out.empty()) cli::check_writable(a.out);
  if (!a.draw.empty()) {
    (void)cli::parse_time_format(a.draw);
    cli::check_writable(a.draw);
  }
  if (const auto code = run_local_ranks(a.ranks)) return *code;
  Ranks ranks(a.ranks);
  if (a.common.aten_ops) return profile_with<rr::AtenOps>(a, ranks);
  return profile_with<>(a, ranks);
}

/// `recorder profile` and its options.
inline CLI::App* add_profile(CLI::App& app, ProfileArgs& a) {
  CLI::App* sub = app.add_subcommand(
      "profile",
      "Time every module call over several runs: the summary table with each call's time, self "
      "time and share, and (-o) a Chrome/Perfetto trace");
  add_common(*sub, a.common, /*as_torchinfo=*/false, /*values_matter=*/true);
  sub->add_option("--warmup", a.warmup, "Untimed runs first (default 3)");
  sub->add_option("--runs", a.runs, "Timed runs (default 20)");
  add_table_options(*sub, a.table,
                    "default output_size,num_params; the time, self time and share follow");
  sub->add_option("-o,--output", a.out,
                  "Write the Chrome trace (.trace.json when no extension) here");
  sub->add_option("--draw", a.draw,
                  "Draw the graph to --depth with each call's time, in the format the extension "
                  "names: .dot/.gv (no extension: .dot is added), .svg or .png (Graphviz) "
                  "colour module calls by time, each call's time and share in its box; .html "
                  "(the interactive viewer) shows each call's time and runs on hover. .mmd and "
                  "the JSON graphs have no place for times: refused (recorder draw writes them)");
  sub->add_flag("--backward", a.backward,
                "Also time each call's backward (the inputs require grad; the sum of "
                "the outputs is back-propagated): a second span set in the trace");
  sub->add_flag("--expand-nested", a.expand_nested,
                "--draw: composite modules as clusters, each with its time and a border "
                "coloured by it");
  add_rank_options(*sub, a.ranks,
                   "rank r times runs on batches r, r+N, ...; rank 0 prints the times over "
                   "every rank and writes -o, a trace with a process per rank");
  return sub;
}

}  // namespace recorder::cli
