#pragma once
/// The options of the torchinfo-style summary table (`recorder::summary`): columns, row
/// settings and layout, with torchinfo's names and defaults (no libtorch).

#include <cstddef>
#include <string_view>
#include <vector>

namespace recorder {

struct CallTimes;  // render/call_times.hpp

/// A column of the summary table, with torchinfo's names (`col_names`).
enum class SummaryColumn {
  input_size,      ///< "Input Shape": the call's first input
  output_size,     ///< "Output Shape": the call's first output
  num_params,      ///< "Param #": `(n)` when none is trainable, `(recursive)` for a reused module
  params_percent,  ///< "Param %": share of the total
  kernel_size,     ///< "Kernel Shape": convolutions and poolings
  groups,          ///< "Groups": convolutions
  mult_adds,       ///< "Mult-Adds": torchinfo's estimate from parameters and output shape
  trainable,       ///< "Trainable": True, False, Partial or --
  time,            ///< "Time": the call's time, callees included (`SummaryOptions::times`)
  self_time,       ///< "Self Time": its time less the times of the rows shown under it
  time_percent,    ///< "Time %": its time as a share of the root call's
};

/// A column's title in the table's header, as torchinfo prints it (in `SummaryColumn` order).
constexpr std::string_view column_title(SummaryColumn c) noexcept {
  constexpr std::string_view titles[] = {"Input Shape",  "Output Shape", "Param #",   "Param %",
                                         "Kernel Shape", "Groups",       "Mult-Adds", "Trainable",
                                         "Time",         "Self Time",    "Time %"};
  return titles[static_cast<std::size_t>(c)];
}

/// What a row's label shows, as torchinfo's `row_settings`.
enum class SummaryRowSetting {
  depth,      ///< `Conv2d: 1-1`: depth and index at that depth
  var_names,  ///< `Conv2d (conv1)`: the name the parent registered it under
};

/// How `summary` lays the table out; torchinfo's parameter names and defaults.
///
/// `summary(trace, {.depth = 1, .columns = {SummaryColumn::output_size, SummaryColumn::mult_adds}})`
struct SummaryOptions {
  /// Module calls deeper than this are folded into their ancestor's row (root call: depth 0).
  int depth = 3;
  /// The columns, in order.
  std::vector<SummaryColumn> columns{SummaryColumn::output_size, SummaryColumn::num_params};
  /// Width of every column but the first.
  int col_width = 25;
  /// What row labels show.
  std::vector<SummaryRowSetting> row_settings{SummaryRowSetting::depth};
  /// Tree prefixes `+ ` and `|` instead of box-drawing characters.
  bool ascii_only = false;
  /// One row per parameter under each module row (torchinfo's `verbose=2`); only the
  /// parameters a module registers itself are listed.
  bool verbose = false;
  /// Beyond torchinfo: a `Functional mult-adds` line after `Total mult-adds`, with the
  /// mult-adds of the function ops recorded in the graph that torchinfo's per-module estimate
  /// misses (its issue #226: attention's QK^T and AV, matmuls and convolutions written in a
  /// forward). `Total mult-adds` does not change, so it stays comparable with torchinfo; the
  /// model's count is the two lines added. Off by default, so the table stays torchinfo's byte
  /// for byte.
  ///
  /// The ops and how each is counted are `recorder::functional_mult_adds`'s
  /// (`<recorder/graph/mult_adds.hpp>`): one mult-add per product, from the operands' shapes,
  /// for matmuls, convolutions and attention; every one of them in a composite forward and in a
  /// leaf torchinfo does not count (a `MultiheadAttention`, which has submodules: torchinfo
  /// prints `--` for it), and inside a leaf it counts only what its estimate misses. With
  /// `record::Structure` leaves are opaque: the line counts composite forwards, and what an
  /// uncounted leaf does with its parameters (torchinfo's formula, as if it were counted).
  ///
  /// `summary(Tracer<record::AtenOps>{}.run(net, x), {.functional_mult_adds = true})`
  bool functional_mult_adds = false;
  /// Beyond torchinfo: Input and Output Shape list every tensor of a call, equal shapes merged
  /// (`[1, 100, 512], 2 x [2, 100, 512]` for an LSTM's output, h and c), not just the first.
  /// Off by default, so the table stays torchinfo's byte for byte.
  bool all_outputs = false;
  /// Beyond torchinfo: Input Shape shows the tensors of a call made with keyword arguments only
  /// (`attn(query=x, key=x, value=x)` in a scripted model's source), which torchinfo's forward
  /// hooks do not see: it prints `--` there, and so does the table by default.
  bool keyword_inputs = false;
  /// Beyond torchinfo: the times the `time`, `self_time` and `time_percent` columns show, one
  /// per module call reduced over runs (`call_times(timing)` from a `record::Timing`); a line
  /// under the table says how they were reduced. A time column without them throws
  /// `std::invalid_argument`. A row folding deeper calls (`depth`) counts their time as its
  /// own, so the self times of all rows add up to the root's time.
  ///
  /// `summary(trace, {.columns = {SummaryColumn::output_size, SummaryColumn::time,
  /// SummaryColumn::self_time, SummaryColumn::time_percent}, .times = &times})`
  const CallTimes* times = nullptr;
};

}  // namespace recorder
