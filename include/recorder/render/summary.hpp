#pragma once
/// A torchinfo-style summary table of a trace: `recorder::summary(trace)` and `backend::Summary`.

#include <recorder/detail/text.hpp>
#include <recorder/graph/mult_adds.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/labels.hpp>
#include <recorder/render/options.hpp>
#include <recorder/render/call_times.hpp>
#include <recorder/render/summary_options.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

/// One row of the table (a module call at or above `depth`), its cells as printed.
struct SummaryRow {
  NodeId call;
  int depth = 0;
  std::string label{};               ///< `Conv2d: 1-1`, with ` (failed)` for a call that threw
  std::vector<std::string> cells{};  ///< one per `SummaryOptions::columns`
  std::optional<double> time_ns{};   ///< with `SummaryOptions::times`: the call's time
  std::optional<double> self_ns{};   ///< ... less the times of the rows shown under it
};

/// The numbers of a summary: its rows and its totals, before formatting.
struct SummaryTable {
  std::vector<SummaryRow> rows{};
  std::uint64_t total_params = 0;  ///< each parameter tensor once
  std::uint64_t trainable_params = 0;
  std::uint64_t total_mult_adds = 0;         ///< sum over every leaf call, reused ones each time
  std::uint64_t functional_mult_adds = 0;    ///< see `SummaryOptions::functional_mult_adds`
  std::uint64_t input_bytes = 0;             ///< the root's inputs, as Python's `sys.getsizeof`
  std::uint64_t forward_backward_bytes = 0;  ///< outputs of leaf calls with parameters, x2
  std::uint64_t param_bytes = 0;             ///< `total_params` x 4 (float32 parameters assumed)
  std::optional<double> total_time_ns{};     ///< with `SummaryOptions::times`: the root's time
};

namespace detail::summary_impl {

/// Bytes per element of a dtype named as libtorch names it ("Float", "Long", ...).
inline std::uint64_t element_size(std::string_view dtype) {
  if (dtype == "Double" || dtype == "Long" || dtype == "ComplexFloat") return 8;
  if (dtype == "Half" || dtype == "BFloat16" || dtype == "Short") return 2;
  if (dtype == "Byte" || dtype == "Char" || dtype == "Bool" || dtype == "QInt8" ||
      dtype == "QUInt8")
    return 1;
  if (dtype == "ComplexDouble") return 16;
  return 4;
}

/// Python's `f"{x:,.2f}"` for a non-negative x.
inline std::string fixed2(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  std::string s(buf);
  const auto dot = s.find('.');
  const std::uint64_t whole = std::stoull(s.substr(0, dot));
  return with_thousands(whole) + s.substr(dot);
}

/// torchinfo's `format_output_num` with automatic units: ` (M): 173.71`, ` (kB): 6.33`, `: 856`.
inline std::string format_number(std::uint64_t num, bool is_bytes) {
  struct Unit {
    double factor;
    const char* name;
  };
  static constexpr Unit units[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  const auto x = static_cast<double>(num);
  for (const Unit& u : units) {
    if (x >= u.factor) {
      const double v = x / u.factor;
      std::string s = " (";
      s += u.name;
      if (is_bytes) s += 'B';
      s += "): ";
      if (v == static_cast<double>(static_cast<std::uint64_t>(v)))
        s += with_thousands(static_cast<std::uint64_t>(v));
      else
        s += fixed2(v);
      return s;
    }
  }
  return ": " + with_thousands(num);
}

/// Display width of a UTF-8 string (code points, as Python's `len`).
inline std::size_t width(std::string_view s) {
  std::size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0u) != 0x80u) ++n;
  return n;
}

inline void pad(std::string& out, std::string_view s, std::size_t w) {
  out += s;
  for (std::size_t n = width(s); n < w; ++n) out += ' ';
}

