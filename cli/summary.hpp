#pragma once
/// `recorder summary`: torchinfo's table of the model, run as torchinfo runs it.

#include "common.hpp"

#include <recorder/render/summary.hpp>

#include <string>

namespace recorder::cli {

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

inline recorder::SummaryOptions summary_options(const SummaryArgs& a) {
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

inline int run_summary(const SummaryArgs& a) {
  const recorder::SummaryOptions o = summary_options(a);
  if (!a.out.empty() && a.out != "-") cli::check_writable(a.out);
  write_text(a.out, recorder::summary(trace_once(a.common), o));
  return 0;
}

/// `recorder summary` and its options.
inline CLI::App* add_summary(CLI::App& app, SummaryArgs& a) {
  CLI::App* sub = app.add_subcommand("summary", "Print torchinfo's summary table of the model");
  add_common(*sub, a.common, /*as_torchinfo=*/true);
  sub->add_option("--depth", a.depth, "Rows down to this depth (default 3)");
  sub->add_option("--columns", a.columns,
                  "Columns, comma-separated: input_size, output_size, num_params, params_percent, "
                  "kernel_size, groups, mult_adds, trainable (default output_size,num_params)");
  sub->add_option("--row-settings", a.row_settings,
                  "Row labels, comma-separated: depth, var_names, ascii_only (default depth)");
  sub->add_option("--col-width", a.col_width, "Width of every column but the first (default 25)");
  sub->add_flag("--ascii", a.ascii, "Tree drawn with ASCII characters");
  sub->add_flag("--verbose", a.verbose,
                "One row per parameter under each module (torchinfo's verbose=2)");
  sub->add_flag("--all-outputs", a.all_outputs, "Shapes of every output, not just the first");
  sub->add_flag(
      "--functional-mult-adds", a.functional,
      "Add the mult-adds of matmuls, convolutions and attention written as functions (with "
      "--aten-ops: inside leaf modules too), which torchinfo misses");
  sub->add_option("-o,--output", a.out, "Write the table to this file instead of standard output");
  return sub;
}

}  // namespace recorder::cli
