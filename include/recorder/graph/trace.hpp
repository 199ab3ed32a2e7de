#pragma once
/// A finished (or interrupted) recording: the graph plus what is known about the whole model.

#include <recorder/graph/graph.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace recorder {

/// Where and why a traced forward stopped.
struct Failure {
  std::string op{};  ///< the op that threw ("matmul"), or empty if it was a module's forward
  std::string module_path{};   ///< path of the innermost module call that was running ("" = root)
  std::string module_class{};  ///< its class
  std::string message{};       ///< the original error message
};

/// The result of tracing one forward pass. Renderable whether or not the forward completed.
struct Trace {
  Graph graph;
  std::string model_name{};            ///< the root module's class name
  NodeId root;                         ///< the root module call
  std::uint64_t total_params = 0;      ///< every parameter of the model, shared ones once
  std::uint64_t trainable_params = 0;  ///< the part that requires grad
  /// The bytes of every parameter of the model, shared ones once (torchinfo's `Params size`).
  std::uint64_t param_bytes = 0;
  /// The libtorch that ran (or read) the model, "1.13", "2.13"; empty when not known.
  std::string torch_version{};
  std::optional<Failure> failure{};  ///< set when the forward threw
  /// What the tracer warned about while recording (a frozen TorchScript model traced without
  /// its modules, ...), in order; each was also passed to `TraceOptions::on_warning`.
  std::vector<std::string> warnings{};

  bool complete() const noexcept { return !failure.has_value(); }
};

}  // namespace recorder
