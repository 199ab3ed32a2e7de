// Mult-adds of hand-built graphs, without libtorch: torchinfo's per-module estimate, each
// functional op's count from its row of the table, and what counts inside a leaf call.
#define BOOST_TEST_MODULE graph_mult_adds
#include <boost/test/unit_test.hpp>

#include <recorder/graph/graph.hpp>
#include <recorder/graph/mult_adds.hpp>
#include <recorder/graph/trace.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

BOOST_AUTO_TEST_CASE(modules_count_as_torchinfo_does) {
  using namespace recorder;
  ModuleInfo fc;
  fc.class_name = "Linear";
  fc.params = {ParamInfo{"weight", {2, 4}, 8, true}, ParamInfo{"bias", {2}, 2, true}};
  fc.param_count = 10;
  const std::int64_t rows[] = {3, 2};
  BOOST_TEST(module_mult_adds(fc, Shape(rows)) == 30u);  // 10 parameters x 3 rows
  BOOST_TEST(module_mult_adds(fc, Shape{}) == 0u);       // no output
  ModuleInfo conv;
  conv.class_name = "Conv2d";
  conv.params = {ParamInfo{"weight", {4, 2, 3, 3}, 72, true}};
  conv.param_count = 72;
  const std::int64_t map[] = {1, 4, 5, 5};
  BOOST_TEST(module_mult_adds(conv, Shape(map)) == 72u * 25);  // per output position
  // A leaf forward running a submodule's parameters itself, as torchinfo names them.
  ModuleInfo attn;
  attn.class_name = "MultiheadAttention";
  attn.params = {ParamInfo{"in_proj_weight", {6, 2}, 12, true}};
  attn.param_count = 12 + 6;  // out_proj.weight [2, 2] and its bias [2]
  const std::int64_t seq[] = {3, 1, 2};
  BOOST_TEST(module_mult_adds(attn, Shape(seq)) == 3u * 12 + 3u * 6);
  BOOST_TEST(module_mult_adds(attn, Shape(seq), true) == 3u * 12);
}

BOOST_AUTO_TEST_CASE(one_table_names_each_op_with_its_count) {
  using namespace recorder;
  const OpMultAdds* addmm = find_op_mult_adds("addmm");
  BOOST_REQUIRE(addmm != nullptr);
  BOOST_TEST(addmm->a == 1u);
  BOOST_TEST(addmm->b == 2u);
  BOOST_TEST(!addmm->in_leaves);
  BOOST_TEST(find_op_mult_adds("scaled_dot_product_attention")->in_leaves);
  BOOST_TEST(find_op_mult_adds("relu") == nullptr);
  const std::int64_t a[] = {3, 4}, b[] = {4, 5}, out[] = {3, 5};
  const Shape in[] = {Shape(a), Shape(b)};
  BOOST_TEST(op_mult_adds("mm", in, Shape(out)) == 60u);
  BOOST_TEST(op_mult_adds("einsum", in, Shape(out)) == 0u);
  BOOST_TEST(op_mult_adds("addmm", in, Shape(out)) == 0u);  // c, a and b: one operand short
}

