#pragma once
/// A private, instrumented copy of a TorchScript model: every module forward brackets itself
/// with `recorder::enter` and `recorder::leave`, and every op reports itself with a
/// `recorder::opN` marker, so a traced run sees each module call (which object, its arguments,
/// its result, which it may replace) and each op (its tensors in and out).
///
/// How (measured on libtorch 1.13.1): the model is cloned with its parameters shared
/// (`Module::clone(/*inplace=*/true)` copies the class types and their method graphs, so the
/// user's model and its compiled plans are never touched). Each class's `forward` — and a traced
/// module's `forward1`, `forward2`, ..., its later calls, and the overloads `forward__0`, ... —
/// gets, in its own graph,
///
///     recorder::enter(self, arguments...)             first
///     %r = recorder::leave(self, %result) : Any       last, then prim::unchecked_cast to the
///                                                     result's type, which the method returns
///
/// Then the copy's `forward` is inlined (to a fixed point, without any optimization pass), so
/// the whole model is one graph of the clone's own; the brackets stay, lexically nested as the
/// calls will be. After every dispatcher op with a tensor result comes
///
///     recorder::op[site](tensor inputs..., tensor outputs...)
///
/// (`site`, a node attribute, indexes `Instrumented::sites`), except inside leaf modules unless
/// their ops are wanted (`record::AtenOps`). The markers are interpreter operators with
/// conservative alias analysis: barriers nothing moves across, never removed as dead code. A module's full path is found by object identity
/// (`named_modules()`), whatever the call site (a `ModuleList` loop, `self.holder.inner`, a
/// module called twice). Observing ops in the graph costs one interpreter call per op (~600
/// instructions), where `at::RecordFunction` fired ~4.7 events per interpreter op (~0.65 us
/// before recording anything, on a chain of tiny ops).

#include <recorder/detail/call_text.hpp>
#include <recorder/graph/graph.hpp>
#include <recorder/observe/ops.hpp>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

namespace recorder::detail::script {

/// What the markers call: the recording in progress on this thread.
class MarkerSink {
 public:
  /// Module object `self` is called with `args` (its forward's arguments after `self`), all of
  /// them by keyword when `keyword_only` (as the call site in the model's source reads).
  virtual void enter(const c10::IValue& self, c10::ArrayRef<const c10::IValue> args,
                     bool keyword_only) = 0;
  /// Module object `self` returns `out`; the sink may return another value in its place.
  virtual c10::IValue leave(const c10::IValue& self, c10::IValue out) = 0;
  /// Op site `site` ran: `values` are its tensor inputs, then its tensor outputs.
  virtual void op(std::int64_t site, c10::ArrayRef<const c10::IValue> values) = 0;

