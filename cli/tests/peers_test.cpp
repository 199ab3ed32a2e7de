// The peers, run live: `recorder summary` and `recorder draw` on the TorchScript files of the
// test models against torchinfo.summary and torchview.draw_graph run by Python on the same
// models (tests/script/models.py) and inputs (peers.py, in the venv of scripts/requirements.txt:
// torchinfo 1.8.0 and torchview 0.2.7 from PyPI). On both libtorch legs. Torch-free itself: it
// only runs programs.
//
// What is compared, and why not more:
// - torchview: node and edge counts at depths 1, 3 and unlimited, equal.
// - torchinfo: the table (header and every layer row) and the parameter totals byte for byte; the
//   footer's numbers (mult-adds, sizes) equal to the precision both print. PyPI's torchinfo 1.8.0
//   (May 2023) prints the footer differently from torchinfo's current source, which recorder
//   follows and whose own test outputs are the reference files recorder's goldens come from
//   (../shared/reference/peers): it prints M, G or T only (0.17 M where the source prints
//   168.12 k), and on Python 3.11 and later the enum's name for the unit
//   ("Total mult-adds (Units.MEGABYTES)"). It also counts a Linear's mult-adds once per element of
//   the output's first dimension, where the current source counts them once per output row (a
//   Linear on [1, 100, 512] does 100 rows of work): that cell, and the total, differ by exactly
//   that, asserted below.
// - The transformer models: the parameter totals only, here. Their files are saved by the leg's
//   PyTorch and the peers run on the venv's 2.13: on the 1.13 leg an eval TransformerEncoderLayer
//   under no_grad takes 1.13's fused path, and 2.13's Python does not, so the tables cannot agree.
//   The zoo (tests/zoo) compares their whole tables with the peers of the PyTorch that saved each
//   file. Their drawings are equal except where torchview draws an nn.MultiheadAttention as a
//   module holding its functional ops (2 nodes and 2 edges each), asserted as such.
//   tables.hpp holds the comparison, shared with the zoo.
// - The same models exported with torch.export by the venv's PyTorch (peers.py export) and read
//   by `recorder summary|draw model.pt2` without running (the .pt2 front end): the same
//   comparisons, transformers included (the program records the path PyTorch 2.13 took, the one
//   torchinfo's run takes), on both legs.
#define BOOST_TEST_MODULE peers
#include <boost/test/unit_test.hpp>

#include "programs.hpp"
#include "tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#if !defined(RECORDER_CLI) || !defined(RECORDER_SCRIPT_MODELS) || !defined(RECORDER_PEERS) || \
    !defined(RECORDER_PEERS_SCRIPT) || !defined(RECORDER_TESTED_TORCH) ||                     \
    !defined(RECORDER_EXPORT_MODELS) || !defined(RECORDER_PEERS_TORCH_MAJOR) ||               \
    !defined(RECORDER_TORCH_MAJOR)
#error \
    "RECORDER_CLI, RECORDER_SCRIPT_MODELS, RECORDER_PEERS, RECORDER_PEERS_SCRIPT, RECORDER_TESTED_TORCH, RECORDER_EXPORT_MODELS, RECORDER_PEERS_TORCH_MAJOR, RECORDER_TORCH_MAJOR must be set"
#endif

namespace fs = std::filesystem;
using programs::Run;

