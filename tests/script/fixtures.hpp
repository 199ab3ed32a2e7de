#pragma once
/// The TorchScript test models (written by make_models.py at test time) and helpers over traces.

#include <recorder/script.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#ifndef RECORDER_SCRIPT_MODELS
#error "RECORDER_SCRIPT_MODELS must name the folder make_models.py writes"
#endif

namespace script_test {

/// The path of test file `name` ("resnet18_script.pt").
inline std::filesystem::path model_path(const std::string& name) {
  return std::filesystem::path(RECORDER_SCRIPT_MODELS) / name;
}

/// TorchScript model `name`, loaded the way users load theirs.
inline torch::jit::Module load(const std::string& name) {
  return recorder::load_model(model_path(name));
}

/// A tensor saved by make_models.py with torch.save.
inline at::Tensor saved_tensor(const std::string& name) {
  std::ifstream in(model_path(name), std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  return torch::pickle_load(bytes).toTensor();
}

/// The text of a file.
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// "path#call Class depth-index [leaf]" for every module call, in call order ("" is the root).
inline std::vector<std::string> calls(const recorder::Trace& t) {
  std::vector<std::string> out;
  for (auto c : recorder::views::module_calls(t.graph)) {
    const auto& m = t.graph.module_of(c);
    std::string s = m.path + "#" + std::to_string(t.graph.call(c).call_index) + " " + m.class_name +
                    " " + recorder::depth_index_label(t.graph, c);
    if (m.leaf) s += " leaf";
    if (t.graph.node(c).failed) s += " FAILED";
    out.push_back(std::move(s));
  }
  return out;
}

/// "op@path" for every function node ("add_@layer1.0": in place, inside module layer1.0).
inline std::vector<std::string> functions(const recorder::Trace& t) {
  std::vector<std::string> out;
  for (auto f : recorder::views::of_kind(t.graph, recorder::NodeKind::function)) {
    const auto& n = t.graph.node(f);
    std::string s(t.graph.function(f).op);
    if (n.inplace) s += "_";
    s += "@" + (n.parent.valid() ? t.graph.module_of(n.parent).path : std::string("?"));
    out.push_back(std::move(s));
  }
  return out;
}

/// The number of nodes of kind `k`.
inline std::size_t count(const recorder::Trace& t, recorder::NodeKind k) {
  return static_cast<std::size_t>(recorder::views::count(t.graph, k));
}

}  // namespace script_test
