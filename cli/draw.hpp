#pragma once
/// `recorder draw`: torchview's pictures of the model, in the format its output's extension (or
/// --format) names.

#include "common.hpp"

#include <recorder/render/html.hpp>
#include <recorder/render/model_explorer.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace recorder::cli {

// ---- draw -----------------------------------------------------------------------------------

struct DrawArgs {
  Common common;
  std::string depth = "3";
  bool expand_nested = false;
  bool roll = false;
  bool inner_tensors = false;
  bool module_functions = false;
  std::string direction = "TB";
  bool no_shapes = false;
  bool show_params = false;
  bool not_strict = false;
  bool unreached = false;
  std::string graph_name;
  std::string format;
  double dot_timeout = -1;
  std::string out;
};

inline int run_draw(const DrawArgs& a) {
  const std::filesystem::path out = a.out;
  const cli::Format format = cli::parse_format(out, a.format);
  const recorder::RenderOptions o{.depth = cli::parse_depth(a.depth),
                                  .hide_inner_tensors = !a.inner_tensors,
                                  .show_shapes = !a.no_shapes,
                                  .direction = cli::parse_direction(a.direction),
                                  .graph_name = a.graph_name,
                                  .expand_nested = a.expand_nested,
                                  .hide_module_functions = !a.module_functions,
                                  .roll = a.roll,
                                  .strict = !a.not_strict,
                                  .show_params = a.show_params,
                                  .hide_unreached = !a.unreached};
  cli::check_writable(out);
  std::optional<std::chrono::milliseconds> timeout;
  if (a.dot_timeout >= 0)
    timeout = std::chrono::milliseconds{static_cast<std::int64_t>(a.dot_timeout * 1000 + 0.5)};
  const auto render = [&](const recorder::Trace& t,
                          const std::filesystem::path& out) -> std::filesystem::path {
    switch (format) {
      case cli::Format::dot:
        return recorder::render_to_file<recorder::backend::Dot>(t, o, out);
      case cli::Format::svg:
        return recorder::render_to_file(t, o, out, recorder::backend::Svg{.timeout = timeout});
      case cli::Format::png:
        return recorder::render_to_file(t, o, out, recorder::backend::Png{.timeout = timeout});
      case cli::Format::json:
        return recorder::render_to_file<recorder::backend::Json>(t, o, out);
      case cli::Format::json_view:
        return recorder::render_to_file<recorder::backend::JsonView>(t, o, out);
      case cli::Format::mermaid:
        return recorder::render_to_file<recorder::backend::Mermaid>(t, o, out);
      case cli::Format::html:
        return recorder::render_to_file<recorder::backend::Html>(t, o, out);
      case cli::Format::model_explorer:
        return recorder::render_to_file<recorder::backend::ModelExplorer>(t, o, out);
    }
    return out;
  };
  std::optional<recorder::Trace> traced;
  try {
    traced.emplace(trace_once(a.common));
  } catch (const recorder::TraceError& e) {
    // What ran before the failure is drawn, the failed calls marked; main reports the failure.
    if (e.partial_trace()) {
      // Never over a file the user has: beside it, as <name>.partial.<ext>.
      std::filesystem::path target = out;
      if (std::filesystem::exists(out))
        target.replace_filename(out.stem().string() + ".partial" + out.extension().string());
      const std::filesystem::path partial = render(*e.partial_trace(), target);
      std::cerr << first_line(e.what()) << "\n"
                << "recorder: wrote the graph of what ran before the failure to "
                << partial.string() << (target == out ? "" : " (" + out.string() + " is kept)")
                << "\n";
      throw Reported(e);
    }
    throw;
  }
  const recorder::Trace& t = *traced;
  const std::filesystem::path written = render(t, out);
  if (format == cli::Format::json) {
    std::cout << "wrote " << written.string() << ": the recorded graph, " << t.graph.size()
              << " nodes, " << t.graph.edge_count() << " edges\n";
  } else {
    const auto vg = recorder::visible_graph(t.graph, o);
    std::cout << "wrote " << written.string() << ": " << vg.nodes.size() << " nodes, "
              << vg.edges.size() << " edges\n";
  }
  return 0;
}

/// `recorder draw` and its options.
inline CLI::App* add_draw(CLI::App& app, DrawArgs& a) {
  CLI::App* sub = app.add_subcommand(
      "draw",
      "Draw the model's graph (torchview's pictures) into a file whose extension names the format");
  sub->footer(
      "A module's node shows its class and its registered name (fc1); where that name repeats "
      "(four blocks, each with an ln1), the shortest ending of its path that is its alone "
      "(blocks.0.ln1), and never a bare list index (blocks.0, not 0).");
  add_common(*sub, a.common);
  sub->add_option("-o,--output", a.out,
                  "The file to write: .dot, .svg, .png (Graphviz), .json (the drawn graph), .mmd "
                  "(Mermaid), "
                  ".html (the interactive viewer), .explorer.json (Model Explorer's graph)")
      ->required();
  sub->add_option("--format", a.format,
                  "dot, svg, png, json (the whole recorded graph), json-view, mermaid, html, "
                  "model-explorer: overrides the extension");
  sub->add_option("--depth", a.depth,
                  "Modules deeper are not drawn: an integer, or inf (default 3)");
  sub->add_flag("--expand-nested", a.expand_nested,
                "Draw composite modules as clusters around their contents");
  sub->add_flag("--roll", a.roll, "Draw repeated calls of a module once");
  sub->add_flag("--show-inner-tensors", a.inner_tensors,
                "Draw every intermediate tensor (torchview's hide_inner_tensors=False)");
  sub->add_flag("--show-module-functions", a.module_functions,
                "Draw the ops inside leaf modules (needs --aten-ops; torchview's "
                "hide_module_functions=False)");
  sub->add_option("--direction", a.direction, "TB, LR, BT or RL (default TB)");
  sub->add_flag("--no-shapes", a.no_shapes, "Leave the input and output shapes off the nodes");
  sub->add_flag("--show-params", a.show_params, "Show parameter counts on module nodes");
  sub->add_flag("--show-unreached", a.unreached,
                "Draw the ops no model input reaches too (torch.arange for positions, a mask "
                "sliced from a buffer), with the buffers and parameters they read as their "
                "inputs: torchview, tracing from the inputs, never sees them, so by default "
                "they are not drawn. With --aten-ops: the aten-level picture");
  sub->add_flag("--not-strict", a.not_strict, "Draw parallel edges once per tensor, not merged");
  sub->add_option("--graph-name", a.graph_name, "The graph's name (default: the model's class)");
  sub->add_option(
         "--dot-timeout", a.dot_timeout,
         "Seconds Graphviz's dot may run for .svg/.png before sfdp lays the graph out instead "
         "(default: $RECORDER_DOT_TIMEOUT, else 60; 0: no limit)")
      ->type_name("SECONDS")
      ->check(CLI::NonNegativeNumber);
  return sub;
}

}  // namespace recorder::cli