namespace {

/// A test model and its inputs, as `recorder` and peers.py take them.
struct Case {
  std::string model;                ///< models.py's name; the file is <model>_script.pt
  std::vector<std::string> inputs;  ///< --input-size and --dtype arguments
  tables::Allowed allowed{};        ///< how its tables may differ from torchinfo's
};

const std::vector<Case> exact = {
    {"mlp", {"--input-size", "2,784"}},
    {"lstm", {"--input-size", "1,100", "--dtype", "int64"}},
    {"two_inputs",
     {"--input-size", "16,2,64", "--input-size", "16,2", "--dtype", "float32", "--dtype", "int64"}},
    {"twice", {"--input-size", "2,3"}},
    {"tied", {"--input-size", "2,8"}, {.shared = 64}},
    {"keyword_calls", {"--input-size", "2,5,16"}},
};

const std::vector<Case> transformers = {
    {"transformer", {"--input-size", "10,2", "--dtype", "int64"}},
    {"text_encoder", {"--input-size", "2,12", "--dtype", "int64"}},
    {"attention_block", {"--input-size", "2,12,64"}},
    {"tiny_gpt", {"--input-size", "2,12", "--dtype", "int64"}},
};

/// Models read only as .pt2 programs: a ResNet-18 in plain PyTorch (torchvision's
/// architecture; the venv has no torchvision).
const std::vector<Case> exported_only = {
    {"resnet18_plain", {"--input-size", "1,3,224,224"}},
};

const fs::path work = fs::current_path() / "peers-test";

std::string model_file(const std::string& model) {
  return (fs::path(RECORDER_SCRIPT_MODELS) / (model + "_script.pt")).string();
}

/// The model exported by peers.py (`torch.export.save`), in the test's folder.
std::string exported_file(const std::string& model) { return (work / (model + ".pt2")).string(); }

/// `recorder <what> <model file> <inputs> <more>`; its standard output (the test fails on errors).
std::string ours(const std::string& what, const Case& c, const std::vector<std::string>& more) {
  std::vector<std::string> args{what, model_file(c.model)};
  args.insert(args.end(), c.inputs.begin(), c.inputs.end());
  args.insert(args.end(), more.begin(), more.end());
  const Run r = programs::run(work, RECORDER_CLI, args);
  BOOST_TEST(r.code == 0, "recorder " << what << " " << c.model << ": " << r.err);
  return r.out;
}

/// `recorder <what> <model>.pt2 <more>`: the exported program read without running, so without
/// inputs.
std::string ours_exported(const std::string& what, const Case& c,
                          const std::vector<std::string>& more) {
  std::vector<std::string> args{what, exported_file(c.model)};
  args.insert(args.end(), more.begin(), more.end());
  const Run r = programs::run(work, RECORDER_CLI, args);
  BOOST_TEST(r.code == 0, "recorder " << what << " " << c.model << ".pt2: " << r.err);
  return r.out;
}

const std::vector<std::string> every_column{
    "--depth",        "10",
    "--columns",      "input_size,output_size,num_params,mult_adds",
    "--row-settings", "depth,var_names"};
const char* const depths[] = {"1", "3", "inf"};

/// The MLP exported with a dynamic batch in [1, 64].
const std::vector<std::string> dynamic_mlp{"--to", (work / "mlp_dynamic.pt2").string(),
                                           "--dynamic-batch", "1,64"};

/// peers.py's words for one request: `<what> <model> <inputs> <more>`, tab-separated.
std::string request(const std::string& what, const Case& c, const std::vector<std::string>& more) {
  std::string line = what + "\t" + c.model;
  for (const std::string& w : c.inputs) line += "\t" + w;
  for (const std::string& w : more) line += "\t" + w;
  return line;
}

/// What torchinfo and torchview give for every request the cases below make, from one run of
/// `peers.py --batch` (one Python start-up: importing torch is most of a request's time).
const std::map<std::string, std::string>& answers() {
  static const std::map<std::string, std::string> all = [] {
    std::vector<std::string> requests;
    for (const Case& c : exact) {
      requests.push_back(request("summary", c, every_column));
      requests.push_back(request("summary", c, {}));
      for (const char* d : depths) requests.push_back(request("draw", c, {"--depth", d}));
    }
    for (const Case& c : transformers) {
      requests.push_back(request("summary", c, {}));
      requests.push_back(request("summary", c, every_column));
      for (const char* d : depths) requests.push_back(request("draw", c, {"--depth", d}));
    }
    for (const Case& c : exported_only) {
      requests.push_back(request("summary", c, every_column));
      requests.push_back(request("summary", c, {}));
      for (const char* d : depths) requests.push_back(request("draw", c, {"--depth", d}));
    }
    for (const auto* cases : {&exact, &transformers, &exported_only})
      for (const Case& c : *cases)
        requests.push_back(request("export", c, {"--to", exported_file(c.model)}));
    requests.push_back(request("export", exact.front(), dynamic_mlp));
    fs::create_directories(work);
    {
      std::ofstream file(work / "requests.tsv");
      for (const std::string& r : requests) file << r << "\n";
    }
    const Run r = programs::run(
        work, RECORDER_PEERS, {RECORDER_PEERS_SCRIPT, "--batch", (work / "requests.tsv").string()});
    BOOST_TEST_REQUIRE(r.code == 0, "peers.py: " << r.err);
    std::map<std::string, std::string> out;
    std::size_t at = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const std::string marker = "=== request " + std::to_string(i) + "\n";
      BOOST_TEST_REQUIRE(r.out.compare(at, marker.size(), marker) == 0, "no answer " << i);
      at += marker.size();
      const std::string next = "=== request " + std::to_string(i + 1) + "\n";
      const auto end = i + 1 < requests.size() ? r.out.find(next, at) : r.out.size();
      out[requests[i]] = r.out.substr(at, end - at);
      at = end;
    }
    return out;
  }();
  return all;
}

