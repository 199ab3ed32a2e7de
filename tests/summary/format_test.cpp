// The summary table without libtorch: torchinfo's number formats, and a hand-built trace.
#define BOOST_TEST_MODULE summary_format
#include <boost/test/unit_test.hpp>

#include "../render/backend_laws.hpp"

#include <recorder/render/concepts.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/summary.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace si = recorder::detail::summary_impl;

static_assert(recorder::render_backend<recorder::backend::Summary>);
static_assert(recorder::has_string_render<recorder::backend::Summary>);

BOOST_AUTO_TEST_CASE(numbers_use_torchinfos_units) {
  BOOST_TEST(si::with_commas(0) == "0");
  BOOST_TEST(si::with_commas(11689512) == "11,689,512");
  BOOST_TEST(si::format_number(856, true) == ": 856");
  BOOST_TEST(si::format_number(6328, true) == " (kB): 6.33");
  BOOST_TEST(si::format_number(975200, false) == " (k): 975.20");
  BOOST_TEST(si::format_number(173709312, false) == " (M): 173.71");
  BOOST_TEST(si::format_number(1814083944, false) == " (G): 1.81");
  BOOST_TEST(si::format_number(2000, false) == " (k): 2");  // whole numbers print as ints
  BOOST_TEST(si::format_number(0, false) == ": 0");
}

BOOST_AUTO_TEST_CASE(prefixes_are_torchinfos) {
  BOOST_TEST(si::start_str(0, false).empty());
  BOOST_TEST(si::start_str(1, false) == "\u251c\u2500");
  BOOST_TEST(si::start_str(3, false) == "\u2502    \u2502    \u2514\u2500");
  BOOST_TEST(si::start_str(2, true) == "|    + ");
  BOOST_TEST(si::width("\u2502    \u2514\u2500ab") == 9u);
}

namespace {

/// Net -> Linear fc (called twice, the second call failed).
recorder::Trace hand_built() {
  using namespace recorder;
  Trace t;
  Graph& g = t.graph;
  ModuleInfo root;
  root.name = root.class_name = "Net";
  root.leaf = false;
  root.param_count = root.trainable_count = 12;
  ModuleInfo fc;
  fc.path = fc.name = "fc";
  fc.class_name = "Linear";
  fc.params = {ParamInfo{"weight", {2, 4}, 8, true}, ParamInfo{"bias", {2}, 2, true}};
  fc.param_count = fc.trainable_count = 10;
  root.params = {ParamInfo{"scale", {2}, 2, true}};
  const ModuleId r = g.add_module(root), f = g.add_module(fc);
  const std::int64_t in_shape[] = {3, 4}, out_shape[] = {3, 2};
  const NodeId x = g.add_tensor(NodeKind::input, {}, 0, Shape(in_shape), "Float", "cpu");
  t.root = g.add_module_call(r, {}, 0, {x});
  const NodeId c1 = g.add_module_call(f, t.root, 1, {x});
  const NodeId y = g.add_tensor(NodeKind::tensor, c1, 1, Shape(out_shape), "Float", "cpu");
  g.set_call_outputs(c1, {y});
  const NodeId c2 = g.add_module_call(f, t.root, 1, {y});
  g.set_failed(c2);
  g.set_failed(t.root);
  t.model_name = "Net";
  t.total_params = t.trainable_params = 12;
  return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_hand_built_partial_trace) {
  const recorder::Trace t = hand_built();
  const std::string expected =
      "==========================================================================================\n"
      "Layer (type:depth-idx)                   Output Shape              Param #\n"
      "==========================================================================================\n"
      "Net (failed)                             --                        2\n"
      "\u251c\u2500Linear: 1-1                            [3, 2]                    10\n"
      "\u251c\u2500Linear: 1-2 (failed)                   --                        (recursive)\n"
      "==========================================================================================\n"
      "Total params: 12\n"
      "Trainable params: 12\n"
      "Non-trainable params: 0\n"
      "Total mult-adds: 30\n"
      "==========================================================================================\n"
      "Input size: 104\n"
      "Forward/backward pass size: 48\n"
      "Params size: 48\n"
      "Estimated Total Size: 200\n"
      "==========================================================================================\n";
  BOOST_TEST(recorder::summary(t) == expected);
  BOOST_TEST(recorder::render_to_string<recorder::backend::Summary>(t) == expected);
  // Folded to depth 0, the root shows everything below it.
  const auto folded = recorder::summarize(t, {.depth = 0});
  BOOST_REQUIRE(folded.rows.size() == 1u);
  BOOST_TEST(folded.rows[0].cells[1] == "12");
}

BOOST_AUTO_TEST_CASE(summary_obeys_the_backend_laws) {
  recorder::testing::check_backend_laws<recorder::backend::Summary>();
}

BOOST_AUTO_TEST_CASE(functional_mult_adds_are_a_separate_line) {
  using namespace recorder;
  Trace t = hand_built();
  Graph& g = t.graph;
  const std::int64_t a[] = {2, 3, 4}, b[] = {4, 5}, c[] = {2, 3, 5};
  const NodeId x = g.add_tensor(NodeKind::tensor, t.root, 1, Shape(a), "Float", "cpu");
  const NodeId w = g.add_tensor(NodeKind::constant, t.root, 1, Shape(b), "Float", "cpu");
  const NodeId mm = g.add_function("matmul", t.root, 1);
  const NodeId y = g.add_tensor(NodeKind::tensor, t.root, 1, Shape(c), "Float", "cpu", mm);
  g.add_edge(x, mm);
  g.add_edge(w, mm);
  g.add_edge(mm, y);
  BOOST_TEST(summarize(t).functional_mult_adds == 120u);  // 2*3*5 outputs, 4 products each
  BOOST_TEST(summary(t).find("Functional") == std::string::npos);
  BOOST_TEST(summary(t, {.functional_mult_adds = true}).find("Functional mult-adds: 120\n") !=
             std::string::npos);
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
  return recorder::summarize(o.trace).functional_mult_adds;
}

}  // namespace

