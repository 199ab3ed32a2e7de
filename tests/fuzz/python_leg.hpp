#pragma once
/// What the fuzzer's Python legs share (fuzz_script: TorchScript, fuzz_exported: torch.export):
/// their command line, the loop that writes each seed's model as Python (python.hpp), runs a
/// Python driver on a batch of them in one process and checks each seed's result, and the
/// module calls as the accounts spell them with the Python classes `FuzzNet_<k>` as `FuzzNet`.

#include "accounts.hpp"
#include "args.hpp"
#include "python.hpp"
#include "spec.hpp"

#include <recorder/recorder.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void print_indented(const std::string& text) {
  for (std::size_t b = 0, e; b < text.size(); b = e + 1) {
    e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    std::cout << "    " << text.substr(b, e - b) << '\n';
  }
}

/// "FuzzNet_12" -> "FuzzNet": each net of the Python model is a class of its own.
inline std::string net_class(const std::string& name) {
  const std::string_view prefix = "FuzzNet_";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return name;
  for (std::size_t i = prefix.size(); i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return "FuzzNet";
}

/// The recorded module calls as `ExpectedCalls` spells them ("depth path Class #call"), the
/// Python nets' classes as `FuzzNet`.
inline std::vector<std::string> python_calls(const recorder::Graph& g) {
  return recorded_calls(g, &net_class);
}

/// Adds the classes of the calls of `g` besides the nets' to `leaves` (what the seeds reached).
inline void add_leaves(const recorder::Graph& g, std::set<std::string>& leaves) {
  for (recorder::NodeId c : recorder::views::module_calls(g))
    if (net_class(g.module_of(c).class_name) != "FuzzNet") leaves.insert(g.module_of(c).class_name);
}

/// "classes called besides the nets: 2 (Linear ReLU)".
inline std::string leaves_line(const std::set<std::string>& leaves) {
  std::string out = "classes called besides the nets: " + std::to_string(leaves.size()) + " (";
  for (const auto& name : leaves) out += (name == *leaves.begin() ? "" : " ") + name;
  return out + ")";
}

/// Every module call, "path#call", in call order.
inline std::vector<std::string> call_list(const recorder::Graph& g) {
  std::vector<std::string> out;
  for (recorder::NodeId c : recorder::views::module_calls(g))
    out.push_back(g.module_of(c).path + '#' + std::to_string(g.call(c).call_index));
  return out;
}

/// A leg's Python driver, run as `python driver.py <folder> <seeds...>`: for each seed it loads
/// the model module `seed_<s>.py` of the folder (registered in `sys.modules`: TorchScript reads
/// the classes' source through it), seeds torch's generator with the seed and makes the model
/// (`model`, in eval mode), then runs `body` (statements, one a line, that may use `model`,
/// `module`, `seed`, `base`: the folder's `seed_<s>`); when anything fails, it writes the Python
/// traceback to `seed_<s>.err`. One thread; Python's warnings are not shown.
inline std::string python_driver(std::string_view body) {
  std::string out = R"(import importlib.util, os, sys, traceback, warnings
import torch
warnings.filterwarnings("ignore")
torch.set_num_threads(1)
folder = sys.argv[1]
for seed in sys.argv[2:]:
    base = os.path.join(folder, "seed_" + seed)
    try:
        spec = importlib.util.spec_from_file_location("fuzz_seed_" + seed, base + ".py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        torch.manual_seed(int(seed))
        model = module.make().eval()
)";
  for (std::size_t b = 0, e; b < body.size(); b = e + 1) {
    e = std::min(body.find('\n', b), body.size());
    out += "        " + std::string(body.substr(b, e - b)) + "\n";
  }
  return out + R"(    except Exception:
        with open(base + ".err", "w") as f:
            f.write(traceback.format_exc())
)";
}

/// The command line of a leg:
/// `--seeds N [--start S] [--batch B] [--skip S1,S2,...] [--verbose] [--keep DIR]`; `--skip`
/// leaves out seeds that fail for a known reason (named where the test is registered).
struct LegOptions {
  std::uint64_t seeds = 0, start = 1, batch = 100;
  std::set<std::uint64_t> skip{};
  bool verbose = false;
  std::string keep{};
};

