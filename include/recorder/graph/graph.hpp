#pragma once
/// The recorded graph: an append-only store of tensors, ops and module calls (no libtorch).

#include <recorder/graph/ids.hpp>

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace recorder {

class GraphStorage;

/// A tensor's sizes, viewed in the graph's shape pool (valid until the next `add_tensor`).
/// Prints as torchinfo does: `[1, 64, 112, 112]`.
///
/// A size may also have a name: an exported program's dynamic dimension (`s0`, `2*s0`), read
/// without running it. Its number is then the size the program was exported with (its hint),
/// which sizes and byte counts use, and it prints as its name: `[s0, 8]`.
struct Shape : std::span<const std::int64_t> {
  using std::span<const std::int64_t>::span;
  constexpr Shape() noexcept = default;
  constexpr Shape(std::span<const std::int64_t> s) noexcept  // NOLINT: implicit by design
      : std::span<const std::int64_t>(s) {}
  /// Sizes with a name for each (`names` has `s.size()` entries, "" for a plain size).
  constexpr Shape(std::span<const std::int64_t> s, const std::string_view* names) noexcept
      : std::span<const std::int64_t>(s), names_(names) {}

  /// Dimension `i`'s name; "" for a plain size.
  constexpr std::string_view name(std::size_t i) const noexcept {
    return names_ != nullptr ? names_[i] : std::string_view{};
  }
  /// The names, one per dimension; null when no dimension of this graph has one.
  constexpr const std::string_view* names() const noexcept { return names_; }
  /// True when a dimension has a name.
  constexpr bool named() const noexcept {
    for (std::size_t i = 0; i < size(); ++i)
      if (!name(i).empty()) return true;
    return false;
  }
  /// Same sizes and same names.
  friend constexpr bool same_shape(Shape a, Shape b) noexcept {
    if (!std::ranges::equal(a, b)) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a.name(i) != b.name(i)) return false;
    return true;
  }

 private:
  const std::string_view* names_ = nullptr;
};

/// Appends dimension `i` of `shape`: its name, or its size.
inline void append_dim(std::string& out, Shape shape, std::size_t i) {
  if (const std::string_view name = shape.name(i); !name.empty())
    out += name;
  else
    out += std::to_string(shape[i]);
}

/// "[1, 64, 112, 112]"; "[]" for a scalar; "[s0, 8]" where a size has a name.
inline std::string to_string(Shape shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) s += ", ";
    append_dim(s, shape, i);
  }
  s += ']';
  return s;
}

inline std::ostream& operator<<(std::ostream& os, Shape shape) { return os << to_string(shape); }

/// A list of node ids, viewed where it is stored: a module call's inputs or outputs in the
/// graph (valid until the graph next changes), or the ids passed to a function (a vector, or a
/// braced list `{x, y}`, which lives until the call returns). Compares equal to any list of the
/// same ids.
struct NodeList : std::span<const NodeId> {
  using std::span<const NodeId>::span;
  using const_iterator = iterator;  // the elements are const already
  constexpr NodeList() noexcept = default;
  constexpr NodeList(std::span<const NodeId> s) noexcept  // NOLINT: implicit by design
      : std::span<const NodeId>(s) {}
  /// For arguments only: the list ends with the full expression.
  constexpr NodeList(std::initializer_list<NodeId> ids) noexcept  // NOLINT: implicit by design
      : std::span<const NodeId>(ids.begin(), ids.size()) {}

  /// The `i`-th id; throws `std::out_of_range` past the end.
  const NodeId& at(std::size_t i) const {
    if (i >= size()) throw std::out_of_range("recorder::NodeList: index out of range");
    return (*this)[i];
  }
  friend bool operator==(NodeList a, NodeList b) noexcept { return std::ranges::equal(a, b); }
  /// A copy of the ids.
  explicit operator std::vector<NodeId>() const { return {begin(), end()}; }
};

namespace detail {

/// Bytes per element of a dtype named as libtorch names it ("Float", "Long", ...); 4 for a name
/// it does not know.
inline std::uint64_t dtype_bytes(std::string_view dtype) noexcept {
  if (dtype == "Double" || dtype == "Long" || dtype == "ComplexFloat") return 8;
  if (dtype == "Half" || dtype == "BFloat16" || dtype == "Short") return 2;
  if (dtype == "Byte" || dtype == "Char" || dtype == "Bool" || dtype == "QInt8" ||
      dtype == "QUInt8")
    return 1;
  if (dtype == "ComplexDouble") return 16;
  return 4;
}

}  // namespace detail

