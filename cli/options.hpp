#pragma once
/// The `recorder` command line's own words: parsing its option values into the library's types
/// (no libtorch, tested on its own).

#include <recorder/graph/address.hpp>
#include <recorder/render/options.hpp>
#include <recorder/render/summary.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <unistd.h>
#include <vector>

namespace recorder::cli {

/// A command line the program cannot act on: one line for the user, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The comma-separated items of `text` ("a,b,,c" -> a, b, c; spaces around items dropped).
inline std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    std::string_view item = text.substr(at, comma - at);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    at = comma + 1;
  }
  return out;
}

/// "1,3,224,224" -> {1, 3, 224, 224}; every size a positive integer (`--input-size`).
inline std::vector<std::int64_t> parse_sizes(std::string_view text) {
  const std::vector<std::string> items = split(text);
  if (items.empty())
    throw UsageError("recorder: --input-size '" + std::string(text) +
                     "' is empty; write sizes like 1,3,224,224");
  std::vector<std::int64_t> sizes;
  for (const std::string& item : items) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc{} || end != item.data() + item.size() || v <= 0)
      throw UsageError("recorder: --input-size '" + std::string(text) + "': '" + item +
                       "' is not a positive integer; write sizes like 1,3,224,224");
    sizes.push_back(v);
  }
  return sizes;
}

/// The dtypes `--dtype` takes, as Python spells them.
inline constexpr std::string_view dtype_names[] = {
    "float32", "float", "float64", "double", "float16", "half",  "bfloat16", "int64",
    "long",    "int32", "int",     "int16",  "int8",    "uint8", "bool"};

/// A dtype name as Python spells it ("float32", "long", ...); throws `UsageError` otherwise.
inline std::string parse_dtype(std::string_view name) {
  for (std::string_view d : dtype_names)
    if (d == name) return std::string(name);
  std::string known;
  for (std::string_view d : dtype_names) known += (known.empty() ? "" : ", ") + std::string(d);
  throw UsageError("recorder: unknown --dtype '" + std::string(name) + "' (one of " + known + ")");
}

/// True for the integer (and bool) dtypes: their random inputs are integers.
inline bool is_integer_dtype(std::string_view name) {
  return name != "float32" && name != "float" && name != "float64" && name != "double" &&
         name != "float16" && name != "half" && name != "bfloat16";
}

/// torchinfo's column names ("input_size,output_size,num_params,mult_adds").
inline std::vector<SummaryColumn> parse_columns(std::string_view text) {
  struct Name {
    std::string_view name;
    SummaryColumn column;
  };
  static constexpr Name names[] = {{"input_size", SummaryColumn::input_size},
                                   {"output_size", SummaryColumn::output_size},
                                   {"num_params", SummaryColumn::num_params},
                                   {"params_percent", SummaryColumn::params_percent},
                                   {"kernel_size", SummaryColumn::kernel_size},
                                   {"groups", SummaryColumn::groups},
                                   {"mult_adds", SummaryColumn::mult_adds},
                                   {"trainable", SummaryColumn::trainable}};
  std::vector<SummaryColumn> out;
  for (const std::string& item : split(text)) {
    bool found = false;
    for (const Name& n : names)
      if (n.name == item) {
        out.push_back(n.column);
        found = true;
      }
    if (!found) {
      std::string known;
      for (const Name& n : names) known += (known.empty() ? "" : ", ") + std::string(n.name);
      throw UsageError("recorder: unknown column '" + item + "' in --columns (one of " + known +
                       ")");
    }
  }
  if (out.empty()) throw UsageError("recorder: --columns is empty");
  return out;
}

/// What `--row-settings` sets: torchinfo's `depth`, `var_names`, `ascii_only`.
struct RowSettings {
  std::vector<SummaryRowSetting> rows;
  bool ascii_only = false;
};

inline RowSettings parse_row_settings(std::string_view text) {
  RowSettings out;
  for (const std::string& item : split(text)) {
    if (item == "depth")
      out.rows.push_back(SummaryRowSetting::depth);
    else if (item == "var_names")
      out.rows.push_back(SummaryRowSetting::var_names);
    else if (item == "ascii_only")
      out.ascii_only = true;
    else
      throw UsageError("recorder: unknown row setting '" + item +
                       "' in --row-settings (one of depth, var_names, ascii_only)");
  }
  return out;
}

/// `--depth`: an integer >= 0, or "inf" (or "none") for no limit.
inline std::optional<int> parse_depth(std::string_view text) {
  if (text == "inf" || text == "none" || text == "unlimited") return std::nullopt;
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < 0)
    throw UsageError("recorder: --depth '" + std::string(text) +
                     "' is neither an integer >= 0 nor 'inf'");
  return v;
}

