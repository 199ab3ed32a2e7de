// The command line's option values (cli/options.hpp), torch-free: what each accepts, what it
// gives, and the one-line error for what it refuses.
#define BOOST_TEST_MODULE cli_options
#include <boost/test/unit_test.hpp>

#include "options.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace cli = recorder::cli;
using recorder::SummaryColumn;
using recorder::SummaryRowSetting;

namespace {

/// The message of the `UsageError` `f` throws ("<none>" when it throws none).
std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const cli::UsageError& e) {
    return e.what();
  }
  return "<none>";
}

std::vector<std::string> spellings(const std::vector<recorder::LayerAddress>& as) {
  std::vector<std::string> out;
  for (const auto& a : as) out.push_back(recorder::to_string(a));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(lists_split_on_commas_and_drop_blanks) {
  BOOST_TEST(cli::split("a, b,,c ") == (std::vector<std::string>{"a", "b", "c"}));
  BOOST_TEST(cli::split("").empty());
  BOOST_TEST(cli::split(" , ").empty());
}

BOOST_AUTO_TEST_CASE(input_sizes_are_positive_integers) {
  BOOST_TEST(cli::parse_sizes("1,3,224,224") == (std::vector<std::int64_t>{1, 3, 224, 224}));
  BOOST_TEST(cli::parse_sizes("10") == (std::vector<std::int64_t>{10}));
  BOOST_TEST(
      refusal([] { cli::parse_sizes("1,x"); }) ==
      "recorder: --input-size '1,x': 'x' is not a positive integer; write sizes like 1,3,224,224");
  BOOST_TEST(
      refusal([] { cli::parse_sizes("1,0"); }) ==
      "recorder: --input-size '1,0': '0' is not a positive integer; write sizes like 1,3,224,224");
  BOOST_TEST(refusal([] { cli::parse_sizes("1,-3"); }) ==
             "recorder: --input-size '1,-3': '-3' is not a positive integer; write sizes like "
             "1,3,224,224");
  BOOST_TEST(refusal([] { cli::parse_sizes("2.5"); }) ==
             "recorder: --input-size '2.5': '2.5' is not a positive integer; write sizes like "
             "1,3,224,224");
  BOOST_TEST(refusal([] { cli::parse_sizes(","); }) ==
             "recorder: --input-size ',' is empty; write sizes like 1,3,224,224");
}

BOOST_AUTO_TEST_CASE(dtypes_are_spelled_as_in_python) {
  BOOST_TEST(cli::parse_dtype("int64") == "int64");
  BOOST_TEST(cli::parse_dtype("long") == "long");
  BOOST_TEST(cli::is_integer_dtype("int64"));
  BOOST_TEST(cli::is_integer_dtype("bool"));
  BOOST_TEST(!cli::is_integer_dtype("float32"));
  BOOST_TEST(!cli::is_integer_dtype("bfloat16"));
  BOOST_TEST(refusal([] { cli::parse_dtype("torch.int64"); }) ==
             "recorder: unknown --dtype 'torch.int64' (one of float32, float, float64, double, "
             "float16, half, "
             "bfloat16, int64, long, int32, int, int16, int8, uint8, bool)");
}

BOOST_AUTO_TEST_CASE(summary_columns_and_row_settings_are_torchinfos_names) {
  BOOST_TEST((cli::parse_columns("input_size,output_size,num_params,mult_adds") ==
              std::vector<SummaryColumn>{SummaryColumn::input_size, SummaryColumn::output_size,
                                         SummaryColumn::num_params, SummaryColumn::mult_adds}));
  BOOST_TEST(
      refusal([] { cli::parse_columns("params"); }) ==
      "recorder: unknown column 'params' in --columns (one of input_size, output_size, num_params, "
      "params_percent, kernel_size, groups, mult_adds, trainable)");
  BOOST_TEST(refusal([] { cli::parse_columns(""); }) == "recorder: --columns is empty");
  const cli::RowSettings r = cli::parse_row_settings("var_names,ascii_only,depth");
  BOOST_TEST((r.rows == std::vector<SummaryRowSetting>{SummaryRowSetting::var_names,
                                                       SummaryRowSetting::depth}));
  BOOST_TEST(r.ascii_only);
  const cli::RowSettings ascii = cli::parse_row_settings("ascii_only");
  BOOST_TEST(ascii.rows.empty());
  BOOST_TEST(ascii.ascii_only);
  BOOST_TEST(refusal([] { cli::parse_row_settings("depth,names"); }) ==
             "recorder: unknown row setting 'names' in --row-settings (one of depth, var_names, "
             "ascii_only)");
}

BOOST_AUTO_TEST_CASE(depth_is_an_integer_or_inf_and_direction_one_of_four) {
  BOOST_TEST(cli::parse_depth("0").value() == 0);
  BOOST_TEST(cli::parse_depth("3").value() == 3);
  BOOST_TEST(!cli::parse_depth("inf").has_value());
  BOOST_TEST(!cli::parse_depth("none").has_value());
  BOOST_TEST(refusal([] { cli::parse_depth("-1"); }) ==
             "recorder: --depth '-1' is neither an integer >= 0 nor 'inf'");
  BOOST_TEST(refusal([] { cli::parse_depth("3x"); }) ==
             "recorder: --depth '3x' is neither an integer >= 0 nor 'inf'");
  BOOST_TEST((cli::parse_direction("LR") == recorder::Direction::LR));
  BOOST_TEST((cli::parse_direction("RL") == recorder::Direction::RL));
  BOOST_TEST(refusal([] { cli::parse_direction("lr"); }) ==
             "recorder: --direction 'lr' is not one of TB, LR, BT, RL");
}

BOOST_AUTO_TEST_CASE(the_format_comes_from_the_extension_unless_named) {
  using F = cli::Format;
  BOOST_TEST((cli::parse_format("out/m.dot") == F::dot));
  BOOST_TEST((cli::parse_format("m.gv") == F::dot));
  BOOST_TEST((cli::parse_format("m.svg") == F::svg));
  BOOST_TEST((cli::parse_format("m.png") == F::png));
  BOOST_TEST((cli::parse_format("m.json") == F::json_view));
  BOOST_TEST((cli::parse_format("m.mmd") == F::mermaid));
  BOOST_TEST((cli::parse_format("m.json", "json") == F::json));
  BOOST_TEST((cli::parse_format("m.txt", "dot") == F::dot));
  BOOST_TEST((cli::parse_format("m", "json-view") == F::json_view));
  BOOST_TEST((cli::parse_format("out/m.html") == F::html));
  BOOST_TEST((cli::parse_format("m.htm") == F::html));
  BOOST_TEST((cli::parse_format("m.explorer.json") == F::model_explorer));
  BOOST_TEST((cli::parse_format(".explorer.json") == F::json_view));  // a hidden file's name
  BOOST_TEST((cli::parse_format("m.json", "model-explorer") == F::model_explorer));
  BOOST_TEST((cli::parse_format("m", "html") == F::html));
  BOOST_TEST(refusal([] { cli::parse_format("m.pdf"); }) ==
             "recorder: cannot tell the format of 'm.pdf' from its extension: use .dot, .svg, "
             ".png, .json, .mmd or .html, or --format");
  BOOST_TEST(refusal([] { cli::parse_format("m.svg", "pdf"); }) ==
             "recorder: --format 'pdf' is not one of dot, svg, png, json, json-view, mermaid, "
             "html, model-explorer");
}

// draw and profile --draw ask the same function what an extension names.
BOOST_AUTO_TEST_CASE(one_function_tells_the_format_of_an_extension) {
  using F = cli::Format;
  BOOST_TEST((cli::format_of("t.svg") == F::svg));
  BOOST_TEST((cli::format_of("t.png") == F::png));
  BOOST_TEST((cli::format_of("t.explorer.json") == F::model_explorer));
  BOOST_TEST(!cli::format_of("t.pdf").has_value());
  BOOST_TEST(!cli::format_of("t").has_value());
}

// profile --draw: each extension gets the format format_of names, when that format can carry
// times; the others are refused, naming those that can (issue 41).
BOOST_AUTO_TEST_CASE(profile_draws_times_in_the_formats_that_carry_them) {
  using F = cli::Format;
  BOOST_TEST((cli::parse_time_format("t.dot") == F::dot));
  BOOST_TEST((cli::parse_time_format("t.gv") == F::dot));
  BOOST_TEST((cli::parse_time_format("t") == F::dot));  // .dot is added
  BOOST_TEST((cli::parse_time_format("t.svg") == F::svg));
  BOOST_TEST((cli::parse_time_format("t.png") == F::png));
  BOOST_TEST((cli::parse_time_format("t.html") == F::html));
  BOOST_TEST((cli::parse_time_format("t.htm") == F::html));
  const std::string supported = "; use .dot, .gv, .svg, .png, .html or .htm (no extension: .dot)";
  BOOST_TEST(refusal([] { cli::parse_time_format("t.mmd"); }) ==
             "recorder: --draw cannot draw times into 't.mmd': a Mermaid chart has no place for "
             "them (recorder draw writes the plain .mmd)" +
                 supported);
  for (const char* json : {"t.json", "t.explorer.json"})
    BOOST_TEST(refusal([&] { cli::parse_time_format(json); }) ==
               "recorder: --draw cannot draw times into '" + std::string(json) +
                   "': its graph has no place for them (recorder draw writes it without times)" +
                   supported);
  BOOST_TEST(refusal([] { cli::parse_time_format("t.pdf"); }) ==
             "recorder: --draw cannot draw times into 't.pdf'" + supported);
}

BOOST_AUTO_TEST_CASE(layers_take_every_spelling_of_a_layer_address) {
  BOOST_TEST(spellings(cli::parse_layers("layer4,fc, 3-18,layer1.0.relu#1")) ==
             (std::vector<std::string>{"layer4", "fc", "3-18", "layer1.0.relu#1"}));
  BOOST_TEST(spellings(cli::parse_layers("class:Conv2d,index:5")) ==
             (std::vector<std::string>{"by_class(\"Conv2d\")", "by_index(5)"}));
  BOOST_TEST(spellings(cli::parse_layers("all")) ==
             (std::vector<std::string>{"where(all layers)"}));
  BOOST_TEST(refusal([] { cli::parse_layers("index:x"); }) ==
             "recorder: --layers 'index:x': index:N needs a non-negative integer");
  BOOST_TEST(refusal([] { cli::parse_layers(" , "); }) ==
             "recorder: --layers is empty; name layers like layer4,fc or 3-18, class:Conv2d, "
             "index:5, all");
}

BOOST_AUTO_TEST_CASE(what_reduce_and_range_of_record) {
  BOOST_TEST((cli::parse_what("grad-output") == cli::Record::grad_output));
  BOOST_TEST((cli::parse_what("pre") == cli::Record::pre));
  BOOST_TEST(
      refusal([] { cli::parse_what("outputs"); }) ==
      "recorder: --what 'outputs' is not one of output, input, pre, grad-output, grad-input");
  BOOST_TEST((cli::parse_reduce("moments") == cli::Reduce::moments));
  BOOST_TEST((cli::parse_reduce("histogram") == cli::Reduce::histogram));
  BOOST_TEST((cli::parse_reduce("absmax") == cli::Reduce::absmax));
  BOOST_TEST((cli::parse_reduce("quantile") == cli::Reduce::quantile));
  BOOST_TEST(refusal([] { cli::parse_reduce("median"); }) ==
             "recorder: --reduce 'median' is not one of all, last, sum, mean, moments, minmax, "
             "absmax, histogram, quantile");
  BOOST_TEST(cli::parse_quantile(0.0) == 0.0);
  BOOST_TEST(cli::parse_quantile(0.9) == 0.9);
  BOOST_TEST(cli::parse_quantile(1.0) == 1.0);
  BOOST_TEST(refusal([] { cli::parse_quantile(90); }) ==
             "recorder: --quantile 90 is not in [0, 1]: 0.5 is the median, 0.9 the 90th "
             "percentile");
  BOOST_TEST(refusal([] { cli::parse_quantile(-0.5); }) != "<none>");
  BOOST_TEST(refusal([] { cli::parse_quantile(std::nan("")); }) != "<none>");
  BOOST_TEST((cli::parse_range("-4,4.5") == std::pair<double, double>{-4.0, 4.5}));
  BOOST_TEST(refusal([] { cli::parse_range("4"); }) ==
             "recorder: --range '4' needs two numbers, like -4,4");
  BOOST_TEST(refusal([] { cli::parse_range("1,a"); }) ==
             "recorder: --range '1,a': 'a' is not a number");
  BOOST_TEST(refusal([] { cli::parse_range("1,1e"); }) ==
             "recorder: --range '1,1e': '1e' is not a number");
  BOOST_TEST(refusal([] { cli::parse_range("2,1"); }) == "recorder: --range '2,1' needs lo < hi");
}

BOOST_AUTO_TEST_CASE(outputs_are_checked_writable_before_the_run) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "recorder_cli_options_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "sub");
  cli::check_writable(dir / "out.svg");  // a new file in a writable folder
  std::ofstream(dir / "there.svg") << "x";
  cli::check_writable(dir / "there.svg");  // an existing, writable file
  const std::string missing = (dir / "nowhere" / "out.svg").string();
  BOOST_TEST(refusal([&] { cli::check_writable(missing); }) ==
             "recorder: cannot write '" + missing + "': '" + (dir / "nowhere").string() +
                 "' does not exist");
  const std::string folder = (dir / "sub").string();
  BOOST_TEST(refusal([&] { cli::check_writable(folder); }) ==
             "recorder: cannot write '" + folder + "': it is a directory");
  BOOST_TEST(refusal([] { cli::check_writable("/dev/null/x.pt"); }) ==
             "recorder: cannot write '/dev/null/x.pt': '/dev/null' is not a folder");
  BOOST_TEST(refusal([] {
               cli::check_writable("/proc/x.svg");
             }).rfind("recorder: cannot write '/proc/x.svg': ", 0) == 0u);
  // The check leaves nothing behind.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  BOOST_TEST(files == 1u);  // there.svg
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(library_addresses_are_spelled_as_layers_writes_them) {
  BOOST_TEST(cli::cli_spelling("by_class(\"Conv2d\")") == "class:Conv2d");
  BOOST_TEST(cli::cli_spelling("by_index(5)") == "index:5");
  BOOST_TEST(cli::cli_spelling("layer1.0.conv1") == "layer1.0.conv1");
  BOOST_TEST(cli::cli_spelling("3-18") == "3-18");
  BOOST_TEST(cli::cli_spelling("by_class(") == "by_class(");
  // Every spelling reads back as the address it stands for.
  for (const auto& a : {recorder::by_class("Mlp"), recorder::by_index(7)})
    BOOST_TEST(
        recorder::to_string(cli::parse_layers(cli::cli_spelling(recorder::to_string(a))).at(0)) ==
        recorder::to_string(a));
}