/// What torchinfo or torchview give for `peers.py <what> <model> <inputs> <more>`.
std::string theirs(const std::string& what, const Case& c, const std::vector<std::string>& more) {
  const auto found = answers().find(request(what, c, more));
  BOOST_TEST_REQUIRE((found != answers().end()),
                     "not asked of peers.py: " << what << " " << c.model);
  return found->second;
}

bool exists(const Case& c) { return fs::exists(model_file(c.model)); }

}  // namespace

BOOST_AUTO_TEST_CASE(torchinfo_tables_of_the_plain_models) {
  for (const Case& c : exact) {
    // peers.py runs on the venv's PyTorch: its `Input size` counts that PyTorch's storage
    // header, recorder this libtorch's.
    tables::Allowed allowed = c.allowed;
    allowed.other_pytorch = RECORDER_TORCH_MAJOR != RECORDER_PEERS_TORCH_MAJOR;
    // The table with a Mult-Adds column first: its Linear rows give the totals' difference.
    const double linear = tables::compare_tables(c.model, allowed, "depth 10, every column",
                                                 ours("summary", c, every_column),
                                                 theirs("summary", c, every_column));
    tables::compare_tables(c.model, allowed, "default columns", ours("summary", c, {}),
                           theirs("summary", c, {}), linear);
  }
}

BOOST_AUTO_TEST_CASE(torchinfo_parameter_totals_of_the_transformers) {
  int compared = 0;
  for (const Case& c : transformers) {
    if (!exists(c)) continue;  // tiny_gpt: PyTorch 1.13 cannot script it (no SDPA)
    BOOST_TEST_CONTEXT(c.model) {
      BOOST_TEST(tables::parse(ours("summary", c, {})).params ==
                     tables::parse(theirs("summary", c, {})).params,
                 boost::test_tools::per_element());
    }
    ++compared;
  }
  BOOST_TEST(compared >= 3);
}

BOOST_AUTO_TEST_CASE(torchview_node_and_edge_counts) {
  // "wrote <file>: N nodes, M edges" against peers.py's "N nodes, M edges".
  const auto counts = [](const std::string& out) { return out.substr(out.rfind(": ") + 2); };
  const fs::path dot = work / "drawn.dot";
  for (const Case& c : exact) {
    for (const char* depth : depths) {
      BOOST_TEST(counts(ours("draw", c, {"--depth", depth, "-o", dot.string()})) ==
                     theirs("draw", c, {"--depth", depth}),
                 c.model << " at depth " << depth);
    }
  }
  // The transformers: equal (tiny_gpt's `torch.arange` is traced without a node, as torchview
  // traces torch's creation functions), but where torchview opens an nn.MultiheadAttention
  // (whose out_proj it never calls) and draws its functional call and batch_first's transposes:
  // 2 nodes and 2 edges more per MHA drawn open (text_encoder's two at unlimited depth,
  // attention_block's one from depth 3). docs/fidelity.md ("The zoo") argues it.
  struct Delta {
    int nodes = 0, edges = 0;  ///< torchview's count minus recorder's
  };
  const std::map<std::string, std::map<std::string, Delta>> known = {
      {"text_encoder", {{"inf", {4, 4}}}},
      {"attention_block", {{"3", {2, 2}}, {"inf", {2, 2}}}},
  };
  for (const Case& c : transformers) {
    if (!exists(c)) continue;
    for (const char* depth : depths) {
      std::istringstream a(counts(ours("draw", c, {"--depth", depth, "-o", dot.string()})));
      std::istringstream b(theirs("draw", c, {"--depth", depth}));
      int an = 0, ae = 0, bn = 0, be = 0;
      std::string word;
      a >> an >> word >> ae;
      b >> bn >> word >> be;
      Delta d;
      if (const auto m = known.find(c.model); m != known.end())
        if (const auto at = m->second.find(depth); at != m->second.end()) d = at->second;
      BOOST_TEST(an + d.nodes == bn, c.model << " at depth " << depth << ": nodes");
      BOOST_TEST(ae + d.edges == be, c.model << " at depth " << depth << ": edges");
    }
  }
}

