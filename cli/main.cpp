/// `recorder`: look inside a TorchScript model from a shell — its torchinfo table, its picture,
/// the activations and gradients of chosen layers, its times — without writing C++.
///
///   recorder summary model.pt --input-size 1,3,224,224
///   recorder draw model.pt --input-size 1,3,224,224 --depth 3 -o model.svg
///   recorder record model.pt --input x.pt --layers layer4,fc --reduce mean --batches 100 -o acts.pt
///   recorder record model.pt ... --local-ranks 4 -o acts.pt   (4 ranks on 127.0.0.1, merged)
///   recorder profile model.pt --input-size 1,3,224,224 --runs 20 -o model
///
/// Exit codes: 0 done; 1 the model failed while traced (the partial summary is printed) or
/// another error; 2 a command line or input it cannot act on (one line on stderr, no file
/// written).
///
/// One file per subcommand, each with its arguments, their options and its body (summary.hpp,
/// draw.hpp, record.hpp, profile.hpp); what they share in common.hpp; ranks in ranks.hpp.
/// main.cpp is the one translation unit: it makes the command line and turns errors into exit
/// codes.

#include "draw.hpp"
#include "profile.hpp"
#include "record.hpp"
#include "summary.hpp"

#include <recorder/config.hpp>
#include <recorder/torch_version.hpp>

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace cli = recorder::cli;

int main(int argc, char** argv) {
  // A binary on another libtorch than its own can hang or crash anywhere: refuse before anything.
  if (const std::string& mismatch = recorder::torch_mismatch(); !mismatch.empty()) {
    std::cerr << mismatch << "\n";
    return 2;
  }
  CLI::App app{"recorder " + std::string(recorder::version) +
               ": trace a TorchScript model as it runs, and show its layers (summary), draw it "
               "(draw) or record "
               "the activations and gradients of chosen layers (record). Exit codes: 0 done, 1 the "
               "model failed "
               "(the partial summary is printed), 2 a command line or input it cannot act on."};
  app.name("recorder");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(recorder::version) + " (libtorch " +
                                        recorder::torch_version() + ")");

  const std::vector<std::string> command_line(argv, argv + argc);
  cli::SummaryArgs summary;
  CLI::App* sub_summary = cli::add_summary(app, summary);
  cli::DrawArgs draw;
  CLI::App* sub_draw = cli::add_draw(app, draw);
  cli::RecordArgs record;
  record.ranks.command_line = command_line;
  CLI::App* sub_record = cli::add_record(app, record);
  cli::ProfileArgs profile;
  profile.ranks.command_line = command_line;
  CLI::App* sub_profile = cli::add_profile(app, profile);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << cli::usage_error(app, e) << "\n";
    return 2;
  }

  try {
    if (*sub_summary) return cli::run_summary(summary);
    if (*sub_draw) return cli::run_draw(draw);
    if (*sub_record) return cli::run_record(record);
    if (*sub_profile) return cli::run_profile(profile);
  } catch (const cli::UsageError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const recorder::TorchMismatch& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const recorder::ModelFileError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const recorder::UnknownLayer& e) {
    std::cerr << e.message(cli::cli_spelling) << "\n";
    return 2;
  } catch (const recorder::FileError& e) {  // an output it cannot write
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const recorder::AmbiguousLayer& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const cli::Reported& r) {
    return cli::partial_summary(r.error);
  } catch (const recorder::TraceError& e) {
    std::cerr << cli::first_line(e.what()) << "\n";
    return cli::partial_summary(e);
  } catch (const std::exception& e) {
    std::cerr << cli::first_line(e.what()) << "\n";
    return 1;
  }
  return 1;
}
