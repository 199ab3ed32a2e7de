/// fuzz_exported: the torch.export leg of the differential fuzzer. Writes each seed's model as
/// Python (tests/fuzz/python.hpp), exports a batch of them in one Python process
/// (`torch.export.export(model, x)`, `torch.export.save`), saving the inputs `x` and what
/// Python's `ep.module()(*x)` returns as tests/export/make_exports.py does, then loads each
/// archive with `recorder::load_exported` and runs it with the `.pt2` front end, checking:
///
/// (1) outputs:  the run's outputs (`record::AtenOps` and `record::Structure`) equal Python's
///     `ep.module()`'s, nested alike: bit for bit when the libtorch in use is the exporting
///     PyTorch's major.minor, else within `allclose` (as tests/export/run_test.cpp decides);
/// (2) static:   `static_trace` of the archive (nothing run) has the run's op nodes (names and
///     shapes, in order) and module calls (paths and classes): with `aten_ops` against the
///     `AtenOps` run, by default against the `Structure` run;
/// (3) calls:    the module calls equal `ExpectedCalls` of the spec after the mapping of
///     `exported_calls` (documented there: the calls export cannot see);
/// (4) renders:  every backend accepts the trace, every call resolves back from its address;
/// (5) policies: the `Structure` run has the `AtenOps` run's module calls.
///
/// Seeds whose model torch.export refuses are counted "not exportable", not failures (the
/// Python error shown under --verbose).
///
///   fuzz_exported --seeds N [--start S] [--batch B] [--skip S1,S2,...] [--verbose] [--keep DIR]
///
/// Ends with the line "N passed, F failed, K not exportable"; exits 0 when nothing failed.

#include "accounts.hpp"
#include "python_leg.hpp"
#include "spec.hpp"

#include <recorder/exported.hpp>
#include <recorder/recorder.hpp>

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <cstdint>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#ifndef RECORDER_EXPORT_PYTHON
#define RECORDER_EXPORT_PYTHON ""
#endif

namespace {

/// Exports the models `seed_<s>.py` of a folder (`python_driver`): `seed_<s>.pt2`, its inputs
/// `seed_<s>_x.pt` (a tuple) and `ep.module()`'s output on them `seed_<s>_y.pt`; or
/// `seed_<s>.err` with the Python traceback when torch.export (or the exported module) refuses
/// the model. The model assigns tensors to the attribute `sink` in its forward (python.hpp):
/// export warns (not shown), and keeps them out of the program.
constexpr const char* kDriver = R"(x = tuple(torch.randn(6, 16) for _ in range(module.INPUTS))
ep = torch.export.export(model, tuple(t.clone() for t in x))
y = ep.module()(*(t.clone() for t in x))  # in-place ops may write the inputs
torch.export.save(ep, base + ".pt2")
torch.save(x, base + "_x.pt")
torch.save(y, base + "_y.pt"))";

c10::IValue load_pickle(const std::string& file) {
  const std::string bytes = fuzz::read_text(file);
  return torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
}

std::vector<at::Tensor> tensors(const c10::IValue& v) {
  std::vector<at::Tensor> out;
  recorder::for_each_tensor(v, [&out](const at::Tensor& t) { out.push_back(t); });
  return out;
}

/// How `v` nests: "T" for a tensor, "(T, (T, T))" for a tuple.
std::string nesting(const c10::IValue& v) {
  if (v.isTensor()) return "T";
  if (!v.isTuple() && !v.isList()) return v.tagKind();
  std::string out = "(";
  const auto elements = v.isTuple() ? v.toTupleRef().elements().vec() : v.toListRef().vec();
  for (std::size_t i = 0; i < elements.size(); ++i) out += (i ? ", " : "") + nesting(elements[i]);
  return out + ")";
}