/// torchinfo's `get_start_str`.
inline std::string start_str(int depth, bool ascii) {
  if (depth <= 0) return {};
  std::string s;
  for (int i = 1; i < depth; ++i) s += ascii ? "|    " : "\u2502    ";
  s += depth == 1 && !ascii ? "\u251c\u2500" : (ascii ? "+ " : "\u2514\u2500");
  return s;
}

/// The cell of module attribute `key` (`kernel_size`, `groups`): its value, or `--`.
inline std::string attribute_cell(const ModuleInfo& m, std::string_view key) {
  for (const auto& [k, v] : m.attributes)
    if (k == key) return v.empty() ? std::string("--") : v;
  return "--";
}

inline bool has(const std::vector<SummaryRowSetting>& rs, SummaryRowSetting r) {
  return std::find(rs.begin(), rs.end(), r) != rs.end();
}

/// What is known of one module call, all depths.
struct Call {
  NodeId id;
  int depth = 0;
  std::size_t parent = std::numeric_limits<std::size_t>::max();  ///< index in the call list
  const ModuleInfo* module = nullptr;
  bool leaf = true;
  /// A leaf module's call with calls inside (submodules inferred from its ops' parameters):
  /// shown like a composite, it counts the mult-adds of its own parameters only.
  bool own_macs = false;
  bool recursive = false;
  bool failed = false;
  std::uint64_t macs = 0;          ///< leaf calls (and `own_macs` ones) only
  std::uint64_t subtree_macs = 0;  ///< macs of the leaf calls below (itself included)
  std::int64_t leftover = 0;       ///< torchinfo's `leftover_params`
};

/// A shape cell: `--` for none; the first shape, or with `all` every one, equal ones merged
/// (`[1, 100, 512], 2 x [2, 100, 512]`).
inline std::string shape_or_dashes(const Graph& g, NodeList ids, bool all = false) {
  if (ids.empty()) return "--";
  if (!all) return to_string(g.shape(ids.front()));
  return shapes_repr(g, ids, ShapeStyle::list);
}

/// A row's label as `row_settings` say: `Conv2d (conv1): 1-1`, with ` (failed)` for a call that
/// threw; the layer column is as wide as the longest one.
inline std::string row_label(const Graph& g, NodeId call, const SummaryOptions& options) {
  const ModuleInfo& m = g.module_of(call);
  const Graph::Node& n = g.node(call);
  std::string label = m.class_name;
  if (has(options.row_settings, SummaryRowSetting::var_names) && !m.name.empty())
    label += " (" + m.name + ")";
  if (has(options.row_settings, SummaryRowSetting::depth) && n.depth > 0)
    label += ": " + depth_index_label(g, call);
  if (n.failed) label += " (failed)";
  return label;
}

}  // namespace detail::summary_impl

