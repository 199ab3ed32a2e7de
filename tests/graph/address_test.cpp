/// Layer addresses: labels, paths, classes, execution indices and predicates on a ResNet-like trace.
#define BOOST_TEST_MODULE graph_address
#include <boost/test/unit_test.hpp>

#include <recorder/graph/address.hpp>
#include <recorder/graph/graph.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

using namespace recorder;

namespace {

/// Records module calls as the tracer does: a module is registered at its first call, each
/// call is a node whose parent is the enclosing call, one level deeper.
struct Builder {
  Graph g;
  std::map<std::string, ModuleId> ids;

  NodeId call(const std::string& path, const std::string& class_name, NodeId parent,
              bool leaf = true) {
    auto it = ids.find(path);
    if (it == ids.end()) {
      ModuleInfo m;
      m.name = path.empty() ? class_name : path.substr(path.rfind('.') + 1);
      m.path = path;
      m.class_name = class_name;
      m.leaf = leaf;
      it = ids.emplace(path, g.add_module(std::move(m))).first;
    }
    const std::uint16_t depth =
        parent.valid() ? static_cast<std::uint16_t>(g.node(parent).depth + 1) : std::uint16_t{0};
    return g.add_module_call(it->second, parent, depth);
  }
};

/// ResNet-like: the rows of torchinfo's ResNet-18 table up to layer2.0, then avgpool and fc.
struct ResNetLike {
  Builder b;
  NodeId root, conv1, bn1, relu, maxpool, layer1, block10, block11, layer2, block20, downsample,
      ds0, ds1, avgpool, fc;
  std::vector<NodeId> relu10;  // layer1.0.relu, called twice

  ResNetLike() {
    const std::int64_t dims[] = {1, 3, 224, 224};
    const NodeId x = b.g.add_tensor(NodeKind::input, {}, 0, dims, "Float", "cpu", {}, "x");
    root = b.call("", "ResNet", {}, false);
    b.g.add_edge(x, root);
    conv1 = b.call("conv1", "Conv2d", root);
    bn1 = b.call("bn1", "BatchNorm2d", root);
    relu = b.call("relu", "ReLU", root);
    maxpool = b.call("maxpool", "MaxPool2d", root);
    layer1 = b.call("layer1", "Sequential", root, false);
    block10 = block("layer1.0", layer1, false);
    block11 = block("layer1.1", layer1, false);
    layer2 = b.call("layer2", "Sequential", root, false);
    block20 = block("layer2.0", layer2, true);
    avgpool = b.call("avgpool", "AdaptiveAvgPool2d", root);
    fc = b.call("fc", "Linear", root);
  }

