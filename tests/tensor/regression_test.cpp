/// Regression tests for RecorderTensor recording bugs found while writing tests/tensor (fixed):
/// each case states what the design promises.
#define BOOST_TEST_MODULE tensor_regressions
#include <boost/test/unit_test.hpp>

#include "support.hpp"

#include <recorder/graph/views.hpp>
#include <recorder/tensor/op.hpp>
#include <recorder/tensor/recorder_tensor.hpp>

#include <ATen/ops/randn.h>

#include <cstddef>
#include <new>
#include <string>
#include <thread>
#include <vector>

using namespace recorder_test;
namespace rd = recorder::detail;

// Session::owns() promises to reject "an older or another thread's recording", but the serial
// that tells sessions apart comes from a thread_local counter: the first session of every
// thread has serial 1. A session of thread B built at the address of a finished session of
// thread A then "owns" A's tensors, and an op on one records edges to A's node ids.
BOOST_AUTO_TEST_CASE(session_of_another_thread_at_the_same_address_is_not_the_owner) {
  alignas(rd::Session) static std::byte storage[sizeof(rd::Session)];
  R from_a;
  std::thread a([&] {
    auto* s = ::new (storage) rd::Session();
    {
      rd::SessionScope scope(*s);
      const R x(
          rd::adopt, at::randn({2, 3}),
          s->ref(rd::add_tensor_node(*s, NodeKind::input, at::randn({2, 3}), {}, {}, 0, "x")));
      from_a = relu(x).sigmoid();  // node 4 of thread A's session
    }
    s->~Session();
  });
  a.join();
  BOOST_TEST_REQUIRE(from_a.node().value == 4u);

  std::vector<NodeDesc> nodes;
  std::vector<std::string> edges;
  std::thread b([&] {
    auto* s = ::new (storage) rd::Session();
    {
      rd::SessionScope scope(*s);
      for (int i = 0; i < 5; ++i)
        rd::add_tensor_node(*s, NodeKind::input, at::randn({7}), {}, {}, 0, "pad");
      (void)from_a.exp();
      nodes = describe_all(s->graph);
      edges = all_edges(s->graph);
    }
    s->~Session();
  });
  b.join();
  // Expected in B: pads 0-4, then a constant for from_a (5), the exp node (6), its output (7).
  BOOST_TEST_REQUIRE(nodes.size() == 8u);
  BOOST_TEST(nodes[5].kind == "constant");
  BOOST_TEST(edges == (std::vector<std::string>{"5->6", "6->7"}), boost::test_tools::per_element());
}

// Session::parameters is keyed by the TensorImpl address of a parameter operand but does not
// keep the tensor alive. When a tensor that requires grad dies and a new one is allocated at
// the same address, the new one is taken for the old one: it gets no node of its own, and the
// graph shows the old one's shape.
BOOST_AUTO_TEST_CASE(distinct_parameters_get_distinct_nodes) {
  Recording rec;
  const R x = rec.input(at::randn({2, 3}));
  for (int i = 0; i < 4; ++i) {
    const R y = x * at::randn({i % 2 == 0 ? 2 : 1, 3}).requires_grad_();
    (void)y;
  }
  BOOST_TEST(recorder::views::count(rec.g(), NodeKind::parameter) == 4u);
  std::vector<Dims> shapes;
  for (NodeId p : recorder::views::of_kind(rec.g(), NodeKind::parameter))
    shapes.push_back(shape(rec.g(), p));
  BOOST_TEST_REQUIRE(shapes.size() == 4u);
  BOOST_TEST(shapes[1] == (Dims{1, 3}), boost::test_tools::per_element());
}

// recorder::op forwards plain arguments to the callable and reads them again afterwards to
// record their nodes: a callable that takes a tensor by value moves it out, and the operand is
// recorded as an undefined tensor.
BOOST_AUTO_TEST_CASE(op_records_a_plain_rvalue_operand_with_its_shape) {
  Recording rec;
  const R x = rec.input(at::randn({2, 3}));
  const Mark m = mark(rec.g());
  const R y = recorder::op(
      "scaled_add", [](const at::Tensor& a, at::Tensor b) { return a.add(b); }, x,
      at::randn({2, 3}));
  BOOST_TEST_REQUIRE(rec.g().size() == m.nodes + 3);
  BOOST_TEST(kind(rec.g(), id(m.nodes)) == "constant");
  BOOST_TEST(shape(rec.g(), id(m.nodes)) == (Dims{2, 3}), boost::test_tools::per_element());
  BOOST_TEST(dtype(rec.g(), id(m.nodes)) == "Float");
  BOOST_TEST(y.sizes().vec() == (Dims{2, 3}), boost::test_tools::per_element());
}
