#pragma once
/// An `at::RecordFunction` observer that records the aten ops a leaf module's forward runs.

#include <recorder/observe/attribution.hpp>
#include <recorder/observe/ops.hpp>
#include <recorder/tensor/session.hpp>

#include <ATen/core/Tensor.h>
#include <ATen/record_function.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace recorder::detail {

/// What the observer knows while one leaf forward runs: the session, the leaf call, and the
/// ops recorded in it.
struct ObservedLeaf {
  NodeId call;
  ObservedOps ops;
  /// With submodules to attribute ops to (a plain C++ composite): where its ops go.
  std::optional<Attribution> attribution;
};

/// The leaf forward being observed on this thread, or null.
inline ObservedLeaf*& observed_leaf() noexcept {
  thread_local ObservedLeaf* leaf = nullptr;
  return leaf;
}

/// The session's op table, made on first use.
inline OpTable& op_table(Session& s) {
  if (!s.op_table) s.op_table = std::make_shared<OpTable>();
  return *s.op_table;
}

inline std::unique_ptr<at::ObserverContext> observe_start(const at::RecordFunction& fn) {
  ObservedLeaf* leaf = observed_leaf();
  if (leaf == nullptr || leaf->ops.depth++ > 0) return nullptr;
  const OpInfo& info = leaf->ops.table->of(fn);
  if (!info.tensor_returns) return nullptr;
  if (leaf->attribution) {
    std::vector<at::Tensor> ins;
    for (const c10::IValue& v : own_values(fn.inputs(), info, info.arguments))
      for_each_tensor(v, [&ins](const at::Tensor& t) { ins.push_back(t); });
    leaf->attribution->before_op(ins);
  }
  leaf->ops.begin(fn, info);
  return nullptr;
}

inline void observe_end(const at::RecordFunction& fn, at::ObserverContext*) {
  ObservedLeaf* leaf = observed_leaf();
  if (leaf == nullptr || --leaf->ops.depth > 0) return;
  const NodeId node = leaf->ops.end(fn);
  if (leaf->attribution) leaf->attribution->after_op(node, leaf->ops.inputs);
}

/// RAII: observes the aten ops dispatched on this thread while a leaf's forward runs, and
/// records the outermost ones as function nodes inside the leaf call `call`. `known` holds the
/// nodes of the traced tensors the leaf was given; with `submodules`, ops are attributed to
/// inferred calls of those (`observe/attribution.hpp`).
class LeafObserver {
 public:
  LeafObserver(Session& s, NodeId call, TensorNodes known, const Submodules* submodules = nullptr)
      : previous_(observed_leaf()) {
    leaf_.call = call;
    leaf_.ops.session = &s;
    leaf_.ops.table = &op_table(s);
    leaf_.ops.nodes = std::move(known);
    if (submodules != nullptr) leaf_.attribution.emplace(s, call, *submodules);
    observed_leaf() = &leaf_;
    handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(&observe_start, &observe_end)
                                             .needsInputs(true)
                                             .needsOutputs(true)
                                             .scopes({at::RecordScope::FUNCTION}));
  }
  ~LeafObserver() {
    at::removeCallback(handle_);
    observed_leaf() = previous_;
    finish();
  }

  /// The leaf's forward returned: inferred calls close (before the leaf call itself does).
  void finish() {
    if (leaf_.attribution) leaf_.attribution->finish();
    leaf_.attribution.reset();
  }

  /// The leaf's forward threw: the inferred calls still open close failed.
  void abandon() {
    if (leaf_.attribution) leaf_.attribution->fail();
    leaf_.attribution.reset();
  }

  /// The outermost op that threw inside the leaf, or "".
  const std::string& failed_op() const noexcept { return leaf_.ops.failed_op; }
  LeafObserver(const LeafObserver&) = delete;
  LeafObserver& operator=(const LeafObserver&) = delete;

  /// The node recorded inside the leaf for tensor `t`, if an op of the leaf produced it.
  NodeId produced(const at::Tensor& t) const {
    const NodeId n = leaf_.ops.nodes.find(t);
    if (!n.valid()) return {};
    const Graph& g = leaf_.ops.session->graph;
    return g.node(n).parent.valid() && g.within(g.node(n).parent, leaf_.call) ? n : NodeId{};
  }

 private:
  ObservedLeaf leaf_;
  ObservedLeaf* previous_;
  at::CallbackHandle handle_ = 0;
};

}  // namespace recorder::detail