 protected:
  ~MarkerSink() = default;
};

/// The recording that receives the markers of this thread, or null (the markers then do nothing).
inline MarkerSink*& current_sink() noexcept {
  thread_local MarkerSink* sink = nullptr;
  return sink;
}

/// The markers' names, and the attribute of an op marker that holds its site.
inline const c10::Symbol enter_symbol = c10::Symbol::fromQualString("recorder::enter");
inline const c10::Symbol leave_symbol = c10::Symbol::fromQualString("recorder::leave");
inline const c10::Symbol op_symbol = c10::Symbol::fromQualString("recorder::op");
inline const c10::Symbol site_attribute = c10::Symbol::attr("site");
/// The attribute of an enter marker whose call passes no argument by position (see
/// `mark_keyword_calls`).
inline const c10::Symbol keyword_only_attribute = c10::Symbol::attr("keyword_only");

/// The view of the last `n` values of `stack`.
inline c10::ArrayRef<const c10::IValue> last(const torch::jit::Stack& stack, std::size_t n) {
  return c10::ArrayRef<const c10::IValue>(stack.data() + stack.size() - n, n);
}

/// Registers the markers once per process, as interpreter operators (no dispatcher call: a
/// marker costs ~600 instructions where a c10 op costs ~1,500). A header-only library cannot
/// register at namespace scope, so the registration object is a function-local static.
inline void register_markers() {
  using torch::jit::Node;
  using torch::jit::Operation;
  using torch::jit::Stack;
  static const torch::jit::RegisterOperators markers({
      torch::jit::Operator(
          "recorder::enter(...) -> ()",
          [](const Node* node) -> Operation {
            const std::size_t n = node->inputs().size();
            const bool keyword_only = node->hasAttribute(keyword_only_attribute);
            return [n, keyword_only](Stack& stack) {
              if (MarkerSink* sink = current_sink())
                sink->enter(stack[stack.size() - n], last(stack, n - 1), keyword_only);
              stack.erase(stack.end() - static_cast<std::ptrdiff_t>(n), stack.end());
            };
          },
          c10::AliasAnalysisKind::CONSERVATIVE),
      torch::jit::Operator(
          "recorder::leave(Any self, Any out) -> Any",
          [](Stack& stack) {
            c10::IValue out = std::move(stack.back());
            stack.pop_back();
            c10::IValue self = std::move(stack.back());
            stack.pop_back();
            if (MarkerSink* sink = current_sink()) out = sink->leave(self, std::move(out));
            stack.push_back(std::move(out));
          },
          c10::AliasAnalysisKind::CONSERVATIVE),
      torch::jit::Operator(
          "recorder::op(...) -> ()",
          [](const Node* node) -> Operation {
            const std::size_t n = node->inputs().size();
            const std::int64_t site = node->i(site_attribute);
            return [n, site](Stack& stack) {
              if (MarkerSink* sink = current_sink()) sink->op(site, last(stack, n));
              stack.erase(stack.end() - static_cast<std::ptrdiff_t>(n), stack.end());
            };
          },
          c10::AliasAnalysisKind::CONSERVATIVE),
  });
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
  using torch::jit::Value;
  g.create(enter_symbol, g.inputs(), 0)->insertAfter(g.block()->param_node());
  Value* result = g.outputs().at(0);
  torch::jit::Node* leave = g.create(leave_symbol, {g.inputs().at(0), result}, 1);
  leave->output()->setType(c10::AnyType::get());
  leave->insertBefore(g.return_node());
  torch::jit::WithInsertPoint at_end(g.return_node());
  Value* typed = g.insertUncheckedCast(leave->output(), result->type());
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

/// True when values of type `t` hold tensors (a tensor, an optional one, a list or tuple of them).
inline bool holds_tensors(const c10::TypePtr& t) {
  if (t->isSubtypeOf(*c10::TensorType::get())) return true;
  if (const auto o = t->cast<c10::OptionalType>()) return holds_tensors(o->getElementType());
  if (const auto l = t->cast<c10::ListType>()) return holds_tensors(l->getElementType());
  if (const auto tuple = t->cast<c10::TupleType>()) {
    for (const c10::TypePtr& e : tuple->elements())
      if (holds_tensors(e)) return true;
  }
  return false;
}

/// True when `op` is one of the `aten::` ops TorchScript's interpreter registers itself that
/// Python calls as a tensor's method: `x.to(x.device)` (`aten::to.prim_Device`), `x.cpu()`,
/// `x.mT`, `x[idx]` on PyTorch 2.x (`aten::index.Tensor_hacked_twin`). They take a tensor, where
/// its list, dict and control ops (`aten::__getitem__.t`, `aten::append`) take none. Not
/// `aten::as_tensor`: Python's `torch.as_tensor` is a creation function, which
/// `__torch_function__` does not see (torchview neither).
inline bool is_jit_tensor_method(const torch::jit::Operator& op, const torch::jit::Node& n) {
  if (!n.kind().is_aten() || n.kind() == c10::Symbol::fromQualString("aten::as_tensor"))
    return false;
  for (const c10::Argument& a : op.schema().arguments()) {
    c10::TypePtr t = a.type();
    if (const auto o = t->cast<c10::OptionalType>()) t = o->getElementType();
    if (t->kind() == c10::TypeKind::TensorType) return true;
  }
  return false;
}

/// True for an op the tracer records, one with a tensor among its results: a dispatcher op
/// (what `at::RecordFunction` would see; not the interpreter's own list and control ops), or
/// one of the interpreter's own tensor methods (`is_jit_tensor_method`), which Python
/// dispatches like any other (torchview draws `x.cpu()`).
inline bool is_recorded_op(const torch::jit::Node& n) {
  if (n.kind().is_prim() || n.kind() == enter_symbol || n.kind() == leave_symbol ||
      n.kind() == op_symbol)
    return false;
  const torch::jit::Operator* op = n.maybeOperator();
  if (op == nullptr || (!op->isC10Op() && !is_jit_tensor_method(*op, n))) return false;
  for (const torch::jit::Value* v : n.outputs())
    if (holds_tensors(v->type())) return true;
  return false;
}

/// One op of the instrumented graph that reports itself (see the file comment).
struct OpSite {
  std::string name;          ///< "add", "conv2d": "aten::" and the in-place '_' removed
  bool inplace = false;      ///< `add_`, `relu_`
  std::uint32_t inputs = 0;  ///< its first `inputs` values are inputs, the rest outputs
  /// Reports only a pooling's `kernel_size` argument (a traced pooling keeps no constants).
  bool kernel_size = false;
};

/// Inlines every module and function call of `g`, to a fixed point, without optimizing: the
/// callees' graphs are taken as they are (the optimizer is off on this thread meanwhile).
inline void inline_all(torch::jit::Graph& g) {
  const auto has_calls = [](const auto& self, const torch::jit::Block& b) -> bool {
    for (const torch::jit::Node* n : b.nodes()) {
      if (n->kind() == c10::prim::CallFunction) return true;
      if (n->kind() == c10::prim::CallMethod && n->input(0)->type()->cast<c10::ClassType>())
        return true;
      for (const torch::jit::Block* inner : n->blocks())
        if (self(self, *inner)) return true;
    }
    return false;
  };
  torch::jit::GraphOptimizerEnabledGuard as_written(false);
  while (has_calls(has_calls, *g.block())) torch::jit::Inline(g);
}

/// Where `n` came from in the model's Python source: a loaded file's nodes point into the code
/// it serialized (`torch.select(torch.slice(x2), 1, 0)`), which maps back to the source that
/// generated it (`x[:, 0]`) when the file holds its debug records.
inline torch::jit::SourceRange python_range(const torch::jit::Node& n) {
  const torch::jit::SourceRange& range = n.sourceRange();
  if (!range.source()) return range;
  if (auto original = range.findSourceRangeThatGenerated()) return *original;
  return range;
}

/// Marks each enter marker of block `b` whose call passes no argument by position
/// (`self.attn(query=x, key=x, value=x)`) with `keyword_only_attribute`: torchinfo's forward
/// hooks see no arguments for such a call. Which call brought a bracket is in the callstack of
/// its leave marker (inlining gives one to nodes with outputs only, so not to the enter marker
/// it is paired with, in the same block): its last frame's range is the callee in the caller's
/// source (`self.attn`), followed by the arguments. A file saved without its debug records, and
/// a traced one (its calls read `forward_call(*args, **kwargs)`), has no such call.
inline void mark_keyword_calls(torch::jit::Block& b) {
  std::vector<torch::jit::Node*> open;
  for (torch::jit::Node* n : b.nodes()) {
    for (torch::jit::Block* inner : n->blocks()) mark_keyword_calls(*inner);
    if (n->kind() == enter_symbol) open.push_back(n);
    if (n->kind() != leave_symbol || open.empty()) continue;
    torch::jit::Node* enter = open.back();
    open.pop_back();
    const auto stack = n->callstack();
    if (!stack) continue;
    torch::jit::InlinedCallStackPtr frame = *stack;
    while (const auto next = frame->callee()) frame = *next;
    torch::jit::SourceRange range = frame->source_range();
    if (!range.source()) continue;
    if (auto original = range.findSourceRangeThatGenerated()) range = *original;
    const auto& source = range.source();
    if (!source || range.end() > source->size()) continue;
    const torch::jit::SourceRange after(source, range.end(),
                                        std::min(source->size(), range.end() + 4096));
    if (detail::passes_no_positional_argument(after.text().str()))
      enter->i_(keyword_only_attribute, 1);
  }
}

/// True when ranges `a` and `b` are the same span of the same source (a loaded file's debug
/// records may hold one source text more than once).
inline bool same_range(const torch::jit::SourceRange& a, const torch::jit::SourceRange& b) {
  if (a.start() != b.start() || a.end() != b.end() || !a.source() || !b.source()) return false;
  return a.source() == b.source() ||
         (a.source()->size() == b.source()->size() &&
          a.source()->starting_line_no() == b.source()->starting_line_no() &&
          a.text().str() == b.text().str());
}

/// True when `n` is one of the ops TorchScript compiles a subscript of a tensor into (`x[:, 0]`:
/// `slice`, then `select`; `x[idx]`: `index`; `x[None]`: `unsqueeze`), known by its Python
/// source: a range with a `[` that is not a call. A file saved without its debug records has
/// no ranges: its ops are never taken for a subscript.
inline bool is_subscript_op(const torch::jit::Node& n) {
  static const c10::Symbol ops[] = {
      c10::Symbol::fromQualString("aten::slice"), c10::Symbol::fromQualString("aten::select"),
      c10::Symbol::fromQualString("aten::index"), c10::Symbol::fromQualString("aten::unsqueeze")};
  if (std::find(std::begin(ops), std::end(ops), n.kind()) == std::end(ops)) return false;
  const torch::jit::SourceRange range = python_range(n);
  if (!range.source() || range.end() <= range.start()) return false;
  // The range of a subscript spans the value and its brackets, though TorchScript's parser may
  // end it early (`x[..., 0::2, 0::2,` for `x[..., 0::2, 0::2, :]`); a method call such as
  // `x[m].unsqueeze(0)` ends with its parenthesis.
  const std::string text = range.text().str();
  const auto last = text.find_last_not_of(" \t\r\n");
  return last != std::string::npos && text[last] != ')' && text.find('[') != std::string::npos;
}

/// The subscript op that `n`'s tensor comes from when both belong to one subscript expression:
/// the producer of its first input is a subscript op of the same source range whose only use
/// is `n`. Null otherwise.
inline torch::jit::Node* subscript_link(const torch::jit::Node& n) {
  if (n.inputs().empty() || !is_subscript_op(n)) return nullptr;
  torch::jit::Value* in = n.input(0);
  torch::jit::Node* p = in->node();
  if (p->owningBlock() != n.owningBlock() || in->uses().size() != 1 || !is_subscript_op(*p) ||
      !same_range(python_range(*p), python_range(n)))
    return nullptr;
  return p;
}

/// True when `n`'s result goes on to the next op of its subscript expression (it is not the
/// expression's last op).
inline bool continues_subscript(const torch::jit::Node& n) {
  if (n.outputs().size() != 1 || n.output()->uses().size() != 1) return false;
  const torch::jit::Node* user = n.output()->uses().front().user;
  return subscript_link(*user) == &n;
}

/// The name of the function of TorchScript's own builtin source that `range` lies in, or "" when
/// `range` is in the model's source. TorchScript compiles a scalar-first operator through such
/// functions: `1.0 - x` runs `def sub(a: float, b: Tensor): return torch.neg(b) + a`, `2.0 / x`
/// runs `torch.reciprocal(b) * a` (`div`). That source's file name is `<string>` (or none, as
/// a file's debug records may keep it); the model's is its Python file.
inline std::string builtin_function_of(const torch::jit::SourceRange& range) {
  if (!range.source() || range.end() <= range.start()) return {};
  if (const auto& file = range.source()->filename(); file && *file != "<string>") return {};
  const std::string text = range.source()->text_str().str();
  if (range.start() > text.size()) return {};
  auto def = text.rfind("def ", range.start());
  if (def == std::string::npos || (def > 0 && text[def - 1] != '\n')) return {};
  def += 4;
  auto end = def;
  while (end < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[end])) != 0 || text[end] == '_'))
    ++end;
  return text.substr(def, end - def);
}

