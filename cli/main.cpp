/// `recorder`: look inside a TorchScript model from a shell — its torchinfo table, its picture,
/// the activations and gradients of chosen layers — without writing C++.
///
///   recorder summary model.pt --input-size 1,3,224,224
///   recorder draw model.pt --input-size 1,3,224,224 --depth 3 -o model.svg
///   recorder record model.pt --input x.pt --layers layer4,fc --reduce mean --batches 100 -o acts.pt
///   recorder record model.pt ... --local-ranks 4 -o acts.pt   (4 ranks on 127.0.0.1, merged)
///
/// Exit codes: 0 done; 1 the model failed while traced (the partial summary is printed) or
/// another error; 2 a command line or input it cannot act on (one line on stderr, no file
/// written).

#include "options.hpp"

#include <recorder/capture/save.hpp>
#include <recorder/capture/timing.hpp>
#include <recorder/render/html.hpp>
#include <recorder/render/model_explorer.hpp>
#include <recorder/script.hpp>

#include <CLI/CLI.hpp>

#ifdef RECORDER_CLI_DISTRIBUTED  // libgloo-dev was there: ranks can be spawned or joined
#include "launch.hpp"

#include <recorder/distributed.hpp>
#else
namespace c10d {
class ProcessGroup;  // only ever null without libgloo-dev
}
#endif

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

namespace cli = recorder::cli;
namespace rr = recorder::record;
namespace rd = recorder::reduce;
using cli::UsageError;

/// The first line of an error message (a TorchScript error carries its traceback after it).
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

/// The command line as given, for the ranks `record --local-ranks` spawns.
std::vector<std::string> given_args;

/// A model failure already reported on stderr: main prints the partial summary and exits 1.
struct Reported {
  recorder::TraceError error;
};

// ---- what every subcommand takes: the model and its inputs -----------------------------------

struct Common {
  std::string model;
  std::vector<std::string> input_sizes;
  std::vector<std::string> input_files;
  std::vector<std::string> dtypes;
  std::int64_t seed = 0;
  std::int64_t int_high = 1;
  bool train = false;
  bool eval = false;
  bool no_grad = false;
  /// Neither --grad nor --no-grad where the forward runs as torchinfo's (summary): `no_grad`
  /// is decided by the file (`as_torchinfo`).
  bool grad_as_torchinfo = false;
  bool aten_ops = false;
};

/// `as_torchinfo`: the subcommand runs the forward as torchinfo's does unless --grad or --no-grad
/// say otherwise (summary; see `torchinfo_no_grad`).
void add_common(CLI::App& sub, Common& c, bool as_torchinfo = false) {
  sub.add_option("model", c.model,
                 "The TorchScript model file (torch.jit.script(m).save(path) or torch.jit.trace)")
      ->required();
  sub.add_option("--input-size", c.input_sizes,
                 "The sizes of a random input, like 1,3,224,224; once per model input, in order")
      ->type_name("SIZES");
  sub.add_option("--input", c.input_files,
                 "A file saved with Python's torch.save holding an input tensor (used for every "
                 "batch) or a "
                 "list of them (one per batch); once per model input, in order")
      ->type_name("FILE");
  sub.add_option("--dtype", c.dtypes,
                 "The dtype of the --input-size inputs (float32, float64, float16, bfloat16, "
                 "int64, int32, int16, "
                 "int8, uint8, bool); once for all, or once per input (default float32)")
      ->type_name("DTYPE");
  sub.add_option("--int-high", c.int_high,
                 "Random integer inputs are drawn from [0, N): give a vocabulary size for token "
                 "ids (default 1: "
                 "zeros, as torchinfo)")
      ->type_name("N");
  sub.add_option("--seed", c.seed, "The seed of the random inputs (default 0)")->type_name("N");
  auto* train = sub.add_flag("--train", c.train, "Run the model in train mode");
  sub.add_flag("--eval", c.eval, "Run the model in eval mode (the default)")->excludes(train);
  if (as_torchinfo) {
    c.grad_as_torchinfo = true;
    auto* grad = sub.add_flag_callback(
        "--grad", [&c] { c.grad_as_torchinfo = c.no_grad = false; },
        "Run with autograd. By default the forward runs as torchinfo's does: under "
        "torch.no_grad() with hooks on every module, so an eval nn.TransformerEncoderLayer takes "
        "its fused path in a file PyTorch 1.13 saved, and not in one PyTorch 2.1 or later saved "
        "(its hooks keep it off), which recorder then runs with autograd");
    sub.add_flag_callback(
           "--no-grad", [&c] { c.grad_as_torchinfo = false, c.no_grad = true; },
           "Run without autograd (torch::NoGradGuard)")
        ->excludes(grad);
  } else {
    sub.add_flag("--no-grad", c.no_grad, "Run without autograd (torch::NoGradGuard)");
  }
  sub.add_flag("--aten-ops", c.aten_ops,
               "Record every aten op as TorchScript runs it (record::AtenOps): the ops inside leaf "
               "modules too (drawn with --show-module-functions, counted by "
               "--functional-mult-adds), and a subscript such as x[:, 0] as its slice and select "
               "ops, not as one __getitem__ (torchview's)");
}