/// The exported programs, read without running: torchinfo's tables and torchview's counts, as
/// for the TorchScript files, the transformers' whole tables too.
BOOST_AUTO_TEST_CASE(exported_programs_read_without_running_match_the_peers) {
  const auto counts = [](const std::string& out) { return out.substr(out.rfind(": ") + 2); };
  const fs::path dot = work / "drawn_exported.dot";
  for (const auto* cases : {&exact, &transformers, &exported_only}) {
    for (const Case& c : *cases) {
      BOOST_TEST_REQUIRE(theirs("export", c, {"--to", exported_file(c.model)}) ==
                         "exported " + exported_file(c.model) + "\n");
      const std::string name = c.model + ".pt2";
      // A program keeps no call sites: its keyword-only calls show the tensors passed. Read by
      // this libtorch, its `Input size` counts this libtorch's storage header (as a run's).
      tables::Allowed allowed = c.allowed;
      if (c.model == "keyword_calls") allowed.keyword_called = {"ScaledLinear", "LayerNorm"};
      allowed.other_pytorch = RECORDER_TORCH_MAJOR != RECORDER_PEERS_TORCH_MAJOR;
      const double linear = tables::compare_tables(name, allowed, "depth 10, every column",
                                                   ours_exported("summary", c, every_column),
                                                   theirs("summary", c, every_column));
      tables::compare_tables(name, allowed, "default columns", ours_exported("summary", c, {}),
                             theirs("summary", c, {}), linear);
      for (const char* depth : depths) {
        std::istringstream a(
            counts(ours_exported("draw", c, {"--depth", depth, "-o", dot.string()})));
        std::istringstream b(theirs("draw", c, {"--depth", depth}));
        int an = 0, ae = 0, bn = 0, be = 0;
        std::string word;
        a >> an >> word >> ae;
        b >> bn >> word >> be;
        // tiny_gpt's `.contiguous()` after a transpose and a view is a no-op torch.export records
        // no op for; torchview draws it (one node and one edge per attention, depth 3 and on).
        const int missing = c.model == "tiny_gpt" && std::string(depth) != "1" ? 2 : 0;
        BOOST_TEST(an + missing == bn, name << " at depth " << depth << ": nodes");
        BOOST_TEST(ae + missing == be, name << " at depth " << depth << ": edges");
      }
    }
  }
}

/// What the .pt2 reader refuses, each in one line naming the file, with exit 2 and no output
/// file: a truncated archive, a bit-flipped program, a text file named .pt2; a TorchScript file
/// named .pt2 is read as TorchScript; a program run on inputs it does not accept.
BOOST_AUTO_TEST_CASE(damaged_and_foreign_archives_are_refused_in_one_line) {
  const Case& mlp = exact.front();
  BOOST_TEST_REQUIRE(theirs("export", mlp, {"--to", exported_file(mlp.model)}) ==
                     "exported " + exported_file(mlp.model) + "\n");
  const fs::path dir = programs::scratch(work, "bad-archives");
  std::string bytes;
  {
    std::ifstream in(exported_file(mlp.model), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  BOOST_TEST_REQUIRE(bytes.size() > 4096u);
  const auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir / name, std::ios::binary) << content;
    return (dir / name).string();
  };
  // The program's record starts with the JSON's first key: flip bytes inside it.
  std::string flipped = bytes;
  const auto json_at = flipped.find("{\"graph_module\"");
  BOOST_TEST_REQUIRE(json_at != std::string::npos);
  for (std::size_t i = json_at + 1; i < json_at + 12; ++i)
    flipped[i] = static_cast<char>(~flipped[i]);
  struct Bad {
    std::string file;
    std::vector<std::string> more;
    std::string expected;  ///< the one line's start
  };
  const std::string truncated = write("truncated.pt2", bytes.substr(0, bytes.size() / 2));
  const std::string flip = write("flipped.pt2", flipped);
  const std::string text = write("text.pt2", "not an archive\n");
  const std::vector<Bad> cases = {
      {truncated, {}, "recorder: cannot read '" + truncated + "': it is a damaged zip archive ("},
      {flip, {}, "recorder: cannot read '" + flip + "': its program is not valid JSON"},
      {text,
       {},
       "recorder: cannot read '" + text + "': it is not a torch.export archive (not a zip file)"},
  };
  for (const Bad& b : cases) {
    for (const char* what : {"summary", "draw"}) {
      const fs::path out = dir / (std::string(what) == "draw" ? "drawn.dot" : "table.txt");
      std::vector<std::string> args{what, b.file, "-o", out.string()};
      args.insert(args.end(), b.more.begin(), b.more.end());
      const Run r = programs::run(dir, RECORDER_CLI, args);
      BOOST_TEST_CONTEXT(what << " " << b.file) {
        BOOST_TEST(r.code == 2);
        BOOST_TEST(r.err.rfind(b.expected, 0) == 0, r.err);
        BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        BOOST_TEST(!fs::exists(out));
      }
    }
  }
  // Chosen by content, not by name: a TorchScript file named .pt2 is read as TorchScript.
  fs::copy_file(model_file("mlp"), dir / "script.pt2");
  const Run script = programs::run(
      dir, RECORDER_CLI, {"summary", (dir / "script.pt2").string(), "--input-size", "2,784"});
  BOOST_TEST(script.code == 0, script.err);
  BOOST_TEST(script.out == ours("summary", mlp, {}));
  // Given inputs, summary runs the program: the table it prints from the run equals the one it
  // reads without running.
  const Run ran = programs::run(dir, RECORDER_CLI,
                                {"summary", exported_file(mlp.model), "--input-size", "2,784"});
  BOOST_TEST(ran.code == 0, ran.err);
  BOOST_TEST(ran.out == ours_exported("summary", mlp, {}));
  // Inputs the program does not accept: one line naming the input and dimension, exit 2.
  const Run wrong = programs::run(dir, RECORDER_CLI,
                                  {"summary", exported_file(mlp.model), "--input-size", "3,784"});
  BOOST_TEST(wrong.code == 2);
  BOOST_TEST(wrong.err == "recorder: cannot read '" + exported_file(mlp.model) +
                              "': input 0 ('x') has size 3 at dimension 0, where the program was "
                              "exported with 2 (a static size)\n");
}

