#pragma once
/// `recorder summary`: torchinfo's table of the model, run as torchinfo runs it.

#include "common.hpp"

#include <recorder/render/summary.hpp>

#include <string>

namespace recorder::cli {

// ---- summary --------------------------------------------------------------------------------

struct SummaryArgs {
  Common common;
  TableArgs table;
  std::string out;
};

inline int run_summary(const SummaryArgs& a) {
  const recorder::SummaryOptions o = table_options(a.table);
  if (!a.out.empty() && a.out != "-") cli::check_writable(a.out);
  write_text(a.out, recorder::summary(trace_once(a.common), o));
  return 0;
}

/// `recorder summary` and its options.
inline CLI::App* add_summary(CLI::App& app, SummaryArgs& a) {
  CLI::App* sub = app.add_subcommand("summary", "Print torchinfo's summary table of the model");
  add_common(*sub, a.common, /*as_torchinfo=*/true);
  add_table_options(*sub, a.table, "default output_size,num_params");
  sub->add_option("-o,--output", a.out, "Write the table to this file instead of standard output");
  return sub;
}

}  // namespace recorder::cli