/// One parameter owned directly by a module (`weight`, `bias`, ...).
struct ParamInfo {
  std::string name{};
  std::vector<std::int64_t> shape{};
  std::uint64_t numel = 0;
  bool trainable = true;
  std::uint8_t element_bytes = 4;  ///< bytes per element of its dtype
  /// The same for one tensor registered on two modules (a tied weight), else distinct within a
  /// trace; 0 when the front end does not know (each parameter then counts as its own).
  std::uint64_t id = 0;
};

/// A distinct module object, shared by all of its calls.
struct ModuleInfo {
  std::string path{};        ///< registered path from the root: "layer1.0.conv1"; "" for the root
  std::string name{};        ///< last path component ("conv1"); the class name for the root
  std::string class_name{};  ///< "Conv2d", "BasicBlock", ...
  std::vector<ParamInfo> params{};    ///< parameters registered directly on this module
  std::uint64_t param_count = 0;      ///< all parameters below it (recursive), each counted once
  std::uint64_t trainable_count = 0;  ///< the trainable part of `param_count`
  bool leaf = true;                   ///< ran as a libtorch forward (no traced inner ops)
  /// Has registered submodules, called or not: not a leaf for torchinfo, which shows its
  /// mult-adds only at the depth limit and counts none in its total.
  bool has_children = false;
  std::uint32_t calls = 0;  ///< how many times it was called in this trace
  /// Hyper-parameters worth showing, as display strings in torchinfo's spelling:
  /// `{"kernel_size", "[3, 3]"}`, `{"groups", "1"}`; empty for most modules.
  std::vector<std::pair<std::string, std::string>> attributes{};
};

/// One directed edge, in execution order.
struct Edge {
  NodeId from;
  NodeId to;
  friend constexpr bool operator==(const Edge&, const Edge&) = default;
};

/// An append-only graph of tensors, function calls and module calls.
///
/// Everything is stored flat and addressed by `NodeId`: recording an op is a few vector
/// appends. Nodes remember the module call they were recorded in (`parent`), so the
/// module tree is part of the graph. Copies share the interned-string pool, which is
/// append-only, so string views stay valid in every copy. A graph is filled by one thread;
/// copies may be read concurrently.
///
/// A graph is a value: its tables and the strings it interned. A front end that records the
/// same model again builds each graph in memory a `GraphStorage` lends it (the `Tracer` owns
/// one), and the graph gives that memory back when it is destroyed, so tracing again appends
/// into memory already mapped; a graph made without one owns its memory plainly.
class Graph {
 public:
  struct Node {
    NodeKind kind = NodeKind::tensor;
    bool inplace = false;  ///< function: an in-place op (`add_`, `relu_`)
    bool failed = false;   ///< module call: did not complete (an exception left it)
    /// module call: not seen directly but inferred from the parameters its ops used (inside a
    /// plain C++ module observed with `record::AtenOps`)
    bool inferred = false;
    /// module call: every argument was passed by keyword (`attn(query=x, key=x, value=x)` in a
    /// scripted model's source), so torchinfo's forward hooks saw none
    bool keyword_only = false;
    std::uint16_t depth = 0;  ///< torchview's depth: root call 0, its direct ops and children 1
    NodeId parent;            ///< the module call this node was recorded in; invalid for the root
    std::uint32_t data = 0;   ///< index into the kind's own table
  };

  struct TensorData {
    std::uint32_t shape_begin = 0;
    std::uint32_t ndim = 0;
    std::string_view dtype;   ///< "Float", "Long", ... (static storage)
    std::string_view device;  ///< "cpu", "cuda", ... (static storage)
    NodeId producer;          ///< the op that produced it; invalid for inputs and constants
    std::string_view name;    ///< inputs, outputs, parameters: a label; else empty
  };

  struct FunctionData {
    std::string_view op;  ///< op name without in-place underscore: "add", "relu", "matmul"
  };

  /// One module call, as `call` reads it. The node lists view the graph's storage: valid until
  /// the graph next changes.
  struct CallData {
    ModuleId module;
    std::uint32_t call_index = 0;   ///< 0 for the first call of this module, 1 for the next...
    std::uint32_t depth_index = 0;  ///< torchinfo's running index at `table_depth` (1-based)
    NodeList inputs{};              ///< tensor nodes passed in
    NodeList outputs{};             ///< tensor nodes returned (empty while running or failed)
    /// torchinfo's depth: the module's depth in the module tree (`table_depth(path)`), which is
    /// the node's depth unless a module that was never called encloses it (a `ModuleList`).
    std::uint16_t table_depth = 0;
  };

