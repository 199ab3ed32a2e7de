/// The recorded graph: appending and reading nodes, module calls, numbering, interned strings.
#define BOOST_TEST_MODULE graph
#include <boost/test/unit_test.hpp>

#include <recorder/graph/graph.hpp>
#include <recorder/graph/trace.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace recorder;

namespace {

ModuleInfo module_info(std::string path, std::string class_name, bool leaf) {
  ModuleInfo m;
  m.name = path.empty() ? class_name : path.substr(path.rfind('.') + 1);
  m.path = std::move(path);
  m.class_name = std::move(class_name);
  m.leaf = leaf;
  return m;
}

}  // namespace

BOOST_AUTO_TEST_CASE(ids) {
  BOOST_TEST(!NodeId{}.valid());
  BOOST_TEST(NodeId{0}.valid());
  BOOST_TEST(!ModuleId{}.valid());
  BOOST_TEST((NodeId{1} < NodeId{2}));
  BOOST_TEST((NodeId{3} == NodeId{3}));
  BOOST_TEST(to_string(NodeKind::parameter) == "parameter");
  BOOST_TEST(is_tensor_kind(NodeKind::constant));
  BOOST_TEST(!is_tensor_kind(NodeKind::function));
  BOOST_TEST(!is_tensor_kind(NodeKind::module));
}

BOOST_AUTO_TEST_CASE(append_and_read) {
  Graph g;
  BOOST_TEST(g.size() == 0u);
  const std::int64_t dims[] = {1, 3, 224, 224};
  const NodeId x = g.add_tensor(NodeKind::input, {}, 0, dims, "Float", "cpu", {}, "x");
  const ModuleId m = g.add_module(module_info("", "Net", false));
  const NodeId root = g.add_module_call(m, {}, 0, {x});
  const NodeId f = g.add_function("relu", root, 1, true);
  g.add_edge(x, f);
  const std::int64_t out_dims[] = {1, 3, 224, 224};
  const NodeId y = g.add_tensor(NodeKind::tensor, root, 1, out_dims, "Float", "cpu", f);
  g.add_edge(f, y);
  g.set_call_outputs(root, {y});

  BOOST_TEST(g.size() == 4u);
  BOOST_TEST(g.edge_count() == 2u);
  BOOST_TEST(g.module_count() == 1u);
  BOOST_TEST((g.kind(x) == NodeKind::input));
  BOOST_TEST(g.shape(x).size() == 4u);
  BOOST_TEST(g.shape(x)[3] == 224);
  BOOST_TEST(g.tensor(x).name == "x");
  BOOST_TEST(g.tensor(x).dtype == "Float");
  BOOST_TEST(!g.tensor(x).producer.valid());
  BOOST_TEST((g.tensor(y).producer == f));
  BOOST_TEST(g.function(f).op == "relu");
  BOOST_TEST(g.node(f).inplace);
  BOOST_TEST((g.node(f).parent == root));
  BOOST_TEST(g.node(f).depth == 1u);
  BOOST_TEST(g.call(root).inputs.size() == 1u);
  BOOST_TEST((g.call(root).outputs == std::vector<NodeId>{y}));
  BOOST_TEST(g.module_of(root).class_name == "Net");
  BOOST_TEST(g.label(f) == "relu");
  BOOST_TEST(g.label(root) == "Net");
  BOOST_TEST(g.label(y) == "tensor");
  BOOST_TEST((g.edges()[0] == Edge{x, f}));
  BOOST_TEST(g.within(f, root));
  BOOST_TEST(g.within(root, root));
  BOOST_TEST(!g.within(x, root));

  g.set_tensor_name(y, "out");
  BOOST_TEST(g.tensor(y).name == "out");
  g.set_failed(root);
  BOOST_TEST(g.node(root).failed);
  g.set_leaf(m, true);
  BOOST_TEST(g.module(m).leaf);
}

