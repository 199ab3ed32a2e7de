#pragma once
/// The trace of an exported program read without running it: module calls from each node's
/// `nn_module_stack`, ops grouped by their torch-level call (`torch_fn`) as torchview draws
/// them, tensors with the shapes and dtypes the program records, parameters from its
/// signature. No libtorch.

#include <recorder/export/program.hpp>
#include <recorder/graph/display_attributes.hpp>
#include <recorder/graph/trace.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace recorder {

/// How a program is read into a trace.
struct ExportedTraceOptions {
  /// Every aten op its own node, inside leaf modules too (`recorder draw --aten-ops`); by
  /// default the aten ops of one torch-level call are one node (a subscript is one
  /// `__getitem__`) and a leaf module's are not shown, as torchview draws an eager model.
  bool aten_ops = false;
};

namespace exported {

/// The integer argument `name` of node `n` (`kernel_size`, `groups`); null when absent.
inline const std::vector<std::int64_t>* int_arg(const Node& n, std::string_view name) {
  for (const auto& [key, value] : n.ints)
    if (key == name) return &value;
  return nullptr;
}

namespace detail {

/// One module call found in the node sequence.
struct CallSpan {
  std::string key{}, path{}, type{};
  int parent = -1;                     ///< enclosing call; -1 for the root's direct children
  std::uint16_t depth = 1;             ///< the root is 0
  std::size_t first = 0, last = 0;     ///< node range [first, last]
  bool opaque = false;                 ///< a leaf module whose ops are not shown
  std::vector<std::string> inputs{};   ///< tensors read inside, made outside, in first-use order
  std::vector<std::string> outputs{};  ///< tensors made inside, read after it, in making order
};

/// What a front end reads off a program once, whether it reads it (`exported_trace`) or runs it:
/// its modules and their parameters, its module calls and the tensors crossing their borders,
/// which nodes make one op node. No libtorch.
class Plan {
 public:
  using Kind = InputSpec::Kind;

  Plan(const Program& p, const ExportedTraceOptions& o) : p_(p), o_(o) {
    for (const InputSpec& s : p_.inputs) kinds_[s.placeholder] = &s;
    index_modules();
    find_calls();
    for (const Node& n : p_.nodes)
      if (!n.stack.empty() && n.stack.front().path.empty()) {
        root_type_ = n.stack.front().type;
        break;
      }
  }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  const Program& program() const noexcept { return p_; }
  const ExportedTraceOptions& options() const noexcept { return o_; }
  const std::vector<CallSpan>& calls() const noexcept { return calls_; }
  /// The root module's Python class (`__main__.M`).
  const std::string& root_type() const noexcept { return root_type_; }
  /// Node `i` is recorded: it makes a tensor (a size computation is not).
  bool shown(std::size_t i) const { return !p_.nodes[i].outputs.empty(); }
  /// The innermost call node `i` ran in; -1 for the root (or a node not shown).
  int call_of(std::size_t i) const { return call_of_[i]; }

  /// Node `i` ran inside call `c` (or a call within it).
  bool within(std::size_t i, std::size_t c) const {
    for (int k = call_of_[i]; k >= 0; k = calls_[static_cast<std::size_t>(k)].parent)
      if (static_cast<std::size_t>(k) == c) return true;
    return false;
  }

  /// What placeholder `t` stands for; `other` when `t` is made by a node.
  Kind state_kind(std::string_view t) const {
    const auto it = kinds_.find(t);
    return it == kinds_.end() ? Kind::other : it->second->kind;
  }

  /// The end of the op node that node `i` begins: past the nodes of the same torch-level call
  /// (`torch_fn`) in the same module call; `i + 1` with `aten_ops` or without `torch_fn`.
  std::size_t group_end(std::size_t i) const {
    const Node& n = p_.nodes[i];
    std::size_t end = i + 1;
    if (!o_.aten_ops && !n.torch_fn_key.empty())
      while (end < p_.nodes.size() && call_of_[end] == call_of_[i] &&
             (p_.nodes[end].torch_fn_key == n.torch_fn_key || !shown(end)))
        ++end;
    return end;
  }

