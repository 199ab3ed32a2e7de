// The `recorder` program, run as a user runs it, on TorchScript files Python wrote: its tables and
// pictures against torchinfo's and the templated front end's goldens, its recordings loaded back
// by Python's torch.load and checked against the model's own submodules, and its refusals (exit
// code 2, one line, no file) and failures (exit code 1, the partial summary). Torch-free itself:
// it only runs programs.
#define BOOST_TEST_MODULE cli
#include <boost/test/unit_test.hpp>

#include "programs.hpp"
#include "../../tests/render/golden.hpp"

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#if !defined(RECORDER_CLI) || !defined(RECORDER_SCRIPT_MODELS) || !defined(RECORDER_GOLDEN_DIR) || \
    !defined(RECORDER_PYTHON) || !defined(RECORDER_CHECK_RECORD) || !defined(RECORDER_README)
#error \
    "RECORDER_CLI, RECORDER_SCRIPT_MODELS, RECORDER_GOLDEN_DIR, RECORDER_PYTHON, RECORDER_CHECK_RECORD, RECORDER_README must be set"
#endif

namespace fs = std::filesystem;

namespace {

using programs::read;
using programs::Run;

std::string model(const std::string& name) {
  return (fs::path(RECORDER_SCRIPT_MODELS) / name).string();
}
/// Golden file `name` of this libtorch (golden.hpp: a `.torch2` file where 2.x's output differs).
std::string golden(const std::string& name) { return read(recorder::testing::golden_path(name)); }

/// A fresh, empty folder for one test's files.
fs::path scratch(const std::string& name) {
  return programs::scratch(fs::current_path() / "cli-test", name);
}

/// Runs `program args...` with its standard output and error captured.
Run run_program(const std::string& program, const std::vector<std::string>& args) {
  return programs::run(fs::current_path() / "cli-test", program, args);
}

Run recorder_cli(const std::vector<std::string>& args) { return run_program(RECORDER_CLI, args); }

/// Python's verdict on a recording (check_record.py): "ok\n" when it holds.
std::string python_check(const std::vector<std::string>& args) {
  std::vector<std::string> all{RECORDER_CHECK_RECORD};
  all.insert(all.end(), args.begin(), args.end());
  const Run r = run_program(RECORDER_PYTHON, all);
  return r.code == 0 ? r.out : "exit " + std::to_string(r.code) + ": " + r.out + r.err;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
    ++n;
  return n;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// Every Graphviz layout the program runs here takes as long as it needs
/// (RECORDER_DOT_TIMEOUT=0): under a time limit, `dot` on a loaded machine would fall back to
/// `sfdp` and say so, and a test's outcome would depend on the machine's speed (issue 41). The
/// limit itself is tested with programs that never finish (render_svg).
struct NoLayoutTimeLimit {
  NoLayoutTimeLimit() { ::setenv("RECORDER_DOT_TIMEOUT", "0", 1); }
};
BOOST_TEST_GLOBAL_FIXTURE(NoLayoutTimeLimit);

}  // namespace

// ---- help -----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(help_names_every_subcommand_and_option) {
  const Run top = recorder_cli({"--help"});
  BOOST_TEST(top.code == 0);
  for (const char* word : {"summary", "draw", "record", "Exit codes"})
    BOOST_TEST(top.out.find(word) != std::string::npos, word);
  const Run record = recorder_cli({"record", "--help"});
  BOOST_TEST(record.code == 0);
  for (const char* word :
       {"--input-size",  "--input",       "--dtype",      "--int-high",  "--seed",   "--train",
        "--no-grad",     "--aten-ops",    "--layers",     "--what",      "--reduce", "--batches",
        "--bins",        "--range",       "--correction", "--max-bytes", "--sample", "--output",
        "--local-ranks", "--distributed", "--quantile",   "absmax",      "quantile"})
    BOOST_TEST(record.out.find(word) != std::string::npos, word);
  // profile --draw names the formats that carry times, and those that cannot.
  const Run profile = recorder_cli({"profile", "--help"});
  for (const char* word : {"--draw", ".dot/.gv", ".svg", ".png", ".html", ".mmd", "refused"})
    BOOST_TEST(profile.out.find(word) != std::string::npos, word);
  const Run draw = recorder_cli({"draw", "--help"});
  for (const char* word :
       {"--depth", "--expand-nested", "--roll", "--show-inner-tensors", "--show-module-functions",
        "--direction", "--no-shapes", "--show-params", "--not-strict", "--graph-name", "--format",
        "--dot-timeout", "--show-unreached"})
    BOOST_TEST(draw.out.find(word) != std::string::npos, word);
  BOOST_TEST(draw.out.find("(blocks.0.ln1)") != std::string::npos);  // how nodes are named
  const Run version = recorder_cli({"--version"});
  BOOST_TEST(version.code == 0);
  // With the libtorch the program was built against (CMake found it), major and minor.
  BOOST_TEST(version.out == "0.1.0 (libtorch " RECORDER_TORCH_VERSION ")\n");
  const Run none = recorder_cli({});
  BOOST_TEST(none.code == 2);
  BOOST_TEST(none.err == "recorder: A subcommand is required (see recorder --help)\n");
}

// ---- summary --------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(summary_of_scripted_and_traced_resnet18_is_torchinfos_table) {
  for (const char* file : {"resnet18_script.pt", "resnet18_trace.pt"}) {
    BOOST_TEST_CONTEXT(file) {
      const Run r = recorder_cli({"summary", model(file), "--input-size", "1,3,224,224"});
      BOOST_TEST(r.code == 0);
      BOOST_TEST(r.out == golden("summary/resnet18_224.txt"));
      BOOST_TEST(r.err == "");
    }
  }
  // torchinfo's ascii_only table without depth labels, at 64x64.
  const Run ascii = recorder_cli({"summary", model("resnet18_script.pt"), "--input-size",
                                  "1,3,64,64", "--row-settings", "ascii_only"});
  BOOST_TEST(ascii.code == 0);
  BOOST_TEST(ascii.out == golden("summary/ascii_only.txt"));
}