BOOST_AUTO_TEST_CASE(sizes_with_names) {
  // An exported program's dynamic size: a name and the size it was exported with. Tensors added
  // before and after one with a name have none; a copy keeps them.
  Graph g;
  const std::int64_t plain[] = {2, 3};
  const NodeId a = g.add_tensor(NodeKind::input, {}, 0, plain, "Float", "cpu");
  BOOST_TEST(g.shape(a).names() == nullptr);
  const std::int64_t sizes[] = {4, 8, 5};
  const std::string_view names[] = {g.intern("s0"), "", g.intern("2*s1")};
  const NodeId b = g.add_tensor(NodeKind::tensor, {}, 0, Shape(sizes, names), "Float", "cpu");
  const NodeId c = g.add_tensor(NodeKind::tensor, {}, 0, plain, "Float", "cpu");
  const Graph copy = g;
  BOOST_TEST(to_string(copy.shape(b)) == "[s0, 8, 2*s1]");
  BOOST_TEST(copy.shape(b)[0] == 4);
  BOOST_TEST(copy.shape(b).name(1).empty());
  BOOST_TEST(to_string(g.shape(a)) == "[2, 3]");
  BOOST_TEST(to_string(g.shape(c)) == "[2, 3]");
  BOOST_TEST(same_shape(g.shape(a), g.shape(c)));
  const std::int64_t same_sizes[] = {4, 8, 5};
  const NodeId d = g.add_tensor(NodeKind::tensor, {}, 0, same_sizes, "Float", "cpu");
  BOOST_TEST(!same_shape(g.shape(b), g.shape(d)));  // equal sizes, one named
}

