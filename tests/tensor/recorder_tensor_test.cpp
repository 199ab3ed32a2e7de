/// RecorderTensor ops: each op family of ops_table.hpp records one function node with exact
/// edges, output nodes and shapes, and computes exactly what libtorch computes.
#define BOOST_TEST_MODULE recorder_tensor
#include <boost/test/unit_test.hpp>

#include "support.hpp"

#include <recorder/graph/views.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

#include <ATen/ops/arange.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/rsub.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/where.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

using namespace recorder_test;

namespace {

/// A [2, 3] float tensor with distinct positive entries (valid for log, sqrt, rsqrt).
at::Tensor positive23() { return at::arange(1, 7, at::kFloat).div(7).reshape({2, 3}); }

/// Checks one single-input, single-output op against the plain libtorch call.
void check_unary(std::string_view op, const std::function<R(const R&)>& traced,
                 const std::function<at::Tensor(const at::Tensor&)>& plain, const at::Tensor& t,
                 const Dims& out_shape) {
  BOOST_TEST_CONTEXT("op " << op) {
    Recording rec;
    const R x = rec.input(t);
    const Mark m = mark(rec.g());
    const R y = traced(x);
    const auto outs = expect_op(rec.g(), m, op, {x.node()}, {out_shape});
    BOOST_TEST(y.node().value == outs.at(0).value);
    BOOST_TEST(y.tensor().equal(plain(t)));
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(input_node_is_exact) {
  Recording rec;
  const R x = rec.input(at::ones({2, 3}), "x");
  BOOST_TEST_REQUIRE(rec.g().size() == 1u);
  BOOST_TEST(x.node().value == 0u);
  BOOST_TEST(describe(rec.g(), x.node()) ==
             (NodeDesc{"input", "input", {2, 3}, false, NodeId::invalid, "x"}));
  BOOST_TEST(dtype(rec.g(), x.node()) == "Float");
  BOOST_TEST(std::string(rec.g().tensor(x.node()).device) == "cpu");
  BOOST_TEST(rec.g().edge_count() == 0u);
  // Metadata is read directly and never recorded.
  BOOST_TEST(x.dim() == 2);
  BOOST_TEST(x.size(1) == 3);
  BOOST_TEST(x.numel() == 6);
  BOOST_TEST(x.sizes().vec() == (Dims{2, 3}), boost::test_tools::per_element());
  BOOST_TEST(rec.g().size() == 1u);
}

BOOST_AUTO_TEST_CASE(unary_methods_and_free_functions) {
  const at::Tensor t = positive23();
  const Dims s{2, 3};
  check_unary(
      "relu", [](const R& x) { return relu(x); }, [](const at::Tensor& u) { return u.relu(); }, t,
      s);
  check_unary(
      "relu", [](const R& x) { return x.relu(); }, [](const at::Tensor& u) { return u.relu(); }, t,
      s);
  check_unary(
      "sigmoid", [](const R& x) { return sigmoid(x); },
      [](const at::Tensor& u) { return u.sigmoid(); }, t, s);
  check_unary(
      "tanh", [](const R& x) { return x.tanh(); }, [](const at::Tensor& u) { return u.tanh(); }, t,
      s);
  check_unary(
      "exp", [](const R& x) { return exp(x); }, [](const at::Tensor& u) { return u.exp(); }, t, s);
  check_unary(
      "log", [](const R& x) { return log(x); }, [](const at::Tensor& u) { return u.log(); }, t, s);
  check_unary(
      "sqrt", [](const R& x) { return x.sqrt(); }, [](const at::Tensor& u) { return u.sqrt(); }, t,
      s);
  check_unary(
      "rsqrt", [](const R& x) { return rsqrt(x); }, [](const at::Tensor& u) { return u.rsqrt(); },
      t, s);
  check_unary(
      "abs", [](const R& x) { return abs(x); }, [](const at::Tensor& u) { return u.abs(); }, t, s);
  check_unary(
      "neg", [](const R& x) { return x.neg(); }, [](const at::Tensor& u) { return u.neg(); }, t, s);
  check_unary(
      "gelu", [](const R& x) { return gelu(x); }, [](const at::Tensor& u) { return at::gelu(u); },
      t, s);
  check_unary(
      "gelu", [](const R& x) { return gelu(x, "tanh"); },
      [](const at::Tensor& u) { return at::gelu(u, "tanh"); }, t, s);
  check_unary(
      "dropout", [](const R& x) { return dropout(x, 0.5, false); },
      [](const at::Tensor& u) { return at::dropout(u, 0.5, false); }, t, s);
  check_unary(
      "clone", [](const R& x) { return x.clone(); }, [](const at::Tensor& u) { return u.clone(); },
      t, s);
  check_unary(
      "contiguous", [](const R& x) { return x.contiguous(); },
      [](const at::Tensor& u) { return u.contiguous(); }, t, s);
  check_unary(
      "detach", [](const R& x) { return x.detach(); },
      [](const at::Tensor& u) { return u.detach(); }, t, s);
  check_unary(
      "clamp", [](const R& x) { return x.clamp(0.2, 0.5); },
      [](const at::Tensor& u) { return u.clamp(0.2, 0.5); }, t, s);
  check_unary(
      "clamp", [](const R& x) { return clamp(x, c10::nullopt, 0.4); },
      [](const at::Tensor& u) { return u.clamp(c10::nullopt, 0.4); }, t, s);
  check_unary(
      "layer_norm", [](const R& x) { return layer_norm(x, {3}); },
      [](const at::Tensor& u) { return at::layer_norm(u, {3}); }, t, s);
}

BOOST_AUTO_TEST_CASE(softmax_with_dim) {
  const at::Tensor t = at::randn({2, 3});
  check_unary(
      "softmax", [](const R& x) { return softmax(x, 1); },
      [](const at::Tensor& u) { return u.softmax(1); }, t, {2, 3});
  check_unary(
      "softmax", [](const R& x) { return x.softmax(0); },
      [](const at::Tensor& u) { return u.softmax(0); }, t, {2, 3});
  check_unary(
      "log_softmax", [](const R& x) { return log_softmax(x, -1); },
      [](const at::Tensor& u) { return u.log_softmax(-1); }, t, {2, 3});
  check_unary(
      "softmax", [](const R& x) { return softmax(x, 1, at::kDouble); },
      [](const at::Tensor& u) { return u.softmax(1, at::kDouble); }, t, {2, 3});
}

BOOST_AUTO_TEST_CASE(to_dtype_records_the_new_dtype) {
  Recording rec;
  const R x = rec.input(positive23());
  const Mark m = mark(rec.g());
  const R y = x.to(at::kDouble);
  const auto outs = expect_op(rec.g(), m, "to", {x.node()}, {{2, 3}});
  BOOST_TEST(dtype(rec.g(), outs[0]) == "Double");
  BOOST_TEST(dtype(rec.g(), x.node()) == "Float");
  BOOST_TEST(y.scalar_type() == at::kDouble);
  BOOST_TEST(y.tensor().equal(x.tensor().to(at::kDouble)));
}

BOOST_AUTO_TEST_CASE(shape_ops) {
  const at::Tensor t = at::randn({2, 3, 4});
  check_unary(
      "view",
      [](const R& x) {
        return x.view({6, -1});
      },
      [](const at::Tensor& u) {
        return u.view({6, -1});
      },
      t, {6, 4});
  check_unary(
      "reshape", [](const R& x) { return reshape(x, {24}); },
      [](const at::Tensor& u) { return u.reshape({24}); }, t, {24});
  check_unary(
      "reshape",
      [](const R& x) {
        return x.reshape({4, 6});
      },
      [](const at::Tensor& u) {
        return u.reshape({4, 6});
      },
      t, {4, 6});
  check_unary(
      "permute",
      [](const R& x) {
        return permute(x, {2, 0, 1});
      },
      [](const at::Tensor& u) {
        return u.permute({2, 0, 1});
      },
      t, {4, 2, 3});
  check_unary(
      "transpose", [](const R& x) { return x.transpose(0, 2); },
      [](const at::Tensor& u) { return u.transpose(0, 2); }, t, {4, 3, 2});
  check_unary(
      "flatten", [](const R& x) { return flatten(x, 1); },
      [](const at::Tensor& u) { return u.flatten(1); }, t, {2, 12});
  check_unary(
      "flatten", [](const R& x) { return x.flatten(); },
      [](const at::Tensor& u) { return u.flatten(); }, t, {24});
  check_unary(
      "unsqueeze", [](const R& x) { return unsqueeze(x, 1); },
      [](const at::Tensor& u) { return u.unsqueeze(1); }, t, {2, 1, 3, 4});
  check_unary(
      "unflatten",
      [](const R& x) {
        return x.unflatten(2, {2, 2});
      },
      [](const at::Tensor& u) {
        return u.unflatten(2, {2, 2});
      },
      t, {2, 3, 2, 2});
  check_unary(
      "repeat",
      [](const R& x) {
        return x.repeat({1, 2, 1});
      },
      [](const at::Tensor& u) {
        return u.repeat({1, 2, 1});
      },
      t, {2, 6, 4});
  check_unary(
      "slice", [](const R& x) { return x.slice(2, 1, 3); },
      [](const at::Tensor& u) { return u.slice(2, 1, 3); }, t, {2, 3, 2});
  check_unary(
      "narrow", [](const R& x) { return narrow(x, 1, 1, 2); },
      [](const at::Tensor& u) { return u.narrow(1, 1, 2); }, t, {2, 2, 4});
  check_unary(
      "select", [](const R& x) { return x.select(1, 2); },
      [](const at::Tensor& u) { return u.select(1, 2); }, t, {2, 4});
  check_unary(
      "select", [](const R& x) { return x[1]; }, [](const at::Tensor& u) { return u.select(0, 1); },
      t, {3, 4});

  const at::Tensor ones = at::randn({1, 2, 1, 3});
  check_unary(
      "squeeze", [](const R& x) { return squeeze(x); },
      [](const at::Tensor& u) { return u.squeeze(); }, ones, {2, 3});
  check_unary(
      "expand",
      [](const R& x) {
        return x.expand({5, 2, 4, 3});
      },
      [](const at::Tensor& u) {
        return u.expand({5, 2, 4, 3});
      },
      ones, {5, 2, 4, 3});
  check_unary(
      "squeeze", [](const R& x) { return x.squeeze(2); },
      [](const at::Tensor& u) { return u.squeeze(2); }, ones, {1, 2, 3});
}

BOOST_AUTO_TEST_CASE(chained_ops_link_output_to_next_input) {
  Recording rec;
  const R x = rec.input(at::randn({2, 3}));
  const R y = relu(x.view({3, 2})).sum();
  BOOST_TEST_REQUIRE(rec.g().size() == 7u);
  const std::vector<NodeDesc> expected{
      {"input", "input", {2, 3}, false, NodeId::invalid, "x"},
      {"function", "view", {}, false, NodeId::invalid, ""},
      {"tensor", "tensor", {3, 2}, false, 1, ""},
      {"function", "relu", {}, false, NodeId::invalid, ""},
      {"tensor", "tensor", {3, 2}, false, 3, ""},
      {"function", "sum", {}, false, NodeId::invalid, ""},
      {"tensor", "tensor", {}, false, 5, ""},
  };
  BOOST_TEST(describe_all(rec.g()) == expected, boost::test_tools::per_element());
  BOOST_TEST(all_edges(rec.g()) ==
                 (std::vector<std::string>{"0->1", "1->2", "2->3", "3->4", "4->5", "5->6"}),
             boost::test_tools::per_element());
  BOOST_TEST(y.node().value == 6u);
  BOOST_TEST(y.tensor().equal(x.tensor().view({3, 2}).relu().sum()));
}

BOOST_AUTO_TEST_CASE(matmul_mm_bmm) {
  Recording rec;
  const at::Tensor ta = at::randn({2, 3}), tb = at::randn({3, 4});
  const at::Tensor tc = at::randn({5, 2, 3}), td = at::randn({5, 3, 4});
  const R a = rec.input(ta, "a"), b = rec.input(tb, "b");
  const R c = rec.input(tc, "c"), d = rec.input(td, "d");

  Mark m = mark(rec.g());
  R y = matmul(a, b);
  expect_op(rec.g(), m, "matmul", {a.node(), b.node()}, {{2, 4}});
  BOOST_TEST(y.tensor().equal(ta.matmul(tb)));

  m = mark(rec.g());
  y = a.mm(b);
  expect_op(rec.g(), m, "mm", {a.node(), b.node()}, {{2, 4}});
  BOOST_TEST(y.tensor().equal(ta.mm(tb)));

  m = mark(rec.g());
  y = bmm(c, d);
  expect_op(rec.g(), m, "bmm", {c.node(), d.node()}, {{5, 2, 4}});
  BOOST_TEST(y.tensor().equal(tc.bmm(td)));

  // Broadcasting matmul, operands in the order given.
  m = mark(rec.g());
  y = c.matmul(b);
  expect_op(rec.g(), m, "matmul", {c.node(), b.node()}, {{5, 2, 4}});
  BOOST_TEST(y.tensor().equal(tc.matmul(tb)));
}

BOOST_AUTO_TEST_CASE(reductions_with_dims) {
  const at::Tensor t = at::randn({2, 3, 4});
  check_unary(
      "sum", [](const R& x) { return sum(x); }, [](const at::Tensor& u) { return u.sum(); }, t, {});
  check_unary(
      "sum", [](const R& x) { return x.sum({1}); }, [](const at::Tensor& u) { return u.sum({1}); },
      t, {2, 4});
  check_unary(
      "sum",
      [](const R& x) {
        return sum(x, {0, 2}, true);
      },
      [](const at::Tensor& u) {
        return u.sum(at::IntArrayRef{0, 2}, true);
      },
      t, {1, 3, 1});
  check_unary(
      "mean", [](const R& x) { return x.mean(); }, [](const at::Tensor& u) { return u.mean(); }, t,
      {});
  check_unary(
      "mean", [](const R& x) { return mean(x, {-1}); },
      [](const at::Tensor& u) { return u.mean({-1}); }, t, {2, 3});
  check_unary(
      "mean", [](const R& x) { return x.mean({1}, true); },
      [](const at::Tensor& u) { return u.mean({1}, true); }, t, {2, 1, 4});
  check_unary(
      "max", [](const R& x) { return max(x); }, [](const at::Tensor& u) { return u.max(); }, t, {});
  check_unary(
      "min", [](const R& x) { return x.min(); }, [](const at::Tensor& u) { return u.min(); }, t,
      {});
}

BOOST_AUTO_TEST_CASE(max_min_with_dim_give_two_outputs) {
  Recording rec;
  const at::Tensor t = at::randn({2, 3, 4});
  const R x = rec.input(t);

  Mark m = mark(rec.g());
  const auto [values, indices] = max(x, 1);
  static_assert(std::is_same_v<std::remove_const_t<decltype(values)>, R>);
  auto outs = expect_op(rec.g(), m, "max", {x.node()}, {{2, 4}, {2, 4}});
  BOOST_TEST(values.node().value == outs[0].value);
  BOOST_TEST(indices.node().value == outs[1].value);
  BOOST_TEST(dtype(rec.g(), outs[0]) == "Float");
  BOOST_TEST(dtype(rec.g(), outs[1]) == "Long");
  const auto [pv, pi] = t.max(1);
  BOOST_TEST(values.tensor().equal(pv));
  BOOST_TEST(indices.tensor().equal(pi));

  m = mark(rec.g());
  const std::tuple<R, R> mins = x.min(2, true);
  outs = expect_op(rec.g(), m, "min", {x.node()}, {{2, 3, 1}, {2, 3, 1}});
  BOOST_TEST(std::get<0>(mins).node().value == outs[0].value);
  BOOST_TEST(std::get<1>(mins).node().value == outs[1].value);
  BOOST_TEST(std::get<0>(mins).tensor().equal(std::get<0>(t.min(2, true))));

  // Element-wise max of two tensors: one output.
  const at::Tensor t2 = at::randn({2, 3, 4});
  const R x2 = rec.input(t2, "x2");
  m = mark(rec.g());
  const R mx = max(x, x2);
  expect_op(rec.g(), m, "max", {x.node(), x2.node()}, {{2, 3, 4}});
  BOOST_TEST(mx.tensor().equal(t.max(t2)));
}

BOOST_AUTO_TEST_CASE(chunk_and_split_give_one_node_per_piece_in_order) {
  Recording rec;
  const at::Tensor t = at::randn({2, 7});
  const R x = rec.input(t);

  Mark m = mark(rec.g());
  const std::vector<R> chunks = chunk(x, 3, 1);
  auto outs = expect_op(rec.g(), m, "chunk", {x.node()}, {{2, 3}, {2, 3}, {2, 1}});
  auto plain = t.chunk(3, 1);
  BOOST_TEST_REQUIRE(chunks.size() == 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    BOOST_TEST(chunks[i].node().value == outs[i].value);
    BOOST_TEST(chunks[i].tensor().equal(plain[i]));
  }

  m = mark(rec.g());
  const std::vector<R> pieces = x.split(3, 1);
  outs = expect_op(rec.g(), m, "split", {x.node()}, {{2, 3}, {2, 3}, {2, 1}});
  plain = t.split(3, 1);
  BOOST_TEST_REQUIRE(pieces.size() == 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    BOOST_TEST(pieces[i].node().value == outs[i].value);
    BOOST_TEST(pieces[i].tensor().equal(plain[i]));
  }

  m = mark(rec.g());
  const std::vector<R> sized = split(x, {1, 4, 2}, 1);
  outs = expect_op(rec.g(), m, "split", {x.node()}, {{2, 1}, {2, 4}, {2, 2}});
  plain = t.split({1, 4, 2}, 1);
  BOOST_TEST_REQUIRE(sized.size() == 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    BOOST_TEST(sized[i].node().value == outs[i].value);
    BOOST_TEST(sized[i].tensor().equal(plain[i]));
  }

  // Default dim 0.
  m = mark(rec.g());
  const std::vector<R> rows = x.chunk(2);
  expect_op(rec.g(), m, "chunk", {x.node()}, {{1, 7}, {1, 7}});
  BOOST_TEST(rows[1].tensor().equal(t[1].unsqueeze(0)));
}

BOOST_AUTO_TEST_CASE(cat_and_stack) {
  Recording rec;
  const at::Tensor ta = at::randn({2, 3}), tb = at::randn({2, 3});
  const R a = rec.input(ta, "a"), b = rec.input(tb, "b");

  Mark m = mark(rec.g());
  R y = recorder::cat({a, b}, 1);
  expect_op(rec.g(), m, "cat", {a.node(), b.node()}, {{2, 6}});
  BOOST_TEST(y.tensor().equal(at::cat({ta, tb}, 1)));

  m = mark(rec.g());
  y = cat(std::vector<R>{b, a}, 0);
  expect_op(rec.g(), m, "cat", {b.node(), a.node()}, {{4, 3}});
  BOOST_TEST(y.tensor().equal(at::cat({tb, ta}, 0)));

  // The same tensor twice: two edges from it.
  m = mark(rec.g());
  y = recorder::cat({a, a, b});
  expect_op(rec.g(), m, "cat", {a.node(), a.node(), b.node()}, {{6, 3}});
  BOOST_TEST(y.tensor().equal(at::cat({ta, ta, tb})));

  m = mark(rec.g());
  y = recorder::stack({a, b}, 1);
  expect_op(rec.g(), m, "stack", {a.node(), b.node()}, {{2, 2, 3}});
  BOOST_TEST(y.tensor().equal(at::stack({ta, tb}, 1)));

  m = mark(rec.g());
  y = stack(std::vector<R>{a, b});
  expect_op(rec.g(), m, "stack", {a.node(), b.node()}, {{2, 2, 3}});
  BOOST_TEST(y.tensor().equal(at::stack({ta, tb})));

  // The generic helpers are the plain libtorch call for plain tensors.
  BOOST_TEST(recorder::cat({ta, tb}, 1).equal(at::cat({ta, tb}, 1)));
  BOOST_TEST(recorder::stack({ta, tb}).equal(at::stack({ta, tb})));
}

BOOST_AUTO_TEST_CASE(masked_fill_index_select_where_linear) {
  Recording rec;
  const at::Tensor t = at::randn({2, 3});
  const at::Tensor tmask = t.gt(0);
  const R x = rec.input(t);
  const R mask = rec.input(tmask, "mask");

  Mark m = mark(rec.g());
  R y = masked_fill(x, mask, -1.5);
  expect_op(rec.g(), m, "masked_fill", {x.node(), mask.node()}, {{2, 3}});
  BOOST_TEST(y.tensor().equal(t.masked_fill(tmask, -1.5)));

  // A plain mask becomes a constant node, recorded before the function node.
  m = mark(rec.g());
  y = x.masked_fill(tmask, 0.25);
  BOOST_TEST_REQUIRE(rec.g().size() == m.nodes + 3);
  const NodeId cmask = id(m.nodes);
  BOOST_TEST(describe(rec.g(), cmask) ==
             (NodeDesc{"constant", "constant", {2, 3}, false, NodeId::invalid, ""}));
  BOOST_TEST(dtype(rec.g(), cmask) == "Bool");
  expect_op(rec.g(), Mark{m.nodes + 1, m.edges}, "masked_fill", {x.node(), cmask}, {{2, 3}});
  BOOST_TEST(y.tensor().equal(t.masked_fill(tmask, 0.25)));

  // index_select: a plain index tensor is a constant operand, in the operand order.
  const at::Tensor idx = at::arange(3, at::kLong).flip({0}).slice(0, 0, 2);
  m = mark(rec.g());
  y = index_select(x, 1, idx);
  BOOST_TEST_REQUIRE(rec.g().size() == m.nodes + 3);
  BOOST_TEST(describe(rec.g(), id(m.nodes)) ==
             (NodeDesc{"constant", "constant", {2}, false, NodeId::invalid, ""}));
  expect_op(rec.g(), Mark{m.nodes + 1, m.edges}, "index_select", {x.node(), id(m.nodes)}, {{2, 2}});
  BOOST_TEST(y.tensor().equal(t.index_select(1, idx)));

  // where(condition, self, other): three operands in order.
  const at::Tensor tz = at::randn({2, 3});
  const R z = rec.input(tz, "z");
  m = mark(rec.g());
  y = where(mask, x, z);
  expect_op(rec.g(), m, "where", {mask.node(), x.node(), z.node()}, {{2, 3}});
  BOOST_TEST(y.tensor().equal(at::where(tmask, t, tz)));

  // linear with a plain weight (constant) and a plain bias.
  const at::Tensor w = at::randn({4, 3}), bias = at::randn({4});
  m = mark(rec.g());
  y = linear(x, w, bias);
  BOOST_TEST_REQUIRE(rec.g().size() >= m.nodes + 3);
  BOOST_TEST(kind(rec.g(), id(m.nodes)) == "constant");
  BOOST_TEST(shape(rec.g(), id(m.nodes)) == (Dims{4, 3}), boost::test_tools::per_element());
  BOOST_TEST(y.tensor().equal(at::linear(t, w, bias)));
  BOOST_TEST(y.sizes().vec() == (Dims{2, 4}), boost::test_tools::per_element());
}

// ---- operators -------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(operator_tensor_tensor) {
  Recording rec;
  const at::Tensor ta = at::randn({2, 3}), tb = at::randn({2, 3}).abs().add(0.5);
  const R a = rec.input(ta, "a"), b = rec.input(tb, "b");
  struct Case {
    std::string op;
    std::function<R(const R&, const R&)> traced;
    at::Tensor expected;
  };
  const std::vector<Case> cases{
      {"add", [](const R& u, const R& v) { return u + v; }, ta.add(tb)},
      {"sub", [](const R& u, const R& v) { return u - v; }, ta.sub(tb)},
      {"mul", [](const R& u, const R& v) { return u * v; }, ta.mul(tb)},
      {"div", [](const R& u, const R& v) { return u / v; }, ta.div(tb)},
      {"add", [](const R& u, const R& v) { return add(u, v, 2); }, ta.add(tb, 2)},
      {"sub", [](const R& u, const R& v) { return u.sub(v); }, ta.sub(tb)},
      {"pow", [](const R& u, const R& v) { return pow(v, u); }, tb.pow(ta)},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.op) {
      const Mark m = mark(rec.g());
      const R y = c.traced(a, b);
      if (c.op == "pow")
        expect_op(rec.g(), m, c.op, {b.node(), a.node()}, {{2, 3}});
      else
        expect_op(rec.g(), m, c.op, {a.node(), b.node()}, {{2, 3}});
      BOOST_TEST(y.tensor().equal(c.expected));
    }
  }
  // Comparisons give Bool tensors.
  const Mark m = mark(rec.g());
  const R e = eq(a, b);
  const auto outs = expect_op(rec.g(), m, "eq", {a.node(), b.node()}, {{2, 3}});
  BOOST_TEST(dtype(rec.g(), outs[0]) == "Bool");
  BOOST_TEST(e.tensor().equal(ta.eq(tb)));
}

BOOST_AUTO_TEST_CASE(operator_tensor_scalar_and_scalar_tensor) {
  Recording rec;
  const at::Tensor t = at::randn({2, 3}).abs().add(0.5);
  const R x = rec.input(t);
  struct Case {
    std::string op;
    std::function<R(const R&)> traced;
    at::Tensor expected;
  };
  // A scalar operand adds no node and no edge.
  const std::vector<Case> cases{
      {"add", [](const R& u) { return u + 2.5; }, t.add(2.5)},
      {"add", [](const R& u) { return 2 + u; }, t.add(2)},
      {"sub", [](const R& u) { return u - 1.0; }, t.sub(1.0)},
      {"sub", [](const R& u) { return 2.5 - u; }, at::rsub(t, 2.5)},
      {"mul", [](const R& u) { return u * 3; }, t.mul(3)},
      {"mul", [](const R& u) { return 0.5 * u; }, t.mul(0.5)},
      {"div", [](const R& u) { return u / 4.0; }, t.div(4.0)},
      {"div", [](const R& u) { return 1.0 / u; }, t.reciprocal()},
      {"neg", [](const R& u) { return -u; }, t.neg()},
      {"pow", [](const R& u) { return u.pow(2); }, t.pow(2)},
      {"gt", [](const R& u) { return gt(u, 1.0); }, t.gt(1.0)},
      {"lt", [](const R& u) { return u.lt(1.0); }, t.lt(1.0)},
      {"ne", [](const R& u) { return ne(u, 1.0); }, t.ne(1.0)},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.op) {
      const Mark m = mark(rec.g());
      const R y = c.traced(x);
      expect_op(rec.g(), m, c.op, {x.node()}, {{2, 3}});
      BOOST_TEST(y.tensor().allclose(c.expected));
      if (c.op != "div") BOOST_TEST(y.tensor().equal(c.expected));
    }
  }
}