/// A dynamic size read without running shows its name in every shape, and its range on stderr;
/// given inputs, the program runs on any size in the range and shows the sizes it ran with.
BOOST_AUTO_TEST_CASE(a_dynamic_size_shows_its_name) {
  const Case& mlp = exact.front();
  BOOST_TEST_REQUIRE(theirs("export", mlp, dynamic_mlp) == "exported " + dynamic_mlp[1] + "\n");
  const Run read = programs::run(work, RECORDER_CLI, {"summary", dynamic_mlp[1]});
  BOOST_TEST_REQUIRE(read.code == 0, read.err);
  // The symbol's name is PyTorch's choice (`s77` on 2.13): read from the one stderr line.
  const std::string prefix = "recorder: dynamic size: x: size 0 is ";
  BOOST_TEST_REQUIRE(read.err.rfind(prefix, 0) == 0u, read.err);
  const std::string symbol =
      read.err.substr(prefix.size(), read.err.find(' ', prefix.size()) - prefix.size());
  BOOST_TEST(read.err == prefix + symbol + " in [1, 64] (exported with 2)\n");
  for (const char* row :
       {"MLP                                      [", "├─Linear: 1-1  ", "├─Linear: 1-3  "}) {
    const auto at = read.out.find(row);
    BOOST_TEST_REQUIRE(at != std::string::npos, row << " in\n" << read.out);
    const auto shape = read.out.find('[', at);
    BOOST_TEST(read.out.compare(shape, symbol.size() + 1, "[" + symbol) == 0, read.out);
  }
  const Run ran =
      programs::run(work, RECORDER_CLI, {"summary", dynamic_mlp[1], "--input-size", "5,784"});
  BOOST_TEST(ran.code == 0, ran.err);
  BOOST_TEST(ran.err.empty(), ran.err);
  BOOST_TEST(ran.out.find("[5, 100]") != std::string::npos, ran.out);
  BOOST_TEST(ran.out.find(symbol) == std::string::npos, ran.out);
  const Run outside =
      programs::run(work, RECORDER_CLI, {"summary", dynamic_mlp[1], "--input-size", "65,784"});
  BOOST_TEST(outside.code == 2);
  BOOST_TEST(outside.err.find("outside the range the program allows for " + symbol + ": [1, 64]") !=
                 std::string::npos,
             outside.err);
}

