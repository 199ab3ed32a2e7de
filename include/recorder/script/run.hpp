#pragma once
/// Tracing one forward of a TorchScript model: the module calls and ops its markers report
/// (`script/instrument.hpp`), wired by tensor identity, recorded into the same graph the
/// templated front end builds.

#include <recorder/adapters/module_call.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/error.hpp>
#include <recorder/front/recording.hpp>
#include <recorder/graph/display_attributes.hpp>
#include <recorder/observe/ops.hpp>
#include <recorder/script/instrument.hpp>
#include <recorder/tensor/session.hpp>
#include <recorder/front/front_end.hpp>
#include <recorder/front/tracer.hpp>

#include <c10/util/Exception.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace recorder::detail::script {

/// The ints of an int, an int list or a tuple of ints (a kernel size, as a module or op holds it).
inline std::vector<std::int64_t> ints_of(const c10::IValue& v) {
  std::vector<std::int64_t> xs;
  if (v.isInt())
    xs.push_back(v.toInt());
  else if (v.isIntList())
    xs = v.toIntVector();
  else if (v.isTuple())
    for (const c10::IValue& e : v.toTupleRef().elements())
      if (e.isInt()) xs.push_back(e.toInt());
  return xs;
}

/// Parameters below module `m` (all, trainable), each registration counted, memoized by object.
inline std::pair<std::uint64_t, std::uint64_t> count_parameters(Session& s,
                                                                const torch::jit::Module& m) {
  const void* key = m._ivalue().get();
  if (const auto* n = s.param_counts.find(key)) return *n;
  std::pair<std::uint64_t, std::uint64_t> n{0, 0};
  for (const at::Tensor& p : m.parameters(/*recurse=*/false)) {
    n.first += static_cast<std::uint64_t>(p.numel());
    if (p.requires_grad()) n.second += static_cast<std::uint64_t>(p.numel());
  }
  for (const torch::jit::Module& child : m.children()) {
    const auto c = count_parameters(s, child);
    n.first += c.first;
    n.second += c.second;
  }
  s.param_counts.try_emplace(key, n);
  return n;
}

/// The `ModuleInfo` of module object `m`, described by `e`, first called with `inputs`:
/// parameters, their recursive counts, and torchinfo's `kernel_size` and `groups` for
/// convolutions and poolings (from the class constants of a scripted module, or from the weight
/// and the input of a traced one, whose classes keep no constants).
inline ModuleInfo describe_module(Session& s, const torch::jit::Module& m, const ModuleEntry& e,
                                  std::span<const at::Tensor> inputs) {
  ModuleInfo info;
  info.path = e.path;
  info.class_name = e.class_name;
  info.leaf = e.leaf;
  info.has_children = e.has_children;
  const auto dot = info.path.rfind('.');
  info.name = info.path.empty()
                  ? info.class_name
                  : (dot == std::string::npos ? info.path : info.path.substr(dot + 1));
  for (const auto& p : m.named_parameters(/*recurse=*/false)) {
    ParamInfo pi;
    pi.name = p.name;
    pi.element_bytes = static_cast<std::uint8_t>(p.value.element_size());
    pi.id = IdMap::key_of(p.value.unsafeGetTensorImpl());
    const auto sizes = p.value.sizes();
    pi.shape.assign(sizes.begin(), sizes.end());
    pi.numel = static_cast<std::uint64_t>(p.value.numel());
    pi.trainable = p.value.requires_grad();
    info.params.push_back(std::move(pi));
  }
  std::tie(info.param_count, info.trainable_count) = count_parameters(s, m);

  const c10::ClassType& type = *m.type();
  const DisplayAttributes shown = display_attributes(info.class_name);
  const bool conv = shown == DisplayAttributes::convolution;
  if (shown == DisplayAttributes::none) return info;
  if (type.hasConstant("kernel_size")) {
    std::optional<std::int64_t> groups;
    if (conv && type.hasConstant("groups")) groups = type.getConstant("groups").toInt();
    append_display_attributes(info, shown, ints_of(type.getConstant("kernel_size")), groups);
    return info;
  }
  if (!conv || !m.hasattr("weight")) return info;  // a traced pooling: its op tells (`Run::op`)
  const at::Tensor w =
      m.attr("weight").toTensor();  // [C_out, C_in / groups, k...] (transposed: C_in first)
  if (w.dim() < 3) return info;
  std::optional<std::int64_t> groups;
  if (!inputs.empty() && inputs[0].defined() && inputs[0].dim() >= 2 && w.size(1) > 0 &&
      info.class_name.find("Transpose") == std::string::npos) {
    const std::int64_t channels =
        inputs[0].dim() + 1 == w.dim() ? inputs[0].size(0) : inputs[0].size(1);
    groups = channels / w.size(1);
  }
  append_display_attributes(info, shown, w.sizes().slice(2), groups);
  return info;
}

