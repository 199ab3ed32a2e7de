#pragma once
/// The fuzzer's independent accounts of one forward, and the checks of every render of its
/// trace. Each check appends what disagreed to a list of problems, tagged by account.
///
/// (1) outputs:  the traced forward's outputs equal the plain forward's, bit for bit.
/// (2) aten ops: the function nodes recorded equal, in order, the outermost aten ops an
///     `at::RecordFunction` observer of this file sees during the traced forward, after the
///     name mapping of `observed_as_recorded` and the subscripts folded by `fold_subscripts`
///     (documented there).
/// (3) calls:    the module calls recorded equal the calls `expected_calls` derives from the
///     spec alone (the path, class, call index and depth of each, in call order).
/// (4) renders:  DOT parses with Graphviz's own parser (cgraph) with the visible graph's node
///     and edge counts, and `dot -Tsvg` lays it out; JSON, JsonView and Model Explorer JSON
///     parse; Mermaid and HTML render; the summary's parameter column sums to its total; every
///     call resolves back from its path, its depth-index label and its position.

#include "net.hpp"
#include "spec.hpp"

#include <recorder/recorder.hpp>
#include <recorder/render/html.hpp>
#include <recorder/render/model_explorer.hpp>
#include <recorder/render/svg.hpp>

#include <ATen/record_function.h>
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <graphviz/cgraph.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fuzz {

struct Problems {
  std::vector<std::string> items;
  void add(std::string account, std::string what) { items.push_back(account + ": " + what); }
  bool empty() const noexcept { return items.empty(); }
  /// The account of the first problem ("outputs", "aten ops", ...), to shrink toward the same.
  std::string first_account() const {
    return items.empty() ? std::string() : items.front().substr(0, items.front().find(':'));
  }
};

// ---- (1) outputs -----------------------------------------------------------------------------

inline void flatten_outputs(const at::Tensor& t, std::vector<at::Tensor>& out) { out.push_back(t); }
template <class... E>
void flatten_outputs(const std::tuple<E...>& t, std::vector<at::Tensor>& out) {
  std::apply([&out](const auto&... e) { (flatten_outputs(e, out), ...); }, t);
}

/// True when `a` and `b` have the same dtype, shape and bytes (NaNs compare by their bits).
inline bool bitwise_equal(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const at::Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

inline void compare_outputs(const std::vector<at::Tensor>& plain,
                            const std::vector<at::Tensor>& traced, Problems& p) {
  if (plain.size() != traced.size()) {
    p.add("outputs", std::to_string(plain.size()) + " plain outputs, " +
                         std::to_string(traced.size()) + " traced");
    return;
  }
  for (std::size_t i = 0; i < plain.size(); ++i)
    if (!bitwise_equal(plain[i], traced[i]))
      p.add("outputs", "output " + std::to_string(i) + " differs: plain " +
                           recorder::to_string(recorder::Shape(plain[i].sizes())) + ", traced " +
                           recorder::to_string(recorder::Shape(traced[i].sizes())));
}

// ---- (2) aten ops ------------------------------------------------------------------------------

/// The outermost aten ops dispatched on this thread while `active`, each as its schema name
/// and the shapes of the tensors it returned ("aten::add_ [6, 16]"), ops whose schema returns
/// no tensor left out (the recorder records tensors). An observer of its own: it shares no code
/// with the recorder's.
class AtenLog {
 public:
  AtenLog() {
    handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(&AtenLog::start, &AtenLog::end)
                                             .needsInputs(false)
                                             .needsOutputs(true)
                                             .scopes({at::RecordScope::FUNCTION}));
    current() = this;
  }
  ~AtenLog() {
    at::removeCallback(handle_);
    current() = nullptr;
  }
  AtenLog(const AtenLog&) = delete;
  AtenLog& operator=(const AtenLog&) = delete;

  struct Event {
    std::string name;
    std::string shapes;  ///< " [6, 16] [6, 1]": every tensor returned, lists flattened
  };
  std::vector<Event> ops;
  bool active = false;

 private:
  static AtenLog*& current() {
    thread_local AtenLog* log = nullptr;
    return log;
  }
  static bool returns_tensors(const at::RecordFunction& fn) {
    auto schema = fn.operator_schema();
    if (!schema) return true;
    for (const c10::Argument& r : schema->returns()) {
      const c10::TypePtr& t = r.type();
      if (t->isSubtypeOf(*c10::TensorType::get()) ||
          t->isSubtypeOf(*c10::OptionalType::ofTensor()) ||
          t->isSubtypeOf(*c10::ListType::ofTensors()))
        return true;
    }
    return false;
  }
  static std::unique_ptr<at::ObserverContext> start(const at::RecordFunction& fn) {
    AtenLog* log = current();
    if (log == nullptr || !log->active) return nullptr;
    if (log->depth_++ == 0 && returns_tensors(fn)) {
      log->ops.push_back({fn.name(), {}});
      log->open_ = true;
    }
    return nullptr;
  }
  static void end(const at::RecordFunction& fn, at::ObserverContext*) {
    AtenLog* log = current();
    if (log == nullptr || !log->active || log->depth_ == 0) return;
    if (--log->depth_ > 0 || !log->open_) return;
    log->open_ = false;
    std::string& shapes = log->ops.back().shapes;
    auto add = [&shapes](const at::Tensor& t) {
      if (t.defined()) shapes += " " + recorder::to_string(recorder::Shape(t.sizes()));
    };
    for (const c10::IValue& v : fn.outputs()) {
      if (v.isTensor()) {
        add(v.toTensor());
      } else if (v.isTensorList()) {
        for (const at::Tensor& t : v.toTensorVector()) add(t);
      }
    }
  }

  at::CallbackHandle handle_ = 0;
  int depth_ = 0;
  bool open_ = false;
};

/// The name mapping between the observer's events and the recorder's function nodes:
/// - the recorder names an op without "aten::" and an in-place one without its '_' (flagged
///   in place instead): `aten::relu_` is `relu_` here;
/// - `scalar - x` and `scalar / x` are, in libtorch as in the recorder, `empty_like`, `fill_`
///   and `sub_` (`div_`) on the tensor: three events for the recorder's one `sub` (`div`) node;
/// - `x.contiguous()` of a contiguous `x` is recorded (the model called it; torchview shows it
///   too) but dispatches nothing: the fuzzer's models call it only on non-contiguous tensors.
/// Each entry is "name shapes": the op and the shapes of the tensors it returned.
inline std::vector<std::string> observed_as_recorded(const std::vector<AtenLog::Event>& events) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < events.size(); ++i) {
    std::string_view e = events[i].name;
    if (e == "aten::empty_like" && i + 2 < events.size() && events[i + 1].name == "aten::fill_" &&
        (events[i + 2].name == "aten::sub_" || events[i + 2].name == "aten::div_")) {
      out.push_back((events[i + 2].name == "aten::sub_" ? "sub" : "div") + events[i + 2].shapes);
      i += 2;
      continue;
    }
    if (e.substr(0, 6) == "aten::") e.remove_prefix(6);
    out.push_back(std::string(e) + events[i].shapes);
  }
  return out;
}