/// The rows and totals of the summary of `trace`, without the layout (for tests and tools).
inline SummaryTable summarize(const Trace& trace, const SummaryOptions& options = {}) {
  namespace si = detail::summary_impl;
  const Graph& g = trace.graph;
  std::vector<si::Call> calls;
  std::vector<std::size_t> index_of(g.size(), std::numeric_limits<std::size_t>::max());
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    const Graph::Node& n = g.node(id);
    if (n.kind != NodeKind::module) continue;
    si::Call c;
    c.id = id;
    c.depth = n.depth;
    c.module = &g.module_of(id);
    c.leaf = c.module->leaf;
    c.failed = n.failed;
    c.recursive = g.call(id).call_index > 0 && c.module->param_count > 0;
    if (n.parent.valid() && index_of[n.parent.value] != std::numeric_limits<std::size_t>::max()) {
      c.parent = index_of[n.parent.value];
    }
    index_of[i] = calls.size();
    calls.push_back(std::move(c));
  }

  SummaryTable t;
  t.total_params = trace.total_params;
  t.trainable_params = trace.trainable_params;
  t.param_bytes = trace.total_params * 4;
  if (trace.root.valid() && g.node(trace.root).kind == NodeKind::module)
    for (NodeId in : g.call(trace.root).inputs)
      t.input_bytes += detail::numel(g.shape(in)) * si::element_size(g.tensor(in).dtype) + 56;

  // A leaf call with calls inside (submodules inferred from its ops' parameters) is shown like a
  // composite, its submodules carrying their own numbers as torchinfo's hooks would see them;
  // it still counts the mult-adds of the parameters it registers itself.
  for (const si::Call& c : calls) {
    if (c.parent == std::numeric_limits<std::size_t>::max() || !calls[c.parent].leaf) continue;
    calls[c.parent].leaf = false;
    calls[c.parent].own_macs = true;
  }
  for (si::Call& c : calls) {
    if (!c.leaf && !c.own_macs) continue;
    const auto& outs = g.call(c.id).outputs;
    if (outs.empty()) continue;
    const Shape out = g.shape(outs.front());
    c.macs = module_mult_adds(*c.module, out, c.own_macs);
    t.total_mult_adds += c.macs;
    if (c.leaf && c.module->param_count > 0)
      t.forward_backward_bytes +=
          2 * detail::numel(out) * si::element_size(g.tensor(outs.front()).dtype);
    for (std::size_t k = static_cast<std::size_t>(&c - calls.data());
         k != std::numeric_limits<std::size_t>::max(); k = calls[k].parent)
      calls[k].subtree_macs += c.macs;
  }
  t.functional_mult_adds = functional_mult_adds(g);

  // torchinfo's leftover_params: a call's parameters less those its descendants show (a
  // leaf all of its own, a composite its leftover; reused calls nothing). Bottom-up: a
  // call's descendants always come after it.
  std::vector<std::int64_t> shown_below(calls.size(), 0);
  for (std::size_t k = calls.size(); k-- > 0;) {
    si::Call& c = calls[k];
    c.leftover = static_cast<std::int64_t>(c.module->param_count) - shown_below[k];
    if (c.parent == std::numeric_limits<std::size_t>::max()) continue;
    std::int64_t shown = shown_below[k];
    if (!c.recursive)
      shown += c.leaf ? static_cast<std::int64_t>(c.module->param_count) : c.leftover;
    shown_below[c.parent] += shown;
  }

  // Times: each shown row's, and its self time (less the rows shown directly under it).
  const bool wants_time = std::any_of(options.columns.begin(), options.columns.end(), [](auto c) {
    return c == SummaryColumn::time || c == SummaryColumn::self_time ||
           c == SummaryColumn::time_percent;
  });
  if (wants_time && options.times == nullptr)
    throw std::invalid_argument(
        "recorder: the summary's time columns need the times: SummaryOptions::times = "
        "&times, with `CallTimes times = recorder::call_times(timing)` from a record::Timing");
  std::vector<std::optional<double>> time_of(calls.size());
  std::vector<double> shown_time_below(calls.size(), 0.0);
  if (options.times != nullptr) {
    for (std::size_t k = 0; k < calls.size(); ++k) {
      time_of[k] = options.times->of(g, calls[k].id);
      if (calls[k].parent == std::numeric_limits<std::size_t>::max()) {
        if (!t.total_time_ns && time_of[k]) t.total_time_ns = time_of[k];
      } else if (calls[k].depth <= options.depth && time_of[k]) {
        shown_time_below[calls[k].parent] += *time_of[k];
      }
    }
  }

  for (const si::Call& c : calls) {
    if (c.depth > options.depth) continue;
    const ModuleInfo& m = *c.module;
    const std::size_t k = static_cast<std::size_t>(&c - calls.data());
    const Graph::CallData& cd = g.call(c.id);
    SummaryRow row;
    row.call = c.id;
    row.depth = c.depth;
    row.label = si::row_label(g, c.id, options);
    if (time_of[k]) {
      row.time_ns = time_of[k];
      row.self_ns = *time_of[k] - shown_time_below[k];
    }
    const bool full = c.leaf || c.depth == options.depth;
    const std::uint64_t shown =
        full ? m.param_count : static_cast<std::uint64_t>(std::max<std::int64_t>(c.leftover, 0));
    for (SummaryColumn col : options.columns) {
      std::string cell;
      switch (col) {
        case SummaryColumn::input_size:
          cell = si::shape_or_dashes(g, cd.inputs, options.all_outputs);
          break;
        case SummaryColumn::output_size:
          cell = si::shape_or_dashes(g, cd.outputs, options.all_outputs);
          break;
        case SummaryColumn::num_params:
          if (c.recursive)
            cell = "(recursive)";
          else if (m.param_count == 0 || shown == 0)
            cell = "--";
          else if (full && m.trainable_count == 0)
            cell = "(" + detail::with_thousands(shown) + ")";
          else
            cell = detail::with_thousands(shown);
          break;
        case SummaryColumn::params_percent:
          if (c.recursive) {
            cell = "(recursive)";
          } else if (t.total_params == 0 || shown == 0) {
            cell = "     --";
          } else {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%6.2f%%",
                          static_cast<double>(shown) / static_cast<double>(t.total_params) * 100.0);
            cell = buf;
          }
          break;
        case SummaryColumn::kernel_size:
          cell = si::attribute_cell(m, "kernel_size");
          break;
        case SummaryColumn::groups:
          cell = si::attribute_cell(m, "groups");
          break;
        case SummaryColumn::mult_adds: {
          const std::uint64_t v =
              c.leaf ? c.macs
                     : (c.depth == options.depth ? c.subtree_macs : (c.own_macs ? c.macs : 0));
          cell = v == 0 ? std::string("--") : detail::with_thousands(v);
          break;
        }
        case SummaryColumn::time:
          cell = row.time_ns ? detail::duration_text(*row.time_ns) : "--";
          break;
        case SummaryColumn::self_time:
          cell = row.self_ns ? detail::duration_text(*row.self_ns) : "--";
          break;
        case SummaryColumn::time_percent:
          if (row.time_ns && t.total_time_ns && *t.total_time_ns > 0) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%6.2f%%", *row.time_ns / *t.total_time_ns * 100.0);
            cell = buf;
          } else {
            cell = "     --";
          }
          break;
        case SummaryColumn::trainable:
          if (m.param_count == 0)
            cell = "--";
          else if (m.trainable_count == 0)
            cell = "False";
          else if (m.trainable_count == m.param_count)
            cell = "True";
          else
            cell = "Partial";
          break;
      }
      row.cells.push_back(std::move(cell));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