c10::ScalarType scalar_type(const std::string& name) {
  if (name == "float32" || name == "float") return c10::kFloat;
  if (name == "float64" || name == "double") return c10::kDouble;
  if (name == "float16" || name == "half") return c10::kHalf;
  if (name == "bfloat16") return c10::kBFloat16;
  if (name == "int64" || name == "long") return c10::kLong;
  if (name == "int32" || name == "int") return c10::kInt;
  if (name == "int16") return c10::kShort;
  if (name == "int8") return c10::kChar;
  if (name == "uint8") return c10::kByte;
  return c10::kBool;
}

/// The model's inputs, batch by batch: random ones of given sizes (fresh for every batch), or
/// tensors from files (a list in a file gives one per batch, cycled).
class Inputs {
 public:
  explicit Inputs(const Common& c) : int_high_(c.int_high) {
    if (c.input_sizes.empty() == c.input_files.empty())
      throw UsageError(c.input_sizes.empty()
                           ? "recorder: give the model's inputs: --input-size 1,3,224,224 (once "
                             "per input) or --input x.pt"
                           : "recorder: give either --input-size or --input, not both");
    if (c.int_high < 1) throw UsageError("recorder: --int-high must be at least 1");
    for (const std::string& s : c.input_sizes) sizes_.push_back(cli::parse_sizes(s));
    if (!c.dtypes.empty() && c.dtypes.size() != 1 && c.dtypes.size() != sizes_.size())
      throw UsageError("recorder: give --dtype once, or once per --input-size (" +
                       std::to_string(sizes_.size()) + "), not " + std::to_string(c.dtypes.size()) +
                       " times");
    if (!c.dtypes.empty() && sizes_.empty())
      throw UsageError("recorder: --dtype applies to --input-size inputs only");
    for (std::size_t i = 0; i < sizes_.size(); ++i)
      dtypes_.push_back(
          c.dtypes.empty() ? "float32" : cli::parse_dtype(c.dtypes[c.dtypes.size() == 1 ? 0 : i]));
    for (const std::string& f : c.input_files) files_.push_back(load_tensors(f));
  }

  /// How many batches the files hold (1 for random inputs or single tensors).
  std::size_t stored_batches() const {
    std::size_t n = 1;
    for (const auto& f : files_) n = std::max(n, f.size());
    return n;
  }

  /// The inputs of batch `i`.
  std::vector<c10::IValue> batch(std::size_t i) const {
    std::vector<c10::IValue> out;
    for (std::size_t k = 0; k < sizes_.size(); ++k) {
      const c10::ScalarType t = scalar_type(dtypes_[k]);
      if (cli::is_integer_dtype(dtypes_[k]))
        out.emplace_back(torch::randint(0, int_high_, sizes_[k], torch::TensorOptions().dtype(t)));
      else
        out.emplace_back(torch::randn(sizes_[k], torch::TensorOptions().dtype(t)));
    }
    for (const auto& f : files_) out.emplace_back(f[i % f.size()]);
    return out;
  }

 private:
  static std::vector<at::Tensor> load_tensors(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw UsageError("recorder: cannot read --input '" + file + "'");
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                  std::istreambuf_iterator<char>()};
    c10::IValue v;
    try {
      v = torch::pickle_load(bytes);
    } catch (const std::exception&) {
      throw UsageError("recorder: --input '" + file + "' is not a tensor saved with torch.save");
    }
    std::vector<at::Tensor> out;
    if (v.isTensor())
      out.push_back(v.toTensor());
    else if (v.isList() || v.isTuple()) {
      const auto items = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
      for (const c10::IValue& e : items) {
        if (!e.isTensor())
          throw UsageError("recorder: --input '" + file + "' holds a list with a non-tensor item");
        out.push_back(e.toTensor());
      }
    }
    if (out.empty())
      throw UsageError("recorder: --input '" + file + "' holds " + std::string(v.tagKind()) +
                       ", not a tensor or a list of tensors");
    return out;
  }

  std::vector<std::vector<std::int64_t>> sizes_;
  std::vector<std::string> dtypes_;
  std::vector<std::vector<at::Tensor>> files_;
  std::int64_t int_high_;
};

/// Whether torchinfo's forward of the model in `file` runs without the autograd paths the
/// recorded ops depend on. torchinfo runs under torch.no_grad() with hooks on every module: in
/// code PyTorch 1.13 scripted, an eval TransformerEncoderLayer then takes its fused path; from
/// PyTorch 2.1 on the layer refuses that path when hooks are attached, a check TorchScript
/// compiles away, so a file saved by 2.1 or later (it records `.data/serialization_id`) runs
/// with autograd to take the path torchinfo's run takes.
bool torchinfo_no_grad(const std::string& file) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(file);
    return recorder::detail::script::saved_by_at_least(reader.getAllRecords()).empty();
  } catch (const c10::Error&) {
    return true;  // load_model says what is wrong with the file
  }
}