/// "11,114,152" into `out`; false for anything else.
inline bool parse_seed_list(std::string_view text, std::set<std::uint64_t>& out) {
  for (std::size_t b = 0; b <= text.size();) {
    const std::size_t e = std::min(text.find(',', b), text.size());
    std::uint64_t seed = 0;
    if (!parse_count(text.substr(b, e - b), seed)) return false;
    out.insert(seed);
    b = e + 1;
  }
  return true;
}

/// The options, or nullopt after saying what is wrong and the usage on stderr.
inline std::optional<LegOptions> parse_leg_options(int argc, char** argv,
                                                   std::string_view program) {
  LegOptions o;
  bool have_seeds = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--seeds" && has_value && parse_count(argv[i + 1], o.seeds)) {
      have_seeds = true;
      ++i;
    } else if (a == "--start" && has_value && parse_count(argv[i + 1], o.start)) {
      ++i;
    } else if (a == "--batch" && has_value && parse_count(argv[i + 1], o.batch) && o.batch > 0) {
      ++i;
    } else if (a == "--skip" && has_value && parse_seed_list(argv[i + 1], o.skip)) {
      ++i;
    } else if (a == "--keep" && has_value) {
      o.keep = argv[++i];
    } else if (a == "--verbose") {
      o.verbose = true;
    } else {
      std::cerr << program << ": unknown or malformed argument '" << a << "'\n";
      have_seeds = false;
      break;
    }
  }
  if (!have_seeds) {
    std::cerr << "usage: " << argv[0]
              << " --seeds N [--start S] [--batch B] [--skip S1,S2,...] [--verbose] [--keep DIR]\n";
    return std::nullopt;
  }
  return o;
}

/// One Python leg: its Python, the driver it runs as `python driver.py <folder> <seeds...>`
/// (writing for each seed what the leg checks, or `seed_<s>.err` with the Python traceback).
struct Leg {
  std::string program;               ///< "fuzz_script"
  std::string python;                ///< the Python with the torch the driver needs
  std::string driver;                ///< the driver's source
  std::string refused;               ///< how a seed Python refuses is counted: "not scriptable"
  bool refusal_fails;                ///< a `.err` is a failure (else counted as refused)
  std::string account;               ///< the account of such a failure: "script"
  std::string what_failed;           ///< what failed: "torch.jit.script"
  std::vector<std::string> outputs;  ///< the files of a seed, removed once it passed: ".pt"
  std::string ops;                   ///< what `Checked::ops` counts: "aten ops"
  std::string needs;                 ///< the module the driver imports: "torch"
  std::string missing;               ///< what to say when the Python cannot import it
};

/// What a seed's check counted, for its line under --verbose.
struct Checked {
  std::size_t nodes = 0, ops = 0, calls = 0, outputs = 0;
};

/// True when the leg's Python imports `leg.needs`. Otherwise there is nothing to check, a failure
/// and never a pass: prints "<program>: <missing>" and the counts of a run where every seed
/// failed.
inline bool python_ready(const Leg& leg, const LegOptions& o) {
  if (!leg.python.empty() &&
      std::system((leg.python + " -c 'import " + leg.needs + "' > /dev/null 2>&1").c_str()) == 0)
    return true;
  std::cout << leg.program << ": " << leg.missing << '\n'
            << "0 passed, " << o.seeds << " failed, 0 " << leg.refused << '\n';
  return false;
}

struct LegCounts {
  std::uint64_t passed = 0, failed = 0, refused = 0, skipped = 0;
  double seconds = 0;  ///< the whole run's, Python's included
};