  /// A row torchinfo prints for a module that encloses a call in the module tree but whose own
  /// row is not the one above it: a container never called (a `ModuleList` iterated in a
  /// forward, a module only holding others), or a module called earlier whose child is called
  /// from elsewhere. Numbered with the calls (`CallData::depth_index`).
  struct ContainerRow {
    NodeId before;                  ///< the module call whose row comes after it
    std::string_view path;          ///< the module's path (interned)
    std::uint16_t depth = 0;        ///< its table depth
    std::uint32_t depth_index = 0;  ///< torchinfo's running index at `depth`
  };

  /// An empty graph, owning its memory.
  Graph() : strings_(std::make_shared<std::deque<std::string>>()) {}
  /// An empty graph built in the memory `storage` keeps (the tables and module records the last
  /// large graph it lent to left, emptied, their capacity kept), given back to it when this
  /// graph is destroyed, if `storage` is still alive then. A null `storage` lends nothing.
  explicit Graph(const std::shared_ptr<GraphStorage>& storage) : Graph() { borrow(storage); }
  /// Copies own their memory and give nothing back; a moved graph gives back what it holds.
  Graph(const Graph&) = default;
  Graph& operator=(const Graph&) = default;
  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;
  /// Gives the memory back to the storage that lent it (see `GraphStorage`).
  ~Graph();

  /// How big a graph is, for `reserve`: a front end that records the same model again can make
  /// room for it up front.
  struct Capacity {
    std::size_t nodes = 0, edges = 0, tensors = 0, dims = 0, functions = 0;
  };
  Capacity capacity_used() const noexcept {
    return {nodes_.size(), edges_.size(), tensors_.size(), dims_.size(), functions_.size()};
  }
  void reserve(const Capacity& c) {
    nodes_.reserve(c.nodes);
    edges_.reserve(c.edges);
    tensors_.reserve(c.tensors);
    dims_.reserve(c.dims);
    functions_.reserve(c.functions);
  }

 private:
  /// The flat tables (nodes, edges, tensors, dims, functions, calls, call nodes), in
  /// `Storage::tables`' order: what is done to one is done to all. Defined before its first use,
  /// so that its type is known there.
  template <class Self>
  static auto flat_tables(Self& g) noexcept {
    return std::tie(g.nodes_, g.edges_, g.tensors_, g.dims_, g.functions_, g.calls_, g.call_nodes_);
  }

 public:
  /// Frees the capacity of the flat tables past what the graph holds (one copy of each), when
  /// the graph grew them itself: a front end calls it as a trace ends, so that a trace holds
  /// what it recorded and not up to twice that. Memory a `GraphStorage` lent the graph is kept
  /// as it is, so that tracing the same model again copies nothing.
  void release_growth() {
    if (lease_.adopted) return;
    std::apply([](auto&... table) { (table.shrink_to_fit(), ...); }, flat_tables(*this));
  }

  /// The bytes this graph's own storage takes (vector capacities, and the strings its module
  /// records own), not counting the interned-string pool it shares with its copies.
  std::size_t memory_bytes() const noexcept {
    return tables_bytes(flat_tables(*this)) +
           capacity_bytes(modules_, depth_counters_, dim_names_) + records_bytes(modules_);
  }

  // ---- appending -------------------------------------------------------------------

  /// Adds a tensor node; `dtype`, `device` and `name`, and the names of `shape`'s dimensions,
  /// must outlive the graph (use `intern`).
  NodeId add_tensor(NodeKind kind, NodeId parent, std::uint16_t depth, Shape shape,
                    std::string_view dtype, std::string_view device, NodeId producer = {},
                    std::string_view name = {}) {
    assert(is_tensor_kind(kind));
    if (shape.names() != nullptr && dim_names_.empty()) dim_names_.resize(dims_.size());
    if (!dim_names_.empty()) {
      if (shape.names() != nullptr)
        dim_names_.insert(dim_names_.end(), shape.names(), shape.names() + shape.size());
      else
        dim_names_.resize(dim_names_.size() + shape.size());
    }
    TensorData t;
    t.shape_begin = static_cast<std::uint32_t>(dims_.size());
    t.ndim = static_cast<std::uint32_t>(shape.size());
    t.dtype = dtype;
    t.device = device;
    t.producer = producer;
    t.name = name;
    dims_.insert(dims_.end(), shape.begin(), shape.end());
    tensors_.push_back(t);
    return push(kind, parent, depth, static_cast<std::uint32_t>(tensors_.size() - 1));
  }

  /// Adds a function node; `op` must outlive the graph (a literal, or `intern`ed).
  NodeId add_function(std::string_view op, NodeId parent, std::uint16_t depth,
                      bool inplace = false) {
    functions_.push_back(FunctionData{op});
    NodeId id =
        push(NodeKind::function, parent, depth, static_cast<std::uint32_t>(functions_.size() - 1));
    nodes_.back().inplace = inplace;
    return id;
  }