BOOST_AUTO_TEST_CASE(summary_options_and_integer_inputs_give_the_templated_models_tables) {
  const Run mlp = recorder_cli(
      {"summary", model("mlp_script.pt"), "--input-size", "2,784", "--depth", "1", "--columns",
       "kernel_size,groups,input_size,output_size,num_params,params_percent,mult_adds,"
       "trainable",
       "--col-width", "20"});
  BOOST_TEST(mlp.code == 0);
  BOOST_TEST(mlp.out == golden("summary/mlp_all_columns.txt"));
  // Token ids: int64, drawn below the vocabulary size.
  const Run transformer = recorder_cli({"summary", model("transformer_script.pt"), "--input-size",
                                        "10,2", "--dtype", "int64", "--int-high", "100"});
  BOOST_TEST(transformer.code == 0);
  BOOST_TEST(transformer.out == golden("summary/transformer.txt"));
  // -o writes the same bytes to a file and says so on stderr.
  const fs::path dir = scratch("summary");
  const Run to_file = recorder_cli({"summary", model("mlp_script.pt"), "--input", model("mlp_x.pt"),
                                    "-o", (dir / "mlp.txt").string()});
  BOOST_TEST(to_file.code == 0);
  BOOST_TEST(to_file.out == "");
  BOOST_TEST(to_file.err == "recorder: wrote " + (dir / "mlp.txt").string() + "\n");
  BOOST_TEST(read(dir / "mlp.txt").find("MLP                                      [4, 10]") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(several_inputs_each_with_its_size_and_dtype) {
  // forward(x, tokens): features [16, 2, 64] and token ids [16, 2] below 10.
  const Run r =
      recorder_cli({"summary", model("two_inputs_script.pt"), "--input-size", "16,2,64",
                    "--input-size", "16,2", "--dtype", "float32", "--dtype", "int64", "--int-high",
                    "10", "--columns", "input_size,output_size,num_params"});
  BOOST_TEST(r.code == 0);
  const std::vector<std::string> table = lines(r.out);
  BOOST_REQUIRE(table.size() >= 10u);
  BOOST_TEST(table[3] ==
             "TwoInputs                                [16, 2, 64]               [16, 2, 32]       "
             "        --");
  BOOST_TEST(table[4] ==
             "├─Linear: 1-1                            [16, 2, 64]               [16, 2, 32]       "
             "        2,080");
  BOOST_TEST(table[5] ==
             "├─Embedding: 1-2                         [16, 2]                   [16, 2, 32]       "
             "        320");
  BOOST_TEST(table[7] == "Total params: 2,400");
  // One dtype for two inputs makes the tokens float: Embedding refuses them, and says so.
  const Run wrong = recorder_cli({"summary", model("two_inputs_script.pt"), "--input-size",
                                  "16,2,64", "--input-size", "16,2"});
  BOOST_TEST(wrong.code == 1);
  BOOST_TEST(
      wrong.err.rfind("recorder: op 'embedding' failed in module 'embed' (Embedding): ", 0) == 0u);
  // The same seed gives the same inputs, so the same recording.
  const fs::path dir = scratch("seed");
  for (const char* name : {"a.pt", "b.pt"})
    BOOST_TEST(recorder_cli({"record",       model("two_inputs_script.pt"),
                             "--input-size", "16,2,64",
                             "--input-size", "16,2",
                             "--dtype",      "float32",
                             "--dtype",      "int64",
                             "--int-high",   "10",
                             "--seed",       "7",
                             "--layers",     "embed",
                             "--reduce",     "last",
                             "-o",           (dir / name).string()})
                   .code == 0);
  BOOST_TEST(read(dir / "a.pt") == read(dir / "b.pt"));
}

BOOST_AUTO_TEST_CASE(readme_shows_what_the_program_prints) {
  const std::string command = "recorder summary resnet18.pt --input-size 1,3,224,224 --depth 1";
  const Run r = recorder_cli(
      {"summary", model("resnet18_script.pt"), "--input-size", "1,3,224,224", "--depth", "1"});
  BOOST_TEST(r.code == 0);
  std::string out = r.out;
  if (recorder::testing::golden_torch_major() >= 2) {
    // README shows libtorch 1.13's table and, under it, the Input size line libtorch 2.x prints.
    const auto line_of = [](const std::string& text) {
      const auto at = text.find("Input size");
      return text.substr(at, text.find('\n', at) - at);
    };
    const auto at = out.find("Input size");
    BOOST_REQUIRE(at != std::string::npos);
    BOOST_TEST(read(RECORDER_README).find("the footer reads `" + line_of(out) + "`") !=
               std::string::npos);
    const std::string as_1x =
        line_of(read(fs::path(RECORDER_GOLDEN_DIR) / "summary/resnet18_224.txt"));
    out.replace(at, line_of(out).size(), as_1x);
  }
  const std::string block = "```text\n$ " + command + "\n" + out + "```\n";
  BOOST_TEST(read(RECORDER_README).find(block) != std::string::npos,
             "README.md should show, in a text block:\n"
                 << block);
}

// ---- draw -----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(draw_writes_torchviews_pictures_in_every_format) {
  const fs::path dir = scratch("draw");
  const std::string resnet = model("resnet18_script.pt");
  const auto draw = [&](const std::string& file, std::vector<std::string> more = {}) {
    std::vector<std::string> args{"draw",        resnet, "--input-size",
                                  "1,3,224,224", "-o",   (dir / file).string()};
    args.insert(args.end(), more.begin(), more.end());
    return recorder_cli(args);
  };
  // The templated ResNet-18's DOT goldens, byte for byte, at depth 3, 1, unlimited and nested.
  Run r = draw("d3.dot");
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out == "wrote " + (dir / "d3.dot").string() + ": 68 nodes, 75 edges\n");
  BOOST_TEST(read(dir / "d3.dot") == golden("models/resnet18_d3.dot"));
  BOOST_TEST(draw("d1.gv", {"--depth", "1"}).code == 0);
  BOOST_TEST(read(dir / "d1.gv") == golden("models/resnet18_d1.dot"));
  BOOST_TEST(draw("dinf.dot", {"--depth", "inf"}).code == 0);
  BOOST_TEST(read(dir / "dinf.dot") == golden("models/resnet18_dinf.dot"));
  BOOST_TEST(draw("nested.dot", {"--expand-nested"}).code == 0);
  BOOST_TEST(read(dir / "nested.dot") == golden("models/resnet18_d3_expand_nested.dot"));
  // Graphviz's SVG: one <g class="node"> per node, one per edge.
  r = draw("d3.svg");
  BOOST_TEST(r.code == 0);
  const std::string svg = read(dir / "d3.svg");
  BOOST_TEST(svg.rfind("<?xml", 0) == 0u);
  BOOST_TEST(occurrences(svg, "class=\"node\"") == 68u);
  BOOST_TEST(occurrences(svg, "class=\"edge\"") == 75u);
  r = draw("d3.png");
  BOOST_TEST(r.code == 0);
  BOOST_TEST(read(dir / "d3.png").substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  // The drawn graph as JSON: its nodes and edges, with the options it was drawn with.
  r = draw("d3.json", {"--direction", "LR"});
  BOOST_TEST(r.code == 0);
  const std::string view = read(dir / "d3.json");
  BOOST_TEST(occurrences(view, "\"index\": ") == 68u);
  BOOST_TEST(view.find("\"direction\": \"LR\"") != std::string::npos);
  // The whole recorded graph: 76 module calls, 9 functions, 69 tensors, 2 = 156 nodes.
  r = draw("all.json", {"--format", "json"});
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out == "wrote " + (dir / "all.json").string() +
                          ": the recorded graph, 156 nodes, 147 edges\n");
  r = draw("d3.mmd");
  BOOST_TEST(r.code == 0);
  BOOST_TEST(read(dir / "d3.mmd").rfind("---\ntitle: \"ResNet\"\n", 0) == 0u);
  // The interactive viewer: one page carrying all 156 recorded nodes, opening at depth 1
  // (tests/viewer opens such pages in Chromium).
  r = draw("d1.html", {"--depth", "1"});
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out == "wrote " + (dir / "d1.html").string() + ": 13 nodes, 12 edges\n");
  const std::string html = read(dir / "d1.html");
  BOOST_TEST(html.rfind("<!DOCTYPE html>", 0) == 0u);
  const std::size_t data = html.find("id=\"recorder-data\">");
  BOOST_TEST_REQUIRE(data != std::string::npos);
  const std::string embedded = html.substr(data, html.find("</script>", data) - data);
  BOOST_TEST(occurrences(embedded, "\n[") == 156u);
  BOOST_TEST(occurrences(embedded, "\"depth\":1,\"requested_depth\":1") == 1u);
  // Model Explorer's graph: the 71 nodes of the fully expanded picture, in namespaces.
  r = draw("resnet.explorer.json");
  BOOST_TEST(r.code == 0);
  const std::string explorer = read(dir / "resnet.explorer.json");
  BOOST_TEST(occurrences(explorer, "\"namespace\": ") == 71u);
  BOOST_TEST(occurrences(explorer, "\"namespace\": \"layer2/0/downsample\"") == 2u);
}