recorder::TraceOptions trace_options(const Common& c) {
  return {.mode = c.train ? recorder::TrainMode::train : recorder::TrainMode::eval,
          .no_grad = c.grad_as_torchinfo ? torchinfo_no_grad(c.model) : c.no_grad};
}

/// One trace of the model on batch 0 (`record::Structure`, or `record::AtenOps`).
recorder::Trace trace_once(const Common& c) {
  torch::manual_seed(static_cast<std::uint64_t>(c.seed));
  const Inputs inputs(c);
  torch::jit::Module model = recorder::load_model(c.model);
  if (c.aten_ops)
    return recorder::Tracer<rr::AtenOps>(trace_options(c)).run(model, inputs.batch(0));
  return recorder::Tracer<rr::Structure>(trace_options(c)).run(model, inputs.batch(0));
}

void write_text(const std::string& out, const std::string& text) {
  if (out.empty() || out == "-") {
    std::cout << text;
  } else {
    recorder::detail::write_file_atomically(out, text);
    std::cerr << "recorder: wrote " << out << "\n";
  }
}

// ---- summary --------------------------------------------------------------------------------

struct SummaryArgs {
  Common common;
  int depth = 3;
  std::string columns;
  std::string row_settings;
  int col_width = 25;
  bool ascii = false;
  bool verbose = false;
  bool all_outputs = false;
  bool functional = false;
  std::string out;
};

recorder::SummaryOptions summary_options(const SummaryArgs& a) {
  recorder::SummaryOptions o;
  o.depth = a.depth;
  if (!a.columns.empty()) o.columns = cli::parse_columns(a.columns);
  if (!a.row_settings.empty()) {
    const cli::RowSettings r = cli::parse_row_settings(a.row_settings);
    o.row_settings = r.rows;
    o.ascii_only = r.ascii_only;
  }
  o.col_width = a.col_width;
  o.ascii_only = o.ascii_only || a.ascii;
  o.verbose = a.verbose;
  o.all_outputs = a.all_outputs;
  o.functional_mult_adds = a.functional;
  return o;
}

int run_summary(const SummaryArgs& a) {
  const recorder::SummaryOptions o = summary_options(a);
  if (!a.out.empty() && a.out != "-") cli::check_writable(a.out);
  write_text(a.out, recorder::summary(trace_once(a.common), o));
  return 0;
}

// ---- draw -----------------------------------------------------------------------------------

struct DrawArgs {
  Common common;
  std::string depth = "3";
  bool expand_nested = false;
  bool roll = false;
  bool inner_tensors = false;
  bool module_functions = false;
  std::string direction = "TB";
  bool no_shapes = false;
  bool show_params = false;
  bool not_strict = false;
  bool unreached = false;
  std::string graph_name;
  std::string format;
  double dot_timeout = -1;
  std::string out;
};

int run_draw(const DrawArgs& a) {
  const std::filesystem::path out = a.out;
  const cli::Format format = cli::parse_format(out, a.format);
  const recorder::RenderOptions o{.depth = cli::parse_depth(a.depth),
                                  .hide_inner_tensors = !a.inner_tensors,
                                  .show_shapes = !a.no_shapes,
                                  .direction = cli::parse_direction(a.direction),
                                  .graph_name = a.graph_name,
                                  .expand_nested = a.expand_nested,
                                  .hide_module_functions = !a.module_functions,
                                  .roll = a.roll,
                                  .strict = !a.not_strict,
                                  .show_params = a.show_params,
                                  .hide_unreached = !a.unreached};
  cli::check_writable(out);
  std::optional<std::chrono::milliseconds> timeout;
  if (a.dot_timeout >= 0)
    timeout = std::chrono::milliseconds{static_cast<std::int64_t>(a.dot_timeout * 1000 + 0.5)};
  const auto render = [&](const recorder::Trace& t) -> std::filesystem::path {
    switch (format) {
      case cli::Format::dot:
        return recorder::render_to_file<recorder::backend::Dot>(t, o, out);
      case cli::Format::svg:
        return recorder::render_to_file(t, o, out, recorder::backend::Svg{.timeout = timeout});
      case cli::Format::png:
        return recorder::render_to_file(t, o, out, recorder::backend::Png{.timeout = timeout});
      case cli::Format::json:
        return recorder::render_to_file<recorder::backend::Json>(t, o, out);
      case cli::Format::json_view:
        return recorder::render_to_file<recorder::backend::JsonView>(t, o, out);
      case cli::Format::mermaid:
        return recorder::render_to_file<recorder::backend::Mermaid>(t, o, out);
      case cli::Format::html:
        return recorder::render_to_file<recorder::backend::Html>(t, o, out);
      case cli::Format::model_explorer:
        return recorder::render_to_file<recorder::backend::ModelExplorer>(t, o, out);
    }
    return out;
  };
  std::optional<recorder::Trace> traced;
  try {
    traced.emplace(trace_once(a.common));
  } catch (const recorder::TraceError& e) {
    // What ran before the failure is drawn, the failed calls marked; main reports the failure.
    if (e.partial_trace()) {
      const std::filesystem::path partial = render(*e.partial_trace());
      std::cerr << first_line(e.what()) << "\n"
                << "recorder: wrote the graph of what ran before the failure to "
                << partial.string() << "\n";
      throw Reported(e);
    }
    throw;
  }
  const recorder::Trace& t = *traced;
  const std::filesystem::path written = render(t);
  if (format == cli::Format::json) {
    std::cout << "wrote " << written.string() << ": the recorded graph, " << t.graph.size()
              << " nodes, " << t.graph.edge_count() << " edges\n";
  } else {
    const auto vg = recorder::visible_graph(t.graph, o);
    std::cout << "wrote " << written.string() << ": " << vg.nodes.size() << " nodes, "
              << vg.edges.size() << " edges\n";
  }
  return 0;
}

