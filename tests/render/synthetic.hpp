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

/// A transformer-like trace of `layers` encoder layers, 4 nesting levels deep, for the viewer:
/// the root `Encoder` calls `layers.<i>` (class `EncoderLayer`, depth 1), each calling `attn`
/// (`Attention`) and `mlp` (`MLP`) at depth 2, which call leaf `Linear`s at depth 3
/// (`q_proj`, `k_proj`, `v_proj`, `o_proj`; `fc1`, `fc2`). Between them, the functions a real
/// layer records: `layer_norm` twice and two residual `add`s in the layer; `view`, `transpose`
/// (x3), `matmul`, `div`, `softmax`, `matmul`, `transpose`, `reshape` in the attention; `gelu` in
/// the MLP. Every op produces one recorded tensor: 45 recorded nodes per layer, plus 3.
inline Trace synthetic_transformer(std::size_t layers) {
  Trace t;
  t.model_name = "Encoder";
  Graph& g = t.graph;
  const std::vector<std::int64_t> dims{1, 128, 256};
  const Shape shape(dims);
  const std::string_view f32 = "Float", cpu = "cpu";
  const auto module = [&](std::string path, std::string name, std::string cls, bool leaf,
                          std::uint64_t params) {
    ModuleInfo m;
    m.path = std::move(path);
    m.name = std::move(name);
    m.class_name = std::move(cls);
    m.leaf = leaf;
    m.param_count = m.trainable_count = params;
    return g.add_module(std::move(m));
  };
  const ModuleId root_module = module("", "Encoder", "Encoder", false, 0);
  const NodeId x = g.add_tensor(NodeKind::input, {}, 0, shape, f32, cpu, {}, g.intern("x"));
  const NodeId root = g.add_module_call(root_module, {}, 0, {x});
  t.root = root;
  // One op inside call `parent` (at `depth`): a function, or a leaf Linear call.
  const auto op = [&](NodeId parent, std::uint16_t depth, std::string_view fn,
                      std::vector<NodeId> in) {
    const NodeId f = g.add_function(fn, parent, depth);
    for (NodeId i : in) g.add_edge(i, f);
    const NodeId out = g.add_tensor(NodeKind::tensor, parent, depth, shape, f32, cpu, f);
    g.add_edge(f, out);
    return out;
  };
  const auto linear = [&](const std::string& prefix, const char* name, NodeId parent, NodeId in) {
    constexpr std::uint64_t params = 256 * 256 + 256;
    const NodeId call =
        g.add_module_call(module(prefix + name, name, "Linear", true, params), parent, 3, {in});
    t.total_params += params;
    t.trainable_params += params;
    g.add_edge(in, call);
    const NodeId out = g.add_tensor(NodeKind::tensor, parent, 3, shape, f32, cpu, call);
    g.add_edge(call, out);
    g.set_call_outputs(call, {out});
    return out;
  };
  NodeId h = x;
  for (std::size_t i = 0; i < layers; ++i) {
    const std::string p = "layers." + std::to_string(i);
    const NodeId layer = g.add_module_call(
        module(p, std::to_string(i), "EncoderLayer", false, 6 * 65792), root, 1, {h});
    const NodeId n1 = op(layer, 2, "layer_norm", {h});
    const NodeId attn = g.add_module_call(
        module(p + ".attn", "attn", "Attention", false, 4 * 65792), layer, 2, {n1});
    const NodeId q = linear(p + ".attn.", "q_proj", attn, n1);
    const NodeId k = linear(p + ".attn.", "k_proj", attn, n1);
    const NodeId v = linear(p + ".attn.", "v_proj", attn, n1);
    const NodeId qv = op(attn, 3, "view", {q});
    const NodeId qt = op(attn, 3, "transpose", {qv});
    const NodeId kt = op(attn, 3, "transpose", {k});
    const NodeId vt = op(attn, 3, "transpose", {v});
    const NodeId s = op(attn, 3, "matmul", {qt, kt});
    const NodeId d = op(attn, 3, "div", {s});
    const NodeId a = op(attn, 3, "softmax", {d});
    const NodeId c = op(attn, 3, "matmul", {a, vt});
    const NodeId ct = op(attn, 3, "transpose", {c});
    const NodeId r = op(attn, 3, "reshape", {ct});
    const NodeId o = linear(p + ".attn.", "o_proj", attn, r);
    g.set_call_outputs(attn, {o});
    const NodeId res1 = op(layer, 2, "add", {h, o});
    const NodeId n2 = op(layer, 2, "layer_norm", {res1});
    const NodeId mlp =
        g.add_module_call(module(p + ".mlp", "mlp", "MLP", false, 2 * 65792), layer, 2, {n2});
    const NodeId f1 = linear(p + ".mlp.", "fc1", mlp, n2);
    const NodeId ge = op(mlp, 3, "gelu", {f1});
    const NodeId f2 = linear(p + ".mlp.", "fc2", mlp, ge);
    g.set_call_outputs(mlp, {f2});
    h = op(layer, 2, "add", {res1, f2});
    g.set_call_outputs(layer, {h});
  }
  g.set_call_outputs(root, {h});
  const NodeId y = g.add_tensor(NodeKind::output, {}, 0, shape, f32, cpu);
  g.add_edge(h, y);
  return t;
}

}  // namespace recorder::testing