BOOST_AUTO_TEST_CASE(profile_times_every_call_and_writes_a_chrome_trace) {
  const fs::path dir = scratch("profile");
  const Run r = recorder_cli({"profile", model("resnet18_script.pt"), "--input-size", "1,3,64,64",
                              "--warmup", "1", "--runs", "3", "--depth", "1", "-o",
                              (dir / "resnet").string(), "--draw", (dir / "resnet.svg").string()});
  BOOST_TEST(r.code == 0);
  // The summary at depth 1 with time columns: the root and its 10 children, each timed.
  BOOST_TEST(occurrences(r.out, "Time             Self Time        Time %\n") == 1u);
  // The root's share is 100% (a child's share is a measurement: not asserted).
  BOOST_TEST(occurrences(r.out, "\nResNet ") == 1u);
  BOOST_TEST(r.out.find("100.00%\n", r.out.find("\nResNet ")) < r.out.find("\n\u251c"));
  BOOST_TEST(occurrences(r.out, "\n\u251c\u2500Sequential: 1-") == 4u);
  BOOST_TEST(occurrences(r.out, "%\n") == 12u);  // the header and 11 rows
  BOOST_TEST(occurrences(r.out, " (mean of 3 runs)\n") == 1u);
  BOOST_TEST(occurrences(r.out, "Timed: 3 runs after 1 warm-up; 9 ops a run\n") == 1u);
  BOOST_TEST(r.err == "recorder: wrote " + (dir / "resnet.trace.json").string() +
                          ": 3 runs, 76 module calls and 9 ops each\n" + "recorder: wrote " +
                          (dir / "resnet.svg").string() + ": module calls coloured by time\n");
  const std::string trace = read(dir / "resnet.trace.json");
  BOOST_TEST(occurrences(trace, "\"ph\": \"X\"") == 3u * (76u + 9u));
  // The root call of each run is named after the model's class, as every span by its module.
  BOOST_TEST(occurrences(trace, "\"name\": \"ResNet\", \"pid\": 1, \"tid\": 1") == 3u);
  BOOST_TEST(occurrences(trace, "<root>") == 0u);
  const std::string svg = read(dir / "resnet.svg");
  // The slowest of the 10 drawn has the darkest fill; calls within a shade of it (a loaded
  // machine's noise) may share it, so this counts at least one, not exactly one.
  BOOST_TEST(occurrences(svg, "fill=\"#7f0000\"") >= 1u);
  BOOST_TEST(recorder_cli({"profile", model("resnet18_script.pt"), "--input-size", "1,3,64,64",
                           "--runs", "0"})
                 .err == "recorder: --runs must be at least 1\n");
}

BOOST_AUTO_TEST_CASE(profile_draws_nested_modules_as_clusters_bordered_by_time) {
  const fs::path dir = scratch("profile_nested");
  const std::string out = (dir / "nested.dot").string();
  const Run r =
      recorder_cli({"profile", model("resnet18_script.pt"), "--input-size", "1,3,64,64", "--warmup",
                    "0", "--runs", "1", "--depth", "2", "--expand-nested", "--draw", out});
  BOOST_TEST(r.code == 0, r.err);
  // layer1..layer4 are clusters around their BasicBlocks, each bordered by a step of the time
  // palette and labelled with its time. Which of them is hottest is one real run's measurement,
  // so it is not asserted (issue 41): the colour a cluster gets for a given time is tested on
  // fixed times (render_golden, cluster_borders_step_by_time_over_the_slowest_cluster). The
  // hottest itself always gets the darkest step, whichever it is.
  const std::string dot = read(out);
  BOOST_TEST(occurrences(dot, "subgraph cluster_") == 4u);
  BOOST_TEST(occurrences(dot, "%)> labeljust=l style=dashed color=\"#") == 4u);
  std::size_t palette_borders = 0;
  for (const char* step : {"#fff7ec", "#fee8c8", "#fdd49e", "#fdbb84", "#fc8d59", "#ef6548",
                           "#d7301f", "#b30000", "#7f0000"})
    palette_borders += occurrences(dot, "%)> labeljust=l style=dashed color=\"" +
                                            std::string(step) + "\" penwidth=2 tooltip=");
  BOOST_TEST(palette_borders == 4u);
  BOOST_TEST(occurrences(dot, "labeljust=l style=dashed color=\"#7f0000\"") >= 1u);
  // conv1, bn1, relu, maxpool, the 8 BasicBlocks, avgpool, fc
  BOOST_TEST(occurrences(dot, "fillcolor=\"#") == 14u);
  // Each time is the last row of its node's box, never a label Graphviz floats beside the
  // nearest edge (issue 34).
  BOOST_TEST(occurrences(dot, "xlabel") == 0u);
  BOOST_TEST(occurrences(dot, "%)</TD></TR>\n") == 14u);
}

// Each extension of profile --draw gets its format, as recorder draw reads it (issue 41): the
// drawing coloured by time for .dot/.gv (and no extension), the viewer with each call's time on
// hover for .html. A Mermaid chart and the JSON graphs have no place for times: refused before
// the run, naming the extensions that do.
BOOST_AUTO_TEST_CASE(profile_draws_times_in_the_format_its_extension_names) {
  const fs::path dir = scratch("profile_formats");
  const auto profile = [&](const std::string& file) {
    return recorder_cli({"profile", model("mlp_script.pt"), "--input-size", "2,784", "--warmup",
                         "0", "--runs", "2", "--draw", (dir / file).string()});
  };
  Run r = profile("mlp.html");
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.err == "recorder: wrote " + (dir / "mlp.html").string() +
                          ": module calls with their times on hover\n");
  const std::string html = read(dir / "mlp.html");
  BOOST_TEST(html.rfind("<!DOCTYPE html>", 0) == 0u);
  BOOST_TEST(html.find("digraph") == std::string::npos);
  // The MLP and its 3 Linears, each with its time and runs among the viewer's hover facts.
  BOOST_TEST(occurrences(html, "[[\"time\",\"") == 4u);
  BOOST_TEST(occurrences(html, ",[\"runs\",\"2\"]]") == 4u);
  for (const char* file : {"mlp.gv", "mlp.dot"}) {
    r = profile(file);
    BOOST_TEST(r.code == 0, r.err);
    BOOST_TEST(read(dir / file).rfind("strict digraph \"MLP\" {", 0) == 0u, file);
  }
  r = profile("times");  // no extension: DOT, .dot added
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(read(dir / "times.dot").rfind("strict digraph \"MLP\" {", 0) == 0u);
  const std::string supported = "; use .dot, .gv, .svg, .png, .html or .htm (no extension: .dot)";
  for (const auto& [file, why] :
       {std::pair<std::string, std::string>{"mlp.mmd",
                                            ": a Mermaid chart has no place for them (recorder "
                                            "draw writes the plain .mmd)"},
        {"mlp.json", ": its graph has no place for them (recorder draw writes it without times)"},
        {"mlp.explorer.json",
         ": its graph has no place for them (recorder draw writes it without times)"},
        {"mlp.txt", ""}}) {
    BOOST_TEST_CONTEXT(file) {
      r = profile(file);
      BOOST_TEST(r.code == 2);
      BOOST_TEST(r.err == "recorder: --draw cannot draw times into '" + (dir / file).string() +
                              "'" + why + supported + "\n");
      BOOST_TEST(r.out == "");  // refused before the run: no table
      BOOST_TEST(!fs::exists(dir / file));
    }
  }
}

