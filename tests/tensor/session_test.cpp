/// Recording scope and policy: record::Off and no session record nothing, a tensor from another
/// session is a constant, `recorder::op` records any callable, a failing op throws a TraceError
/// and adds nothing, nested results are visited left to right.
#include <boost/test/unit_test.hpp>

#include "support.hpp"

#include <recorder/graph/views.hpp>
#include <recorder/tensor/op.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

#include <ATen/ops/cat.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/zeros.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

using namespace recorder_test;
namespace rd = recorder::detail;

namespace {

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace

// ---- record::Off -------------------------------------------------------------------------

using Off = recorder::RecorderTensor<recorder::record::Off>;
static_assert(sizeof(Off) == sizeof(at::Tensor), "record::Off must cost nothing beyond the tensor");
static_assert(sizeof(R) > sizeof(at::Tensor));

BOOST_AUTO_TEST_SUITE(policy_off)

BOOST_AUTO_TEST_CASE(ops_compute_like_libtorch_and_record_nothing) {
  rd::Session s;
  rd::SessionScope scope(s);
  const at::Tensor ta = at::randn({2, 3}), tb = at::randn({3, 2}), c = at::randn({2, 3});
  const at::Tensor p = at::randn({2, 3}).requires_grad_();
  Off a(rd::adopt, ta, {}), b(rd::adopt, tb, {});

  BOOST_TEST(relu(a).tensor().equal(ta.relu()));
  BOOST_TEST(a.softmax(1).tensor().equal(ta.softmax(1)));
  BOOST_TEST(matmul(a, b).tensor().equal(ta.matmul(tb)));
  BOOST_TEST((a + 1.5).tensor().equal(ta.add(1.5)));
  BOOST_TEST((a * c).tensor().equal(ta.mul(c)));
  BOOST_TEST((a * p).tensor().equal(ta.mul(p)));
  BOOST_TEST((-a).tensor().equal(ta.neg()));
  BOOST_TEST(a.view({3, 2}).tensor().equal(ta.view({3, 2})));
  const auto [v, i] = max(a, 1);
  const auto [pv, pi] = ta.max(1);
  BOOST_TEST(v.tensor().equal(pv));
  BOOST_TEST(i.tensor().equal(pi));
  const std::vector<Off> parts = a.chunk(3, 1);
  BOOST_TEST(parts.size() == 3u);
  BOOST_TEST(parts[2].tensor().equal(ta.chunk(3, 1)[2]));
  BOOST_TEST(recorder::cat({a, a}, 1).tensor().equal(at::cat({ta, ta}, 1)));
  const Off e = recorder::op(
      "erfinv", [](const at::Tensor& t) { return t.clamp(-0.5, 0.5).erfinv(); }, a);
  BOOST_TEST(e.tensor().equal(ta.clamp(-0.5, 0.5).erfinv()));

  Off x(rd::adopt, ta.clone(), {});
  x += b.transpose(0, 1);
  x.relu_();
  BOOST_TEST(x.tensor().equal(ta.add(tb.t()).relu()));

  BOOST_TEST(!a.node().valid());
  BOOST_TEST(!x.node().valid());
  BOOST_TEST(s.graph.size() == 0u);
  BOOST_TEST(s.graph.edge_count() == 0u);
  BOOST_TEST(s.parameters.empty());
}

BOOST_AUTO_TEST_SUITE_END()

// ---- no session ------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(no_session)

BOOST_AUTO_TEST_CASE(ops_outside_any_scope_compute_and_record_nothing) {
  BOOST_TEST_REQUIRE(rd::current_session() == nullptr);
  rd::Session s;
  R x;
  {
    rd::SessionScope scope(s);
    x = R(rd::adopt, at::randn({2, 3}),
          s.ref(rd::add_tensor_node(s, NodeKind::input, at::randn({2, 3}), {}, {}, 0, "x")));
  }
  BOOST_TEST(rd::current_session() == nullptr);
  const at::Tensor t = x.tensor();
  const std::size_t nodes = s.graph.size();

  const R y = relu(x) + 1.0;
  BOOST_TEST(!y.node().valid());
  BOOST_TEST(y.tensor().equal(t.relu().add(1.0)));
  const R z = matmul(x, x.transpose(0, 1));
  BOOST_TEST(!z.node().valid());
  BOOST_TEST(z.tensor().equal(t.matmul(t.t())));
  const std::vector<R> parts = split(x, 1, 1);
  BOOST_TEST(parts.size() == 3u);
  for (const R& part : parts) BOOST_TEST(!part.node().valid());
  const R e = recorder::op(
      "erfinv", [](const at::Tensor& u) { return u.clamp(-0.5, 0.5).erfinv(); }, x);
  BOOST_TEST(!e.node().valid());

  // In place: the data changes, the (stale) node does not advance.
  const NodeId before = x.node();
  const at::Tensor expected = t.add(1.0);
  R w = x;
  w.add_(1.0);
  BOOST_TEST(w.node().value == before.value);
  BOOST_TEST(w.tensor().equal(expected));
  BOOST_TEST(s.graph.size() == nodes);

  // A default-constructed RecorderTensor is not recorded anywhere.
  BOOST_TEST(!R{}.node().valid());
  BOOST_TEST(!R{}.defined());
}

BOOST_AUTO_TEST_CASE(scopes_nest_and_restore) {
  rd::Session outer, inner;
  {
    rd::SessionScope a(outer);
    BOOST_TEST(rd::current_session() == &outer);
    {
      rd::SessionScope b(inner);
      BOOST_TEST(rd::current_session() == &inner);
    }
    BOOST_TEST(rd::current_session() == &outer);
  }
  BOOST_TEST(rd::current_session() == nullptr);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- a tensor from another session -----------------------------------------------------------

BOOST_AUTO_TEST_SUITE(stale_tensor)

BOOST_AUTO_TEST_CASE(tensor_of_session_a_is_a_constant_in_session_b) {
  rd::Session a;
  R y;
  {
    rd::SessionScope scope(a);
    const R x =
        R(rd::adopt, at::randn({2, 3}),
          a.ref(rd::add_tensor_node(a, NodeKind::input, at::randn({2, 3}), {}, {}, 0, "x")));
    y = relu(x).view({3, 2});  // node 4 in a
  }
  BOOST_TEST_REQUIRE(y.node().value == 4u);

  Recording b;
  const R w = b.input(at::randn({3, 2}), "w");
  const R z = y + w;
  const std::vector<NodeDesc> expected{
      {"input", "input", {3, 2}, false, NodeId::invalid, "w"},
      {"constant", "constant", {3, 2}, false, NodeId::invalid, ""},
      {"function", "add", {}, false, NodeId::invalid, ""},
      {"tensor", "tensor", {3, 2}, false, 2, ""},
  };
  BOOST_TEST(describe_all(b.g()) == expected, boost::test_tools::per_element());
  BOOST_TEST(all_edges(b.g()) == (std::vector<std::string>{"1->2", "0->2", "2->3"}),
             boost::test_tools::per_element());
  BOOST_TEST(z.node().value == 3u);
  BOOST_TEST(z.tensor().equal(y.tensor().add(w.tensor())));
  BOOST_TEST(a.graph.size() == 5u);  // session a is untouched

  // In place on the stale tensor: its node becomes a constant of b, then advances into b.
  R y2 = y;
  y2.relu_();
  BOOST_TEST_REQUIRE(b.g().size() == 7u);
  BOOST_TEST(kind(b.g(), id(4)) == "constant");
  BOOST_TEST(new_edges(b.g(), Mark{4, 3}) == (std::vector<std::string>{"4->5", "5->6"}),
             boost::test_tools::per_element());
  BOOST_TEST(y2.node().value == 6u);
}

BOOST_AUTO_TEST_CASE(a_new_session_at_the_same_address_does_not_adopt_old_nodes) {
  std::optional<rd::Session> slot;
  slot.emplace();
  const rd::Session* first = &*slot;
  R y;
  {
    rd::SessionScope scope(*slot);
    const R x = R(
        rd::adopt, at::randn({2, 3}),
        slot->ref(rd::add_tensor_node(*slot, NodeKind::input, at::randn({2, 3}), {}, {}, 0, "x")));
    y = relu(x);  // node 2 of the first session
  }
  slot.reset();
  slot.emplace();
  BOOST_TEST_REQUIRE(&*slot == first);  // same storage: only the serial tells them apart
  rd::SessionScope scope(*slot);
  for (int i = 0; i < 3; ++i)
    rd::add_tensor_node(*slot, NodeKind::input, at::randn({1}), {}, {}, 0, "pad");
  const R z = y.sigmoid();
  BOOST_TEST_REQUIRE(slot->graph.size() == 6u);
  BOOST_TEST(kind(slot->graph, id(3)) == "constant");
  BOOST_TEST(all_edges(slot->graph) == (std::vector<std::string>{"3->4", "4->5"}),
             boost::test_tools::per_element());
  BOOST_TEST(z.node().value == 5u);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- recorder::op ------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(generic_op)

BOOST_AUTO_TEST_CASE(records_a_callable_as_one_function_node) {
  Recording rec;
  const at::Tensor t = at::rand({2, 3}).mul(1.8).sub(0.9);
  const R x = rec.input(t);
  const Mark m = mark(rec.g());
  const auto y = recorder::op(
      "erfinv", [](const at::Tensor& u) { return u.erfinv(); }, x);
  static_assert(std::is_same_v<std::remove_const_t<decltype(y)>, R>);
  const auto outs = expect_op(rec.g(), m, "erfinv", {x.node()}, {{2, 3}});
  BOOST_TEST(y.node().value == outs[0].value);
  BOOST_TEST(y.tensor().equal(t.erfinv()));
}

BOOST_AUTO_TEST_CASE(runtime_name_survives_the_string) {
  Recording rec;
  const R x = rec.input(at::randn({4}));
  const Mark m = mark(rec.g());
  R y;
  {
    std::string name =
        "custom_op_with_a_name_longer_than_any_small_string_buffer_" + std::to_string(42);
    y = recorder::op(
        name, [](const at::Tensor& u) { return u.mul(3); }, x);
    name.assign(name.size(), '#');  // overwrite the characters before the string dies
  }
  const std::string clobber(200, '@');  // likely reuses the freed storage
  expect_op(rec.g(), m, "custom_op_with_a_name_longer_than_any_small_string_buffer_42", {x.node()},
            {{4}});
  BOOST_TEST(!clobber.empty());
}

BOOST_AUTO_TEST_CASE(tuple_result_wraps_every_output_in_order) {
  Recording rec;
  const at::Tensor t = at::randn({2, 3});
  const R x = rec.input(t);
  const Mark m = mark(rec.g());
  auto [s, c] = recorder::op(
      "sincos", [](const at::Tensor& u) { return std::make_tuple(u.sin(), u.cos().sum(1)); }, x);
  static_assert(std::is_same_v<decltype(s), R> && std::is_same_v<decltype(c), R>);
  const auto outs = expect_op(rec.g(), m, "sincos", {x.node()}, {{2, 3}, {2}});
  BOOST_TEST(s.node().value == outs[0].value);
  BOOST_TEST(c.node().value == outs[1].value);
  BOOST_TEST(s.tensor().equal(t.sin()));
  BOOST_TEST(c.tensor().equal(t.cos().sum(1)));

  // A nested tuple: leaves in order.
  const Mark m2 = mark(rec.g());
  auto nested = recorder::op(
      "tree",
      [](const at::Tensor& u) {
        return std::make_tuple(u.relu(), std::make_tuple(u.exp(), u.t()));
      },
      x);
  static_assert(std::is_same_v<decltype(nested), std::tuple<R, std::tuple<R, R>>>);
  const auto outs2 = expect_op(rec.g(), m2, "tree", {x.node()}, {{2, 3}, {2, 3}, {3, 2}});
  BOOST_TEST(std::get<0>(nested).node().value == outs2[0].value);
  BOOST_TEST(std::get<1>(std::get<1>(nested)).node().value == outs2[2].value);
}

BOOST_AUTO_TEST_CASE(mixed_arguments) {
  Recording rec;
  const at::Tensor ta = at::randn({2, 3}), tb = at::randn({2, 3}), c = at::randn({2, 3});
  const R a = rec.input(ta, "a"), b = rec.input(tb, "b");

  // A plain tensor is a constant operand; a scalar passes through unrecorded.
  Mark m = mark(rec.g());
  R y = recorder::op(
      "addcmul", [](const at::Tensor& u, const at::Tensor& v, double k) { return u.add(v.mul(k)); },
      a, c, 0.5);
  BOOST_TEST_REQUIRE(rec.g().size() == m.nodes + 3);
  BOOST_TEST(kind(rec.g(), id(m.nodes)) == "constant");
  expect_op(rec.g(), Mark{m.nodes + 1, m.edges}, "addcmul", {a.node(), id(m.nodes)}, {{2, 3}});
  BOOST_TEST(y.tensor().equal(ta.add(c.mul(0.5))));

  // A vector of RecorderTensors is one operand per element.
  m = mark(rec.g());
  y = recorder::op(
      "cat_all", [](const std::vector<at::Tensor>& v) { return at::cat(v, 0); },
      std::vector<R>{b, a});
  expect_op(rec.g(), m, "cat_all", {b.node(), a.node()}, {{4, 3}});
  BOOST_TEST(y.tensor().equal(at::cat({tb, ta}, 0)));

  // Plain arguments only: just the call, nothing recorded, a plain result.
  m = mark(rec.g());
  const auto plain = recorder::op(
      "plain", [](const at::Tensor& u) { return u.neg(); }, ta);
  static_assert(std::is_same_v<std::remove_const_t<decltype(plain)>, at::Tensor>);
  BOOST_TEST(plain.equal(ta.neg()));
  BOOST_TEST(rec.g().size() == m.nodes);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- failures --------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(failure)

BOOST_AUTO_TEST_CASE(failing_op_throws_trace_error_and_adds_nothing) {
  Recording rec;
  const R a = rec.input(at::randn({2, 3}), "a");
  const R b = rec.input(at::randn({4, 5}), "b");
  const R ok = relu(a);
  const Mark m = mark(rec.g());
  const auto before = describe_all(rec.g());
  const auto edges_before = all_edges(rec.g());
  BOOST_TEST_REQUIRE(!rec.s.failure.has_value());

  bool thrown = false;
  try {
    (void)matmul(a, b);
  } catch (const recorder::TraceError& e) {
    thrown = true;
    const std::string what = e.what();
    BOOST_TEST_INFO("what(): " << what);
    BOOST_TEST(contains(what, "op 'matmul'"));
    BOOST_TEST(contains(what, "<root>"));
    BOOST_TEST(e.failure().op == "matmul");
    BOOST_TEST(!e.partial_trace());
    bool nested = false;
    try {
      std::rethrow_if_nested(e);
    } catch (const c10::Error& inner) {
      nested = true;
      const std::string message = inner.what_without_backtrace();
      BOOST_TEST_INFO("libtorch: " << message);
      BOOST_TEST(contains(message, "shapes cannot be multiplied"));
      BOOST_TEST(contains(what, message));
      BOOST_TEST(e.failure().message == message);
    } catch (...) {
      BOOST_ERROR("the nested exception is not a c10::Error");
    }
    BOOST_TEST(nested);
  }
  BOOST_TEST(thrown);
  BOOST_TEST(rec.g().size() == m.nodes);
  BOOST_TEST(rec.g().edge_count() == m.edges);
  BOOST_TEST(describe_all(rec.g()) == before, boost::test_tools::per_element());
  BOOST_TEST(all_edges(rec.g()) == edges_before, boost::test_tools::per_element());
  BOOST_TEST_REQUIRE(rec.s.failure.has_value());
  BOOST_TEST(rec.s.failure->op == "matmul");
  BOOST_TEST(contains(rec.s.failure->message, "shapes cannot be multiplied"));
  BOOST_TEST(rec.s.failure->module_path.empty());

  // The recording goes on after a caught failure; the first failure is kept.
  BOOST_CHECK_THROW((void)(a * at::randn({7})), recorder::TraceError);
  BOOST_TEST(rec.g().size() == m.nodes);  // no constant node for the plain operand either
  BOOST_TEST(rec.s.failure->op == "matmul");
  const Mark m2 = mark(rec.g());
  const R fine = ok + a;
  expect_op(rec.g(), m2, "add", {ok.node(), a.node()}, {{2, 3}});
}

BOOST_AUTO_TEST_CASE(failing_inplace_op_leaves_node_and_graph_alone) {
  Recording rec;
  R x = rec.input(at::randn({2, 3}));
  const R y = rec.input(at::randn({5}), "y");
  const NodeId before = x.node();
  const Mark m = mark(rec.g());
  try {
    x.add_(y);
    BOOST_ERROR("add_ with mismatched shapes did not throw");
  } catch (const recorder::TraceError& e) {
    BOOST_TEST(contains(e.what(), "op 'add'"));
    BOOST_TEST(e.failure().op == "add");
  }
  BOOST_TEST(x.node().value == before.value);
  BOOST_TEST(rec.g().size() == m.nodes);
  BOOST_TEST(rec.g().edge_count() == m.edges);
  BOOST_TEST_REQUIRE(rec.s.failure.has_value());
  BOOST_TEST(rec.s.failure->op == "add");
}

BOOST_AUTO_TEST_CASE(generic_op_failure_and_pass_through) {
  Recording rec;
  const R x = rec.input(at::randn({2, 3}));
  const R bad = rec.input(at::randn({4, 5}), "bad");
  const Mark m = mark(rec.g());

  try {
    (void)recorder::op(
        "boom", [](const at::Tensor&) -> at::Tensor { throw std::runtime_error("kaboom"); }, x);
    BOOST_ERROR("op did not throw");
  } catch (const recorder::TraceError& e) {
    BOOST_TEST(contains(e.what(), "op 'boom'"));
    BOOST_TEST(contains(e.what(), "kaboom"));
    BOOST_CHECK_THROW(std::rethrow_if_nested(e), std::runtime_error);
  }
  BOOST_TEST(rec.g().size() == m.nodes);

  // A TraceError from a traced op inside the callable passes through unchanged.
  try {
    (void)recorder::op(
        "outer", [&](const at::Tensor&) { return matmul(x, bad).tensor(); }, x);
    BOOST_ERROR("op did not throw");
  } catch (const recorder::TraceError& e) {
    BOOST_TEST(e.failure().op == "matmul");
    BOOST_TEST(!contains(e.what(), "outer"));
  }
  BOOST_TEST(rec.g().size() == m.nodes);
  BOOST_TEST(rec.s.failure->op == "boom");
}

BOOST_AUTO_TEST_CASE(no_session_failure_is_the_plain_libtorch_error) {
  const R a(rd::adopt, at::randn({2, 3}), {});
  const R b(rd::adopt, at::randn({4, 5}), {});
  BOOST_CHECK_THROW((void)matmul(a, b), c10::Error);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- nested results ----------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(nested)

BOOST_AUTO_TEST_CASE(map_leaves_visits_left_to_right_and_rebuilds) {
  // Leaves told apart by their size: 1, 2, 3.
  auto tree = std::make_tuple(at::zeros({1}), std::make_tuple(at::zeros({2}), at::zeros({3})));
  std::vector<std::int64_t> order;
  auto f = [&order](const at::Tensor& t) {
    order.push_back(t.numel());
    return static_cast<int>(order.size()) * 10;
  };
  const auto out = rd::map_leaves(tree, f);
  static_assert(
      std::is_same_v<std::remove_const_t<decltype(out)>, std::tuple<int, std::tuple<int, int>>>);
  BOOST_TEST(order == (std::vector<std::int64_t>{1, 2, 3}), boost::test_tools::per_element());
  BOOST_TEST(std::get<0>(out) == 10);
  BOOST_TEST(std::get<0>(std::get<1>(out)) == 20);
  BOOST_TEST(std::get<1>(std::get<1>(out)) == 30);

  // Pairs and vectors too.
  order.clear();
  auto mixed = std::make_pair(std::vector<at::Tensor>{at::zeros({4}), at::zeros({5})},
                              std::make_tuple(at::zeros({6})));
  const auto out2 = rd::map_leaves(std::move(mixed), f);
  static_assert(std::is_same_v<std::remove_const_t<decltype(out2)>,
                               std::pair<std::vector<int>, std::tuple<int>>>);
  BOOST_TEST(order == (std::vector<std::int64_t>{4, 5, 6}), boost::test_tools::per_element());
  BOOST_TEST(out2.first == (std::vector<int>{10, 20}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(for_each_leaf_visits_left_to_right) {
  const auto tree = std::make_tuple(at::zeros({1}), std::make_tuple(at::zeros({2}), at::zeros({3})),
                                    std::vector<at::Tensor>{at::zeros({4})});
  std::vector<std::int64_t> order;
  auto visit = [&order](const at::Tensor& t) { order.push_back(t.numel()); };
  rd::for_each_leaf(tree, visit);
  BOOST_TEST(order == (std::vector<std::int64_t>{1, 2, 3, 4}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(wrapped_lstm_like_result_records_outputs_in_leaf_order) {
  Recording rec;
  const R x = rec.input(at::randn({2, 3}));
  const Mark m = mark(rec.g());
  // The shape of an LSTM's result: tuple<output, tuple<h, c>>.
  auto [out, state] = recorder::op(
      "lstm_like",
      [](const at::Tensor& u) {
        return std::make_tuple(u.unsqueeze(0), std::make_tuple(u.sum(1), u.sum(0)));
      },
      x);
  const auto outs = expect_op(rec.g(), m, "lstm_like", {x.node()}, {{1, 2, 3}, {2}, {3}});
  BOOST_TEST(out.node().value == outs[0].value);
  BOOST_TEST(std::get<0>(state).node().value == outs[1].value);
  BOOST_TEST(std::get<1>(state).node().value == outs[2].value);
}

BOOST_AUTO_TEST_SUITE_END()
