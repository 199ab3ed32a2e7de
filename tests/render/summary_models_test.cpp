// The summary table of traced models, byte for byte against torchinfo's own test outputs.
#define BOOST_TEST_MODULE summary_models
#include <boost/test/unit_test.hpp>

#include "models/lstm.hpp"
#include "../support/preconditions.hpp"
#include "models/mlp.hpp"
#include "models/resnet.hpp"
#include "models/transformer.hpp"
#include "golden.hpp"

#include <recorder/render/render.hpp>
#include <recorder/render/summary.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#ifndef RECORDER_PEERS_DIR
#error "RECORDER_PEERS_DIR must name the folder of the torchinfo reference outputs"
#endif

namespace {

using recorder::SummaryColumn;
using recorder::SummaryOptions;
using recorder::SummaryRowSetting;
using recorder::testing::check_golden;
using Tracer = recorder::Tracer<recorder::record::Structure>;
/// Records the aten ops inside leaf modules too; usable only with NDEBUG.
using AtenTracer = recorder::Tracer<recorder::record::AtenOps>;

/// The text of torchinfo's reference output `name` (tests/golden/summary/torchinfo); a missing
/// file fails the test.
std::string peer(const std::string& name) {
  const auto path = std::filesystem::path(RECORDER_PEERS_DIR) / name;
  std::ifstream in(path, std::ios::binary);
  BOOST_REQUIRE_MESSAGE(in.good(), "torchinfo's reference output " << path << " is missing");
  return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// `trace` as read under PyTorch 1.x: torchinfo's reference files were printed under 1.x's 56-byte
/// storage header (lstm.out's `Input size: 856` is the 800 bytes of its input and 56), 8 bytes
/// less per input than torchinfo prints under 2.x, which the tables of libtorch 2.x's traces follow.
recorder::Trace as_under_pytorch_1(const recorder::Trace& trace) {
  recorder::Trace t = trace;
  t.torch_version = "1.13";
  return t;
}

/// Checks the table `render` prints for `trace` against its golden file (this libtorch's:
/// golden.hpp) and, for the tables torchinfo has, its output (then the golden file may be left
/// out: ""), printed as under PyTorch 1.x (`as_under_pytorch_1`).
template <class Render>
void check(const std::string& golden, const recorder::Trace& trace, Render render,
           const std::optional<std::string>& torchinfo) {
  const std::string actual = render(trace);
  if (!golden.empty()) recorder::testing::check_golden(golden, actual);
  if (!torchinfo) return;  // a table of ours torchinfo never printed: the golden file only
  const std::string as_1x = render(as_under_pytorch_1(trace));
  BOOST_TEST(as_1x == *torchinfo, golden << " differs from torchinfo at "
                                         << recorder::testing::first_difference(as_1x, *torchinfo));
}

/// The default table.
std::string table(const recorder::Trace& t) { return recorder::summary(t); }

/// Every column at depth 1, 20 wide (torchinfo's `col_names=list(ColumnSettings)`).
const SummaryOptions every_column{
    .depth = 1,
    .columns = {SummaryColumn::kernel_size, SummaryColumn::groups, SummaryColumn::input_size,
                SummaryColumn::output_size, SummaryColumn::num_params,
                SummaryColumn::params_percent, SummaryColumn::mult_adds, SummaryColumn::trainable},
    .col_width = 20};

/// torchinfo's RecursiveNet: one Conv2d(64, 64, 3, padding 1) applied six times.
struct RecursiveNetImpl : torch::nn::Module {
  recorder::Module<torch::nn::Conv2d> conv1{register_module(
      "conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 64, 3).stride(1).padding(1)))};
  template <recorder::tensor_like T>
  T forward(T x) {
    for (int i = 0; i < 6; ++i) x = conv1(x);
    return x;
  }
};
TORCH_MODULE(RecursiveNet);

/// torchinfo's SingleInputNet: two convolutions (the second through a `Dropout2d`), two Linear
/// layers, and functional ReLU, max-pooling, dropout and log-softmax (ops, not rows).
struct SingleInputNetImpl : torch::nn::Module {
  recorder::Module<torch::nn::Conv2d> conv1{
      register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 10, 5)))};
  recorder::Module<torch::nn::Conv2d> conv2{
      register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(10, 20, 5)))};
  recorder::Module<torch::nn::Dropout2d> conv2_drop{
      register_module("conv2_drop", torch::nn::Dropout2d())};
  recorder::Module<torch::nn::Linear> fc1{register_module("fc1", torch::nn::Linear(320, 50))};
  recorder::Module<torch::nn::Linear> fc2{register_module("fc2", torch::nn::Linear(50, 10))};
  template <recorder::tensor_like T>
  static T max_pool2(T x) {
    return recorder::op(
        "max_pool2d",
        [](const at::Tensor& a) {
          return at::max_pool2d(a, {2, 2});
        },
        x);
  }
  template <recorder::tensor_like T>
  T forward(T x) {
    x = relu(max_pool2(conv1(x)));
    x = relu(max_pool2(conv2_drop(conv2(x))));
    x = x.view({-1, 320});
    x = relu(fc1(x));
    x = dropout(x, 0.5, is_training());
    return fc2(x).log_softmax(1);
  }
};
TORCH_MODULE(SingleInputNet);