namespace {

using Dims = std::vector<std::int64_t>;

/// One operand of `one_op`: its shape and what kind of node it is.
struct Operand {
  Dims shape;
  recorder::NodeKind kind = recorder::NodeKind::tensor;
};

/// Net -> Attn (a leaf with parameters), for ops recorded inside a leaf or in the composite.
struct OneOp {
  recorder::Trace trace;
  recorder::NodeId leaf;
};

OneOp net_with_a_leaf() {
  using namespace recorder;
  OneOp o;
  Graph& g = o.trace.graph;
  ModuleInfo root;
  root.name = root.class_name = "Net";
  root.leaf = false;
  root.param_count = root.trainable_count = 4;
  ModuleInfo attn;
  attn.path = attn.name = "attn";
  attn.class_name = "Attn";
  attn.params = {ParamInfo{"weight", {2, 2}, 4, true}};
  attn.param_count = attn.trainable_count = 4;
  const ModuleId r = g.add_module(root), a = g.add_module(attn);
  const Dims in{1, 2};
  const NodeId x = g.add_tensor(NodeKind::input, {}, 0, Shape(in), "Float", "cpu");
  o.trace.root = g.add_module_call(r, {}, 0, {x});
  o.leaf = g.add_module_call(a, o.trace.root, 1, {x});
  return o;
}

/// Records `op` in call `parent` reading new operands of the given shapes and kinds (or the
/// given nodes), producing a tensor of shape `out`; returns that tensor.
recorder::NodeId add_op(recorder::Graph& g, recorder::NodeId parent, std::string_view op,
                        const std::vector<recorder::NodeId>& operands, const Dims& out) {
  using namespace recorder;
  const auto depth = static_cast<std::uint16_t>(g.node(parent).depth + 1);
  const NodeId fn = g.add_function(op, parent, depth);
  for (NodeId x : operands) g.add_edge(x, fn);
  const NodeId y = g.add_tensor(NodeKind::tensor, parent, depth, Shape(out), "Float", "cpu", fn);
  g.add_edge(fn, y);
  return y;
}

recorder::NodeId add_operand(recorder::Graph& g, recorder::NodeId parent, const Operand& o) {
  const auto depth = static_cast<std::uint16_t>(g.node(parent).depth + 1);
  return g.add_tensor(o.kind, parent, depth, recorder::Shape(o.shape), "Float", "cpu");
}

/// The functional mult-adds of one `op` recorded in a composite forward.
std::uint64_t macs(std::string_view op, const std::vector<Operand>& operands, const Dims& out) {
  OneOp o = net_with_a_leaf();
  recorder::Graph& g = o.trace.graph;
  std::vector<recorder::NodeId> ids;
  for (const Operand& x : operands) ids.push_back(add_operand(g, o.trace.root, x));
  add_op(g, o.trace.root, op, ids, out);
  return recorder::functional_mult_adds(o.trace.graph);
}

}  // namespace

BOOST_AUTO_TEST_CASE(matmul_contracts_the_first_operands_last_dimension) {
  BOOST_TEST(macs("matmul", {{{4}}, {{4}}}, {}) == 4u);       // dot product: [] output
  BOOST_TEST(macs("matmul", {{{4}}, {{4, 5}}}, {5}) == 20u);  // vector x matrix
  BOOST_TEST(macs("matmul", {{{3, 4}}, {{4}}}, {3}) == 12u);  // matrix x vector
  BOOST_TEST(macs("dot", {{{7}}, {{7}}}, {}) == 7u);
  BOOST_TEST(macs("mv", {{{3, 4}}, {{4}}}, {3}) == 12u);
  BOOST_TEST(macs("mm", {{{3, 4}}, {{4, 5}}}, {3, 5}) == 60u);
  // Batched with broadcasting: [2, 1, 3, 4] x [5, 4, 6] -> [2, 5, 3, 6], 4 products per output.
  BOOST_TEST(macs("matmul", {{{2, 1, 3, 4}}, {{5, 4, 6}}}, {2, 5, 3, 6}) == 2u * 5 * 3 * 6 * 4);
  BOOST_TEST(macs("bmm", {{{8, 10, 16}}, {{8, 16, 10}}}, {8, 10, 10}) == 8u * 10 * 10 * 16);
  // linear(x [2, 3, 4], w [5, 4], b [5]): the bias is not a product.
  const auto weight = recorder::NodeKind::parameter;
  BOOST_TEST(macs("linear", {{{2, 3, 4}}, {{5, 4}, weight}, {{5}}}, {2, 3, 5}) == 2u * 3 * 5 * 4);
}