/// True when range `inner` lies within range `outer` of the same source.
inline bool range_within(const torch::jit::SourceRange& inner,
                         const torch::jit::SourceRange& outer) {
  return inner.source() == outer.source() && outer.start() <= inner.start() &&
         inner.end() <= outer.end();
}

/// The op before `n` in the builtin function of TorchScript's that both come from (`neg` for
/// the `add` of `1.0 - x`): the producer of one of `n`'s inputs, used by `n` only, whose range
/// lies within `n`'s in that function's source. Null otherwise.
inline torch::jit::Node* builtin_link(const torch::jit::Node& n) {
  const torch::jit::SourceRange range = python_range(n);
  if (is_subscript_op(n) || builtin_function_of(range).empty()) return nullptr;
  for (std::size_t i = 0; i < n.inputs().size(); ++i) {
    torch::jit::Value* in = n.input(i);
    torch::jit::Node* p = in->node();
    if (p->owningBlock() != n.owningBlock() || in->uses().size() != 1 || p->outputs().size() != 1 ||
        !is_recorded_op(*p) || !range_within(python_range(*p), range))
      continue;
    return p;
  }
  return nullptr;
}

/// True when `n`'s result goes on to the next op of the builtin function it comes from.
inline bool continues_builtin(const torch::jit::Node& n) {
  if (n.outputs().size() != 1 || n.output()->uses().size() != 1) return false;
  return builtin_link(*n.output()->uses().front().user) == &n;
}