/// (1) outputs: `ours` is Python's output `python`, bit for bit when `exact`.
void compare_to_python(const c10::IValue& ours, const c10::IValue& python, bool exact,
                       const std::string& run, fuzz::Problems& p) {
  if (nesting(ours) != nesting(python)) {
    p.add("outputs", run + " returns " + nesting(ours) + ", Python " + nesting(python));
    return;
  }
  const auto a = tensors(ours), b = tensors(python);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool same = exact ? fuzz::bitwise_equal(a[i], b[i])
                            : a[i].sizes() == b[i].sizes() &&
                                  a[i].scalar_type() == b[i].scalar_type() &&
                                  torch::allclose(a[i], b[i], 1e-4, 1e-5, /*equal_nan=*/true);
    if (!same)
      p.add("outputs", run + ": output " + std::to_string(i) + " differs from Python's" +
                           (exact ? " (bit for bit)" : " (allclose)") + ": ours " +
                           recorder::to_string(recorder::Shape(a[i].sizes())) + ", Python's " +
                           recorder::to_string(recorder::Shape(b[i].sizes())));
  }
}

/// The module calls "path Class" of a trace, in call order (`python_calls` without depths and
/// call indices: what static == run compares).
std::vector<std::string> paths_and_classes(const recorder::Graph& g) {
  std::vector<std::string> out;
  for (recorder::NodeId c : recorder::views::module_calls(g))
    out.push_back(g.module_of(c).path + ' ' + g.module_of(c).class_name);
  return out;
}

/// (2) static == run: the same op nodes and module calls.
void compare_static(const recorder::Graph& read, const recorder::Graph& ran,
                    const std::string& what, fuzz::Problems& p) {
  const auto read_ops = fuzz::recorded_functions(read), ran_ops = fuzz::recorded_functions(ran);
  if (read_ops != ran_ops)
    p.add("static", what + " ops (recorded: the run; observed: static_trace): " +
                        fuzz::first_difference(ran_ops, read_ops));
  const auto read_calls = paths_and_classes(read), ran_calls = paths_and_classes(ran);
  if (read_calls != ran_calls)
    p.add("static", what + " calls (recorded: the run; observed: static_trace): " +
                        fuzz::first_difference(ran_calls, read_calls));
}

/// The net at module path `path` of `m` ("" the root, "c2.1.c0"); null for a path that names
/// no net (a leaf, a container).
const fuzz::NetSpec* net_at(const fuzz::ModelSpec& m, const std::string& path) {
  const fuzz::NetSpec* n = &m.root;
  std::size_t at = 0;
  const auto next = [&]() -> std::string {
    const std::size_t dot = path.find('.', at);
    std::string part = path.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    at = dot == std::string::npos ? path.size() : dot + 1;
    return part;
  };
  while (at < path.size()) {
    const std::string part = next();
    if (part.size() < 2 || part[0] != 'c') return nullptr;
    const std::size_t i = std::stoul(part.substr(1));
    if (i >= n->children.size()) return nullptr;
    const fuzz::ChildSpec& c = n->children[i];
    if (c.kind == fuzz::ChildSpec::Kind::net) {
      n = &c.nets.front();
    } else if (c.kind == fuzz::ChildSpec::Kind::sequential ||
               c.kind == fuzz::ChildSpec::Kind::module_list) {
      if (at >= path.size()) return nullptr;  // the container itself
      const std::size_t j = std::stoul(next());
      if (j >= c.nets.size()) return nullptr;
      n = &c.nets[j];
    } else {
      return nullptr;
    }
  }
  return n;
}