/// The function nodes of `g`, in the order they were recorded, each with the shapes of the
/// tensor nodes it produced: "add [6, 16]", "relu_ [6, 16]", "max [6, 1] [6, 1]".
inline std::vector<std::string> recorded_functions(const recorder::Graph& g) {
  std::vector<std::string> out;
  std::vector<std::size_t> index(g.size(), 0);
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const recorder::NodeId id{i};
    const recorder::NodeKind kind = g.kind(id);
    if (kind == recorder::NodeKind::function) {
      index[i] = out.size();
      out.emplace_back(g.label(id));
      if (g.node(id).inplace) out.back() += '_';
    } else if (recorder::is_tensor_kind(kind) && g.tensor(id).producer.valid() &&
               g.kind(g.tensor(id).producer) == recorder::NodeKind::function) {
      out[index[g.tensor(id).producer.value]] += ' ' + recorder::to_string(g.shape(id));
    }
  }
  return out;
}

inline std::string first_difference(const std::vector<std::string>& a,
                                    const std::vector<std::string>& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  auto around = [i](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t k = i >= 2 ? i - 2 : 0; k < v.size() && k < i + 3; ++k)
      s += (k == i ? "[" + v[k] + "]" : v[k]) + ' ';
    return s.empty() ? std::string("(end)") : s;
  };
  return "at op " + std::to_string(i) + ": recorded " + around(a) + "| observed " + around(b) +
         "(" + std::to_string(a.size()) + " recorded, " + std::to_string(b.size()) + " observed)";
}