/// Rebuilds `v` with its tensors, in `for_each_tensor` order, replaced by `ts`.
inline c10::IValue with_tensors(const c10::IValue& v, std::span<const at::Tensor> ts,
                                std::size_t& i) {
  if (v.isTensor()) return v.toTensor().defined() && i < ts.size() ? c10::IValue(ts[i++]) : v;
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList().vec())
      out.push_back(t.defined() && i < ts.size() ? ts[i++] : t);
    return out;
  }
  if (v.isList()) {
    const c10::List<c10::IValue> in = v.toList();
    c10::impl::GenericList out(in.elementType());
    for (const c10::IValue& e : in.vec()) out.push_back(with_tensors(e, ts, i));
    return out;
  }
  if (v.isTuple()) {
    const auto& tuple = v.toTupleRef();
    std::vector<c10::IValue> elements;
    for (const c10::IValue& e : tuple.elements()) elements.push_back(with_tensors(e, ts, i));
    if (tuple.type()->schema())
      return c10::ivalue::Tuple::createNamed(std::move(elements), tuple.type());
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  if (v.isGenericDict()) {
    const c10::impl::GenericDict in = v.toGenericDict();
    c10::impl::GenericDict out(in.keyType(), in.valueType());
    for (const auto& entry : in) out.insert(entry.key(), with_tensors(entry.value(), ts, i));
    return out;
  }
  return v;
}