  /// The op name of the node nodes [i, group_end(i)) make, and whether it is in place (`add_`
  /// is `add`, in place).
  std::pair<std::string, bool> op_name(std::size_t i) const {
    const Node& head = p_.nodes[i];
    std::string op =
        o_.aten_ops || head.torch_fn.empty() ? op_of_target(head.target) : head.torch_fn;
    bool inplace = false;
    if (op.size() > 1 && op.back() == '_' && op.rfind("__", 0) != 0) {
      op.pop_back();
      inplace = true;
    }
    return {std::move(op), inplace};
  }

  /// Tensor `t`, made in nodes [first, end), is read after them (or returned).
  bool read_after(std::string_view t, std::size_t end) const {
    const auto it = last_read_.find(t);
    return it != last_read_.end() && it->second >= end;
  }

  /// The results of the op node of nodes [first, end): the tensors they make that are read
  /// after them, else those of the last node that makes any (a group may end in nodes that make
  /// none, such as the `_assert_tensor_metadata` before a `.to(dtype)`).
  std::vector<std::string_view> results(std::size_t first, std::size_t end) const {
    std::vector<std::string_view> out;
    for (std::size_t k = first; k < end; ++k)
      for (const std::string& t : p_.nodes[k].outputs)
        if (read_after(t, end)) out.push_back(t);
    for (std::size_t k = end; out.empty() && k > first; --k)
      for (const std::string& t : p_.nodes[k - 1].outputs) out.push_back(t);
    return out;
  }

  /// The operands of the op node of nodes [first, end): the tensors they read and do not make.
  std::vector<std::string_view> operands(std::size_t first, std::size_t end) const {
    std::set<std::string_view> made;
    for (std::size_t k = first; k < end; ++k)
      for (const std::string& t : p_.nodes[k].outputs) made.insert(t);
    std::vector<std::string_view> out;
    for (std::size_t k = first; k < end; ++k)
      for (const std::string& t : p_.nodes[k].inputs)
        if (!made.contains(t)) out.push_back(t);
    return out;
  }

  /// The user inputs that are tensors, in order.
  std::vector<const InputSpec*> user_inputs() const {
    std::vector<const InputSpec*> user;
    for (const InputSpec& s : p_.inputs)
      if (s.kind == Kind::user_input && p_.tensor(s.placeholder) != nullptr) user.push_back(&s);
    return user;
  }

  /// The record of module `path` (of Python class `type`, else the class its calls name):
  /// its own parameters, the count below it (tied ones once), children.
  ModuleInfo describe(const std::string& path, const std::string& type) const {
    ModuleInfo m;
    m.path = path;
    std::string_view full = type;
    if (const auto known = types_.find(path); full.empty() && known != types_.end())
      full = known->second;
    m.class_name = full.empty() ? std::string("Module") : short_class(full);
    const auto dot = path.rfind('.');
    m.name = path.empty() ? m.class_name : dot == std::string::npos ? path : path.substr(dot + 1);
    if (const auto own = own_params_.find(path); own != own_params_.end()) m.params = own->second;
    const std::string prefix = path + '.';
    std::set<std::string_view> counted;  // tied parameters share a storage: counted once
    for (const auto& [owner, params] : own_params_) {
      if (!path.empty() && owner != path && owner.rfind(prefix, 0) != 0) continue;
      const std::vector<std::string>& keys = storage_.at(owner);
      for (std::size_t k = 0; k < params.size(); ++k) {
        if (!counted.insert(keys[k]).second) continue;
        m.param_count += params[k].numel;
        if (params[k].trainable) m.trainable_count += params[k].numel;
      }
    }
    m.has_children = has_children(path);
    m.leaf = !m.has_children;
    return m;
  }

  /// The bytes of every parameter of the program, tied ones once (torchinfo's `Params size`).
  std::uint64_t param_bytes() const {
    std::set<std::string_view> counted;
    std::uint64_t n = 0;
    for (const auto& [owner, params] : own_params_) {
      const std::vector<std::string>& keys = storage_.at(owner);
      for (std::size_t k = 0; k < params.size(); ++k)
        if (counted.insert(keys[k]).second) n += params[k].numel * params[k].element_bytes;
    }
    return n;
  }