/// Puts an op marker after every recorded op of block `b` (see the file comment), appending
/// their sites to `sites`. `in_leaf` says whether the innermost bracket around `b` is a leaf's.
/// With `group_subscripts`, the ops of one subscript expression report as one op,
/// `__getitem__` (torchview's node for `x[:, 0]`), with the expression's tensor inputs and result.
inline void mark_ops(torch::jit::Block& b, std::vector<bool>& in_leaf,
                     const std::unordered_map<const c10::ClassType*, bool>& leaf,
                     bool observe_leaves, bool group_subscripts, std::vector<OpSite>& sites) {
  using torch::jit::Node;
  using torch::jit::Value;
  torch::jit::Graph& g = *b.owningGraph();
  for (auto it = b.nodes().begin(); it != b.nodes().end();) {
    Node* n = *it;
    ++it;  // before inserting after `n`
    if (n->kind() == enter_symbol) {
      const auto type = n->input(0)->type()->cast<c10::ClassType>();
      const auto found = type ? leaf.find(type.get()) : leaf.end();
      in_leaf.push_back(found != leaf.end() && found->second);
      continue;
    }
    if (n->kind() == leave_symbol) {
      if (!in_leaf.empty()) in_leaf.pop_back();
      continue;
    }
    for (torch::jit::Block* inner : n->blocks())
      mark_ops(*inner, in_leaf, leaf, observe_leaves, group_subscripts, sites);
    if (!is_recorded_op(*n)) continue;
    const bool inside_leaf = !in_leaf.empty() && in_leaf.back() && !observe_leaves;
    if (group_subscripts && !inside_leaf && (continues_subscript(*n) || continues_builtin(*n)))
      continue;
    const c10::FunctionSchema& schema = n->schema();
    std::vector<Value*> values;
    OpSite site;
    if (inside_leaf) {
      // Inside a leaf: only a pooling's kernel size, which a traced pooling keeps nowhere else.
      const auto k = schema.argumentIndexWithName("kernel_size");
      if (!k || schema.name().find("pool") == std::string::npos) continue;
      site.kernel_size = true;
      values.push_back(n->input(*k));
    } else {
      std::string_view name = schema.name();
      if (name.substr(0, 6) == "aten::") name.remove_prefix(6);
      site.inplace = name.size() > 1 && name.back() == '_' && name.front() != '_';
      if (site.inplace) name.remove_suffix(1);
      site.name = std::string(name);
      // The links of a subscript expression, last to first; their tensor inputs are the
      // expression's, but for the values passed from link to link.
      std::vector<Node*> links{n};
      if (group_subscripts)
        while (Node* p = subscript_link(*links.back())) links.push_back(p);
      if (links.size() > 1 || (group_subscripts && is_subscript_op(*n))) site.name = "__getitem__";
      // The ops of one of TorchScript's builtin functions (`1.0 - x`: `neg`, `add`), as one op
      // named by the function (`sub`), as Python dispatches it (`__rsub__`).
      if (group_subscripts && links.size() == 1) {
        while (Node* p = builtin_link(*links.back())) links.push_back(p);
        if (links.size() > 1) site.name = builtin_function_of(python_range(*n));
      }
      for (auto link = links.rbegin(); link != links.rend(); ++link)
        for (Value* v : (*link)->inputs())
          if (holds_tensors(v->type()) &&
              (link == links.rbegin() || v != (*std::prev(link))->output()))
            values.push_back(v);
      site.inputs = static_cast<std::uint32_t>(values.size());
      for (Value* v : n->outputs())
        if (holds_tensors(v->type())) values.push_back(v);
    }
    Node* marker = g.create(op_symbol, values, 0);
    marker->i_(site_attribute, static_cast<std::int64_t>(sites.size()));
    marker->insertAfter(n);
    sites.push_back(std::move(site));
  }
}