/// The message of an error the TorchScript interpreter rethrew: the original error's text,
/// without the interpreter's preamble and traceback ("RuntimeError: " dropped too).
inline std::string interpreter_message(std::string what) {
  if (what.find("The following operation failed in the TorchScript interpreter") ==
      std::string::npos)
    return what;
  std::size_t at = 0;
  while (at < what.size()) {
    const std::size_t end = what.find('\n', at);
    const std::string_view line(what.data() + at,
                                (end == std::string::npos ? what.size() : end) - at);
    const std::size_t colon = line.find(": ");
    if (!line.empty() && line[0] != ' ' && colon != std::string_view::npos && colon > 5 &&
        (line.substr(colon - 5, 5) == "Error" ||
         line.substr(0, colon).find("Exception") != std::string_view::npos) &&
        line.substr(0, colon).find(' ') == std::string_view::npos) {
      std::string rest = what.substr(at + colon + 2);
      while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.pop_back();
      return rest;
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return what;
}

/// The op the TorchScript interpreter marks as failing in error message `what`: the call its
/// innermost serialized-code frame underlines (`torch.conv2d(...)` under `~~~ <--- HERE` gives
/// "conv2d"); "" when the message marks none, or an expression that is not a call.
inline std::string failed_op_of(const std::string& what) {
  const std::size_t code = what.find("Traceback of TorchScript, serialized code");
  if (code == std::string::npos) return {};
  const std::size_t original = what.find("Traceback of TorchScript, original code", code);
  const std::string_view section(what.data() + code,
                                 (original == std::string::npos ? what.size() : original) - code);
  const std::size_t here = section.rfind("<--- HERE");
  if (here == std::string_view::npos) return {};
  const std::size_t marks_begin = section.rfind('\n', here);
  if (marks_begin == std::string_view::npos || marks_begin == 0) return {};
  const std::size_t source_begin = section.rfind('\n', marks_begin - 1);
  if (source_begin == std::string_view::npos) return {};
  const std::string_view source = section.substr(source_begin + 1, marks_begin - source_begin - 1);
  const std::string_view marks = section.substr(marks_begin + 1, here - marks_begin - 1);
  const std::size_t from = marks.find('~');
  const std::size_t to = marks.find_last_of('~');
  if (from == std::string_view::npos || to >= source.size()) return {};
  std::string_view call = source.substr(from, to - from + 1);
  for (char c : call)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return {};
  if (const std::size_t dot = call.rfind('.'); dot != std::string_view::npos)
    call.remove_prefix(dot + 1);
  std::string name(call);
  if (name.size() > 1 && name.back() == '_' && name.front() != '_') name.pop_back();
  return name;
}

/// One traced forward of an instrumented model on this thread: receives its markers, records
/// its module calls and ops, and knows which call failed.
class Run final : public MarkerSink {
 public:
  Run(Session& s, Instrumented& model, bool observe_leaves)
      : session_(s),
        model_(model),
        observe_leaves_(observe_leaves),
        previous_(current_sink()),
        names_(model.sites().size()) {
    ops_.session = &s;
    ops_.nodes.reserve(std::max<std::size_t>(model.last_tensors, 64));
    Graph::Capacity room = model.last_size;  // with slack: this run may record a little more
    for (std::size_t* n : {&room.nodes, &room.edges, &room.tensors, &room.dims, &room.functions})
      *n += *n / 8 + 64;
    s.graph.reserve(room);
    current_sink() = this;
  }
  ~Run() { current_sink() = previous_; }

  /// Remembers how big this trace is, so the next one of this model reserves as much (call
  /// before the graph leaves the session).
  void remember_size() {
    model_.last_size = session_.graph.capacity_used();
    model_.last_tensors = ops_.nodes.size();
  }
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  /// Where tensors come from: inputs are added here before the forward runs.
  TensorNodes& nodes() noexcept { return ops_.nodes; }
  /// The node of tensor `t` as an operand (seen, or a new parameter or constant node).
  NodeId operand(const at::Tensor& t) { return ops_.operand(t); }

  // The module-call protocol of `adapters/module_call.hpp`, split over two markers: `enter`
  // opens the call (`enter_call`) and tells the hooks (`notify_enter`); `leave` records the
  // outputs and tells the hooks (`record_return`) and closes the call (`leave_call`) — a leaf
  // before its outputs are recorded, as `ModuleCall` does. No `ModuleCall` can live from one
  // marker to the other, and a failure is handled once for the whole forward (`fail`): the
  // interpreter rethrows a copy of the exception, not the one thrown inside a marker.
  void enter(const c10::IValue& self, c10::ArrayRef<const c10::IValue> args,
             bool keyword_only) override {
    const c10::ivalue::Object* object = &self.toObjectRef();
    if (!frames_.empty() &&
        frames_.back().object == object) {  // a traced module's forward calling forward1
      Frame f = frames_.back();
      f.transparent = true;
      f.inputs.clear();
      frames_.push_back(std::move(f));
      return;
    }
    try {
      Frame f;
      f.object = object;
      for (const c10::IValue& a : args)
        for_each_tensor(a, [&f](const at::Tensor& t) { f.inputs.push_back(t); });
      std::vector<NodeId> in;
      for (const at::Tensor& t : f.inputs) in.push_back(ops_.operand(t));
      const ModuleEntry fallback{"(unregistered " + class_name_of(self.toObjectRef().type()) + ")",
                                 class_name_of(self.toObjectRef().type()), true};
      const ModuleEntry* e = model_.entry(object);
      if (e == nullptr) e = &fallback;
      f.leaf = e->leaf;
      f.module = module_id(self, *e, f.inputs);
      f.call = enter_call(session_, f.module, in, f.leaf);
      if (keyword_only) session_.graph.set_keyword_only(f.call);
      if (display_attributes(e->class_name) == DisplayAttributes::pooling) {
        f.wants_kernel = true;
        for (const auto& [key, value] : session_.graph.module(f.module).attributes)
          f.wants_kernel = f.wants_kernel && key != "kernel_size";
      }
      frames_.push_back(std::move(f));
      const Frame& top = frames_.back();
      notify_enter(session_, top.call, top.inputs);
      mark_time();
    } catch (...) {
      stash_failure();
      throw;
    }
  }

  c10::IValue leave(const c10::IValue&, c10::IValue out) override {
    if (frames_.empty()) return out;
    if (frames_.back().transparent) {
      frames_.pop_back();
      return out;
    }
    try {
      Frame& f = frames_.back();
      std::vector<at::Tensor> outs;
      for_each_tensor(out, [&outs](const at::Tensor& t) { outs.push_back(t); });
      const std::size_t tail = dict_tail(out);  // a dict's last value first, as torchinfo shows it
      std::rotate(outs.begin(), outs.end() - static_cast<std::ptrdiff_t>(tail), outs.end());
      std::vector<NodeId> nodes;
      nodes.reserve(outs.size());
      if (f.leaf) {
        leave_call(session_, f.call);
        for (const at::Tensor& t : outs) {
          NodeId n = observe_leaves_ ? produced_in(t, f.call) : NodeId{};
          if (!n.valid()) n = record_output(session_, f.call, t);
          ops_.nodes.set(t, n);
          nodes.push_back(n);
        }
      } else {
        for (const at::Tensor& t : outs) nodes.push_back(ops_.operand(t));
      }
      if (session_.hooks.empty()) {
        record_return(session_, f.call, std::move(nodes), f.inputs, {});
      } else {
        std::vector<at::Tensor> replaced = outs;
        record_return(session_, f.call, nodes, f.inputs, replaced);
        bool changed = false;
        for (std::size_t i = 0; i < outs.size(); ++i) {
          if (replaced[i].is_same(outs[i])) continue;
          changed = true;
          ops_.nodes.set(replaced[i], nodes[i]);  // the graph keeps the recorded node
        }
        if (changed) {
          std::rotate(replaced.begin(), replaced.begin() + static_cast<std::ptrdiff_t>(tail),
                      replaced.end());
          std::size_t i = 0;
          out = with_tensors(out, replaced, i);
        }
      }
      if (!f.leaf) leave_call(session_, f.call);
      frames_.pop_back();
      mark_time();
      return out;
    } catch (...) {
      stash_failure();
      throw;
    }
  }

  void op(std::int64_t index, c10::ArrayRef<const c10::IValue> values) override {
    if (session_.op_clock != nullptr) ops_.ended = ticks();
    const auto i = static_cast<std::size_t>(index);
    const OpSite& site = model_.sites()[i];
    if (site.kernel_size) {
      if (!frames_.empty() && frames_.back().wants_kernel)
        learn_kernel(frames_.back(), values.at(0));
      return;
    }
    if (names_[i].empty()) names_[i] = session_.intern(site.name);
    ops_.inputs.clear();
    ops_.add_inputs(values.slice(0, site.inputs));
    ops_.record(names_[i], site.inplace, values.slice(site.inputs));
    mark_time();
  }

  /// With an op clock: the next op's time starts now. A marker comes after its op, so an op's
  /// span runs from the end of the previous marker's work (an op, a call opening or returning)
  /// to its own marker: the op and the interpreter's steps before it (constants, lists).
  void mark_time() {
    if (session_.op_clock != nullptr) ops_.started = ticks();
  }

  /// Called inside a `catch` around the forward: where it failed (the op that threw, the
  /// innermost open call), every open call marked failed and closed. Throws the `TraceError`,
  /// with the original exception nested (an error of the recording itself, such as a
  /// `CaptureError`, rather than the interpreter's copy of it).
  [[noreturn]] void fail(Recording& rec, ModelFacts facts) {
    Failure f;
    std::exception_ptr original = stashed_;
    if (stashed_failure_) {
      f = *stashed_failure_;
    } else {
      const std::string what = current_exception_message();
      std::span<const at::Tensor> inputs;  // the innermost call's, for an index error
      for (auto it = frames_.rbegin(); it != frames_.rend() && inputs.empty(); ++it)
        if (!it->transparent) inputs = it->inputs;
      f = describe_failure(session_, failed_op_of(what), interpreter_message(what), inputs);
      original = std::current_exception();
    }
    for (const Frame& frame : frames_)
      if (!frame.transparent) session_.graph.set_failed(frame.call);
    session_.stack.clear();
    frames_.clear();
    if (!session_.failure) session_.failure = f;
    try {
      std::rethrow_exception(original);
    } catch (...) {
      try {
        std::throw_with_nested(TraceError(std::move(f)));
      } catch (TraceError& e) {
        rec.fail(e, std::move(facts));
        throw;
      }
    }
  }

 private:
  struct Frame {
    const c10::ivalue::Object* object = nullptr;
    NodeId call;
    bool leaf = false;
    bool transparent = false;  ///< a traced module's `forward` calling its own `forward1`
    /// A pooling without its kernel size (a traced module keeps no constants): the first op
    /// inside with a `kernel_size` argument tells it.
    bool wants_kernel = false;
    ModuleId module;
    std::vector<at::Tensor> inputs;
  };

  /// A pooling's kernel size, the `kernel_size` argument of an op run inside it.
  void learn_kernel(Frame& f, const c10::IValue& kernel_size) {
    f.wants_kernel = false;
    const std::vector<std::int64_t> k = ints_of(kernel_size);
    if (!k.empty())
      session_.graph.add_attribute(f.module, "kernel_size",
                                   kernel_size_text(DisplayAttributes::pooling, k));
  }

  ModuleId module_id(const c10::IValue& self, const ModuleEntry& e,
                     std::span<const at::Tensor> inputs) {
    const void* key = &self.toObjectRef();
    if (const ModuleId* id = session_.modules.find(key)) return *id;
    const torch::jit::Module m(self.toObject());
    const ModuleId id = session_.graph.add_module(describe_module(session_, m, e, inputs));
    session_.modules.try_emplace(key, id);
    session_.module_objects.push_back(key);
    return id;
  }

  /// The node an op recorded inside leaf call `call` made for `t`, if any.
  NodeId produced_in(const at::Tensor& t, NodeId call) const {
    const NodeId n = ops_.nodes.find(t);
    return n.valid() && session_.graph.node(n).parent == call ? n : NodeId{};
  }

  /// Inside a `catch` in a marker: keeps the exception (the interpreter rethrows a copy that
  /// loses its type) and where the recording stood.
  void stash_failure() {
    if (stashed_) return;
    stashed_ = std::current_exception();
    stashed_failure_ = describe_failure(session_, "", current_exception_message());
  }

  Session& session_;
  Instrumented& model_;
  bool observe_leaves_;
  MarkerSink* previous_;
  OpRecorder ops_;
  std::vector<std::string_view> names_;  ///< interned op names, by site
  std::vector<Frame> frames_;
  std::exception_ptr stashed_;
  std::optional<Failure> stashed_failure_;
};

/// Every parameter of `model` once (tied ones once), and its class.
inline ModelFacts model_facts(const torch::jit::Module& model, const Instrumented* copy) {
  ModelFacts facts;
  facts.class_name = class_name_of(model.type());
  std::unordered_set<const void*> seen;
  for (const at::Tensor& p : model.parameters(/*recurse=*/true)) {
    if (!seen.insert(p.unsafeGetTensorImpl()).second) continue;
    facts.total_params += static_cast<std::uint64_t>(p.numel());
    if (p.requires_grad()) facts.trainable_params += static_cast<std::uint64_t>(p.numel());
    facts.param_bytes += static_cast<std::uint64_t>(p.numel() * p.element_size());
  }
  if (copy != nullptr) facts.warnings = copy->warnings();
  return facts;
}

/// RAII: sets a TorchScript model's train/eval flags (per module) and restores them.
class ScriptModeGuard {
 public:
  ScriptModeGuard(const torch::jit::Module& m, TrainMode mode) {
    if (mode == TrainMode::keep) return;
    for (const auto& item : m.named_modules()) {
      const auto object = item.value._ivalue();
      if (const auto slot = object->type()->findAttributeSlot("training")) {
        saved_.emplace_back(object, object->getSlot(*slot));
        object->setSlot(*slot, mode == TrainMode::train);
      }
    }
  }
  ~ScriptModeGuard() {
    for (const auto& [object, value] : saved_)
      object->setSlot(*object->type()->findAttributeSlot("training"), value);
  }
  ScriptModeGuard(const ScriptModeGuard&) = delete;
  ScriptModeGuard& operator=(const ScriptModeGuard&) = delete;

 private:
  std::vector<std::pair<c10::intrusive_ptr<c10::ivalue::Object>, c10::IValue>> saved_;
};

/// Registers the modules of the trace's container rows (`Graph::ContainerRow`) that were never
/// called, found by path in `copy`.
inline void register_containers(Session& s, Instrumented& copy) {
  if (s.graph.container_rows().empty()) return;
  recorder::register_containers(s.graph, [&](std::string_view path) {
    for (const auto& item : copy.copy().named_modules()) {
      if (item.name != path) continue;
      if (const ModuleEntry* e = copy.entry(item.value._ivalue().get()))
        return describe_module(s, item.value, *e, {});
    }
    return container_record(path);  // not in the copy
  });
}

/// Runs `model` on `inputs` without recording (`record::Off`).
inline Traced<c10::IValue> run_plain(const torch::jit::Module& model,
                                     std::vector<c10::IValue> inputs, const TraceOptions& options) {
  ScriptModeGuard mode(model, options.mode);
  std::optional<at::NoGradGuard> no_grad;
  if (options.no_grad) no_grad.emplace();
  Traced<c10::IValue> result;
  result.output = torch::jit::Module(model).forward(std::move(inputs));
  return result;
}

/// Traces one forward of TorchScript `model` on `inputs` (see `Tracer::run`): its instrumented
/// copy from `cache` runs without graph optimization (`GraphOptimizerEnabledGuard`, this
/// thread only), so what is recorded is the model's code as written — no fusion, autodiff
/// subgraphs or constant folding — with ops inside leaf modules recorded only when
/// `observe_leaves` (`record::AtenOps`).
inline Traced<c10::IValue> trace(ScriptCache& cache, const torch::jit::Module& model,
                                 std::vector<c10::IValue> inputs, const TraceOptions& options,
                                 std::vector<CallHooks*> hooks, bool observe_leaves,
                                 const std::shared_ptr<GraphStorage>& storage = nullptr) {
  Instrumented& copy = cache.get(model, observe_leaves);
  for (const std::string& w : copy.warnings())
    if (options.on_warning) options.on_warning(w);
  if (options.mode == TrainMode::keep)
    copy.set_training(std::nullopt);
  else
    copy.set_training(options.mode == TrainMode::train);

  Recording rec(std::move(hooks), storage);
  Session& s = rec.session();
  Run run(s, copy, observe_leaves);
  std::size_t count = 0;
  for (const c10::IValue& v : inputs) for_each_tensor(v, [&count](const at::Tensor&) { ++count; });
  std::size_t index = 0;
  for (const c10::IValue& v : inputs)
    for_each_tensor(v,
                    [&](const at::Tensor& t) { run.nodes().set(t, rec.input(t, index++, count)); });

  c10::IValue out;
  {
    std::optional<at::NoGradGuard> no_grad;
    if (options.no_grad) no_grad.emplace();
    torch::jit::GraphOptimizerEnabledGuard as_written(false);
    try {
      out = copy.copy().forward(std::move(inputs));
    } catch (...) {
      register_containers(s, copy);
      run.fail(rec, model_facts(model, &copy));
    }
  }
  register_containers(s, copy);
  rec.end();
  run.remember_size();
  count = 0;
  for_each_tensor(out, [&count](const at::Tensor&) { ++count; });
  std::vector<at::Tensor> outs;
  for_each_tensor(out, [&outs](const at::Tensor& t) { outs.push_back(t); });
  const std::size_t tail = dict_tail(out);  // a dict's last value first, as torchinfo shows it
  std::rotate(outs.begin(), outs.end() - static_cast<std::ptrdiff_t>(tail), outs.end());
  index = 0;
  for (const at::Tensor& t : outs) rec.output(run.operand(t), t, index++, count);
  Traced<c10::IValue> result;
  rec.finish(result, model_facts(model, &copy));
  result.output = std::move(out);
  return result;
}

}  // namespace recorder::detail::script

namespace recorder::detail {

/// What `Tracer::run` calls for a TorchScript model (`front/front_end.hpp`).
template <>
struct FrontEnd<torch::jit::Module> {
  using Cache = script::ScriptCache;
  static Traced<c10::IValue> run_plain(Cache&, const torch::jit::Module& model,
                                       std::vector<c10::IValue> inputs,
                                       const TraceOptions& options) {
    return script::run_plain(model, std::move(inputs), options);
  }
  static constexpr auto* trace = &script::trace;
};

}  // namespace recorder::detail