  /// The attributes a convolution or pooling row shows, from its first op.
  void add_attributes(Graph& g, ModuleId m, const CallSpan& c) const {
    const ModuleInfo& info = g.module(m);
    const DisplayAttributes shown = display_attributes(info.class_name);
    if (shown == DisplayAttributes::none || !info.attributes.empty()) return;
    const Node& n = p_.nodes[c.first];
    if (shown == DisplayAttributes::pooling) {
      if (const auto* k = int_arg(n, "kernel_size")) {
        ModuleInfo copy = info;
        append_display_attributes(copy, shown, *k);
        for (auto& [key, value] : copy.attributes) g.add_attribute(m, key, value);
      }
      return;
    }
    if (n.inputs.size() < 2) return;
    const TensorMeta* w = p_.tensor(n.inputs[1]);
    if (w == nullptr || w->sizes.size() < 3) return;
    std::optional<std::int64_t> groups;  // the op's argument, else its default: channels / w[1]
    if (const auto* gr = int_arg(n, "groups"); gr != nullptr && !gr->empty()) {
      groups = gr->front();
    } else if (const TensorMeta* x = p_.tensor(n.inputs[0]);
               x != nullptr && x->sizes.size() >= 2 && w->sizes[1] > 0 &&
               info.class_name.find("Transpose") == std::string::npos) {
      const std::int64_t channels =
          x->sizes.size() + 1 == w->sizes.size() ? x->sizes[0] : x->sizes[1];
      groups = channels / w->sizes[1];
    }
    ModuleInfo copy;
    append_display_attributes(
        copy, shown, std::vector<std::int64_t>(w->sizes.begin() + 2, w->sizes.end()), groups);
    for (auto& [key, value] : copy.attributes) g.add_attribute(m, key, value);
  }

  /// The record of a container row's module no forward called: a `ModuleList` when its
  /// children are numbered.
  ModuleInfo describe_container(std::string_view path) const {
    ModuleInfo m = describe(std::string(path), {});
    bool indexed = true;
    const std::string prefix = std::string(path) + '.';
    for (const std::string& q : paths_) {
      if (q.rfind(prefix, 0) != 0) continue;
      const std::string_view rest = std::string_view(q).substr(prefix.size());
      const std::string_view head = rest.substr(0, rest.find('.'));
      indexed = indexed && !head.empty() && std::all_of(head.begin(), head.end(), [](char ch) {
                  return ch >= '0' && ch <= '9';
                });
    }
    if (indexed) m.class_name = "ModuleList";
    return m;
  }

 private:
  /// Every module path the program names, and the parameters registered on each.
  void index_modules() {
    auto add_path = [this](const std::string& path) {
      for (std::size_t dot = path.find('.'); dot != std::string::npos;
           dot = path.find('.', dot + 1))
        paths_.insert(path.substr(0, dot));
      paths_.insert(path);
    };
    for (const std::string& path : p_.module_paths) add_path(path);
    for (const Node& n : p_.nodes)
      for (const Frame& f : n.stack) {
        add_path(f.path);
        if (!f.type.empty()) types_.emplace(f.path, f.type);
      }
    for (const InputSpec& s : p_.inputs) {
      if (s.kind != Kind::parameter) continue;
      const auto dot = s.target.rfind('.');
      const std::string owner = dot == std::string::npos ? std::string() : s.target.substr(0, dot);
      const TensorMeta* meta = p_.tensor(s.placeholder);
      ParamInfo info;
      info.name = dot == std::string::npos ? s.target : s.target.substr(dot + 1);
      const auto file = p_.weights.find(s.target);
      storage_[owner].push_back(file == p_.weights.end() ? "p:" + s.target : file->second.file);
      info.id = std::hash<std::string>{}(storage_[owner].back()) | 1u;  // tied ones share it
      if (meta != nullptr) {
        info.element_bytes = static_cast<std::uint8_t>(recorder::detail::dtype_bytes(meta->dtype));
        info.shape = meta->sizes;
        info.numel = 1;
        for (std::int64_t d : meta->sizes)
          info.numel *= static_cast<std::uint64_t>(std::max<std::int64_t>(d, 0));
        info.trainable = meta->requires_grad;
      }
      own_params_[owner].push_back(info);
      add_path(owner);
    }
  }