// Where local names repeat, a node says which one it is (issue 34): the encoder's two layers
// read `layers.0` and `layers.1` (not `0`), their norms `layers.1.norm2`; a name that occurs
// once stays as it is, torchview's look.
BOOST_AUTO_TEST_CASE(draw_names_repeated_layers_by_the_end_of_their_path) {
  const fs::path dir = scratch("draw_names");
  const std::string out = (dir / "encoder.dot").string();
  const auto draw = [&](const char* depth) {
    const Run r = recorder_cli({"draw", model("text_encoder_script.pt"), "--input-size", "2,12",
                                "--int-high", "100", "--depth", depth, "-o", out});
    BOOST_TEST(r.code == 0, r.err);
    return read(out);
  };
  const std::string d2 = draw("2");
  BOOST_TEST(occurrences(d2, ">TransformerEncoderLayer<BR/>layers.0<BR/>depth:2</TD>") == 1u);
  BOOST_TEST(occurrences(d2, ">TransformerEncoderLayer<BR/>layers.1<BR/>depth:2</TD>") == 1u);
  BOOST_TEST(occurrences(d2, ">Embedding<BR/>embedding<BR/>depth:1</TD>") == 1u);
  BOOST_TEST(occurrences(d2, ">Linear<BR/>head<BR/>depth:1</TD>") == 1u);
  const std::string d3 = draw("3");
  BOOST_TEST(occurrences(d3, "<BR/>layers.0.norm2<BR/>depth:3</TD>") == 1u);
  BOOST_TEST(occurrences(d3, "<BR/>layers.1.norm2<BR/>depth:3</TD>") == 1u);
  BOOST_TEST(occurrences(d3, "<BR/>norm2<BR/>") == 0u);
}

BOOST_AUTO_TEST_CASE(profile_on_local_ranks_times_every_rank_into_one_table_and_one_trace) {
  // 2 ranks on 127.0.0.1, 3 timed runs each: rank 0 prints the means over the 6 runs and writes
  // one Chrome trace with a process per rank (Python loads it and checks each rank's runs).
  const fs::path dir = scratch("profile_ranks");
  const Run r = recorder_cli({"profile", model("mlp_script.pt"), "--input-size", "2,784",
                              "--warmup", "1", "--runs", "3", "--local-ranks", "2", "-o",
                              (dir / "mlp").string(), "--draw", (dir / "mlp.dot").string()});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(occurrences(r.out, "%\n") == 5u);  // the header, the MLP and its 3 Linears
  BOOST_TEST(occurrences(r.out, " (mean of 6 runs)\n") == 1u);
  BOOST_TEST(
      occurrences(r.out, "Timed: 3 runs on each of 2 ranks after 1 warm-up; 2 ops a run\n") == 1u);
  BOOST_TEST(r.err == "recorder: wrote " + (dir / "mlp.trace.json").string() +
                          ": 2 ranks of 3 runs, 4 module calls and 2 ops each\n" +
                          "recorder: wrote " + (dir / "mlp.dot").string() +
                          ": module calls coloured by time (over 2 ranks)\n");
  BOOST_TEST(python_check({"chrome", (dir / "mlp.trace.json").string()}) ==
             "1 recorder: MLP forward, rank 0: 3 runs, 12 calls, 6 ops\n"
             "2 recorder: MLP forward, rank 1: 3 runs, 12 calls, 6 ops\n");
  // Each rank's root calls are named after the model's class in the merged trace too.
  const std::string merged = read(dir / "mlp.trace.json");
  BOOST_TEST(occurrences(merged, "\"name\": \"MLP\", \"pid\": 1, \"tid\": 1") == 3u);
  BOOST_TEST(occurrences(merged, "\"name\": \"MLP\", \"pid\": 2, \"tid\": 1") == 3u);
  BOOST_TEST(occurrences(merged, "<root>") == 0u);
  // The drawing colours the 3 Linears by the merged times.
  BOOST_TEST(occurrences(read(dir / "mlp.dot"), "fillcolor=\"#") == 3u);
  // One process: the same trace, one process without a rank.
  const Run one = recorder_cli({"profile", model("mlp_script.pt"), "--input-size", "2,784",
                                "--warmup", "0", "--runs", "2", "-o", (dir / "one").string()});
  BOOST_TEST(one.code == 0, one.err);
  BOOST_TEST(python_check({"chrome", (dir / "one.trace.json").string()}) ==
             "1 recorder: MLP forward: 2 runs, 8 calls, 4 ops\n");
  const Run bad = recorder_cli({"profile", model("mlp_script.pt"), "--input-size", "2,784",
                                "--local-ranks", "2", "--distributed"});
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(bad.err == "recorder: give --local-ranks or --distributed, not both\n");
}

BOOST_AUTO_TEST_CASE(profile_times_leaf_ops_and_the_backward_when_asked) {
  const Run r =
      recorder_cli({"profile", model("resnet18_script.pt"), "--input-size", "1,3,64,64", "--warmup",
                    "0", "--runs", "2", "--depth", "0", "--aten-ops", "--backward"});
  BOOST_TEST(r.code == 0);
  // TorchScript's ResNet-18 with its leaves' ops: 20 conv2d, 20 batch_norm, 17 relu, the pools,
  // linear, 8 adds, flatten; and 76 calls' backwards (the input requires grad).
  BOOST_TEST(
      occurrences(r.out, "Timed: 2 runs after 0 warm-up; 69 ops a run; 76 backward spans\n") == 1u);
}

BOOST_AUTO_TEST_CASE(draw_shows_the_ops_inside_leaves_with_aten_ops) {
  const fs::path dir = scratch("draw_ops");
  const std::string out = (dir / "mlp.dot").string();
  const Run plain =
      recorder_cli({"draw", model("mlp_script.pt"), "--input-size", "1,784", "-o", out});
  BOOST_TEST(plain.code == 0);
  BOOST_TEST(read(out) == golden("models/mlp_d3.dot"));
  const Run ops =
      recorder_cli({"draw", model("mlp_script.pt"), "--input-size", "1,784", "--aten-ops",
                    "--show-module-functions", "--depth", "inf", "-o", out});
  BOOST_TEST(ops.code == 0);
  // The leaves drawn as the ops they ran: TorchScript's linear is one op (a C++ Linear runs t, addmm).
  const std::string opened = read(out);
  BOOST_TEST(occurrences(opened, ">linear<BR/>depth:2</TD>") == 3u);
  BOOST_TEST(occurrences(opened, ">relu<BR/>depth:1</TD>") == 2u);
  BOOST_TEST(opened.find("Linear<BR/>fc1") == std::string::npos);
}