BOOST_AUTO_TEST_CASE(wrong_kinds_and_ids_throw) {
  Graph g;
  const std::int64_t dims[] = {2};
  const NodeId t = g.add_tensor(NodeKind::tensor, {}, 0, dims, "Float", "cpu");
  const NodeId f = g.add_function("add", {}, 0);
  BOOST_CHECK_THROW(g.node(NodeId{99}), std::out_of_range);
  BOOST_CHECK_THROW(g.node(NodeId{}), std::out_of_range);
  BOOST_CHECK_THROW(g.tensor(f), std::invalid_argument);
  BOOST_CHECK_THROW(g.function(t), std::invalid_argument);
  BOOST_CHECK_THROW(g.call(t), std::invalid_argument);
  BOOST_CHECK_THROW(g.add_module_call(ModuleId{5}, {}, 0), std::out_of_range);
  BOOST_CHECK_THROW(g.module(ModuleId{5}), std::out_of_range);
  BOOST_CHECK_THROW(g.set_call_outputs(f, {}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(depth_index_numbers_calls_per_depth_across_the_model) {
  // torchinfo: Net 0-1 > layer1 1-1 > (conv 2-1, relu 2-2) ; layer2 1-2 > (conv 2-3, relu 2-4) ;
  // fc 1-3
  Graph g;
  const ModuleId net = g.add_module(module_info("", "Net", false));
  const ModuleId l1 = g.add_module(module_info("layer1", "Sequential", false));
  const ModuleId l2 = g.add_module(module_info("layer2", "Sequential", false));
  const ModuleId conv = g.add_module(module_info("layer1.0", "Conv2d", true));
  const ModuleId relu = g.add_module(module_info("layer1.1", "ReLU", true));
  const ModuleId conv2 = g.add_module(module_info("layer2.0", "Conv2d", true));
  const ModuleId relu2 = g.add_module(module_info("layer2.1", "ReLU", true));
  const ModuleId fc = g.add_module(module_info("fc", "Linear", true));
  const NodeId root = g.add_module_call(net, {}, 0);
  const NodeId a = g.add_module_call(l1, root, 1);
  const NodeId a1 = g.add_module_call(conv, a, 2);
  const NodeId a2 = g.add_module_call(relu, a, 2);
  const NodeId b = g.add_module_call(l2, root, 1);
  const NodeId b1 = g.add_module_call(conv2, b, 2);
  const NodeId b2 = g.add_module_call(relu2, b, 2);
  const NodeId c = g.add_module_call(fc, root, 1);
  const auto label = [&](NodeId id) {
    return std::to_string(g.node(id).depth) + "-" + std::to_string(g.call(id).depth_index);
  };
  BOOST_TEST(label(root) == "0-1");
  BOOST_TEST(label(a) == "1-1");
  BOOST_TEST(label(a1) == "2-1");
  BOOST_TEST(label(a2) == "2-2");
  BOOST_TEST(label(b) == "1-2");
  BOOST_TEST(label(b1) == "2-3");
  BOOST_TEST(label(b2) == "2-4");
  BOOST_TEST(label(c) == "1-3");
}

BOOST_AUTO_TEST_CASE(containers_never_called_get_torchinfos_rows) {
  // A Transformer-like model: Embedding, then encoder.layers.{0,1} iterated from the root's
  // forward (encoder and encoder.layers never called), then head; then encoder.layers.0.norm
  // called again from the root (encoder.layers.0 is no longer the row above it).
  Graph g;
  const ModuleId net = g.add_module(module_info("", "Net", false));
  const ModuleId embed = g.add_module(module_info("embed", "Embedding", true));
  const ModuleId l0 = g.add_module(module_info("encoder.layers.0", "Layer", false));
  const ModuleId norm0 = g.add_module(module_info("encoder.layers.0.norm", "LayerNorm", true));
  const ModuleId l1 = g.add_module(module_info("encoder.layers.1", "Layer", false));
  const ModuleId head = g.add_module(module_info("head", "Linear", true));
  const NodeId root = g.add_module_call(net, {}, 0);
  const NodeId e = g.add_module_call(embed, root, 1);
  const NodeId a = g.add_module_call(l0, root, 1);
  const NodeId an = g.add_module_call(norm0, a, 2);
  const NodeId b = g.add_module_call(l1, root, 1);
  const NodeId h = g.add_module_call(head, root, 1);
  const NodeId again = g.add_module_call(norm0, root, 1);
  const auto label = [&](NodeId id) { return depth_index_label(g, id); };
  BOOST_TEST(label(e) == "1-1");
  BOOST_TEST(label(a) == "3-1");  // encoder 1-2, encoder.layers 2-1
  BOOST_TEST(label(an) == "4-1");
  BOOST_TEST(label(b) == "3-2");
  BOOST_TEST(label(h) == "1-3");
  BOOST_TEST(label(again) == "4-2");  // encoder 1-4, encoder.layers 2-2, encoder.layers.0 3-3
  BOOST_TEST(g.node(a).depth == 1);   // the drawing's depth stays the call's
  BOOST_TEST(g.call(a).table_depth == 3);
  const auto& rows = g.container_rows();
  BOOST_TEST_REQUIRE(rows.size() == 5u);
  const std::vector<std::string> expected{"encoder 1-2 before 2", "encoder.layers 2-1 before 2",
                                          "encoder 1-4 before 6", "encoder.layers 2-2 before 6",
                                          "encoder.layers.0 3-3 before 6"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const NodeId before = rows[i].before;
    const std::size_t k = before == a ? 2 : (before == again ? 6 : 0);
    BOOST_TEST(std::string(rows[i].path) + ' ' + std::to_string(rows[i].depth) + '-' +
                   std::to_string(rows[i].depth_index) + " before " + std::to_string(k) ==
               expected[i]);
  }
  // A front end registers the containers' records as the trace ends.
  register_containers(
      g, [](std::string_view path) { return module_info(std::string(path), "ModuleList", false); });
  BOOST_TEST(g.module_at("encoder.layers") != nullptr);
  BOOST_TEST(g.module_at("encoder.layers.0") == &g.module(l0));  // called: registered already
  BOOST_TEST(g.module_count() == 8u);
}

BOOST_AUTO_TEST_CASE(call_index_counts_calls_of_one_module) {
  Graph g;
  const ModuleId net = g.add_module(module_info("", "Net", false));
  const ModuleId conv = g.add_module(module_info("conv", "Conv2d", true));
  const NodeId root = g.add_module_call(net, {}, 0);
  std::vector<NodeId> calls;
  for (int i = 0; i < 3; ++i) calls.push_back(g.add_module_call(conv, root, 1));
  for (std::uint32_t i = 0; i < 3; ++i) {
    BOOST_TEST(g.call(calls[i]).call_index == i);
    BOOST_TEST(g.call(calls[i]).depth_index == i + 1);
    BOOST_TEST((g.call(calls[i]).module == conv));
  }
  BOOST_TEST(g.module(conv).calls == 3u);
  BOOST_TEST(g.module(net).calls == 1u);
}

BOOST_AUTO_TEST_CASE(interned_strings_survive_copies) {
  Graph copy;
  std::string_view op;
  {
    Graph g;
    std::string temporary = "custom_op";
    op = g.intern(temporary);
    temporary = "overwritten";
    const NodeId f = g.add_function(op, {}, 0);
    const std::int64_t dims[] = {4};
    g.add_tensor(NodeKind::input, {}, 0, dims, g.intern("Half"), g.intern("cuda:1"), {},
                 g.intern("image"));
    copy = g;
    BOOST_TEST(copy.function(f).op == "custom_op");
    g.intern("more strings after the copy");
  }
  BOOST_TEST(copy.function(NodeId{0}).op == "custom_op");
  BOOST_TEST(op == "custom_op");
  BOOST_TEST(copy.tensor(NodeId{1}).dtype == "Half");
  BOOST_TEST(copy.tensor(NodeId{1}).device == "cuda:1");
  BOOST_TEST(copy.tensor(NodeId{1}).name == "image");
  // Many more strings do not move the earlier ones (the pool is a deque).
  for (int i = 0; i < 10000; ++i) copy.intern(std::to_string(i));
  BOOST_TEST(op == "custom_op");
}

BOOST_AUTO_TEST_CASE(trace_completeness) {
  Trace t;
  BOOST_TEST(t.complete());
  BOOST_TEST(!t.root.valid());
  t.failure = Failure{"matmul", "block", "Block", "shape mismatch"};
  BOOST_TEST(!t.complete());
}

namespace {

/// A chain of `n` relu ops: input, then function + tensor per op.
void chain(Graph& g, std::size_t n) {
  static constexpr std::int64_t shape[] = {1, 8};
  NodeId prev = g.add_tensor(NodeKind::input, {}, 0, Shape(shape), "Float", "cpu");
  for (std::size_t i = 0; i < n; ++i) {
    const NodeId fn = g.add_function("relu", {}, 1);
    g.add_edge(prev, fn);
    prev = g.add_tensor(NodeKind::tensor, {}, 1, Shape(shape), "Float", "cpu", fn);
    g.add_edge(fn, prev);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_destroyed_graph_leaves_its_memory_to_the_next_one_its_storage_lends) {
  const auto storage = std::make_shared<GraphStorage>();
  BOOST_TEST(storage->bytes() == 0u);
  {
    Graph g(storage);
    chain(g, 1000);
    Graph copy = g;  // copies own their memory
    BOOST_TEST(copy.size() == 2001u);
  }
  const std::size_t cached = storage->bytes();
  BOOST_TEST(cached >= 2001 * sizeof(Graph::Node) + 2000 * sizeof(Edge));
  {
    Graph g(storage);  // takes the storage: empty, and appending into it gives the same graph
    BOOST_TEST(storage->bytes() == 0u);
    BOOST_TEST(g.size() == 0u);
    BOOST_TEST(g.edge_count() == 0u);
    chain(g, 3);
    BOOST_TEST(g.size() == 7u);
    BOOST_TEST(g.edge_count() == 6u);
    BOOST_TEST(g.function(NodeId{1}).op == "relu");
    BOOST_TEST(g.tensor(NodeId{2}).producer == NodeId{1});
    BOOST_TEST(to_string(g.shape(NodeId{6})) == "[1, 8]");
    Graph other(storage);  // a second graph alive at once starts without it
    BOOST_TEST(other.nodes().capacity() == 0u);
    Graph plain;  // and a graph lent nothing owns its memory
    BOOST_TEST(plain.nodes().capacity() == 0u);
  }
  // The larger storage stays; a smaller graph destroyed later does not replace it.
  BOOST_TEST(storage->bytes() == cached);
  storage->release();
  BOOST_TEST(storage->bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(graphs_outliving_their_storage_free_their_own_memory) {
  // A graph destroyed after the storage that lent it frees its memory itself (ASan and UBSan
  // watch this in the sanitizer stage), on any thread.
  std::vector<Graph> graphs;
  graphs.reserve(2);
  std::size_t cached = 0;
  {
    auto storage = std::make_shared<GraphStorage>();
    {
      Graph g(storage);
      chain(g, 100);
    }
    cached = storage->bytes();
    graphs.emplace_back(storage);  // takes the storage
    chain(graphs.back(), 10);
    std::thread([&] {
      Graph g(storage);  // lent nothing (the first holds it), given back on this thread
      chain(g, 1000);
    }).join();
    BOOST_TEST(storage->bytes() > cached);  // the larger tables stay
    graphs.emplace_back(storage);
    chain(graphs.back(), 1000);
  }
  BOOST_TEST(cached > 0u);
  BOOST_TEST(graphs.at(1).size() == 2001u);
  graphs.clear();  // after the storage: each frees its own
}

BOOST_AUTO_TEST_CASE(memory_bytes_counts_capacities_and_what_module_records_own) {
  // A graph lent nothing.
  std::size_t empty = 0, reserved = 0, with_modules = 0, with_one = 0, expected_one = 0;
  {
    Graph g;
    empty = g.memory_bytes();
    g.reserve(Graph::Capacity{.nodes = 1000, .edges = 500});
    reserved = g.memory_bytes();
    g.reserve_modules(4);
    with_modules = g.memory_bytes();
    ModuleInfo m = module_info("a_rather_long_module_path.conv1", "Conv2d", true);
    ParamInfo p;
    p.name = "weight";
    p.shape = {64, 3, 7, 7};
    m.params.push_back(std::move(p));
    m.attributes.emplace_back("kernel_size", "[7, 7]");
    expected_one = (m.path.capacity() + 1) + m.params.capacity() * sizeof(ParamInfo) +
                   m.params[0].shape.capacity() * sizeof(std::int64_t) +
                   m.attributes.capacity() * sizeof(std::pair<std::string, std::string>);
    g.add_module(std::move(m));  // moved: the same capacities
    with_one = g.memory_bytes();
  }
  BOOST_TEST(reserved - empty == 1000 * sizeof(Graph::Node) + 500 * sizeof(Edge));
  BOOST_TEST(with_modules - reserved == 4 * sizeof(ModuleInfo));
  BOOST_TEST(with_one - with_modules == expected_one);
  BOOST_TEST(expected_one > 32u + 4 * sizeof(std::int64_t));  // the path is not inline
}

BOOST_AUTO_TEST_CASE(a_destroyed_graphs_module_records_take_the_next_graphs_copies) {
  const auto storage = std::make_shared<GraphStorage>();
  ModuleInfo conv = module_info("a_rather_long_module_path.conv1", "Conv2d", true);
  ParamInfo w;
  w.name = "weight";
  w.shape = {64, 3, 7, 7};
  w.numel = 64 * 3 * 7 * 7;
  conv.params.push_back(w);
  conv.attributes.emplace_back("kernel_size", "[7, 7]");
  conv.param_count = w.numel;
  const ModuleInfo root = module_info("", "Net", false);

  const char* old_path = nullptr;
  const std::int64_t* old_shape = nullptr;
  std::size_t records_bytes = 0;
  {
    Graph g(storage);
    g.add_module(ModuleInfo(root));
    g.add_module(ModuleInfo(conv));
    old_path = g.module(ModuleId{1}).path.data();
    old_shape = g.module(ModuleId{1}).params[0].shape.data();
    records_bytes = g.memory_bytes();  // only module records: no node, nothing reserved
  }
  const std::size_t cached = storage->bytes();
  BOOST_TEST(cached == records_bytes);  // the records, whole
  BOOST_TEST(cached >= 2 * sizeof(ModuleInfo) + conv.path.size() + 4 * sizeof(std::int64_t));
  std::size_t three_records_bytes = 0;
  {
    Graph g(storage);
    BOOST_TEST(g.add_module(root).value == 0u);  // copies, into the lent records
    BOOST_TEST(g.add_module(conv).value == 1u);
    BOOST_TEST(g.add_module(conv).value == 2u);  // none left: a new record
    const ModuleInfo& m = g.module(ModuleId{1});
    BOOST_TEST(m.path.data() == old_path);  // the lent record's own buffers, reused
    BOOST_TEST(m.params.at(0).shape.data() == old_shape);
    for (const ModuleId id : {ModuleId{1}, ModuleId{2}}) {
      const ModuleInfo& c = g.module(id);
      BOOST_TEST(c.path == conv.path);
      BOOST_TEST(c.name == "conv1");
      BOOST_TEST(c.class_name == "Conv2d");
      BOOST_TEST(c.params.size() == 1u);
      BOOST_TEST(c.params.at(0).name == "weight");
      BOOST_TEST(c.params.at(0).shape == w.shape);
      BOOST_TEST(c.params.at(0).numel == w.numel);
      BOOST_TEST(c.param_count == w.numel);
      BOOST_TEST(c.attributes == conv.attributes);
      BOOST_TEST(c.calls == 0u);
    }
    BOOST_TEST(g.module(ModuleId{0}).class_name == "Net");
    BOOST_TEST(g.module(ModuleId{0}).params.empty());
    // The records lent are the graph's until it is destroyed: the storage keeps nothing.
    BOOST_TEST(storage->bytes() == 0u);
    three_records_bytes = g.memory_bytes();
  }
  // Three records outnumber the none left: they replace them (whose vector is kept, as room
  // for the next graph's records).
  const std::size_t after_three = storage->bytes();
  BOOST_TEST(after_three == three_records_bytes + 2 * sizeof(ModuleInfo));
  BOOST_TEST(after_three >= cached);
  // A smaller graph destroyed later leaves its records only if they outnumber those left.
  { Graph g(storage); }
  BOOST_TEST(storage->bytes() == after_three);
  storage->release();
  BOOST_TEST(storage->bytes() == 0u);
}

BOOST_AUTO_TEST_CASE(release_growth_frees_the_room_a_graph_grew_but_keeps_lent_memory) {
  const auto storage = std::make_shared<GraphStorage>();
  {
    std::size_t cached_nodes = 0;
    {
      Graph g(storage);  // grows its own tables: the storage has none yet
      chain(g, 1000);
      BOOST_TEST(g.nodes().capacity() > g.size());  // doubling left room
      const std::size_t before = g.memory_bytes();
      g.release_growth();
      BOOST_TEST(g.nodes().capacity() == 2001u);
      BOOST_TEST(g.edges().capacity() == 2000u);
      BOOST_TEST(g.memory_bytes() < before);
      BOOST_TEST(g.memory_bytes() == 2001 * sizeof(Graph::Node) + 2000 * sizeof(Edge) +
                                         1001 * sizeof(Graph::TensorData) +
                                         2002 * sizeof(std::int64_t) +
                                         1000 * sizeof(Graph::FunctionData));
      BOOST_TEST(to_string(g.shape(NodeId{2000})) == "[1, 8]");  // the same graph
      BOOST_TEST(g.function(NodeId{1999}).op == "relu");
      cached_nodes = g.nodes().capacity();
    }
    Graph h(storage);  // takes the storage: releasing keeps it, for the next graph
    chain(h, 10);
    h.release_growth();
    BOOST_TEST(h.size() == 21u);
    BOOST_TEST(h.nodes().capacity() == cached_nodes);
  }
}