  bool has_children(std::string_view path) const {
    const std::string prefix = path.empty() ? std::string() : std::string(path) + '.';
    const auto it = paths_.upper_bound(std::string(path));
    return it != paths_.end() && it->size() > prefix.size() && it->rfind(prefix, 0) == 0 &&
           (!path.empty() || !it->empty());
  }

  /// The module calls in node order, with the tensors that cross their borders.
  void find_calls() {
    call_of_.assign(p_.nodes.size(), -1);
    std::vector<int> open;  // the calls enclosing the current node, outermost first
    for (std::size_t i = 0; i < p_.nodes.size(); ++i) {
      const Node& n = p_.nodes[i];
      if (!shown(i)) continue;
      const std::size_t skip = !n.stack.empty() && n.stack.front().path.empty() ? 1 : 0;
      std::size_t depth = 0;  // frames of `n` already open
      while (depth < open.size() && depth + skip < n.stack.size() &&
             calls_[static_cast<std::size_t>(open[depth])].key == n.stack[depth + skip].key)
        ++depth;
      open.resize(depth);
      for (std::size_t f = depth + skip; f < n.stack.size(); ++f) {
        CallSpan c;
        c.key = n.stack[f].key;
        c.path = n.stack[f].path;
        c.type = n.stack[f].type;
        c.parent = open.empty() ? -1 : open.back();
        c.depth = static_cast<std::uint16_t>(open.size() + 1);
        c.first = i;
        c.opaque = !o_.aten_ops && !has_children(c.path);
        open.push_back(static_cast<int>(calls_.size()));
        calls_.push_back(std::move(c));
      }
      for (int c : open) calls_[static_cast<std::size_t>(c)].last = i;
      call_of_[i] = open.empty() ? -1 : open.back();
    }
    // Where each tensor is made (node index) and last read.
    std::unordered_map<std::string_view, std::size_t> made;
    for (std::size_t i = 0; i < p_.nodes.size(); ++i) {
      for (const std::string& t : p_.nodes[i].outputs) made.emplace(t, i);
      for (const std::string& t : p_.nodes[i].inputs) last_read_[t] = i;
    }
    for (const std::string& t : p_.outputs) last_read_[t] = p_.nodes.size();
    const auto& last_read = last_read_;
    for (CallSpan& c : calls_) {
      std::set<std::string_view> seen;
      const std::size_t ci = static_cast<std::size_t>(&c - calls_.data());
      for (std::size_t i = c.first; i <= c.last; ++i) {
        if (!within(i, ci)) continue;
        for (const std::string& t : p_.nodes[i].inputs) {
          const auto m = made.find(t);
          const bool outside = m == made.end() || m->second < c.first || !within(m->second, ci);
          const bool state = m == made.end() && state_kind(t) != Kind::user_input;
          if (!outside || state) continue;  // parameters, buffers and constants are not inputs
          if (seen.insert(t).second) c.inputs.push_back(t);
        }
        for (const std::string& t : p_.nodes[i].outputs) {
          const auto r = last_read.find(t);
          if (r != last_read.end() && r->second > c.last) c.outputs.push_back(t);
        }
      }
    }
  }

  const Program& p_;
  ExportedTraceOptions o_;
  std::string root_type_;
  std::map<std::string_view, const InputSpec*, std::less<>> kinds_;
  std::set<std::string> paths_;
  std::map<std::string, std::string> types_;
  std::map<std::string, std::vector<ParamInfo>> own_params_;
  std::map<std::string, std::vector<std::string>> storage_;  ///< per param of own_params_: its file
  std::vector<CallSpan> calls_;
  std::vector<int> call_of_;  ///< per node: its innermost call, -1 for the root
  std::unordered_map<std::string_view, std::size_t> last_read_;  ///< tensor -> last reader
};

/// Builds the trace of a plan's program from its metadata; see `exported_trace`.
class StaticBuilder {
 public:
  explicit StaticBuilder(const Plan& plan) : plan_(plan), p_(plan.program()) {}

  Trace build() {
    Trace t;
    build_graph(t);
    return t;
  }