BOOST_AUTO_TEST_CASE(addmm_and_friends_skip_the_added_operand) {
  // addmm(c [5], a [3, 4], b [4, 5]): 3*5 outputs, 4 products each (not c's 5).
  BOOST_TEST(macs("addmm", {{{5}}, {{3, 4}}, {{4, 5}}}, {3, 5}) == 60u);
  BOOST_TEST(macs("addmv", {{{3}}, {{3, 4}}, {{4}}}, {3}) == 12u);
  // baddbmm(c [2, 3, 5], a [2, 3, 4], b [2, 4, 5]) -> [2, 3, 5]: 30 outputs x 4.
  BOOST_TEST(macs("baddbmm", {{{2, 3, 5}}, {{2, 3, 4}}, {{2, 4, 5}}}, {2, 3, 5}) == 120u);
  // addbmm sums the batch away: c [3, 5] + sum_b a[b] [3, 4] x b[b] [4, 5] -> [3, 5]: 2*3*4*5.
  BOOST_TEST(macs("addbmm", {{{3, 5}}, {{2, 3, 4}}, {{2, 4, 5}}}, {3, 5}) == 120u);
}

BOOST_AUTO_TEST_CASE(convolutions_count_per_output_or_input_element) {
  const auto weight = recorder::NodeKind::parameter;
  // conv2d, groups 4: x [1, 8, 10, 10], w [16, 8/4, 3, 3] -> [1, 16, 8, 8]; each of the
  // 1,024 outputs takes 2 input channels x 9 taps.
  const std::uint64_t grouped = 16u * 8 * 8 * 2 * 9;
  BOOST_TEST(macs("conv2d", {{{1, 8, 10, 10}}, {{16, 2, 3, 3}, weight}}, {1, 16, 8, 8}) == grouped);
  // With a bias operand, and unbatched.
  BOOST_TEST(macs("conv2d", {{{8, 10, 10}}, {{16, 2, 3, 3}}, {{16}}}, {16, 8, 8}) == grouped);
  BOOST_TEST(macs("conv1d", {{{2, 3, 20}}, {{6, 3, 5}}}, {2, 6, 16}) == 2u * 6 * 16 * 3 * 5);
  BOOST_TEST(macs("conv3d", {{{1, 2, 4, 4, 4}}, {{3, 2, 3, 3, 3}}}, {1, 3, 2, 2, 2}) ==
             3u * 8 * 2 * 27);
  // conv_transpose2d, groups 4: x [1, 16, 8, 8], w [16, 8/4, 3, 3] -> [1, 8, 10, 10]; each of
  // the 1,024 inputs spreads to 2 output channels x 9 taps.
  BOOST_TEST(macs("conv_transpose2d", {{{1, 16, 8, 8}}, {{16, 2, 3, 3}}}, {1, 8, 10, 10}) ==
             grouped);
  // `convolution` reads `transposed` from the channels.
  BOOST_TEST(macs("convolution", {{{1, 8, 10, 10}}, {{16, 2, 3, 3}}}, {1, 16, 8, 8}) == grouped);
  BOOST_TEST(macs("_convolution", {{{1, 16, 8, 8}}, {{16, 2, 3, 3}}}, {1, 8, 10, 10}) == grouped);
  // C_in == C_out: stride 2 halves the output of a plain convolution...
  BOOST_TEST(macs("convolution", {{{1, 4, 8, 8}}, {{4, 4, 3, 3}}}, {1, 4, 4, 4}) == 64u * 36);
  // ... and doubles that of a transposed one; each counts its smaller side.
  BOOST_TEST(macs("convolution", {{{1, 4, 4, 4}}, {{4, 4, 3, 3}}}, {1, 4, 9, 9}) == 64u * 36);
}

BOOST_AUTO_TEST_CASE(attention_counts_scores_and_weighted_sums) {
  // Fused multi-head attention, q [2, 10, 64], k and v [2, 12, 64]: QK^T is 2*10*12*64 (the
  // heads split E), AV the same; the projections it fuses are not counted here.
  const Operand q{{2, 10, 64}}, kv{{2, 12, 64}};
  BOOST_TEST(macs("_native_multi_head_attention",
                  {q, kv, kv, {{192, 64}}, {{192}}, {{64, 64}}, {{64}}},
                  {2, 10, 64}) == 2u * 2 * 10 * 12 * 64);
  // Per-head q [2, 4, 10, 16], k [2, 4, 12, 16], v [2, 4, 12, 8]: 80 queries x 12 keys x (16 + 8).
  BOOST_TEST(macs("scaled_dot_product_attention",
                  {{{2, 4, 10, 16}}, {{2, 4, 12, 16}}, {{2, 4, 12, 8}}},
                  {2, 4, 10, 8}) == 80u * 12 * 24);
  // Other ops count nothing.
  BOOST_TEST(macs("softmax", {{{8, 10, 10}}}, {8, 10, 10}) == 0u);
  BOOST_TEST(macs("einsum", {{{3, 4}}, {{4, 5}}}, {3, 5}) == 0u);
}

