#pragma once
/// Recording aten ops from `at::RecordFunction` events: what each op overload is (cached), which
/// node each tensor is (by TensorImpl), and the outermost op of an event as a function node.
/// Shared by the leaf observer (`record::AtenOps`) and the TorchScript front end.

#include <recorder/tensor/session.hpp>

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <c10/util/flat_hash_map.h>
#include <c10/util/intrusive_ptr.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

/// Calls `f(tensor)` for every defined tensor in `v` (tensors, lists, tuples, optionals, dicts'
/// values), in order: the tensors of what a TorchScript model returned
/// (`Tracer::run(torch::jit::Module&, ...)`'s `output`), or of its inputs.
template <class F>
void for_each_tensor(const c10::IValue& v, F&& f) {
  if (v.isTensor()) {
    if (v.toTensor().defined()) f(v.toTensor());
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList().vec())
      if (t.defined()) f(t);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) for_each_tensor(e, f);
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) for_each_tensor(e, f);
  } else if (v.isGenericDict()) {
    for (const auto& entry : v.toGenericDict()) for_each_tensor(entry.value(), f);
  }
}

}  // namespace recorder

namespace recorder::detail {

/// The observer reads `at::RecordFunction::inputs()`, whose debug check reads a member that
/// only exists without NDEBUG, while libtorch itself is built with NDEBUG (Debian 1.13): in a
/// translation unit without NDEBUG the check reads past the object. So the observer needs NDEBUG.
/// Internal linkage (not `inline`): it differs between translation units built with and
/// without NDEBUG, which an inline variable must not (an ODR violation in a mixed build).
#ifdef NDEBUG
static constexpr bool observer_usable = true;
#else
static constexpr bool observer_usable = false;
#endif

/// What the observer knows of one op overload, from its schema.
struct OpInfo {
  std::string name;             ///< "add", "conv2d", "prim::foo": "aten::" and in-place '_' removed
  bool inplace = false;         ///< `add_`, `relu_`
  bool ours = false;            ///< a `recorder::` op (the TorchScript markers): never recorded
  bool has_schema = false;      ///< the counts below are known
  bool tensor_returns = true;   ///< it returns a tensor (or a list or optional of them)
  std::uint32_t arguments = 0;  ///< the schema's arity: an event's inputs are its last ones
  std::uint32_t returns = 0;    ///< the schema's outputs: an event's outputs are its last ones
  std::int32_t kernel_size = -1;  ///< the index of an argument named `kernel_size` (poolings)
};

/// `OpInfo`s by op overload. An event's `name()` is its schema's name and stays the same
/// pointer for one overload, so the schema is read once per overload (libtorch 1.13).
class OpTable {
 public:
  const OpInfo& of(const at::RecordFunction& fn) {
    const void* key = fn.name();
    if (const auto* info = ops_.find(key)) return **info;
    return **ops_.try_emplace(key, std::make_unique<const OpInfo>(describe(fn))).first;
  }

  static OpInfo describe(const at::RecordFunction& fn) {
    OpInfo info;
    std::string_view name = fn.name();
    info.ours = name.substr(0, 10) == "recorder::";
    if (name.substr(0, 6) == "aten::") name.remove_prefix(6);
    info.inplace = name.size() > 1 && name.back() == '_' && name.front() != '_';
    if (info.inplace) name.remove_suffix(1);
    info.name = std::string(name);
    if (auto schema = fn.operator_schema()) {
      info.has_schema = true;
      info.arguments = static_cast<std::uint32_t>(schema->arguments().size());
      for (std::size_t i = 0; i < schema->arguments().size(); ++i)
        if (schema->arguments()[i].name() == "kernel_size")
          info.kernel_size = static_cast<std::int32_t>(i);
      info.returns = static_cast<std::uint32_t>(schema->returns().size());
      info.tensor_returns = false;
      for (const c10::Argument& r : schema->returns()) {
        const c10::TypePtr& t = r.type();
        if (t->isSubtypeOf(*c10::TensorType::get()) ||
            t->isSubtypeOf(*c10::OptionalType::ofTensor()) ||
            t->isSubtypeOf(*c10::ListType::ofTensors()))
          info.tensor_returns = true;
      }
    }
    return info;
  }

 private:
  IdTable<std::unique_ptr<const OpInfo>> ops_;  // by name pointer; an OpInfo never moves
};

/// The node each tensor seen so far is, by TensorImpl. An entry holds a weak reference to its
/// TensorImpl: the object (not its data) stays allocated, so a freed tensor's address is never
/// taken by another tensor while the recording lives.
class TensorNodes {
 public:
  /// The node of `t`, or an invalid id when `t` was never seen.
  NodeId find(const at::Tensor& t) const {
    if (!t.defined()) return {};
    const auto it = map_.find(t.unsafeGetTensorImpl());
    return it == map_.end() ? NodeId{} : it->second.node;
  }
  /// Makes `n` the node of `t` (an in-place op's output replaces its input's node).
  void set(const at::Tensor& t, NodeId n) {
    if (!t.defined()) return;
    const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
    if (auto it = map_.find(impl); it != map_.end()) {
      it->second.node = n;
      return;
    }
    map_.emplace(impl, Entry{n, Weak(t.getIntrusivePtr())});
  }
  void reserve(std::size_t n) { map_.reserve(n); }
  std::size_t size() const noexcept { return map_.size(); }
  void clear() noexcept { map_.clear(); }