BOOST_AUTO_TEST_CASE(matmul_contracts_the_first_operands_last_dimension) {
  BOOST_TEST(macs("matmul", {{{4}}, {{4}}}, {}) == 4u);              // dot product: [] output
  BOOST_TEST(macs("matmul", {{{4}}, {{4, 5}}}, {5}) == 20u);         // vector x matrix
  BOOST_TEST(macs("matmul", {{{3, 4}}, {{4}}}, {3}) == 12u);         // matrix x vector
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
                  {q, kv, kv, {{192, 64}}, {{192}}, {{64, 64}}, {{64}}}, {2, 10, 64}) ==
             2u * 2 * 10 * 12 * 64);
  // Per-head q [2, 4, 10, 16], k [2, 4, 12, 16], v [2, 4, 12, 8]: 80 queries x 12 keys x (16 + 8).
  BOOST_TEST(macs("scaled_dot_product_attention",
                  {{{2, 4, 10, 16}}, {{2, 4, 12, 16}}, {{2, 4, 12, 8}}}, {2, 4, 10, 8}) ==
             80u * 12 * 24);
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
  const NodeId s = add_op(g, o.leaf, "mm", {qt, q}, {2, 2});      // q^T q: 2*2 outputs x 1
  const NodeId frozen = add_operand(g, o.leaf, {{2, 2}, NodeKind::constant});
  add_op(g, o.leaf, "addmm", {s, s, frozen}, {2, 2});               // a frozen weight: torchinfo's
  add_op(g, o.leaf, "addmm", {frozen, s, s}, {2, 2});               // activations only: 2*2 x 2
  add_op(g, o.leaf, "conv1d", {add_op(g, o.leaf, "view", {s}, {1, 2, 2}), w}, {1, 2, 1});
  add_op(g, o.leaf, "scaled_dot_product_attention", {q, q, q}, {1, 2});  // always: 1*1*(2+2)
  BOOST_TEST(summarize(o.trace).functional_mult_adds == 4u + 8u + 4u);
  // The same ops in the composite forward all count.
  OneOp c = net_with_a_leaf();
  Graph& h = c.trace.graph;
  const NodeId cx = h.call(c.leaf).inputs.front();
  const NodeId cw = add_operand(h, c.trace.root, {{2, 2}, NodeKind::parameter});
  add_op(h, c.trace.root, "matmul", {cx, add_op(h, c.trace.root, "t", {cw}, {2, 2})}, {1, 2});
  BOOST_TEST(summarize(c.trace).functional_mult_adds == 4u);
}