  NodeId block(const std::string& p, NodeId parent, bool with_downsample) {
    const NodeId blk = b.call(p, "BasicBlock", parent, false);
    b.call(p + ".conv1", "Conv2d", blk);
    b.call(p + ".bn1", "BatchNorm2d", blk);
    const NodeId r0 = b.call(p + ".relu", "ReLU", blk);
    b.call(p + ".conv2", "Conv2d", blk);
    b.call(p + ".bn2", "BatchNorm2d", blk);
    if (with_downsample) {
      downsample = b.call(p + ".downsample", "Sequential", blk, false);
      ds0 = b.call(p + ".downsample.0", "Conv2d", downsample);
      ds1 = b.call(p + ".downsample.1", "BatchNorm2d", downsample);
    }
    b.g.add_function("add", blk, static_cast<std::uint16_t>(b.g.node(blk).depth + 1));
    const NodeId r1 = b.call(p + ".relu", "ReLU", blk);
    if (p == "layer1.0") relu10 = {r0, r1};
    return blk;
  }
};

/// The error resolving `a` in `g` throws (none when it resolves).
std::optional<UnknownLayer> unknown_error(const Graph& g, const LayerAddress& a) {
  try {
    resolve(g, a);
  } catch (const UnknownLayer& e) {
    return e;
  }
  return std::nullopt;
}

std::string unknown_message(const Graph& g, const LayerAddress& a) {
  const auto e = unknown_error(g, a);
  return e ? e->what() : "(resolved)";
}

std::vector<std::string> labels(const Graph& g, const std::vector<NodeId>& calls) {
  std::vector<std::string> out;
  for (NodeId c : calls) out.push_back(depth_index_label(g, c));
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_CASE(parsing_picks_label_or_path) {
  BOOST_TEST(std::holds_alternative<address::Label>(LayerAddress("2-3").selector()));
  BOOST_TEST(std::holds_alternative<address::Label>(LayerAddress("02-003").selector()));
  for (const char* path :
       {"2-", "-1", "a-b", "2-3-4", " 2-3", "2 -3", "layer1.0.conv1", "", "<root>"})
    BOOST_TEST(std::holds_alternative<address::Path>(LayerAddress(path).selector()), path);
  const auto p = std::get<address::Path>(LayerAddress("layer1.0.relu#1").selector());
  BOOST_TEST(p.path == "layer1.0.relu");
  BOOST_TEST((p.call == std::uint32_t{1}));
  const auto not_an_index = std::get<address::Path>(LayerAddress("odd#name").selector());
  BOOST_TEST(not_an_index.path == "odd#name");
  BOOST_TEST(!not_an_index.call.has_value());
}

BOOST_AUTO_TEST_CASE(canonical_spelling) {
  BOOST_TEST(to_string(LayerAddress("02-003")) == "2-3");
  BOOST_TEST(to_string(LayerAddress{2, 3}) == "2-3");
  BOOST_TEST(to_string(LayerAddress("layer1.0.conv1")) == "layer1.0.conv1");
  BOOST_TEST(to_string(LayerAddress("layer1.0.relu#1")) == "layer1.0.relu#1");
  BOOST_TEST(to_string(LayerAddress("")) == "<root>");
  BOOST_TEST(to_string(LayerAddress("<root>")) == "<root>");
  BOOST_TEST(to_string(LayerAddress{}) == "<root>");
  BOOST_TEST(to_string(by_path("2-3")) == "by_path(\"2-3\")");
  BOOST_TEST(to_string(by_class("Conv2d")) == "by_class(\"Conv2d\")");
  BOOST_TEST(to_string(by_index(5)) == "by_index(5)");
  BOOST_TEST(to_string(where([](const Graph&, NodeId) { return true; })) == "where(<predicate>)");
  BOOST_TEST(to_string(where([](const Graph&, NodeId) { return true; }, "leaves")) ==
             "where(leaves)");
}

BOOST_AUTO_TEST_CASE(predicate_concept) {
  static_assert(layer_predicate<bool (*)(const Graph&, NodeId)>);
  static_assert(!layer_predicate<bool (*)(NodeId)>);
  static_assert(!layer_predicate<int>);
  BOOST_TEST(true);
}

BOOST_AUTO_TEST_CASE(depth_index_labels_as_torchinfo_numbers_them) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  BOOST_TEST((resolve_one(g, "1-1") == m.conv1));
  BOOST_TEST((resolve_one(g, {1, 4}) == m.maxpool));
  BOOST_TEST((resolve_one(g, {2, 1}) == m.block10));
  BOOST_TEST((resolve_one(g, {2, 2}) == m.block11));
  BOOST_TEST((resolve_one(g, {2, 3}) == m.block20));
  BOOST_TEST((resolve_one(g, "3-18") == m.downsample));
  BOOST_TEST((resolve_one(g, "4-1") == m.ds0));
  BOOST_TEST((resolve_one(g, "1-8") == m.fc));
  BOOST_TEST((resolve_one(g, "0-1") == m.root));
  BOOST_TEST(depth_index_label(g, m.relu10[1]) == "3-6");

  // Every row of torchinfo's ResNet-18 table down to layer2.0, in order.
  std::vector<NodeId> calls;
  for (std::uint32_t i = 0; i < g.size(); ++i)
    if (g.kind(NodeId{i}) == NodeKind::module) calls.push_back(NodeId{i});
  const Strings expected = {"0-1",  "1-1",  "1-2", "1-3",  "1-4",  "1-5",  "2-1",  "3-1",  "3-2",
                            "3-3",  "3-4",  "3-5", "3-6",  "2-2",  "3-7",  "3-8",  "3-9",  "3-10",
                            "3-11", "3-12", "1-6", "2-3",  "3-13", "3-14", "3-15", "3-16", "3-17",
                            "3-18", "4-1",  "4-2", "3-19", "1-7",  "1-8"};
  BOOST_TEST(labels(g, calls) == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(paths_select_every_call_or_one) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  BOOST_TEST(resolve(g, "layer1.0.relu") == m.relu10, boost::test_tools::per_element());
  BOOST_TEST((resolve_one(g, "layer1.0.relu#1") == m.relu10[1]));
  BOOST_TEST((resolve_one(g, "layer1.0.relu#0") == m.relu10[0]));
  BOOST_TEST((resolve_one(g, by_path("layer1.0.relu", 1)) == m.relu10[1]));
  BOOST_TEST((resolve_one(g, "layer2.0.downsample.1") == m.ds1));
  BOOST_TEST((resolve_one(g, "") == m.root));
  BOOST_TEST((resolve_one(g, "<root>") == m.root));
  BOOST_TEST((resolve_one(g, "<root>#0") == m.root));
  BOOST_TEST((resolve_one(g, std::string("fc")) == m.fc));
}

BOOST_AUTO_TEST_CASE(classes_indices_and_predicates) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  BOOST_TEST(resolve(g, by_class("BatchNorm2d")).size() == 8u);
  BOOST_TEST(labels(g, resolve(g, by_class("Conv2d"))) ==
                 (Strings{"1-1", "3-1", "3-4", "3-7", "3-10", "3-13", "3-16", "4-1"}),
             boost::test_tools::per_element());
  BOOST_TEST((resolve_one(g, by_class("ResNet")) == m.root));

  BOOST_TEST((resolve_one(g, by_index(0)) == m.conv1));
  BOOST_TEST((resolve_one(g, by_index(5)) == m.block10));
  BOOST_TEST((resolve_one(g, by_index(11)) == m.relu10[1]));
  BOOST_TEST((resolve_one(g, by_index(26)) == m.downsample));
  BOOST_TEST((resolve_one(g, by_index(31)) == m.fc));

  const auto relus = where([](const Graph& gr, NodeId c) {
    return gr.module_of(c).class_name == "ReLU" && gr.node(c).depth == 3;
  });
  BOOST_TEST(labels(g, resolve(g, relus)) == (Strings{"3-3", "3-6", "3-9", "3-12", "3-15", "3-19"}),
             boost::test_tools::per_element());
  const auto composites =
      where([](const Graph& gr, NodeId c) { return !gr.module_of(c).leaf; }, "composites");
  BOOST_TEST(resolve(g, composites).size() == 7u);
}

BOOST_AUTO_TEST_CASE(every_call_round_trips_through_its_addresses) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  std::size_t position = 0;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const NodeId c{i};
    if (g.kind(c) != NodeKind::module) continue;
    BOOST_TEST((resolve_one(g, depth_index_label(g, c)) == c));
    BOOST_TEST((resolve_one(g, path_address(g, c)) == c));
    if (c != m.root) BOOST_TEST((resolve_one(g, by_index(position++)) == c));
  }
  BOOST_TEST(position == 32u);
  BOOST_TEST(path_address(g, m.relu10[1]) == "layer1.0.relu#1");
  BOOST_TEST(path_address(g, m.fc) == "fc");
  BOOST_TEST(path_address(g, m.root) == "<root>");
}

