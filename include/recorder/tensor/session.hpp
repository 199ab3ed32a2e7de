#pragma once
/// The non-template recording core: the thread's current session and what every traced op calls.

#include <recorder/detail/id_map.hpp>
#include <recorder/error.hpp>
#include <recorder/graph/graph.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/tensor/index_error.hpp>

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace recorder::detail {

class Session;
class OpClock;
class OpTable;        // observe/ops.hpp
struct Submodules;    // observe/attribution.hpp
class ModuleRecords;  // adapters/module_records.hpp

/// Where a `RecorderTensor` points: a node of one particular session.
struct NodeRef {
  NodeId node;
  std::uint64_t serial = 0;  ///< the session's process-wide serial; 0 for none
};

/// A capture policy's view of module calls (activations, gradients: `capture/`). The adapters
/// tell it when a call opens and when it returns, only for policies that capture calls, so
/// the graph-only policies pay nothing. `begin` and `end` bracket one forward.
///
/// One forward at a time: a recording keeps the state of the forward it is in (the calls
/// open, the run being timed), so a `Recording` claims its hooks for the forward, and a second
/// forward claiming them meanwhile (a copy of the same policy handle in a tracer on another
/// thread, or a forward traced inside one) gets `RecordingBusy` before anything is recorded.
class CallHooks {
 public:
  CallHooks() = default;
  CallHooks(const CallHooks&) noexcept {}  // a copy is a new recording: not claimed
  CallHooks& operator=(const CallHooks&) noexcept { return *this; }

  /// Claims these hooks for one forward on this thread; throws `RecordingBusy` when a forward
  /// (on any thread) holds them.
  void claim(std::string_view what) {
    std::thread::id none{};
    if (!owner_.compare_exchange_strong(none, std::this_thread::get_id()))
      throw RecordingBusy(
          "recorder: " + std::string(what) + " is already recording a forward" +
          (none == std::this_thread::get_id() ? std::string(" on this thread (a forward traced "
                                                            "inside another)")
                                              : std::string(" on another thread")) +
          ". A recording records one forward at a time, and copies of a policy share its "
          "recording: give each tracer its own policy object, or trace one forward after the "
          "other");
  }
  /// Ends the claim of `claim`.
  void release() noexcept { owner_.store(std::thread::id{}); }
  /// What the hooks record, for `RecordingBusy`'s message ("this recording").
  virtual std::string describe() const { return "this recording"; }

  /// A forward starts.
  virtual void begin() = 0;
  /// Module call `call` opened with tensor arguments `inputs` (before its forward runs).
  virtual void enter(const Graph& g, NodeId call, std::span<const at::Tensor> inputs) = 0;
  /// Module call `call` returned `outputs`; a hook may replace them (post-processing).
  virtual void leave(const Graph& g, NodeId call, std::span<const at::Tensor> inputs,
                     std::span<at::Tensor> outputs) = 0;
  /// The forward returned; may throw (a requested layer never ran).
  virtual void end(const Graph& g) = 0;
  /// The forward threw: forget the calls still open (`g` is the partial trace).
  virtual void abort(const Graph& g) noexcept = 0;
  /// The clock to tell of every recorded op (a timing policy's), or null.
  virtual OpClock* op_clock() noexcept { return nullptr; }

 protected:
  ~CallHooks() = default;

 private:
  std::atomic<std::thread::id> owner_{};
};

/// A point in time as the op clock counts it: the CPU's time-stamp counter on x86-64 (invariant
/// and synchronised across cores on the CPUs libtorch supports, ~10 ns to read where the steady
/// clock takes ~26 ns), else steady-clock nanoseconds. A timing converts ticks to nanoseconds
/// once per run, from the steady clock read beside the counter at the run's start and end.
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_ia32_rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
#endif
}

/// Told when each recorded op ran (a timing policy, `capture/timing.hpp`). Only a session with
/// a clock reads the time around its ops, so the other policies pay one test per op.
class OpClock {
 public:
  /// Op node `fn` of `g` ran from `start` to `end` (`ticks()`); its input edges are the last
  /// edges into `fn` before `g.edge_count()` now.
  virtual void op(const Graph& g, NodeId fn, std::uint64_t start, std::uint64_t end) = 0;

 protected:
  ~OpClock() = default;
};

