#pragma once
/// `recorder record`: the inputs, outputs or gradients of chosen layers over batches, reduced,
/// into a file Python's torch.load reads; alone or over ranks.

#include "common.hpp"
#include "ranks.hpp"

#include <recorder/capture/save.hpp>

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace recorder::cli {

// ---- record ---------------------------------------------------------------------------------

struct RecordArgs {
  Common common;
  std::string layers;
  std::string what = "output";
  std::string reduce = "all";
  std::size_t batches = 0;
  std::size_t bins = 100;
  std::string range;
  double quantile = 0.5;
  std::int64_t correction = 1;
  std::size_t max_bytes = 0;
  bool sample = false;
  std::string out;
  RankArgs ranks;
};

/// Progress on stderr: a line rewritten in place on a terminal, else a line per tenth.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), tty_(::isatty(2) != 0) {}
  void done(std::size_t n) {
    if (total_ < 2) return;
    if (tty_) {
      std::cerr << "\rrecorder: batch " << n << "/" << total_ << (n == total_ ? "\n" : "")
                << std::flush;
    } else if (n == total_ || n * 10 / total_ != (n - 1) * 10 / total_) {
      std::cerr << "recorder: batch " << n << "/" << total_ << "\n";
    }
  }

 private:
  std::size_t total_;
  bool tty_;
};

// One instantiation per reduction: the capture point is chosen at run time
// (record::Activations), which keeps the command line's translation unit small.
template <class R>
inline int record_with(const RecordArgs& a, recorder::CapturePoint what,
                       std::vector<recorder::LayerAddress> layers, R reduction) {
  const Common& c = a.common;
  const bool gradients = what == recorder::CapturePoint::backward_output ||
                         what == recorder::CapturePoint::backward_input;
  if (gradients && c.no_grad)
    throw UsageError("recorder: --what grad-output and grad-input need autograd: drop --no-grad");
  Ranks ranks(a.ranks);
  const RankPlace& place = ranks.place();
  torch::manual_seed(static_cast<std::uint64_t>(c.seed));
  const Model model = load_any(c);
  const Inputs inputs(c, default_inputs(c, model));
  rr::Activations<R> acts(what, std::move(layers), std::move(reduction));
  if (a.sample) acts.data(recorder::KeptData::sample);
  recorder::Tracer<rr::Activations<R>> tracer(trace_options(c), acts);
  const std::size_t batches = a.batches > 0 ? a.batches : inputs.stored_batches();
  // Ranks: rank r runs batches r, r + world, ...; random batch i is drawn from seed + i, so
  // any number of ranks records the same batches.
  Progress progress(place.rank == 0 ? batches : 0);
  for (std::size_t i = 0; i < batches; ++i) {
    if (i % static_cast<std::size_t>(place.world) != static_cast<std::size_t>(place.rank)) continue;
    if (place.joined) torch::manual_seed(static_cast<std::uint64_t>(c.seed) + i);
    std::optional<recorder::Traced<c10::IValue>> traced;
    try {
      traced.emplace(run_model(tracer, model, inputs.batch(i)));
    } catch (const recorder::TraceError& e) {
      std::cerr << first_line(e.what()) << "\n"
                << "recorder: that was batch " << i + 1 << " of " << batches
                << "; nothing was written\n";
      throw Reported{e};
    }
    const auto& t = *traced;
    if (gradients) {
      // The gradient of the sum of every floating output: what a scalar loss would give.
      at::Tensor loss;
      recorder::for_each_tensor(t.output, [&loss](const at::Tensor& y) {
        if (!y.is_floating_point() || !y.requires_grad()) return;
        loss = loss.defined() ? loss + y.sum() : y.sum();
      });
      if (!loss.defined())
        throw UsageError(
            "recorder: the model's outputs do not require grad: no gradients to record");
      loss.backward();
    }
    progress.done(i + 1);
  }
  const auto report = [&](const rr::Activations<R>& recorded) {
    recorder::save(recorded, a.out);
    for (const auto& r : recorded.records())
      std::cout << r->key << " (" << r->class_name << ", " << r->label
                << "): " << counted(r->samples(), "sample") << ", "
                << counted(r->tensors(), "tensor") << "\n";
    std::cout << "wrote " << a.out << ": " << counted(recorded.size(), "layer")
              << ", reduce::" << R::name << " over " << counted(batches, "batch");
    if (place.joined) std::cout << " on " << counted(static_cast<std::size_t>(place.world), "rank");
    std::cout << "\n";
    return 0;
  };
  if (ranks.joined()) {  // every reduction the command line offers is mergeable
    const auto merged = ranks.merged(acts);
    return place.rank == 0 ? report(merged) : 0;
  }
  return report(acts);
}