// torchview's picture by default: a subscript one `__getitem__`, nothing no input reaches; the
// aten-level picture with --aten-ops --show-unreached.
BOOST_AUTO_TEST_CASE(draw_is_torchviews_picture_unless_the_aten_level_is_asked) {
  const fs::path dir = scratch("draw_unreached");
  const std::string out = (dir / "subscripts.dot").string();
  const auto draw = [&](std::vector<std::string> more) {
    std::vector<std::string> args{
        "draw", model("subscripts_script.pt"), "--input-size", "2,5,4", "--depth", "inf", "-o",
        out};
    args.insert(args.end(), more.begin(), more.end());
    const Run r = recorder_cli(args);
    BOOST_TEST(r.code == 0, r.err);
    return read(out);
  };
  const std::string plain = draw({});
  BOOST_TEST(occurrences(plain, ">__getitem__<BR/>depth:1</TD>") == 3u);
  BOOST_TEST(plain.find(">arange<BR/>") == std::string::npos);
  BOOST_TEST(occurrences(plain, "[label=<") == 13u);
  const std::string unreached = draw({"--show-unreached"});
  BOOST_TEST(occurrences(unreached, ">__getitem__<BR/>depth:1</TD>") == 4u);  // the mask's too
  BOOST_TEST(occurrences(unreached, ">arange<BR/>depth:1</TD>") == 1u);
  BOOST_TEST(occurrences(unreached, "[label=<") == 17u);
  // The mask's buffer is drawn as what its __getitem__ reads (issue 34).
  BOOST_TEST(occurrences(unreached, ">constant-tensor<BR/>depth:1</TD><TD>(8, 8)</TD>") == 1u);
  const std::string aten = draw({"--aten-ops", "--show-unreached"});
  BOOST_TEST(aten.find("__getitem__") == std::string::npos);
  BOOST_TEST(occurrences(aten, ">slice<BR/>depth:1</TD>") == 6u);
  BOOST_TEST(occurrences(aten, ">select<BR/>depth:1</TD>") == 2u);
  BOOST_TEST(occurrences(aten, "[label=<") == 21u);
  BOOST_TEST(occurrences(aten, ">constant-tensor<BR/>depth:1</TD><TD>(8, 8)</TD>") == 1u);
}

// ---- record ---------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(record_means_over_batches_that_python_loads_and_agrees_with) {
  const fs::path dir = scratch("record_mean");
  const std::string acts = (dir / "acts.pt").string();
  const Run r = recorder_cli({"record", model("mlp_script.pt"), "--input", model("mlp_batches.pt"),
                              "--layers", "fc1,1-3", "--reduce", "mean", "-o", acts});
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out ==
             "fc1 (Linear, 1-1): 3 samples, 1 tensor\n"
             "fc3 (Linear, 1-3): 3 samples, 1 tensor\n"
             "wrote " +
                 acts + ": 2 layers, reduce::mean over 3 batches\n");
  // Not a terminal: a progress line per tenth of the batches.
  BOOST_TEST(r.err == "recorder: batch 1/3\nrecorder: batch 2/3\nrecorder: batch 3/3\n");
  BOOST_TEST(python_check({"mlp-mean", model("mlp_script.pt"), model("mlp_batches.pt"), acts}) ==
             "ok\n");
}

// AbsMax and Quantile from the command line (issue 41), saved so that torch.load reads them: the
// largest magnitudes as tensors, the quantiles as {"quantile": float64 tensor}, each equal to
// what Python computes from the model's own submodules on the same batches; over ranks too.
BOOST_AUTO_TEST_CASE(record_absmax_and_quantiles_that_python_loads_and_agrees_with) {
  const fs::path dir = scratch("record_absmax_quantile");
  const auto record = [&](const std::string& file, std::vector<std::string> more) {
    std::vector<std::string> args{
        "record", model("mlp_script.pt"), "--input", model("mlp_batches.pt"), "--layers", "fc1,1-3",
        "-o",     (dir / file).string()};
    args.insert(args.end(), more.begin(), more.end());
    const Run r = recorder_cli(args);
    BOOST_TEST(r.code == 0, r.err);
    return r.out;
  };
  const auto check = [&](const std::string& mode, const std::string& file,
                         std::vector<std::string> more = {}) {
    std::vector<std::string> args{mode, model("mlp_script.pt"), model("mlp_batches.pt"),
                                  (dir / file).string()};
    args.insert(args.end(), more.begin(), more.end());
    return python_check(args);
  };
  BOOST_TEST(record("amax.pt", {"--reduce", "absmax"})
                 .ends_with("wrote " + (dir / "amax.pt").string() +
                            ": 2 layers, reduce::abs_max over 3 batches\n"));
  BOOST_TEST(check("mlp-absmax", "amax.pt") == "ok\n");
  BOOST_TEST(record("p90.pt", {"--reduce", "quantile", "--quantile", "0.9"})
                 .ends_with("wrote " + (dir / "p90.pt").string() +
                            ": 2 layers, reduce::quantile over 3 batches\n"));
  BOOST_TEST(check("mlp-quantile", "p90.pt", {"0.9"}) == "ok\n");
  BOOST_TEST(python_check({"keys", (dir / "p90.pt").string()}) ==
             "fc1: {quantile: [2, 100]}\nfc3: {quantile: [2, 10]}\n");
  // The median by default, merged over 2 ranks: the batches' values gathered, then reduced.
  BOOST_TEST(record("median.pt", {"--reduce", "quantile", "--local-ranks", "2"})
                 .ends_with(": 2 layers, reduce::quantile over 3 batches on 2 ranks\n"));
  BOOST_TEST(check("mlp-quantile", "median.pt", {"0.5"}) == "ok\n");
  BOOST_TEST(record("amax2.pt", {"--reduce", "absmax", "--local-ranks", "2"})
                 .ends_with(": 2 layers, reduce::abs_max over 3 batches on 2 ranks\n"));
  BOOST_TEST(check("mlp-absmax", "amax2.pt") == "ok\n");
}

BOOST_AUTO_TEST_CASE(record_on_local_ranks_merges_what_every_rank_recorded) {
  // 2 ranks on 127.0.0.1: rank 0 records batches 0 and 2, rank 1 batch 1; rank 0 merges the
  // means and writes what one process would (Python recomputes them from the batches).
  const fs::path dir = scratch("record_ranks");
  const std::string acts = (dir / "acts.pt").string();
  const Run r =
      recorder_cli({"record", model("mlp_script.pt"), "--input", model("mlp_batches.pt"),
                    "--layers", "fc1,1-3", "--reduce", "mean", "--local-ranks", "2", "-o", acts});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(r.out ==
             "fc1 (Linear, 1-1): 3 samples, 1 tensor\n"
             "fc3 (Linear, 1-3): 3 samples, 1 tensor\n"
             "wrote " +
                 acts + ": 2 layers, reduce::mean over 3 batches on 2 ranks\n");
  BOOST_TEST(python_check({"mlp-mean", model("mlp_script.pt"), model("mlp_batches.pt"), acts}) ==
             "ok\n");
  // Random inputs: batch i is drawn from seed + i, so 1 rank and 3 ranks record the same.
  const std::string one = (dir / "one.pt").string(), three = (dir / "three.pt").string();
  for (const auto& [ranks, file] : {std::pair{"1", one}, std::pair{"3", three}}) {
    const Run m =
        recorder_cli({"record", model("mlp_script.pt"), "--input-size", "2,784", "--layers", "fc2",
                      "--reduce", "moments", "--batches", "7", "--local-ranks", ranks, "-o", file});
    BOOST_TEST(m.code == 0, m.err);
    BOOST_TEST(m.out.find("reduce::moments over 7 batches on " + std::string(ranks) + " rank") !=
                   std::string::npos,
               m.out);
  }
  BOOST_TEST(python_check({"same", one, three}) == "ok\n");
  BOOST_TEST(python_check({"keys", three}) ==
             "fc2: {mean: [2, 50], variance: [2, 50], count: 7}\n");
  // Bad counts are a usage error.
  const Run bad = recorder_cli({"record", model("mlp_script.pt"), "--input-size", "2,784",
                                "--layers", "fc2", "--local-ranks", "-1", "-o", one});
  BOOST_TEST(bad.code == 2);
  BOOST_TEST(bad.err == "recorder: --local-ranks takes 1 to 64, not -1\n");
}

