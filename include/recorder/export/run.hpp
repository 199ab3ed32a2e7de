#pragma once
/// Running a `torch.export` program: its nodes one by one through libtorch's dispatcher
/// (`c10::Dispatcher`, boxed calls) with the archive's weights, recorded as the static trace
/// reads it (the same module calls and op nodes), with the capture hooks of every recording
/// policy told about each module call. ATen and the dispatcher only.

#include <recorder/adapters/module_call.hpp>
#include <recorder/error.hpp>
#include <recorder/export/archive.hpp>
#include <recorder/export/static_trace.hpp>
#include <recorder/front/front_end.hpp>
#include <recorder/front/recording.hpp>
#include <recorder/observe/ops.hpp>
#include <recorder/tensor/session.hpp>
#include <recorder/torch_version.hpp>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace recorder {

/// Thrown when an exported program cannot run here: an op the libtorch in use lacks (or that
/// the runner cannot call), a weight it cannot read, inputs the program does not accept.
/// `what()` is one line naming the file and the fault.
class ExportedRunError : public ExportedFileError {
 public:
  using ExportedFileError::ExportedFileError;
};

namespace exported::detail {

using json = nlohmann::json;

/// libtorch's type for the schema's `ScalarType` code; nullopt for one it has no name for here.
inline std::optional<c10::ScalarType> scalar_type_of(int code) {
  switch (code) {
    case 1:
      return c10::kByte;
    case 2:
      return c10::kChar;
    case 3:
      return c10::kShort;
    case 4:
      return c10::kInt;
    case 5:
      return c10::kLong;
    case 6:
      return c10::kHalf;
    case 7:
      return c10::kFloat;
    case 8:
      return c10::kDouble;
    case 9:
      return c10::kComplexHalf;
    case 10:
      return c10::kComplexFloat;
    case 11:
      return c10::kComplexDouble;
    case 12:
      return c10::kBool;
    case 13:
      return c10::kBFloat16;
    default:
      return std::nullopt;
  }
}

inline std::optional<c10::ScalarType> scalar_type_named(std::string_view name) {
  for (int code = 1; code <= 13; ++code)
    if (dtype_name(code) == name) return scalar_type_of(code);
  return std::nullopt;
}

/// The values a run computes, by slot: every name the program gives a value (a placeholder, a
/// node's result) has one, given when the runner is made.
using Values = std::vector<c10::IValue>;

/// The slots of a program's names.
class Slots {
 public:
  /// The slot of `name`, given now if it has none.
  int of(const std::string& name) {
    const auto [it, fresh] = index_.try_emplace(name, static_cast<int>(index_.size()));
    return it->second;
  }
  /// The slot of `name`; -1 when it has none.
  int find(const std::string& name) const {
    const auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
  }
  std::size_t size() const noexcept { return index_.size(); }

 private:
  std::unordered_map<std::string, int> index_;
};

/// The value of a constant argument (`{"as_int": 3}`, `{"as_ints": [...]}`, a dtype, ...), read
/// once when the runner is made. Throws `std::runtime_error` naming a kind it cannot read; the
/// kinds that name values (`as_tensor`, `as_sym_int` by name, ...) are compiled by
/// `compile_argument`.
inline c10::IValue constant_argument(const json& arg) {
  const auto named = [](const json& ref) -> c10::IValue {
    throw std::runtime_error("'" + ref.at("name").get<std::string>() + "' is not a constant");
  };
  const auto sym = [](const json& s, const char* constant) -> c10::IValue {
    if (!s.contains(constant))
      throw std::runtime_error("'" + s.at("as_name").get<std::string>() + "' is not a constant");
    const json& c = s.at(constant);
    if (c.is_boolean()) return c.get<bool>();
    if (c.is_number_integer()) return c.get<std::int64_t>();
    return c.get<double>();
  };
  if (!arg.is_object() || arg.empty()) throw std::runtime_error("an argument is not an object");
  const auto first = arg.begin();
  const std::string kind = first.key();
  const json& v = first.value();
  if (kind == "as_none") return {};
  if (kind == "as_tensor") return named(v);
  if (kind == "as_optional_tensor")
    return v.contains("as_tensor") ? named(v.at("as_tensor")) : c10::IValue();
  if (kind == "as_tensors") {
    c10::List<at::Tensor> list;
    for (const json& t : v) list.push_back(named(t).toTensor());
    return list;
  }
  if (kind == "as_optional_tensors") {
    c10::List<c10::optional<at::Tensor>> list;
    for (const json& t : v)
      list.push_back(t.contains("as_tensor")
                         ? c10::optional<at::Tensor>(named(t.at("as_tensor")).toTensor())
                         : c10::optional<at::Tensor>());
    return list;
  }
  if (kind == "as_int") return v.get<std::int64_t>();
  if (kind == "as_ints") return c10::List<std::int64_t>(v.get<std::vector<std::int64_t>>());
  if (kind == "as_float") return v.get<double>();
  if (kind == "as_floats") return c10::List<double>(v.get<std::vector<double>>());
  if (kind == "as_bool") return v.get<bool>();
  if (kind == "as_bools") {
    c10::List<bool> list;
    for (const json& b : v) list.push_back(b.get<bool>());
    return list;
  }
  if (kind == "as_string") return v.get<std::string>();
  if (kind == "as_strings") return c10::List<std::string>(v.get<std::vector<std::string>>());
  if (kind == "as_scalar_type") {
    const auto t = scalar_type_of(v.get<int>());
    if (!t)
      throw std::runtime_error("dtype code " + std::to_string(v.get<int>()) + " is not known here");
    return static_cast<std::int64_t>(*t);
  }
  if (kind == "as_memory_format") {
    switch (v.get<int>()) {
      case 1:
        return static_cast<std::int64_t>(c10::MemoryFormat::Contiguous);
      case 2:
        return static_cast<std::int64_t>(c10::MemoryFormat::ChannelsLast);
      case 3:
        return static_cast<std::int64_t>(c10::MemoryFormat::ChannelsLast3d);
      default:
        return static_cast<std::int64_t>(c10::MemoryFormat::Preserve);
    }
  }
  if (kind == "as_layout") {
    if (v.get<int>() != 7) throw std::runtime_error("only strided tensors run here");
    return static_cast<std::int64_t>(c10::Layout::Strided);
  }
  if (kind == "as_device") {
    const std::string type = v.value("type", "cpu");
    c10::Device d(type);
    if (v.contains("index") && v.at("index").is_number_integer())
      d.set_index(static_cast<c10::DeviceIndex>(v.at("index").get<int>()));
    return d;
  }
  if (kind == "as_sym_int") return sym(v, "as_int");
  if (kind == "as_sym_float") return sym(v, "as_float");
  if (kind == "as_sym_bool") return sym(v, "as_bool");
  if (kind == "as_sym_ints") {
    c10::List<std::int64_t> list;
    for (const json& s : v) list.push_back(sym(s, "as_int").toInt());
    return list;
  }
  throw std::runtime_error("an argument of kind " + kind + " cannot be passed here");
}

/// One argument of a node, compiled: a constant, or the slots of the values it reads.
struct CompiledArg {
  enum class Kind { constant, value, tensors, optional_tensors, ints };
  Kind kind = Kind::constant;
  c10::IValue constant{};
  int slot = -1;                     ///< `value`
  std::vector<int> slots{};          ///< the lists' items; -1: None, or `ints[i]`
  std::vector<std::int64_t> ints{};  ///< `ints`: the constant items