/// The torchinfo summary of `trace`, exactly as `print(torchinfo.summary(...))` writes it
/// (trailing newline included). A partial trace gives the rows up to the failing call, whose
/// label ends in ` (failed)`.
///
/// ```
/// std::cout << recorder::summary(trace);                        // torchinfo's defaults
/// recorder::summary(trace, {.depth = 1, .verbose = true});
/// ```
inline std::string summary(const Trace& trace, const SummaryOptions& options = {}) {
  namespace si = detail::summary_impl;
  const SummaryTable t = summarize(trace, options);
  const Graph& g = trace.graph;
  const bool show_depth = si::has(options.row_settings, SummaryRowSetting::depth);
  const bool show_var = si::has(options.row_settings, SummaryRowSetting::var_names);
  const auto col_width = static_cast<std::size_t>(std::max(options.col_width, 0));

  // Layer column width: the longest label of any call (folded ones too), depth * 5 + 1 for
  // its prefix, rounded up to a multiple of 5; at least 40.
  std::size_t name_width = 40;
  {
    std::size_t longest = 0;
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const NodeId id{i};
      const Graph::Node& n = g.node(id);
      if (n.kind != NodeKind::module) continue;
      longest = std::max(longest,
                         si::width(si::row_label(g, id, options)) + std::size_t{n.depth} * 5 + 1);
    }
    if (longest >= name_width) name_width = (longest + 4) / 5 * 5;
  }
  const std::size_t total_width = options.columns.size() * col_width + name_width;
  const std::string divider(total_width, '=');

  std::string out;
  auto row = [&](std::string_view name, const std::vector<std::string>& cells) {
    const std::size_t start = out.size();
    si::pad(out, name, name_width);
    out += ' ';
    for (const auto& c : cells) {
      si::pad(out, c, col_width);
      out += ' ';
    }
    while (out.size() > start && out.back() == ' ') out.pop_back();
    out += '\n';
  };

  out += divider + '\n';
  {
    std::string header = "Layer (type";
    if (show_var) header += " (var_name)";
    if (show_depth) header += ":depth-idx";
    header += ')';
    std::vector<std::string> titles;
    for (SummaryColumn c : options.columns) titles.emplace_back(column_title(c));
    row(header, titles);
  }
  out += divider + '\n';
  for (const SummaryRow& r : t.rows) {
    row(si::start_str(r.depth, options.ascii_only) + r.label, r.cells);
    if (!options.verbose) continue;
    const auto& params = g.module_of(r.call).params;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const ParamInfo& p = params[i];
      std::vector<std::string> cells(options.columns.size());
      for (std::size_t c = 0; c < options.columns.size(); ++c) {
        if (options.columns[c] == SummaryColumn::kernel_size) {
          std::vector<std::int64_t> k = p.shape;
          if (p.name == "weight" && k.size() > 1) std::swap(k[0], k[1]);
          cells[c] = to_string(Shape(k.data(), k.size()));
        } else if (options.columns[c] == SummaryColumn::num_params) {
          // torchinfo draws these with box characters even when `ascii_only`.
          cells[c] = (i + 1 == params.size() ? "\u2514\u2500" : "\u251c\u2500") +
                     detail::with_thousands(p.numel);
        }
      }
      row(si::start_str(r.depth + 1, options.ascii_only) + p.name, cells);
    }
  }
  out += divider + '\n';
  out += "Total params: " + detail::with_thousands(t.total_params) + '\n';
  out += "Trainable params: " + detail::with_thousands(t.trainable_params) + '\n';
  out +=
      "Non-trainable params: " + detail::with_thousands(t.total_params - t.trainable_params) + '\n';
  out += "Total mult-adds" + si::format_number(t.total_mult_adds, false) + '\n';
  if (options.functional_mult_adds)
    out += "Functional mult-adds" + si::format_number(t.functional_mult_adds, false) + '\n';
  if (options.times != nullptr) {
    out += "Total time: " + (t.total_time_ns ? detail::duration_text(*t.total_time_ns) : "--");
    if (!options.times->statistic.empty()) out += " (" + options.times->statistic + ")";
    out += '\n';
  }
  out += divider + '\n';
  out += "Input size" + si::format_number(t.input_bytes, true) + '\n';
  out += "Forward/backward pass size" + si::format_number(t.forward_backward_bytes, true) + '\n';
  out += "Params size" + si::format_number(t.param_bytes, true) + '\n';
  out += "Estimated Total Size" +
         si::format_number(t.input_bytes + t.forward_backward_bytes + t.param_bytes, true) + '\n';
  out += divider + '\n';
  return out;
}

namespace backend {

/// The torchinfo summary table as a render backend (`.txt`). It uses the default
/// `SummaryOptions` with `depth` taken from `RenderOptions::depth` (no limit when unset);
/// call `recorder::summary` for the other options.
struct Summary {
  static constexpr std::string_view extension = ".txt";
  static void render(const Trace& trace, const RenderOptions& options, std::ostream& os) {
    std::string s;
    render_to(trace, options, s);
    os << s;
  }
  static void render_to(const Trace& trace, const RenderOptions& options, std::string& out) {
    SummaryOptions o;
    o.depth = options.depth ? *options.depth : std::numeric_limits<int>::max();
    out += summary(trace, o);
  }
};

}  // namespace backend

}  // namespace recorder