/// (3) The calls of `ExpectedCalls` that the exported program shows. torch.export records
/// the module calls of a program as the `nn_module_stack` of its nodes: a call that runs no
/// node making a tensor leaves no trace in it, so the front end cannot show it. In the
/// fuzzer's models such a call is one of
/// - an `nn.Identity` (it returns its input: no node);
/// - a net, a `Sequential` of nets or a `Sequential` of leaves whose calls are all such calls
///   (a net without op steps whose children are all `nn.Identity`, say).
/// Every other call runs at least one node (every op of the catalogue makes a tensor, every
/// other leaf runs an aten op, `nn.Dropout` in eval `aten.dropout` included). Such a call is
/// the same one every time it runs (a net's single and pair forwards run the same steps), so
/// leaving it out shifts no other call's index.
std::vector<std::string> exported_calls(const fuzz::ModelSpec& m) {
  const std::vector<std::string> expected = fuzz::ExpectedCalls{}.of(m);
  struct Call {
    int depth;
    std::string path, cls;
  };
  std::vector<Call> calls;
  for (const std::string& e : expected) {  // "depth path Class #k"
    const std::size_t a = e.find(' '), b = e.find(' ', a + 1), c = e.find(' ', b + 1);
    const std::string path = e.substr(a + 1, b - a - 1);
    calls.push_back(
        {std::stoi(e.substr(0, a)), path == "<root>" ? "" : path, e.substr(b + 1, c - b - 1)});
  }
  // Pre-order: the calls within call i follow it, deeper. Backwards, each call's own nodes or
  // a shown call within it.
  std::vector<bool> shown(calls.size(), false);
  for (std::size_t i = calls.size(); i-- > 0;) {
    const Call& c = calls[i];
    bool any = false;
    if (c.cls == "FuzzNet") {
      const fuzz::NetSpec* n = net_at(m, c.path);
      for (const fuzz::Step& s : n->steps) any = any || s.kind == fuzz::Step::Kind::op;
    } else if (c.cls != "Sequential") {
      any = c.cls != "Identity";
    }
    for (std::size_t j = i + 1; j < calls.size() && calls[j].depth > c.depth; ++j)
      any = any || shown[j];
    shown[i] = any;
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (shown[i]) out.push_back(expected[i]);
  return out;
}

/// Every account on the exported model `base`.pt2 of `spec`; `leaves` gathers the classes
/// called besides the nets.
void check(const fuzz::ModelSpec& spec, const std::string& base, fuzz::Checked& checked,
           std::set<std::string>& leaves, fuzz::Problems& problems) {
  const recorder::ExportedProgram program = recorder::load_exported(base + ".pt2");
  const bool exact = recorder::detail::major_minor(program.program.torch_version) ==
                     recorder::running_torch().version;
  // Fresh inputs for every run: the program's in-place ops write them.
  const auto inputs = [&] { return load_pickle(base + "_x.pt").toTupleRef().elements().vec(); };
  const c10::IValue python = load_pickle(base + "_y.pt");

  recorder::Tracer<recorder::record::AtenOps> tracer;
  auto ran = tracer.run(program, inputs());
  compare_to_python(ran.output, python, exact, "record::AtenOps", problems);
  const recorder::Trace trace(std::move(ran));
  recorder::Tracer<recorder::record::Structure> structure_tracer;
  auto structured = structure_tracer.run(program, inputs());
  compare_to_python(structured.output, python, exact, "record::Structure", problems);
  const recorder::Trace structure(std::move(structured));

  compare_static(recorder::static_trace(program, {.aten_ops = true}).graph, trace.graph, "aten_ops",
                 problems);
  compare_static(recorder::static_trace(program).graph, structure.graph, "default", problems);

  const auto recorded = fuzz::python_calls(trace.graph);
  const auto expected = exported_calls(spec);
  if (recorded != expected) problems.add("calls", fuzz::first_difference(recorded, expected));

  fuzz::check_addresses(trace.graph, problems);
  fuzz::check_renders(trace, false, problems);

  if (fuzz::python_calls(structure.graph) != recorded)
    problems.add("policies",
                 "record::Structure's calls: " +
                     fuzz::first_difference(fuzz::python_calls(structure.graph), recorded));

  fuzz::add_leaves(trace.graph, leaves);
  checked = {trace.graph.size(), fuzz::recorded_functions(trace.graph).size(), recorded.size(),
             tensors(python).size()};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string python = RECORDER_EXPORT_PYTHON;
  std::set<std::string> leaves;
  return fuzz::leg_main(
      argc, argv,
      fuzz::Leg{.program = "fuzz_exported",
                .python = python,
                .driver = fuzz::python_driver(kDriver),
                .refused = "not exportable",
                .refusal_fails = false,
                .account = "export",
                .what_failed = "torch.export",
                .outputs = {".pt2", "_x.pt", "_y.pt"},
                .ops = "op nodes",
                .needs = "torch.export",
                .missing = "no Python with torch 2.8 or later (torch.export's archive)" +
                           (python.empty() ? std::string() : ": " + python + " cannot export") +
                           ": scripts/test.sh makes the venv"},
      [](std::uint64_t, const std::string&) {},
      [&](const fuzz::ModelSpec& spec, const std::string& base, fuzz::Checked& checked,
          fuzz::Problems& problems) { check(spec, base, checked, leaves, problems); },
      [&] { std::cout << fuzz::leaves_line(leaves) << '\n'; });
}
