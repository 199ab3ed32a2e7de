#pragma once
/// What every subcommand of `recorder` shares: the model and its inputs (`Common`, `Inputs`),
/// the grad mode torchinfo would run, one trace of the model, writing text, and the errors main
/// turns into exit codes. Included by main.cpp only: the program is one translation unit.

#include "options.hpp"

#include <recorder/exported.hpp>
#include <recorder/script.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace recorder::cli {

namespace rr = recorder::record;
namespace rd = recorder::reduce;

/// The first line of an error message (a TorchScript error carries its traceback after it).
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

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
  std::optional<std::int64_t> int_high;
  /// Integer inputs need --int-high: the subcommand computes on the inputs' values (record,
  /// profile), where all-zero token ids would mislead.
  bool values_matter = false;
  bool train = false;
  bool eval = false;
  bool no_grad = false;
  /// Neither --grad nor --no-grad where the forward runs as torchinfo's (summary): `no_grad`
  /// is decided by the file (`as_torchinfo`).
  bool grad_as_torchinfo = false;
  bool aten_ops = false;
};

/// `as_torchinfo`: the subcommand runs the forward as torchinfo's does unless --grad or --no-grad
/// say otherwise (summary; see `torchinfo_no_grad`). `values_matter`: what the subcommand
/// computes depends on the inputs' values (record, profile), so integer inputs need --int-high.
void add_common(CLI::App& sub, Common& c, bool as_torchinfo = false, bool values_matter = false) {
  c.values_matter = values_matter;
  sub.add_option(
         "model", c.model,
         "The model file: TorchScript (torch.jit.script(m).save(path) or torch.jit.trace), "
         "or a torch.export archive (torch.export.save(ep, path)): summary and draw read it "
         "without running when no inputs are given; given inputs, or for record and "
         "profile, it runs (on its sample inputs when none are given)")
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
                 "int64, int32, int16, int8, uint8, bool); once for all, or once per input "
                 "(default float32; int64 when --int-high is given)")
      ->type_name("DTYPE");
  sub.add_option("--int-high", c.int_high,
                 std::string("Integer inputs are drawn from [0, N): give the vocabulary size for "
                             "token ids. Alone it makes the inputs int64") +
                     (values_matter ? "; --dtype int64 needs it here"
                                    : " (without it, integer inputs are zeros, as torchinfo's)"))
      ->type_name("N");
  sub.add_option("--seed", c.seed,
                 "The seed of the random inputs (default 0). They are drawn as Python draws "
                 "them: torch.manual_seed(seed), then for each batch and each --input-size in "
                 "order, torch.randn(sizes, dtype=...) for floating dtypes and "
                 "torch.randint(0, N, sizes, dtype=...) for integer ones (with --local-ranks or "
                 "--distributed, batch k is drawn after torch.manual_seed(seed + k))")
      ->type_name("N");
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