BOOST_AUTO_TEST_CASE(record_gradients_of_the_summed_output) {
  const fs::path dir = scratch("record_grad");
  const std::string grads = (dir / "grads.pt").string();
  const Run r =
      recorder_cli({"record", model("mlp_script.pt"), "--input", model("mlp_batches.pt"),
                    "--layers", "fc1", "--what", "grad-output", "--reduce", "sum", "-o", grads});
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out ==
             "fc1 (Linear, 1-1): 3 samples, 1 tensor\n"
             "wrote " +
                 grads + ": 1 layer, reduce::sum over 3 batches\n");
  BOOST_TEST(python_check({"mlp-grad", model("mlp_script.pt"), model("mlp_batches.pt"), grads}) ==
             "ok\n");
}

BOOST_AUTO_TEST_CASE(record_token_inputs_tuple_outputs_and_histograms) {
  const fs::path dir = scratch("record_lstm");
  const std::string out = (dir / "lstm.pt").string();
  const Run r = recorder_cli({"record", model("lstm_script.pt"), "--input-size", "5,2", "--dtype",
                              "int64", "--int-high", "20", "--layers", "encoder,decoder",
                              "--reduce", "last", "-o", out});
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out ==
             "encoder (LSTM, 1-2): 1 sample, 3 tensors\n"
             "decoder (Linear, 1-3): 1 sample, 1 tensor\n"
             "wrote " +
                 out + ": 2 layers, reduce::last over 1 batch\n");
  // LSTM's (output, (h, c)) flattened to three tensors.
  BOOST_TEST(python_check({"keys", out}) ==
             "encoder:0: [5, 2, 512]\nencoder:1: [2, 2, 512]\nencoder:2: [2, 2, 512]\ndecoder: [5, "
             "2, 20]\n");
  // Every BatchNorm2d of ResNet-18, by class, as 8-bin histograms over two batches.
  const std::string hist = (dir / "bn.pt").string();
  const Run h = recorder_cli({"record", model("resnet18_script.pt"), "--input-size", "1,3,32,32",
                              "--layers", "class:BatchNorm2d", "--reduce", "histogram", "--range",
                              "-4,4", "--bins", "8", "--batches", "2", "-o", hist});
  BOOST_TEST(h.code == 0);
  const std::vector<std::string> kept = lines(python_check({"keys", hist}));
  BOOST_REQUIRE(kept.size() == 20u);
  BOOST_TEST(kept.front() == "bn1: {counts: [8], lo: -4.0, hi: 4.0, bins: 8}");
  BOOST_TEST(kept.back() == "layer4.1.bn2: {counts: [8], lo: -4.0, hi: 4.0, bins: 8}");
}

// Transformers as PyTorch users write them (tests/script/models.py), scripted by the leg's own
// PyTorch: an nn.TransformerEncoder (batch_first), an nn.MultiheadAttention block and, from
// PyTorch 2.0, a decoder calling F.scaled_dot_product_attention itself. Recorded over batches of
// token ids and profiled, like any model.
BOOST_AUTO_TEST_CASE(record_and_profile_the_transformer_models) {
  const fs::path dir = scratch("transformers");
  struct Case {
    std::string model;
    std::vector<std::string> inputs;
    std::string layers;
    std::string keys;  ///< what Python finds in the recording
  };
  std::vector<Case> cases = {
      {"text_encoder",
       {"--input-size", "2,12", "--dtype", "int64", "--int-high", "100"},
       "encoder.layers.1,head",
       "encoder.layers.1: {mean: [2, 12, 64], variance: [2, 12, 64], count: 3}\n"
       "head: {mean: [2, 12, 100], variance: [2, 12, 100], count: 3}\n"},
      {"attention_block",
       {"--input-size", "2,12,64"},
       "norm1,mlp",
       "norm1: {mean: [2, 12, 64], variance: [2, 12, 64], count: 3}\n"
       "mlp: {mean: [2, 12, 64], variance: [2, 12, 64], count: 3}\n"},
  };
  if (std::string(RECORDER_TORCH_VERSION).rfind("1.", 0) != 0)
    cases.push_back({"tiny_gpt",
                     {"--input-size", "2,12", "--dtype", "int64", "--int-high", "100"},
                     "blocks.0.attn,blocks.1.attn.proj",
                     "blocks.0.attn: {mean: [2, 12, 64], variance: [2, 12, 64], count: 3}\n"
                     "blocks.1.attn.proj: {mean: [2, 12, 64], variance: [2, 12, 64], count: 3}\n"});
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.model) {
      const std::string out = (dir / (c.model + ".pt")).string();
      std::vector<std::string> args{"record", model(c.model + "_script.pt")};
      args.insert(args.end(), c.inputs.begin(), c.inputs.end());
      args.insert(args.end(),
                  {"--layers", c.layers, "--reduce", "moments", "--batches", "3", "-o", out});
      const Run r = recorder_cli(args);
      BOOST_TEST(r.code == 0, r.err);
      BOOST_TEST(python_check({"keys", out}) == c.keys);
      args = {"profile", model(c.model + "_script.pt")};
      args.insert(args.end(), c.inputs.begin(), c.inputs.end());
      for (const char* a : {"--warmup", "1", "--runs", "2", "--depth", "2"}) args.push_back(a);
      const Run p = recorder_cli(args);
      BOOST_TEST(p.code == 0, p.err);
      BOOST_TEST(occurrences(p.out, "Timed: 2 runs after 1 warm-up; ") == 1u, p.out);
    }
  }
}