/// `observed` with each run of indexing ops (`slice`, `select`, `index`, `unsqueeze`) that a
/// recorded `__getitem__` stands for folded into it: the TorchScript front end reports the ops
/// of one subscript expression (`x[:, 0]`: `slice`, `select`) as one `__getitem__` returning
/// what the last of them returned. A run folds at the recorded `__getitem__`'s position, up to
/// the first of its ops that returned the recorded shapes.
inline std::vector<std::string> fold_subscripts(const std::vector<std::string>& recorded,
                                                const std::vector<std::string>& observed) {
  const auto split = [](const std::string& e) {
    const auto space = e.find(' ');
    return std::pair{e.substr(0, space), space == std::string::npos ? "" : e.substr(space)};
  };
  const auto indexing = [&](const std::string& e) {
    const std::string name = split(e).first;
    return name == "slice" || name == "select" || name == "index" || name == "unsqueeze";
  };
  std::vector<std::string> out;
  std::size_t j = 0;
  for (std::size_t i = 0; i < recorded.size() && j < observed.size(); ++i) {
    const auto [name, shapes] = split(recorded[i]);
    if (name != "__getitem__" || !indexing(observed[j])) {
      out.push_back(observed[j++]);
      continue;
    }
    std::size_t k = j;
    while (k < observed.size() && indexing(observed[k]) && split(observed[k]).second != shapes) ++k;
    if (k == observed.size() || !indexing(observed[k])) {  // no run ends with those shapes
      out.push_back(observed[j++]);
      continue;
    }
    out.push_back(recorded[i]);
    j = k + 1;
  }
  out.insert(out.end(), observed.begin() + static_cast<std::ptrdiff_t>(j), observed.end());
  return out;
}

inline void compare_ops(const recorder::Graph& g, const std::vector<AtenLog::Event>& events,
                        Problems& p) {
  const auto recorded = recorded_functions(g);
  const auto observed = fold_subscripts(recorded, observed_as_recorded(events));
  if (recorded != observed) p.add("aten ops", first_difference(recorded, observed));
}

// ---- (3) calls ---------------------------------------------------------------------------------

/// "depth path Class #call" of every module call of a model built from `m`, in call order,
/// derived from the spec alone (as `FuzzNet::run` calls its children).
class ExpectedCalls {
 public:
  std::vector<std::string> of(const ModelSpec& m) {
    out_.clear();
    counts_.clear();
    add(0, "", "FuzzNet");
    net(m.root, "", 1);
    return out_;
  }

 private:
  static std::string leaf_class(Leaf l) {
    static constexpr const char* names[] = {
        "Linear",      "Linear",    "Conv2d",   "BatchNorm2d",
        "BatchNorm1d", "LSTM",      "GRU",      "MultiheadAttention",
        "Embedding",   "LayerNorm", "Dropout",  "Identity",
        "Flatten",     "ReLU",      "GELU",     "Tanh",
        "Softmax",     "AvgPool2d", "MaxPool2d"};
    static_assert(std::size(names) == static_cast<std::size_t>(Leaf::count_));
    return names[static_cast<std::size_t>(l)];
  }
  static std::string join(const std::string& a, const std::string& b) {
    return a.empty() ? b : a + "." + b;
  }
  void add(int depth, const std::string& path, const std::string& cls) {
    const std::uint32_t k = counts_[path]++;
    out_.push_back(std::to_string(depth) + ' ' + (path.empty() ? "<root>" : path) + ' ' + cls +
                   " #" + std::to_string(k));
  }
  void net(const NetSpec& n, const std::string& path, int depth) {
    for (const Step& s : n.steps) {
      if (s.kind == Step::Kind::op || n.children.empty()) continue;
      const std::size_t i = s.what % n.children.size();
      const ChildSpec& c = n.children[i];
      const std::string p = join(path, "c" + std::to_string(i));
      switch (c.kind) {
        case ChildSpec::Kind::leaf:
          add(depth, p, leaf_class(c.leaf));
          break;
        case ChildSpec::Kind::net:
          add(depth, p, "FuzzNet");
          net(c.nets.front(), p, depth + 1);
          break;
        case ChildSpec::Kind::sequential:
          add(depth, p, "Sequential");
          for (std::size_t j = 0; j < c.nets.size(); ++j) {
            add(depth + 1, join(p, std::to_string(j)), "FuzzNet");
            net(c.nets[j], join(p, std::to_string(j)), depth + 2);
          }
          break;
        case ChildSpec::Kind::module_list: {
          const std::size_t j = s.element % c.nets.size();
          add(depth, join(p, std::to_string(j)), "FuzzNet");
          net(c.nets[j], join(p, std::to_string(j)), depth + 1);
          break;
        }
        case ChildSpec::Kind::torch_sequential:
          add(depth, p, "Sequential");
          for (std::size_t j = 0; j < c.leaves.size(); ++j)
            add(depth + 1, join(p, std::to_string(j)), leaf_class(c.leaves[j]));
          break;
      }
    }
  }

  std::vector<std::string> out_;
  std::map<std::string, std::uint32_t> counts_;
};