inline c10::ScalarType scalar_type(const std::string& name) {
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
  /// `defaults`: what a model runs on without input options (an exported program's sample
  /// inputs); empty, the options are required.
  explicit Inputs(const Common& c, std::vector<c10::IValue> defaults = {}) {
    if (c.input_sizes.empty() && c.input_files.empty() && !defaults.empty()) {
      defaults_ = std::move(defaults);
      return;
    }
    if (c.input_sizes.empty() == c.input_files.empty())
      throw UsageError(c.input_sizes.empty()
                           ? "recorder: give the model's inputs: --input-size 1,3,224,224 (once "
                             "per input) or --input x.pt"
                           : "recorder: give either --input-size or --input, not both");
    if (c.int_high && *c.int_high < 1) throw UsageError("recorder: --int-high must be at least 1");
    for (const std::string& s : c.input_sizes) sizes_.push_back(cli::parse_sizes(s));
    if (!c.dtypes.empty() && c.dtypes.size() != 1 && c.dtypes.size() != sizes_.size())
      throw UsageError("recorder: give --dtype once, or once per --input-size (" +
                       std::to_string(sizes_.size()) + "), not " + std::to_string(c.dtypes.size()) +
                       " times");
    if (!c.dtypes.empty() && sizes_.empty())
      throw UsageError("recorder: --dtype applies to --input-size inputs only");
    // --int-high alone makes token ids; given, it must have an integer input to apply to.
    const std::string implied = c.int_high ? "int64" : "float32";
    for (std::size_t i = 0; i < sizes_.size(); ++i)
      dtypes_.push_back(
          c.dtypes.empty() ? implied : cli::parse_dtype(c.dtypes[c.dtypes.size() == 1 ? 0 : i]));
    const bool integers = std::any_of(dtypes_.begin(), dtypes_.end(), cli::is_integer_dtype);
    if (c.int_high && !integers)
      throw UsageError(sizes_.empty()
                           ? "recorder: --int-high applies to --input-size inputs, not to --input"
                           : "recorder: --int-high applies to integer inputs, and --dtype makes "
                             "none: give --dtype int64 (or leave --dtype out)");
    if (integers && !c.int_high && c.values_matter)
      throw UsageError(
          "recorder: integer inputs are drawn from [0, --int-high): give --int-high (the "
          "vocabulary size for token ids), or they would all be 0");
    int_high_ = c.int_high.value_or(1);
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
    if (!defaults_.empty()) return defaults_;
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
    if (!in)
      throw UsageError("recorder: cannot read --input '" + file + "': " + std::strerror(errno));
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
  std::vector<c10::IValue> defaults_;
  std::int64_t int_high_ = 1;
};

/// Whether torchinfo's forward of the model in `file` runs without the autograd paths the
/// recorded ops depend on. torchinfo runs under torch.no_grad() with hooks on every module: in
/// code PyTorch 1.13 scripted, an eval TransformerEncoderLayer then takes its fused path; from
/// PyTorch 2.1 on the layer refuses that path when hooks are attached, a check TorchScript
/// compiles away, so a file saved by 2.1 or later (it records `.data/serialization_id`) runs
/// with autograd to take the path torchinfo's run takes.
inline bool torchinfo_no_grad(const std::string& file) {
  return recorder::saved_by_pytorch_at_least(file).empty();
}

inline recorder::TraceOptions trace_options(const Common& c) {
  return {.mode = c.train ? recorder::TrainMode::train : recorder::TrainMode::eval,
          .no_grad = c.grad_as_torchinfo ? torchinfo_no_grad(c.model) : c.no_grad};
}

/// One trace of the model on batch 0 (`record::Structure`, or `record::AtenOps`); a
/// `torch.export` archive is read without running (`static_trace`), so it takes no inputs.
/// A model file: TorchScript, or a torch.export program.
using Model = std::variant<torch::jit::Module, recorder::ExportedProgram>;

/// Whether `file` is read as a torch.export archive: it holds a program, or it is named `.pt2`
/// and is no TorchScript file (a damaged archive then gets the .pt2 reader's error).
inline bool exported_file(const std::string& file) {
  namespace ex = recorder::exported;
  const ex::ArchiveKind kind = ex::archive_kind(file);
  if (kind == ex::ArchiveKind::program || kind == ex::ArchiveKind::legacy_program ||
      kind == ex::ArchiveKind::compiled_only)
    return true;
  return std::filesystem::path(file).extension() == ".pt2" && kind != ex::ArchiveKind::torchscript;
}

/// The model in `c.model`, TorchScript or exported (by `exported_file`).
inline Model load_any(const Common& c) {
  if (exported_file(c.model)) return recorder::load_exported(c.model);
  return recorder::load_model(c.model);
}

/// Whether `c` gives the model's inputs.
inline bool has_inputs(const Common& c) { return !c.input_sizes.empty() || !c.input_files.empty(); }

/// What `model` runs on without input options: an exported program's sample inputs (or, where
/// this libtorch cannot read them, inputs of the shapes it was exported with, said on stderr);
/// nothing for a TorchScript model, which needs input options.
inline std::vector<c10::IValue> default_inputs(const Common& c, const Model& model) {
  const auto* program = std::get_if<recorder::ExportedProgram>(&model);
  if (program == nullptr || has_inputs(c)) return {};
  std::vector<c10::IValue> sample = recorder::sample_inputs(*program);
  if (!sample.empty()) return sample;
  std::cerr << "recorder: '" << c.model << "' has no sample inputs libtorch "
            << recorder::running_torch().version
            << " can read: running on random inputs of the shapes it was exported with\n";
  return recorder::inputs_like_exported(*program);
}

/// Runs `tracer` on `model` (either kind) with `inputs`.
template <class Tracer>
recorder::Traced<c10::IValue> run_model(Tracer& tracer, const Model& model,
                                        std::vector<c10::IValue> inputs) {
  return std::visit([&](const auto& m) { return tracer.run(m, std::move(inputs)); }, model);
}

inline recorder::Trace trace_once(const Common& c) {
  if (exported_file(c.model) && !has_inputs(c)) {  // read without running
    const recorder::ExportedProgram program = recorder::load_exported(c.model);
    for (const std::string& line : recorder::exported::dynamic_sizes(program.program))
      std::cerr << "recorder: dynamic size: " << line << "\n";
    return recorder::static_trace(program, {.aten_ops = c.aten_ops});
  }
  torch::manual_seed(static_cast<std::uint64_t>(c.seed));
  const Model model = load_any(c);
  const Inputs inputs(c, default_inputs(c, model));
  if (c.aten_ops) {
    recorder::Tracer<rr::AtenOps> tracer(trace_options(c));
    return run_model(tracer, model, inputs.batch(0));
  }
  recorder::Tracer<rr::Structure> tracer(trace_options(c));
  return run_model(tracer, model, inputs.batch(0));
}

inline void write_text(const std::string& out, const std::string& text) {
  if (out.empty() || out == "-") {
    std::cout << text;
  } else {
    recorder::write_to_file(out, text);
    std::cerr << "recorder: wrote " << out << "\n";
  }
}

/// The one line a command line CLI11 refused gets: what is wrong, and the help of the
/// subcommand it was for ("(see recorder profile --help)"). Unexpected arguments are listed in
/// the order they were given.
inline std::string usage_error(const CLI::App& app, const CLI::ParseError& e) {
  const std::vector<CLI::App*> subs = app.get_subcommands();
  const CLI::App* sub = subs.empty() ? nullptr : subs.back();
  const std::string help =
      sub == nullptr ? "recorder --help" : "recorder " + sub->get_name() + " --help";
  std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    std::vector<std::string> extras = (sub != nullptr ? sub : &app)->remaining();
    if (extras.empty()) extras = app.remaining();
    if (!extras.empty()) {
      what = extras.size() == 1 ? "unexpected argument" : "unexpected arguments";
      for (const std::string& x : extras) what += " " + x;
    }
  }
  return "recorder: " + what + " (see " + help + ")";
}

