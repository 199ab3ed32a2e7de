#pragma once
/// Attributing the ops observed inside a plain C++ module's forward (a non-template `forward`,
/// libtorch's own composites) to its submodules, by parameter identity.
///
/// libtorch 1.13 has no forward hooks: a plain C++ module's submodule calls leave no trace. What
/// the op observer does see is which parameter tensors each op reads. An op reading parameters
/// that submodule S registers ran inside S (when it reads those of several, inside their
/// deepest common ancestor), so the observer opens a module call for S — and for its ancestors
/// below the observed module — marked `inferred`. Consecutive ops of one submodule share its
/// call. An op that reads no parameter (a ReLU, a residual add, a Dropout) cannot be placed by
/// its own tensors: it goes to the deepest call common to the attributed ops before and after it
/// (a ReLU between `block.fc1` and `block.fc2` lands in `block`), else to the observed call.
///
/// What is exact: every op that reads a parameter is inside the module that registers it, and
/// every submodule that owns parameters and runs gets a call. What is not: parameter-free
/// submodules (`ReLU`, `Dropout`) get no call of their own, and two calls of one submodule in a
/// row are one inferred call.

#include <recorder/graph/graph.hpp>
#include <recorder/tensor/session.hpp>

#include <ATen/core/Tensor.h>
#include <c10/util/flat_hash_map.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace recorder::detail {

/// The submodules of a plain C++ module that its ops can be attributed to.
struct Submodules {
  struct Entry {
    int parent = -1;               ///< the enclosing entry; -1 when directly below the module
    bool callable = true;          ///< false for containers never called (`ModuleList`)
    bool leaf = true;              ///< it holds no submodules
    const void* object = nullptr;  ///< the module object, for `register_module`
  };
  std::vector<Entry> entries;  ///< in `named_modules()` order (parents first)
  /// Parameter (by TensorImpl) -> the entry that registers it (the first, for tied ones).
  ska::flat_hash_map<const c10::TensorImpl*, int> owner;
  /// Registers module `object` in the session, its path found from the innermost open call.
  ModuleId (*register_module)(Session&, const void* object, bool leaf) = nullptr;
};

/// Places the ops observed inside one call of a plain C++ module into inferred submodule calls
/// (see the file comment). The observer calls `before_op` with an op's inputs before it records
/// them, `after_op` with what it recorded, and `finish` when the forward ends.
class Attribution {
 public:
  Attribution(Session& s, NodeId call, const Submodules& subs) : s_(s), call_(call), subs_(subs) {}

  /// Opens and closes inferred calls for an op about to be recorded with tensor inputs `ins`.
  void before_op(const std::vector<at::Tensor>& ins) {
    int target = -2;  // -2: no parameter among the inputs
    for (const at::Tensor& t : ins) {
      const auto it = subs_.owner.find(t.unsafeGetTensorImpl());
      if (it == subs_.owner.end()) continue;
      target = target == -2 ? it->second : common_ancestor(target, it->second);
    }
    attributed_ = target != -2;
    if (!attributed_) {
      if (!open_.empty() && !pending_from_.valid())
        pending_from_ = NodeId{static_cast<std::uint32_t>(s_.graph.size())};
      return;
    }
    // The calls from below the observed module down to `target`, skipping containers.
    std::vector<int> chain;
    for (int e = target; e >= 0; e = subs_.entries[static_cast<std::size_t>(e)].parent)
      if (subs_.entries[static_cast<std::size_t>(e)].callable) chain.insert(chain.begin(), e);
    std::size_t keep = 0;
    while (keep < open_.size() && keep < chain.size() && open_[keep].entry == chain[keep]) ++keep;
    settle_pending(keep);
    close_to(keep);
    for (std::size_t i = keep; i < chain.size(); ++i) {
      const Submodules::Entry& e = subs_.entries[static_cast<std::size_t>(chain[i])];
      const ModuleId m = subs_.register_module(s_, e.object, e.leaf);
      const NodeId call = enter_call(s_, m, {}, /*leaf=*/false);
      s_.graph.set_inferred(call);
      open_.push_back(Frame{chain[i], call, NodeId{}});
    }
  }

  /// The op was recorded as function node `fn` (invalid when it recorded nothing) with input
  /// nodes `inputs`.
  void after_op(NodeId fn, const std::vector<NodeId>& inputs) {
    if (!attributed_ || !fn.valid()) return;
    for (Frame& f : open_) {
      f.last = fn;
      for (NodeId in : inputs) {
        const NodeKind k = s_.graph.kind(in);
        if (k == NodeKind::parameter || k == NodeKind::constant) continue;
        const NodeId producer = s_.graph.tensor(in).producer;
        if (producer.valid() && s_.graph.within(producer, f.call)) continue;
        const auto& known = s_.graph.call(f.call).inputs;
        if (std::find(known.begin(), known.end(), in) == known.end())
          s_.graph.add_call_input(f.call, in);
      }
    }
  }

  /// The observed forward ended (or threw): ops still to be placed go to the observed call, and
  /// every inferred call closes.
  void finish() {
    settle_pending(0);
    close_to(0);
  }

  /// The observed forward threw: the inferred calls open now were running; they close failed.
  void fail() {
    for (const Frame& f : open_) s_.graph.set_failed(f.call);
    finish();
  }

 private:
  struct Frame {
    int entry;
    NodeId call;
    NodeId last;  ///< the last attributed op recorded inside it
  };

  int common_ancestor(int a, int b) const {
    std::vector<int> up;
    for (int e = a; e >= 0; e = subs_.entries[static_cast<std::size_t>(e)].parent) up.push_back(e);
    for (int e = b; e >= 0; e = subs_.entries[static_cast<std::size_t>(e)].parent)
      if (std::find(up.begin(), up.end(), e) != up.end()) return e;
    return -1;
  }

  /// Moves the ops recorded since `pending_from_` (all inside the innermost open call) into the
  /// `keep`-th open call (the observed call when `keep` is 0).
  void settle_pending(std::size_t keep) {
    if (!pending_from_.valid()) return;
    if (keep < open_.size()) {
      const NodeId into = keep == 0 ? call_ : open_[keep - 1].call;
      for (std::uint32_t i = pending_from_.value; i < s_.graph.size(); ++i) {
        const NodeId parent = s_.graph.node(NodeId{i}).parent;
        for (std::size_t k = keep; k < open_.size(); ++k)
          if (parent == open_[k].call) {
            s_.graph.move_node(NodeId{i}, into);
            break;
          }
      }
    }
    pending_from_ = NodeId{};
  }

  /// Closes the open inferred calls past the first `keep`, innermost first.
  void close_to(std::size_t keep) {
    while (open_.size() > keep) {
      const Frame f = open_.back();
      open_.pop_back();
      std::vector<NodeId> outs;
      if (f.last.valid())
        for (std::uint32_t i = f.last.value + 1; i < s_.graph.size(); ++i) {
          const NodeId id{i};
          if (!is_tensor_kind(s_.graph.kind(id)) || s_.graph.tensor(id).producer != f.last) break;
          outs.push_back(id);
        }
      s_.graph.set_call_outputs(f.call, std::move(outs));
      leave_call(s_, f.call);
    }
  }

  Session& s_;
  NodeId call_;
  const Submodules& subs_;
  std::vector<Frame> open_;
  NodeId pending_from_;
  bool attributed_ = false;
};

}  // namespace recorder::detail