/// The recorded module calls as `ExpectedCalls` spells them, each class as `class_name` names it
/// (the Python legs' `FuzzNet_<k>` as `FuzzNet`). Calls the recorder inferred inside a leaf (its
/// submodules, seen through their parameters) are not calls the model made: left out.
inline std::vector<std::string> recorded_calls(
    const recorder::Graph& g, std::string (*class_name)(const std::string&) = nullptr) {
  std::vector<std::string> out;
  for (recorder::NodeId c : recorder::views::module_calls(g)) {
    if (g.node(c).inferred) continue;
    const auto& m = g.module_of(c);
    out.push_back(std::to_string(g.node(c).depth) + ' ' +
                  (m.path.empty() ? std::string("<root>") : m.path) + ' ' +
                  (class_name ? class_name(m.class_name) : m.class_name) + " #" +
                  std::to_string(g.call(c).call_index));
  }
  return out;
}

/// Compares the calls; returns the paths of the modules the spec calls ("<root>" for the root).
inline std::set<std::string> compare_calls(const recorder::Graph& g, const ModelSpec& m,
                                           Problems& p) {
  const auto expected = ExpectedCalls{}.of(m);
  std::set<std::string> paths;
  for (const auto& call : expected) {
    const auto space = call.find(' ');
    paths.insert(call.substr(space + 1, call.find(' ', space + 1) - space - 1));
  }
  const auto recorded = recorded_calls(g);
  if (recorded != expected) p.add("calls", first_difference(recorded, expected));
  return paths;
}

// ---- (4) renders -------------------------------------------------------------------------------

inline std::string& cgraph_error() {
  static std::string message;
  return message;
}

/// Parses `dot` with Graphviz's cgraph; checks its node and edge counts against the visible
/// graph's (a non-strict DOT writes each merged edge `count` times).
inline void check_dot(const std::string& dot, const recorder::VisibleGraph& vg, bool strict,
                      const std::string& what, Problems& p) {
  const std::size_t nodes = vg.nodes.size();
  std::size_t edges = 0;
  for (const auto& edge : vg.edges) edges += strict ? 1 : edge.count;
  cgraph_error().clear();
  agseterrf([](char* message) -> int {
    cgraph_error() += message;
    return 0;
  });
  Agraph_t* g = agmemread(dot.c_str());
  if (g == nullptr) {
    p.add("render", what + ": Graphviz does not parse the DOT: " + cgraph_error());
    return;
  }
  const auto n = static_cast<std::size_t>(agnnodes(g));
  const auto e = static_cast<std::size_t>(agnedges(g));
  agclose(g);
  if (n != nodes || e != edges)
    p.add("render", what + ": DOT has " + std::to_string(n) + " nodes and " + std::to_string(e) +
                        " edges; the visible graph " + std::to_string(nodes) + " and " +
                        std::to_string(edges));
}

inline void check_json(const std::string& text, const std::string& what, Problems& p) {
  try {
    std::istringstream in(text);
    boost::property_tree::ptree tree;
    boost::property_tree::read_json(in, tree);
    if (tree.empty()) p.add("render", what + ": an empty JSON document");
  } catch (const std::exception& e) {
    p.add("render", what + ": the JSON does not parse: " + e.what());
  }
}

