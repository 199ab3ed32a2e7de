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
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace recorder {

/// One row of the table (a module call at or above `depth`, or a container torchinfo prints
/// above the calls it encloses: `Graph::ContainerRow`), its cells as printed.
struct SummaryRow {
  NodeId call;  ///< invalid for a container row
  const ModuleInfo* module = nullptr;
  int depth = 0;                     ///< torchinfo's depth: the module's in the module tree
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
  /// The bytes of every parameter of the model, tied ones once (`Trace::param_bytes`): the
  /// rule of torchinfo's current source (PyPI's 1.8.0 counts the leaf rows' parameters only, 4
  /// bytes each, and leaves out those a composite registers itself or a module not called).
  std::uint64_t param_bytes = 0;
  /// Bytes of the leaf rows' parameters, each module once, 4 bytes each: PyPI's torchinfo 1.8.0's
  /// `Params size` (for tests against it).
  std::uint64_t leaf_param_bytes = 0;
  std::optional<double> total_time_ns{};  ///< with `SummaryOptions::times`: the root's time
  /// The widest layer cell of any row, folded ones too: its label, and 5 columns of tree prefix
  /// per depth plus 1.
  std::size_t label_width = 0;
  /// Records made for container rows whose module the front end did not register.
  std::vector<std::unique_ptr<ModuleInfo>> unregistered{};
};

namespace detail::summary_impl {

/// The header `sys.getsizeof` adds to a tensor's storage under PyTorch `torch_version` ("1.13",
/// "2.13"): 56 bytes under 1.x (and for an unknown version), 64 from 2.0.
inline std::uint64_t storage_header_bytes(std::string_view torch_version) {
  return torch_version.empty() || torch_version.starts_with("1.") ? 56 : 64;
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

/// What is known of one row, all depths: a module call or a container row.
struct Call {
  NodeId id;  ///< invalid for a container row
  int depth = 0;
  std::uint32_t depth_index = 0;
  std::size_t parent = std::numeric_limits<std::size_t>::max();  ///< the row it is nested in
  const ModuleInfo* module = nullptr;
  /// torchinfo's: its module has no submodules (and ran as one node: a module with traced
  /// calls or ops inside is a composite, whatever its record says of submodules)
  bool leaf = true;
  bool recursive = false;
  bool failed = false;
  std::uint64_t macs = 0;          ///< leaf calls only
  std::uint64_t subtree_macs = 0;  ///< macs of the leaf calls below (itself included)
  std::int64_t leftover = 0;       ///< torchinfo's `leftover_params`
};

/// The module of a container row, registered by the front end (`register_containers`); a bare
/// record naming the path when none was.
inline const ModuleInfo& container_module(const Graph& g, std::string_view path,
                                          std::vector<std::unique_ptr<ModuleInfo>>& made) {
  if (const ModuleInfo* m = g.module_at(path)) return *m;
  auto m = std::make_unique<ModuleInfo>(container_record(path));
  made.push_back(std::move(m));
  return *made.back();
}

/// The table's rows in order, before any is shown: every module call, each after the container
/// rows the graph inserted before it; nested by torchinfo's depth.
inline std::vector<Call> table_rows(const Graph& g,
                                    std::vector<std::unique_ptr<ModuleInfo>>& made) {
  std::vector<Call> rows;
  std::vector<std::size_t> last_at;               // the last row at each depth
  std::unordered_set<std::string_view> seen;      // modules of the rows so far
  std::unordered_set<std::uint64_t> seen_params;  // their own parameters
  const auto& containers = g.container_rows();
  std::size_t next_container = 0;
  const auto add = [&](Call c) {
    if (c.depth > 0 && static_cast<std::size_t>(c.depth) <= last_at.size())
      c.parent = last_at[static_cast<std::size_t>(c.depth) - 1];
    // torchinfo's (recursive): a module met before, or one every parameter of which (its own,
    // not its submodules') an earlier row already counted, as a head tied to an embedding.
    bool owns = false, owns_new = false;
    for (const ParamInfo& p : c.module->params) {
      if (p.numel == 0) continue;
      owns = true;
      if (p.id == 0 || seen_params.insert(p.id).second) owns_new = true;
    }
    const bool again = !seen.insert(c.module->path).second;
    c.recursive = c.module->param_count > 0 && (again || (owns && !owns_new));
    last_at.resize(static_cast<std::size_t>(c.depth));
    last_at.push_back(rows.size());
    rows.push_back(c);
  };
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    const Graph::Node& n = g.node(id);
    if (n.kind != NodeKind::module) continue;
    for (; next_container < containers.size() && containers[next_container].before == id;
         ++next_container) {
      const Graph::ContainerRow& r = containers[next_container];
      Call c;
      c.depth = r.depth;
      c.depth_index = r.depth_index;
      c.module = &container_module(g, r.path, made);
      c.leaf = c.module->leaf && !c.module->has_children;
      add(c);
    }
    const Graph::CallData cd = g.call(id);
    Call c;
    c.id = id;
    c.depth = cd.table_depth;
    c.depth_index = cd.depth_index;
    c.module = &g.module_of(id);
    c.leaf = c.module->leaf && !c.module->has_children;
    c.failed = n.failed;
    add(c);
  }
  return rows;
}

/// torchinfo's leftover_params, for every row: its parameters less what the rows nested in it
/// count. A row counts all of its parameters when a leaf, its own leftover when a composite; a
/// (recursive) row counts its parameters once per module within each row it is nested in (and
/// none when that module has a row of its own there), and hides the rows nested in it.
inline void leftover_params(std::vector<Call>& calls) {
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  // The rows `k` counts in: its ancestors up to and including the first (recursive) one.
  const auto for_each_counting = [&calls](std::size_t k, auto&& f) {
    for (std::size_t a = calls[k].parent; a != none; a = calls[a].parent) {
      f(a);
      if (calls[a].recursive) break;
    }
  };
  std::set<std::pair<std::size_t, std::string_view>> counted;  // (row, module) pairs
  for (std::size_t k = 0; k < calls.size(); ++k)
    if (!calls[k].recursive)
      for_each_counting(k, [&](std::size_t a) { counted.emplace(a, calls[k].module->path); });
  // Bottom-up: a row's descendants always come after it.
  std::vector<std::int64_t> below(calls.size(), 0);
  for (std::size_t k = calls.size(); k-- > 0;) {
    Call& c = calls[k];
    const auto params = static_cast<std::int64_t>(c.module->param_count);
    c.leftover = params - below[k];
    if (c.recursive) {
      for_each_counting(k, [&](std::size_t a) {
        if (counted.emplace(a, c.module->path).second) below[a] += params;
      });
    } else {
      const std::int64_t shown = c.leaf ? params : c.leftover;
      for_each_counting(k, [&](std::size_t a) { below[a] += shown; });
    }
  }
}

/// The parameters registered on `m` itself, not on its submodules.
inline std::uint64_t own_params(const ModuleInfo& m) {
  std::uint64_t n = 0;
  for (const ParamInfo& p : m.params) n += p.numel;
  return n;
}

/// A shape cell: `--` for none; the first shape, or with `all` every one, equal ones merged
/// (`[1, 100, 512], 2 x [2, 100, 512]`).
inline std::string shape_or_dashes(const Graph& g, NodeList ids, bool all = false) {
  if (ids.empty()) return "--";
  if (!all) return to_string(g.shape(ids.front()));
  return shapes_repr(g, ids, ShapeStyle::list);
}

/// A row's label as `row_settings` say: `Conv2d (conv1): 1-1`, with ` (failed)` for a call that
/// threw; the layer column is as wide as the longest one.
inline std::string row_label(const Call& c, const SummaryOptions& options) {
  const ModuleInfo& m = *c.module;
  std::string label = m.class_name;
  if (has(options.row_settings, SummaryRowSetting::var_names) && !m.name.empty())
    label += " (" + m.name + ")";
  if (has(options.row_settings, SummaryRowSetting::depth) && c.depth > 0)
    label += ": " + std::to_string(c.depth) + '-' + std::to_string(c.depth_index);
  if (c.failed) label += " (failed)";
  return label;
}

}  // namespace detail::summary_impl

/// The rows and totals of the summary of `trace`, without the layout (for tests and tools).
inline SummaryTable summarize(const Trace& trace, const SummaryOptions& options = {}) {
  namespace si = detail::summary_impl;
  const Graph& g = trace.graph;
  SummaryTable t;
  std::vector<si::Call> calls = si::table_rows(g, t.unregistered);
  for (const si::Call& c : calls)
    t.label_width = std::max(t.label_width, si::width(si::row_label(c, options)) +
                                                static_cast<std::size_t>(c.depth) * 5 + 1);
  t.total_params = trace.total_params;
  t.trainable_params = trace.trainable_params;
  t.param_bytes = trace.param_bytes;
  // Python's `sys.getsizeof` of each input's storage: its bytes and the storage object's header,
  // 56 bytes under PyTorch 1.x and 64 from 2.0: what torchinfo prints under the PyTorch of the
  // trace's libtorch (`Trace::torch_version`; a hand-built trace without one is taken as 1.x's).
  const std::uint64_t header = si::storage_header_bytes(trace.torch_version);
  if (trace.root.valid() && g.node(trace.root).kind == NodeKind::module)
    for (NodeId in : g.call(trace.root).inputs)
      t.input_bytes +=
          detail::numel(g.shape(in)) * detail::dtype_bytes(g.tensor(in).dtype) + header;

  // torchinfo's mult-adds: a leaf module's (one without submodules), from its parameters and its
  // first output; what composite modules compute with their own parameters or with functional
  // ops is the functional line's (`SummaryOptions::functional_mult_adds`).
  for (si::Call& c : calls) {
    if (!c.leaf || !c.id.valid() || g.node(c.id).inferred) continue;
    if (!c.recursive) t.leaf_param_bytes += c.module->param_count * 4;
    const auto& outs = g.call(c.id).outputs;
    if (outs.empty()) continue;
    const Shape out = g.shape(outs.front());
    c.macs = module_mult_adds(*c.module, out);
    t.total_mult_adds += c.macs;
    if (c.module->param_count > 0)
      t.forward_backward_bytes +=
          2 * detail::numel(out) * detail::dtype_bytes(g.tensor(outs.front()).dtype);
    for (std::size_t k = static_cast<std::size_t>(&c - calls.data());
         k != std::numeric_limits<std::size_t>::max(); k = calls[k].parent)
      calls[k].subtree_macs += c.macs;
  }
  // The truth beside torchinfo's total: the functional ops, and what an opaque leaf torchinfo
  // does not count (a `MultiheadAttention` without its ops recorded) does with its parameters.
  t.functional_mult_adds = functional_mult_adds(g);
  {
    std::vector<char> has_ops(g.size(), 0);
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const Graph::Node& n = g.node(NodeId{i});
      if (n.kind == NodeKind::function && n.parent.valid()) has_ops[n.parent.value] = 1;
    }
    for (const si::Call& c : calls) {
      if (!c.id.valid() || !c.module->leaf || has_ops[c.id.value] || counted_by_torchinfo(g, c.id))
        continue;
      const auto& outs = g.call(c.id).outputs;
      if (!outs.empty())
        t.functional_mult_adds += module_mult_adds(*c.module, g.shape(outs.front()));
    }
  }

  si::leftover_params(calls);

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
      if (!calls[k].id.valid()) continue;
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
    const NodeList no_nodes{};
    const NodeList inputs = c.id.valid() ? g.call(c.id).inputs : no_nodes;
    const NodeList outputs = c.id.valid() ? g.call(c.id).outputs : no_nodes;
    SummaryRow row;
    row.call = c.id;
    row.module = c.module;
    row.depth = c.depth;
    row.label = si::row_label(c, options);
    if (time_of[k]) {
      row.time_ns = time_of[k];
      row.self_ns = *time_of[k] - shown_time_below[k];
    }
    const bool full = c.leaf || c.depth == options.depth;
    // A composite call that failed has no rows for the modules that never ran: it shows what
    // a run that completed would, its own parameters (`--` for most), not theirs.
    const std::uint64_t shown =
        full       ? m.param_count
        : c.failed ? si::own_params(m)
                   : static_cast<std::uint64_t>(std::max<std::int64_t>(c.leftover, 0));
    for (SummaryColumn col : options.columns) {
      std::string cell;
      switch (col) {
        case SummaryColumn::input_size:
          if (c.id.valid() && g.node(c.id).keyword_only && !options.keyword_inputs)
            cell = "--";  // torchinfo's hooks saw no positional argument
          else
            cell = si::shape_or_dashes(g, inputs, options.all_outputs);
          break;
        case SummaryColumn::output_size:
          cell = si::shape_or_dashes(g, outputs, options.all_outputs);
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
          const std::uint64_t v = c.leaf ? c.macs : (c.depth == options.depth ? c.subtree_macs : 0);
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
  const bool show_depth = si::has(options.row_settings, SummaryRowSetting::depth);
  const bool show_var = si::has(options.row_settings, SummaryRowSetting::var_names);
  const auto col_width = static_cast<std::size_t>(std::max(options.col_width, 0));

  // Layer column width: the longest label of any call (folded ones too), depth * 5 + 1 for
  // its prefix, rounded up to a multiple of 5; at least 40.
  std::size_t name_width = 40;
  if (t.label_width >= name_width) name_width = (t.label_width + 4) / 5 * 5;
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
    const auto& params = r.module->params;
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