BOOST_AUTO_TEST_CASE(plain_tensor_operand_is_a_constant_node) {
  Recording rec;
  const at::Tensor t = at::randn({2, 3}), c = at::randn({2, 3});
  const R x = rec.input(t);

  Mark m = mark(rec.g());
  R y = x * c;
  BOOST_TEST_REQUIRE(rec.g().size() == m.nodes + 3);
  const NodeId cn = id(m.nodes), fn = id(m.nodes + 1), out = id(m.nodes + 2);
  BOOST_TEST(describe(rec.g(), cn) ==
             (NodeDesc{"constant", "constant", {2, 3}, false, NodeId::invalid, ""}));
  BOOST_TEST(describe(rec.g(), fn) ==
             (NodeDesc{"function", "mul", {}, false, NodeId::invalid, ""}));
  BOOST_TEST(describe(rec.g(), out) == (NodeDesc{"tensor", "tensor", {2, 3}, false, fn.value, ""}));
  BOOST_TEST(new_edges(rec.g(), m) ==
                 (std::vector<std::string>{edge(x.node(), fn), edge(cn, fn), edge(fn, out)}),
             boost::test_tools::per_element());
  BOOST_TEST(y.tensor().equal(t.mul(c)));

  // Plain tensor on the left: the constant is the first operand.
  m = mark(rec.g());
  y = c + x;
  BOOST_TEST_REQUIRE(rec.g().size() == m.nodes + 3);
  BOOST_TEST(kind(rec.g(), id(m.nodes)) == "constant");
  BOOST_TEST(
      new_edges(rec.g(), m) == (std::vector<std::string>{edge(id(m.nodes), id(m.nodes + 1)),
                                                         edge(x.node(), id(m.nodes + 1)),
                                                         edge(id(m.nodes + 1), id(m.nodes + 2))}),
      boost::test_tools::per_element());
  BOOST_TEST(y.tensor().equal(c.add(t)));

  // Constants are not shared: each use of a plain tensor is a new constant node.
  m = mark(rec.g());
  y = x * c;
  BOOST_TEST(rec.g().size() == m.nodes + 3);
  BOOST_TEST(kind(rec.g(), id(m.nodes)) == "constant");
  BOOST_TEST(recorder::views::count(rec.g(), NodeKind::constant) == 3u);
  BOOST_TEST(recorder::views::count(rec.g(), NodeKind::parameter) == 0u);
}

