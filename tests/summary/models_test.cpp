// The summary table of traced models, byte for byte against torchinfo's own test outputs.
#define BOOST_TEST_MODULE summary_models
#include <boost/test/unit_test.hpp>

#include "models/lstm.hpp"
#include "models/mlp.hpp"
#include "models/resnet.hpp"
#include "models/transformer.hpp"
#include "../render/golden.hpp"

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
using recorder::SummaryRow;
using Tracer = recorder::Tracer<recorder::record::Graph>;

/// The text of torchinfo's reference output `name`, or nothing when the folder is absent.
std::optional<std::string> peer(const std::string& name) {
  std::ifstream in(std::filesystem::path(RECORDER_PEERS_DIR) / name, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Checks `actual` against its golden file and, where present, against torchinfo's output.
void check(const std::string& golden, const std::string& actual,
           const std::optional<std::string>& torchinfo) {
  recorder::testing::check_golden(golden, actual);
  if (!torchinfo) {
    BOOST_TEST_MESSAGE("torchinfo reference outputs not found: checked the golden file only");
    return;
  }
  BOOST_TEST(actual == *torchinfo, golden << " differs from torchinfo at "
                                          << recorder::testing::first_difference(actual, *torchinfo));
}

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

/// "(9,408)" -> 9408; "--" and "(recursive)" -> nothing.
std::optional<std::uint64_t> cell_number(std::string cell) {
  std::string digits;
  for (char c : cell)
    if (c >= '0' && c <= '9') digits += c;
    else if (c != ',' && c != '(' && c != ')') return std::nullopt;
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
    BOOST_TEST(text.find("Total params: " + recorder::detail::summary_impl::with_commas(params) +
                         "\n") != std::string::npos);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(resnet18_at_224_is_torchinfos_table) {
  auto net = models::ResNet18();
  auto t = Tracer{}.run(net, torch::zeros({1, 3, 224, 224}));
  const std::string s = recorder::summary(t);
  std::optional<std::string> ref = peer("torchinfo__eval_order_doesnt_matter.out");
  if (ref) {  // the table is printed twice (train mode, then eval): one copy
    BOOST_REQUIRE(ref->size() % 2 == 0);
    BOOST_REQUIRE(ref->substr(0, ref->size() / 2) == ref->substr(ref->size() / 2));
    ref = ref->substr(0, ref->size() / 2);
  }
  check("resnet18_224.txt", s, ref);
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
  check("recursive.txt", recorder::summary(t), peer("torchinfo__recursive.out"));
  BOOST_TEST(recorder::summarize(t).total_mult_adds == 173709312u);
}

BOOST_AUTO_TEST_CASE(frozen_resnet18_is_torchinfos_table) {
  auto net = models::ResNet18();
  auto params = net->parameters();
  for (std::size_t i = 0; i < 30; ++i) params.at(i).set_requires_grad(false);
  auto t = Tracer{}.run(net, torch::zeros({1, 3, 64, 64}));
  const std::string s = recorder::summary(
      t, {.columns = {SummaryColumn::output_size, SummaryColumn::num_params,
                      SummaryColumn::kernel_size, SummaryColumn::mult_adds}});
  check("frozen_layers.txt", s, peer("torchinfo__frozen_layers.out"));
  BOOST_TEST(t.trainable_params == 11006440u);
}

BOOST_AUTO_TEST_CASE(lstm_verbose_is_torchinfos_table) {
  models::LSTMNet net;
  auto t = Tracer{}.run(net, torch::zeros({1, 100}, torch::kLong));
  const std::string s = recorder::summary(
      t, {.columns = {SummaryColumn::kernel_size, SummaryColumn::output_size,
                      SummaryColumn::num_params, SummaryColumn::mult_adds},
          .col_width = 20,
          .row_settings = {SummaryRow::var_names},
          .verbose = true});
  check("lstm.txt", s, peer("torchinfo__lstm.out"));
  const auto table = recorder::summarize(t);
  BOOST_TEST(table.total_params == 3784580u);
  BOOST_TEST(table.total_mult_adds == 377864000u);
}

BOOST_AUTO_TEST_CASE(all_outputs_of_tuple_returning_modules) {
  models::LSTMNet net;
  auto t = Tracer{}.run(net, torch::zeros({1, 100}, torch::kLong));
  const auto first_only = recorder::summarize(t, {.row_settings = {SummaryRow::var_names}});
  const auto all = recorder::summarize(t, {.row_settings = {SummaryRow::var_names}, .all_outputs = true});
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
  check("ascii_only.txt", recorder::summary(t, {.row_settings = {}, .ascii_only = true}),
        peer("torchinfo__ascii_only.out"));
}

BOOST_AUTO_TEST_CASE(every_column_on_the_example_models) {
  models::MLP mlp;
  auto t = Tracer{}.run(mlp, torch::zeros({2, 784}));
  check("mlp_all_columns.txt",
        recorder::summary(t, {.depth = 1,
                              .columns = {SummaryColumn::kernel_size, SummaryColumn::groups,
                                          SummaryColumn::input_size, SummaryColumn::output_size,
                                          SummaryColumn::num_params, SummaryColumn::params_percent,
                                          SummaryColumn::mult_adds, SummaryColumn::trainable},
                              .col_width = 20}),
        std::nullopt);
  models::TransformerEncoderModel tr;
  auto tt = Tracer{}.run(tr, torch::zeros({10, 2}, torch::kLong));
  check("transformer.txt", recorder::summary(tt), std::nullopt);
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
  BOOST_TEST(s.find("\u251c\u2500Linear: 1-1                            [1, 4]") != std::string::npos, s);
  check("broken.txt", s, std::nullopt);
}