// On libtorch 1.13 a file PyTorch 2.x saved with an op 1.13 lacks is refused in one line (exit
// 2); on 2.x, a file 1.13 saved is summarised like the leg's own when both run with autograd.
BOOST_AUTO_TEST_CASE(a_file_another_pytorch_saved_is_refused_in_one_line_or_traced) {
#ifndef RECORDER_OTHER_SCRIPT_MODELS
  BOOST_FAIL("RECORDER_OTHER_PYTHON was not set at configure time (scripts/test.sh sets it)");
#else
  const std::string file =
      (fs::path(RECORDER_OTHER_SCRIPT_MODELS) / "text_encoder_script.pt").string();
  const Run r = recorder_cli({"summary", file, "--input-size", "2,12", "--dtype", "int64"});
  if (std::string(RECORDER_TORCH_VERSION).rfind("1.", 0) == 0) {
    BOOST_TEST(r.code == 2);
    BOOST_TEST(r.out == "");
    BOOST_TEST(
        r.err ==
        "recorder: '" + file +
            "' was saved by a newer PyTorch (2.1 or later) than the libtorch in "
            "use (" RECORDER_TORCH_VERSION
            "): it calls aten::scaled_dot_product_attention, which libtorch " RECORDER_TORCH_VERSION
            " does not have. Trace it with libtorch 2.5 or "
            "later (recorder supports both), or save it with PyTorch " RECORDER_TORCH_VERSION "\n");
  } else {
    BOOST_TEST(r.code == 0, r.err);
    // At depth 10, where the layers' insides show. By default each file is summarised as
    // torchinfo on the PyTorch that saved it would: 1.13's code takes the fused path under
    // no_grad (no MultiheadAttention rows); a file 2.1 or later saved runs with autograd
    // (torchinfo's hooks keep its layers off the fused path).
    const std::vector<std::string> deep{"--input-size", "2,12",    "--dtype",
                                        "int64",        "--depth", "10"};
    const auto summary = [&](const std::string& f, bool grad) {
      std::vector<std::string> args{"summary", f};
      args.insert(args.end(), deep.begin(), deep.end());
      if (grad) args.push_back("--grad");
      const Run run = recorder_cli(args);
      BOOST_TEST(run.code == 0, run.err);
      return run.out;
    };
    const std::string own = model("text_encoder_script.pt");
    BOOST_TEST(summary(file, false).find("MultiheadAttention") == std::string::npos);
    BOOST_TEST(summary(own, false).find("MultiheadAttention") != std::string::npos);
    // With autograd both take the same path: the same table, the leg's own default one.
    BOOST_TEST(summary(file, true) == summary(own, true));
    BOOST_TEST(summary(file, true) == summary(own, false));
  }
#endif
}

// ---- refusals and failures ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(what_it_cannot_act_on_gets_one_line_exit_2_and_no_file) {
  const fs::path dir = scratch("refusals");
  const std::string resnet = model("resnet18_script.pt");
  const std::string out = (dir / "out.pt").string(), svg = (dir / "out.svg").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"summary", resnet, "--input-size", "1,x"},
       "recorder: --input-size '1,x': 'x' is not a positive integer; write sizes like 1,3,224,224"},
      {{"summary", resnet},
       "recorder: give the model's inputs: --input-size 1,3,224,224 (once per input) or --input "
       "x.pt"},
      {{"summary", resnet, "--input-size", "1,3,8,8", "--input", model("x224.pt")},
       "recorder: give either --input-size or --input, not both"},
      {{"summary", resnet, "--input-size", "1,3,8,8", "--dtype", "f32"},
       "recorder: unknown --dtype 'f32' (one of float32, float, float64, double, float16, half, "
       "bfloat16, int64, "
       "long, int32, int, int16, int8, uint8, bool)"},
      {{"summary", model("nothere.pt"), "--input-size", "1,3,8,8"},
       "recorder: cannot read '" + model("nothere.pt") + "': no such file"},
      {{"summary", model("resnet18_state_dict.pt"), "--input-size", "1,3,8,8"},
       "recorder: '" + model("resnet18_state_dict.pt") +
           "' is not a TorchScript model: it holds a collections.OrderedDict of 122 tensors (a "
           "state_dict?) saved "
           "with torch.save. Export the model with torch.jit.script(model).save(path) or "
           "torch.jit.trace(model, "
           "example_inputs).save(path)."},
      {{"summary", resnet, "--input-size", "1,3,8,8", "--columns", "params"},
       "recorder: unknown column 'params' in --columns (one of input_size, output_size, "
       "num_params, "
       "params_percent, kernel_size, groups, mult_adds, trainable)"},
      {{"summary", resnet, "--input-size", "1,3,8,8", "--train", "--eval"},
       "recorder: --train excludes --eval (see recorder summary --help)"},
      {{"profile", resnet, "--input-size", "1,3,8,8", "--bogus", "x", "y"},
       "recorder: unexpected arguments --bogus x y (see recorder profile --help)"},
      {{"summary", resnet, "--input-size", "1,3,8,8", "--int-high", "5", "--dtype", "float32"},
       "recorder: --int-high applies to integer inputs, and --dtype makes none: give --dtype "
       "int64 (or leave --dtype out)"},
      {{"summary", resnet, "--input", model("x224.pt"), "--int-high", "5"},
       "recorder: --int-high applies to --input-size inputs, not to --input"},
      {{"record", resnet, "--input-size", "2,12", "--dtype", "int64", "--layers", "fc", "-o", out},
       "recorder: integer inputs are drawn from [0, --int-high): give --int-high (the vocabulary "
       "size for token ids), or they would all be 0"},
      {{"profile", resnet, "--input-size", "2,12", "--dtype", "int32"},
       "recorder: integer inputs are drawn from [0, --int-high): give --int-high (the vocabulary "
       "size for token ids), or they would all be 0"},
      {{"summary", resnet, "--input", (dir / "missing.pt").string()},
       "recorder: cannot read --input '" + (dir / "missing.pt").string() +
           "': No such file or directory"},
      {{"record", resnet, "--input-size", "1,3,32,32", "--layers", "conv2", "-o", out},
       "recorder: unknown layer 'conv2': no module has this path; modules of that name: "
       "layer1.0.conv2, layer1.1.conv2, layer2.0.conv2, layer2.1.conv2, layer3.0.conv2, "
       "layer3.1.conv2, layer4.0.conv2, layer4.1.conv2, class:Conv2d"},
      {{"draw", resnet, "--input-size", "1,3,8,8", "-o", (dir / "nowhere" / "out.svg").string()},
       "recorder: cannot write '" + (dir / "nowhere" / "out.svg").string() + "': '" +
           (dir / "nowhere").string() + "' does not exist"},
      {{"draw", resnet, "--input-size", "1,3,8,8", "-o", (dir / "out.pdf").string()},
       "recorder: cannot tell the format of '" + (dir / "out.pdf").string() +
           "' from its extension: use .dot, .svg, .png, .json, .mmd or .html, or --format"},
      {{"draw", resnet, "--input-size", "1,3,8,8", "--depth", "deep", "-o", svg},
       "recorder: --depth 'deep' is neither an integer >= 0 nor 'inf'"},
      {{"record", resnet, "--input-size", "1,3,32,32", "--layers", "layer9", "-o", out},
       "recorder: unknown layer 'layer9': no module has this path; nearest: layer1, layer2, "
       "layer3, layer4, "
       "layer1.0"},
      {{"record", resnet, "--input-size", "1,3,32,32", "--layers", "layer9,fc9,fc", "-o", out},
       "recorder: 2 unknown layers: 'layer9' (no module has this path; nearest: layer1, layer2, "
       "layer3, layer4, "
       "layer1.0) and 'fc9' (no module has this path; nearest: fc, bn1, relu, conv1, layer1)"},
      {{"record", resnet, "--input-size", "1,3,32,32", "--layers", "fc", "--reduce", "histogram",
        "-o", out},
       "recorder: --reduce histogram needs --range lo,hi (and --bins, default 100)"},
      {{"record", resnet, "--input-size", "1,3,32,32", "--layers", "fc", "--reduce", "quantile",
        "--quantile", "1.5", "-o", out},
       "recorder: --quantile 1.5 is not in [0, 1]: 0.5 is the median, 0.9 the 90th percentile"},
      {{"record", resnet, "--input-size", "1,3,32,32", "--layers", "fc", "--reduce", "median", "-o",
        out},
       "recorder: --reduce 'median' is not one of all, last, sum, mean, moments, minmax, absmax, "
       "histogram, quantile"},
      {{"record", resnet, "--input-size", "1,3,32,32", "--layers", "fc", "--what", "grad-output",
        "--no-grad", "-o", out},
       "recorder: --what grad-output and grad-input need autograd: drop --no-grad"},
      {{"record", resnet, "--input-size", "1,3,32,32", "--layers", "fc", "-o",
        (dir / "acts").string()},
       "recorder: -o '" + (dir / "acts").string() + "' needs an extension, like acts.pt"},
      {{"record", resnet, "--input", model("garbage.pt"), "--layers", "fc", "-o", out},
       "recorder: --input '" + model("garbage.pt") + "' is not a tensor saved with torch.save"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.args[0] << " " << c.args.back()) {
      const Run r = recorder_cli(c.args);
      BOOST_TEST(r.code == 2);
      BOOST_TEST(r.err == c.message + "\n");
      BOOST_TEST(r.out == "");
    }
  }
  BOOST_TEST(fs::is_empty(dir), "a refused command wrote a file");
}

