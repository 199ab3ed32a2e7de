#pragma once
/// A private, instrumented copy of a TorchScript model: every module forward brackets itself
/// with `recorder::enter` and `recorder::leave`, so a traced run sees each module call — which
/// object, its arguments, its result — and may replace the result.
///
/// How (measured on libtorch 1.13.1): the model is cloned with its parameters shared
/// (`Module::clone(/*inplace=*/true)` copies the class types and their method graphs, so the
/// user's model and its compiled plans are never touched), and each class's `forward` — and a
/// traced module's `forward1`, `forward2`, ..., its later calls — gets, in its own graph,
///
///     recorder::enter(self, (arguments...))           first
///     %r = recorder::leave(self, %result) : Any       last, then prim::unchecked_cast to the
///                                                     result's type, which the method returns
///
/// Both ops have conservative alias analysis: they are barriers nothing moves across. Because
/// the markers sit in the callee and name `self`, a module's full path is found by object
/// identity (`named_modules()`), whatever the call site (a `ModuleList` loop, `self.holder.inner`,
/// a module called twice).

#include <recorder/observe/ops.hpp>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/library.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace recorder::detail::script {

/// What the boxed kernels of the markers call: the recording in progress on this thread.
class MarkerSink {
 public:
  virtual void enter(const c10::IValue& self, const c10::IValue& args) = 0;
  virtual c10::IValue leave(const c10::IValue& self, c10::IValue out) = 0;

 protected:
  ~MarkerSink() = default;
};

/// The recording that receives the markers of this thread, or null (the markers then do nothing).
inline MarkerSink*& current_sink() noexcept {
  thread_local MarkerSink* sink = nullptr;
  return sink;
}

inline void enter_kernel(const c10::OperatorHandle&, torch::jit::Stack* stack) {
  c10::IValue args = std::move(stack->back());
  stack->pop_back();
  c10::IValue self = std::move(stack->back());
  stack->pop_back();
  if (MarkerSink* sink = current_sink()) sink->enter(self, args);
}

inline void leave_kernel(const c10::OperatorHandle&, torch::jit::Stack* stack) {
  c10::IValue out = std::move(stack->back());
  stack->pop_back();
  c10::IValue self = std::move(stack->back());
  stack->pop_back();
  if (MarkerSink* sink = current_sink()) out = sink->leave(self, std::move(out));
  stack->push_back(std::move(out));
}

/// Registers `recorder::enter` and `recorder::leave` once per process (a header-only library
/// cannot put `TORCH_LIBRARY` at namespace scope, so the library object is a function-local
/// static).
inline void register_markers() {
  static const torch::Library library = [] {
    torch::Library l(torch::Library::DEF, "recorder", c10::nullopt, __FILE__, __LINE__);
    l.def(torch::schema("recorder::enter(Any self, Any args) -> ()", c10::AliasAnalysisKind::CONSERVATIVE),
          torch::CppFunction::makeFromBoxedFunction<&enter_kernel>());
    l.def(torch::schema("recorder::leave(Any self, Any out) -> Any", c10::AliasAnalysisKind::CONSERVATIVE),
          torch::CppFunction::makeFromBoxedFunction<&leave_kernel>());
    return l;
  }();
}

/// True for `forward`, a traced module's later calls `forward1`, `forward2`, ..., and the
/// overloads of a scripted `forward` (`forward__0`, `forward__1`: `nn.LSTM`'s tensor and
/// packed-sequence forwards).
inline bool is_forward(std::string_view name) {
  if (name.substr(0, 7) != "forward") return false;
  name.remove_prefix(7);
  if (name.substr(0, 2) == "__" && name.size() > 2) name.remove_prefix(2);
  for (char c : name)
    if (c < '0' || c > '9') return false;
  return true;
}

/// Brackets method graph `g` with the markers (see the file comment).
inline void bracket(torch::jit::Graph& g) {
  using torch::jit::Symbol;
  using torch::jit::Value;
  using torch::jit::WithInsertPoint;
  Value* self = g.inputs().at(0);
  {
    WithInsertPoint at_start(g.block()->param_node()->next());
    std::vector<Value*> args(g.inputs().begin() + 1, g.inputs().end());
    Value* tuple = g.insertNode(g.createTuple(args))->output();
    g.insert(Symbol::fromQualString("recorder::enter"), {self, tuple});
  }
  Value* result = g.outputs().at(0);
  WithInsertPoint at_end(g.return_node());
  Value* any = g.insert(Symbol::fromQualString("recorder::leave"), {self, result});
  Value* typed = g.insertUncheckedCast(any, result->type());
  g.return_node()->replaceInputWith(result, typed);
}