/// A model whose second layer cannot take the first one's output.
struct BrokenNetImpl : torch::nn::Module {
  recorder::Module<torch::nn::Linear> fc1{register_module("fc1", torch::nn::Linear(8, 4))};
  recorder::Module<torch::nn::ReLU> relu{register_module("relu", torch::nn::ReLU())};
  recorder::Module<torch::nn::Linear> fc2{register_module("fc2", torch::nn::Linear(5, 2))};
  template <recorder::tensor_like T>
  T forward(T x) {
    return fc2(relu(fc1(x)));
  }
};
TORCH_MODULE(BrokenNet);

/// A composite forward that runs two convolutions itself, on weights it registers (a
/// depthwise-separable block written with functional ops), then a `Conv2d` leaf. torchinfo
/// counts the leaf only; the functional line counts the other two.
struct SeparableNetImpl : torch::nn::Module {
  torch::Tensor depthwise{register_parameter("depthwise", torch::randn({8, 1, 3, 3}))};
  torch::Tensor pointwise{register_parameter("pointwise", torch::randn({16, 8, 1, 1}))};
  recorder::Module<torch::nn::Conv2d> conv{
      register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 4, 3).padding(1)))};
  template <recorder::tensor_like T>
  T forward(T x) {
    // The ops table has no convolution: `recorder::op` records one node named as given.
    x = recorder::op(
        "conv2d",
        [](const at::Tensor& a, const at::Tensor& w) {
          return at::conv2d(a, w, /*bias=*/{}, /*stride=*/1, /*padding=*/1, /*dilation=*/1,
                            /*groups=*/8);
        },
        x, depthwise);
    x = recorder::op(
        "conv2d", [](const at::Tensor& a, const at::Tensor& w) { return at::conv2d(a, w); }, x,
        pointwise);
    return conv(x);
  }
};
TORCH_MODULE(SeparableNet);

/// "(9,408)" -> 9408; "--" and "(recursive)" -> nothing.
std::optional<std::uint64_t> cell_number(std::string cell) {
  std::string digits;
  for (char c : cell)
    if (c >= '0' && c <= '9')
      digits += c;
    else if (c != ',' && c != '(' && c != ')')
      return std::nullopt;
  if (digits.empty()) return std::nullopt;
  return std::stoull(digits);
}