  /// Makes room for `n` module objects in all.
  void reserve_modules(std::size_t n) { modules_.reserve(n); }

  /// Registers a distinct module object.
  ModuleId add_module(ModuleInfo&& info) {
    modules_.push_back(std::move(info));
    return ModuleId{static_cast<std::uint32_t>(modules_.size() - 1)};
  }
  /// Registers a distinct module object, described by a copy of `info`: a front end that keeps
  /// the records of a model's modules copies them into every trace. The copy goes into a
  /// record an earlier graph left in the storage this one was lent, when there is one, so that
  /// it allocates only where its strings and vectors are longer than that record's.
  ModuleId add_module(const ModuleInfo& info) {
    if (lease_.next_spare == lease_.spare_modules.size()) {
      modules_.push_back(info);
    } else {
      ModuleInfo& spare = lease_.spare_modules[lease_.next_spare];
      spare = info;
      ++lease_.next_spare;
      modules_.push_back(std::move(spare));
    }
    return ModuleId{static_cast<std::uint32_t>(modules_.size() - 1)};
  }

  /// Adds a node for one call of module `m` with tensor nodes `inputs`, numbering it like
  /// torchinfo: by its depth in the module tree, after the rows torchinfo inserts for the
  /// modules enclosing it whose rows are not the current ones (`ContainerRow`).
  NodeId add_module_call(ModuleId m, NodeId parent, std::uint16_t depth, NodeList inputs = {}) {
    if (m.value >= modules_.size()) throw std::out_of_range("recorder::Graph: unknown ModuleId");
    const NodeId self{static_cast<std::uint32_t>(nodes_.size())};
    const std::string& path = modules_[m.value].path;
    std::uint16_t tree = path.empty() ? 0 : 1;
    for (std::size_t dot = path.find('.'); dot != std::string::npos;
         dot = path.find('.', dot + 1), ++tree) {
      const std::string_view enclosing(path.data(), dot);
      if (tree < hierarchy_.size() && hierarchy_path(tree) == enclosing) continue;
      if (tree >= hierarchy_.size()) hierarchy_.resize(tree + 1u);
      const std::string_view kept = intern(enclosing);
      hierarchy_[tree] = Level{ModuleId{}, kept};
      containers_.push_back(ContainerRow{self, kept, tree, next_index(tree)});
    }
    if (tree >= hierarchy_.size()) hierarchy_.resize(tree + 1u);
    hierarchy_[tree] = Level{m, {}};
    hierarchy_.resize(tree + 1u);
    CallRecord c;
    c.module = m;
    c.call_index = modules_[m.value].calls;
    c.depth_index = next_index(tree);
    c.table_depth = tree;
    c.inputs = append_nodes(inputs);
    calls_.push_back(c);
    ++modules_[m.value].calls;
    return push(NodeKind::module, parent, depth, static_cast<std::uint32_t>(calls_.size() - 1));
  }

  void add_edge(NodeId from, NodeId to) {
    if (from.value >= nodes_.size() || to.value >= nodes_.size())
      throw std::out_of_range("recorder::Graph: edge to an unknown NodeId");
    edges_.push_back(Edge{from, to});
  }

  void set_call_outputs(NodeId call, NodeList outputs) {
    CallRecord& c = call_record(call);
    if (outputs.size() <= c.outputs.size) {  // in place
      std::copy(outputs.begin(), outputs.end(), call_nodes_.begin() + c.outputs.begin);
      c.outputs.size = static_cast<std::uint32_t>(outputs.size());
    } else {
      c.outputs = append_nodes(outputs);
    }
  }