inline int record_reduced(const RecordArgs& a, recorder::CapturePoint what,
                          std::vector<recorder::LayerAddress> layers) {
  switch (cli::parse_reduce(a.reduce)) {
    case cli::Reduce::all:
      return record_with(a, what, std::move(layers), rd::KeepAll{.max_bytes = a.max_bytes});
    case cli::Reduce::last:
      return record_with(a, what, std::move(layers), rd::Last{});
    case cli::Reduce::sum:
      return record_with(a, what, std::move(layers), rd::Sum{});
    case cli::Reduce::mean:
      return record_with(a, what, std::move(layers), rd::Mean{});
    case cli::Reduce::moments:
      return record_with(a, what, std::move(layers), rd::Moments{.correction = a.correction});
    case cli::Reduce::minmax:
      return record_with(a, what, std::move(layers), rd::MinMax{});
    case cli::Reduce::absmax:
      return record_with(a, what, std::move(layers), rd::AbsMax{});
    case cli::Reduce::quantile:
      return record_with(a, what, std::move(layers), rd::Quantile{.q = a.quantile});
    case cli::Reduce::histogram: {
      if (a.range.empty())
        throw UsageError(
            "recorder: --reduce histogram needs --range lo,hi (and --bins, default 100)");
      if (a.bins == 0) throw UsageError("recorder: --bins must be at least 1");
      const auto [lo, hi] = cli::parse_range(a.range);
      return record_with(a, what, std::move(layers), rd::Histogram(a.bins, lo, hi));
    }
  }
  return 1;
}

inline int run_record(const RecordArgs& a) {
  std::vector<recorder::LayerAddress> layers = cli::parse_layers(a.layers);
  const cli::Record what = cli::parse_what(a.what);
  (void)cli::parse_reduce(a.reduce);
  (void)cli::parse_quantile(a.quantile);
  if (std::filesystem::path(a.out).extension().empty())
    throw UsageError("recorder: -o '" + a.out + "' needs an extension, like acts.pt");
  cli::check_writable(a.out);
  if (const auto code = run_local_ranks(a.ranks)) return *code;
  using W = recorder::CapturePoint;
  switch (what) {
    case cli::Record::output:
      return record_reduced(a, W::forward_output, std::move(layers));
    case cli::Record::input:
      return record_reduced(a, W::forward_input, std::move(layers));
    case cli::Record::pre:
      return record_reduced(a, W::forward_pre, std::move(layers));
    case cli::Record::grad_output:
      return record_reduced(a, W::backward_output, std::move(layers));
    case cli::Record::grad_input:
      return record_reduced(a, W::backward_input, std::move(layers));
  }
  return 1;
}

/// `recorder record` and its options.
inline CLI::App* add_record(CLI::App& app, RecordArgs& a) {
  CLI::App* sub = app.add_subcommand(
      "record",
      "Record the inputs, outputs or gradients of chosen layers over batches, reduced, into a file "
      "Python's torch.load reads");
  add_common(*sub, a.common, /*as_torchinfo=*/false, /*values_matter=*/true);
  sub->add_option(
         "--layers", a.layers,
         "Layers, comma-separated: paths (layer4, layer1.0.relu#1), depth-index labels (3-18), "
         "class:Conv2d, index:5, all")
      ->required();
  sub->add_option("--what", a.what,
                  "output, input (after the forward), pre (before it), grad-output, "
                  "grad-input (default output)");
  sub->add_option("--reduce", a.reduce,
                  "all (keep every batch), last, sum, mean, moments (mean, variance, count), "
                  "minmax, absmax (the largest |x|: a symmetric quantization's amax), histogram, "
                  "quantile (each element's --quantile over the batches, in float64) "
                  "(default all)");
  sub->add_option("--batches", a.batches,
                  "Forwards to run (default: as many as the --input files hold, else 1); "
                  "fresh random inputs each");
  sub->add_option("--bins", a.bins, "Histogram bins (default 100)");
  sub->add_option("--range", a.range, "Histogram range lo,hi (needed by --reduce histogram)");
  sub->add_option("--quantile", a.quantile,
                  "--reduce quantile: which one, in [0, 1] (default 0.5, the median; 0.9: the "
                  "90th percentile)")
      ->type_name("Q");
  sub->add_option("--correction", a.correction,
                  "Moments: the variance's correction, as torch.var (default 1)");
  sub->add_option("--max-bytes", a.max_bytes,
                  "--reduce all: stop with an error past this many bytes (default: no cap)");
  sub->add_flag("--sample", a.sample, "Keep the first element of each batch only");
  add_rank_options(*sub, a.ranks,
                   "rank r records batches r, r+N, ...; rank 0 merges them and writes -o");
  sub->add_option("-o,--output", a.out,
                  "The file to write (a dict from layer to result, for torch.load)")
      ->required();
  return sub;
}

}  // namespace recorder::cli