/// One recording in progress. Owned by the tracer; reachable through `current_session()`
/// only inside a `SessionScope`, so the only mutable global state is that thread-local slot.
class Session {
 public:
  Session() : serial_(next_serial()) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Graph graph;
  std::vector<NodeId> stack;                ///< open module calls, root first
  IdTable<ModuleId> modules;                ///< module object -> its id
  std::vector<const void*> module_objects;  ///< ModuleId -> module object
  /// Paths of modules not called yet, learnt from their parents' children once per parent.
  IdTable<std::string> known_paths;
  /// Parameter counts of module objects (recursive; all, trainable), computed once each.
  IdTable<std::pair<std::uint64_t, std::uint64_t>> param_counts;
  /// The root module's tree, read in one walk when the root module is registered
  /// (`adapters/module_core.hpp`): each module object's children, in order, with the names it
  /// registered them under, and its own parameter counts; and the model's parameters, each
  /// tensor once. Registering a module of the tree then copies no list of children.
  struct ModuleTree {
    static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    struct Link {
      const void* child = nullptr;
      std::uint32_t next = none;  ///< the parent's next link
      std::string key{};          ///< the name the parent registered the child under
    };
    struct Entry {
      std::uint32_t first = none;  ///< its first and last link to a child
      std::uint32_t last = none;
      std::pair<std::uint64_t, std::uint64_t> own{0, 0};  ///< its own parameters (all, trainable)
    };
    const void* root = nullptr;  ///< null until read
    std::vector<Link> links;
    IdTable<Entry> modules;              ///< every module object of the tree
    std::uint64_t total_params = 0;      ///< the model's parameters, each tensor once
    std::uint64_t trainable_params = 0;  ///< the part that requires grad
    std::uint64_t param_bytes = 0;       ///< their bytes
  } tree;
  /// Module types (`std::type_info` addresses) -> which display attributes they have
  /// (`adapters/module_core.hpp`), found once per type.
  IdMap module_types;
  /// Parameter operands by TensorImpl; the tensor is kept so its address is not reused.
  IdTable<std::pair<at::Tensor, NodeId>> parameters;
  std::vector<NodeId> scratch;  ///< reused input list of the op being recorded
  /// Reused node list of the module call being opened (its inputs) or returning (its outputs):
  /// the graph copies it before the forward runs or before the call returns.
  std::vector<NodeId> call_nodes;
  std::optional<Failure> failure;
  std::vector<CallHooks*> hooks;  ///< capture policies of this forward
  OpClock* op_clock = nullptr;    ///< the hooks' op clock, if one times ops
  /// What the op observers know of each op overload (`observe/ops.hpp`), made on first use;
  /// a front end may share one across its recordings.
  std::shared_ptr<OpTable> op_table;
  /// Submodules of plain C++ modules, by module object, for attributing their ops (made once).
  IdTable<std::shared_ptr<const Submodules>> submodules;
  /// The tracer's records of the modules its last trace registered, lent for this trace
  /// (`adapters/module_records.hpp`); null when there are none to use or keep.
  ModuleRecords* module_records = nullptr;

  /// A stable copy of `name` (one per distinct name in this session).
  std::string_view intern(std::string_view name) {
    const auto [id, fresh] = interned_ids_.id(name);
    if (fresh) interned_.push_back(graph.intern(name));
    return interned_[id];
  }

  NodeRef ref(NodeId n) const noexcept { return NodeRef{n, serial_}; }
  /// True when `r` points into this session (not an older or another thread's recording).
  bool owns(const NodeRef& r) const noexcept { return r.serial == serial_ && r.node.valid(); }
  /// The module call new nodes belong to.
  NodeId parent() const noexcept { return stack.empty() ? NodeId{} : stack.back(); }
  /// The depth of nodes recorded now: one below the innermost open module call.
  std::uint16_t depth() const {
    return stack.empty() ? std::uint16_t{1}
                         : static_cast<std::uint16_t>(graph.node(stack.back()).depth + 1);
  }

 private:
  // Process-wide, so a session built at a dead session's address (on any thread) is never
  // taken for it. It only hands out ids; no behaviour depends on it.
  static std::uint64_t next_serial() noexcept {
    static std::atomic<std::uint64_t> counter{0};
    return counter.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  std::uint64_t serial_;
  StringIds interned_ids_;                  // name -> its index in `interned_`
  std::vector<std::string_view> interned_;  // in the graph's string pool
};

/// The thread's current session, or null outside any recording.
inline Session*& current_session() noexcept {
  thread_local Session* s = nullptr;
  return s;
}

/// RAII: makes `s` the thread's current session and restores the previous one.
class SessionScope {
 public:
  explicit SessionScope(Session& s) noexcept : previous_(current_session()) {
    current_session() = &s;
  }
  ~SessionScope() { current_session() = previous_; }
  SessionScope(const SessionScope&) = delete;
  SessionScope& operator=(const SessionScope&) = delete;