  void set_failed(NodeId id, bool failed = true) { nodes_.at(id.value).failed = failed; }
  void set_inferred(NodeId call) {
    if (kind(call) != NodeKind::module)
      throw std::invalid_argument("recorder::Graph: not a module call");
    nodes_[call.value].inferred = true;
  }
  /// Marks module call `call` as called with keyword arguments only (`Node::keyword_only`).
  void set_keyword_only(NodeId call) {
    if (kind(call) != NodeKind::module)
      throw std::invalid_argument("recorder::Graph: not a module call");
    nodes_[call.value].keyword_only = true;
  }
  /// Adds tensor node `input` to the inputs of module call `call` (found after it opened).
  void add_call_input(NodeId call, NodeId input) {
    CallRecord& c = call_record(call);
    if (c.inputs.begin + c.inputs.size != call_nodes_.size()) {  // not last: move them to the end
      const std::size_t begin = call_nodes_.size();
      call_nodes_.reserve(begin + c.inputs.size + 1);  // no reallocation below
      for (std::uint32_t i = 0; i < c.inputs.size; ++i)
        call_nodes_.push_back(call_nodes_[c.inputs.begin + i]);
      c.inputs.begin = static_cast<std::uint32_t>(begin);
    }
    call_nodes_.push_back(input);
    ++c.inputs.size;
  }
  /// Moves function or tensor node `id` into module call `parent` (an op first recorded in a
  /// call it turned out not to belong to), one level below it.
  void move_node(NodeId id, NodeId parent) {
    Node& n = nodes_.at(id.value);
    if (n.kind == NodeKind::module)
      throw std::invalid_argument("recorder::Graph: module calls do not move");
    n.parent = parent;
    n.depth =
        parent.valid() ? static_cast<std::uint16_t>(node(parent).depth + 1) : std::uint16_t{1};
  }
  void set_leaf(ModuleId m, bool leaf) { modules_.at(m.value).leaf = leaf; }
  /// Adds a display attribute to module `m` (`{"kernel_size", "3"}`), learnt while it ran.
  void add_attribute(ModuleId m, std::string key, std::string value) {
    modules_.at(m.value).attributes.emplace_back(std::move(key), std::move(value));
  }
  void set_tensor_name(NodeId id, std::string_view name) {
    const Node& n = node(id);
    if (!is_tensor_kind(n.kind)) throw std::invalid_argument("recorder::Graph: not a tensor node");
    tensors_[n.data].name = name;
  }

  /// Copies `s` into the graph's string pool and returns a view that lives as long as it.
  std::string_view intern(std::string_view s) {
    if (!strings_) strings_ = std::make_shared<std::deque<std::string>>();  // moved-from graph
    return strings_->emplace_back(s);
  }

  // ---- reading ---------------------------------------------------------------------

  std::size_t size() const noexcept { return nodes_.size(); }
  std::size_t edge_count() const noexcept { return edges_.size(); }
  std::size_t module_count() const noexcept { return modules_.size(); }

  const Node& node(NodeId id) const {
    if (id.value >= nodes_.size()) throw std::out_of_range("recorder::Graph: unknown NodeId");
    return nodes_[id.value];
  }
  NodeKind kind(NodeId id) const { return node(id).kind; }
  const std::vector<Node>& nodes() const noexcept { return nodes_; }
  const std::vector<Edge>& edges() const noexcept { return edges_; }
  const std::vector<ModuleInfo>& modules() const noexcept { return modules_; }
  const ModuleInfo& module(ModuleId m) const { return modules_.at(m.value); }

  const TensorData& tensor(NodeId id) const {
    const Node& n = node(id);
    if (!is_tensor_kind(n.kind)) throw std::invalid_argument("recorder::Graph: not a tensor node");
    return tensors_[n.data];
  }
  Shape shape(NodeId id) const {
    const TensorData& t = tensor(id);
    const std::span<const std::int64_t> sizes(dims_.data() + t.shape_begin, t.ndim);
    if (dim_names_.empty()) return sizes;
    return Shape(sizes, dim_names_.data() + t.shape_begin);
  }
  const FunctionData& function(NodeId id) const {
    const Node& n = node(id);
    if (n.kind != NodeKind::function)
      throw std::invalid_argument("recorder::Graph: not a function node");
    return functions_[n.data];
  }
  CallData call(NodeId id) const {
    const Node& n = node(id);
    if (n.kind != NodeKind::module)
      throw std::invalid_argument("recorder::Graph: not a module call");
    const CallRecord& c = calls_[n.data];
    return CallData{c.module,           c.call_index,        c.depth_index,
                    nodes_of(c.inputs), nodes_of(c.outputs), c.table_depth};
  }
  /// The rows torchinfo prints for modules enclosing calls (see `ContainerRow`), in call order.
  const std::vector<ContainerRow>& container_rows() const noexcept { return containers_; }
  /// The module registered at `path` (the first, if several are), if any: a container's
  /// record, which a front end registers when the trace ends (`register_containers`).
  const ModuleInfo* module_at(std::string_view path) const noexcept {
    for (const ModuleInfo& m : modules_)
      if (m.path == path) return &m;
    return nullptr;
  }
  /// The module object behind a module call node.
  const ModuleInfo& module_of(NodeId call_id) const {
    return modules_[call_record(call_id).module.value];
  }

  /// The display name of a node: op name, module class, or tensor role.
  std::string_view label(NodeId id) const {
    const Node& n = node(id);
    switch (n.kind) {
      case NodeKind::function:
        return functions_[n.data].op;
      case NodeKind::module:
        return modules_[calls_[n.data].module.value].class_name;
      default:
        return to_string(n.kind);
    }
  }