inline Direction parse_direction(std::string_view text) {
  if (text == "TB") return Direction::TB;
  if (text == "LR") return Direction::LR;
  if (text == "BT") return Direction::BT;
  if (text == "RL") return Direction::RL;
  throw UsageError("recorder: --direction '" + std::string(text) +
                   "' is not one of TB, LR, BT, RL");
}

/// The formats `draw` writes, chosen by the output's extension (or `--format`).
enum class Format { dot, svg, png, json, json_view, mermaid, html, model_explorer };

/// The format output file `path`'s extension names (`.dot .gv .svg .png .json .mmd .html .htm`;
/// `.explorer.json` is Model Explorer's graph), or none. Every subcommand that writes a picture
/// asks this one function.
inline std::optional<Format> format_of(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".dot" || ext == ".gv") return Format::dot;
  if (ext == ".svg") return Format::svg;
  if (ext == ".png") return Format::png;
  if (ext == ".json") {
    const std::string name = path.filename().string();
    const bool explorer = name.size() > 14 && name.ends_with(".explorer.json");
    return explorer ? Format::model_explorer : Format::json_view;
  }
  if (ext == ".mmd") return Format::mermaid;
  if (ext == ".html" || ext == ".htm") return Format::html;
  return std::nullopt;
}

/// The format of output file `path` (`format_of`), or `format` when given ("dot", "svg", "png",
/// "json" for the whole recorded graph, "json-view" for the drawn one, "mermaid", "html" for the
/// interactive viewer, "model-explorer").
inline Format parse_format(const std::filesystem::path& path, std::string_view format = {}) {
  std::string_view f = format;
  if (f.empty()) {
    if (const auto known = format_of(path)) return *known;
    throw UsageError(
        "recorder: cannot tell the format of '" + path.string() +
        "' from its extension: use .dot, .svg, .png, .json, .mmd or .html, or --format");
  }
  if (f == "dot") return Format::dot;
  if (f == "svg") return Format::svg;
  if (f == "png") return Format::png;
  if (f == "json") return Format::json;
  if (f == "json-view") return Format::json_view;
  if (f == "mermaid") return Format::mermaid;
  if (f == "html") return Format::html;
  if (f == "model-explorer") return Format::model_explorer;
  throw UsageError("recorder: --format '" + std::string(format) +
                   "' is not one of dot, svg, png, json, json-view, mermaid, html, model-explorer");
}

/// The format of `profile --draw`'s file, by its extension (`format_of`, as `draw` reads it):
/// the drawing coloured by time as DOT (`.dot`, `.gv`, or no extension: `.dot` is added), SVG
/// or PNG, or the HTML viewer with each call's time on hover (`.html`, `.htm`). A Mermaid chart
/// (`.mmd`) and the JSON graphs carry no times: refused, with the extensions that do.
inline Format parse_time_format(const std::filesystem::path& path) {
  const std::optional<Format> f = format_of(path);
  if (!f && !path.has_extension()) return Format::dot;
  if (f == Format::dot || f == Format::svg || f == Format::png || f == Format::html) return *f;
  std::string why = "cannot draw times into '" + path.string() + "'";
  if (f == Format::mermaid)
    why += ": a Mermaid chart has no place for them (recorder draw writes the plain .mmd)";
  else if (f)
    why += ": its graph has no place for them (recorder draw writes it without times)";
  throw UsageError("recorder: --draw " + why +
                   "; use .dot, .gv, .svg, .png, .html or .htm (no extension: .dot)");
}

/// The layer addresses of `--layers` ("layer4,fc", "3-18", "class:Conv2d", "index:5", "all").
inline std::vector<LayerAddress> parse_layers(std::string_view text) {
  std::vector<LayerAddress> out;
  for (const std::string& item : split(text)) {
    if (item == "all") {
      out.push_back(all_layers());
    } else if (item.rfind("class:", 0) == 0) {
      out.push_back(by_class(item.substr(6)));
    } else if (item.rfind("index:", 0) == 0) {
      std::size_t v = 0;
      const std::string n = item.substr(6);
      const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
      if (ec != std::errc{} || end != n.data() + n.size())
        throw UsageError("recorder: --layers '" + item + "': index:N needs a non-negative integer");
      out.push_back(by_index(v));
    } else {
      out.emplace_back(item);
    }
  }
  if (out.empty())
    throw UsageError(
        "recorder: --layers is empty; name layers like layer4,fc or 3-18, class:Conv2d, index:5, "
        "all");
  return out;
}

