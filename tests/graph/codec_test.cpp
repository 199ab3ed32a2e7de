// graph/codec.hpp: a trace encoded and decoded is the same trace, node for node, and renders
// the same; bytes that are not an encoding (truncated, corrupted, another version) throw.
#define BOOST_TEST_MODULE graph_codec
#include <boost/test/unit_test.hpp>

#include "render/fixtures.hpp"
#include "render/synthetic.hpp"

#include <recorder/graph/codec.hpp>
#include <recorder/render/dot.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/json.hpp>
#include <recorder/render/summary.hpp>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace recorder;
using namespace recorder::testing;

namespace {

template <class Backend>
std::string rendered(const Trace& t, RenderOptions o = {}) {
  std::ostringstream os;
  render<Backend>(t, o, os);
  return os.str();
}

// Every field of every node, module, edge and of the trace itself.
void expect_same(const Trace& a, const Trace& b) {
  BOOST_TEST(a.model_name == b.model_name);
  BOOST_TEST(a.root == b.root);
  BOOST_TEST(a.total_params == b.total_params);
  BOOST_TEST(a.trainable_params == b.trainable_params);
  BOOST_TEST(a.param_bytes == b.param_bytes);
  BOOST_TEST(a.torch_version == b.torch_version);
  BOOST_TEST(a.failure.has_value() == b.failure.has_value());
  if (a.failure && b.failure) {
    BOOST_TEST(a.failure->op == b.failure->op);
    BOOST_TEST(a.failure->module_path == b.failure->module_path);
    BOOST_TEST(a.failure->message == b.failure->message);
  }
  BOOST_TEST(a.warnings == b.warnings, boost::test_tools::per_element());
  const Graph &g = a.graph, &h = b.graph;
  BOOST_REQUIRE_EQUAL(g.size(), h.size());
  BOOST_REQUIRE_EQUAL(g.module_count(), h.module_count());
  BOOST_TEST((g.edges() == h.edges()));
  for (std::size_t i = 0; i < g.module_count(); ++i) {
    const ModuleInfo &m = g.modules()[i], &n = h.modules()[i];
    BOOST_TEST(m.path == n.path);
    BOOST_TEST(m.name == n.name);
    BOOST_TEST(m.class_name == n.class_name);
    BOOST_TEST(m.param_count == n.param_count);
    BOOST_TEST(m.trainable_count == n.trainable_count);
    BOOST_TEST(m.leaf == n.leaf);
    BOOST_TEST(m.calls == n.calls);
    BOOST_TEST((m.attributes == n.attributes));
    BOOST_REQUIRE_EQUAL(m.params.size(), n.params.size());
    for (std::size_t p = 0; p < m.params.size(); ++p) {
      BOOST_TEST(m.params[p].name == n.params[p].name);
      BOOST_TEST(m.params[p].shape == n.params[p].shape, boost::test_tools::per_element());
      BOOST_TEST(m.params[p].numel == n.params[p].numel);
      BOOST_TEST(m.params[p].trainable == n.params[p].trainable);
      BOOST_TEST(m.params[p].element_bytes == n.params[p].element_bytes);
      BOOST_TEST(m.params[p].id == n.params[p].id);
    }
  }
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId id{i};
    const Graph::Node &x = g.node(id), &y = h.node(id);
    BOOST_TEST_CONTEXT("node " << i) {
      BOOST_TEST((x.kind == y.kind));
      BOOST_TEST(x.inplace == y.inplace);
      BOOST_TEST(x.failed == y.failed);
      BOOST_TEST(x.inferred == y.inferred);
      BOOST_TEST(x.depth == y.depth);
      BOOST_TEST(x.parent == y.parent);
      if (is_tensor_kind(x.kind)) {
        BOOST_TEST(to_string(g.shape(id)) == to_string(h.shape(id)));
        BOOST_TEST(g.tensor(id).dtype == h.tensor(id).dtype);
        BOOST_TEST(g.tensor(id).device == h.tensor(id).device);
        BOOST_TEST(g.tensor(id).producer == h.tensor(id).producer);
        BOOST_TEST(g.tensor(id).name == h.tensor(id).name);
      } else if (x.kind == NodeKind::function) {
        BOOST_TEST(g.function(id).op == h.function(id).op);
      } else {
        const Graph::CallData &c = g.call(id), &d = h.call(id);
        BOOST_TEST(c.module.value == d.module.value);
        BOOST_TEST(c.call_index == d.call_index);
        BOOST_TEST(c.depth_index == d.depth_index);
        BOOST_TEST(c.inputs == d.inputs, boost::test_tools::per_element());
        BOOST_TEST(c.outputs == d.outputs, boost::test_tools::per_element());
      }
    }
  }
}

std::vector<Trace> traces() {
  Trace warned = mlp();
  warned.warnings = {"first warning", "second, with \"quotes\""};
  warned.param_bytes = 40'132;
  warned.torch_version = "2.13";
  return {mlp(),
          residual(),
          resnet18(),
          failed(),
          recursive_net(),
          observed_mlp(),
          reused_block(),
          hostile(),
          std::move(warned),
          synthetic_chain(50),
          synthetic_transformer(2),
          Trace{}};
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_decoded_trace_equals_the_encoded_one) {
  for (const Trace& t : traces()) {
    BOOST_TEST_CONTEXT(t.model_name << " (" << t.graph.size() << " nodes)") {
      const std::string bytes = encode_trace(t);
      const Trace back = decode_trace(bytes);
      expect_same(t, back);
      BOOST_TEST(encode_trace(back) == bytes);  // a fixed point
      if (t.root.valid()) {
        BOOST_TEST(rendered<backend::Dot>(back, {.depth = 3}) ==
                   rendered<backend::Dot>(t, {.depth = 3}));
        BOOST_TEST(rendered<backend::Json>(back) == rendered<backend::Json>(t));
        BOOST_TEST(rendered<backend::Summary>(back) == rendered<backend::Summary>(t));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(every_truncation_and_foreign_bytes_throw) {
  const std::string bytes = encode_trace(residual());
  for (std::size_t n = 0; n < bytes.size(); ++n)
    BOOST_CHECK_THROW(decode_trace(std::string_view(bytes).substr(0, n)), std::invalid_argument);
  BOOST_CHECK_THROW(decode_trace(bytes + "x"), std::invalid_argument);  // trailing bytes
  BOOST_CHECK_THROW(decode_trace("not a trace at all"), std::invalid_argument);
  try {
    decode_trace(bytes.substr(0, 10));
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("malformed trace bytes") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(corrupted_bytes_throw_or_decode_but_never_crash) {
  // Flipping any byte either gives an error or some trace; never a crash or a read out of
  // bounds (this test also runs under ASan and UBSan).
  const std::string bytes = encode_trace(failed());
  std::size_t thrown = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    try {
      (void)decode_trace(bad);
    } catch (const std::invalid_argument&) {
      ++thrown;
    }
  }
  BOOST_TEST(thrown > bytes.size() / 4);
}
