/// The torch.export front end's torch-free half: a program's JSON read into plain structures
/// (`export/program.hpp`) and its trace built without running it (`export/static_trace.hpp`), on
/// the program of a real export (data/blocks.json, written by make_fixture.py with PyTorch 2.13).
#define BOOST_TEST_MODULE export_program
#include <boost/test/unit_test.hpp>

#include <recorder/export/program.hpp>
#include <recorder/export/static_trace.hpp>
#include <recorder/graph/address.hpp>
#include <recorder/graph/views.hpp>
#include <recorder/render/json.hpp>
#include <recorder/render/labels.hpp>
#include <recorder/render/render.hpp>
#include <recorder/render/summary.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef RECORDER_EXPORT_DATA
#error "RECORDER_EXPORT_DATA must name tests/export/data"
#endif

namespace fs = std::filesystem;
namespace ex = recorder::exported;
using recorder::NodeId;
using recorder::NodeKind;

namespace {

std::string read(const std::string& name) {
  std::ifstream in(fs::path(RECORDER_EXPORT_DATA) / name, std::ios::binary);
  BOOST_TEST_REQUIRE(static_cast<bool>(in), "cannot read " << name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ex::Program blocks() {
  ex::Program p = ex::parse_program(read("blocks.json"), "blocks.pt2");
  ex::read_weights_config(read("blocks_weights.json"), p, "blocks.pt2");
  return p;
}

std::vector<std::string> call_addresses(const recorder::Trace& t) {
  std::vector<std::string> out;
  for (NodeId id : recorder::views::module_calls(t.graph))
    out.push_back(recorder::path_address(t.graph, id));
  return out;
}

/// The op names of the function nodes recorded directly in call `parent`, in order.
std::vector<std::string> ops_in(const recorder::Trace& t, NodeId parent) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < t.graph.size(); ++i) {
    const NodeId id{static_cast<std::uint32_t>(i)};
    if (t.graph.kind(id) == NodeKind::function && t.graph.node(id).parent == parent)
      out.emplace_back(t.graph.function(id).op);
  }
  return out;
}

std::size_t count(const recorder::Trace& t, NodeKind kind) {
  std::size_t n = 0;
  for (const auto& node : t.graph.nodes()) n += node.kind == kind ? 1 : 0;
  return n;
}

std::string error_of(const std::string& text) {
  try {
    ex::parse_program(text, "m.pt2");
  } catch (const recorder::ExportedFileError& e) {
    BOOST_TEST(e.path() == fs::path("m.pt2"));
    return e.what();
  }
  return "no error";
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_program_is_read_with_its_signature_and_module_stacks) {
  const ex::Program p = blocks();
  BOOST_TEST(p.schema_major == 8);
  BOOST_TEST(p.schema_minor == 20);
  BOOST_TEST(p.torch_version.rfind("2.13", 0) == 0);
  BOOST_TEST(p.nodes.size() == 18u);
  BOOST_TEST(p.inputs.size() == 13u);  // 11 parameters, 1 buffer, 1 user input
  std::size_t params = 0, buffers = 0, users = 0;
  for (const ex::InputSpec& s : p.inputs) {
    params += s.kind == ex::InputSpec::Kind::parameter ? 1 : 0;
    buffers += s.kind == ex::InputSpec::Kind::buffer ? 1 : 0;
    users += s.kind == ex::InputSpec::Kind::user_input ? 1 : 0;
  }
  BOOST_TEST(params == 11u);
  BOOST_TEST(buffers == 1u);
  BOOST_TEST(users == 1u);
  BOOST_TEST(p.outputs == (std::vector<std::string>{"linear_4", "unsqueeze"}));

  const ex::Node& conv = p.nodes.front();
  BOOST_TEST(conv.target == "torch.ops.aten.conv2d.default");
  BOOST_TEST(conv.inputs == (std::vector<std::string>{"image", "p_conv_weight", "p_conv_bias"}));
  BOOST_TEST(conv.outputs == (std::vector<std::string>{"conv2d"}));
  BOOST_TEST(conv.torch_fn == "conv2d");
  BOOST_REQUIRE(conv.stack.size() == 2u);
  BOOST_TEST(conv.stack[0].path == "");
  BOOST_TEST(conv.stack[1].path == "conv");
  BOOST_TEST(conv.stack[1].type == "torch.nn.modules.conv.Conv2d");
  BOOST_TEST(ex::int_arg(conv, "padding") != nullptr);

  // The third call of blocks.0 is keyed apart from its first.
  std::vector<std::string> keys;
  for (const ex::Node& n : p.nodes)
    if (n.stack.size() == 3 && n.stack[1].path == "blocks.0" && n.stack[2].path == "blocks.0.fc")
      keys.push_back(n.stack[1].key);
  BOOST_REQUIRE(keys.size() == 2u);
  BOOST_TEST(keys[0] != keys[1]);
  BOOST_TEST(keys[1].find("@1") != std::string::npos);

  // Sizes: the batch is symbolic, held by its hint and its name.
  const ex::TensorMeta* image = p.tensor("image");
  BOOST_REQUIRE(image != nullptr);
  BOOST_TEST(image->sizes == (std::vector<std::int64_t>{3, 1, 4, 4}));
  BOOST_TEST(image->symbols[0].rfind('s', 0) == 0);
  BOOST_TEST(image->symbols[1].empty());
  BOOST_TEST(image->dtype == "Float");
  const auto lines = ex::dynamic_sizes(p);
  BOOST_REQUIRE(lines.size() == 1u);
  BOOST_TEST(lines[0] == "image: size 0 is " + image->symbols[0] + " in [1, 64] (exported with 3)");

  // Tied parameters share a file.
  BOOST_TEST(p.weights.at("emb.weight").file == p.weights.at("head.weight").file);
  BOOST_TEST(p.weights.at("emb.bias").file != p.weights.at("head.bias").file);
  BOOST_TEST(!p.weights.at("scale").pickled);
}

BOOST_AUTO_TEST_CASE(expressions_read_as_names) {
  BOOST_TEST(ex::expression_text("Symbol('s40', positive=True, integer=True)") == "s40");
  BOOST_TEST(ex::expression_text("Mul(Integer(2), Symbol('s0', positive=True, integer=True))") ==
             "Mul(2, s0)");
  BOOST_TEST(ex::expression_text("s1 + 1") == "s1 + 1");
  BOOST_TEST(ex::op_of_target("torch.ops.aten.linear.default") == "linear");
  BOOST_TEST(ex::op_of_target("torch.ops.aten.add_.Tensor") == "add_");
  BOOST_TEST(ex::op_of_target("torch.ops.higher_order.cond") == "cond");
  BOOST_TEST(ex::op_of_target("_operator.getitem") == "_operator.getitem");
  BOOST_TEST(ex::short_class("torch.nn.modules.linear.Linear") == "Linear");
}

BOOST_AUTO_TEST_CASE(the_static_trace_has_the_module_calls_ops_and_tensors_of_the_program) {
  const recorder::Trace t = ex::exported_trace(blocks());
  BOOST_TEST(t.complete());
  BOOST_TEST(t.model_name == "Blocks");
  BOOST_TEST(
      call_addresses(t) ==
          (std::vector<std::string>{"<root>", "conv", "pool", "emb", "blocks.0#0", "blocks.0.fc#0",
                                    "blocks.0.act#0", "blocks.1", "blocks.1.fc", "blocks.1.act",
                                    "blocks.0#1", "blocks.0.fc#1", "blocks.0.act#1", "head"}),
      boost::test_tools::per_element());
  // Tied weights once: sum(p.numel() for p in model.parameters()).
  BOOST_TEST(t.total_params == 252u);
  BOOST_TEST(t.trainable_params == 252u);
  const recorder::ModuleInfo* head = t.graph.module_at("head");
  BOOST_REQUIRE(head != nullptr);
  BOOST_TEST(head->params.size() == 2u);
  BOOST_TEST(head->param_count == 72u);
  const recorder::ModuleInfo* conv = t.graph.module_at("conv");
  BOOST_REQUIRE(conv != nullptr);
  BOOST_TEST(conv->leaf);
  BOOST_REQUIRE(conv->attributes.size() == 2u);
  BOOST_TEST(conv->attributes[0].second == "[3, 3]");
  BOOST_TEST(conv->attributes[1].second == "1");
  BOOST_TEST(t.graph.module_at("pool")->attributes.at(0).second == "2");
  const recorder::ModuleInfo* list = t.graph.module_at("blocks");
  BOOST_REQUIRE(list != nullptr);
  BOOST_TEST(list->class_name == "ModuleList");
  BOOST_TEST(list->calls == 0u);
  BOOST_TEST(list->param_count == 144u);

  // The root's own ops, one per torch-level call: the subscript x[:, :4, None] (slice and
  // unsqueeze) is one __getitem__; the leaf modules' ops are not shown.
  BOOST_TEST(
      ops_in(t, t.root) == (std::vector<std::string>{"flatten", "mul", "add", "__getitem__"}),
      boost::test_tools::per_element());
  BOOST_TEST(count(t, NodeKind::function) == 4u + 3u);  // + each Block's residual add
  BOOST_TEST(count(t, NodeKind::module) == 14u);
  BOOST_TEST(count(t, NodeKind::input) == 1u);
  BOOST_TEST(count(t, NodeKind::output) == 2u);
  BOOST_TEST(count(t, NodeKind::parameter) == 1u);  // cls, read by the root's add
  BOOST_TEST(count(t, NodeKind::constant) == 1u);   // the buffer, read by the root's mul
  // Tensors: the result of each of the 10 leaf calls and of each of the 7 ops.
  BOOST_TEST(count(t, NodeKind::tensor) == 10u + 7u);
  BOOST_TEST(t.graph.size() == 17u + 7u + 14u + 1u + 2u + 1u + 1u);
  // Each leaf call: its input in, its result out (20); the ops: flatten 2, mul 3 (with the
  // buffer), add 3 (with cls), the residual adds 3 x 3, __getitem__ 2 (19); the outputs 2.
  BOOST_TEST(t.graph.edge_count() == 20u + 19u + 2u);
  // The calls' borders: the second Block takes the first's result and returns its own.
  const recorder::Graph& g = t.graph;
  std::vector<NodeId> ids;
  for (NodeId id : recorder::views::module_calls(g)) ids.push_back(id);
  const auto first_block = g.call(ids[4]), second_block = g.call(ids[7]);
  BOOST_REQUIRE(second_block.inputs.size() == 1u);
  BOOST_TEST(second_block.inputs[0] == first_block.outputs.at(0));
  // The dynamic batch shows its name, and counts as the size it was exported with.
  const recorder::Shape block_out = g.shape(second_block.outputs.at(0));
  BOOST_TEST(to_string(block_out) == "[s40, 8]");
  BOOST_TEST(block_out[0] == 3);
  BOOST_TEST(block_out.name(0) == "s40");
  BOOST_TEST(block_out.name(1).empty());
  BOOST_TEST(to_string(g.shape(g.call(ids[1]).outputs.at(0))) == "[s40, 2, 4, 4]");
  BOOST_TEST(recorder::detail::shape_repr(block_out) == "(s40, 8)");
  // JSON gives the size it was exported with, and the names beside it.
  const std::string json = recorder::render_to_string<recorder::backend::Json>(t);
  BOOST_TEST(json.find("\"shape\": [3, 8],\n      \"dim_names\": [\"s40\", \"\"],") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_summary_is_torchinfos_table) {
  // The table torchinfo's current source prints for the eager model under the PyTorch that
  // exported it (2.13), byte for byte but the dynamic batch's name (`[3, 8]` there): Params size
  // counts every parameter once (the root's cls, the head's bias and tied weight), Input size the
  // storage header of PyTorch 2.x. Every row is also 1.8.0's.
  const std::string expected = read("blocks_summary.txt");
  BOOST_TEST(recorder::summary(ex::exported_trace(blocks())) == expected);
}

BOOST_AUTO_TEST_CASE(every_aten_op_on_request) {
  const recorder::Trace t = ex::exported_trace(blocks(), {.aten_ops = true});
  BOOST_TEST(ops_in(t, t.root) ==
                 (std::vector<std::string>{"flatten", "mul", "add", "slice", "unsqueeze"}),
             boost::test_tools::per_element());
  BOOST_TEST(count(t, NodeKind::function) == 18u);  // one per node of the program
  // A leaf module stays one (torchinfo's rows), its ops recorded inside its call.
  BOOST_TEST(t.graph.module_at("conv")->leaf);
  std::vector<NodeId> ids;
  for (NodeId id : recorder::views::module_calls(t.graph)) ids.push_back(id);
  BOOST_REQUIRE(ids.size() == 14u);
  BOOST_TEST(ops_in(t, ids[1]) == (std::vector<std::string>{"conv2d"}));
  BOOST_TEST(ops_in(t, ids[5]) == (std::vector<std::string>{"linear"}));
}

BOOST_AUTO_TEST_CASE(a_program_without_torch_fn_shows_every_aten_op) {
  // Exports before torch_fn was recorded: each aten op is its own node.
  nlohmann::json j = nlohmann::json::parse(read("blocks.json"));
  for (auto& n : j["graph_module"]["graph"]["nodes"]) n["metadata"].erase("torch_fn");
  const recorder::Trace t = ex::exported_trace(ex::parse_program(j.dump(), "old.pt2"));
  BOOST_TEST(ops_in(t, t.root) ==
                 (std::vector<std::string>{"flatten", "mul", "add", "slice", "unsqueeze"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bad_programs_are_refused_in_one_line) {
  BOOST_TEST(error_of("{not json") ==
             "recorder: cannot read 'm.pt2': its program is not valid JSON");
  BOOST_TEST(
      error_of("{\"a\": 1}") ==
      "recorder: cannot read 'm.pt2': its JSON is not an exported program (no graph_module)");
  nlohmann::json j = nlohmann::json::parse(read("blocks.json"));
  j["schema_version"] = {{"major", 9}, {"minor", 1}};
  BOOST_TEST(error_of(j.dump()) ==
             "recorder: cannot read 'm.pt2': its schema_version 9.1 is newer than this reader "
             "knows (8.20)");
  j["schema_version"] = {{"major", 8}, {"minor", 20}};
  j["graph_module"]["graph"].erase("nodes");
  const std::string malformed = error_of(j.dump());
  BOOST_TEST(malformed.rfind("recorder: cannot read 'm.pt2': its program is malformed: ", 0) == 0);
  BOOST_TEST(malformed.find('\n') == std::string::npos);
}

BOOST_AUTO_TEST_CASE(damaged_programs_throw_the_readers_error_and_nothing_else) {
  // Bit flips and truncations of a real program (run under ASan and UBSan in the sanitizer
  // stage): each text is either read and traced, or refused with ExportedFileError.
  const std::string text = read("blocks.json");
  std::uint64_t state = 42;
  const auto next = [&state] {  // xorshift: the same texts every run
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int read_ok = 0, refused = 0;
  for (int i = 0; i < 600; ++i) {
    std::string damaged = text;
    if (i % 3 == 0) {
      damaged.resize(next() % text.size());
    } else {
      for (int k = 0; k < 1 + i % 8; ++k) {
        const std::size_t at = next() % damaged.size();
        damaged[at] = static_cast<char>(damaged[at] ^ (1 << (next() % 8)));
      }
    }
    try {
      const ex::Program p = ex::parse_program(damaged, "damaged.pt2");
      (void)recorder::summary(ex::exported_trace(p));
      ++read_ok;
    } catch (const recorder::ExportedFileError& e) {
      BOOST_TEST(std::string(e.what()).find('\n') == std::string::npos);
      ++refused;
    }
  }
  BOOST_TEST(read_ok + refused == 600);
  BOOST_TEST(refused >= 200);  // every truncation at least
}
