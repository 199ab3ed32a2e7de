#pragma once
/// Hand-built traces shaped like the tracer's output, shared by the render tests.

#include <recorder/graph/trace.hpp>
#include <recorder/render/dot_styler.hpp>
#include <recorder/render/visible.hpp>

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

// Printers for Boost.Test messages (test-only; Boost.Test finds them by ADL).
inline std::ostream& boost_test_print_type(std::ostream& os, NodeKind k) {
  return os << to_string(k);
}
inline std::ostream& boost_test_print_type(std::ostream& os, const VisibleEdge& e) {
  return os << e.from << " -> " << e.to << " x" << e.count;
}

}  // namespace recorder

namespace recorder::testing {

using Dims = std::vector<std::int64_t>;

/// Records a trace the way the tracer does: module calls nest on a stack, leaf calls and
/// functions get tensor edges, composite calls only their input and output lists.
class Builder {
 public:
  explicit Builder(std::string model_name) { trace.model_name = std::move(model_name); }
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  /// Registers a module; its parameters are one weight per entry of `params`, and
  /// `nested_params` more are counted as registered below it (as the tracer sums them).
  ModuleId module(std::string path, std::string class_name, bool leaf,
                  std::vector<std::pair<std::string, Dims>> params = {},
                  std::uint64_t nested_params = 0) {
    ModuleInfo m;
    const auto dot = path.rfind('.');
    m.name = path.empty() ? class_name : (dot == std::string::npos ? path : path.substr(dot + 1));
    m.path = std::move(path);
    m.class_name = std::move(class_name);
    m.leaf = leaf;
    for (auto& [name, shape] : params) {
      std::uint64_t numel = 1;
      for (auto d : shape) numel *= static_cast<std::uint64_t>(d);
      m.params.push_back(ParamInfo{name, shape, numel, true});
      m.param_count += numel;
      m.trainable_count += numel;
      trace.total_params += numel;
      trace.trainable_params += numel;
      trace.param_bytes += numel * 4;
    }
    m.param_count += nested_params;
    m.trainable_count += nested_params;
    return g().add_module(std::move(m));
  }

  /// A model input (depth 0, no parent).
  NodeId input(const Dims& shape, std::string_view name = {}) {
    return g().add_tensor(NodeKind::input, {}, 0, shape, "Float", "cpu", {}, g().intern(name));
  }

  /// A constant operand recorded in the current call.
  NodeId constant(const Dims& shape) {
    return g().add_tensor(NodeKind::constant, top(), depth(), shape, "Float", "cpu");
  }

  /// Starts a composite call (the root when nothing is running).
  NodeId begin(ModuleId m, std::vector<NodeId> inputs) {
    const NodeId call = g().add_module_call(m, top(), depth(), std::move(inputs));
    if (!trace.root.valid()) trace.root = call;
    stack_.push_back(call);
    return call;
  }

  /// Ends the innermost composite call with its outputs.
  void end(std::vector<NodeId> outputs) {
    g().set_call_outputs(stack_.back(), std::move(outputs));
    stack_.pop_back();
  }

  /// Marks the innermost running call failed and leaves it without outputs.
  void fail() {
    g().set_failed(stack_.back());
    stack_.pop_back();
  }

  /// A leaf module call: edges in -> call -> new tensor.
  NodeId leaf(ModuleId m, NodeId in, const Dims& out_shape) {
    const NodeId call = g().add_module_call(m, top(), depth(), {in});
    g().add_edge(in, call);
    const NodeId out = tensor(out_shape, call);
    g().add_edge(call, out);
    g().set_call_outputs(call, {out});
    last_call = call;
    return out;
  }

  /// A leaf module call with several inputs and outputs (`LSTMCell(x, (h, c))`): an edge from
  /// each input, one new tensor per output shape.
  std::vector<NodeId> leaf(ModuleId m, const std::vector<NodeId>& ins,
                           const std::vector<Dims>& out_shapes) {
    const NodeId call = g().add_module_call(m, top(), depth(), ins);
    for (NodeId in : ins) g().add_edge(in, call);
    std::vector<NodeId> outs;
    for (const Dims& shape : out_shapes) {
      outs.push_back(tensor(shape, call));
      g().add_edge(call, outs.back());
    }
    g().set_call_outputs(call, outs);
    last_call = call;
    return outs;
  }

