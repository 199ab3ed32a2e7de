#pragma once
/// The module-call protocol, written once for every front end (ATen only, no template):
/// open the call → tell the capture hooks it opened → run the forward → record its output
/// nodes → tell the hooks it returned → close it; on an exception, mark the call failed, record
/// where the forward failed and close it, so the partial trace stays renderable.
///
/// `ModuleCall` is the RAII form the C++ module adapters (`adapters/module.hpp`) use. The
/// TorchScript front end (`script/run.hpp`) opens and closes a call in two separate marker ops,
/// `recorder::enter` and `recorder::leave`, so no object can live across them; it calls the same
/// steps, `enter_call`, `notify_enter`, `record_return` and `leave_call`, and its failure is
/// handled once for the whole forward (`script::Run::fail`).

#include <recorder/graph/ids.hpp>
#include <recorder/tensor/session.hpp>

#include <ATen/core/Tensor.h>

#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder::detail {

/// Tells the capture hooks that module call `call` opened with tensor arguments `inputs`.
inline void notify_enter(Session& s, NodeId call, std::span<const at::Tensor> inputs) {
  for (CallHooks* h : s.hooks) h->enter(s.graph, call, inputs);
}

/// Module call `call` returned: records its output nodes, then tells the capture hooks it
/// returned `outputs` (they may replace some of them in place; the recorded nodes stay).
inline void record_return(Session& s, NodeId call, std::span<const NodeId> output_nodes,
                          std::span<const at::Tensor> inputs, std::span<at::Tensor> outputs) {
  s.graph.set_call_outputs(call, output_nodes);
  for (CallHooks* h : s.hooks) h->leave(s.graph, call, inputs, outputs);
}

/// RAII: one module call being recorded in session `s`.
///
/// The constructor opens the call (`enter_call`); `enter` tells the capture hooks; `finish`
/// records the outputs and tells the hooks; the destructor closes the call if `close` did not.
/// Inside a `catch`, `fail` marks the call failed and throws a `TraceError` naming where the
/// forward failed (the innermost call open then), with the original exception nested; the
/// call closes as the exception leaves the scope.
///
/// A composite call stays open until it returns. A leaf `close`s before its outputs are
/// recorded, so its output tensor nodes belong to the caller; a hook failing after that marks
/// the closed call failed all the same.
///
/// ```
/// ModuleCall call(s, module, input_nodes, /*leaf=*/false);
/// auto out = [&] {
///   try { call.enter(tensor_inputs); return forward(); } catch (...) { call.fail(); }
/// }();
/// call.finish(output_nodes, output_tensors);
/// ```
class ModuleCall {
 public:
  ModuleCall(Session& s, ModuleId module, std::span<const NodeId> inputs, bool leaf)
      : s_(s), call_(enter_call(s, module, inputs, leaf)) {}
  ~ModuleCall() { close(); }
  ModuleCall(const ModuleCall&) = delete;
  ModuleCall& operator=(const ModuleCall&) = delete;

  NodeId id() const noexcept { return call_; }
  /// True when capture hooks listen to this forward (only then are tensors worth collecting).
  bool hooked() const noexcept { return !s_.hooks.empty(); }

  /// Tells the capture hooks the call opened with tensor arguments `inputs` (kept for
  /// `finish`). Call it inside the `try` around the forward: a hook may throw.
  void enter(std::vector<at::Tensor> inputs) {
    if (!hooked()) return;
    inputs_ = std::move(inputs);
    notify_enter(s_, call_, inputs_);
  }

  /// Closes the call: new nodes belong to the caller again. Idempotent.
  void close() noexcept {
    if (!open_) return;
    open_ = false;
    leave_call(s_, call_);
  }

  /// The call returned: records `output_nodes`, then tells the capture hooks it returned
  /// `outputs`, which they may replace in place. A hook that throws fails the call.
  void finish(std::span<const NodeId> output_nodes, std::span<at::Tensor> outputs = {}) {
    try {
      record_return(s_, call_, output_nodes, inputs_, outputs);
    } catch (...) {
      fail();
    }
  }

  /// Inside a `catch`: marks the call failed, records the failure (at `op`, when known, in the
  /// innermost open call) unless a deeper one was, and throws a `TraceError` with the exception
  /// being handled nested (a `TraceError` passes through as it is). `inputs`, the call's tensor
  /// arguments, let an index error say which index and how many rows (`explain_index_error`).
  [[noreturn]] void fail(std::string_view op = {}, std::span<const at::Tensor> inputs = {}) {
    s_.graph.set_failed(call_);
    throw_failure(s_, op, inputs);
  }

 private:
  Session& s_;
  NodeId call_;
  bool open_ = true;
  std::vector<at::Tensor> inputs_;
};

}  // namespace recorder::detail