BOOST_AUTO_TEST_CASE(inside_a_leaf_only_what_torchinfo_misses_counts) {
  using namespace recorder;
  // A MultiheadAttention-like leaf, as record::AtenOps sees it: projections with the weight
  // (t(weight), then matmul), scores and weighted sum between activations.
  OneOp o = net_with_a_leaf();
  Graph& g = o.trace.graph;
  const NodeId x = g.call(o.leaf).inputs.front();
  const NodeId w = add_operand(g, o.leaf, {{2, 2}, NodeKind::parameter});
  const NodeId wt = add_op(g, o.leaf, "t", {w}, {2, 2});
  const NodeId q = add_op(g, o.leaf, "matmul", {x, wt}, {1, 2});  // projection: torchinfo's
  const NodeId qt = add_op(g, o.leaf, "transpose", {q}, {2, 1});
  const NodeId s = add_op(g, o.leaf, "mm", {qt, q}, {2, 2});  // q^T q: 2*2 outputs x 1
  const NodeId frozen = add_operand(g, o.leaf, {{2, 2}, NodeKind::constant});
  add_op(g, o.leaf, "addmm", {s, s, frozen}, {2, 2});  // a frozen weight: torchinfo's
  add_op(g, o.leaf, "addmm", {frozen, s, s}, {2, 2});  // activations only: 2*2 x 2
  add_op(g, o.leaf, "conv1d", {add_op(g, o.leaf, "view", {s}, {1, 2, 2}), w}, {1, 2, 1});
  add_op(g, o.leaf, "scaled_dot_product_attention", {q, q, q}, {1, 2});  // always: 1*1*(2+2)
  BOOST_TEST(functional_mult_adds(o.trace.graph) == 4u + 8u + 4u);
  // The same ops in the composite forward all count.
  OneOp c = net_with_a_leaf();
  Graph& h = c.trace.graph;
  const NodeId cx = h.call(c.leaf).inputs.front();
  const NodeId cw = add_operand(h, c.trace.root, {{2, 2}, NodeKind::parameter});
  add_op(h, c.trace.root, "matmul", {cx, add_op(h, c.trace.root, "t", {cw}, {2, 2})}, {1, 2});
  BOOST_TEST(functional_mult_adds(c.trace.graph) == 4u);
}

BOOST_AUTO_TEST_CASE(provenance_follows_what_ops_make_of_weights_alone) {
  using namespace recorder;
  OneOp o = net_with_a_leaf();
  Graph& g = o.trace.graph;
  const NodeId x = g.call(o.leaf).inputs.front();
  const NodeId w = add_operand(g, o.leaf, {{2, 2}, NodeKind::parameter});
  const NodeId c = add_operand(g, o.leaf, {{2, 2}, NodeKind::constant});
  const NodeId wt = add_op(g, o.leaf, "t", {w}, {2, 2});
  const NodeId wc = add_op(g, o.leaf, "add", {wt, c}, {2, 2});
  const NodeId y = add_op(g, o.leaf, "matmul", {x, wc}, {1, 2});
  const OpEdges edges = op_edges(g);
  const std::vector<bool> weights = from_weights(g, edges);
  BOOST_TEST(weights[w.value]);
  BOOST_TEST(weights[c.value]);
  BOOST_TEST(weights[wt.value]);
  BOOST_TEST(weights[wc.value]);
  BOOST_TEST(!weights[x.value]);
  BOOST_TEST(!weights[y.value]);
  const NodeId mm = g.tensor(y).producer;
  BOOST_TEST(edges.ins[mm.value] == (std::vector<NodeId>{x, wc}));
  BOOST_TEST(edges.outs[mm.value] == (std::vector<NodeId>{y}));
}