/// Runs `leg` on the seeds of `o`: `source(seed, python)` sees each model's Python,
/// `check(spec, base, checked, problems)` checks the driver's files `base` + extension, adding
/// to `problems` (an exception it throws is one more, "threw") and counting in `checked` what a
/// verbose line says of a passing seed. Prints each failure, and under --verbose each pass;
/// nullopt when the driver itself failed (said). Seeds of `--skip` are not run. libtorch runs
/// on one thread, as the driver's torch does.
template <class Source, class Check>
std::optional<LegCounts> run_leg(const Leg& leg, const LegOptions& o, Source&& source,
                                 Check&& check) {
  const auto began = std::chrono::steady_clock::now();
  at::set_num_threads(1);
  const fs::path folder =
      o.keep.empty() ? fs::temp_directory_path() / (leg.program + "." + std::to_string(::getpid()))
                     : fs::path(o.keep);
  fs::create_directories(folder);
  std::ofstream(folder / "driver.py") << leg.driver;
  LegCounts n;
  const std::uint64_t last = o.start + o.seeds;
  for (std::uint64_t first = o.start; first < last; first += o.batch) {
    const std::uint64_t end = std::min(first + o.batch, last);
    std::string command =
        leg.python + " " + (folder / "driver.py").string() + " " + folder.string();
    std::vector<std::uint64_t> written;
    for (std::uint64_t seed = first; seed < end; ++seed) {
      if (o.skip.contains(seed)) {
        ++n.skipped;
        continue;
      }
      const auto text = python_source(generate(seed));
      if (!text) {
        ++n.refused;
        continue;
      }
      std::ofstream(folder / ("seed_" + std::to_string(seed) + ".py")) << *text;
      source(seed, *text);
      written.push_back(seed);
      command += " " + std::to_string(seed);
    }
    if (!written.empty() && std::system(command.c_str()) != 0) {
      std::cout << leg.program << ": the Python driver failed: " << command << '\n';
      return std::nullopt;
    }
    for (std::uint64_t seed : written) {
      const ModelSpec spec = generate(seed);
      const std::string base = (folder / ("seed_" + std::to_string(seed))).string();
      Problems problems;
      Checked c;
      const std::string err = base + ".err";
      if (fs::exists(err) && !leg.refusal_fails) {
        ++n.refused;
        if (o.verbose) {
          std::cout << "seed " << seed << ": " << leg.refused << ":\n";
          print_indented(read_text(err));
        }
        if (o.keep.empty())
          for (const std::string& f : {base + ".py", err}) fs::remove(f);
        continue;
      }
      if (fs::exists(err))
        problems.add(leg.account, leg.what_failed + " failed:\n" + read_text(err));
      else
        try {
          check(spec, base, c, problems);
        } catch (const std::exception& e) {
          problems.add("threw", e.what());
        }
      if (problems.empty()) {
        ++n.passed;
        if (o.verbose)
          std::cout << "seed " << seed << ": ok (" << size(spec.root) << " steps and children, "
                    << c.nodes << " nodes, " << c.ops << ' ' << leg.ops << ", " << c.calls
                    << " module calls, " << c.outputs << " outputs)\n";
        if (o.keep.empty()) {
          fs::remove(base + ".py");
          for (const std::string& ext : leg.outputs) fs::remove(base + ext);
        }
      } else {
        ++n.failed;
        std::cout << "seed " << seed << " FAILED:\n";
        for (const auto& p : problems.items) std::cout << "  " << p << '\n';
        std::cout << "  model:\n";
        print_indented(listing(spec));
        std::cout << "  python: " << base << ".py\n";
      }
    }
  }
  if (o.keep.empty() && n.failed == 0) fs::remove_all(folder);
  n.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return n;
}

/// The leg's closing lines: its time, the seeds skipped, and "N passed, F failed, K <refused>";
/// the exit status (0 when nothing failed).
inline int report(const Leg& leg, const LegOptions& o, const LegCounts& n) {
  std::cout << "(" << o.seeds << " seeds in " << static_cast<int>(n.seconds * 10) / 10.0 << " s)\n";
  if (n.skipped > 0) {
    std::cout << n.skipped << " skipped (--skip";
    for (std::uint64_t seed : o.skip)
      if (seed >= o.start && seed < o.start + o.seeds) std::cout << ' ' << seed;
    std::cout << ")\n";
  }
  std::cout << n.passed << " passed, " << n.failed << " failed, " << n.refused << ' ' << leg.refused
            << '\n';
  return n.failed == 0 ? 0 : 1;
}

/// A leg's `main`: its options, its Python checked (`python_ready`), its seeds run (`run_leg`
/// with `source` and `check`), then `closing()` prints what the leg reached and `report` the
/// counts. The exit status: 0 when nothing failed, 2 for a malformed command line.
template <class Source, class Check, class Closing>
int leg_main(int argc, char** argv, const Leg& leg, Source&& source, Check&& check,
             Closing&& closing) {
  const auto options = parse_leg_options(argc, argv, leg.program);
  if (!options) return 2;
  if (!python_ready(leg, *options)) return 1;
  const auto counts = run_leg(leg, *options, source, check);
  if (!counts) return 1;
  closing();
  return report(leg, *options, *counts);
}

}  // namespace fuzz