/// The Param # and Mult-Adds columns add up to the totals, at every depth.
void check_column_sums(const recorder::Trace& trace, const std::string& what) {
  for (int depth : {0, 1, 2, 3, 4, std::numeric_limits<int>::max()}) {
    const auto t = recorder::summarize(
        trace, {.depth = depth, .columns = {SummaryColumn::num_params, SummaryColumn::mult_adds}});
    std::uint64_t params = 0, macs = 0;
    for (const auto& row : t.rows) {
      params += cell_number(row.cells[0]).value_or(0);
      macs += cell_number(row.cells[1]).value_or(0);
    }
    BOOST_TEST(params == t.total_params, what << " at depth " << depth);
    BOOST_TEST(macs == t.total_mult_adds, what << " at depth " << depth);
    const std::string text = recorder::summary(
        trace, {.depth = depth, .columns = {SummaryColumn::num_params, SummaryColumn::mult_adds}});
    BOOST_TEST(text.find("Total params: " + recorder::detail::with_thousands(params) + "\n") !=
               std::string::npos);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(resnet18_at_224_is_torchinfos_table) {
  auto net = models::ResNet18();
  auto t = Tracer{}.run(net, torch::zeros({1, 3, 224, 224}));
  const std::string s = recorder::summary(t);
  std::string ref = peer("eval_order_doesnt_matter.out");
  // the table is printed twice (train mode, then eval): one copy
  BOOST_REQUIRE(ref.size() % 2 == 0);
  BOOST_REQUIRE(ref.substr(0, ref.size() / 2) == ref.substr(ref.size() / 2));
  ref = ref.substr(0, ref.size() / 2);
  check("resnet18_224.txt", t, table, ref);
  const auto table = recorder::summarize(t);
  BOOST_TEST(table.total_params == 11689512u);
  BOOST_TEST(table.total_mult_adds == 1814083944u);
  BOOST_TEST(s.find("Total mult-adds (G): 1.81\n") != std::string::npos);
  BOOST_TEST(s.find("Estimated Total Size (MB): 87.11\n") != std::string::npos);
  // The backend is the same table (RenderOptions' depth 3 is the summary's default).
  BOOST_TEST(recorder::render_to_string<recorder::backend::Summary>(t) == s);
}

BOOST_AUTO_TEST_CASE(recursive_conv_is_torchinfos_table) {
  RecursiveNet net;
  auto t = Tracer{}.run(net, torch::zeros({1, 64, 28, 28}));
  check("recursive.txt", t, table, peer("recursive.out"));
  BOOST_TEST(recorder::summarize(t).total_mult_adds == 173709312u);
}

BOOST_AUTO_TEST_CASE(frozen_resnet18_is_torchinfos_table) {
  auto net = models::ResNet18();
  auto params = net->parameters();
  for (std::size_t i = 0; i < 30; ++i) params.at(i).set_requires_grad(false);
  auto t = Tracer{}.run(net, torch::zeros({1, 3, 64, 64}));
  const auto frozen = [](const recorder::Trace& tr) {
    return recorder::summary(tr,
                             {.columns = {SummaryColumn::output_size, SummaryColumn::num_params,
                                          SummaryColumn::kernel_size, SummaryColumn::mult_adds}});
  };
  check("frozen_layers.txt", t, frozen, peer("frozen_layers.out"));
  BOOST_TEST(t.trainable_params == 11006440u);
}

BOOST_AUTO_TEST_CASE(lstm_verbose_is_torchinfos_table) {
  models::LSTMNet net;
  auto t = Tracer{}.run(net, torch::zeros({1, 100}, torch::kLong));
  const auto verbose = [](const recorder::Trace& tr) {
    return recorder::summary(tr,
                             {.columns = {SummaryColumn::kernel_size, SummaryColumn::output_size,
                                          SummaryColumn::num_params, SummaryColumn::mult_adds},
                              .col_width = 20,
                              .row_settings = {SummaryRowSetting::var_names},
                              .verbose = true});
  };
  check("lstm.txt", t, verbose, peer("lstm.out"));
  const auto table = recorder::summarize(t);
  BOOST_TEST(table.total_params == 3784580u);
  BOOST_TEST(table.total_mult_adds == 377864000u);
}

BOOST_AUTO_TEST_CASE(all_outputs_of_tuple_returning_modules) {
  models::LSTMNet net;
  auto t = Tracer{}.run(net, torch::zeros({1, 100}, torch::kLong));
  const auto first_only = recorder::summarize(t, {.row_settings = {SummaryRowSetting::var_names}});
  const auto all =
      recorder::summarize(t, {.row_settings = {SummaryRowSetting::var_names}, .all_outputs = true});
  BOOST_REQUIRE(all.rows.size() == 4u);  // LSTMNet, embedding, encoder, decoder
  BOOST_TEST(first_only.rows[2].label == "LSTM (encoder)");
  BOOST_TEST(first_only.rows[2].cells[0] == "[1, 100, 512]");  // torchinfo: the first output only
  BOOST_TEST(all.rows[2].cells[0] == "[1, 100, 512], 2 x [2, 100, 512]");  // output, h and c
  BOOST_TEST(all.rows[0].cells[0] == "[100, 20], 2 x [2, 100, 512]");      // the model's own three
  BOOST_TEST(all.rows[1].cells[0] == "[1, 100, 300]");
}

BOOST_AUTO_TEST_CASE(resnet18_ascii_without_depth_is_torchinfos_table) {
  auto net = models::ResNet18();
  auto t = Tracer{}.run(net, torch::zeros({1, 3, 64, 64}));
  check(
      "ascii_only.txt", t,
      [](const recorder::Trace& tr) {
        return recorder::summary(tr, {.row_settings = {}, .ascii_only = true});
      },
      peer("ascii_only.out"));
}

BOOST_AUTO_TEST_CASE(every_column_on_the_example_models) {
  models::MLP mlp;
  auto t = Tracer{}.run(mlp, torch::zeros({2, 784}));
  check_golden("mlp_all_columns.txt", recorder::summary(t, every_column));
  models::TransformerEncoderModel tr;
  auto tt = Tracer{}.run(tr, torch::zeros({10, 2}, torch::kLong));
  check_golden("transformer.txt", recorder::summary(tt));
}

BOOST_AUTO_TEST_CASE(columns_sum_to_the_totals_for_every_example_model) {
  models::MLP mlp;
  check_column_sums(Tracer{}.run(mlp, torch::zeros({1, 784})), "MLP");
  auto resnet = models::ResNet18();
  check_column_sums(Tracer{}.run(resnet, torch::zeros({1, 3, 64, 64})), "ResNet-18");
  models::LSTMNet lstm;
  check_column_sums(Tracer{}.run(lstm, torch::zeros({1, 100}, torch::kLong)), "LSTMNet");
  models::TransformerEncoderModel tr;
  check_column_sums(Tracer{}.run(tr, torch::zeros({10, 2}, torch::kLong)), "Transformer");
  RecursiveNet rec;
  check_column_sums(Tracer{}.run(rec, torch::zeros({1, 64, 8, 8})), "RecursiveNet");
}

BOOST_AUTO_TEST_CASE(a_forward_that_throws_still_gives_the_table) {
  BrokenNet net;
  std::shared_ptr<const recorder::Trace> partial;
  try {
    (void)Tracer{}.run(net, torch::zeros({1, 8}));
  } catch (const recorder::TraceError& e) {
    partial = e.partial_trace();
  }
  BOOST_REQUIRE(partial);
  const std::string s = recorder::summary(*partial);
  BOOST_TEST(s.find("\u251c\u2500Linear: 1-3 (failed)") != std::string::npos, s);
  BOOST_TEST(
      s.find("\u251c\u2500Linear: 1-1                            [1, 4]") != std::string::npos, s);
  check_golden("broken.txt", s);
}

BOOST_AUTO_TEST_CASE(functional_convolutions_in_a_composite_forward) {
  // x [1, 8, 12, 12]. depthwise conv2d (groups 8, w [8, 1, 3, 3], padding 1) -> [1, 8, 12, 12]:
  // 1,152 outputs x 1 channel x 9 taps = 10,368. pointwise conv2d (w [16, 8, 1, 1]) ->
  // [1, 16, 12, 12]: 2,304 outputs x 8 channels = 18,432. Together 28,800.
  // The Conv2d(16, 4, 3) leaf is torchinfo's: weight 576 x 144 + bias 4 x 144 = 83,520.
  SeparableNet net;
  const auto graph = recorder::summarize(Tracer{}.run(net, torch::zeros({1, 8, 12, 12})));
  BOOST_TEST(graph.functional_mult_adds == 10368u + 18432u);
  BOOST_TEST(graph.total_mult_adds == 83520u);
#ifdef NDEBUG
  // With the leaf's own ops recorded, its conv2d reads the leaf's weight: still torchinfo's.
  auto t = AtenTracer{}.run(net, torch::zeros({1, 8, 12, 12}));
  const recorder::Graph& g = t.graph;
  std::size_t inside = 0;
  for (recorder::NodeId id : recorder::views::of_kind(g, recorder::NodeKind::function))
    if (g.node(id).parent.valid() && g.module_of(g.node(id).parent).leaf) ++inside;
  BOOST_TEST(inside > 0u);
  const auto observed = recorder::summarize(t);
  BOOST_TEST(observed.functional_mult_adds == 28800u);
  BOOST_TEST(observed.total_mult_adds == 83520u);
#endif
}

BOOST_AUTO_TEST_CASE(functional_mult_adds_of_the_transformer,
                     *boost::unit_test::precondition(test::ndebug)) {
#ifdef NDEBUG
  // TransformerEncoderModel's defaults: vocab V = 100, d_model E = 64, H = 4 heads of
  // d_head = 16, 2 post-norm layers, feed-forward 256; tokens [L, N] = [10, 2].
  //
  // With record::AtenOps, each MultiheadAttention call records what libtorch 1.13's C++ forward
  // dispatches: the packed in-projection (t(in_proj_weight), matmul, add_), chunk, views, then
  //   bmm(q [N*H, L, d_head], k^T [N*H, d_head, L]) -> [N*H, L, L]   QK^T
  //   softmax, dropout
  //   bmm(attn [N*H, L, L], v [N*H, L, d_head]) -> [N*H, L, d_head]  AV
  // and the out-projection (t(out_proj.weight), matmul, add_), inferred as a call of out_proj.
  // Per layer, per batch item, per head: QK^T = L*L*d_head = 1,600, AV = L*L*d_head = 1,600:
  // layers * N * H * (1,600 + 1,600) = 2 * 2 * 4 * 3,200 = 51,200 (= 4 N L^2 E). torchinfo counts
  // none of the attention: MultiheadAttention has a submodule (out_proj), so it is no leaf for
  // torchinfo, and out_proj is never called. The functional line counts it all: per layer the
  // in-projection L N x E x 3E = 245,760 and the out-projection L N x E x E = 81,920 (their
  // matmuls' products), and QK^T and AV: 2 * (245,760 + 81,920) + 51,200 = 706,560.
  //
  // torchinfo's total, from its formulas: Embedding out[0] x 6,400 = 6,400 L; per layer
  // linear1 16,640 L N, linear2 16,448 L N, two LayerNorms 2 x 128 L; head 6,500 L N.
  // Sum: 6,912 L + 72,676 L N = 1,522,640.
  models::TransformerEncoderModel tr;
  const torch::Tensor tokens = torch::zeros({10, 2}, torch::kLong);
  auto t = AtenTracer{}.run(tr, tokens);
  const auto table = recorder::summarize(t);
  BOOST_TEST(table.functional_mult_adds == 706560u);
  BOOST_TEST(table.total_mult_adds == 1522640u);
  const SummaryOptions options{
      .columns = {SummaryColumn::output_size, SummaryColumn::num_params, SummaryColumn::mult_adds},
      .functional_mult_adds = true};
  const std::string s = recorder::summary(t, options);
  check_golden("transformer_functional.txt", s);
  const std::string line = "Functional mult-adds (k): 706.56\n";
  BOOST_TEST(s.find("Total mult-adds (M): 1.52\n" + line) != std::string::npos);
  // Recording the leaves' insides adds rows only: the out-projection of libtorch's C++
  // MultiheadAttention, inferred from the parameters its ops read (depth 4, under
  // encoder.<i>.self_attn), with its share of the attention's parameters; its mult-adds are the
  // functional line's. Folded at depth 3, and less the functional line, it is the table of the
  // record::Structure trace, torchinfo's numbers and all.
  SummaryOptions deep = options;
  deep.depth = 4;
  BOOST_TEST(
      recorder::summary(t, deep).find(
          "\u2502    \u2502    \u2502    \u2514\u2500Linear: 4-1             [10, 2, 64]      "
          "         4,160                     --") != std::string::npos);
  std::string without = s;
  without.erase(without.find(line), line.size());
  SummaryOptions torchinfo_only = options;
  torchinfo_only.functional_mult_adds = false;
  BOOST_TEST(without == recorder::summary(Tracer{}.run(tr, tokens), torchinfo_only));
  check_column_sums(t, "Transformer with record::AtenOps");
  // With record::Structure the attention is opaque: the line has what torchinfo's formula gives
  // for it (its parameters per output row), 2 layers x 16,640 x 20 = 665,600.
  BOOST_TEST(recorder::summarize(Tracer{}.run(tr, tokens)).functional_mult_adds == 665600u);

  // torchinfo's #226: its total grows as L, attention's as L^2. At L = 2,048, N = 1,
  // torchinfo's total is 79,588 L = 162,996,224; the functional line is the attention
  // 4 N L^2 E = 1,073,741,824 plus the projections 2 x L x (64 x 192 + 64 x 64) = 67,108,864:
  // torchinfo shows 12.5% of the 1,303,846,912 mult-adds, 8 times too few.
  tr->eval();
  torch::NoGradGuard no_grad;
  const auto long_table =
      recorder::summarize(AtenTracer{}.run(tr, torch::zeros({2048, 1}, torch::kLong)));
  BOOST_TEST(long_table.total_mult_adds == 162996224u);
  BOOST_TEST(long_table.functional_mult_adds == 1140850688u);
  BOOST_TEST(long_table.functional_mult_adds > 4 * long_table.total_mult_adds);
#endif
}

BOOST_AUTO_TEST_CASE(single_input_net_is_torchinfos_table) {
  SingleInputNet net;
  auto t = Tracer{}.run(net, torch::zeros({2, 1, 28, 28}));
  check("", t, table, peer("single_input.out"));
  // Every column at depth 1, 20 wide, on 7 images.
  auto seven = Tracer{}.run(net, torch::zeros({7, 1, 28, 28}));
  check(
      "", seven, [](const recorder::Trace& tr) { return recorder::summary(tr, every_column); },
      peer("single_input_all_cols.out"));
}

BOOST_AUTO_TEST_CASE(resnet18_at_depths_1_and_2_is_torchinfos_table) {
  auto net = models::ResNet18();
  auto t = Tracer{}.run(net, torch::zeros({1, 3, 64, 64}));
  const auto at_depths_1_and_2 = [](const recorder::Trace& tr) {
    std::string both;
    for (int depth : {1, 2})
      both +=
          recorder::summary(tr, {.depth = depth,
                                 .columns = {SummaryColumn::output_size, SummaryColumn::num_params,
                                             SummaryColumn::params_percent}});
    return both;
  };
  check("", t, at_depths_1_and_2, peer("resnet18_depth_consistency.out"));
}

BOOST_AUTO_TEST_CASE(lstm_with_the_batch_second_is_torchinfos_table) {
  // torchinfo's input size (100,) with batch_dim=1: a (100, 1) input. One cell differs:
  // torchinfo, given a batch_dim, prints the dimension batch_dim of a tuple output as 1 (the
  // root returns (logits [100, 20], hidden)); recorder has no batch_dim and prints the shape.
  auto net = models::LSTMNet();
  auto t = Tracer{}.run(net, torch::zeros({100, 1}, torch::kLong));
  std::string reference = peer("lstm_custom_batch_size.out");
  const std::string theirs =
      "LSTMNet                                  [100, 1]                  --";
  const std::string ours = "LSTMNet                                  [100, 20]                 --";
  BOOST_REQUIRE(reference.find(theirs) != std::string::npos);
  reference.replace(reference.find(theirs), theirs.size(), ours);
  check("", t, table, reference);
}
