#pragma once
/// An `at::RecordFunction` observer that records the aten ops a leaf module's forward runs.

#include <recorder/tensor/session.hpp>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace recorder::detail {

/// The observer reads `at::RecordFunction::inputs()`, whose debug check reads a member that
/// only exists without NDEBUG, while libtorch itself is built with NDEBUG (Debian 1.13): in a
/// translation unit without NDEBUG the check reads past the object. So the observer needs NDEBUG.
#ifdef NDEBUG
inline constexpr bool observer_usable = true;
#else
inline constexpr bool observer_usable = false;
#endif

/// What the observer knows while one leaf forward runs: the session, the leaf call, and the
/// node of every tensor seen so far in it (by TensorImpl), so each op's inputs are wired to
/// the op that produced them.
struct ObservedLeaf {
  Session* session = nullptr;
  NodeId call;
  std::unordered_map<const void*, NodeId> nodes;
  int depth = 0;  ///< nesting of dispatched ops: only the outermost ones are recorded
};

/// The leaf forward being observed on this thread, or null.
inline ObservedLeaf*& observed_leaf() noexcept {
  thread_local ObservedLeaf* leaf = nullptr;
  return leaf;
}

/// The inputs of one outermost op, collected in the start callback (the only place libtorch
/// lets us read them) and recorded when the op ends.
struct ObservedOp : at::ObserverContext {
  std::vector<NodeId> inputs;
};

inline NodeId observed_operand(ObservedLeaf& leaf, const at::Tensor& t) {
  if (auto it = leaf.nodes.find(t.unsafeGetTensorImpl()); it != leaf.nodes.end()) return it->second;
  return operand_node(*leaf.session, t, NodeRef{});
}

inline void observe_inputs(ObservedLeaf& leaf, const c10::IValue& v, std::vector<NodeId>& out) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.defined()) out.push_back(observed_operand(leaf, t));
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorVector())
      if (t.defined()) out.push_back(observed_operand(leaf, t));
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) observe_inputs(leaf, e, out);
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) observe_inputs(leaf, e, out);
  }
}

inline std::unique_ptr<at::ObserverContext> observe_start(const at::RecordFunction& fn) {
  ObservedLeaf* leaf = observed_leaf();
  if (leaf == nullptr || leaf->depth++ > 0) return nullptr;
  auto op = std::make_unique<ObservedOp>();
  for (const c10::IValue& v : fn.inputs()) observe_inputs(*leaf, v, op->inputs);
  return op;
}

inline void observe_outputs(ObservedLeaf& leaf, NodeId fn, const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) return;
    const NodeId n = record_output(*leaf.session, fn, t);
    leaf.nodes[t.unsafeGetTensorImpl()] = n;
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorVector()) observe_outputs(leaf, fn, c10::IValue(t));
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) observe_outputs(leaf, fn, e);
  }
}

inline void observe_end(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  ObservedLeaf* leaf = observed_leaf();
  if (leaf == nullptr) return;
  --leaf->depth;
  if (ctx == nullptr) return;  // a nested op, or one that started before the leaf
  std::string_view name = fn.name();
  if (name.substr(0, 6) == "aten::") name.remove_prefix(6);
  const bool inplace = name.size() > 1 && name.back() == '_' && name.front() != '_';
  if (inplace) name.remove_suffix(1);
  Session& s = *leaf->session;
  const NodeId node = record_function(s, s.intern(name), static_cast<ObservedOp*>(ctx)->inputs, inplace);
  for (const c10::IValue& v : fn.outputs()) observe_outputs(*leaf, node, v);
}

/// RAII: observes the aten ops dispatched on this thread while a leaf's forward runs, and
/// records the outermost ones as function nodes inside the leaf call `call`.
class LeafObserver {
 public:
  LeafObserver(Session& s, NodeId call, std::unordered_map<const void*, NodeId> known)
      : previous_(observed_leaf()) {
    leaf_.session = &s;
    leaf_.call = call;
    leaf_.nodes = std::move(known);
    observed_leaf() = &leaf_;
    handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(&observe_start, &observe_end)
                                             .needsInputs(true)
                                             .needsOutputs(true)
                                             .scopes({at::RecordScope::FUNCTION}));
  }
  ~LeafObserver() {
    at::removeCallback(handle_);
    observed_leaf() = previous_;
  }
  LeafObserver(const LeafObserver&) = delete;
  LeafObserver& operator=(const LeafObserver&) = delete;

  /// The node recorded inside the leaf for tensor `t`, if an op of the leaf produced it.
  NodeId produced(const at::Tensor& t) const {
    auto it = leaf_.nodes.find(t.unsafeGetTensorImpl());
    if (it == leaf_.nodes.end()) return {};
    return leaf_.session->graph.node(it->second).parent == leaf_.call ? it->second : NodeId{};
  }

 private:
  ObservedLeaf leaf_;
  ObservedLeaf* previous_;
  at::CallbackHandle handle_ = 0;
};

}  // namespace recorder::detail
