// The zoo (zoo.py): `recorder summary` and `recorder draw` on one real model's TorchScript file
// against torchinfo's table and torchview's node and edge counts on the same model and input,
// run live by zoo.py (answers cached by the file's hash). One CTest test per model:
//
//   zoo_test -- <model> <leg folder>       (the folder holds zoo.tsv and answers/<model>.txt)
//
// Without arguments it checks the zoo itself: at least 25 models on the leg, each answered.
//
// Compared: the table at torchinfo's defaults and at depth 10 with every column and row setting,
// byte for byte but what tables.hpp allows (PyPI's torchinfo 1.8.0 against the current source
// recorder follows), and the counts at depth 1, 3 and unlimited, equal but the differences of
// `drawn_apart` below, each asserted exactly and argued in docs/fidelity.md ("The zoo").
// Torch-free itself: it only runs programs.
#define BOOST_TEST_MODULE zoo
#include <boost/test/unit_test.hpp>

#include "programs.hpp"
#include "tables.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#if !defined(RECORDER_CLI) || !defined(RECORDER_ZOO_LEG) || !defined(RECORDER_TORCH_MAJOR)
#error "RECORDER_CLI, RECORDER_ZOO_LEG and RECORDER_TORCH_MAJOR (recorder_add_test) must be set"
#endif

namespace fs = std::filesystem;

namespace {

/// The requests zoo.py answered, in its order (zoo.py's REQUESTS).
const std::vector<std::string> every_column{
    "--depth",        "10",
    "--columns",      "input_size,output_size,num_params,mult_adds",
    "--row-settings", "depth,var_names"};
const char* const depths[] = {"1", "3", "inf"};

/// torchview's count minus recorder's, nodes and edges, at one depth.
struct Delta {
  int nodes = 0, edges = 0;
};

/// Where recorder's drawing differs from torchview's, by model and depth (docs/fidelity.md, "The
/// zoo", says why for each kind):
/// - mha: torchview opens an nn.MultiheadAttention (it holds an `out_proj` it never calls) and
///   draws the functional call and the `transpose`s batch_first adds around it: 2 nodes and 2
///   edges more per self-attention, 3 per cross-attention;
/// - functional attention: torchvision's Swin computes attention in a function called with its
///   submodules' weights; TorchScript runs the module as a leaf, torchview draws every op;
/// - parallel edges: torchview writes an edge per tensor between two drawn nodes (the tensors
///   of a dict between two modules drawn closed, a PackedSequence's data and batch sizes), which
///   Graphviz's strict graph draws as one; recorder writes one;
/// - creation wrappers: torchview wraps torch's creation functions, and the result of
///   `torch.zeros_like(x)` or `torch.empty_like(x)` (drawn as a node, fed by `x`) or of
///   `torch.as_tensor(t)` (no node) gets a fresh tensor node of its own: the edge from the op
///   (from what made `t`) to the op reading the result is missing, one per such result read.
///   recorder draws it. `bilstm_tagger` has two parallel edges (the packed tensors into the
///   LSTM and out of it) and, under PyTorch 1.13, two such results (`pack_padded_sequence`'s
///   `as_tensor` of the lengths and its `empty_like`): equal counts. PyTorch 2.x's
///   `pack_padded_sequence` converts the lengths with `.to(torch.int64)`: one edge apart.
/// Keyed by the model and the major version of the PyTorch that saved its file (what runs is
/// that PyTorch's code).
const std::map<std::string, std::map<std::string, Delta>> drawn_apart = {
    {"vit_b_16@1", {{"inf", {24, 24}}}},
    {"swin_t@1", {{"inf", {390, 434}}}},
    {"lraspp_mobilenet_v3_large@1", {{"1", {0, 1}}}},
    {"text_encoder@1", {{"inf", {4, 4}}}},
    {"text_encoder@2", {{"inf", {4, 4}}}},
    {"attention_block@1", {{"3", {2, 2}}, {"inf", {2, 2}}}},
    {"attention_block@2", {{"3", {2, 2}}, {"inf", {2, 2}}}},
    {"seq2seq@1", {{"inf", {14, 14}}}},
    {"seq2seq@2", {{"inf", {14, 14}}}},
    {"gpt2_mha@1", {{"3", {4, 4}}, {"inf", {4, 4}}}},
    {"gpt2_mha@2", {{"3", {4, 4}}, {"inf", {4, 4}}}},
    {"moe@1", {{"1", {0, -1}}, {"3", {0, -1}}, {"inf", {0, -1}}}},
    {"moe@2", {{"1", {0, -1}}, {"3", {0, -1}}, {"inf", {0, -1}}}},
    {"bilstm_tagger@2", {{"1", {0, 1}}, {"3", {0, 1}}, {"inf", {0, 1}}}},
};

/// Parameters two modules hold (a tied head): torchinfo 1.8.0 counts them once per module.
const std::map<std::string, int> shared_params = {
    {"gpt2_mha", 100 * 64},
};

/// Models whose nn.TransformerEncoderLayer torchinfo's source unfolds (`tables::Allowed`), by
/// model and the major version of the PyTorch that saved (and answers for) the file.
const std::set<std::string> source_unfolds = {"text_encoder@1"};

struct Entry {
  std::string file;
  std::string saved_by;  ///< "1.13", "2.13": the PyTorch that saved the file
  std::vector<std::string> inputs;
};

Entry entry_of(const fs::path& leg, const std::string& model) {
  std::ifstream in(leg / "zoo.tsv");
  BOOST_TEST_REQUIRE(in.good(), "cannot read " << (leg / "zoo.tsv"));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> words;
    std::istringstream fields(line);
    for (std::string w; std::getline(fields, w, '\t');) words.push_back(w);
    if (words.size() < 3 || words[0] != model) continue;
    return {words[1], words[2], std::vector<std::string>(words.begin() + 3, words.end())};
  }
  BOOST_FAIL(model << " is not in " << (leg / "zoo.tsv"));
  return {};
}