BOOST_AUTO_TEST_CASE(unknown_path_lists_the_nearest_paths) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  BOOST_TEST(unknown_message(g, "layer1.0.conv3") ==
             "recorder: unknown layer 'layer1.0.conv3': no module has this path; nearest: "
             "layer1.0.conv1, layer1.0.conv2, layer1.1.conv1, layer1.1.conv2, layer2.0.conv1");
  try {
    resolve(g, "layer1.0.conv3");
    BOOST_FAIL("no throw");
  } catch (const UnknownLayer& e) {
    BOOST_TEST(e.address() == "layer1.0.conv3");
    BOOST_TEST(e.suggestions().size() == 5u);
    BOOST_TEST(e.suggestions()[0] == "layer1.0.conv1");
    BOOST_TEST(e.suggestions()[1] == "layer1.0.conv2");
  }
  BOOST_CHECK_THROW(resolve(g, "layer1.0.conv3"), std::invalid_argument);
  BOOST_TEST(
      unknown_message(g, "layer1.0.relu#2") ==
      "recorder: unknown layer 'layer1.0.relu#2': module 'layer1.0.relu' was called 2 times; "
      "valid: layer1.0.relu#0, layer1.0.relu#1");
  BOOST_TEST(unknown_message(g, by_path("2-3")) ==
             "recorder: unknown layer 'by_path(\"2-3\")': no module has this path; nearest: "
             "bn1, fc, relu, conv1, layer1");
}

