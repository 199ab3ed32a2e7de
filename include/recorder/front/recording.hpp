#pragma once
/// The non-template recording core every front end uses: one forward's session, its capture
/// hooks, its input and output nodes, and the trace it finishes (or the partial one it attaches
/// to a `TraceError`). ATen only.

#include <recorder/error.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/graph/views.hpp>
#include <recorder/tensor/session.hpp>
#include <recorder/torch_version.hpp>

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace recorder {

/// The train/eval mode a forward runs in; the model's own mode is restored afterwards.
enum class TrainMode { keep, train, eval };

/// Writes one warning line to standard error (the default `TraceOptions::on_warning`).
inline void warn_to_stderr(const std::string& message) { std::cerr << message << '\n'; }

/// How `Tracer::run` runs the forward.
struct TraceOptions {
  TrainMode mode =
      TrainMode::keep;   ///< `eval` is what torchview does; `keep` leaves the model as it is
  bool no_grad = false;  ///< run under `torch::NoGradGuard` (no autograd graph is built)
  /// Where warnings go as they arise (a frozen TorchScript model traced without its modules,
  /// ...); every warning is also kept in `Trace::warnings`. Default: one line on stderr.
  std::function<void(const std::string&)> on_warning = warn_to_stderr;
};

/// A trace plus the model's output (as plain tensors, in the structure the forward returned).
template <class Out>
struct Traced : Trace {
  Out output;
};

namespace detail {

/// What a front end knows about the whole model, for the finished trace.
struct ModelFacts {
  std::string class_name{};            ///< the model's class, when no root call was recorded
  std::uint64_t total_params = 0;      ///< every parameter, tensors shared by modules once
  std::uint64_t trainable_params = 0;  ///< the part that requires grad
  std::uint64_t param_bytes = 0;       ///< their bytes
  std::vector<std::string> warnings{};
};

/// One forward being recorded on this thread: the session (current while the recording lives),
/// the capture hooks it tells about the forward, and the finishing of the trace.
///
/// A front end makes one, adds the input nodes, runs the model, then either calls `end`, adds
/// the output nodes and `finish`es the trace, or — when the forward threw a `TraceError` —
/// calls `fail`, which gives the error the partial trace.
class Recording {
 public:
  /// Claims `hooks` for this forward (`RecordingBusy` when another forward holds one: then
  /// none stays claimed and nothing was begun) and tells them it begins. The graph is built in
  /// the memory `storage` lends (the tracer's; see `GraphStorage`), when given.
  explicit Recording(std::vector<CallHooks*> hooks,
                     const std::shared_ptr<GraphStorage>& storage = nullptr)
      : scope_(session_) {
    if (storage) session_.graph = Graph(storage);
    try {
      for (CallHooks* h : hooks) {
        h->claim(h->describe());
        claimed_.push_back(h);
      }
      session_.hooks = std::move(hooks);
      for (CallHooks* h : session_.hooks) {
        if (session_.op_clock == nullptr) session_.op_clock = h->op_clock();
        h->begin();
      }
    } catch (...) {
      for (CallHooks* c : claimed_) c->release();
      throw;
    }
  }
  ~Recording() {
    for (CallHooks* h : claimed_) h->release();
  }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  Session& session() noexcept { return session_; }

  /// Adds the input node of tensor `t`, the `index`-th of `count` inputs ("input", or
  /// "input-0", "input-1", ... when there are several).
  NodeId input(const at::Tensor& t, std::size_t index, std::size_t count) {
    return add_tensor_node(session_, NodeKind::input, t, {}, {}, 0,
                           indexed_name("input", index, count));
  }

  /// Marks tensor `t`, recorded as node `source`, as the `index`-th of the model's `count`
  /// outputs (an output node and an edge from `source`).
  void output(NodeId source, const at::Tensor& t, std::size_t index, std::size_t count) {
    const NodeId o = add_tensor_node(session_, NodeKind::output, t, {}, {}, 0,
                                     indexed_name("output", index, count));
    session_.graph.add_edge(source, o);
  }

  /// The forward returned: the capture hooks close it (this may throw `UnknownLayer`, naming a
  /// requested layer that never ran).
  void end() {
    for (CallHooks* h : session_.hooks) h->end(session_.graph);
  }

  /// The forward threw `e`: the capture hooks forget the calls still open, and `e` gets the
  /// trace recorded so far.
  void fail(TraceError& e, ModelFacts facts) {
    for (CallHooks* h : session_.hooks) h->abort(session_.graph);
    auto partial = std::make_shared<Trace>();
    finish(*partial, std::move(facts));
    e.attach(std::move(partial));
  }

  /// Moves the recorded graph into `t`, with the model-level facts. The graph frees the room
  /// it grew and does not use (`Graph::release_growth`).
  void finish(Trace& t, ModelFacts facts) {
    t.graph = std::move(session_.graph);
    t.graph.release_growth();
    t.failure = session_.failure;
    for (NodeId id : views::module_calls(t.graph)) {
      if (!t.graph.node(id).parent.valid()) {
        t.root = id;
        break;
      }
    }
    t.model_name =
        t.root.valid() ? t.graph.module_of(t.root).class_name : std::move(facts.class_name);
    t.total_params = facts.total_params;
    t.trainable_params = facts.trainable_params;
    t.param_bytes = facts.param_bytes;
    t.torch_version =
        std::to_string(torch_version_major) + '.' + std::to_string(torch_version_minor);
    t.warnings = std::move(facts.warnings);
  }

 private:
  std::string_view indexed_name(std::string_view base, std::size_t i, std::size_t n) {
    if (n == 1) return base;
    return session_.graph.intern(std::string(base) + "-" + std::to_string(i));
  }

  Session session_;
  SessionScope scope_;
  std::vector<CallHooks*> claimed_;
};

}  // namespace detail

}  // namespace recorder