/// An address as `--layers` writes it: `class:Conv2d` for the library's `by_class("Conv2d")`,
/// `index:5` for `by_index(5)`; others as they are. For the library's errors
/// (`UnknownLayer::message`).
inline std::string cli_spelling(const std::string& address) {
  const auto inside = [&](std::string_view head) -> std::optional<std::string> {
    if (address.rfind(head, 0) != 0 || address.size() < head.size() + 1 || address.back() != ')')
      return std::nullopt;
    std::string v = address.substr(head.size(), address.size() - head.size() - 1);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  };
  if (const auto c = inside("by_class(")) return "class:" + *c;
  if (const auto i = inside("by_index(")) return "index:" + *i;
  return address;
}

/// What `record --what` records (the library's `recorder::What`, without its ATen header).
enum class Record { output, input, pre, grad_output, grad_input };

inline Record parse_what(std::string_view text) {
  if (text == "output") return Record::output;
  if (text == "input") return Record::input;
  if (text == "pre") return Record::pre;
  if (text == "grad-output") return Record::grad_output;
  if (text == "grad-input") return Record::grad_input;
  throw UsageError("recorder: --what '" + std::string(text) +
                   "' is not one of output, input, pre, grad-output, grad-input");
}

/// The reductions `record --reduce` takes.
enum class Reduce { all, last, sum, mean, moments, minmax, absmax, histogram, quantile };

inline Reduce parse_reduce(std::string_view text) {
  if (text == "all") return Reduce::all;
  if (text == "last") return Reduce::last;
  if (text == "sum") return Reduce::sum;
  if (text == "mean") return Reduce::mean;
  if (text == "moments") return Reduce::moments;
  if (text == "minmax") return Reduce::minmax;
  if (text == "absmax") return Reduce::absmax;
  if (text == "histogram") return Reduce::histogram;
  if (text == "quantile") return Reduce::quantile;
  throw UsageError(
      "recorder: --reduce '" + std::string(text) +
      "' is not one of all, last, sum, mean, moments, minmax, absmax, histogram, quantile");
}

/// `--quantile q` of `--reduce quantile`: a number in [0, 1].
inline double parse_quantile(double q) {
  if (!(q >= 0.0 && q <= 1.0))
    throw UsageError("recorder: --quantile " + recorder::detail::shortest(q) +
                     " is not in [0, 1]: 0.5 is the median, 0.9 the 90th percentile");
  return q;
}

/// `--range lo,hi` of a histogram: two finite numbers, lo < hi.
inline std::pair<double, double> parse_range(std::string_view text) {
  const std::vector<std::string> items = split(text);
  if (items.size() != 2)
    throw UsageError("recorder: --range '" + std::string(text) + "' needs two numbers, like -4,4");
  double v[2];
  for (int i = 0; i < 2; ++i) {
    try {
      std::size_t used = 0;
      v[i] = std::stod(items[static_cast<std::size_t>(i)], &used);
      if (used != items[static_cast<std::size_t>(i)].size())
        throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw UsageError("recorder: --range '" + std::string(text) + "': '" +
                       items[static_cast<std::size_t>(i)] + "' is not a number");
    }
  }
  if (!(v[0] < v[1]))
    throw UsageError("recorder: --range '" + std::string(text) + "' needs lo < hi");
  return {v[0], v[1]};
}

/// Throws `UsageError` unless `path` can be written (its folder exists and is writable, and the
/// file, if there, is writable): checked before a long run, so it fails at once.
inline void check_writable(const std::filesystem::path& path) {
  const std::filesystem::path folder =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw UsageError(
        "recorder: cannot write '" + path.string() + "': '" + folder.string() +
        (std::filesystem::exists(folder, ec) ? "' is not a folder" : "' does not exist"));
  if (std::filesystem::is_directory(path, ec))
    throw UsageError("recorder: cannot write '" + path.string() + "': it is a directory");
  if (::access(folder.c_str(), W_OK) != 0)
    throw UsageError("recorder: cannot write '" + path.string() + "': folder '" + folder.string() +
                     "' is not writable");
  if (std::filesystem::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
    throw UsageError("recorder: cannot write '" + path.string() + "': permission denied");
  // What access() allows may still fail (root in /proc, a read-only mount): try a file there.
  std::string probe = (folder / ".recorder-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw UsageError("recorder: cannot write '" + path.string() + "': " + std::strerror(errno) +
                     " (in folder '" + folder.string() + "')");
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace recorder::cli