  /// True when `ancestor` is `id` itself or one of the module calls enclosing it.
  bool within(NodeId id, NodeId ancestor) const {
    for (NodeId cur = id; cur.valid(); cur = node(cur).parent)
      if (cur == ancestor) return true;
    return false;
  }

 private:
  NodeId push(NodeKind kind, NodeId parent, std::uint16_t depth, std::uint32_t data) {
    Node n;
    n.kind = kind;
    n.depth = depth;
    n.parent = parent;
    n.data = data;
    nodes_.push_back(n);
    return NodeId{static_cast<std::uint32_t>(nodes_.size() - 1)};
  }
  /// A call's input or output nodes: `size` ids from `begin` in `call_nodes_`.
  struct NodeRange {
    std::uint32_t begin = 0;
    std::uint32_t size = 0;
  };
  /// One module call as stored: its node lists live in `call_nodes_`, so a call costs no
  /// allocation of its own.
  struct CallRecord {
    ModuleId module;
    std::uint32_t call_index = 0;
    std::uint32_t depth_index = 0;
    std::uint16_t table_depth = 0;
    NodeRange inputs;
    NodeRange outputs;
  };

  const CallRecord& call_record(NodeId id) const {
    const Node& n = node(id);
    if (n.kind != NodeKind::module)
      throw std::invalid_argument("recorder::Graph: not a module call");
    return calls_[n.data];
  }
  CallRecord& call_record(NodeId id) {
    return const_cast<CallRecord&>(std::as_const(*this).call_record(id));
  }
  NodeRange append_nodes(NodeList ids) {
    const NodeRange r{static_cast<std::uint32_t>(call_nodes_.size()),
                      static_cast<std::uint32_t>(ids.size())};
    call_nodes_.insert(call_nodes_.end(), ids.begin(), ids.end());
    return r;
  }
  NodeList nodes_of(NodeRange r) const noexcept { return {call_nodes_.data() + r.begin, r.size}; }

  static_assert(std::is_trivially_destructible_v<Node> && std::is_trivially_destructible_v<Edge> &&
                    std::is_trivially_destructible_v<TensorData> &&
                    std::is_trivially_destructible_v<FunctionData> &&
                    std::is_trivially_destructible_v<CallRecord>,
                "recorder::Graph: cached storage is cleared in O(1): its elements must be "
                "trivially destructible");

  /// The memory a graph leaves to the next: the flat tables (every element trivially
  /// destructible) and the module records.
  struct Storage {
    std::vector<Node> nodes;
    std::vector<Edge> edges;
    std::vector<TensorData> tensors;
    std::vector<std::int64_t> dims;
    std::vector<FunctionData> functions;
    std::vector<CallRecord> calls;
    std::vector<NodeId> call_nodes;
    /// A destroyed graph's module records; `add_module` takes them in order, from `next_module`
    /// on (the ones before are moved out).
    std::vector<ModuleInfo> modules;
    std::size_t next_module = 0;
    std::vector<ModuleInfo> module_room;  ///< empty, with capacity: the next graph's `modules_`

    /// The flat tables, in the order of `Graph::flat_tables`.
    template <class Self>
    static auto tables(Self& s) noexcept {
      return std::tie(s.nodes, s.edges, s.tensors, s.dims, s.functions, s.calls, s.call_nodes);
    }
    /// The flat tables' bytes.
    std::size_t bytes() const noexcept { return tables_bytes(tables(*this)); }
    /// The module records' bytes, the ones moved out excepted.
    std::size_t module_bytes() const noexcept {
      return capacity_bytes(modules, module_room) +
             records_bytes(std::span<const ModuleInfo>(modules).subspan(next_module));
    }
  };

  /// What a graph was lent: where its memory goes back, the module records it may copy into,
  /// and whether its flat tables came from there. A copy of a graph was lent nothing.
  struct Lease {
    std::weak_ptr<GraphStorage> home;
    std::vector<ModuleInfo> spare_modules;  ///< taken in order from `next_spare` on
    std::size_t next_spare = 0;
    bool adopted = false;  ///< the flat tables came from `home`

    Lease() = default;
    Lease(const Lease&) noexcept {}
    Lease& operator=(const Lease&) noexcept { return *this; }
    Lease(Lease&& o) noexcept
        : home(std::move(o.home)),
          spare_modules(std::move(o.spare_modules)),
          next_spare(std::exchange(o.next_spare, 0)),
          adopted(std::exchange(o.adopted, false)) {}
    Lease& operator=(Lease&& o) noexcept {
      home = std::move(o.home);
      spare_modules = std::move(o.spare_modules);
      next_spare = std::exchange(o.next_spare, 0);
      adopted = std::exchange(o.adopted, false);
      return *this;
    }
    ~Lease() = default;
  };