/// zoo.py's five answers for `model`.
std::vector<std::string> answers_of(const fs::path& leg, const std::string& model) {
  std::ifstream in(leg / "answers" / (model + ".txt"));
  BOOST_TEST_REQUIRE(in.good(), "no answers for " << model << " in " << leg);
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  std::vector<std::string> out;
  for (std::size_t i = 0;; ++i) {
    const std::string marker = "=== request " + std::to_string(i) + "\n";
    const auto at = text.find(marker);
    if (at == std::string::npos) break;
    const auto from = at + marker.size();
    const auto next = text.find("=== request " + std::to_string(i + 1) + "\n", from);
    out.push_back(text.substr(from, next == std::string::npos ? std::string::npos : next - from));
  }
  BOOST_TEST_REQUIRE(out.size() == 5u, model << ": " << out.size() << " answers");
  return out;
}

}  // namespace

/// The leg's zoo: its models' names, from zoo.tsv.
std::vector<std::string> zoo_models(const fs::path& leg) {
  std::ifstream in(leg / "zoo.tsv");
  BOOST_TEST_REQUIRE(in.good(), "cannot read " << (leg / "zoo.tsv"));
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) names.push_back(line.substr(0, line.find('\t')));
  return names;
}

BOOST_AUTO_TEST_CASE(recorder_against_torchinfo_and_torchview) {
  const auto& master = boost::unit_test::framework::master_test_suite();
  if (master.argc == 1) {
    // The zoo itself: at least 25 models, each with the peers' five answers.
    const std::vector<std::string> names = zoo_models(RECORDER_ZOO_LEG);
    BOOST_TEST(names.size() >= 25u);
    for (const std::string& n : names) BOOST_TEST(answers_of(RECORDER_ZOO_LEG, n).size() == 5u);
    return;
  }
  BOOST_TEST_REQUIRE(master.argc == 3, "usage: zoo_test [-- <model> <leg folder>]");
  const std::string model = master.argv[1];
  const fs::path leg = master.argv[2];
  const Entry e = entry_of(leg, model);
  const std::vector<std::string> theirs = answers_of(leg, model);
  const fs::path work = fs::current_path() / ("zoo-" + model);
  fs::create_directories(work);
  const auto ours = [&](const std::string& what, const std::vector<std::string>& more) {
    std::vector<std::string> args{what, e.file};
    args.insert(args.end(), e.inputs.begin(), e.inputs.end());
    args.insert(args.end(), more.begin(), more.end());
    const programs::Run r = programs::run(work, RECORDER_CLI, args);
    BOOST_TEST_REQUIRE(r.code == 0, "recorder " << what << " " << model << ": " << r.err);
    return r.out;
  };

  tables::Allowed allowed;
  if (const auto k = shared_params.find(model); k != shared_params.end())
    allowed.shared = k->second;
  const std::string saved_major = e.saved_by.substr(0, e.saved_by.find('.'));
  allowed.source_unfolds_encoder_layers = source_unfolds.count(model + '@' + saved_major) == 1;
  allowed.other_pytorch = saved_major != std::to_string(RECORDER_TORCH_MAJOR);
  const double linear = tables::compare_tables(model, allowed, "depth 10, every column",
                                               ours("summary", every_column), theirs[1]);
  tables::compare_tables(model, allowed, "default columns", ours("summary", {}), theirs[0], linear);

  for (std::size_t i = 0; i < std::size(depths); ++i) {
    const std::string depth = depths[i];
    const auto [an, ae] =
        tables::counts(ours("draw", {"--depth", depth, "-o", (work / "drawn.dot").string()}));
    const auto [bn, be] = tables::counts(theirs[2 + i]);
    Delta d;
    const std::string key = model + '@' + saved_major;
    if (const auto m = drawn_apart.find(key); m != drawn_apart.end())
      if (const auto at = m->second.find(depth); at != m->second.end()) d = at->second;
    BOOST_TEST(an + d.nodes == bn, model << " at depth " << depth << ": nodes, recorder " << an
                                         << ", torchview " << bn);
    BOOST_TEST(ae + d.edges == be, model << " at depth " << depth << ": edges, recorder " << ae
                                         << ", torchview " << be);
  }
}
