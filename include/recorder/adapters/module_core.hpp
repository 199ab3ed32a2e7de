#pragma once
/// The non-template core of the module adapters: naming and describing modules (the call
/// protocol itself is `adapters/module_call.hpp`).

#include <recorder/detail/text.hpp>
#include <recorder/observe/attribution.hpp>
#include <recorder/tensor/session.hpp>

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
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

/// Records the paths of `m`'s direct children (one `named_children()` per module, not per call).
inline void learn_child_paths(Session& s, const torch::nn::Module& m, const std::string& path) {
  for (const auto& item : m.named_children())
    s.known_paths.try_emplace(item.value().get(), join_path(path, item.key()));
}

/// The path of `child`, called inside the module `parent` (at `parent_path`): learnt from its
/// parent's children, or found among the parent's descendants (a `ModuleList` that is never
/// called itself), or "" when the parent did not register it.
inline std::string find_path(Session& s, const torch::nn::Module& parent,
                             const std::string& parent_path, const torch::nn::Module* child) {
  if (const std::string* p = s.known_paths.find(child)) return *p;
  for (const auto& item : parent.named_modules("", /*include_self=*/false))
    s.known_paths.try_emplace(item.value().get(), join_path(parent_path, item.key()));
  if (const std::string* p = s.known_paths.find(child)) return *p;
  return {};
}

/// Parameters below `m` (all, trainable), summed bottom-up over its children and memoized, so
/// each module's own parameters are read once per session. A tensor registered in two
/// submodules counts in each; `Trace::total_params` counts it once.
inline std::pair<std::uint64_t, std::uint64_t> count_parameters(Session& s,
                                                                const torch::nn::Module& m) {
  if (const auto* n = s.param_counts.find(&m)) return *n;
  std::pair<std::uint64_t, std::uint64_t> n{0, 0};
  for (const auto& p : m.parameters(/*recurse=*/false)) {
    const auto k = static_cast<std::uint64_t>(p.numel());
    n.first += k;
    if (p.requires_grad()) n.second += k;
  }
  for (const auto& child : m.children()) {
    const auto c = count_parameters(s, *child);
    n.first += c.first;
    n.second += c.second;
  }
  s.param_counts.try_emplace(&m, n);
  return n;
}

/// Fills parameter information: own parameters by name, and the recursive counts.
inline void describe_parameters(Session& s, const torch::nn::Module& m, ModuleInfo& info) {
  for (const auto& p : m.named_parameters(/*recurse=*/false)) {
    ParamInfo pi;
    pi.name = p.key();
    const auto sizes = p.value().sizes();
    pi.shape.assign(sizes.begin(), sizes.end());
    pi.numel = static_cast<std::uint64_t>(p.value().numel());
    pi.trainable = p.value().requires_grad();
    info.params.push_back(std::move(pi));
  }
  std::tie(info.param_count, info.trainable_count) = count_parameters(s, m);
}

/// Fills `info.attributes` with torchinfo's `kernel_size` and `groups` where `m` has them
/// (convolutions and poolings).
inline void describe_attributes(const torch::nn::Module& m, ModuleInfo& info) {
  auto conv = [&](const auto* c) {
    if (c == nullptr) return false;
    info.attributes.emplace_back("kernel_size", sizes_string(*c->options.kernel_size()));
    info.attributes.emplace_back("groups", std::to_string(c->options.groups()));
    return true;
  };
  auto pool = [&](const auto* p) {
    if (p == nullptr) return false;
    info.attributes.emplace_back("kernel_size", pool_kernel_string(*p->options.kernel_size()));
    return true;
  };
  namespace nn = torch::nn;
  conv(dynamic_cast<const nn::Conv1dImpl*>(&m)) || conv(dynamic_cast<const nn::Conv2dImpl*>(&m)) ||
      conv(dynamic_cast<const nn::Conv3dImpl*>(&m)) ||
      conv(dynamic_cast<const nn::ConvTranspose1dImpl*>(&m)) ||
      conv(dynamic_cast<const nn::ConvTranspose2dImpl*>(&m)) ||
      conv(dynamic_cast<const nn::ConvTranspose3dImpl*>(&m)) ||
      pool(dynamic_cast<const nn::MaxPool1dImpl*>(&m)) ||
      pool(dynamic_cast<const nn::MaxPool2dImpl*>(&m)) ||
      pool(dynamic_cast<const nn::MaxPool3dImpl*>(&m)) ||
      pool(dynamic_cast<const nn::AvgPool1dImpl*>(&m)) ||
      pool(dynamic_cast<const nn::AvgPool2dImpl*>(&m)) ||
      pool(dynamic_cast<const nn::AvgPool3dImpl*>(&m));
}

/// The id of module object `m` in this session, registering it on first sight. Its path is
/// found from the module running now (the parent) by pointer identity.
inline ModuleId module_id(Session& s, const torch::nn::Module& m, bool leaf) {
  if (const ModuleId* id = s.modules.find(&m)) return *id;
  ModuleInfo info;
  info.class_name = class_name_of(m);
  info.leaf = leaf;
  const NodeId parent_call = s.parent();
  if (!parent_call.valid()) {
    info.name = info.class_name;
  } else {
    const std::string& parent_path = s.graph.module_of(parent_call).path;
    const auto* parent_module = static_cast<const torch::nn::Module*>(
        s.module_objects.at(s.graph.call(parent_call).module.value));
    info.path = find_path(s, *parent_module, parent_path, &m);
    if (info.path.empty())
      info.path = join_path(parent_path, "(unregistered " + info.class_name + ")");
    const auto dot = info.path.rfind('.');
    info.name = dot == std::string::npos ? info.path : info.path.substr(dot + 1);
  }
  describe_parameters(s, m, info);
  describe_attributes(m, info);
  if (!leaf) learn_child_paths(s, m, info.path);
  const ModuleId id = s.graph.add_module(std::move(info));
  s.modules.try_emplace(&m, id);
  s.module_objects.push_back(&m);
  return id;
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