  /// Swaps the flat tables with the storage's.
  void swap_flat_tables(Storage& c) noexcept {
    std::apply(
        [&c](auto&... mine) {
          std::apply([&mine...](auto&... theirs) { (mine.swap(theirs), ...); }, Storage::tables(c));
        },
        flat_tables(*this));
  }

  /// The bytes the capacities of a tuple of vectors take.
  template <class Tables>
  static std::size_t tables_bytes(const Tables& t) noexcept {
    return std::apply([](const auto&... v) { return capacity_bytes(v...); }, t);
  }
  /// The bytes the vectors' capacities take.
  template <class... Vectors>
  static std::size_t capacity_bytes(const Vectors&... vs) noexcept {
    return (... + (vs.capacity() * sizeof(typename Vectors::value_type)));
  }
  /// The bytes the strings and vectors of module record `m` take on the heap.
  static std::size_t heap_bytes(const ModuleInfo& m) noexcept {
    auto str = [](const std::string& x) {
      return x.capacity() > std::string().capacity() ? x.capacity() + 1 : 0;
    };
    std::size_t n =
        str(m.path) + str(m.name) + str(m.class_name) + capacity_bytes(m.params, m.attributes);
    for (const ParamInfo& p : m.params) n += str(p.name) + capacity_bytes(p.shape);
    for (const auto& [k, v] : m.attributes) n += str(k) + str(v);
    return n;
  }
  /// The bytes the strings and vectors of `records` take on the heap.
  static std::size_t records_bytes(std::span<const ModuleInfo> records) noexcept {
    std::size_t n = 0;
    for (const ModuleInfo& m : records) n += heap_bytes(m);
    return n;
  }

  /// Takes what `storage` keeps (this graph is empty): the room for its module records, the
  /// records to copy into, and the flat tables when it has them.
  void borrow(const std::shared_ptr<GraphStorage>& storage);

  /// Takes `c`'s memory (see `borrow`).
  void adopt(Storage& c) noexcept {
    modules_.swap(c.module_room);
    lease_.spare_modules.swap(c.modules);
    lease_.next_spare = c.next_module;
    c.next_module = 0;
    if (c.nodes.capacity() == 0) return;
    lease_.adopted = true;
    swap_flat_tables(c);
  }

  /// Leaves this graph's memory to `c` where it is more than `c` keeps: the flat tables, emptied,
  /// when larger than `c`'s and at most `limit` bytes; the module records when they outnumber
  /// the records `c` has not yet lent, and take at most `limit` bytes.
  void leave(Storage& c, std::size_t limit) noexcept {
    const std::size_t mine = tables_bytes(flat_tables(*this));
    if (mine <= limit && mine > c.bytes()) {
      std::apply([](auto&... table) { (table.clear(), ...); }, flat_tables(*this));
      swap_flat_tables(c);
    }
    if (c.modules.empty()) {  // the records this graph was lent and did not use go back first
      c.modules.swap(lease_.spare_modules);
      c.next_module = lease_.next_spare;
    }
    if (modules_.empty() && modules_.capacity() > c.module_room.capacity())
      c.module_room.swap(modules_);  // a graph that registered no module gives back its room
    if (modules_.size() <= c.modules.size() - c.next_module) return;
    if (capacity_bytes(modules_) + records_bytes(modules_) > limit) return;
    c.modules.clear();  // records moved out, and the ones not reused
    if (c.modules.capacity() > c.module_room.capacity()) c.module_room.swap(c.modules);
    c.modules.swap(modules_);
    c.next_module = 0;
  }

  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::vector<TensorData> tensors_;
  std::vector<std::int64_t> dims_;
  /// A name for each of `dims_` ("" for a plain size), once a tensor with a named size is added;
  /// empty before, as it stays for every trace of a run.
  std::vector<std::string_view> dim_names_;
  std::vector<FunctionData> functions_;
  std::vector<CallRecord> calls_;
  std::vector<NodeId> call_nodes_;  ///< every call's input and output nodes
  std::vector<ModuleInfo> modules_;
  /// One level of torchinfo's current hierarchy: the module whose row is the last at that
  /// table depth, a call's module or a container's path.
  struct Level {
    ModuleId module;
    std::string_view container;
  };
  std::string_view hierarchy_path(std::size_t depth) const {
    const Level& l = hierarchy_[depth];
    return l.module.valid() ? std::string_view(modules_[l.module.value].path) : l.container;
  }
  /// The next depth-index at table depth `depth`.
  std::uint32_t next_index(std::uint16_t depth) {
    if (depth >= depth_counters_.size()) depth_counters_.resize(depth + 1u, 0);
    return ++depth_counters_[depth];
  }