// ---- the summary table's options, for every subcommand that prints it ----------------------

struct TableArgs {
  int depth = 3;
  std::string columns{};
  std::string row_settings{};
  int col_width = 25;
  bool ascii = false;
  bool verbose = false;
  bool all_outputs = false;
  bool keyword_inputs = false;
  bool functional = false;
};

/// The table's options on `sub`; `columns_note` says what --columns means there.
inline void add_table_options(CLI::App& sub, TableArgs& t, const std::string& columns_note) {
  sub.add_option("--depth", t.depth, "Rows down to this depth (default 3)");
  sub.add_option("--columns", t.columns,
                 "Columns, comma-separated: input_size, output_size, num_params, params_percent, "
                 "kernel_size, groups, mult_adds, trainable (" +
                     columns_note + ")");
  sub.add_option("--row-settings", t.row_settings,
                 "Row labels, comma-separated: depth, var_names, ascii_only (default depth)");
  sub.add_option(
      "--col-width", t.col_width,
      "Width of every column but the first (default " + std::to_string(t.col_width) + ")");
  sub.add_flag("--ascii", t.ascii, "Tree drawn with ASCII characters");
  sub.add_flag("--verbose", t.verbose,
               "One row per parameter under each module (torchinfo's verbose=2)");
  sub.add_flag("--all-outputs", t.all_outputs, "Shapes of every output, not just the first");
  sub.add_flag("--keyword-inputs", t.keyword_inputs,
               "Input shapes of calls made with keyword arguments only, which torchinfo prints "
               "as --");
  sub.add_flag("--functional-mult-adds", t.functional,
               "Add the mult-adds of matmuls, convolutions and attention written as functions "
               "(with --aten-ops: inside leaf modules too), which torchinfo misses");
}

inline recorder::SummaryOptions table_options(const TableArgs& t) {
  recorder::SummaryOptions o;
  o.depth = t.depth;
  if (!t.columns.empty()) o.columns = cli::parse_columns(t.columns);
  if (!t.row_settings.empty()) {
    const cli::RowSettings r = cli::parse_row_settings(t.row_settings);
    o.row_settings = r.rows;
    o.ascii_only = r.ascii_only;
  }
  o.col_width = t.col_width;
  o.ascii_only = o.ascii_only || t.ascii;
  o.verbose = t.verbose;
  o.all_outputs = t.all_outputs;
  o.keyword_inputs = t.keyword_inputs;
  o.functional_mult_adds = t.functional;
  return o;
}

/// "1 batch", "3 batches".
inline std::string counted(std::size_t n, std::string_view noun) {
  std::string out = std::to_string(n) + " " + std::string(noun);
  if (n != 1) out += noun.back() == 'h' ? "es" : "s";
  return out;
}

/// Prints the summary of what ran before a failure (when there is one); exit code 1.
inline int partial_summary(const recorder::TraceError& e) {
  if (e.partial_trace()) {
    std::cerr << "recorder: the model failed; standard output has the summary of what ran "
                 "before the failure\n";
    std::cout << recorder::summary(*e.partial_trace());
  }
  return 1;
}

}  // namespace recorder::cli