  c10::IValue get(const Values& values) const {
    switch (kind) {
      case Kind::constant:
        return constant;
      case Kind::value:
        return values[static_cast<std::size_t>(slot)];
      case Kind::tensors: {
        c10::List<at::Tensor> list;
        list.reserve(slots.size());
        for (int k : slots) list.push_back(values[static_cast<std::size_t>(k)].toTensor());
        return list;
      }
      case Kind::optional_tensors: {
        c10::List<c10::optional<at::Tensor>> list;
        for (int k : slots)
          list.push_back(
              k < 0 ? c10::optional<at::Tensor>()
                    : c10::optional<at::Tensor>(values[static_cast<std::size_t>(k)].toTensor()));
        return list;
      }
      case Kind::ints:
      default: {
        c10::List<std::int64_t> list;
        for (std::size_t i = 0; i < slots.size(); ++i)
          list.push_back(slots[i] < 0 ? ints[i]
                                      : values[static_cast<std::size_t>(slots[i])].toInt());
        return list;
      }
    }
  }
};

/// Compiles argument `arg`: its references to values become slots, the rest a constant.
inline CompiledArg compile_argument(const json& arg, Slots& slots) {
  CompiledArg c;
  if (!arg.is_object() || arg.empty()) throw std::runtime_error("an argument is not an object");
  const auto first = arg.begin();
  const std::string kind = first.key();
  const json& v = first.value();
  const auto slot_of = [&slots](const json& ref) {
    return slots.of(ref.at("name").get<std::string>());
  };
  if (kind == "as_tensor") {
    c.kind = CompiledArg::Kind::value;
    c.slot = slot_of(v);
  } else if (kind == "as_optional_tensor" && v.contains("as_tensor")) {
    c.kind = CompiledArg::Kind::value;
    c.slot = slot_of(v.at("as_tensor"));
  } else if (kind == "as_tensors") {
    c.kind = CompiledArg::Kind::tensors;
    for (const json& t : v) c.slots.push_back(slot_of(t));
  } else if (kind == "as_optional_tensors") {
    c.kind = CompiledArg::Kind::optional_tensors;
    for (const json& t : v)
      c.slots.push_back(t.contains("as_tensor") ? slot_of(t.at("as_tensor")) : -1);
  } else if ((kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") &&
             v.contains("as_name")) {
    c.kind = CompiledArg::Kind::value;
    c.slot = slots.of(v.at("as_name").get<std::string>());
  } else if (kind == "as_sym_ints") {
    c.kind = CompiledArg::Kind::ints;
    for (const json& x : v) {
      const bool named = x.contains("as_name");
      c.slots.push_back(named ? slots.of(x.at("as_name").get<std::string>()) : -1);
      c.ints.push_back(named ? 0 : x.at("as_int").get<std::int64_t>());
    }
  } else {
    c.constant = constant_argument(arg);
  }
  return c;
}

/// Where a node's results go: a slot per result (a list's items each one; -1: dropped).
struct CompiledResult {
  bool list = false;
  int slot = -1;
  std::vector<int> slots{};
};

inline std::vector<CompiledResult> compile_results(const json& results, Slots& slots) {
  std::vector<CompiledResult> out;
  for (const json& r : results) {
    CompiledResult c;
    if (r.is_object() && !r.empty()) {
      const auto first = r.begin();
      const std::string kind = first.key();
      const json& v = first.value();
      if (kind == "as_tensor") {
        c.slot = slots.of(v.at("name").get<std::string>());
      } else if (kind == "as_tensors" || kind == "as_optional_tensors") {
        c.list = true;
        for (const json& t : v)
          c.slots.push_back(t.contains("name") ? slots.of(t.at("name").get<std::string>())
                            : t.contains("as_tensor")
                                ? slots.of(t.at("as_tensor").at("name").get<std::string>())
                                : -1);
      } else if ((kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") &&
                 v.contains("as_name")) {
        c.slot = slots.of(v.at("as_name").get<std::string>());
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

/// Binds an op's results (`outputs`, in order) to their slots.
inline void bind_results(const std::vector<CompiledResult>& results,
                         c10::ArrayRef<c10::IValue> outputs, Values& values) {
  for (std::size_t k = 0; k < results.size() && k < outputs.size(); ++k) {
    const CompiledResult& r = results[k];
    if (!r.list) {
      if (r.slot >= 0) values[static_cast<std::size_t>(r.slot)] = outputs[k];
      continue;
    }
    const auto list = outputs[k].toListRef();
    for (std::size_t i = 0; i < r.slots.size() && i < list.size(); ++i)
      if (r.slots[i] >= 0) values[static_cast<std::size_t>(r.slots[i])] = list[i];
  }
}

/// How one node runs: a dispatcher op on its compiled arguments (in the schema's order,
/// defaults filled in), or Python arithmetic on sizes (`_operator.mul`).
struct Step {
  std::optional<c10::OperatorHandle> op{};
  std::string arithmetic{};  ///< `mul`, `add`, ... for `_operator.*` targets
  std::string name{};        ///< `aten::linear` (for errors)
  std::vector<CompiledArg> args{};
  std::vector<CompiledResult> results{};
};

/// `torch.ops.aten.add.Tensor` -> `aten::add`, `Tensor` (`default` is the empty overload).
inline std::pair<std::string, std::string> schema_name(std::string_view target) {
  constexpr std::string_view ops = "torch.ops.";
  std::string_view rest = target.substr(ops.size());
  const auto ns = rest.find('.');
  const auto name_end = rest.find('.', ns + 1);
  std::string name =
      std::string(rest.substr(0, ns)) + "::" +
      std::string(rest.substr(
          ns + 1, name_end == std::string_view::npos ? std::string_view::npos : name_end - ns - 1));
  std::string overload =
      name_end == std::string_view::npos ? std::string() : std::string(rest.substr(name_end + 1));
  if (overload == "default") overload.clear();
  return {std::move(name), std::move(overload)};
}

/// Python's arithmetic on ints and floats, as a program computes sizes.
inline c10::IValue arithmetic(const std::string& op, const std::vector<c10::IValue>& a) {
  const auto num = [](const c10::IValue& v) {
    return v.isInt() ? static_cast<double>(v.toInt()) : v.toDouble();
  };
  const bool ints = a.size() >= 1 && a[0].isInt() && (a.size() < 2 || a[1].isInt());
  if (op == "neg") return ints ? c10::IValue(-a.at(0).toInt()) : c10::IValue(-num(a.at(0)));
  const c10::IValue& x = a.at(0);
  const c10::IValue& y = a.at(1);
  if (ints) {
    const std::int64_t i = x.toInt(), j = y.toInt();
    if (op == "add") return i + j;
    if (op == "sub") return i - j;
    if (op == "mul") return i * j;
    if (op == "floordiv")
      return j == 0 ? throw std::runtime_error("division by zero")
                    : (i / j - ((i % j != 0) && ((i < 0) != (j < 0))));
    if (op == "mod")
      return j == 0 ? throw std::runtime_error("division by zero") : ((i % j) + j) % j;
    if (op == "truediv") return static_cast<double>(i) / static_cast<double>(j);
    if (op == "eq") return i == j;
    if (op == "ge") return i >= j;
    if (op == "gt") return i > j;
    if (op == "le") return i <= j;
    if (op == "lt") return i < j;
  } else {
    const double i = num(x), j = num(y);
    if (op == "add") return i + j;
    if (op == "sub") return i - j;
    if (op == "mul") return i * j;
    if (op == "truediv") return i / j;
  }
  throw std::runtime_error("_operator." + op + " cannot run here");
}

}  // namespace exported::detail

/// An exported program ready to run: its plan, the op of each node, its weights and constants
/// read from the archive (tied ones share one tensor). Made once per program and kept by the
/// tracer (`Tracer::run`), so that running again reads nothing.
class ExportedRunner {
 public:
  /// Resolves every node's op in the dispatcher and reads the weights. Throws
  /// `ExportedRunError` naming the first op this libtorch lacks, or a weight it cannot read.
  ExportedRunner(const ExportedProgram& program, const ExportedTraceOptions& options)
      : program_(program), plan_(program_.program, options) {
    try {
      resolve_ops();
    } catch (const exported::detail::json::exception& e) {  // a node's arguments, malformed
      throw ExportedRunError(program_.file, "its node " + program_.program.nodes[compiling_].name +
                                                " is malformed: " + e.what());
    }
    load_state();
  }
  ExportedRunner(const ExportedRunner&) = delete;
  ExportedRunner& operator=(const ExportedRunner&) = delete;

  const ExportedProgram& program() const noexcept { return program_; }
  const exported::detail::Plan& plan() const noexcept { return plan_; }
  /// True when this runner was made for `program` (the same file and program).
  bool made_for(const ExportedProgram& program, bool aten_ops) const {
    return program.file == program_.file && program.model == program_.model &&
           program.program.nodes.size() == program_.program.nodes.size() &&
           aten_ops == plan_.options().aten_ops;
  }

  /// A run asked of the program: `mode` (a program runs as it was exported, so
  /// `TrainMode::train` is refused; `eval` and `keep` run it as it is), then the user inputs
  /// against the program's: their number, dtypes and sizes (a dynamic size within its range).
  /// Throws `ExportedRunError` naming the input and dimension.
  void check_run(const std::vector<c10::IValue>& inputs, TrainMode mode) const {
    if (mode == TrainMode::train)
      throw ExportedRunError(program_.file,
                             "a program runs in the mode it was exported in, and cannot be put in "
                             "train mode (call model.train() before torch.export.export)");
    check_inputs(inputs);
  }

  /// The user inputs checked against the program's; see `check_run`.
  void check_inputs(const std::vector<c10::IValue>& inputs) const {
    const auto user = plan_.user_inputs();
    if (inputs.size() != user.size())
      throw ExportedRunError(program_.file, "the program takes " + std::to_string(user.size()) +
                                                " tensor input(s), " +
                                                std::to_string(inputs.size()) + " given");
    for (std::size_t i = 0; i < user.size(); ++i) {
      const std::string& name = user[i]->placeholder;
      const exported::TensorMeta& meta = *program_.program.tensor(name);
      if (!inputs[i].isTensor())
        throw ExportedRunError(program_.file,
                               "input " + std::to_string(i) + " ('" + name + "') must be a tensor");
      const at::Tensor& t = inputs[i].toTensor();
      const auto want = exported::detail::scalar_type_named(meta.dtype);
      if (want && t.scalar_type() != *want)
        throw ExportedRunError(program_.file, "input " + std::to_string(i) + " ('" + name +
                                                  "') must be " + std::string(meta.dtype) +
                                                  ", not " + c10::toString(t.scalar_type()));
      if (static_cast<std::size_t>(t.dim()) != meta.sizes.size())
        throw ExportedRunError(program_.file, "input " + std::to_string(i) + " ('" + name +
                                                  "') must have " +
                                                  std::to_string(meta.sizes.size()) +
                                                  " dimensions, not " + std::to_string(t.dim()));
      for (std::size_t d = 0; d < meta.sizes.size(); ++d) {
        const std::int64_t size = t.size(static_cast<std::int64_t>(d));
        const std::string at = "input " + std::to_string(i) + " ('" + name + "') has size " +
                               std::to_string(size) + " at dimension " + std::to_string(d);
        if (meta.symbols[d].empty()) {
          if (size != meta.sizes[d])
            throw ExportedRunError(program_.file, at + ", where the program was exported with " +
                                                      std::to_string(meta.sizes[d]) +
                                                      " (a static size)");
          continue;
        }
        const auto r = program_.program.ranges.find(meta.symbols[d]);
        if (r == program_.program.ranges.end()) continue;
        if ((r->second.min && size < *r->second.min) || (r->second.max && size > *r->second.max))
          throw ExportedRunError(
              program_.file,
              at + ", outside the range the program allows for " + meta.symbols[d] + ": [" +
                  (r->second.min ? std::to_string(*r->second.min) : std::string("-inf")) + ", " +
                  (r->second.max ? std::to_string(*r->second.max) : std::string("inf")) + "]");
      }
    }
  }

  /// The values a run starts from: the weights, constants and `inputs` in their slots.
  exported::detail::Values start(const std::vector<c10::IValue>& inputs) const {
    exported::detail::Values values(slots_.size());
    for (const auto& [slot, tensor] : state_) values[static_cast<std::size_t>(slot)] = tensor;
    for (std::size_t i = 0; i < input_slots_.size() && i < inputs.size(); ++i)
      values[static_cast<std::size_t>(input_slots_[i])] = inputs[i];
    return values;
  }

  /// The slot of value `name`; -1 when the program has none.
  int slot(const std::string& name) const { return slots_.find(name); }

  /// One op node as the run records it: nodes [first, end) of the program, its name, the
  /// slots of the tensors it reads and makes (`Plan::operands`, `Plan::results`).
  struct Group {
    std::size_t end = 0;
    std::string op{};
    std::size_t op_id = 0;  ///< the op name's index among the program's distinct ones
    bool inplace = false;
    std::vector<int> operands{}, results{};
  };
  /// The op node starting at node `i` (a node the plan shows).
  const Group& group(std::size_t i) const { return groups_[i]; }
  /// The slots of call `c`'s inputs and outputs.
  const std::vector<int>& call_inputs(std::size_t c) const { return call_inputs_[c]; }
  const std::vector<int>& call_outputs(std::size_t c) const { return call_outputs_[c]; }
  const std::vector<int>& output_slots() const noexcept { return output_slots_; }
  /// How many distinct op names the groups have (`Group::op_id` below it).
  std::size_t op_names() const noexcept { return op_names_; }

  /// Runs node `i` on `values`, binding its results.
  void step(std::size_t i, exported::detail::Values& values) const {
    namespace ed = exported::detail;
    const ed::Step& s = steps_[i];
    if (!s.op) {
      std::vector<c10::IValue> args;
      for (const ed::CompiledArg& a : s.args) args.push_back(a.get(values));
      c10::IValue out = ed::arithmetic(s.arithmetic, args);
      ed::bind_results(s.results, c10::ArrayRef<c10::IValue>(&out, 1), values);
      return;
    }
    torch::jit::Stack stack;
    stack.reserve(s.args.size());
    for (const ed::CompiledArg& a : s.args) stack.push_back(a.get(values));
    s.op->callBoxed(&stack);
    ed::bind_results(s.results, stack, values);
  }

 private:
  void resolve_ops() {
    namespace ed = exported::detail;
    const auto& nodes = program_.program.nodes;
    steps_.resize(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      compiling_ = i;
      const std::string& target = nodes[i].target;
      ed::Step& s = steps_[i];
      if (target.rfind("_operator.", 0) == 0) {
        s.arithmetic = target.substr(10);
        s.name = target;
        continue;
      }
      if (target.rfind("torch.ops.", 0) != 0 || target.rfind("torch.ops.higher_order.", 0) == 0)
        throw ExportedRunError(program_.file, "it calls " + target +
                                                  ", which recorder's runner cannot call (read it "
                                                  "without running: summary, draw)");
      const auto [name, overload] = ed::schema_name(target);
      s.name = overload.empty() ? name : name + "." + overload;
      const auto handle = c10::Dispatcher::singleton().findSchema({name, overload});
      if (!handle)
        throw ExportedRunError(
            program_.file,
            "it calls " + s.name + ", which libtorch " + running_torch().version +
                " does not have (the program was exported by PyTorch " +
                (program_.program.torch_version.empty() ? std::string("?")
                                                        : program_.program.torch_version) +
                ")");
      s.op = *handle;
      compile(nodes[i], s);
    }
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (compiling_ = i; !steps_[i].op) {
        for (const auto& a : nodes[i].arguments)
          steps_[i].args.push_back(ed::compile_argument(a.at("arg"), slots_));
        steps_[i].results = ed::compile_results(nodes[i].results, slots_);
      }
    precompute();
  }

  /// Node `n`'s arguments in the schema's order (by name; an absent one its default), and its
  /// results' slots. A Python number where the schema takes a tensor (`mul.Tensor(x, 0.25)`)
  /// is a wrapped number, as Python's argument parser passes it (it takes part in type
  /// promotion as a scalar).
  void compile(const exported::Node& n, exported::detail::Step& s) {
    namespace ed = exported::detail;
    for (const c10::Argument& a : s.op->schema().arguments()) {
      const ed::json* given = nullptr;
      for (const auto& arg : n.arguments)
        if (arg.value("name", "") == a.name()) {
          given = &arg.at("arg");
          break;
        }
      ed::CompiledArg c;
      if (given != nullptr) {
        try {
          c = ed::compile_argument(*given, slots_);
        } catch (const std::exception& e) {
          throw ExportedRunError(program_.file, "its node " + n.name + " (" + s.name +
                                                    ") cannot run here: " + e.what());
        }
        const c10::IValue& k = c.constant;
        if (c.kind == ed::CompiledArg::Kind::constant &&
            (k.isDouble() || k.isInt() || k.isBool()) &&
            a.type()->kind() == c10::TypeKind::TensorType) {
          at::Tensor w = k.isDouble() ? at::scalar_tensor(k.toDouble(), at::kDouble)
                         : k.isInt()  ? at::scalar_tensor(k.toInt(), at::kLong)
                                      : at::scalar_tensor(k.toBool(), at::kBool);
          w.unsafeGetTensorImpl()->set_wrapped_number(true);
          c.constant = std::move(w);
        }
      } else if (a.default_value()) {
        c.constant = *a.default_value();
      } else {
        throw ExportedRunError(program_.file, "its node " + n.name + " calls " + s.name +
                                                  " without its argument '" + a.name() + "'");
      }
      s.args.push_back(std::move(c));
    }
    s.results = ed::compile_results(n.results, slots_);
  }

  /// The slots of the user inputs, of the recorded op nodes' and calls' tensors, of the outputs.
  void precompute() {
    const exported::Program& p = program_.program;
    for (const exported::InputSpec* in : plan_.user_inputs())
      input_slots_.push_back(slots_.of(in->placeholder));
    const auto slots_of = [this](const auto& names) {
      std::vector<int> out;
      for (const auto& name : names) out.push_back(slots_.of(std::string(name)));
      return out;
    };
    groups_.resize(p.nodes.size());
    std::unordered_map<std::string, std::size_t> ids;
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      if (!plan_.shown(i)) continue;
      Group& g = groups_[i];
      g.end = plan_.group_end(i);
      std::tie(g.op, g.inplace) = plan_.op_name(i);
      g.op_id = ids.try_emplace(g.op, ids.size()).first->second;
      g.operands = slots_of(plan_.operands(i, g.end));
      g.results = slots_of(plan_.results(i, g.end));
    }
    for (const exported::detail::CallSpan& c : plan_.calls()) {
      call_inputs_.push_back(slots_of(c.inputs));
      call_outputs_.push_back(slots_of(c.outputs));
    }
    output_slots_ = slots_of(p.outputs);
    op_names_ = ids.size();
  }

  /// Reads every parameter, buffer and constant the program lifts from the archive.
  void load_state() {
    const exported::Program& p = program_.program;
    std::optional<caffe2::serialize::PyTorchStreamReader> reader;
    std::map<std::string, at::Tensor> by_file;  // tied parameters share one tensor
    const auto read = [&](const exported::StoredTensor& st, const std::string& folder,
                          const std::string& name) -> at::Tensor {
      if (st.pickled)
        throw ExportedRunError(program_.file,
                               "its " + name + " is stored pickled, which the runner cannot read");
      const std::string record = "data/" + folder + "/" + st.file;
      const auto dtype = exported::detail::scalar_type_named(st.meta.dtype);
      if (!dtype)
        throw ExportedRunError(program_.file, "its " + name + " is of dtype " +
                                                  std::string(st.meta.dtype) +
                                                  ", which the runner cannot read");
      const std::string key = folder + "/" + st.file;
      at::Tensor storage;
      if (const auto it = by_file.find(key); it != by_file.end()) {
        storage = it->second;
      } else {
        try {
          if (!reader) reader.emplace(program_.file.string());
          if (!reader->hasRecord(record))
            throw ExportedRunError(program_.file,
                                   "its weight file " + record + " (" + name + ") is missing");
          const auto [data, size] = reader->getRecord(record);
          const auto item = static_cast<std::size_t>(c10::elementSize(*dtype));
          storage = at::empty({static_cast<std::int64_t>(size / item)},
                              at::TensorOptions().dtype(*dtype));
          std::memcpy(storage.data_ptr(), data.get(), size - size % item);
        } catch (const c10::Error& e) {
          std::string why = e.what_without_backtrace();
          throw ExportedRunError(program_.file, "its weight file " + record + " cannot be read (" +
                                                    why.substr(0, why.find('\n')) + ")");
        }
        by_file.emplace(key, storage);
      }
      std::vector<std::int64_t> strides = st.strides;
      if (strides.size() != st.meta.sizes.size()) {  // contiguous
        strides.assign(st.meta.sizes.size(), 1);
        for (std::size_t d = strides.size(); d-- > 1;)
          strides[d - 1] = strides[d] * st.meta.sizes[d];
      }
      at::Tensor t = storage.as_strided(st.meta.sizes, strides, st.storage_offset).detach();
      if (st.meta.requires_grad) t.requires_grad_(true);
      return t;
    };
    std::map<std::string, at::Tensor> tied;  // a parameter read twice is one tensor
    for (const exported::InputSpec& s : p.inputs) {
      using Kind = exported::InputSpec::Kind;
      if (s.kind != Kind::parameter && s.kind != Kind::buffer && s.kind != Kind::constant) continue;
      const auto& table = s.kind == Kind::constant ? p.constants : p.weights;
      const auto it = table.find(s.target);
      if (it == table.end())
        throw ExportedRunError(program_.file, "it has no stored tensor for " + s.target);
      const std::string folder = s.kind == Kind::constant ? "constants" : "weights";
      const std::string key =
          folder + "/" + it->second.file + "#" + std::to_string(it->second.storage_offset);
      auto found = tied.find(key);
      if (found == tied.end()) found = tied.emplace(key, read(it->second, folder, s.target)).first;
      state_.emplace_back(slots_.of(s.placeholder), found->second);
    }
  }

  ExportedProgram program_;
  exported::detail::Plan plan_;
  exported::detail::Slots slots_;
  std::vector<exported::detail::Step> steps_;
  std::vector<std::pair<int, at::Tensor>> state_;  ///< the weights and constants, by slot
  std::vector<int> input_slots_, output_slots_;
  std::vector<Group> groups_;  ///< by the node each starts at
  std::size_t op_names_ = 0;
  std::vector<std::vector<int>> call_inputs_, call_outputs_;
  std::size_t compiling_ = 0;  ///< the node `resolve_ops` is at, for its errors
};

namespace exported::detail {

/// The model-level facts of a program: its class, its parameters (tied ones once).
inline recorder::detail::ModelFacts program_facts(const Plan& plan) {
  recorder::detail::ModelFacts facts;
  const ModuleInfo all = plan.describe("", plan.root_type());
  facts.class_name = all.class_name;
  facts.total_params = all.param_count;
  facts.trainable_params = all.trainable_count;
  facts.param_bytes = plan.param_bytes();
  return facts;
}

/// The user outputs nested as `spec` says, leaves taken from `outs` from `next` on.
inline c10::IValue nest(const OutputSpec& spec, const std::vector<c10::IValue>& outs,
                        std::size_t& next) {
  switch (spec.kind) {
    case OutputSpec::Kind::leaf:
      return next < outs.size() ? outs[next++] : c10::IValue();
    case OutputSpec::Kind::list: {
      c10::impl::GenericList list(c10::AnyType::get());
      for (const OutputSpec& c : spec.children) list.push_back(nest(c, outs, next));
      return list;
    }
    case OutputSpec::Kind::dict: {
      c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
      for (std::size_t k = 0; k < spec.children.size(); ++k)
        dict.insert(k < spec.keys.size() ? spec.keys[k] : std::to_string(k),
                    nest(spec.children[k], outs, next));
      return dict;
    }
    case OutputSpec::Kind::tuple:
    default: {
      std::vector<c10::IValue> items;
      for (const OutputSpec& c : spec.children) items.push_back(nest(c, outs, next));
      return c10::ivalue::Tuple::create(std::move(items));
    }
  }
}

/// The program's result as `ep.module()(*args)` gives it: nested as its output spec says (one
/// tensor, a tuple `(out, (h, c))`, ...); without a spec one value, or a tuple of them.
inline c10::IValue program_output(const ExportedRunner& runner, const Values& values) {
  const Program& p = runner.program().program;
  std::vector<c10::IValue> outs;
  for (int slot : runner.output_slots()) outs.push_back(values[static_cast<std::size_t>(slot)]);
  if (p.output_spec) {
    std::size_t next = 0;
    return nest(*p.output_spec, outs, next);
  }
  if (outs.size() == 1) return outs.front();
  return c10::ivalue::Tuple::create(std::move(outs));
}

/// Runs the program on `inputs` without recording.
inline Traced<c10::IValue> run_plain(ExportedRunner& runner, const std::vector<c10::IValue>& inputs,
                                     const TraceOptions& options) {
  runner.check_run(inputs, options.mode);
  std::optional<at::NoGradGuard> no_grad;
  if (options.no_grad) no_grad.emplace();
  Values values = runner.start(inputs);
  for (std::size_t i = 0; i < runner.program().program.nodes.size(); ++i) runner.step(i, values);
  Traced<c10::IValue> result;
  result.output = program_output(runner, values);
  return result;
}

/// Runs the program on `inputs` and records it: the module calls and op nodes of the static
/// trace, from the tensors the run makes, the capture hooks told about every module call.
inline Traced<c10::IValue> trace(ExportedRunner& runner, const std::vector<c10::IValue>& inputs,
                                 const TraceOptions& options,
                                 std::vector<recorder::detail::CallHooks*> hooks,
                                 const std::shared_ptr<GraphStorage>& storage = nullptr) {
  namespace rd = recorder::detail;
  runner.check_run(inputs, options.mode);
  const Plan& plan = runner.plan();
  const Program& p = plan.program();
  const std::vector<CallSpan>& calls = plan.calls();
  rd::Recording rec(std::move(hooks), storage);
  rd::Session& s = rec.session();
  rd::OpRecorder ops;
  ops.session = &s;
  std::optional<at::NoGradGuard> no_grad;
  if (options.no_grad) no_grad.emplace();

  Values values = runner.start(inputs);
  static const at::Tensor none;
  const auto tensor = [&values](int slot) -> const at::Tensor& {
    const c10::IValue& v = values[static_cast<std::size_t>(slot)];
    return v.isTensor() ? v.toTensor() : none;
  };
  std::vector<at::Tensor> input_tensors;
  std::vector<NodeId> input_nodes;
  for (const c10::IValue& v : inputs) input_tensors.push_back(v.toTensor());
  for (std::size_t i = 0; i < input_tensors.size(); ++i) {
    input_nodes.push_back(rec.input(input_tensors[i], i, input_tensors.size()));
    ops.nodes.set(input_tensors[i], input_nodes.back());
  }
  std::map<std::string, ModuleId> modules;
  const auto module_id = [&](const std::string& path, const std::string& type,
                             const CallSpan* span) {
    if (const auto it = modules.find(path); it != modules.end()) return it->second;
    const ModuleId id = s.graph.add_module(plan.describe(path, type));
    if (span != nullptr) plan.add_attributes(s.graph, id, *span);
    modules.emplace(path, id);
    return id;
  };
  struct Frame {
    std::size_t span;
    NodeId call;
    std::vector<at::Tensor> inputs;
  };
  std::vector<Frame> frames;
  const NodeId root =
      rd::enter_call(s, module_id("", plan.root_type(), nullptr), input_nodes, false);
  std::size_t current = 0;  // the node running
  const auto close = [&](NodeId call, const std::vector<at::Tensor>& in,
                         const std::vector<int>& names, bool leaf) {
    std::vector<at::Tensor> outs;
    for (int slot : names) outs.push_back(tensor(slot));
    std::vector<NodeId> nodes;
    if (leaf) {
      rd::leave_call(s, call);
      for (const at::Tensor& t : outs) {
        const NodeId n = rd::record_output(s, call, t);
        ops.nodes.set(t, n);
        nodes.push_back(n);
      }
    } else {
      for (const at::Tensor& t : outs) nodes.push_back(ops.operand(t));
    }
    std::vector<at::Tensor> replaced = outs;
    rd::record_return(s, call, nodes, in, replaced);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      if (replaced[k].is_same(outs[k])) continue;
      values[static_cast<std::size_t>(names[k])] = replaced[k];  // flows on; the node stays
      ops.nodes.set(replaced[k], nodes[k]);
    }
    if (!leaf) rd::leave_call(s, call);
  };
  std::vector<c10::IValue> outs;                              // an op node's results, reused
  std::vector<std::string_view> op_names(runner.op_names());  // interned on first use
  try {
    rd::notify_enter(s, root, input_tensors);
    std::size_t next_call = 0;
    for (std::size_t i = 0; i < p.nodes.size();) {
      if (!plan.shown(i)) {
        current = i;
        runner.step(i, values);
        ++i;
        continue;
      }
      while (!frames.empty() && !plan.within(i, frames.back().span)) {
        const Frame f = std::move(frames.back());
        frames.pop_back();
        close(f.call, f.inputs, runner.call_outputs(f.span), calls[f.span].opaque);
      }
      while (next_call < calls.size() && calls[next_call].first == i) {
        const CallSpan& c = calls[next_call];
        Frame f{next_call, {}, {}};
        std::vector<NodeId> in;
        for (int x : runner.call_inputs(next_call)) {
          f.inputs.push_back(tensor(x));
          in.push_back(ops.operand(f.inputs.back()));
        }
        f.call = rd::enter_call(s, module_id(c.path, c.type, &c), in, c.opaque);
        frames.push_back(std::move(f));
        rd::notify_enter(s, frames.back().call, frames.back().inputs);
        ++next_call;
      }
      const bool hidden = !frames.empty() && calls[frames.back().span].opaque;
      const ExportedRunner::Group& group = runner.group(i);
      const std::size_t end = hidden ? i + 1 : group.end;
      if (s.op_clock != nullptr) ops.started = rd::ticks();
      for (std::size_t k = i; k < end; ++k) {
        current = k;
        runner.step(k, values);
      }
      if (s.op_clock != nullptr) ops.ended = rd::ticks();
      if (!hidden) {
        ops.inputs.clear();
        for (int t : group.operands) ops.inputs.push_back(ops.operand(tensor(t)));
        outs.clear();
        for (int r : group.results) outs.emplace_back(tensor(r));
        std::string_view& name = op_names[group.op_id];
        if (name.empty()) name = s.intern(group.op);
        ops.record(name, group.inplace, c10::ArrayRef<const c10::IValue>(outs.data(), outs.size()));
      }
      i = end;
    }
    while (!frames.empty()) {
      const Frame f = std::move(frames.back());
      frames.pop_back();
      close(f.call, f.inputs, runner.call_outputs(f.span), calls[f.span].opaque);
    }
    close(root, input_tensors, runner.output_slots(), false);
  } catch (...) {
    Failure f = rd::describe_failure(
        s, p.nodes.empty() ? std::string() : op_of_target(p.nodes[current].target),
        rd::current_exception_message());
    for (const Frame& frame : frames) s.graph.set_failed(frame.call);
    s.graph.set_failed(root);
    s.stack.clear();
    if (!s.failure) s.failure = f;
    register_containers(s.graph,
                        [&plan](std::string_view path) { return plan.describe_container(path); });
    try {
      std::throw_with_nested(TraceError(std::move(f)));
    } catch (TraceError& e) {
      rec.fail(e, program_facts(plan));
      throw;
    }
  }
  register_containers(s.graph,
                      [&plan](std::string_view path) { return plan.describe_container(path); });
  rec.end();
  std::size_t index = 0;
  for (int slot : runner.output_slots()) {
    const at::Tensor t = tensor(slot);
    if (t.defined()) rec.output(ops.operand(t), t, index++, runner.output_slots().size());
  }
  Traced<c10::IValue> result;
  rec.finish(result, program_facts(plan));
  result.output = program_output(runner, values);
  return result;
}

}  // namespace exported::detail

/// The inputs `program` was exported with (`data/sample_inputs/<model>.pt`, which
/// `torch.export.save` writes): its positional arguments, then its keyword arguments' values.
/// Empty when the archive has none, or this libtorch cannot read them (a newer PyTorch's pickle
/// on libtorch 1.13): `inputs_like_exported` then makes inputs of the same shapes.
inline std::vector<c10::IValue> sample_inputs(const ExportedProgram& program) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(program.file.string());
    const std::string record = "data/sample_inputs/" + program.model + ".pt";
    if (!reader.hasRecord(record)) return {};
    const auto [data, size] = reader.getRecord(record);
    const std::vector<char> bytes(static_cast<const char*>(data.get()),
                                  static_cast<const char*>(data.get()) + size);
    const c10::IValue v = torch::jit::pickle_load(bytes);  // (args, kwargs)
    if (!v.isTuple() || v.toTupleRef().elements().size() != 2) return {};
    std::vector<c10::IValue> out;
    const c10::IValue& args = v.toTupleRef().elements()[0];
    if (args.isTuple())
      for (const c10::IValue& a : args.toTupleRef().elements()) out.push_back(a);
    else if (args.isList())
      for (const c10::IValue& a : args.toListRef()) out.push_back(a);
    const c10::IValue& kwargs = v.toTupleRef().elements()[1];
    if (kwargs.isGenericDict())
      for (const auto& entry : kwargs.toGenericDict()) out.push_back(entry.value());
    return out;
  } catch (const std::exception&) {
    return {};
  }
}

/// Inputs of the shapes and dtypes `program` was exported with (a dynamic size at the size it
/// was exported with), as torchinfo makes them: `torch.randn` for floating dtypes (from the
/// current seed), zeros otherwise.
inline std::vector<c10::IValue> inputs_like_exported(const ExportedProgram& program) {
  std::vector<c10::IValue> out;
  const exported::detail::Plan plan(program.program, {});
  for (const exported::InputSpec* in : plan.user_inputs()) {
    const exported::TensorMeta& meta = *program.program.tensor(in->placeholder);
    const auto dtype = exported::detail::scalar_type_named(meta.dtype).value_or(c10::kFloat);
    std::vector<std::int64_t> sizes = meta.sizes;
    for (std::int64_t& d : sizes) d = std::max<std::int64_t>(d, 1);
    const auto options = at::TensorOptions().dtype(dtype);
    out.emplace_back(c10::isFloatingType(dtype) ? at::randn(sizes, options)
                                                : at::zeros(sizes, options));
  }
  return out;
}

namespace detail {

/// What `Tracer::run` calls for an exported program (`front/front_end.hpp`).
template <>
struct FrontEnd<ExportedProgram> {
  using Cache = std::unique_ptr<ExportedRunner>;
  static ExportedRunner& runner(Cache& cache, const ExportedProgram& program, bool aten_ops) {
    if (!cache || !cache->made_for(program, aten_ops))
      cache = std::make_unique<ExportedRunner>(program, ExportedTraceOptions{.aten_ops = aten_ops});
    return *cache;
  }
  static Traced<c10::IValue> run_plain(Cache& cache, const ExportedProgram& program,
                                       std::vector<c10::IValue> inputs,
                                       const TraceOptions& options) {
    return exported::detail::run_plain(runner(cache, program, false), inputs, options);
  }
  static Traced<c10::IValue> trace(Cache& cache, const ExportedProgram& program,
                                   std::vector<c10::IValue> inputs, const TraceOptions& options,
                                   std::vector<CallHooks*> hooks, bool aten_ops,
                                   const std::shared_ptr<GraphStorage>& storage) {
    return exported::detail::trace(runner(cache, program, aten_ops), inputs, options,
                                   std::move(hooks), storage);
  }
};

}  // namespace detail

}  // namespace recorder