  std::vector<std::uint32_t> depth_counters_;
  std::vector<Level> hierarchy_;
  std::vector<ContainerRow> containers_;
  std::shared_ptr<std::deque<std::string>> strings_;
  Lease lease_;

  friend class GraphStorage;
};

/// Memory for graphs of one model traced again and again, lent to each (`Graph(storage)`) and
/// given back as each is destroyed: the largest flat tables a graph left (at most `limit`
/// bytes; a graph of 100,000 ops otherwise returns ~20 MB to the operating system and the next
/// one page-faults it all back in, measured 118 ns per op at 100k against 32 ns at 10k) and
/// the module records of the graph with the most (copied into by `add_module(const
/// ModuleInfo&)`, reusing their strings and vectors). The owner of the storage (a `Tracer`)
/// holds it by `shared_ptr`; graphs hold it weakly, so a graph that outlives it frees its own
/// memory. Graphs lent by one storage may live on several threads: lending and giving back
/// lock it.
class GraphStorage {
 public:
  /// The most bytes of flat tables a storage keeps (and as much again of module records).
  static constexpr std::size_t limit = std::size_t{64} << 20;

  GraphStorage() = default;
  GraphStorage(const GraphStorage&) = delete;
  GraphStorage& operator=(const GraphStorage&) = delete;

  /// The bytes this storage keeps: flat tables, and module records not yet lent.
  std::size_t bytes() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return kept_.bytes() + kept_.module_bytes();
  }
  /// Frees what this storage keeps.
  void release() {
    Graph::Storage gone;
    const std::lock_guard<std::mutex> lock(mutex_);
    std::swap(gone, kept_);
  }

 private:
  friend class Graph;
  mutable std::mutex mutex_;
  Graph::Storage kept_;
};

inline void Graph::borrow(const std::shared_ptr<GraphStorage>& storage) {
  if (!storage) return;
  lease_.home = storage;
  const std::lock_guard<std::mutex> lock(storage->mutex_);
  adopt(storage->kept_);
}

inline Graph::~Graph() {
  if (lease_.home.expired()) return;  // lent nothing, a copy, moved from, or outlived its storage
  if (const std::shared_ptr<GraphStorage> home = lease_.home.lock()) {
    const std::lock_guard<std::mutex> lock(home->mutex_);
    leave(home->kept_, GraphStorage::limit);
  }
}

// The names of a module call, shared by the renderers and layer addresses (graph/address.hpp).

/// torchinfo's depth-index label of module call `call`: "2-3". Needs a module call node.
inline std::string depth_index_label(const Graph& g, NodeId call) {
  const Graph::CallData c = g.call(call);
  return std::to_string(c.table_depth) + '-' + std::to_string(c.depth_index);
}

/// torchinfo's depth of the module at `path`: its number of components ("" is the root, 0).
inline int table_depth(std::string_view path) {
  if (path.empty()) return 0;
  int n = 1;
  for (char c : path) n += c == '.' ? 1 : 0;
  return n;
}

/// The record of a container known only by its path (a front end that cannot find the module):
/// named by its last component, of class `Module`, with submodules.
inline ModuleInfo container_record(std::string_view path) {
  ModuleInfo m;
  m.path = std::string(path);
  const auto dot = path.rfind('.');
  m.name = std::string(dot == std::string_view::npos ? path : path.substr(dot + 1));
  m.class_name = "Module";
  m.has_children = true;
  return m;
}

/// Registers, for every container row of `g` whose module has no record, the record `describe`
/// gives for its path (a `ModuleInfo` with its class, parameters and `has_children`), so that
/// the summary can print the row. Front ends call it as a trace ends.
template <class Describe>
void register_containers(Graph& g, Describe&& describe) {
  for (const Graph::ContainerRow& r : g.container_rows())
    if (g.module_at(r.path) == nullptr) g.add_module(describe(r.path));
}

/// The path address of module call `call`: "layer1.0.conv1", with "#k" when its module was
/// called more than once ("layer1.0.relu#1"); "<root>" for the root.
inline std::string path_address(const Graph& g, NodeId call) {
  const ModuleInfo& m = g.module_of(call);
  std::string s = m.path.empty() ? std::string("<root>") : m.path;
  if (m.calls > 1) s += '#' + std::to_string(g.call(call).call_index);
  return s;
}

}  // namespace recorder
