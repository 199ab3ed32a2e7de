#pragma once
/// Large synthetic traces for render scaling tests and benchmarks: a chain with skip connections.

#include <recorder/graph/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace recorder::testing {

/// A trace whose picture at the default options has `ops + 2` nodes: one input, `ops` ops and
/// one output, built with the `Graph` API as the tracer would.
///
/// The root `Chain` holds composite blocks `blocks.<j>` (class `Block`, depth 1) of up to 8 ops
/// each: leaf `Linear` calls `blocks.<j>.fc<k>` alternating with `relu` functions, and every
/// fourth op an in-place `add` whose second operand is the tensor of four ops earlier (a skip
/// connection, so the layout is not a plain chain). Tensors are [8, 64], intermediate ones
/// recorded as the tracer does (about 2 recorded nodes per op).
inline Trace synthetic_chain(std::size_t ops) {
  Trace t;
  t.model_name = "Chain";
  Graph& g = t.graph;
  ModuleInfo root_info;
  root_info.name = "Chain";
  root_info.class_name = "Chain";
  root_info.leaf = false;
  const ModuleId root_module = g.add_module(root_info);
  const std::vector<std::int64_t> dims{8, 64};
  const Shape shape(dims);
  const std::string_view f32 = "Float", cpu = "cpu";

  const NodeId x = g.add_tensor(NodeKind::input, {}, 0, shape, f32, cpu, {}, g.intern("x"));
  const NodeId root = g.add_module_call(root_module, {}, 0, {x});
  t.root = root;
  std::vector<NodeId> history{x};  // the tensor after each op
  NodeId h = x;
  NodeId block{};
  std::uint32_t block_index = 0;
  std::vector<NodeId> block_inputs;
  const auto tensor = [&](NodeId parent, NodeId producer) {
    return g.add_tensor(NodeKind::tensor, parent, 2, shape, f32, cpu, producer);
  };
  for (std::size_t i = 0; i < ops; ++i) {
    if (i % 8 == 0) {
      if (block.valid()) g.set_call_outputs(block, {h});
      ModuleInfo b;
      b.path = "blocks." + std::to_string(block_index);
      b.name = std::to_string(block_index);
      b.class_name = "Block";
      b.leaf = false;
      block = g.add_module_call(g.add_module(std::move(b)), root, 1, {h});
      ++block_index;
    }
    NodeId out;
    if (i % 4 == 3 && history.size() > 4) {
      const NodeId f = g.add_function("add", block, 2, true);
      g.add_edge(h, f);
      g.add_edge(history[history.size() - 4], f);
      out = tensor(block, f);
      g.add_edge(f, out);
    } else if (i % 2 == 1) {
      const NodeId f = g.add_function("relu", block, 2);
      g.add_edge(h, f);
      out = tensor(block, f);
      g.add_edge(f, out);
    } else {
      ModuleInfo m;
      m.path = "blocks." + std::to_string(block_index - 1) + ".fc" + std::to_string(i % 8);
      m.name = "fc" + std::to_string(i % 8);
      m.class_name = "Linear";
      m.params = {ParamInfo{"weight", {64, 64}, 4096, true}, ParamInfo{"bias", {64}, 64, true}};
      m.param_count = m.trainable_count = 4160;
      t.total_params += 4160;
      t.trainable_params += 4160;
      const NodeId call = g.add_module_call(g.add_module(std::move(m)), block, 2, {h});
      g.add_edge(h, call);
      out = tensor(block, call);
      g.add_edge(call, out);
      g.set_call_outputs(call, {out});
    }
    history.push_back(out);
    h = out;
  }
  if (block.valid()) g.set_call_outputs(block, {h});
  g.set_call_outputs(root, {h});
  const NodeId y = g.add_tensor(NodeKind::output, {}, 0, shape, f32, cpu);
  g.add_edge(h, y);
  return t;
}

}  // namespace recorder::testing