 private:
  using Kind = InputSpec::Kind;

  /// The node of tensor `t` read at the current place (a parameter's node is made once; a
  /// buffer or constant gets one per read, as the other front ends record them).
  NodeId operand(Graph& g, std::string_view t, NodeId parent, std::uint16_t depth) {
    if (const auto it = nodes_.find(t); it != nodes_.end()) return it->second;
    const Kind kind = plan_.state_kind(t);
    const NodeKind nk = kind == Kind::parameter ? NodeKind::parameter : NodeKind::constant;
    const NodeId id = add_tensor(g, nk, t, parent, depth, {});
    if (kind == Kind::parameter) nodes_.emplace(std::string(t), id);
    return id;
  }

  NodeId add_tensor(Graph& g, NodeKind kind, std::string_view t, NodeId parent, std::uint16_t depth,
                    NodeId producer, std::string_view name = {}) {
    const TensorMeta* meta = p_.tensor(t);
    if (meta == nullptr)
      return g.add_tensor(kind, parent, depth, Shape{}, "Undefined", "none", producer, name);
    const std::span<const std::int64_t> sizes(meta->sizes);
    const bool named = std::ranges::any_of(meta->symbols, [](const auto& s) { return !s.empty(); });
    return g.add_tensor(kind, parent, depth,
                        named ? Shape(sizes, dim_names(g, *meta)) : Shape(sizes), meta->dtype,
                        meta->device, producer, name);
  }

  /// The names of `meta`'s sizes (its symbols, interned in `g` once each), valid until the next
  /// call: `Graph::add_tensor` copies them.
  const std::string_view* dim_names(Graph& g, const TensorMeta& meta) {
    names_.clear();
    for (const std::string& symbol : meta.symbols) {
      if (symbol.empty()) {
        names_.emplace_back();
        continue;
      }
      auto it = symbols_.find(symbol);
      if (it == symbols_.end()) it = symbols_.emplace(symbol, g.intern(symbol)).first;
      names_.push_back(it->second);
    }
    return names_.data();
  }

  ModuleId module_id(Graph& g, const std::string& path, const std::string& type) {
    if (const auto it = modules_.find(path); it != modules_.end()) return it->second;
    const ModuleId id = g.add_module(plan_.describe(path, type));
    modules_.emplace(path, id);
    return id;
  }

