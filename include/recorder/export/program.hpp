#pragma once
/// The program of a `torch.export` archive (`models/<name>.json`), read into plain structures:
/// its nodes in order, the tensors' metadata, the signature and the module paths. No libtorch;
/// the JSON is read with nlohmann-json.

#include <recorder/file_error.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

/// Thrown when a `.pt2` archive cannot be read: `what()` is one line naming the file and the
/// fault (`recorder: cannot read '<file>': ...`).
class ExportedFileError : public FileError {
 public:
  ExportedFileError(const std::filesystem::path& file, std::string_view fault)
      : FileError("recorder: cannot read '" + file.string() + "': " + std::string(fault), file) {}
};

namespace exported {

/// The newest `schema_version` major this reader knows. Minor versions only add fields, which
/// the reader ignores; a newer major is refused.
inline constexpr int known_schema_major = 8;
inline constexpr int known_schema_minor = 20;

/// One entry of a node's `nn_module_stack`: the module call it ran in.
struct Frame {
  std::string key{};   ///< tells calls apart: `L__self__blocks.0@1` is the second call
  std::string path{};  ///< the module's path from the root: `blocks.0.fc`; "" for the root
  std::string type{};  ///< its Python class: `torch.nn.modules.linear.Linear`
};

/// A tensor's metadata from `graph.tensor_values`.
struct TensorMeta {
  std::string_view dtype = "Float";  ///< libtorch's spelling ("Float", "Long", ...)
  std::string_view device = "cpu";
  std::vector<std::int64_t> sizes{};   ///< a symbolic size holds its hint, or -1 without one
  std::vector<std::string> symbols{};  ///< per size: its expression (`s0`), or "" when an int
  bool requires_grad = false;
};

/// One `call_function` node of the graph.
struct Node {
  std::string name{};                  ///< the node's name in the program
  std::string target{};                ///< `torch.ops.aten.linear.default`
  std::vector<std::string> inputs{};   ///< the tensors it reads, in argument order
  std::vector<std::string> outputs{};  ///< the tensors it writes
  /// Its integer arguments by name (`kernel_size` [3, 3], `groups` [1]), for what rows show.
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> ints{};
  std::vector<Frame> stack{};  ///< `nn_module_stack`, root first; empty when absent
  /// `torch_fn`: the torch-level call it belongs to, `linear_1` (its key) and `linear` (its
  /// function); empty when absent.
  std::string torch_fn_key{};
  std::string torch_fn{};
  /// The arguments and results as the program writes them (`[{"name": "input", "arg":
  /// {"as_tensor": {"name": "x"}}, "kind": 1}, ...]`, `[{"as_tensor": {"name": "linear"}}]`), for
  /// the runner.
  nlohmann::json arguments{};
  nlohmann::json results{};
};

/// What a placeholder of the graph stands for (`signature.input_specs`).
struct InputSpec {
  enum class Kind { user_input, parameter, buffer, constant, other };
  Kind kind = Kind::other;
  std::string placeholder{};  ///< the graph's name for it (`p_fc_weight`)
  std::string target{};       ///< the state's name (`fc.weight`); empty for a user input
};

/// A symbol's range from `range_constraints`; an unbounded side is empty.
struct Range {
  std::optional<std::int64_t> min{}, max{};
};

/// The structure of the program's result (`out_spec`, a pytree spec): a leaf (one user output),
/// or a tuple, list or dict of specs.
struct OutputSpec {
  enum class Kind { leaf, tuple, list, dict };
  Kind kind = Kind::leaf;
  std::vector<OutputSpec> children{};
  std::vector<std::string> keys{};  ///< a dict's keys, in order
};

/// A tensor stored in the archive: its file (below `data/weights/` or `data/constants/`), and
/// how its bytes are laid out.
struct StoredTensor {
  std::string file{};
  bool pickled = false;  ///< saved with torch.save rather than as raw bytes
  TensorMeta meta{};
  std::vector<std::int64_t> strides{};
  std::int64_t storage_offset = 0;
};

/// The program: everything the static trace and the runner need from the JSON.
struct Program {
  std::vector<Node> nodes{};
  std::map<std::string, TensorMeta, std::less<>> tensors{};
  std::vector<InputSpec> inputs{};     ///< in placeholder order
  std::vector<std::string> outputs{};  ///< the user outputs' tensor names ("" for a non-tensor)
  std::vector<std::string> module_paths{};  ///< `module_call_graph`'s paths, root ("") first
  /// How the user outputs nest (`ep.module()` returns them so); empty: a tuple of them all.
  std::optional<OutputSpec> output_spec{};
  std::map<std::string, Range, std::less<>> ranges{};
  /// Each parameter's and buffer's stored tensor (`data/weights/<model>_weights_config.json`), by
  /// its state name: tied parameters share a file. Empty when the archive has no such record.
  std::map<std::string, StoredTensor, std::less<>> weights{};
  /// Each lifted tensor constant's (`data/constants/<model>_constants_config.json`).
  std::map<std::string, StoredTensor, std::less<>> constants{};
  int schema_major = 0, schema_minor = 0;
  std::string torch_version{};  ///< the PyTorch that exported it ("2.13.0+cpu"); may be empty