// ---- ranks: record and profile on many processes ---------------------------------------------

/// How `record` and `profile` run across processes: `--local-ranks N` spawns N ranks on
/// 127.0.0.1; `--distributed` is one rank of a torchrun job; `--rank-of` marks a spawned rank.
struct RankArgs {
  int local_ranks = 0;       // > 0: spawn that many ranks, merge on rank 0
  bool distributed = false;  // one rank of a torchrun job
  std::string rank_of;       // "r,world,store": a rank spawned by --local-ranks
};

void add_rank_options(CLI::App& sub, RankArgs& r, const std::string& split) {
  sub.add_option("--local-ranks", r.local_ranks, "Run N ranks on 127.0.0.1 (c10d Gloo): " + split);
  sub.add_flag("--distributed", r.distributed,
               "Be one rank of a job launched by torchrun (RANK, WORLD_SIZE, MASTER_ADDR, "
               "MASTER_PORT): the same split and merge");
  sub.add_option("--rank-of", r.rank_of)->group("");  // set by --local-ranks
}

/// Where this process stands in a job of ranks: one process alone, or rank `rank` of `world`.
struct RankPlace {
  int rank = 0, world = 1;
  std::string store;  // the FileStore of a spawned rank; empty under torchrun
  bool joined = false;
};