/// Every subcommand on an exported program: record (on one rank and on two) and profile run it
/// on the archive's sample inputs, draw writes the viewer and Model Explorer's JSON from the
/// static read, and a drawing of a run has the static one's counts.
BOOST_AUTO_TEST_CASE(every_subcommand_takes_an_exported_program) {
  const Case& mlp = exact.front();
  BOOST_TEST_REQUIRE(theirs("export", mlp, {"--to", exported_file(mlp.model)}) ==
                     "exported " + exported_file(mlp.model) + "\n");
  const fs::path dir = programs::scratch(work, "exported-subcommands");
  const std::string pt2 = exported_file(mlp.model);
  const Run rec = programs::run(
      dir, RECORDER_CLI, {"record", pt2, "--layers", "fc1,fc3", "-o", (dir / "acts.pt").string()});
  BOOST_TEST(rec.code == 0, rec.err);
  BOOST_TEST(rec.err.empty(), rec.err);  // on the archive's sample inputs
  BOOST_TEST(rec.out.find("fc1 (Linear, 1-1): 1 sample") != std::string::npos, rec.out);
  BOOST_TEST(
      rec.out.find("wrote " + (dir / "acts.pt").string() + ": 2 layers") != std::string::npos,
      rec.out);
  BOOST_TEST(fs::exists(dir / "acts.pt"));
  const Run ranks =
      programs::run(dir, RECORDER_CLI,
                    {"record", pt2, "--layers", "fc1", "--reduce", "mean", "--batches", "4",
                     "--local-ranks", "2", "-o", (dir / "ranks.pt").string()});
  BOOST_TEST(ranks.code == 0, ranks.err);
  BOOST_TEST(ranks.out.find("fc1 (Linear, 1-1): 4 samples") != std::string::npos, ranks.out);
  BOOST_TEST(ranks.out.find("over 4 batches on 2 ranks") != std::string::npos, ranks.out);
  const Run prof =
      programs::run(dir, RECORDER_CLI,
                    {"profile", pt2, "--warmup", "1", "--runs", "2", "-o", (dir / "mlp").string()});
  BOOST_TEST(prof.code == 0, prof.err);
  BOOST_TEST(prof.out.find("├─Linear: 1-1") != std::string::npos, prof.out);
  BOOST_TEST(prof.out.find("Total time: ") != std::string::npos, prof.out);
  for (const char* out : {"mlp.html", "mlp.explorer.json", "mlp.svg"}) {
    const Run drawn = programs::run(dir, RECORDER_CLI, {"draw", pt2, "-o", (dir / out).string()});
    BOOST_TEST(drawn.code == 0, out << ": " << drawn.err);
    BOOST_TEST(fs::exists(dir / out), out);
  }
  const auto counts = [](const std::string& out) { return out.substr(out.rfind(": ") + 2); };
  const Run read =
      programs::run(dir, RECORDER_CLI, {"draw", pt2, "-o", (dir / "read.dot").string()});
  const Run ran = programs::run(
      dir, RECORDER_CLI, {"draw", pt2, "--input-size", "2,784", "-o", (dir / "ran.dot").string()});
  BOOST_TEST(ran.code == 0, ran.err);
  BOOST_TEST(counts(ran.out) == counts(read.out));
  // A program runs in the mode it was exported in: --train is refused, nothing written.
  const Run train = programs::run(
      dir, RECORDER_CLI,
      {"record", pt2, "--layers", "fc1", "--train", "-o", (dir / "train.pt").string()});
  BOOST_TEST(train.code == 2);
  BOOST_TEST(train.err == "recorder: cannot read '" + pt2 +
                              "': a program runs in the mode it was exported in, and cannot be "
                              "put in train mode (call model.train() before "
                              "torch.export.export)\n");
  BOOST_TEST(!fs::exists(dir / "train.pt"));
  // An archive without sample inputs runs on random inputs of the shapes it was exported with,
  // saying so.
  const std::string bare = (fs::path(RECORDER_EXPORT_MODELS) / "mlp_no_samples.pt2").string();
  const Run guessed = programs::run(
      dir, RECORDER_CLI, {"record", bare, "--layers", "fc1", "-o", (dir / "guessed.pt").string()});
  BOOST_TEST(guessed.code == 0, guessed.err);
  BOOST_TEST(guessed.err == "recorder: '" + bare + "' has no sample inputs libtorch " +
                                RECORDER_TESTED_TORCH +
                                " can read: running on random inputs of the shapes it was "
                                "exported with\n");
  BOOST_TEST(guessed.out.find("fc1 (Linear, 1-1): 1 sample, 1 tensor") != std::string::npos,
             guessed.out);
}