BOOST_AUTO_TEST_CASE(parameter_operand_gets_one_node_however_often_used) {
  Recording rec;
  const at::Tensor t = at::randn({2, 3});
  const at::Tensor w = at::randn({2, 3}).requires_grad_();
  const R x = rec.input(t);

  const Mark m = mark(rec.g());
  const R y = x * w;
  const R z = w + y;
  const NodeId p = id(m.nodes);
  BOOST_TEST_REQUIRE(rec.g().size() == m.nodes + 5);
  const std::vector<NodeDesc> expected{
      {"parameter", "parameter", {2, 3}, false, NodeId::invalid, ""},
      {"function", "mul", {}, false, NodeId::invalid, ""},
      {"tensor", "tensor", {2, 3}, false, static_cast<std::uint32_t>(m.nodes + 1), ""},
      {"function", "add", {}, false, NodeId::invalid, ""},
      {"tensor", "tensor", {2, 3}, false, static_cast<std::uint32_t>(m.nodes + 3), ""},
  };
  auto all = describe_all(rec.g());
  BOOST_TEST(std::vector<NodeDesc>(all.begin() + static_cast<std::ptrdiff_t>(m.nodes), all.end()) ==
                 expected,
             boost::test_tools::per_element());
  BOOST_TEST(new_edges(rec.g(), m) ==
                 (std::vector<std::string>{
                     edge(x.node(), id(m.nodes + 1)), edge(p, id(m.nodes + 1)),
                     edge(id(m.nodes + 1), id(m.nodes + 2)), edge(p, id(m.nodes + 3)),
                     edge(y.node(), id(m.nodes + 3)), edge(id(m.nodes + 3), id(m.nodes + 4))}),
             boost::test_tools::per_element());
  BOOST_TEST(recorder::views::count(rec.g(), NodeKind::parameter) == 1u);
  BOOST_TEST(z.tensor().equal(w.add(t.mul(w))));

  // A tensor that requires grad but is not a leaf is a constant, not a parameter.
  const at::Tensor derived = w.mul(2);
  const Mark m2 = mark(rec.g());
  const R q = x + derived;
  BOOST_TEST(kind(rec.g(), id(m2.nodes)) == "constant");
  BOOST_TEST(recorder::views::count(rec.g(), NodeKind::parameter) == 1u);
  BOOST_TEST(q.tensor().equal(t.add(derived)));

  // A parameter as linear's weight.
  const Mark m3 = mark(rec.g());
  const R l = linear(x, w.detach().clone().requires_grad_());
  BOOST_TEST(kind(rec.g(), id(m3.nodes)) == "parameter");
  BOOST_TEST(l.sizes().vec() == (Dims{2, 2}), boost::test_tools::per_element());
}