RankPlace rank_place(const RankArgs& a) {
  RankPlace p;
  if (!a.rank_of.empty()) {
    const auto first = a.rank_of.find(','), second = a.rank_of.find(',', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      throw UsageError("recorder: --rank-of takes rank,world,store");
    p.rank = std::stoi(a.rank_of.substr(0, first));
    p.world = std::stoi(a.rank_of.substr(first + 1, second - first - 1));
    p.store = a.rank_of.substr(second + 1);
    p.joined = true;
  } else if (a.distributed) {
    const char* rank = std::getenv("RANK");
    const char* world = std::getenv("WORLD_SIZE");
    if (rank == nullptr || world == nullptr)
      throw UsageError(
          "recorder: --distributed joins a job launched by torchrun: RANK and "
          "WORLD_SIZE are not set (or use --local-ranks N)");
    p.rank = std::stoi(rank);
    p.world = std::stoi(world);
    p.joined = true;
  }
  return p;
}

#ifdef RECORDER_CLI_DISTRIBUTED
/// The c10d group of a rank (`place.joined`); empty for one process alone.
launch::Group join_group(const RankPlace& place) {
  using namespace std::chrono_literals;
  if (!place.joined) return {};
  return place.store.empty() ? launch::env_group(120s)
                             : launch::file_group(place.store, place.rank, place.world, 120s);
}

/// `--local-ranks N`: runs this command line N times, each a rank of a job meeting through a
/// FileStore in a fresh folder on 127.0.0.1; rank 0 writes what was merged.
int spawn_ranks(int local_ranks) {
  std::vector<std::string> args;
  for (std::size_t i = 1; i < given_args.size(); ++i) {
    if (given_args[i] == "--local-ranks") {
      ++i;  // and its value
      continue;
    }
    if (given_args[i].starts_with("--local-ranks=")) continue;
    args.push_back(given_args[i]);
  }
  const auto folder = launch::temp_folder("recorder_ranks_");
  const auto codes = launch::run_ranks(
      local_ranks,
      [&](int r) {
        std::vector<std::string> mine = args;
        mine.push_back("--rank-of=" + std::to_string(r) + "," + std::to_string(local_ranks) + "," +
                       (folder / "store").string());
        return mine;
      },
      [](int) { return std::string(); }, std::chrono::hours(24));
  std::filesystem::remove_all(folder);
  for (std::size_t r = 0; r < codes.size(); ++r)
    if (codes[r] != 0) {
      std::cerr << "recorder: rank " << r << " of " << codes.size() << " failed (exit " << codes[r]
                << ")\n";
      return codes[r] == 2 ? 2 : 1;
    }
  return 0;
}
#endif

/// Checks the rank options. With `--local-ranks`, runs the ranks and gives their exit code;
/// otherwise nothing: this process does the work, alone or as one rank of a job.
std::optional<int> run_local_ranks(const RankArgs& a) {
  if (a.local_ranks == 0 && !a.distributed && a.rank_of.empty()) return std::nullopt;
#ifndef RECORDER_CLI_DISTRIBUTED
  throw UsageError(
      "recorder: this recorder was built without libgloo-dev: no --local-ranks "
      "or --distributed");
#else
  if (a.local_ranks < 0 || a.local_ranks > 64)
    throw UsageError("recorder: --local-ranks takes 1 to 64, not " + std::to_string(a.local_ranks));
  if (a.local_ranks != 0 && a.distributed)
    throw UsageError("recorder: give --local-ranks or --distributed, not both");
  if (a.local_ranks == 0) return std::nullopt;
  return spawn_ranks(a.local_ranks);
#endif
}

/// "1 batch", "3 batches".
std::string counted(std::size_t n, std::string_view noun) {
  std::string out = std::to_string(n) + " " + std::string(noun);
  if (n != 1) out += noun.back() == 'h' ? "es" : "s";
  return out;
}

// ---- profile --------------------------------------------------------------------------------

struct ProfileArgs {
  Common common;
  int warmup = 3;
  int runs = 20;
  int depth = 3;
  bool backward = false;
  bool expand_nested = false;
  std::string out;
  std::string draw;
  RankArgs ranks;
};

/// Times `model` over `a.runs` runs after `a.warmup` (record::Timing<Mean>, with the aten ops
/// of leaves under --aten-ops), then prints the summary with time columns, and writes the trace
/// and the time-coloured drawing when asked. On ranks (`group` set), rank r runs batches r,
/// r + world, ...; the times are merged on rank 0, which prints and writes everything, the
/// Chrome trace with a process per rank.
template <class... Extra>
int profile_with(const ProfileArgs& a, const RankPlace& place, c10d::ProcessGroup* group) {
  const auto batch_of = [&](const Inputs& inputs, int i) {
    const auto k = static_cast<std::size_t>(i * place.world + place.rank);
    if (place.joined) torch::manual_seed(static_cast<std::uint64_t>(a.common.seed) + k);
    return inputs.batch(k);
  };
  torch::manual_seed(static_cast<std::uint64_t>(a.common.seed));
  const Inputs inputs(a.common);
  torch::jit::Module model = recorder::load_model(a.common.model);
  using Timed = rr::Timing<rd::Mean>;
  Timed warm;
  recorder::Tracer<Extra..., Timed> warming(trace_options(a.common), Extra{}..., warm);
  for (int i = 0; i < a.warmup; ++i) warming.run(model, batch_of(inputs, i));
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
    auto traced = tracer.run(model, std::move(batch));
    if (a.backward) {
      at::Tensor sum;
      recorder::detail::for_each_tensor(traced.output, [&sum](const at::Tensor& t) {
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
  recorder::CallTimes times;
  std::string chrome;  // the Chrome trace of every rank, on rank 0
#ifdef RECORDER_CLI_DISTRIBUTED
  if (group != nullptr) {
    times = recorder::call_times(recorder::merged_across(timing, *group, {.root = 0}));
    if (!a.out.empty()) chrome = recorder::gather_chrome_trace(runs, name, *group, {.root = 0});
    if (place.rank != 0) return 0;
  }
#endif
  if (group == nullptr) times = recorder::call_times(timing);
  recorder::SummaryOptions o;
  o.depth = a.depth;
  o.columns = {recorder::SummaryColumn::output_size, recorder::SummaryColumn::num_params,
               recorder::SummaryColumn::time, recorder::SummaryColumn::self_time,
               recorder::SummaryColumn::time_percent};
  o.col_width = 16;
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
    if (group != nullptr) {
      written = recorder::detail::with_extension(a.out, recorder::backend::ChromeTrace::extension);
      recorder::detail::write_file_atomically(written, chrome);
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
    const recorder::RenderOptions ro{.depth = a.depth, .expand_nested = a.expand_nested};
    const std::filesystem::path path(a.draw);
    std::filesystem::path written;
    if (path.extension() == ".svg")
      written = recorder::render_to_file(
          *last, ro, path, recorder::backend::Svg{.report = nullptr, .times = &times});
    else if (path.extension() == ".png")
      written = recorder::render_to_file(
          *last, ro, path, recorder::backend::Png{.report = nullptr, .times = &times});
    else
      written =
          recorder::render_to_file(*last, ro, path, recorder::backend::TimeDot{.times = &times});
    std::cerr << "recorder: wrote " << written.string() << ": module calls coloured by time";
    if (place.joined)
      std::cerr << " (over " << counted(static_cast<std::size_t>(place.world), "rank") << ")";
    std::cerr << "\n";
  }
  return 0;
}

/// `recorder profile`: the summary table with each call's time, self time and share (mean over
/// `--runs` after `--warmup`, over every rank with --local-ranks / --distributed), `-o` the
/// Chrome/Perfetto trace, `--draw` the drawing coloured by time.
int run_profile(const ProfileArgs& a) {
  if (a.runs < 1) throw UsageError("recorder: --runs must be at least 1");
  if (a.warmup < 0) throw UsageError("recorder: --warmup must be 0 or more");
  if (!a.out.empty()) cli::check_writable(a.out);
  if (!a.draw.empty()) cli::check_writable(a.draw);
  if (const auto code = run_local_ranks(a.ranks)) return *code;
#ifdef RECORDER_CLI_DISTRIBUTED
  const RankPlace place = rank_place(a.ranks);
  const launch::Group group = join_group(place);
  c10d::ProcessGroup* pg = group.get();
#else
  const RankPlace place;
  c10d::ProcessGroup* pg = nullptr;
#endif
  if (a.common.aten_ops) return profile_with<rr::AtenOps>(a, place, pg);
  return profile_with<>(a, place, pg);
}

// ---- record ---------------------------------------------------------------------------------

struct RecordArgs {
  Common common;
  std::string layers;
  std::string what = "output";
  std::string reduce = "all";
  std::size_t batches = 0;
  std::size_t bins = 100;
  std::string range;
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

template <recorder::CapturePoint W, class R>
int record_with(const RecordArgs& a, std::vector<recorder::LayerAddress> layers, R reduction) {
  const Common& c = a.common;
  constexpr bool gradients =
      W == recorder::CapturePoint::backward_output || W == recorder::CapturePoint::backward_input;
  if (gradients && c.no_grad)
    throw UsageError("recorder: --what grad-output and grad-input need autograd: drop --no-grad");
  const RankPlace place = rank_place(a.ranks);
#ifdef RECORDER_CLI_DISTRIBUTED
  const launch::Group group = join_group(place);
#endif
  torch::manual_seed(static_cast<std::uint64_t>(c.seed));
  const Inputs inputs(c);
  torch::jit::Module model = recorder::load_model(c.model);
  rr::Capture<W, R> acts(std::move(layers), std::move(reduction));
  if (a.sample) acts.data(recorder::KeptData::sample);
  recorder::Tracer<rr::Capture<W, R>> tracer(trace_options(c), acts);
  const std::size_t batches = a.batches > 0 ? a.batches : inputs.stored_batches();
  // Ranks: rank r runs batches r, r + world, ...; random batch i is drawn from seed + i, so
  // any number of ranks records the same batches.
  Progress progress(place.rank == 0 ? batches : 0);
  for (std::size_t i = 0; i < batches; ++i) {
    if (i % static_cast<std::size_t>(place.world) != static_cast<std::size_t>(place.rank)) continue;
    if (place.joined) torch::manual_seed(static_cast<std::uint64_t>(c.seed) + i);
    const auto t = tracer.run(model, inputs.batch(i));
    if constexpr (gradients) {
      // The gradient of the sum of every floating output: what a scalar loss would give.
      at::Tensor loss;
      recorder::detail::for_each_tensor(t.output, [&loss](const at::Tensor& y) {
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
  const auto report = [&](const rr::Capture<W, R>& recorded) {
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
#ifdef RECORDER_CLI_DISTRIBUTED
  if (place.joined) {  // every reduction the command line offers is mergeable
    const auto merged = recorder::merged_across(acts, *group, {.root = 0});
    return place.rank == 0 ? report(merged) : 0;
  }
#endif
  return report(acts);
}

template <recorder::CapturePoint W>
int record_reduced(const RecordArgs& a, std::vector<recorder::LayerAddress> layers) {
  switch (cli::parse_reduce(a.reduce)) {
    case cli::Reduce::all:
      return record_with<W>(a, std::move(layers), rd::KeepAll{.max_bytes = a.max_bytes});
    case cli::Reduce::last:
      return record_with<W>(a, std::move(layers), rd::Last{});
    case cli::Reduce::sum:
      return record_with<W>(a, std::move(layers), rd::Sum{});
    case cli::Reduce::mean:
      return record_with<W>(a, std::move(layers), rd::Mean{});
    case cli::Reduce::moments:
      return record_with<W>(a, std::move(layers), rd::Moments{.correction = a.correction});
    case cli::Reduce::minmax:
      return record_with<W>(a, std::move(layers), rd::MinMax{});
    case cli::Reduce::histogram: {
      if (a.range.empty())
        throw UsageError(
            "recorder: --reduce histogram needs --range lo,hi (and --bins, default 100)");
      if (a.bins == 0) throw UsageError("recorder: --bins must be at least 1");
      const auto [lo, hi] = cli::parse_range(a.range);
      return record_with<W>(a, std::move(layers), rd::Histogram(a.bins, lo, hi));
    }
  }
  return 1;
}

int run_record(const RecordArgs& a) {
  std::vector<recorder::LayerAddress> layers = cli::parse_layers(a.layers);
  const cli::Record what = cli::parse_what(a.what);
  (void)cli::parse_reduce(a.reduce);
  if (std::filesystem::path(a.out).extension().empty())
    throw UsageError("recorder: -o '" + a.out + "' needs an extension, like acts.pt");
  cli::check_writable(a.out);
  if (const auto code = run_local_ranks(a.ranks)) return *code;
  using W = recorder::CapturePoint;
  switch (what) {
    case cli::Record::output:
      return record_reduced<W::forward_output>(a, std::move(layers));
    case cli::Record::input:
      return record_reduced<W::forward_input>(a, std::move(layers));
    case cli::Record::pre:
      return record_reduced<W::forward_pre>(a, std::move(layers));
    case cli::Record::grad_output:
      return record_reduced<W::backward_output>(a, std::move(layers));
    case cli::Record::grad_input:
      return record_reduced<W::backward_input>(a, std::move(layers));
  }
  return 1;
}

/// Prints the summary of what ran before a failure (when there is one); exit code 1.
int partial_summary(const recorder::TraceError& e) {
  if (e.partial_trace()) {
    std::cerr << "recorder: the model failed; the summary of what ran before the failure:\n";
    std::cout << recorder::summary(*e.partial_trace());
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"recorder " + std::string(recorder::version) +
               ": trace a TorchScript model as it runs, and show its layers (summary), draw it "
               "(draw) or record "
               "the activations and gradients of chosen layers (record). Exit codes: 0 done, 1 the "
               "model failed "
               "(the partial summary is printed), 2 a command line or input it cannot act on."};
  app.name("recorder");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(recorder::version) + " (libtorch " +
                                        recorder::torch_version() + ")");
  given_args.assign(argv, argv + argc);

  SummaryArgs summary;
  CLI::App* sub_summary =
      app.add_subcommand("summary", "Print torchinfo's summary table of the model");
  add_common(*sub_summary, summary.common, /*as_torchinfo=*/true);
  sub_summary->add_option("--depth", summary.depth, "Rows down to this depth (default 3)");
  sub_summary->add_option(
      "--columns", summary.columns,
      "Columns, comma-separated: input_size, output_size, num_params, params_percent, "
      "kernel_size, groups, mult_adds, trainable (default output_size,num_params)");
  sub_summary->add_option(
      "--row-settings", summary.row_settings,
      "Row labels, comma-separated: depth, var_names, ascii_only (default depth)");
  sub_summary->add_option("--col-width", summary.col_width,
                          "Width of every column but the first (default 25)");
  sub_summary->add_flag("--ascii", summary.ascii, "Tree drawn with ASCII characters");
  sub_summary->add_flag("--verbose", summary.verbose,
                        "One row per parameter under each module (torchinfo's verbose=2)");
  sub_summary->add_flag("--all-outputs", summary.all_outputs,
                        "Shapes of every output, not just the first");
  sub_summary->add_flag(
      "--functional-mult-adds", summary.functional,
      "Add the mult-adds of matmuls, convolutions and attention written as functions (with "
      "--aten-ops: inside leaf modules too), which torchinfo misses");
  sub_summary->add_option("-o,--output", summary.out,
                          "Write the table to this file instead of standard output");

  DrawArgs draw;
  CLI::App* sub_draw = app.add_subcommand(
      "draw",
      "Draw the model's graph (torchview's pictures) into a file whose extension names the format");
  add_common(*sub_draw, draw.common);
  sub_draw
      ->add_option("-o,--output", draw.out,
                   "The file to write: .dot, .svg, .png (Graphviz), .json (the drawn graph), .mmd "
                   "(Mermaid), "
                   ".html (the interactive viewer), .explorer.json (Model Explorer's graph)")
      ->required();
  sub_draw->add_option("--format", draw.format,
                       "dot, svg, png, json (the whole recorded graph), json-view, mermaid, html, "
                       "model-explorer: overrides the extension");
  sub_draw->add_option("--depth", draw.depth,
                       "Modules deeper are not drawn: an integer, or inf (default 3)");
  sub_draw->add_flag("--expand-nested", draw.expand_nested,
                     "Draw composite modules as clusters around their contents");
  sub_draw->add_flag("--roll", draw.roll, "Draw repeated calls of a module once");
  sub_draw->add_flag("--show-inner-tensors", draw.inner_tensors,
                     "Draw every intermediate tensor (torchview's hide_inner_tensors=False)");
  sub_draw->add_flag("--show-module-functions", draw.module_functions,
                     "Draw the ops inside leaf modules (needs --aten-ops; torchview's "
                     "hide_module_functions=False)");
  sub_draw->add_option("--direction", draw.direction, "TB, LR, BT or RL (default TB)");
  sub_draw->add_flag("--no-shapes", draw.no_shapes,
                     "Leave the input and output shapes off the nodes");
  sub_draw->add_flag("--show-params", draw.show_params, "Show parameter counts on module nodes");
  sub_draw->add_flag("--show-unreached", draw.unreached,
                     "Draw the ops no model input reaches too (torch.arange for positions, a mask "
                     "sliced from a buffer): torchview, tracing from the inputs, never sees them, "
                     "so by default they are not drawn. With --aten-ops: the aten-level picture");
  sub_draw->add_flag("--not-strict", draw.not_strict,
                     "Draw parallel edges once per tensor, not merged");
  sub_draw->add_option("--graph-name", draw.graph_name,
                       "The graph's name (default: the model's class)");
  sub_draw
      ->add_option(
          "--dot-timeout", draw.dot_timeout,
          "Seconds Graphviz's dot may run for .svg/.png before sfdp lays the graph out instead "
          "(default: $RECORDER_DOT_TIMEOUT, else 60; 0: no limit)")
      ->type_name("SECONDS")
      ->check(CLI::NonNegativeNumber);

  RecordArgs record;
  CLI::App* sub_record = app.add_subcommand(
      "record",
      "Record the inputs, outputs or gradients of chosen layers over batches, reduced, into a file "
      "Python's torch.load reads");
  add_common(*sub_record, record.common);
  sub_record
      ->add_option(
          "--layers", record.layers,
          "Layers, comma-separated: paths (layer4, layer1.0.relu#1), depth-index labels (3-18), "
          "class:Conv2d, index:5, all")
      ->required();
  sub_record->add_option("--what", record.what,
                         "output, input (after the forward), pre (before it), grad-output, "
                         "grad-input (default output)");
  sub_record->add_option(
      "--reduce", record.reduce,
      "all (keep every batch), last, sum, mean, moments, minmax, histogram (default all)");
  sub_record->add_option("--batches", record.batches,
                         "Forwards to run (default: as many as the --input files hold, else 1); "
                         "fresh random inputs each");
  sub_record->add_option("--bins", record.bins, "Histogram bins (default 100)");
  sub_record->add_option("--range", record.range,
                         "Histogram range lo,hi (needed by --reduce histogram)");
  sub_record->add_option("--correction", record.correction,
                         "Moments: the variance's correction, as torch.var (default 1)");
  sub_record->add_option("--max-bytes", record.max_bytes,
                         "--reduce all: stop with an error past this many bytes (default: no cap)");
  sub_record->add_flag("--sample", record.sample, "Keep the first element of each batch only");
  add_rank_options(*sub_record, record.ranks,
                   "rank r records batches r, r+N, ...; rank 0 merges them and writes -o");
  sub_record
      ->add_option("-o,--output", record.out,
                   "The file to write (a dict from layer to result, for torch.load)")
      ->required();

  ProfileArgs profile;
  CLI::App* sub_profile = app.add_subcommand(
      "profile",
      "Time every module call over several runs: the summary table with each call's time, self "
      "time and share, and (-o) a Chrome/Perfetto trace");
  add_common(*sub_profile, profile.common);
  sub_profile->add_option("--warmup", profile.warmup, "Untimed runs first (default 3)");
  sub_profile->add_option("--runs", profile.runs, "Timed runs (default 20)");
  sub_profile->add_option("--depth", profile.depth, "Rows down to this depth (default 3)");
  sub_profile->add_option("-o,--output", profile.out,
                          "Write the Chrome trace (.trace.json when no extension) here");
  sub_profile->add_option("--draw", profile.draw,
                          "Draw the graph to --depth with module calls coloured by time (.svg, "
                          ".png, else DOT)");
  sub_profile->add_flag("--backward", profile.backward,
                        "Also time each call's backward (the inputs require grad; the sum of "
                        "the outputs is back-propagated): a second span set in the trace");
  sub_profile->add_flag("--expand-nested", profile.expand_nested,
                        "--draw: composite modules as clusters, each with its time and a border "
                        "coloured by it");
  add_rank_options(*sub_profile, profile.ranks,
                   "rank r times runs on batches r, r+N, ...; rank 0 prints the times over "
                   "every rank and writes -o, a trace with a process per rank");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "recorder: " << e.what() << " (see recorder --help)\n";
    return 2;
  }

  try {
    if (*sub_summary) return run_summary(summary);
    if (*sub_draw) return run_draw(draw);
    if (*sub_record) return run_record(record);
    if (*sub_profile) return run_profile(profile);
  } catch (const UsageError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const recorder::ModelFileError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const recorder::UnknownLayer& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const recorder::AmbiguousLayer& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const Reported& r) {
    return partial_summary(r.error);
  } catch (const recorder::TraceError& e) {
    std::cerr << first_line(e.what()) << "\n";
    return partial_summary(e);
  } catch (const std::exception& e) {
    std::cerr << first_line(e.what()) << "\n";
    return 1;
  }
  return 1;
}