BOOST_AUTO_TEST_CASE(a_modules_own_name_lists_every_path_ending_in_it_and_their_class) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  BOOST_TEST(unknown_message(g, "conv2") ==
             "recorder: unknown layer 'conv2': no module has this path; modules of that name: "
             "layer1.0.conv2, layer1.1.conv2, layer2.0.conv2, by_class(\"Conv2d\")");
  BOOST_TEST(unknown_message(g, "0.relu") ==
             "recorder: unknown layer '0.relu': no module has this path; modules of that name: "
             "layer1.0.relu, layer2.0.relu, by_class(\"ReLU\")");
  // A front end with its own address syntax respells the message.
  const UnknownLayer both({*unknown_error(g, "downsample"), *unknown_error(g, by_class("Conv3d"))});
  const auto spell = [](const std::string& a) {
    for (const auto& [head, mine] :
         {std::pair<std::string, std::string>{"by_class(\"", "class:"}, {"by_index(", "index:"}}) {
      if (a.rfind(head, 0) != 0) continue;
      const std::size_t tail = head.back() == '"' ? 2 : 1;
      return mine + a.substr(head.size(), a.size() - head.size() - tail);
    }
    return a;
  };
  BOOST_TEST(unknown_error(g, by_index(40))->message(spell) ==
             "recorder: unknown layer 'index:40': the trace has 32 module calls below the root, "
             "index:0 to index:31; nearest: index:31");
  BOOST_TEST(both.message(spell) ==
             "recorder: 2 unknown layers: 'downsample' (no module has this path; modules of "
             "that name: layer2.0.downsample, class:Sequential) and 'class:Conv3d' (no module "
             "of this class was called; classes present: Conv2d, Linear, ReLU, ResNet, "
             "MaxPool2d, BatchNorm2d, Sequential, BasicBlock, AdaptiveAvgPool2d)");
}

BOOST_AUTO_TEST_CASE(malformed_labels_are_unknown_paths) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  for (const char* s : {"2-", "-1", "a-b"}) {
    const std::string msg = unknown_message(g, s);
    BOOST_TEST(msg.rfind("recorder: unknown layer '" + std::string(s) +
                             "': no module has this path; nearest: ",
                         0) == 0u,
               msg);
  }
}

BOOST_AUTO_TEST_CASE(unknown_label_lists_valid_labels) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  BOOST_TEST(unknown_message(g, "3-99") ==
             "recorder: unknown layer '3-99': depth 3 has labels 3-1 to 3-19; nearest: "
             "3-15, 3-16, 3-17, 3-18, 3-19");
  BOOST_TEST(unknown_message(g, "3-0") ==
             "recorder: unknown layer '3-0': depth 3 has labels 3-1 to 3-19; nearest: "
             "3-1, 3-2, 3-3, 3-4, 3-5");
  BOOST_TEST(
      unknown_message(g, "7-1") ==
      "recorder: unknown layer '7-1': no module call at depth 7; valid depths: 0, 1, 2, 3, 4; "
      "nearest: 4-1, 4-2");
  BOOST_TEST(
      unknown_message(g, {-1, 1}) ==
      "recorder: unknown layer '-1-1': no module call at depth -1; valid depths: 0, 1, 2, 3, 4; "
      "nearest: 0-1");
  BOOST_TEST(unknown_message(g, "99999999999999999999-1")
                 .rfind("recorder: unknown layer '9223372036854775807-1': no module call at depth",
                        0) == 0u);
}

