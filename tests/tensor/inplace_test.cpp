/// In-place RecorderTensor ops: an `inplace` function node consumes the tensor's node and the
/// tensor's node advances to the op's output; the data changes as libtorch changes it.
#include <boost/test/unit_test.hpp>

#include "support.hpp"

#include <recorder/tensor/recorder_tensor.hpp>

#include <ATen/ops/randn.h>

#include <functional>
#include <string>
#include <vector>

using namespace recorder_test;

BOOST_AUTO_TEST_SUITE(inplace)

BOOST_AUTO_TEST_CASE(add_method_with_tensor) {
  Recording rec;
  const at::Tensor t = at::randn({2, 3}), u = at::randn({2, 3});
  const at::Tensor expected = t.add(u);
  R x = rec.input(t.clone(), "x");
  const R y = rec.input(u, "y");
  const NodeId before = x.node();

  const Mark m = mark(rec.g());
  R& ret = x.add_(y);
  BOOST_TEST(&ret == &x);
  const auto outs = expect_op(rec.g(), m, "add", {before, y.node()}, {{2, 3}}, /*inplace=*/true);
  BOOST_TEST(x.node().value == outs[0].value);
  BOOST_TEST(x.node().value != before.value);
  BOOST_TEST(x.tensor().equal(expected));
  // The input node itself is untouched.
  BOOST_TEST(kind(rec.g(), before) == "input");
}

BOOST_AUTO_TEST_CASE(each_inplace_form) {
  struct Case {
    std::string name;
    std::string op;
    std::function<void(R&, const R&)> traced;
    std::function<void(at::Tensor&, const at::Tensor&)> plain;
    bool uses_y;
  };
  const std::vector<Case> cases{
      {"x += y", "add", [](R& a, const R& b) { a += b; },
       [](at::Tensor& a, const at::Tensor& b) { a.add_(b); }, true},
      {"x -= y", "sub", [](R& a, const R& b) { a -= b; },
       [](at::Tensor& a, const at::Tensor& b) { a.sub_(b); }, true},
      {"x *= y", "mul", [](R& a, const R& b) { a *= b; },
       [](at::Tensor& a, const at::Tensor& b) { a.mul_(b); }, true},
      {"x /= y", "div", [](R& a, const R& b) { a /= b; },
       [](at::Tensor& a, const at::Tensor& b) { a.div_(b); }, true},
      {"x += 2", "add", [](R& a, const R&) { a += 2; },
       [](at::Tensor& a, const at::Tensor&) { a.add_(2); }, false},
      {"x *= 0.5", "mul", [](R& a, const R&) { a *= 0.5; },
       [](at::Tensor& a, const at::Tensor&) { a.mul_(0.5); }, false},
      {"x.sub_(y, 3)", "sub", [](R& a, const R& b) { a.sub_(b, 3); },
       [](at::Tensor& a, const at::Tensor& b) { a.sub_(b, 3); }, true},
      {"x.relu_()", "relu", [](R& a, const R&) { a.relu_(); },
       [](at::Tensor& a, const at::Tensor&) { a.relu_(); }, false},
      {"relu_(x)", "relu", [](R& a, const R&) { relu_(a); },
       [](at::Tensor& a, const at::Tensor&) { a.relu_(); }, false},
      {"x.sigmoid_()", "sigmoid", [](R& a, const R&) { a.sigmoid_(); },
       [](at::Tensor& a, const at::Tensor&) { a.sigmoid_(); }, false},
      {"x.tanh_()", "tanh", [](R& a, const R&) { a.tanh_(); },
       [](at::Tensor& a, const at::Tensor&) { a.tanh_(); }, false},
      {"x.clamp_(-0.5, 0.5)", "clamp", [](R& a, const R&) { a.clamp_(-0.5, 0.5); },
       [](at::Tensor& a, const at::Tensor&) { a.clamp_(-0.5, 0.5); }, false},
  };
  const at::Tensor t = at::randn({2, 3}), u = at::randn({2, 3}).abs().add(0.5);
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      Recording rec;
      at::Tensor expected = t.clone();
      c.plain(expected, u);
      R x = rec.input(t.clone(), "x");
      const R y = rec.input(u, "y");
      const NodeId before = x.node();
      const Mark m = mark(rec.g());
      c.traced(x, y);
      std::vector<NodeId> ins{before};
      if (c.uses_y) ins.push_back(y.node());
      const auto outs = expect_op(rec.g(), m, c.op, ins, {{2, 3}}, /*inplace=*/true);
      BOOST_TEST(x.node().value == outs[0].value);
      BOOST_TEST(x.tensor().equal(expected));
      BOOST_TEST(y.tensor().equal(u));  // the other operand is untouched
    }
  }
}