  /// Starts a leaf call whose insides an op-level observer records: edge in -> call, and the
  /// functions recorded until `close_leaf` are its children.
  NodeId open_leaf(ModuleId m, NodeId in) {
    const NodeId call = g().add_module_call(m, top(), depth(), {in});
    g().add_edge(in, call);
    stack_.push_back(call);
    return call;
  }

  /// Ends the leaf call opened last; its output is `out`, a tensor an op inside produced (as
  /// the observer records it).
  NodeId close_leaf(NodeId out) {
    g().set_call_outputs(stack_.back(), {out});
    last_call = stack_.back();
    stack_.pop_back();
    return out;
  }

  /// Ends the leaf call opened last: its output is a new tensor produced by the call itself.
  NodeId close_leaf_made_by_call(const Dims& out_shape) {
    const NodeId call = stack_.back();
    stack_.pop_back();
    const NodeId out = tensor(out_shape, call);
    g().add_edge(call, out);
    g().set_call_outputs(call, {out});
    last_call = call;
    return out;
  }

  /// A function call: edges from each input, one produced tensor.
  NodeId fn(std::string_view op, std::vector<NodeId> ins, const Dims& out_shape,
            bool inplace = false) {
    const NodeId f = g().add_function(g().intern(op), top(), depth(), inplace);
    for (NodeId in : ins) g().add_edge(in, f);
    const NodeId out = tensor(out_shape, f);
    g().add_edge(f, out);
    last_call = f;
    return out;
  }

  /// A model output fed by `t`.
  NodeId output(NodeId t) {
    const NodeId o = g().add_tensor(NodeKind::output, {}, 0, g().shape(t), "Float", "cpu", {}, {});
    g().add_edge(t, o);
    return o;
  }

  Graph& g() { return trace.graph; }

  Trace trace;
  NodeId last_call;  ///< the last leaf call or function recorded

 private:
  NodeId top() const { return stack_.empty() ? NodeId{} : stack_.back(); }
  std::uint16_t depth() const { return static_cast<std::uint16_t>(stack_.size()); }
  NodeId tensor(const Dims& shape, NodeId producer) {
    return g().add_tensor(NodeKind::tensor, top(), depth(), shape, "Float", "cpu", producer);
  }