BOOST_AUTO_TEST_CASE(the_command_line_speaks_its_own_syntax_and_refuses_what_it_cannot_write) {
  const fs::path dir = scratch("syntax");
  const std::string resnet = model("resnet18_script.pt");
  // The library's by_class("Mlp") is the command line's class:Mlp.
  const Run c = recorder_cli({"record", resnet, "--input-size", "1,3,32,32", "--layers",
                              "class:Mlp,index:99", "-o", (dir / "x.pt").string()});
  BOOST_TEST(c.code == 2);
  BOOST_TEST(c.err.rfind("recorder: 2 unknown layers: 'class:Mlp' (no module of this class was "
                         "called; classes present: ",
                         0) == 0u,
             c.err);
  BOOST_TEST(occurrences(c.err, "by_class") == 0u, c.err);
  BOOST_TEST(occurrences(c.err, "by_index") == 0u, c.err);
  BOOST_TEST(occurrences(c.err, "'index:99'") == 1u, c.err);
  // A folder access() allows but no file can be made in (root in /proc): exit 2 before the
  // model runs, as for any output it cannot write.
  const Run p = recorder_cli({"draw", resnet, "--input-size", "1,3,8,8", "-o", "/proc/x.svg"});
  BOOST_TEST(p.code == 2);
  BOOST_TEST(p.err.rfind("recorder: cannot write '/proc/x.svg': ", 0) == 0u, p.err);
  BOOST_TEST(lines(p.err).size() == 1u);
}

BOOST_AUTO_TEST_CASE(profile_takes_the_tables_options) {
  const Run r =
      recorder_cli({"profile", model("resnet18_script.pt"), "--input-size", "1,3,32,32", "--warmup",
                    "0", "--runs", "1", "--depth", "1", "--columns", "input_size,output_size",
                    "--row-settings", "var_names", "--col-width", "20"});
  BOOST_TEST(r.code == 0, r.err);
  BOOST_TEST(occurrences(r.out,
                         "Layer (type (var_name))                  Input Shape          "
                         "Output Shape         Time                 Self Time            "
                         "Time %\n") == 1u,
             r.out);
  BOOST_TEST(occurrences(r.out,
                         "\n\u251c\u2500Conv2d (conv1)                         [1, 3, 32, "
                         "32]       [1, 64, 16, 16]  ") == 1u,
             r.out);
  BOOST_TEST(occurrences(r.out, "Param #") == 0u);  // the chosen columns, then the times
}

BOOST_AUTO_TEST_CASE(int_high_alone_makes_token_ids_and_a_failing_batch_is_named) {
  const fs::path dir = scratch("tokens");
  // --int-high without --dtype: int64 token ids below it (the model embeds 100 ids).
  const Run ok =
      recorder_cli({"record", model("text_encoder_script.pt"), "--input-size", "2,12", "--int-high",
                    "100", "--layers", "head", "--batches", "2", "-o", (dir / "ok.pt").string()});
  BOOST_TEST(ok.code == 0, ok.err);
  // Ids past the table: the batch that failed is named, and nothing is written.
  const std::string out = (dir / "bad.pt").string();
  const Run bad =
      recorder_cli({"record", model("text_encoder_script.pt"), "--input-size", "2,12", "--int-high",
                    "1000000", "--layers", "head", "--batches", "3", "-o", out});
  BOOST_TEST(bad.code == 1);
  const std::vector<std::string> err = lines(bad.err);
  BOOST_REQUIRE(err.size() >= 3u);
  BOOST_TEST(err[1] == "recorder: that was batch 1 of 3; nothing was written");
  // libtorch says "index out of range in self"; the error names the index and the table.
  BOOST_TEST(err[0].starts_with("recorder: op 'embedding' failed in module 'embedding' "
                                "(Embedding): index out of range in self (index "),
             err[0]);
  BOOST_TEST(err[0].ends_with(" given to an Embedding of 100 rows: ids must lie in [0, 100))"),
             err[0]);
  BOOST_TEST(err.back() ==
             "recorder: the model failed; standard output has the summary of what ran before "
             "the failure");
  BOOST_TEST(!fs::exists(out));
}

BOOST_AUTO_TEST_CASE(a_model_that_fails_gives_exit_1_the_failing_layer_and_the_partial_summary) {
  const fs::path dir = scratch("failure");
  const Run r = recorder_cli({"summary", model("resnet18_script.pt"), "--input-size", "1,4,32,32"});
  BOOST_TEST(r.code == 1);
  BOOST_TEST(lines(r.err) ==
             (std::vector<std::string>{
                 "recorder: op 'conv2d' failed in module 'conv1' (Conv2d): Given groups=1, weight "
                 "of size [64, 3, 7, "
                 "7], expected input[1, 4, 32, 32] to have 3 channels, but got 4 channels instead",
                 "recorder: the model failed; standard output has the summary of what ran "
                 "before the failure"}));
  const std::vector<std::string> table = lines(r.out);
  BOOST_REQUIRE(table.size() > 5u);
  // The root shows `--`, as it does when the run completes, not the parameters of what never
  // ran (issue 34).
  BOOST_TEST(table[3] == "ResNet (failed)                          --                        --");
  BOOST_TEST(table[4] ==
             "├─Conv2d: 1-1 (failed)                   --                        9,408");
  // draw still writes the graph of what ran, the failed calls marked.
  const std::string dot = (dir / "failed.dot").string();
  const Run d =
      recorder_cli({"draw", model("resnet18_script.pt"), "--input-size", "1,4,32,32", "-o", dot});
  BOOST_TEST(d.code == 1);
  BOOST_TEST(lines(d.err).at(1) ==
             "recorder: wrote the graph of what ran before the failure to " + dot);
  BOOST_TEST(occurrences(read(dot), "Conv2d<BR/>conv1<BR/>depth:1<BR/>failed</TD>") == 1u);
  // Over an existing file, the partial graph goes beside it and the user's file is kept.
  std::ofstream(dir / "mine.dot") << "my picture";
  const Run k = recorder_cli({"draw", model("resnet18_script.pt"), "--input-size", "1,4,32,32",
                              "-o", (dir / "mine.dot").string()});
  BOOST_TEST(k.code == 1);
  BOOST_TEST(lines(k.err).at(1) == "recorder: wrote the graph of what ran before the failure to " +
                                       (dir / "mine.partial.dot").string() + " (" +
                                       (dir / "mine.dot").string() + " is kept)");
  BOOST_TEST(read(dir / "mine.dot") == "my picture");
  BOOST_TEST(occurrences(read(dir / "mine.partial.dot"), "failed</TD>") >= 1u);
}