  /// The metadata of tensor `name`; null when the program has none.
  const TensorMeta* tensor(std::string_view name) const {
    const auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : &it->second;
  }
};

/// libtorch's name of the schema's `ScalarType` code.
inline std::string_view dtype_name(int code) noexcept {
  switch (code) {
    case 1:
      return "Byte";
    case 2:
      return "Char";
    case 3:
      return "Short";
    case 4:
      return "Int";
    case 5:
      return "Long";
    case 6:
      return "Half";
    case 7:
      return "Float";
    case 8:
      return "Double";
    case 9:
      return "ComplexHalf";
    case 10:
      return "ComplexFloat";
    case 11:
      return "ComplexDouble";
    case 12:
      return "Bool";
    case 13:
      return "BFloat16";
    case 28:
      return "UInt16";
    case 29:
      return "Float8_e4m3fn";
    case 30:
      return "Float8_e5m2";
    case 34:
      return "UInt32";
    case 35:
      return "UInt64";
    default:
      return "Unknown";
  }
}

/// The short class name of a Python type path: `torch.nn.modules.linear.Linear` -> `Linear`.
inline std::string short_class(std::string_view type) {
  const auto dot = type.rfind('.');
  return std::string(dot == std::string_view::npos ? type : type.substr(dot + 1));
}

/// The op name of an export target: `torch.ops.aten.linear.default` -> `linear`,
/// `torch.ops.aten.add_.Tensor` -> `add_`; a target of another form is kept whole.
inline std::string op_of_target(std::string_view target) {
  constexpr std::string_view ops = "torch.ops.";
  if (target.rfind(ops, 0) != 0) return std::string(target);
  std::string_view rest = target.substr(ops.size());  // aten.linear.default
  const auto ns = rest.find('.');
  if (ns == std::string_view::npos) return std::string(rest);
  rest = rest.substr(ns + 1);  // linear.default
  const auto overload = rest.find('.');
  return std::string(overload == std::string_view::npos ? rest : rest.substr(0, overload));
}

/// A size expression as a reader writes it: sympy's `Symbol('s40', positive=True, integer=True)`
/// is `s40`, `Integer(2)` is `2`; the rest of the expression is kept as written
/// (`Mul(2, s40)`).
inline std::string expression_text(std::string_view expr) {
  std::string out;
  while (!expr.empty()) {
    const bool symbol = expr.rfind("Symbol('", 0) == 0;
    const bool integer = expr.rfind("Integer(", 0) == 0;
    if (!symbol && !integer) {
      out += expr.front();
      expr.remove_prefix(1);
      continue;
    }
    expr.remove_prefix(8);
    const auto end = expr.find(symbol ? '\'' : ')');
    out += expr.substr(0, end);
    if (end == std::string_view::npos) break;
    expr.remove_prefix(end);
    const auto close = expr.find(')');  // past the symbol's assumptions
    if (close == std::string_view::npos) break;
    expr.remove_prefix(close + 1);
  }
  return out;
}

/// The program's dynamic sizes, one line each, as `recorder` reports them: `image: size 0 is s40
/// in [1, 64] (exported with 3)`. Empty for a program of static shapes.
inline std::vector<std::string> dynamic_sizes(const Program& p) {
  std::vector<std::string> lines;
  for (const InputSpec& in : p.inputs) {
    if (in.kind != InputSpec::Kind::user_input) continue;
    const TensorMeta* t = p.tensor(in.placeholder);
    if (t == nullptr) continue;
    for (std::size_t d = 0; d < t->symbols.size(); ++d) {
      if (t->symbols[d].empty()) continue;
      std::string line = in.placeholder + ": size " + std::to_string(d) + " is " + t->symbols[d];
      if (const auto r = p.ranges.find(t->symbols[d]); r != p.ranges.end())
        line += " in [" + (r->second.min ? std::to_string(*r->second.min) : std::string("-inf")) +
                ", " + (r->second.max ? std::to_string(*r->second.max) : std::string("inf")) + "]";
      if (t->sizes[d] >= 0) line += " (exported with " + std::to_string(t->sizes[d]) + ")";
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

namespace detail {

using json = nlohmann::json;

/// `nn_module_stack`: `key,path,type` entries joined by `;` (a path never holds either).
inline std::vector<Frame> parse_stack(std::string_view s) {
  std::vector<Frame> frames;
  while (!s.empty()) {
    const auto end = s.find(';');
    const std::string_view entry = s.substr(0, end);
    Frame f;
    const auto c1 = entry.find(',');
    const auto c2 = c1 == std::string_view::npos ? c1 : entry.find(',', c1 + 1);
    if (c2 == std::string_view::npos) {
      f.key = std::string(entry);
    } else {
      f.key = std::string(entry.substr(0, c1));
      f.path = std::string(entry.substr(c1 + 1, c2 - c1 - 1));
      f.type = std::string(entry.substr(c2 + 1));
    }
    frames.push_back(std::move(f));
    if (end == std::string_view::npos) break;
    s.remove_prefix(end + 1);
  }
  return frames;
}

/// The tensor names an argument holds (a tensor, a list of them, optional ones).
inline void tensors_of(const json& arg, std::vector<std::string>& out) {
  if (!arg.is_object()) return;
  for (const auto& [kind, value] : arg.items()) {
    if (kind == "as_tensor" || kind == "as_optional_tensor") {
      if (value.is_object() && value.contains("name"))
        out.push_back(value.at("name").get<std::string>());
      else
        tensors_of(value, out);
    } else if (kind == "as_tensors" || kind == "as_optional_tensors") {
      for (const json& t : value) {
        if (t.contains("name"))
          out.push_back(t.at("name").get<std::string>());
        else
          tensors_of(t, out);
      }
    } else if (kind == "as_nested_tensors") {
      for (const json& list : value)
        for (const json& t : list) out.push_back(t.at("name").get<std::string>());
    }
  }
}

inline std::int64_t sym_int(const json& s, std::string& symbol) {
  if (s.contains("as_int")) return s.at("as_int").get<std::int64_t>();
  const json& e = s.at("as_expr");
  symbol = expression_text(e.at("expr_str").get<std::string>());
  if (e.contains("hint") && e.at("hint").is_object() && e.at("hint").contains("as_int"))
    return e.at("hint").at("as_int").get<std::int64_t>();
  return -1;
}

inline TensorMeta tensor_meta(const json& t) {
  TensorMeta m;
  m.dtype = dtype_name(t.at("dtype").get<int>());
  for (const json& s : t.at("sizes")) {
    std::string symbol;
    m.sizes.push_back(sym_int(s, symbol));
    m.symbols.push_back(std::move(symbol));
  }
  m.requires_grad = t.value("requires_grad", false);
  if (const auto d = t.find("device"); d != t.end() && d->is_object()) {
    const std::string type = d->value("type", "cpu");
    m.device = type == "cuda" ? "cuda" : type == "meta" ? "meta" : type == "mps" ? "mps" : "cpu";
  }
  return m;
}

/// A pytree spec `{"type": "builtins.tuple", "context": "null", "children_spec": [...]}`.
inline OutputSpec output_spec(const json& spec) {
  OutputSpec o;
  const json& type = spec.at("type");
  if (type.is_null()) return o;
  const std::string t = type.get<std::string>();
  if (t == "builtins.tuple" || t.find("namedtuple") != std::string::npos ||
      t == "collections.namedtuple")
    o.kind = OutputSpec::Kind::tuple;
  else if (t == "builtins.list")
    o.kind = OutputSpec::Kind::list;
  else if (t == "builtins.dict" || t == "collections.OrderedDict")
    o.kind = OutputSpec::Kind::dict;
  else
    o.kind = OutputSpec::Kind::tuple;
  if (o.kind == OutputSpec::Kind::dict && spec.at("context").is_string()) {
    const json keys = json::parse(spec.at("context").get<std::string>(), nullptr, false);
    if (keys.is_array())
      for (const json& k : keys) o.keys.push_back(k.is_string() ? k.get<std::string>() : k.dump());
  }
  for (const json& c : spec.at("children_spec")) o.children.push_back(output_spec(c));
  return o;
}

inline InputSpec input_spec(const json& spec) {
  InputSpec s;
  auto placeholder = [](const json& arg) {
    if (arg.contains("name")) return arg.at("name").get<std::string>();
    std::vector<std::string> names;
    tensors_of(arg, names);
    return names.empty() ? std::string() : names.front();
  };
  if (const auto u = spec.find("user_input"); u != spec.end()) {
    s.kind = InputSpec::Kind::user_input;
    s.placeholder = placeholder(u->at("arg"));
  } else if (const auto p = spec.find("parameter"); p != spec.end()) {
    s.kind = InputSpec::Kind::parameter;
    s.placeholder = placeholder(p->at("arg"));
    s.target = p->at("parameter_name").get<std::string>();
  } else if (const auto b = spec.find("buffer"); b != spec.end()) {
    s.kind = InputSpec::Kind::buffer;
    s.placeholder = placeholder(b->at("arg"));
    s.target = b->at("buffer_name").get<std::string>();
  } else if (const auto c = spec.find("tensor_constant"); c != spec.end()) {
    s.kind = InputSpec::Kind::constant;
    s.placeholder = placeholder(c->at("arg"));
    s.target = c->at("tensor_constant_name").get<std::string>();
  }
  return s;
}

}  // namespace detail

/// Reads the program from the text of `models/<name>.json` (or a 2.1-2.7 archive's
/// `serialized_exported_program.json`). Throws `ExportedFileError` naming `file` when the text is
/// not JSON, not an exported program, or of a newer schema major than `known_schema_major`.
inline Program parse_program(std::string_view text, const std::filesystem::path& file) {
  using detail::json;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw ExportedFileError(file, "its program is not valid JSON");
  if (!j.contains("graph_module"))
    throw ExportedFileError(file, "its JSON is not an exported program (no graph_module)");
  Program p;
  try {
    if (const auto v = j.find("schema_version"); v != j.end() && v->is_object()) {
      p.schema_major = v->value("major", 0);
      p.schema_minor = v->value("minor", 0);
    }
    if (p.schema_major > known_schema_major)
      throw ExportedFileError(file, "its schema_version " + std::to_string(p.schema_major) + "." +
                                        std::to_string(p.schema_minor) +
                                        " is newer than this reader knows (" +
                                        std::to_string(known_schema_major) + "." +
                                        std::to_string(known_schema_minor) + ")");
    if (const auto v = j.find("torch_version"); v != j.end() && v->is_string())
      p.torch_version = v->get<std::string>();
    const json& gm = j.at("graph_module");
    const json& g = gm.at("graph");
    for (const auto& [name, meta] : g.at("tensor_values").items())
      p.tensors.emplace(name, detail::tensor_meta(meta));
    for (const json& n : g.at("nodes")) {
      Node node;
      node.name = n.value("name", "");
      node.target = n.at("target").get<std::string>();
      for (const json& in : n.at("inputs")) {
        const json& arg = in.at("arg");
        detail::tensors_of(arg, node.inputs);
        if (arg.contains("as_int"))
          node.ints.emplace_back(in.value("name", ""),
                                 std::vector<std::int64_t>{arg.at("as_int").get<std::int64_t>()});
        else if (arg.contains("as_ints"))
          node.ints.emplace_back(in.value("name", ""),
                                 arg.at("as_ints").get<std::vector<std::int64_t>>());
      }
      for (const json& out : n.at("outputs")) detail::tensors_of(out, node.outputs);
      node.arguments = n.at("inputs");
      node.results = n.at("outputs");
      if (const auto m = n.find("metadata"); m != n.end() && m->is_object()) {
        if (const auto s = m->find("nn_module_stack"); s != m->end() && s->is_string())
          node.stack = detail::parse_stack(s->get<std::string>());
        if (const auto f = m->find("torch_fn"); f != m->end() && f->is_string()) {
          const std::string fn =
              f->get<std::string>();  // linear_1;builtin_function_or_method.linear
          const auto semi = fn.find(';');
          node.torch_fn_key = fn.substr(0, semi);
          if (semi != std::string::npos) {
            const auto dot = fn.rfind('.');
            node.torch_fn = fn.substr(dot == std::string::npos || dot < semi ? semi + 1 : dot + 1);
          }
        }
      }
      p.nodes.push_back(std::move(node));
    }
    const json& sig = gm.at("signature");
    for (const json& spec : sig.at("input_specs")) p.inputs.push_back(detail::input_spec(spec));
    for (const json& spec : sig.at("output_specs")) {
      if (!spec.contains("user_output")) continue;
      std::vector<std::string> names;
      detail::tensors_of(spec.at("user_output").at("arg"), names);
      p.outputs.push_back(names.empty() ? std::string() : names.front());
    }
    if (const auto calls = gm.find("module_call_graph"); calls != gm.end())
      for (const json& entry : *calls) {
        p.module_paths.push_back(entry.value("fqn", ""));
        const auto sig = entry.find("signature");
        if (!p.module_paths.back().empty() || sig == entry.end() || !sig->is_object()) continue;
        if (const auto out = sig->find("out_spec"); out != sig->end() && out->is_string()) {
          const json spec =
              json::parse(out->get<std::string>(), nullptr, false);  // [version, spec]
          if (spec.is_array() && spec.size() == 2 && spec[1].is_object())
            p.output_spec = detail::output_spec(spec[1]);
        }
      }
    if (const auto r = j.find("range_constraints"); r != j.end() && r->is_object())
      for (const auto& [symbol, range] : r->items()) {
        Range rg;
        if (range.contains("min_val") && range.at("min_val").is_number_integer())
          rg.min = range.at("min_val").get<std::int64_t>();
        if (range.contains("max_val") && range.at("max_val").is_number_integer())
          rg.max = range.at("max_val").get<std::int64_t>();
        p.ranges.emplace(symbol, rg);
      }
  } catch (const json::exception& e) {
    throw ExportedFileError(file, std::string("its program is malformed: ") + e.what());
  }
  return p;
}

/// Reads where each stored tensor is and how it is laid out from the text of the archive's
/// `data/weights/<model>_weights_config.json` (into `p.weights`; tied parameters share a file) or,
/// with `constants`, `data/constants/<model>_constants_config.json` (into `p.constants`). Throws
/// `ExportedFileError` naming `file` when the text is not such a config.
inline void read_weights_config(std::string_view text, Program& p,
                                const std::filesystem::path& file, bool constants = false) {
  using detail::json;
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const char* what = constants ? "its constants config" : "its weights config";
  if (j.is_discarded() || !j.is_object() || !j.contains("config") || !j.at("config").is_object())
    throw ExportedFileError(file, std::string(what) + " is not valid JSON");
  auto& into = constants ? p.constants : p.weights;
  try {
    for (const auto& [name, entry] : j.at("config").items()) {
      StoredTensor t;
      t.file = entry.at("path_name").get<std::string>();
      t.pickled = entry.value("use_pickle", false);
      if (const auto m = entry.find("tensor_meta"); m != entry.end() && m->is_object()) {
        t.meta = detail::tensor_meta(*m);
        if (const auto st = m->find("strides"); st != m->end())
          for (const json& x : *st) {
            std::string symbol;
            t.strides.push_back(detail::sym_int(x, symbol));
          }
        if (const auto off = m->find("storage_offset"); off != m->end() && off->is_object()) {
          std::string symbol;
          t.storage_offset = detail::sym_int(*off, symbol);
        }
      }
      into.emplace(name, std::move(t));
    }
  } catch (const json::exception& e) {
    throw ExportedFileError(file, std::string(what) + " is malformed: " + e.what());
  }
}

}  // namespace exported

}  // namespace recorder