 private:
  using Weak = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;
  struct Entry {
    NodeId node;
    Weak keep;
  };
  ska::flat_hash_map<const c10::TensorImpl*, Entry> map_;  // open addressing: no node per tensor
};

/// How many of `v`'s tensors its last value holds when `v` is a dict (torchvision's segmentation
/// models return one), else 0. torchinfo shows a dict output by its last value: a front end lists
/// those tensors first among a call's outputs.
inline std::size_t dict_tail(const c10::IValue& v) {
  if (!v.isGenericDict()) return 0;
  const auto d = v.toGenericDict();
  if (d.empty()) return 0;
  std::size_t n = 0;
  c10::IValue last;
  for (const auto& entry : d) last = entry.value();
  for_each_tensor(last, [&n](const at::Tensor&) { ++n; });
  return n;
}

/// The last `n` values of an event's inputs or outputs: the interpreter passes its whole stack
/// to boxed ops, so values before the op's own arguments belong to its callers.
inline c10::ArrayRef<const c10::IValue> own_values(c10::ArrayRef<const c10::IValue> all,
                                                   const OpInfo& op, std::uint32_t n) {
  if (!op.has_schema || all.size() < n) return all;
  return all.slice(all.size() - n);
}

/// Records ops into a session as function nodes, wiring them by tensor identity: the core
/// every op observer shares (an `at::RecordFunction` one, TorchScript's graph markers).
struct OpRecorder {
  Session* session = nullptr;
  TensorNodes nodes;
  std::vector<NodeId> inputs;  ///< scratch: the inputs of the op being recorded
  /// When the op being recorded started and ended (`ticks()`), read by the caller only when
  /// the session has an op clock; `record` tells the clock.
  std::uint64_t started = 0;
  std::uint64_t ended = 0;

  /// The node of tensor `t` as an operand: seen before, or a new parameter or constant node.
  NodeId operand(const at::Tensor& t) {
    if (const NodeId n = nodes.find(t); n.valid()) return n;
    return operand_node(*session, t, NodeRef{});
  }

  /// Puts the nodes of the tensors in `values` into `inputs` (after what is there).
  void add_inputs(c10::ArrayRef<const c10::IValue> values) {
    for (const c10::IValue& v : values)
      for_each_tensor(v, [this](const at::Tensor& t) { inputs.push_back(operand(t)); });
  }

  /// Records op `name` consuming `inputs`, producing the tensors in `outputs`: a function node
  /// under the innermost open call, a tensor node per output. Records nothing when no tensor
  /// comes out. Returns the function node (or an invalid id).
  NodeId record(std::string_view name, bool inplace, c10::ArrayRef<const c10::IValue> outputs) {
    bool any = false;
    for (const c10::IValue& v : outputs)
      for_each_tensor(v, [&any](const at::Tensor&) { any = true; });
    if (!any) return {};
    const NodeId node = record_function(*session, name, inputs, inplace);
    for (const c10::IValue& v : outputs)
      for_each_tensor(v,
                      [&](const at::Tensor& t) { nodes.set(t, record_output(*session, node, t)); });
    if (session->op_clock != nullptr) session->op_clock->op(session->graph, node, started, ended);
    return node;
  }
};

/// The outermost op of the `at::RecordFunction` event being observed on one thread.
///
/// `begin` reads the op's inputs (the only place libtorch offers them), `end` records it. An op
/// that throws is not recorded; its name is kept in `failed_op`. Ops nested in the outermost
/// one are the caller's to skip (`depth`).
struct ObservedOps : OpRecorder {
  OpTable* table = nullptr;
  int depth = 0;               ///< nesting of the events being observed
  const OpInfo* op = nullptr;  ///< the outermost op in flight, or null
  bool recording = false;      ///< `op` is recorded (else only watched for a failure)
  int uncaught = 0;            ///< `std::uncaught_exceptions()` when it started
  std::string failed_op;       ///< the first outermost op that threw, if any
  /// Interned names of the ops recorded in this session, by `OpInfo`.
  IdTable<std::string_view> names;

  /// Starts watching op `info` (an outermost one) without recording it: if it throws, its name
  /// becomes `failed_op`.
  void watch(const OpInfo& info) {
    op = &info;
    recording = false;
    uncaught = std::uncaught_exceptions();
  }

  /// Starts recording op `info` of event `fn` (an outermost one).
  void begin(const at::RecordFunction& fn, const OpInfo& info) {
    watch(info);
    recording = true;
    inputs.clear();
    add_inputs(own_values(fn.inputs(), info, info.arguments));
    if (session->op_clock != nullptr) started = ticks();
  }

  /// Ends the op begun last: records it, or notes that it threw. Returns its function node
  /// (invalid when it threw or returned no tensor).
  NodeId end(const at::RecordFunction& fn) {
    if (session->op_clock != nullptr) ended = ticks();
    const OpInfo* info = op;
    op = nullptr;
    if (info == nullptr) return {};
    if (std::uncaught_exceptions() > uncaught) {
      if (failed_op.empty()) failed_op = info->name;
      return {};
    }
    if (!recording) return {};
    const std::vector<c10::IValue>& all = fn.outputs();
    return record(
        name_of(*info), info->inplace,
        own_values(c10::ArrayRef<const c10::IValue>(all.data(), all.size()), *info, info->returns));
  }

  std::string_view name_of(const OpInfo& info) {
    if (const std::string_view* name = names.find(&info)) return *name;
    return *names.try_emplace(&info, session->intern(info.name)).first;
  }
};

}  // namespace recorder::detail