 private:
  Session* previous_;
};

inline std::string_view device_name(c10::DeviceType d) noexcept {
  switch (d) {
    case c10::DeviceType::CPU:
      return "cpu";
    case c10::DeviceType::CUDA:
      return "cuda";
    case c10::DeviceType::MPS:
      return "mps";
    case c10::DeviceType::Meta:
      return "meta";
    case c10::DeviceType::XLA:
      return "xla";
    default:
      return "other";
  }
}

/// Adds a tensor node describing `t` (shape, dtype, device).
inline NodeId add_tensor_node(Session& s, NodeKind kind, const at::Tensor& t, NodeId producer,
                              NodeId parent, std::uint16_t depth, std::string_view name = {}) {
  if (!t.defined())
    return s.graph.add_tensor(kind, parent, depth, Shape{}, "Undefined", "none", producer, name);
  const auto sizes = t.sizes();
  return s.graph.add_tensor(kind, parent, depth, Shape(sizes.data(), sizes.size()),
                            c10::toString(t.scalar_type()), device_name(t.device().type()),
                            producer, name);
}

/// The node for an operand: its own node if it was recorded in `s`, else a new constant or
/// parameter node (a leaf that requires grad is a parameter; each parameter gets one node).
inline NodeId operand_node(Session& s, const at::Tensor& t, const NodeRef& r) {
  if (s.owns(r)) return r.node;
  const bool is_param = t.defined() && t.requires_grad() && t.is_leaf();
  if (is_param) {
    auto [p, inserted] = s.parameters.try_emplace(t.unsafeGetTensorImpl(), t, NodeId{});
    if (inserted) p->second = add_tensor_node(s, NodeKind::parameter, t, {}, s.parent(), s.depth());
    return p->second;
  }
  return add_tensor_node(s, NodeKind::constant, t, {}, s.parent(), s.depth());
}

/// Records a function node consuming `inputs` (edges input -> op, in order).
inline NodeId record_function(Session& s, std::string_view op, std::span<const NodeId> inputs,
                              bool inplace) {
  const NodeId fn = s.graph.add_function(op, s.parent(), s.depth(), inplace);
  for (NodeId in : inputs) s.graph.add_edge(in, fn);
  return fn;
}

/// Records a tensor produced by `producer` (edge producer -> tensor).
inline NodeId record_output(Session& s, NodeId producer, const at::Tensor& t) {
  const NodeId out = add_tensor_node(s, NodeKind::tensor, t, producer, s.parent(), s.depth());
  s.graph.add_edge(producer, out);
  return out;
}

/// Opens a call of module `m` consuming `inputs` (a leaf also gets edges input -> call).
inline NodeId enter_call(Session& s, ModuleId m, std::span<const NodeId> inputs, bool leaf) {
  const std::uint16_t depth = s.stack.empty() ? std::uint16_t{0} : s.depth();
  const NodeId call = s.graph.add_module_call(m, s.parent(), depth, inputs);
  if (leaf)
    for (NodeId in : inputs) s.graph.add_edge(in, call);
  s.stack.push_back(call);
  return call;
}

/// Closes module call `call` (it must be the innermost open one).
inline void leave_call(Session& s, NodeId call) {
  while (!s.stack.empty()) {
    const NodeId top = s.stack.back();
    s.stack.pop_back();
    if (top == call) break;
  }
}

/// The message of the exception being handled; call only inside a `catch`.
inline std::string current_exception_message() {
  try {
    throw;
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

/// Describes where the recording stands (`op`, innermost open module call) for an error;
/// `inputs`, that call's tensor arguments when known, let an index error say which index
/// (`explain_index_error`).
inline Failure describe_failure(const Session& s, std::string_view op, std::string message,
                                std::span<const at::Tensor> inputs = {}) {
  Failure f;
  f.op = std::string(op);
  f.message = std::move(message);
  if (!s.stack.empty()) {
    const ModuleInfo& m = s.graph.module_of(s.stack.back());
    f.module_path = m.path;
    f.module_class = m.class_name;
    f.message = explain_index_error(std::move(f.message), m, inputs);
  }
  return f;
}

/// Called inside a `catch` when an op or a leaf forward threw: records the failure once and
/// throws a `TraceError` naming the op and module, with the original exception nested.
/// A `TraceError` from deeper down passes through unchanged.
[[noreturn]] inline void throw_failure(Session& s, std::string_view op,
                                       std::span<const at::Tensor> inputs = {}) {
  try {
    throw;
  } catch (const TraceError&) {
    throw;
  } catch (...) {
    Failure f = describe_failure(s, op, current_exception_message(), inputs);
    if (!s.failure) s.failure = f;
    std::throw_with_nested(TraceError(std::move(f)));
  }
}

}  // namespace recorder::detail
