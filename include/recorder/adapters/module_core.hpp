#pragma once
/// The non-template core of the module adapters: naming modules, entering and leaving calls.

#include <recorder/tensor/session.hpp>

#include <torch/nn/module.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
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

/// The name under which `parent` registered `child` (pointer identity), or "" if it did not.
/// Looks at direct children first, then at deeper descendants (a relative dotted path).
inline std::string registered_name(const torch::nn::Module& parent, const torch::nn::Module* child) {
  for (const auto& item : parent.named_children())
    if (item.value().get() == child) return item.key();
  for (const auto& item : parent.named_modules("", /*include_self=*/false))
    if (item.value().get() == child) return item.key();
  return {};
}

/// Fills parameter information: own parameters, and recursive counts with shared tensors once.
inline void describe_parameters(const torch::nn::Module& m, ModuleInfo& info) {
  for (const auto& p : m.named_parameters(/*recurse=*/false)) {
    ParamInfo pi;
    pi.name = p.key();
    const auto sizes = p.value().sizes();
    pi.shape.assign(sizes.begin(), sizes.end());
    pi.numel = static_cast<std::uint64_t>(p.value().numel());
    pi.trainable = p.value().requires_grad();
    info.params.push_back(std::move(pi));
  }
  std::unordered_set<const void*> seen;
  for (const auto& p : m.parameters(/*recurse=*/true)) {
    if (!seen.insert(p.unsafeGetTensorImpl()).second) continue;
    const auto n = static_cast<std::uint64_t>(p.numel());
    info.param_count += n;
    if (p.requires_grad()) info.trainable_count += n;
  }
}

/// The id of module object `m` in this session, registering it on first sight. Its path is
/// found from the module running now (the parent) by pointer identity, once per module.
inline ModuleId module_id(Session& s, const torch::nn::Module& m, bool leaf) {
  if (auto it = s.modules.find(&m); it != s.modules.end()) return it->second;
  ModuleInfo info;
  info.class_name = class_name_of(m);
  info.leaf = leaf;
  const NodeId parent_call = s.parent();
  if (!parent_call.valid()) {
    info.name = info.class_name;
  } else {
    const ModuleInfo& parent = s.graph.module_of(parent_call);
    const auto* parent_module =
        static_cast<const torch::nn::Module*>(s.module_objects.at(s.graph.call(parent_call).module.value));
    std::string name = registered_name(*parent_module, &m);
    if (name.empty()) name = "(unregistered " + info.class_name + ")";
    info.path = parent.path.empty() ? name : parent.path + "." + name;
    const auto dot = name.rfind('.');
    info.name = dot == std::string::npos ? name : name.substr(dot + 1);
  }
  describe_parameters(m, info);
  const ModuleId id = s.graph.add_module(std::move(info));
  s.modules.emplace(&m, id);
  s.module_objects.push_back(&m);
  return id;
}

/// Opens a call of module `m` consuming `inputs` (a leaf also gets edges input -> call).
inline NodeId enter_call(Session& s, ModuleId m, std::span<const NodeId> inputs, bool leaf) {
  const std::uint16_t depth = s.stack.empty() ? std::uint16_t{0} : s.depth();
  const NodeId call = s.graph.add_module_call(m, s.parent(), depth,
                                              std::vector<NodeId>(inputs.begin(), inputs.end()));
  if (leaf)
    for (NodeId in : inputs) s.graph.add_edge(in, call);
  s.stack.push_back(call);
  return call;
}

/// Closes module call `call` (it must be the innermost open one).
inline void leave_call(Session& s, NodeId call) {
  while (!s.stack.empty()) {
    const NodeId top = s.stack.back();
    s.stack.pop_back();
    if (top == call) break;
  }
}

/// Called inside a `catch` around a module's forward: marks the call failed, records where
/// it failed (if no deeper op did), closes it and throws a `TraceError`.
[[noreturn]] inline void fail_call(Session& s, NodeId call) {
  s.graph.set_failed(call);
  try {
    throw_failure(s, "");
  } catch (...) {
    leave_call(s, call);
    throw;
  }
}

}  // namespace recorder::detail