/// The class name of a TorchScript module type, without its qualification and mangling:
/// `__torch__.torchvision.models.resnet.___torch_mangle_5.BasicBlock` -> "BasicBlock".
inline std::string class_name_of(const c10::ClassTypePtr& type) {
  if (!type || !type->name()) return "Module";
  return type->name()->name();
}

/// True when a module of type `type` holds submodules.
inline bool has_submodules(const c10::ClassType& type) {
  for (std::size_t i = 0; i < type.numAttributes(); ++i)
    if (type.getAttribute(i)->is_module()) return true;
  return false;
}

/// True when block `b` of a method of `type` (whose `self` is `self`) calls the forward of
/// another module object, directly or through methods (of itself or of other modules) that do.
inline bool calls_submodules(const c10::ClassType& type, const torch::jit::Block& b,
                             const torch::jit::Value* self,
                             std::unordered_set<const torch::jit::Function*>& seen) {
  for (const torch::jit::Node* n : b.nodes()) {
    for (const torch::jit::Block* inner : n->blocks())
      if (calls_submodules(type, *inner, self, seen)) return true;
    if (n->kind() != c10::prim::CallMethod) continue;
    const std::string& name = n->s(c10::attr::name);
    const torch::jit::Value* object = n->inputs().at(0);
    const auto callee_type = object->type()->cast<c10::ClassType>();
    if (object != self && (is_forward(name) || !callee_type)) return true;  // interfaces too
    const c10::ClassType& owner = object == self ? type : *callee_type;
    torch::jit::Function* callee = owner.findMethod(name);
    auto* graph_fn = callee ? torch::jit::tryToGraphFunction(*callee) : nullptr;
    if (graph_fn == nullptr || !seen.insert(callee).second) continue;
    const torch::jit::Graph& g = *graph_fn->graph();
    if (calls_submodules(owner, *g.block(), g.inputs().at(0), seen)) return true;
  }
  return false;
}

/// True when a module of type `type` is recorded as one node, a leaf: its forward runs no
/// submodule's forward. A module with children can be one: TorchScript's `MultiheadAttention`
/// hands `out_proj.weight` to a function and never calls `out_proj`.
inline bool is_leaf(const c10::ClassType& type) {
  if (!has_submodules(type)) return true;
  for (torch::jit::Function* method : type.methods()) {
    if (!is_forward(method->name())) continue;
    auto* graph_fn = torch::jit::tryToGraphFunction(*method);
    if (graph_fn == nullptr) return false;
    std::unordered_set<const torch::jit::Function*> seen{method};
    const torch::jit::Graph& g = *graph_fn->graph();
    if (calls_submodules(type, *g.block(), g.inputs().at(0), seen)) return false;
  }
  return true;
}

/// True when graph `g` (or a block inside it) holds a constant tensor: the weights of a frozen
/// model are graph constants.
inline bool has_tensor_constants(const torch::jit::Block& b) {
  for (const torch::jit::Node* n : b.nodes()) {
    if (n->kind() == c10::prim::Constant && n->output()->type()->isSubtypeOf(*c10::TensorType::get()))
      return true;
    for (const torch::jit::Block* inner : n->blocks())
      if (has_tensor_constants(*inner)) return true;
  }
  return false;
}

/// One module object of the instrumented copy.
struct ModuleEntry {
  std::string path;           ///< "layer1.0.conv1"; "" for the root
  std::string class_name;     ///< "Conv2d"
  bool leaf = true;           ///< recorded as one node: its forward calls no submodule (`is_leaf`)
};