BOOST_AUTO_TEST_CASE(masked_fill_inplace_with_plain_mask) {
  Recording rec;
  const at::Tensor t = at::randn({2, 3});
  const at::Tensor mask = t.gt(0);
  R x = rec.input(t.clone());
  const NodeId before = x.node();
  const Mark m = mark(rec.g());
  x.masked_fill_(mask, 1.0);
  // The in-place operand comes first, then the plain mask as a constant.
  BOOST_TEST_REQUIRE(rec.g().size() == m.nodes + 3);
  BOOST_TEST(kind(rec.g(), id(m.nodes)) == "constant");
  expect_op(rec.g(), Mark{m.nodes + 1, m.edges}, "masked_fill", {before, id(m.nodes)}, {{2, 3}},
            true);
  BOOST_TEST(x.node().value == m.nodes + 2);
  BOOST_TEST(x.tensor().equal(t.masked_fill(mask, 1.0)));
}

BOOST_AUTO_TEST_CASE(consecutive_inplace_ops_chain_through_the_advancing_node) {
  Recording rec;
  const at::Tensor t = at::randn({2, 3});
  R x = rec.input(t.clone());
  x.relu_();
  x *= 2.0;
  x.add_(x);  // both operands are x's current node
  BOOST_TEST_REQUIRE(rec.g().size() == 7u);
  BOOST_TEST(all_edges(rec.g()) ==
                 (std::vector<std::string>{"0->1", "1->2", "2->3", "3->4", "4->5", "4->5", "5->6"}),
             boost::test_tools::per_element());
  for (std::uint32_t f : {1u, 3u, 5u}) BOOST_TEST(rec.g().node(NodeId{f}).inplace);
  BOOST_TEST(x.node().value == 6u);
  BOOST_TEST(x.tensor().equal(t.relu().mul(2.0).mul(2)));
}

BOOST_AUTO_TEST_CASE(inplace_and_out_of_place_chains_have_the_same_structure) {
  const at::Tensor t = at::randn({2, 3}), b = at::randn({2, 3});

  Recording out_of_place;
  R x1 = out_of_place.input(t.clone());
  const R b1 = out_of_place.input(b, "b");
  x1 = x1 + b1;
  x1 = relu(x1);
  x1 = x1 * 2.0;
  x1 = x1.clamp(-1.0, 1.0);

  Recording in_place;
  R x2 = in_place.input(t.clone());
  const R b2 = in_place.input(b, "b");
  x2 += b2;
  x2.relu_();
  x2 *= 2.0;
  x2.clamp_(-1.0, 1.0);

  const Graph& g1 = out_of_place.g();
  const Graph& g2 = in_place.g();
  BOOST_TEST_REQUIRE(g1.size() == 10u);
  BOOST_TEST_REQUIRE(g2.size() == g1.size());
  for (std::size_t i = 0; i < g1.size(); ++i) {
    BOOST_TEST_CONTEXT("node " << i) {
      NodeDesc d1 = describe(g1, id(i)), d2 = describe(g2, id(i));
      if (kind(g1, id(i)) == "function") {
        BOOST_TEST(!d1.inplace);
        BOOST_TEST(d2.inplace);
        d2.inplace = false;
      }
      BOOST_TEST(d1 == d2);
    }
  }
  BOOST_TEST(all_edges(g1) == all_edges(g2), boost::test_tools::per_element());
  BOOST_TEST(x1.node().value == x2.node().value);
  BOOST_TEST(x1.tensor().equal(x2.tensor()));
}

BOOST_AUTO_TEST_SUITE_END()