  void build_graph(Trace& t) {
    Graph& g = t.graph;
    const std::vector<CallSpan>& calls = plan_.calls();
    std::vector<NodeId> inputs;
    const std::vector<const InputSpec*> user = plan_.user_inputs();
    for (std::size_t i = 0; i < user.size(); ++i) {
      const std::string name =
          user.size() == 1 ? std::string("input") : "input-" + std::to_string(i);
      const NodeId id =
          add_tensor(g, NodeKind::input, user[i]->placeholder, {}, 0, {}, g.intern(name));
      nodes_.emplace(user[i]->placeholder, id);
      inputs.push_back(id);
    }
    const ModuleId root_module = module_id(g, "", plan_.root_type());
    const NodeId root = g.add_module_call(root_module, {}, 0, inputs);

    std::vector<std::pair<std::size_t, NodeId>> open;  // call index, its node
    std::size_t next_call = 0;
    auto parent_now = [&] { return open.empty() ? root : open.back().second; };
    auto depth_now = [&] { return static_cast<std::uint16_t>(open.size() + 1); };
    auto close = [&] {
      const CallSpan& span = calls[open.back().first];
      const NodeId call = open.back().second;
      open.pop_back();
      std::vector<NodeId> outs;
      for (const std::string& out : span.outputs) {
        if (span.opaque) {
          const NodeId id = add_tensor(g, NodeKind::tensor, out, parent_now(), depth_now(), call);
          g.add_edge(call, id);
          nodes_[out] = id;
        }
        if (const auto it = nodes_.find(out); it != nodes_.end()) outs.push_back(it->second);
      }
      g.set_call_outputs(call, outs);
    };
    for (std::size_t i = 0; i < p_.nodes.size();) {
      if (!plan_.shown(i)) {
        ++i;
        continue;
      }
      // Close the calls node `i` is not in, open the ones it begins.
      while (!open.empty() && !plan_.within(i, open.back().first)) close();
      while (next_call < calls.size() && calls[next_call].first == i) {
        const CallSpan& c = calls[next_call];
        std::vector<NodeId> in;
        for (const std::string& x : c.inputs)
          in.push_back(operand(g, x, parent_now(), depth_now()));
        const ModuleId m = module_id(g, c.path, c.type);
        const NodeId call = g.add_module_call(m, parent_now(), depth_now(), in);
        if (c.opaque)
          for (NodeId x : in) g.add_edge(x, call);
        plan_.add_attributes(g, m, c);
        open.emplace_back(next_call, call);
        ++next_call;
      }
      if (!open.empty() && calls[open.back().first].opaque) {
        ++i;  // inside a leaf module: its ops are not shown
        continue;
      }
      // One function node for the aten ops of one torch-level call.
      const std::size_t end = plan_.group_end(i);
      add_function(g, i, end, parent_now(), depth_now());
      i = end;
    }
    while (!open.empty()) close();
    std::vector<NodeId> outs;
    std::vector<std::string_view> out_names;
    for (const std::string& name : p_.outputs) {
      const auto it = nodes_.find(name);
      if (it == nodes_.end()) continue;
      outs.push_back(it->second);
      out_names.push_back(name);
    }
    g.set_call_outputs(root, outs);
    for (std::size_t k = 0; k < outs.size(); ++k) {
      const std::string name =
          outs.size() == 1 ? std::string("output") : "output-" + std::to_string(k);
      const NodeId o = add_tensor(g, NodeKind::output, out_names[k], {}, 0, {}, g.intern(name));
      g.add_edge(outs[k], o);
    }
    register_containers(g,
                        [this](std::string_view path) { return plan_.describe_container(path); });
    t.root = root;
    t.model_name = g.module(root_module).class_name;
    const ModuleInfo all = plan_.describe("", plan_.root_type());  // every parameter, tied once
    t.total_params = all.param_count;
    t.trainable_params = all.trainable_count;
    t.param_bytes = plan_.param_bytes();
    // Read without libtorch: the PyTorch that exported it ("2.13.0+cpu" -> "2.13").
    const std::string& v = p_.torch_version;
    t.torch_version = v.substr(0, v.find('.', v.find('.') + 1));
  }

  /// The function node of nodes [first, end).
  void add_function(Graph& g, std::size_t first, std::size_t end, NodeId parent,
                    std::uint16_t depth) {
    const auto [op, inplace] = plan_.op_name(first);
    std::vector<NodeId> in;
    for (std::string_view t : plan_.operands(first, end))
      in.push_back(operand(g, t, parent, depth));
    const NodeId fn = g.add_function(g.intern(op), parent, depth, inplace);
    for (NodeId x : in) g.add_edge(x, fn);
    for (std::string_view r : plan_.results(first, end)) {
      const NodeId id = add_tensor(g, NodeKind::tensor, r, parent, depth, fn);
      g.add_edge(fn, id);
      nodes_[std::string(r)] = id;
    }
  }

  struct Hash : std::hash<std::string_view> {
    using is_transparent = void;
  };
  const Plan& plan_;
  const Program& p_;
  std::unordered_map<std::string, NodeId, Hash, std::equal_to<>> nodes_;  ///< tensor -> node
  std::map<std::string, ModuleId> modules_;
  std::map<std::string, std::string_view, std::less<>> symbols_;  ///< symbol -> its interned name
  std::vector<std::string_view> names_;                           ///< scratch of `dim_names`
};

}  // namespace detail

/// The trace of program `p` read without running it: module calls with their paths and classes
/// (a reused module's calls told apart), depth-index labels, op nodes, tensors with the dtype
/// and shape the program records (a dynamic size shows its name, `[s0, 8]`, and counts as the
/// size it was exported with), parameters from the signature (tied ones once), edges. `Trace::total_params` counts every parameter the
/// program lifts.
inline Trace exported_trace(const Program& p, const ExportedTraceOptions& options = {}) {
  const detail::Plan plan(p, options);
  return detail::StaticBuilder(plan).build();
}

}  // namespace exported

}  // namespace recorder
