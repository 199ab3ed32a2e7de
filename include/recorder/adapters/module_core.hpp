#pragma once
/// The non-template core of the module adapters: naming and describing modules (the call
/// protocol itself is `adapters/module_call.hpp`).

#include <recorder/adapters/module_records.hpp>
#include <recorder/adapters/own_parameters.hpp>
#include <recorder/detail/text.hpp>
#include <recorder/graph/display_attributes.hpp>
#include <recorder/observe/attribution.hpp>
#include <recorder/tensor/session.hpp>

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>
#include <torch/ordered_dict.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

namespace recorder::detail {

/// "torch::nn::Conv2dImpl" -> "Conv2d", "ns::BasicBlockImpl" -> "BasicBlock".
inline std::string class_name_of(const torch::nn::Module& m) {
  std::string_view n = m.name();
  if (auto lt = n.find('<'); lt != std::string_view::npos) n = n.substr(0, lt);
  if (auto colon = n.rfind("::"); colon != std::string_view::npos) n = n.substr(colon + 2);
  if (n.size() > 4 && n.substr(n.size() - 4) == "Impl") n.remove_suffix(4);
  return std::string(n);
}

inline std::string join_path(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
}

/// Reads the tree of module `root` into `s.tree` (see `Session::ModuleTree`) in one walk.
///
/// `Module::apply` visits every module below `root` with its qualified name, reading each
/// module's children in place; `named_children()` and `children()` copy them instead (an
/// `OrderedDict` with its hash index, a vector of `shared_ptr`s), which was a third of
/// registering a module. A module object met again (registered in two places) is read once.
inline void read_tree(Session& s, const torch::nn::Module& root) {
  using Tree = Session::ModuleTree;
  Tree& t = s.tree;
  t.root = &root;
  IdMap seen;  // parameter TensorImpls counted in the model's totals
  struct Level {
    const torch::nn::Module* module;
    bool again;  // this occurrence's object (or an ancestor's) was read already
  };
  std::vector<Level> levels;  // the modules enclosing the one visited, root first
  root.apply([&](const std::string& name, const torch::nn::Module& m) {
    // Registered names contain no '.': the number of dots gives the depth.
    const std::size_t depth =
        name.empty() ? 0 : 1 + static_cast<std::size_t>(std::count(name.begin(), name.end(), '.'));
    levels.resize(depth);
    const bool parent_again = depth > 0 && levels[depth - 1].again;
    const auto [entry, fresh] = t.modules.try_emplace(&m);
    levels.push_back(Level{&m, parent_again || !fresh});
    if (fresh) {
      entry->own = own_parameter_counts(m);
      for_each_own_parameter(m, [&](const std::string&, const at::Tensor& p) {
        if (!seen.insert(IdMap::key_of(p.unsafeGetTensorImpl()))) return;
        const auto k = static_cast<std::uint64_t>(p.numel());
        t.total_params += k;
        if (p.requires_grad()) t.trainable_params += k;
        t.param_bytes += k * static_cast<std::uint64_t>(p.element_size());
      });
    }
    if (depth == 0 || parent_again) return;
    const auto link = static_cast<std::uint32_t>(t.links.size());
    const std::size_t dot = name.rfind('.');
    t.links.push_back(
        Tree::Link{&m, Tree::none, dot == std::string::npos ? name : name.substr(dot + 1)});
    Tree::Entry* parent = t.modules.find(levels[depth - 1].module);
    if (parent->first == Tree::none)
      parent->first = link;
    else
      t.links[parent->last].next = link;
    parent->last = link;
  });
}

/// Calls `f(child, key)` for each child of `m`, in order, with the name `m` registered it under.
template <class F>
void for_each_child(const Session& s, const torch::nn::Module& m, F f) {
  using Tree = Session::ModuleTree;
  if (const Tree::Entry* e = s.tree.modules.find(&m)) {
    for (std::uint32_t i = e->first; i != Tree::none; i = s.tree.links[i].next)
      f(*static_cast<const torch::nn::Module*>(s.tree.links[i].child), s.tree.links[i].key);
    return;
  }
  for (const auto& item : m.named_children()) f(*item.value(), item.key());
}

/// Records the paths of `m`'s direct children (once per module, not per call).
inline void learn_child_paths(Session& s, const torch::nn::Module& m, const std::string& path) {
  for_each_child(s, m, [&](const torch::nn::Module& child, const std::string& key) {
    s.known_paths.try_emplace(&child, join_path(path, key));
  });
}

/// The path of `child`, called inside the module `parent` (at `parent_path`): learnt from its
/// parent's children, or found among the parent's descendants (a `ModuleList` that is never
/// called itself), or "" when the parent did not register it. A module object is registered
/// once per session, so its learnt path is moved out.
inline std::string find_path(Session& s, const torch::nn::Module& parent,
                             const std::string& parent_path, const torch::nn::Module* child) {
  if (std::string* p = s.known_paths.find(child)) return std::move(*p);
  for (const auto& item : parent.named_modules("", /*include_self=*/false))
    s.known_paths.try_emplace(item.value().get(), join_path(parent_path, item.key()));
  if (std::string* p = s.known_paths.find(child)) return std::move(*p);
  return {};
}

/// Parameters below `m` (all, trainable), summed bottom-up over its children and memoized, so
/// each module's own parameters are read once per session. A tensor registered in two
/// submodules counts in each; `Trace::total_params` counts it once.
inline std::pair<std::uint64_t, std::uint64_t> count_parameters(Session& s,
                                                                const torch::nn::Module& m) {
  if (const auto* n = s.param_counts.find(&m)) return *n;
  std::pair<std::uint64_t, std::uint64_t> n{0, 0};
  if (const Session::ModuleTree::Entry* e = s.tree.modules.find(&m))
    n = e->own;
  else
    n = own_parameter_counts(m);
  for_each_child(s, m, [&](const torch::nn::Module& child, const std::string&) {
    const auto c = count_parameters(s, child);
    n.first += c.first;
    n.second += c.second;
  });
  s.param_counts.try_emplace(&m, n);
  return n;
}

/// Fills parameter information: own parameters by name, and the recursive counts.
inline void describe_parameters(Session& s, const torch::nn::Module& m, ModuleInfo& info) {
  info.params.reserve(ParameterReader::of(m).size());
  for_each_own_parameter(m, [&info](const std::string& name, const at::Tensor& p) {
    ParamInfo pi;
    pi.name = name;
    pi.element_bytes = static_cast<std::uint8_t>(p.element_size());
    pi.id = IdMap::key_of(p.unsafeGetTensorImpl());
    const auto sizes = p.sizes();
    pi.shape.assign(sizes.begin(), sizes.end());
    pi.numel = static_cast<std::uint64_t>(p.numel());
    pi.trainable = p.requires_grad();
    info.params.push_back(std::move(pi));
  });
  std::tie(info.param_count, info.trainable_count) = count_parameters(s, m);
}

/// The `kernel_size` and `groups` of a convolution `T` (`display_attributes.hpp`).
template <class T>
void conv_attributes(const torch::nn::Module& m, ModuleInfo& info) {
  const auto& c = dynamic_cast<const T&>(m);
  append_display_attributes(info, DisplayAttributes::convolution, *c.options.kernel_size(),
                            c.options.groups());
}

/// The `kernel_size` of a pooling `T` (`display_attributes.hpp`).
template <class T>
void pool_attributes(const torch::nn::Module& m, ModuleInfo& info) {
  const auto& p = dynamic_cast<const T&>(m);
  append_display_attributes(info, DisplayAttributes::pooling, *p.options.kernel_size());
}

/// A module class with display attributes, and how to read them.
struct AttributeReader {
  bool (*is)(const torch::nn::Module&);
  void (*read)(const torch::nn::Module&, ModuleInfo&);
};

template <class T>
bool is_a(const torch::nn::Module& m) {
  return dynamic_cast<const T*>(&m) != nullptr;
}

/// How the classes `display_attributes` names are read, tried in this order (the first that
/// `m` is wins).
inline constexpr AttributeReader attribute_readers[] = {
    {is_a<torch::nn::Conv1dImpl>, conv_attributes<torch::nn::Conv1dImpl>},
    {is_a<torch::nn::Conv2dImpl>, conv_attributes<torch::nn::Conv2dImpl>},
    {is_a<torch::nn::Conv3dImpl>, conv_attributes<torch::nn::Conv3dImpl>},
    {is_a<torch::nn::ConvTranspose1dImpl>, conv_attributes<torch::nn::ConvTranspose1dImpl>},
    {is_a<torch::nn::ConvTranspose2dImpl>, conv_attributes<torch::nn::ConvTranspose2dImpl>},
    {is_a<torch::nn::ConvTranspose3dImpl>, conv_attributes<torch::nn::ConvTranspose3dImpl>},
    {is_a<torch::nn::MaxPool1dImpl>, pool_attributes<torch::nn::MaxPool1dImpl>},
    {is_a<torch::nn::MaxPool2dImpl>, pool_attributes<torch::nn::MaxPool2dImpl>},
    {is_a<torch::nn::MaxPool3dImpl>, pool_attributes<torch::nn::MaxPool3dImpl>},
    {is_a<torch::nn::AvgPool1dImpl>, pool_attributes<torch::nn::AvgPool1dImpl>},
    {is_a<torch::nn::AvgPool2dImpl>, pool_attributes<torch::nn::AvgPool2dImpl>},
    {is_a<torch::nn::AvgPool3dImpl>, pool_attributes<torch::nn::AvgPool3dImpl>},
};
inline constexpr std::uint64_t no_attributes = std::size(attribute_readers);

/// Fills `info.attributes` with what `display_attributes(info.class_name)` says `m` shows
/// (convolutions and poolings), and returns which reader applies (`no_attributes`: none).
/// Which one depends only on `m`'s dynamic type, so it is found once per type and session
/// (twelve `dynamic_cast`s, ~3,000 instructions, were half the cost of registering a module
/// that has none).
inline std::uint64_t describe_attributes(Session& s, const torch::nn::Module& m, ModuleInfo& info) {
  const std::uint64_t type = IdMap::key_of(&typeid(m));
  const std::uint64_t* reader = s.module_types.find(type);
  if (reader == nullptr) {
    std::uint64_t i =
        display_attributes(info.class_name) == DisplayAttributes::none ? no_attributes : 0;
    while (i < no_attributes && !attribute_readers[i].is(m)) ++i;
    reader = s.module_types.try_emplace(type, i).first;
  }
  if (*reader < no_attributes) attribute_readers[*reader].read(m, info);
  return *reader;
}

/// Adds module `m`, described by `info`, to the session.
inline ModuleId add_module(Session& s, const torch::nn::Module& m, ModuleInfo&& info) {
  const ModuleId id = s.graph.add_module(std::move(info));
  s.modules.try_emplace(&m, id);
  s.module_objects.push_back(&m);
  return id;
}

/// Makes room in the session's tables for `n` modules; `paths`: for finding their paths too
/// (a trace that copies the tracer's records needs neither the paths nor `s.modules`).
inline void reserve_modules(Session& s, std::size_t n, bool paths) {
  s.module_objects.reserve(n);
  s.graph.reserve_modules(n);
  if (!paths) return;
  s.modules.reserve(n);
  s.known_paths.reserve(n);
  s.param_counts.reserve(n);
}

/// Registers the root module `root`, first of the trace: copies the tracer's records when its
/// tree is the one they were made from (`ModuleRecords`), else reads its tree.
inline void start_registering(Session& s, const torch::nn::Module& root) {
  ModuleRecords* records = s.module_records;
  if (records != nullptr && records->follow(root)) {
    s.tree.root = &root;
    s.tree.total_params = records->total_params();
    s.tree.trainable_params = records->trainable_params();
    s.tree.param_bytes = records->param_bytes();
    reserve_modules(s, records->tree_size(), /*paths=*/false);
    return;
  }
  read_tree(s, root);
  if (records != nullptr)
    records->remember(root, s.tree.total_params, s.tree.trainable_params, s.tree.param_bytes);
  reserve_modules(s, s.tree.modules.size(), /*paths=*/true);
}

/// The trace stops copying the records, after the modules registered so far: it reads the
/// tree, and learns the paths those registrations would have taught it.
inline void stop_following(Session& s) {
  ModuleRecords& records = *s.module_records;
  const std::size_t kept = s.module_objects.size();
  records.stop_following(kept);
  const auto& root = *static_cast<const torch::nn::Module*>(s.tree.root);
  s.tree = Session::ModuleTree{};
  read_tree(s, root);
  reserve_modules(s, s.tree.modules.size(), /*paths=*/true);
  for (std::size_t i = 0; i < kept; ++i) {
    const ModuleRecords::Registration& r = records.registration(i);
    const auto& m = *static_cast<const torch::nn::Module*>(r.module);
    const ModuleId id{static_cast<std::uint32_t>(i)};
    s.modules.try_emplace(&m, id);  // a trace copying the records kept no `s.modules`
    if (r.parent != nullptr) {
      const ModuleId parent = *s.modules.find(r.parent);
      find_path(s, *static_cast<const torch::nn::Module*>(r.parent), s.graph.module(parent).path,
                &m);
    }
    if (!r.leaf) learn_child_paths(s, m, s.graph.module(id).path);
  }
}

/// The id of module object `m` in this session, registering it on first sight. Its path is
/// found from the module running now (the parent) by pointer identity.
inline ModuleId module_id(Session& s, const torch::nn::Module& m, bool leaf) {
  ModuleRecords* records = s.module_records;
  if (records != nullptr && records->following()) {  // so far, the records' first modules
    if (const auto id = records->index_of(&m); id && *id < s.module_objects.size())
      return ModuleId{static_cast<std::uint32_t>(*id)};
  } else if (const ModuleId* id = s.modules.find(&m)) {
    return *id;
  }
  const NodeId parent_call = s.parent();
  const torch::nn::Module* parent =
      parent_call.valid() ? static_cast<const torch::nn::Module*>(
                                s.module_objects.at(s.graph.call(parent_call).module.value))
                          : nullptr;
  if (parent == nullptr && s.tree.root == nullptr && s.module_objects.empty())
    start_registering(s, m);
  if (records != nullptr && records->following()) {
    if (const auto* r = records->next(s.module_objects.size(), &m, parent, leaf)) {
      ModuleId id;
      if (r->attributes < no_attributes) {
        ModuleInfo info = r->info;
        info.attributes.clear();
        attribute_readers[r->attributes].read(m, info);
        id = s.graph.add_module(std::move(info));
      } else {
        id = s.graph.add_module(r->info);  // into a record a destroyed graph left (no allocation)
      }
      s.module_objects.push_back(&m);
      return id;
    }
    stop_following(s);
  }
  ModuleInfo info;
  info.class_name = class_name_of(m);
  info.leaf = leaf;
  info.has_children = !m.children().empty();
  if (parent == nullptr) {
    info.name = info.class_name;
  } else {
    const std::string& parent_path = s.graph.module_of(parent_call).path;
    info.path = find_path(s, *parent, parent_path, &m);
    if (info.path.empty())
      info.path = join_path(parent_path, "(unregistered " + info.class_name + ")");
    const auto dot = info.path.rfind('.');
    info.name = dot == std::string::npos ? info.path : info.path.substr(dot + 1);
  }
  describe_parameters(s, m, info);
  const std::uint64_t attributes = describe_attributes(s, m, info);
  if (!leaf) learn_child_paths(s, m, info.path);
  if (records != nullptr)
    records->log(&m, parent, leaf, s.tree.modules.find(&m) != nullptr, attributes, info);
  return add_module(s, m, std::move(info));
}

/// Registers the modules of the trace's container rows (`Graph::ContainerRow`: modules never
/// called that enclose calls, such as a `torch::nn::ModuleList` iterated in a forward), found
/// by path below `root`. A front end calls it as a trace ends.
inline void register_containers(Session& s, const torch::nn::Module& root) {
  if (s.graph.container_rows().empty()) return;
  recorder::register_containers(s.graph, [&](std::string_view path) {
    ModuleInfo info = container_record(path);
    for (const auto& item : root.named_modules()) {
      if (item.key() != path) continue;
      const torch::nn::Module& m = *item.value();
      info.class_name = class_name_of(m);
      info.has_children = !m.children().empty();
      describe_parameters(s, m, info);
      describe_attributes(s, m, info);
      break;
    }
    return info;
  });
}

/// The submodules of plain C++ module `m` its ops can be attributed to (`observe/attribution.hpp`),
/// made once per session; null when none owns a parameter.
inline const Submodules* submodules_of(Session& s, const torch::nn::Module& m) {
  if (const auto* subs = s.submodules.find(&m)) return subs->get();
  auto subs = std::make_shared<Submodules>();
  std::vector<std::string> names;
  for (const auto& item : m.named_modules("", /*include_self=*/false)) {
    const torch::nn::Module& child = *item.value();
    Submodules::Entry e;
    e.object = &child;
    // A plain C++ module runs its own forward: a leaf, unless it is only a container of others
    // (`Sequential`, a block of Linears) whose ops all belong to its submodules.
    e.leaf = child.children().empty() || !child.parameters(/*recurse=*/false).empty();
    const std::string cls = class_name_of(child);
    e.callable = cls != "ModuleList" && cls != "ModuleDict" && cls != "ParameterList" &&
                 cls != "ParameterDict";
    for (std::size_t i = names.size(); i-- > 0;)  // the nearest earlier entry that is a prefix
      if (item.key().size() > names[i].size() && item.key().rfind(names[i] + ".", 0) == 0) {
        e.parent = static_cast<int>(i);
        break;
      }
    for (const auto& p : child.parameters(/*recurse=*/false))
      subs->owner.emplace(p.unsafeGetTensorImpl(),
                          static_cast<int>(subs->entries.size()));  // first wins
    names.push_back(item.key());
    subs->entries.push_back(e);
  }
  subs->register_module = [](Session& session, const void* object, bool leaf) {
    return module_id(session, *static_cast<const torch::nn::Module*>(object), leaf);
  };
  if (subs->owner.empty()) subs.reset();
  return s.submodules.try_emplace(&m, std::move(subs)).first->get();
}

}  // namespace recorder::detail