/// A private, instrumented copy of one TorchScript model (see the file comment), made once and
/// reused for every trace of that model.
class Instrumented {
 public:
  explicit Instrumented(const torch::jit::Module& original)
      : original_(original), copy_(original.clone(/*inplace=*/true)) {
    register_markers();
    std::unordered_map<const c10::ClassType*, bool> leaf;
    const auto originals = original_.named_modules();
    auto o = originals.begin();
    for (const auto& item : copy_.named_modules()) {
      const c10::ClassTypePtr type = item.value.type();
      auto [known, fresh] = leaf.try_emplace(type.get(), false);
      if (fresh) known->second = is_leaf(*type);
      ModuleEntry e;
      e.path = item.name;
      e.class_name = class_name_of(type);
      e.leaf = known->second;
      const c10::ivalue::Object* object = item.value._ivalue().get();
      entries_.emplace(object, std::move(e));
      if (o != originals.end()) {
        pairs_.emplace_back((*o).value._ivalue(), item.value._ivalue());
        ++o;
      }
      if (!fresh) continue;
      for (torch::jit::Function* method : type->methods()) {
        if (!is_forward(method->name())) continue;
        if (auto* graph_fn = torch::jit::tryToGraphFunction(*method)) bracket(*graph_fn->graph());
      }
    }
    ModuleEntry& root = entries_.at(copy_._ivalue().get());
    const bool params = copy_.named_parameters(/*recurse=*/true).size() > 0;
    if (!has_submodules(*copy_.type()) && !params) {
      // No submodules, no parameters: its ops are what there is to see. A frozen model (or one
      // optimized for inference) is one: its submodules were inlined and its weights folded
      // into graph constants.
      root.leaf = false;
      torch::jit::Function* forward = copy_.type()->findMethod("forward");
      const auto* graph_fn = forward ? torch::jit::tryToGraphFunction(*forward) : nullptr;
      if (graph_fn && has_tensor_constants(*graph_fn->graph()->block()))
        warnings_.push_back(
            "recorder: " + root.class_name +
            " has no submodules and no parameters but constant tensors: it looks frozen "
            "(torch.jit.freeze) or optimized for inference, which inlines every submodule into one "
            "graph. It is traced as a flat graph of ops, without module calls; trace the model "
            "before freezing it to see its modules.");
    }
  }
  Instrumented(const Instrumented&) = delete;
  Instrumented& operator=(const Instrumented&) = delete;

  const torch::jit::Module& original() const noexcept { return original_; }
  torch::jit::Module& copy() noexcept { return copy_; }
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }
  const std::shared_ptr<OpTable>& op_table() const noexcept { return ops_; }

  /// The entry of module object `object` of the copy, or null for an object it does not hold.
  const ModuleEntry* entry(const c10::ivalue::Object* object) const {
    const auto it = entries_.find(object);
    return it == entries_.end() ? nullptr : &it->second;
  }

  /// Sets the copy's train/eval flags, module by module, to the original's (`train` unset) or
  /// to `train`.
  void set_training(std::optional<bool> train) {
    for (const auto& [from, to] : pairs_) {
      const auto slot = to->type()->findAttributeSlot("training");
      if (!slot) continue;
      if (train) {
        to->setSlot(*slot, *train);
      } else if (const auto source = from->type()->findAttributeSlot("training")) {
        to->setSlot(*slot, from->getSlot(*source));
      }
    }
  }

 private:
  torch::jit::Module original_;
  torch::jit::Module copy_;
  std::unordered_map<const c10::ivalue::Object*, ModuleEntry> entries_;
  std::vector<std::pair<c10::intrusive_ptr<c10::ivalue::Object>, c10::intrusive_ptr<c10::ivalue::Object>>> pairs_;
  std::vector<std::string> warnings_;
  std::shared_ptr<OpTable> ops_ = std::make_shared<OpTable>();
};

/// Instrumented copies by original model object, so a tracer instruments each model once.
class ScriptCache {
 public:
  Instrumented& get(const torch::jit::Module& model) {
    std::lock_guard lock(mutex_);
    const c10::ivalue::Object* key = model._ivalue().get();
    auto it = copies_.find(key);
    if (it == copies_.end()) it = copies_.emplace(key, std::make_unique<Instrumented>(model)).first;
    return *it->second;
  }

 private:
  std::mutex mutex_;
  // Each copy holds its original, so a key's address is never reused while it is cached.
  std::unordered_map<const c10::ivalue::Object*, std::unique_ptr<Instrumented>> copies_;
};

}  // namespace recorder::detail::script