/// True when graph `g` (or a block inside it) holds a constant tensor: the weights of a frozen
/// model are graph constants.
inline bool has_tensor_constants(const torch::jit::Block& b) {
  for (const torch::jit::Node* n : b.nodes()) {
    if (n->kind() == c10::prim::Constant &&
        n->output()->type()->isSubtypeOf(*c10::TensorType::get()))
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
  bool has_children = false;  ///< has submodules, called or not (torchinfo's non-leaf)
};

/// A private, instrumented copy of one TorchScript model (see the file comment), made once and
/// reused for every trace of that model.
class Instrumented {
 public:
  /// Instruments a copy of `original`; with `observe_leaves`, ops inside leaf modules report
  /// themselves too, and each aten op of a subscript expression by itself (without it, the
  /// expression is one `__getitem__` op).
  Instrumented(const torch::jit::Module& original, bool observe_leaves)
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
      e.has_children = has_submodules(*type);
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
    const bool params = copy_.named_parameters(/*recurse=*/true).size() > 0;
    torch::jit::Function* forward = copy_.type()->findMethod("forward");
    auto* graph_fn = forward ? torch::jit::tryToGraphFunction(*forward) : nullptr;
    if (!has_submodules(*copy_.type()) && !params) {
      // No submodules, no parameters: its ops are what there is to see. A frozen model (or one
      // optimized for inference) is one: its submodules were inlined and its weights folded
      // into graph constants.
      ModuleEntry& root = entries_.at(copy_._ivalue().get());
      root.leaf = false;
      leaf[copy_.type().get()] = false;
      if (graph_fn && has_tensor_constants(*graph_fn->graph()->block()))
        warnings_.push_back(
            "recorder: " + root.class_name +
            " has no submodules and no parameters but constant tensors: it looks frozen "
            "(torch.jit.freeze) or optimized for inference, which inlines every submodule into one "
            "graph. It is traced as a flat graph of ops, without module calls; trace the model "
            "before freezing it to see its modules.");
    }
    if (graph_fn != nullptr) {
      torch::jit::Graph& g = *graph_fn->graph();
      inline_all(g);
      mark_keyword_calls(*g.block());
      std::vector<bool> in_leaf;
      mark_ops(*g.block(), in_leaf, leaf, observe_leaves, /*group_subscripts=*/!observe_leaves,
               sites_);
    }
  }
  Instrumented(const Instrumented&) = delete;
  Instrumented& operator=(const Instrumented&) = delete;

  const torch::jit::Module& original() const noexcept { return original_; }
  torch::jit::Module& copy() noexcept { return copy_; }
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }
  /// The ops that report themselves, by site.
  const std::vector<OpSite>& sites() const noexcept { return sites_; }

  /// How big the last trace of this copy was (the next one reserves as much).
  Graph::Capacity last_size;
  std::size_t last_tensors = 0;

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
  std::vector<
      std::pair<c10::intrusive_ptr<c10::ivalue::Object>, c10::intrusive_ptr<c10::ivalue::Object>>>
      pairs_;
  std::vector<std::string> warnings_;
  std::vector<OpSite> sites_;
};

/// Instrumented copies by original model object (and whether leaf ops report themselves), so
/// a tracer instruments each model once.
class ScriptCache {
 public:
  Instrumented& get(const torch::jit::Module& model, bool observe_leaves) {
    std::lock_guard lock(mutex_);
    const std::pair<const c10::ivalue::Object*, bool> key{model._ivalue().get(), observe_leaves};
    auto it = copies_.find(key);
    if (it == copies_.end())
      it = copies_.emplace(key, std::make_unique<Instrumented>(model, observe_leaves)).first;
    return *it->second;
  }

 private:
  std::mutex mutex_;
  // Each copy holds its original, so a key's address is never reused while it is cached.
  std::map<std::pair<const c10::ivalue::Object*, bool>, std::unique_ptr<Instrumented>> copies_;
};

}  // namespace recorder::detail::script