BOOST_AUTO_TEST_CASE(unknown_class_index_and_predicate) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  BOOST_TEST(unknown_message(g, by_class("Conv3d")) ==
             "recorder: unknown layer 'by_class(\"Conv3d\")': no module of this class was called; "
             "classes present: Conv2d, Linear, ReLU, ResNet, MaxPool2d, BatchNorm2d, Sequential, "
             "BasicBlock, AdaptiveAvgPool2d");
  BOOST_TEST(
      unknown_message(g, by_index(32)) ==
      "recorder: unknown layer 'by_index(32)': the trace has 32 module calls below the root, "
      "by_index(0) to by_index(31); nearest: by_index(31)");
  BOOST_TEST(
      unknown_message(g, where([](const Graph&, NodeId) { return false; })) ==
      "recorder: unknown layer 'where(<predicate>)': no module call satisfies the predicate");
  const Graph empty;
  BOOST_TEST(unknown_message(empty, "1-1") ==
             "recorder: unknown layer '1-1': the trace has no module calls");
  BOOST_TEST(unknown_message(empty, "") ==
             "recorder: unknown layer '<root>': the trace has no root call");
}

BOOST_AUTO_TEST_CASE(resolve_one_lists_ambiguous_matches) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  try {
    resolve_one(g, "layer1.0.relu");
    BOOST_FAIL("no throw");
  } catch (const AmbiguousLayer& e) {
    BOOST_TEST(std::string(e.what()) ==
               "recorder: layer 'layer1.0.relu' is ambiguous: 2 calls match: "
               "layer1.0.relu#0 (3-3), layer1.0.relu#1 (3-6)");
    BOOST_TEST(e.matches() == m.relu10, boost::test_tools::per_element());
  }
  try {
    resolve_one(g, by_class("BatchNorm2d"));
    BOOST_FAIL("no throw");
  } catch (const AmbiguousLayer& e) {
    BOOST_TEST(std::string(e.what()) ==
               "recorder: layer 'by_class(\"BatchNorm2d\")' is ambiguous: 8 calls match: "
               "bn1 (1-2), layer1.0.bn1 (3-2), layer1.0.bn2 (3-5), layer1.1.bn1 (3-8), "
               "layer1.1.bn2 (3-11), layer2.0.bn1 (3-14), layer2.0.bn2 (3-17), "
               "layer2.0.downsample.1 (4-2)");
  }
  BOOST_CHECK_THROW(resolve_one(g, "layer1.0.relu"), std::invalid_argument);
  try {  // past `ambiguity_limit` matches, the rest are counted
    resolve_one(g, all_layers());
    BOOST_FAIL("no throw");
  } catch (const AmbiguousLayer& e) {
    const std::string what = e.what();
    BOOST_TEST(what.starts_with(
        "recorder: layer 'where(all layers)' is ambiguous: 32 calls match: conv1 (1-1), "));
    BOOST_TEST(what.ends_with(", and 22 more"));
    BOOST_TEST(e.matches().size() == 32u);
  }
}

// `resolve` is `matches` over the graph: every call the per-call matcher selects as the calls
// open (what a capture policy sees, its position counted below the root), nothing else. A bare
// path selects every call of a module called twice; `path#k` one of them.
BOOST_AUTO_TEST_CASE(resolve_agrees_with_the_per_call_matcher) {
  const ResNetLike m;
  const Graph& g = m.b.g;
  const std::vector<LayerAddress> addresses = {
      "layer1.0.relu",
      "layer1.0.relu#0",
      "layer1.0.relu#1",
      "3-6",
      "<root>",
      "fc",
      by_class("ReLU"),
      by_class("BatchNorm2d"),
      by_index(0),
      by_index(11),
      by_index(31),
      all_layers(),
      where([](const Graph& gr, NodeId c) { return !gr.module_of(c).leaf; }, "composites")};
  for (const LayerAddress& a : addresses) {
    std::vector<NodeId> seen;
    std::size_t position = 0;
    for (std::uint32_t i = 0; i < g.size(); ++i) {
      const NodeId c{i};
      if (g.kind(c) != NodeKind::module) continue;
      const std::size_t p = g.node(c).parent.valid() ? position++ : 0;
      if (matches(a, facts_of(g, c, p))) seen.push_back(c);
    }
    BOOST_TEST(resolve(g, a) == seen, to_string(a) << boost::test_tools::per_element());
  }
  BOOST_TEST(resolve(g, "layer1.0.relu") == m.relu10, boost::test_tools::per_element());
  BOOST_TEST(matches("layer1.0.relu", facts_of(g, m.relu10[1], 11)));
  BOOST_TEST(!matches("layer1.0.relu#0", facts_of(g, m.relu10[1], 11)));
}
