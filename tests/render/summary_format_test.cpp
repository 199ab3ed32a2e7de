// The summary table without libtorch: torchinfo's number formats, and a hand-built trace.
#define BOOST_TEST_MODULE summary_format
#include <boost/test/unit_test.hpp>

#include "backend_laws.hpp"

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
  BOOST_TEST(recorder::detail::with_thousands(0) == "0");
  BOOST_TEST(recorder::detail::with_thousands(11689512) == "11,689,512");
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

/// The record of module `path` (the root: "") of class `class_name`, with `params` parameters
/// below it, its own `own`.
recorder::ModuleInfo module(const std::string& path, const std::string& class_name,
                            std::uint64_t params, std::vector<recorder::ParamInfo> own = {}) {
  recorder::ModuleInfo m;
  m.path = path;
  m.name = path.empty() ? class_name : path;
  m.class_name = class_name;
  m.leaf = !path.empty();
  m.has_children = path.empty();
  m.params = std::move(own);
  m.param_count = m.trainable_count = params;
  return m;
}

/// Net -> Linear fc (called twice, the second call failed).
recorder::Trace hand_built() {
  using namespace recorder;
  Trace t;
  Graph& g = t.graph;
  ModuleInfo root = module("", "Net", 12);
  root.has_children = false;
  const ModuleInfo fc = module(
      "fc", "Linear", 10, {ParamInfo{"weight", {2, 4}, 8, true}, ParamInfo{"bias", {2}, 2, true}});
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
  t.param_bytes = 48;
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
      "Params size: 48\n"  // every parameter, the root's scale too (torchinfo's source; 1.8.0: 40)
      "Estimated Total Size: 200\n"
      "=========================================================================================="
      "\n";
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

/// Net -> Embedding emb, Linear head whose weight is emb's (tied, as a language model's output
/// layer), and, with `head_bias`, a bias of its own.
recorder::Trace tied(bool head_bias) {
  using namespace recorder;
  Trace t;
  Graph& g = t.graph;
  const ModuleInfo root = module("", "Net", head_bias ? 50 : 40);
  const ParamInfo tied_weight{"weight", {10, 4}, 40, true, 4, 7};
  const ModuleInfo emb = module("emb", "Embedding", 40, {tied_weight});
  ModuleInfo head = module("head", "Linear", head_bias ? 50 : 40, {tied_weight});
  if (head_bias) head.params.push_back(ParamInfo{"bias", {10}, 10, true, 4, 9});
  const ModuleId r = g.add_module(root), e = g.add_module(emb), h = g.add_module(head);
  const std::int64_t ids[] = {2, 3}, hidden[] = {2, 3, 4}, logits[] = {2, 3, 10};
  const NodeId x = g.add_tensor(NodeKind::input, {}, 0, Shape(ids), "Long", "cpu");
  t.root = g.add_module_call(r, {}, 0, {x});
  const NodeId c1 = g.add_module_call(e, t.root, 1, {x});
  const NodeId y = g.add_tensor(NodeKind::tensor, c1, 1, Shape(hidden), "Float", "cpu");
  g.set_call_outputs(c1, {y});
  const NodeId c2 = g.add_module_call(h, t.root, 1, {y});
  const NodeId z = g.add_tensor(NodeKind::tensor, c2, 1, Shape(logits), "Float", "cpu");
  g.set_call_outputs(c2, {z});
  g.set_call_outputs(t.root, {z});
  t.model_name = "Net";
  t.total_params = t.trainable_params = head_bias ? 50 : 40;
  t.param_bytes = t.total_params * 4;
  return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_tied_head_is_recursive) {
  // torchinfo's source: a row every own parameter of which an earlier row counted is
  // (recursive); the root's leftover subtracts it once. Params size is every parameter once.
  const auto rows = [](const recorder::Trace& t) {
    std::vector<std::string> out;
    for (const auto& r : recorder::summarize(t).rows) out.push_back(r.label + " " + r.cells[1]);
    return out;
  };
  const std::vector<std::string> tied_rows{"Net --", "Embedding: 1-1 40",
                                           "Linear: 1-2 (recursive)"};
  BOOST_TEST(rows(tied(false)) == tied_rows, boost::test_tools::per_element());
  // With a bias of its own, the head counts: all of its parameters, the tied weight again.
  const std::vector<std::string> biased_rows{"Net --", "Embedding: 1-1 40", "Linear: 1-2 50"};
  BOOST_TEST(rows(tied(true)) == biased_rows, boost::test_tools::per_element());
  const auto table = recorder::summarize(tied(false));
  BOOST_TEST(table.param_bytes == 160u);
  BOOST_TEST(table.leaf_param_bytes == 160u);  // 1.8.0: the embedding's, the head recursive
  BOOST_TEST(recorder::summary(tied(false)).find("Params size: 160\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(input_size_is_torchinfos_under_the_libtorch_that_ran) {
  // sys.getsizeof of a storage: its bytes and a 56-byte header under PyTorch 1.x, 64 from 2.0.
  recorder::Trace t = hand_built();  // one Float input [3, 4]
  BOOST_TEST(recorder::summarize(t).input_bytes == 48u + 56u);
  t.torch_version = "1.13";
  BOOST_TEST(recorder::summarize(t).input_bytes == 48u + 56u);
  t.torch_version = "2.13";
  BOOST_TEST(recorder::summarize(t).input_bytes == 48u + 64u);
  BOOST_TEST(recorder::summary(t).find("Input size: 112\n") != std::string::npos);
}
