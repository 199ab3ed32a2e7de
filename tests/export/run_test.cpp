/// Exported programs run through the dispatcher (`Tracer::run(program, inputs)`): their outputs
/// against Python's `ep.module()(*x)`, the run's trace against the static one, recording
/// policies, and what the runner refuses. The archives are written by make_exports.py (the
/// venv's PyTorch 2.13) at test time.
#define BOOST_TEST_MODULE export_run
#include <boost/test/unit_test.hpp>

#include <recorder/exported.hpp>
#include <recorder/capture/timing.hpp>
#include <recorder/recorder.hpp>

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#ifndef RECORDER_EXPORT_MODELS
#error "RECORDER_EXPORT_MODELS must name the folder make_exports.py writes"
#endif

namespace fs = std::filesystem;
namespace rr = recorder::record;
namespace rd = recorder::reduce;

namespace {

std::string file(const std::string& name) {
  return (fs::path(RECORDER_EXPORT_MODELS) / name).string();
}

c10::IValue load(const std::string& name) {
  std::ifstream in(file(name), std::ios::binary);
  BOOST_TEST_REQUIRE(static_cast<bool>(in), "cannot read " << file(name));
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  return torch::pickle_load(bytes);
}

std::vector<c10::IValue> inputs_of(const std::string& model) {
  return load(model + "_x.pt").toTupleRef().elements().vec();
}

/// The libtorch running is the PyTorch that exported the archives (2.13 on the 2.x leg): its
/// outputs are equal bit for bit; on 1.13 other kernels give the same values within rounding.
bool same_torch_as_exporter() { return recorder::running_torch().version == "2.13"; }

std::vector<at::Tensor> tensors(const c10::IValue& v) {
  std::vector<at::Tensor> out;
  recorder::for_each_tensor(v, [&out](const at::Tensor& t) { out.push_back(t); });
  return out;
}

void check_equal(const std::string& model, const c10::IValue& ours, const c10::IValue& python) {
  const auto a = tensors(ours), b = tensors(python);
  BOOST_TEST_REQUIRE(a.size() == b.size(), model);
  for (std::size_t i = 0; i < a.size(); ++i) {
    BOOST_TEST(a[i].sizes() == b[i].sizes(), model << " output " << i);
    if (same_torch_as_exporter())
      BOOST_TEST(torch::equal(a[i], b[i]), model << " output " << i << ": not bit for bit");
    else
      BOOST_TEST(torch::allclose(a[i], b[i], 1e-4, 1e-5), model << " output " << i);
  }
}

const std::vector<std::string> models = {"mlp", "lstm", "transformer", "tiny_gpt", "resnet18"};

/// tiny_gpt calls aten::scaled_dot_product_attention, which libtorch 1.13 lacks.
bool runs_here(const std::string& model) {
  return model != "tiny_gpt" || RECORDER_TORCH_AT_LEAST(2, 0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(outputs_equal_pythons) {
  for (const std::string& model : models) {
    if (!runs_here(model)) continue;
    const recorder::ExportedProgram program = recorder::load_exported(file(model + ".pt2"));
    const c10::IValue python = load(model + "_y.pt");
    const auto plain = recorder::Tracer<rr::Off>{}.run(program, inputs_of(model));
    check_equal(model + " (record::Off)", plain.output, python);
    const auto traced = recorder::Tracer<rr::Structure>{}.run(program, inputs_of(model));
    check_equal(model + " (record::Structure)", traced.output, python);
  }
  // lstm's output nests as the module returns it: (output, (h, c)).
  const auto lstm =
      recorder::Tracer<rr::Off>{}.run(recorder::load_exported(file("lstm.pt2")), inputs_of("lstm"));
  BOOST_REQUIRE(lstm.output.isTuple());
  BOOST_TEST(lstm.output.toTupleRef().elements().size() == 2u);
  BOOST_TEST(lstm.output.toTupleRef().elements()[1].isTuple());
}

BOOST_AUTO_TEST_CASE(the_run_records_what_the_static_read_shows) {
  for (const std::string& model : models) {
    if (!runs_here(model)) continue;
    const recorder::ExportedProgram program = recorder::load_exported(file(model + ".pt2"));
    const recorder::Trace read = recorder::static_trace(program);
    recorder::Tracer<rr::Structure> tracer;
    const auto ran = tracer.run(program, inputs_of(model));
    BOOST_TEST_CONTEXT(model) {
      BOOST_TEST(ran.complete());
      BOOST_TEST(ran.graph.size() == read.graph.size());
      BOOST_TEST(ran.graph.edge_count() == read.graph.edge_count());
      BOOST_TEST(recorder::summary(ran) == recorder::summary(read));
      BOOST_TEST(recorder::summary(ran, {.depth = 10}) == recorder::summary(read, {.depth = 10}));
      // The second run of the tracer reuses its runner (no weights read again): the same trace.
      const auto again = tracer.run(program, inputs_of(model));
      BOOST_TEST(again.graph.size() == ran.graph.size());
    }
  }
  // With every aten op: the same counts as the static read's with them.
  const recorder::ExportedProgram mlp = recorder::load_exported(file("mlp.pt2"));
  const auto aten = recorder::Tracer<rr::AtenOps>{}.run(mlp, inputs_of("mlp"));
  const recorder::Trace aten_read = recorder::static_trace(mlp, {.aten_ops = true});
  BOOST_TEST(aten.graph.size() == aten_read.graph.size());
  BOOST_TEST(aten.graph.edge_count() == aten_read.graph.edge_count());
}

BOOST_AUTO_TEST_CASE(recording_policies_work_on_a_program) {
  const recorder::ExportedProgram mlp = recorder::load_exported(file("mlp.pt2"));
  const std::vector<c10::IValue> x = inputs_of("mlp");
  // Activations by layer address, with a reduction: fc1's output is the eager model's.
  rr::ForwardOutput<rd::Last> fc1({"fc1"});
  rr::ForwardInput<rd::Sum> fc2_in({"fc2"});
  recorder::Tracer<rr::ForwardOutput<rd::Last>, rr::ForwardInput<rd::Sum>> tracer({}, fc1, fc2_in);
  const auto t = tracer.run(mlp, x);
  const at::Tensor expected = load("mlp_fc1.pt").toTensor();
  const at::Tensor got = fc1["fc1"].result();
  BOOST_TEST(got.sizes() == expected.sizes());
  if (same_torch_as_exporter())
    BOOST_TEST(torch::equal(got, expected));
  else
    BOOST_TEST(torch::allclose(got, expected, 1e-4, 1e-5));
  // fc2's input is relu(fc1's output).
  BOOST_TEST(torch::equal(fc2_in["fc2"].result(), torch::relu(got)));
  // A postproc changes what flows on: with fc1's output zeroed, every row of the output is
  // fc3(relu(fc2's bias)), the same for both inputs (up to rounding).
  rr::ForwardOutput<rd::Last> zeroed({"fc1"});
  zeroed.postproc(
      [](const recorder::LayerCall&, const at::Tensor& y) { return torch::zeros_like(y); });
  recorder::Tracer<rr::ForwardOutput<rd::Last>> zeroing({}, zeroed);
  const at::Tensor z = zeroing.run(mlp, x).output.toTensor();
  BOOST_TEST(torch::allclose(z[0], z[1]), z);
  BOOST_TEST(!torch::allclose(z, t.output.toTensor()));
  // Gradients where the graph allows: fc1's output gradient of the output's sum.
  rr::BackwardOutput<rd::Last> grad({"fc1"});
  recorder::Tracer<rr::BackwardOutput<rd::Last>> backward({}, grad);
  const auto g = backward.run(mlp, x);
  g.output.toTensor().sum().backward();
  BOOST_TEST(grad["fc1"].result().sizes() == expected.sizes());
  // Timing: every module call timed.
  rr::Timing<rd::Mean> timing;
  recorder::Tracer<rr::Timing<rd::Mean>> timed({}, timing);
  (void)timed.run(mlp, x);
  (void)timed.run(mlp, x);
  BOOST_TEST(timing.runs().size() == 2u);
  BOOST_TEST(timing.keys().size() == 4u);  // MLP, fc1, fc2, fc3
}

BOOST_AUTO_TEST_CASE(what_the_runner_refuses) {
  const auto message = [](auto&& f) {
    try {
      f();
    } catch (const recorder::ExportedFileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const recorder::ExportedProgram mlp = recorder::load_exported(file("mlp.pt2"));
  const std::string name = "recorder: cannot read '" + file("mlp.pt2") + "': ";
  recorder::Tracer<rr::Structure> tracer;
  BOOST_TEST(message([&] {
               tracer.run(mlp, torch::randn({3, 784}));
             }) ==
             name +
                 "input 0 ('x') has size 3 at dimension 0, where the program was exported with 2 "
                 "(a static size)");
  BOOST_TEST(message([&] {
               tracer.run(mlp, torch::zeros({2, 784}, torch::kLong));
             }) == name + "input 0 ('x') must be Float, not Long");
  BOOST_TEST(message([&] {
               tracer.run(mlp, torch::randn({2, 784}), torch::randn({2}));
             }) == name + "the program takes 1 tensor input(s), 2 given");
  // A dynamic batch: any size in its range runs, one outside is named with its range.
  const recorder::ExportedProgram blocks = recorder::load_exported(file("blocks_dynamic.pt2"));
  const auto five = tracer.run(blocks, torch::randn({5, 1, 4, 4}));
  BOOST_TEST(five.output.toTupleRef().elements()[0].toTensor().sizes() == (at::IntArrayRef{5, 8}));
  const std::string too_big = message([&] { tracer.run(blocks, torch::randn({65, 1, 4, 4})); });
  BOOST_TEST(too_big.find("input 0 ('image') has size 65 at dimension 0, outside the range the "
                          "program allows for s") != std::string::npos,
             too_big);
  BOOST_TEST(too_big.find(": [1, 64]") != std::string::npos, too_big);
  // A weight file missing from the archive.
  const recorder::ExportedProgram missing = recorder::load_exported(file("mlp_missing_weight.pt2"));
  const std::string lost = message([&] { tracer.run(missing, inputs_of("mlp")); });
  BOOST_TEST(lost.find("its weight file data/weights/weight_0") != std::string::npos, lost);
  BOOST_TEST(lost.find("is missing") != std::string::npos, lost);
  // Train mode: a program runs as it was exported.
  BOOST_TEST(message([&] {
               recorder::Tracer<rr::Structure>(
                   recorder::TraceOptions{.mode = recorder::TrainMode::train})
                   .run(mlp, inputs_of("mlp"));
             }) == name +
                       "a program runs in the mode it was exported in, and cannot be put in "
                       "train mode (call model.train() before torch.export.export)");
  // Without sample inputs: inputs of the exported shapes and dtypes.
  const recorder::ExportedProgram bare = recorder::load_exported(file("mlp_no_samples.pt2"));
  BOOST_TEST(recorder::sample_inputs(bare).empty());
  BOOST_TEST(recorder::sample_inputs(mlp).size() == 1u);
  const std::vector<c10::IValue> like = recorder::inputs_like_exported(bare);
  BOOST_REQUIRE(like.size() == 1u);
  BOOST_TEST(like[0].toTensor().sizes() == (at::IntArrayRef{2, 784}));
  BOOST_TEST(like[0].toTensor().scalar_type() == at::kFloat);
  // An AOTInductor package (compiled code, no program), chosen by its records.
  BOOST_TEST(message([&] { (void)recorder::load_exported(file("aoti_linear.pt2")); }) ==
             "recorder: cannot read '" + file("aoti_linear.pt2") +
                 "': it is an AOTInductor package (compiled code, no program): save the program "
                 "with torch.export.save(ep, path)");
  BOOST_TEST((recorder::exported::archive_kind(file("aoti_linear.pt2")) ==
              recorder::exported::ArchiveKind::compiled_only));
  // An op this libtorch lacks.
  if (!runs_here("tiny_gpt")) {
    const recorder::ExportedProgram gpt = recorder::load_exported(file("tiny_gpt.pt2"));
    BOOST_TEST(message([&] { tracer.run(gpt, inputs_of("tiny_gpt")); }) ==
               "recorder: cannot read '" + file("tiny_gpt.pt2") +
                   "': it calls aten::scaled_dot_product_attention, which libtorch 1.13 does not "
                   "have (the program was exported by PyTorch " +
                   gpt.program.torch_version + ")");
  }
}

BOOST_AUTO_TEST_CASE(a_failure_mid_run_leaves_a_renderable_partial_trace) {
  // Token id 25 in a 20-row embedding: the run fails in the embedding, the first op.
  const recorder::ExportedProgram lstm = recorder::load_exported(file("lstm.pt2"));
  at::Tensor ids = inputs_of("lstm")[0].toTensor().clone();
  ids[0][3] = 25;
  recorder::Tracer<rr::Structure> tracer;
  try {
    tracer.run(lstm, ids);
    BOOST_FAIL("the run should fail");
  } catch (const recorder::TraceError& e) {
    BOOST_TEST(e.failure().module_path == "embedding");
    BOOST_TEST(e.failure().op == "embedding");
    BOOST_REQUIRE(e.partial_trace() != nullptr);
    const recorder::Trace& partial = *e.partial_trace();
    BOOST_TEST(!partial.complete());
    BOOST_TEST(partial.total_params == recorder::static_trace(lstm).total_params);
    const std::string table = recorder::summary(partial);
    BOOST_TEST(table.find("Embedding") != std::string::npos, table);
  }
  // The tracer is consistent afterwards: the next run records normally.
  BOOST_TEST(tracer.run(lstm, inputs_of("lstm")).complete());
}

namespace {

/// What became of a damaged archive: refused by the reader, or read (then traced statically and
/// rendered) and run, the run ending or failing in one of recorder's errors.
struct Outcomes {
  int refused = 0, read = 0, ran = 0;
};

/// Writes `bytes` to `path` and reads and runs it (on `x`) as a user would, counting the outcome
/// in `o`. A refusal must be one line naming the file; anything else (a crash, another
/// exception) fails the test: scripts/test.sh's sanitizer stage runs this under ASan and UBSan.
void read_and_run(const std::string& bytes, const std::string& path,
                  const std::vector<c10::IValue>& x, Outcomes& o) {
  std::ofstream(path, std::ios::binary) << bytes;
  recorder::Tracer<rr::Structure> tracer;
  try {
    const recorder::ExportedProgram p = recorder::load_exported(path);
    BOOST_TEST(!recorder::summary(recorder::static_trace(p)).empty());
    ++o.read;
    try {
      BOOST_TEST(tracer.run(p, x).complete());
      ++o.ran;
    } catch (const recorder::ExportedFileError& e) {
      BOOST_TEST(std::string(e.what()).find('\n') == std::string::npos, e.what());
    } catch (const recorder::TraceError&) {
    }
  } catch (const recorder::ExportedFileError& e) {
    ++o.refused;
    const std::string what = e.what();
    BOOST_TEST(what.rfind("recorder: cannot read '" + path + "': ", 0) == 0u, what);
    BOOST_TEST(what.find('\n') == std::string::npos, what);
  }
}

/// mlp.pt2's bytes, and where its program's JSON begins and ends in them.
struct Archive {
  std::string bytes;
  std::size_t json_begin = 0, json_end = 0;
};

Archive mlp_archive() {
  Archive a;
  std::ifstream in(file("mlp.pt2"), std::ios::binary);
  a.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  BOOST_TEST_REQUIRE(a.bytes.size() > 1000u);
  a.json_begin = a.bytes.find("{\"graph_module\"");
  BOOST_TEST_REQUIRE(a.json_begin != std::string::npos);
  a.json_end = a.bytes.find("PK\x03\x04", a.json_begin);
  BOOST_TEST_REQUIRE(a.json_end != std::string::npos);
  return a;
}

fs::path damaged_folder() {
  const fs::path dir = fs::path(RECORDER_EXPORT_MODELS) / "damaged";
  fs::create_directories(dir);
  return dir;
}

}  // namespace

BOOST_AUTO_TEST_CASE(damaged_archives_are_refused_in_one_line_or_run) {
  // mlp.pt2 cut short, with one bit flipped anywhere (mostly in the weights, which the zip
  // reader does not check), or one bit flipped in the program's JSON, 300 ways.
  const Archive a = mlp_archive();
  const fs::path dir = damaged_folder();
  std::mt19937 rng(42);
  const std::vector<c10::IValue> x = inputs_of("mlp");
  Outcomes o;
  constexpr int n = 300;
  for (int k = 0; k < n; ++k) {
    std::string damaged = a.bytes;
    const auto flip = [&](std::size_t at) {
      damaged[at] = static_cast<char>(damaged[at] ^ static_cast<char>(1u << (rng() % 8u)));
    };
    if (k % 3 == 0)
      damaged.resize(rng() % a.bytes.size());
    else if (k % 3 == 1)
      flip(rng() % a.bytes.size());
    else
      flip(a.json_begin + rng() % (a.json_end - a.json_begin));
    read_and_run(damaged, (dir / ("damaged_" + std::to_string(k) + ".pt2")).string(), x, o);
  }
  BOOST_TEST(o.refused + o.read == n);
  BOOST_TEST(o.refused > 0);
  BOOST_TEST(o.ran > 0);
  BOOST_TEST_MESSAGE(o.refused << " refused, " << o.read << " read, " << o.ran << " ran");
}

BOOST_AUTO_TEST_CASE(every_key_of_the_program_renamed_is_refused_in_one_line_or_run) {
  // Each key of the program's JSON in turn renamed (its first letter's lowest bit flipped:
  // "name" becomes "oame"), as if a writer had left it out: the random flips above found a
  // node's argument without its "name" escaping the runner as a JSON library error.
  const Archive a = mlp_archive();
  const fs::path dir = damaged_folder();
  const std::vector<c10::IValue> x = inputs_of("mlp");
  Outcomes o;
  int n = 0;
  for (std::size_t at = a.bytes.find("\": ", a.json_begin); at < a.json_end;
       at = a.bytes.find("\": ", at + 1)) {
    const std::size_t open = a.bytes.rfind('"', at - 1);
    if (open == std::string::npos || open < a.json_begin || open + 1 == at) continue;
    std::string damaged = a.bytes;
    damaged[open + 1] = static_cast<char>(damaged[open + 1] ^ 1);
    read_and_run(damaged, (dir / ("renamed_" + std::to_string(n) + ".pt2")).string(), x, o);
    ++n;
  }
  BOOST_TEST(n > 300);
  BOOST_TEST(o.refused + o.read == n);
  BOOST_TEST(o.refused > 0);
  BOOST_TEST(o.read > o.ran);  // some read, then refused by the runner
  BOOST_TEST_MESSAGE(n << " keys: " << o.refused << " refused, " << o.read << " read, " << o.ran
                       << " ran");
}