/// The number in a summary cell ("1,234"), or nothing ("--", "(recursive)").
inline std::optional<std::uint64_t> cell_number(const std::string& cell) {
  std::uint64_t v = 0;
  bool digits = false;
  for (char ch : cell) {
    if (ch == ',') continue;
    if (ch < '0' || ch > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(ch - '0');
    digits = true;
  }
  return digits ? std::optional<std::uint64_t>(v) : std::nullopt;
}

/// The parameters of the modules a model built from `m` calls, by the torch model's own
/// registry (`named_modules`), each module's own parameters once.
inline std::uint64_t called_params(torch::nn::Module& model, const std::set<std::string>& paths,
                                   bool leaves) {
  std::uint64_t n = 0;
  for (const auto& item : model.named_modules()) {
    const std::string path = item.key().empty() ? "<root>" : item.key();
    if (!paths.count(path)) continue;
    torch::nn::Module* module = item.value().get();
    const bool leaf = dynamic_cast<FuzzNetImpl*>(module) == nullptr &&
                      dynamic_cast<torch::nn::SequentialImpl*>(module) == nullptr &&
                      dynamic_cast<recorder::SequentialImpl<FuzzNet>*>(module) == nullptr &&
                      dynamic_cast<recorder::ModuleListImpl<FuzzNet>*>(module) == nullptr;
    if (leaf != leaves) continue;
    for (const auto& param : item.value()->named_parameters(/*recurse=*/leaf))
      n += static_cast<std::uint64_t>(param.value().numel());
  }
  return n;
}

/// The summary: totals agree with the model's own count, the parameter column of the leaf
/// rows sums to the parameters of the leaves the model called (by the torch model's registry),
/// and the text's "Total params" line says the total.
inline void check_summary(const recorder::Trace& t, torch::nn::Module& model,
                          const std::set<std::string>& called, Problems& p) {
  std::uint64_t model_params = 0;
  for (const auto& param : model.parameters())
    model_params += static_cast<std::uint64_t>(param.numel());
  if (t.total_params != model_params)
    p.add("summary", "the trace counts " + std::to_string(t.total_params) +
                         " parameters, the model has " + std::to_string(model_params));
  recorder::SummaryOptions o;
  o.depth = 1000;
  const recorder::SummaryTable table = recorder::summarize(t, o);
  if (table.total_params != t.total_params)
    p.add("summary", "the table's total " + std::to_string(table.total_params) +
                         " is not the trace's " + std::to_string(t.total_params));
  // Each module's parameters are on its first call's row (later calls say "(recursive)").
  std::uint64_t sum = 0;
  for (const auto& row : table.rows) {
    if (!row.call.valid()) continue;  // a container's row (a ModuleList never called)
    const auto& m = *row.module;
    if (auto v = cell_number(row.cells.at(1)); v && m.leaf) sum += *v;
  }
  const std::uint64_t expected = called_params(model, called, /*leaves=*/true);
  if (sum != expected)
    p.add("summary", "the leaf rows' parameter column sums to " + std::to_string(sum) +
                         ", the leaves called hold " + std::to_string(expected));
  const std::string text = recorder::summary(t, o);
  std::string spelled = std::to_string(model_params);
  for (int i = static_cast<int>(spelled.size()) - 3; i > 0; i -= 3)
    spelled.insert(static_cast<std::size_t>(i), ",");
  if (text.find("Total params: " + spelled + "\n") == std::string::npos)
    p.add("summary", "no line 'Total params: " + spelled + "'");
}

inline void check_addresses(const recorder::Graph& g, Problems& p) {
  std::size_t position = 0;
  for (recorder::NodeId c : recorder::views::module_calls(g)) {
    const bool below_root = g.node(c).parent.valid();
    const std::string path = recorder::path_address(g, c);
    const std::string label = recorder::depth_index_label(g, c);
    try {
      if (recorder::resolve_one(g, path) != c) p.add("address", "'" + path + "' is another call");
      if (recorder::resolve_one(g, label) != c)
        p.add("address", "'" + label + "' is another call than " + path);
      if (below_root) {
        const auto found = recorder::resolve(g, recorder::by_index(position++));
        if (found.size() != 1 || found.front() != c)
          p.add("address", "by_index(" + std::to_string(position - 1) + ") is not " + path);
      }
    } catch (const std::exception& e) {
      p.add("address", path + " (" + label + "): " + e.what());
    }
  }
}

inline void check_renders(const recorder::Trace& t, bool svg, Problems& p) {
  using namespace recorder;
  const RenderOptions option_sets[] = {
      {},
      {.depth = std::nullopt, .hide_inner_tensors = false},
      {.depth = 1, .expand_nested = true, .roll = true},
      {.depth = std::nullopt,
       .expand_nested = true,
       .hide_module_functions = false,
       .strict = false,
       .show_params = true},
  };
  int k = 0;
  for (const RenderOptions& o : option_sets) {
    const std::string what = "options " + std::to_string(k++);
    try {
      const auto vg = visible_graph(t.graph, o);
      check_dot(render_to_string<backend::Dot>(t, o), vg, o.strict, "DOT, " + what, p);
      check_json(render_to_string<backend::JsonView>(t, o), "JsonView, " + what, p);
      if (render_to_string<backend::Mermaid>(t, o).empty()) p.add("render", "empty Mermaid");
    } catch (const std::exception& e) {
      p.add("render", what + " threw: " + e.what());
    }
  }
  try {
    check_json(render_to_string<backend::Json>(t), "Json", p);
    check_json(render_to_string<backend::ModelExplorer>(t), "ModelExplorer", p);
    if (render_to_string<backend::Html>(t).find("</html>") == std::string::npos)
      p.add("render", "HTML without </html>");
    if (svg) {
      const std::string image =
          render_to_string<backend::Svg>(t, {}, backend::Svg{.report = nullptr});
      if (image.find("<svg") == std::string::npos) p.add("render", "dot -Tsvg wrote no <svg>");
    }
  } catch (const std::exception& e) {
    p.add("render", std::string("threw: ") + e.what());
  }
}

}  // namespace fuzz