  std::vector<NodeId> stack_;
};

/// input (1, 128) -> Linear fc1 -> ReLU relu -> Linear fc2 -> output, in a composite root.
inline Trace mlp() {
  Builder b("MLP");
  const ModuleId root = b.module("", "MLP", false);
  const ModuleId fc1 = b.module("fc1", "Linear", true, {{"weight", {64, 128}}, {"bias", {64}}});
  const ModuleId relu = b.module("relu", "ReLU", true);
  const ModuleId fc2 = b.module("fc2", "Linear", true, {{"weight", {10, 64}}, {"bias", {10}}});
  const NodeId x = b.input({1, 128}, "x");
  b.begin(root, {x});
  NodeId h = b.leaf(fc1, x, {1, 64});
  h = b.leaf(relu, h, {1, 64});
  h = b.leaf(fc2, h, {1, 10});
  b.end({h});
  b.output(h);
  return std::move(b.trace);
}

/// One torchvision BasicBlock `path` (composite, depth 2 inside a Sequential at depth 1):
/// conv1, bn1, relu, conv2, bn2, [downsample: Sequential(conv, bn)], add_ (function), relu.
inline NodeId basic_block(Builder& b, const std::string& path, NodeId x, const Dims& in_shape,
                          const Dims& out_shape, bool downsample) {
  const std::int64_t ci = in_shape[1], co = out_shape[1];
  const ModuleId block = b.module(path, "BasicBlock", false);
  const ModuleId conv1 = b.module(path + ".conv1", "Conv2d", true, {{"weight", {co, ci, 3, 3}}});
  const ModuleId bn1 =
      b.module(path + ".bn1", "BatchNorm2d", true, {{"weight", {co}}, {"bias", {co}}});
  const ModuleId relu = b.module(path + ".relu", "ReLU", true);
  const ModuleId conv2 = b.module(path + ".conv2", "Conv2d", true, {{"weight", {co, co, 3, 3}}});
  const ModuleId bn2 =
      b.module(path + ".bn2", "BatchNorm2d", true, {{"weight", {co}}, {"bias", {co}}});
  ModuleId ds, ds_conv, ds_bn;
  if (downsample) {
    ds = b.module(path + ".downsample", "Sequential", false);
    ds_conv = b.module(path + ".downsample.0", "Conv2d", true, {{"weight", {co, ci, 1, 1}}});
    ds_bn =
        b.module(path + ".downsample.1", "BatchNorm2d", true, {{"weight", {co}}, {"bias", {co}}});
  }
  b.begin(block, {x});
  NodeId h = b.leaf(conv1, x, out_shape);
  h = b.leaf(bn1, h, out_shape);
  h = b.leaf(relu, h, out_shape);
  h = b.leaf(conv2, h, out_shape);
  h = b.leaf(bn2, h, out_shape);
  NodeId identity = x;
  if (downsample) {
    b.begin(ds, {x});
    identity = b.leaf(ds_conv, x, out_shape);
    identity = b.leaf(ds_bn, identity, out_shape);
    b.end({identity});
  }
  h = b.fn("add", {h, identity}, out_shape, true);
  h = b.leaf(relu, h, out_shape);
  b.end({h});
  return h;
}

/// A small residual net: conv1, bn1, relu, layer1 = Sequential(BasicBlock with downsample,
/// BasicBlock without), flatten (function), fc.
inline Trace residual() {
  Builder b("MiniResNet");
  const ModuleId root = b.module("", "MiniResNet", false);
  const ModuleId conv1 = b.module("conv1", "Conv2d", true, {{"weight", {8, 3, 3, 3}}});
  const ModuleId bn1 = b.module("bn1", "BatchNorm2d", true, {{"weight", {8}}, {"bias", {8}}});
  const ModuleId relu = b.module("relu", "ReLU", true);
  const ModuleId layer1 = b.module("layer1", "Sequential", false);
  const ModuleId fc = b.module("fc", "Linear", true, {{"weight", {10, 256}}, {"bias", {10}}});
  const NodeId x = b.input({1, 3, 8, 8}, "x");
  b.begin(root, {x});
  NodeId h = b.leaf(conv1, x, {1, 8, 8, 8});
  h = b.leaf(bn1, h, {1, 8, 8, 8});
  h = b.leaf(relu, h, {1, 8, 8, 8});
  const NodeId l_in = h;
  b.begin(layer1, {l_in});
  h = basic_block(b, "layer1.0", h, {1, 8, 8, 8}, {1, 16, 4, 4}, true);
  h = basic_block(b, "layer1.1", h, {1, 16, 4, 4}, {1, 16, 4, 4}, false);
  b.end({h});
  h = b.fn("flatten", {h}, {1, 256});
  h = b.leaf(fc, h, {1, 10});
  b.end({h});
  b.output(h);
  return std::move(b.trace);
}

/// torchvision's resnet18 at (1, 3, 224, 224), recorded the way the tracer does.
inline Trace resnet18() {
  Builder b("ResNet");
  const ModuleId root = b.module("", "ResNet", false);
  const ModuleId conv1 = b.module("conv1", "Conv2d", true, {{"weight", {64, 3, 7, 7}}});
  const ModuleId bn1 = b.module("bn1", "BatchNorm2d", true, {{"weight", {64}}, {"bias", {64}}});
  const ModuleId relu = b.module("relu", "ReLU", true);
  const ModuleId maxpool = b.module("maxpool", "MaxPool2d", true);
  std::vector<ModuleId> layers;
  for (int i = 1; i <= 4; ++i)
    layers.push_back(b.module("layer" + std::to_string(i), "Sequential", false));
  const ModuleId avgpool = b.module("avgpool", "AdaptiveAvgPool2d", true);
  const ModuleId fc = b.module("fc", "Linear", true, {{"weight", {1000, 512}}, {"bias", {1000}}});

  const NodeId x = b.input({1, 3, 224, 224});
  b.begin(root, {x});
  NodeId h = b.leaf(conv1, x, {1, 64, 112, 112});
  h = b.leaf(bn1, h, {1, 64, 112, 112});
  h = b.leaf(relu, h, {1, 64, 112, 112});
  h = b.leaf(maxpool, h, {1, 64, 56, 56});
  Dims shape{1, 64, 56, 56};
  for (int i = 0; i < 4; ++i) {
    const std::string path = "layer" + std::to_string(i + 1);
    Dims out = shape;
    if (i > 0) out = {1, shape[1] * 2, shape[2] / 2, shape[3] / 2};
    b.begin(layers[static_cast<std::size_t>(i)], {h});
    h = basic_block(b, path + ".0", h, shape, out, i > 0);
    h = basic_block(b, path + ".1", h, out, out, false);
    b.end({h});
    shape = out;
  }
  h = b.leaf(avgpool, h, {1, 512, 1, 1});
  h = b.fn("flatten", {h}, {1, 512});
  h = b.leaf(fc, h, {1, 1000});
  b.end({h});
  b.output(h);
  return std::move(b.trace);
}

/// A forward that threw in `block.fc2` (a Linear inside a composite): the three running calls
/// are failed without outputs, the trace has `failure` set and no output node.
inline Trace failed() {
  Builder b("Net");
  const ModuleId root = b.module("", "Net", false);
  const ModuleId fc1 = b.module("fc1", "Linear", true, {{"weight", {64, 128}}, {"bias", {64}}});
  const ModuleId block = b.module("block", "Block", false);
  const ModuleId fc2 =
      b.module("block.fc2", "Linear", true, {{"weight", {10, 32}}, {"bias", {10}}});
  const NodeId x = b.input({1, 128}, "x");
  b.begin(root, {x});
  NodeId h = b.leaf(fc1, x, {1, 64});
  h = b.fn("relu", {h}, {1, 64});
  b.begin(block, {h});
  const NodeId call = b.begin(fc2, {h});
  b.g().add_edge(h, call);
  b.fail();  // block.fc2
  b.fail();  // block
  b.fail();  // the root call
  b.trace.failure = Failure{"addmm", "block.fc2", "Linear",
                            "mat1 and mat2 shapes cannot be multiplied (1x64 and 32x10)"};
  return std::move(b.trace);
}

/// torchview's `SimpleRNN` (test_roll_recursive_net): an `LSTMCell(3, 2)` and a `LeakyReLU`
/// looped 4 times over input (2, 3); hx and cx are made inside forward (constants), the cell
/// gets the input at every step, `hx = act(hx)` feeds the next step and the last one is the
/// output.
inline Trace recursive_net() {
  Builder b("RecursiveNet");
  const ModuleId root = b.module("", "RecursiveNet", false);
  const ModuleId cell =
      b.module("cell", "LSTMCell", true,
               {{"weight_ih", {8, 3}}, {"weight_hh", {8, 2}}, {"bias_ih", {8}}, {"bias_hh", {8}}});
  const ModuleId act = b.module("act", "LeakyReLU", true);
  const NodeId x = b.input({2, 3});
  b.begin(root, {x});
  NodeId hx = b.constant({2, 2});
  NodeId cx = b.constant({2, 2});
  for (int step = 0; step < 4; ++step) {
    const std::vector<NodeId> hc = b.leaf(cell, {x, hx, cx}, {{2, 2}, {2, 2}});
    hx = b.leaf(act, hc[0], {2, 2});
    cx = hc[1];
  }
  b.end({hx});
  b.output(hx);
  return std::move(b.trace);
}

/// The MLP as an op-level observer records it: `fc1` (Linear) holds `t` and `addmm`, `relu`
/// (ReLU) holds nothing, `fc2` (Linear) holds `linear`; functions inside a leaf consume the
/// leaf's input node, and a leaf's output is the tensor node its last op produced.
inline Trace observed_mlp() {
  Builder b("MLP");
  const ModuleId root = b.module("", "MLP", false);
  const ModuleId fc1 = b.module("fc1", "Linear", true, {{"weight", {64, 128}}, {"bias", {64}}});
  const ModuleId relu = b.module("relu", "ReLU", true);
  const ModuleId fc2 = b.module("fc2", "Linear", true, {{"weight", {10, 64}}, {"bias", {10}}});
  const NodeId x = b.input({1, 128}, "x");
  b.begin(root, {x});
  b.open_leaf(fc1, x);
  const NodeId wt = b.fn("t", {b.constant({64, 128})}, {128, 64});
  NodeId h = b.close_leaf(b.fn("addmm", {x, wt}, {1, 64}));
  h = b.leaf(relu, h, {1, 64});
  b.open_leaf(fc2, h);
  h = b.close_leaf(b.fn("linear", {h}, {1, 10}));
  b.end({h});
  b.output(h);
  return std::move(b.trace);
}

/// A block with parameters reused: `Net` applies `block` (Block: Linear `fc` + ReLU `act`)
/// three times, then `head` (Linear). An LSTM-style leaf `split` returning two tensors that
/// both feed one `add` makes a parallel edge.
inline Trace reused_block() {
  Builder b("Net");
  const ModuleId root = b.module("", "Net", false);
  const ModuleId block = b.module("block", "Block", false, {}, 16 * 16 + 16);
  const ModuleId fc = b.module("block.fc", "Linear", true, {{"weight", {16, 16}}, {"bias", {16}}});
  const ModuleId act = b.module("block.act", "ReLU", true);
  const ModuleId split = b.module("split", "Split", true);
  const ModuleId head = b.module("head", "Linear", true, {{"weight", {4, 8}}, {"bias", {4}}});
  const NodeId x = b.input({1, 16}, "x");
  b.begin(root, {x});
  NodeId h = x;
  for (int i = 0; i < 3; ++i) {
    b.begin(block, {h});
    h = b.leaf(fc, h, {1, 16});
    h = b.leaf(act, h, {1, 16});
    b.end({h});
  }
  const std::vector<NodeId> halves = b.leaf(split, {h}, {{1, 8}, {1, 8}});
  h = b.fn("add", {halves[0], halves[1]}, {1, 8});
  h = b.leaf(head, h, {1, 4});
  b.end({h});
  b.output(h);
  return std::move(b.trace);
}

/// Names that break naive DOT, HTML and JSON writers.
inline Trace hostile() {
  Builder b("My \"Net\"\\\n<x>");
  const ModuleId root = b.module("", "My \"Net\"\\\n<x>", false);
  const ModuleId weird =
      b.module("a/b:c.\"quote\"", "Weird<T>&\"x\"", true, {{"w<\"&>\n", {2, 2}}});
  const ModuleId tabbed = b.module("../x.<b>\tbold\x01", "a&b\nc", true);
  const NodeId x = b.input({2, 2}, "x\ny \"in\" <&>");
  b.begin(root, {x});
  NodeId h = b.leaf(weird, x, {2, 2});
  h = b.fn("op\"<&>'\\\n", {h, b.constant({2})}, {2, 2});
  h = b.leaf(tabbed, h, {2, 2});
  b.end({h});
  b.output(h);
  b.trace.failure = Failure{"op\"<&>", "a/b:c", "Weird<T>", "bad \"thing\"\n\ttab \x02 \xff end"};
  return std::move(b.trace);
}

/// A user styler: Conv2d calls filled red with a thick border, edges out of them red;
/// everything else as `DefaultStyler` draws it.
struct RedConvs {
  static bool is_conv(const Trace& t, const VisibleNode& v) {
    return v.kind == NodeKind::module && t.graph.module_of(v.node).class_name == "Conv2d";
  }
  static NodeStyle node_style(const Trace& t, const VisibleGraph& vg, std::uint32_t i) {
    NodeStyle s = DefaultStyler::node_style(t, vg, i);
    if (is_conv(t, vg.nodes[i])) {
      s.fillcolor = "#ff9999";
      s.extra = "penwidth=2";
    }
    return s;
  }
  static EdgeStyle edge_style(const Trace& t, const VisibleGraph& vg, const VisibleEdge& e) {
    EdgeStyle s = DefaultStyler::edge_style(t, vg, e);
    if (is_conv(t, vg.nodes[e.from])) s.color = "red";
    return s;
  }
};

/// A readable name for a visible node: the module path ("<root>" for the root), the op name
/// (with `_` when in place), or the tensor kind.
inline std::string describe(const Graph& g, const VisibleNode& v) {
  switch (v.kind) {
    case NodeKind::module: {
      const std::string& path = g.module_of(v.node).path;
      return path.empty() ? "<root>" : path;
    }
    case NodeKind::function:
      return std::string(g.function(v.node).op) + (g.node(v.node).inplace ? "_" : "");
    default:
      return std::string(to_string(v.kind));
  }
}

/// The visible nodes as readable names, in order.
inline std::vector<std::string> node_names(const Graph& g, const VisibleGraph& vg) {
  std::vector<std::string> out;
  for (const VisibleNode& v : vg.nodes) out.push_back(describe(g, v));
  return out;
}

/// The visible edges as "from -> to xN" with readable names and counts, in order.
inline std::vector<std::string> counted_edge_names(const Graph& g, const VisibleGraph& vg) {
  std::vector<std::string> out;
  for (const VisibleEdge& e : vg.edges)
    out.push_back(describe(g, vg.nodes[e.from]) + " -> " + describe(g, vg.nodes[e.to]) + " x" +
                  std::to_string(e.count));
  return out;
}

/// The visible edges as "from -> to" with readable names, in order.
inline std::vector<std::string> edge_names(const Graph& g, const VisibleGraph& vg) {
  std::vector<std::string> out;
  for (const VisibleEdge& e : vg.edges)
    out.push_back(describe(g, vg.nodes[e.from]) + " -> " + describe(g, vg.nodes[e.to]));
  return out;
}

}  // namespace recorder::testing
