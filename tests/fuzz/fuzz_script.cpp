/// fuzz_script: the TorchScript leg of the differential fuzzer. Writes each seed's model as
/// Python (tests/fuzz/python.hpp), scripts a batch of them in one python3 process
/// (`torch.jit.script(...).save`), loads each with `recorder::load_model` and traces it with the
/// TorchScript front end, checking the trace against the accounts of tests/fuzz/accounts.hpp:
///
/// (1) outputs:   the traced outputs equal the plain `module.forward`'s, bit for bit;
/// (2) aten ops:  the function nodes equal, in order, the outermost aten ops an
///     `at::RecordFunction` observer sees during the traced forward (`AtenLog` and its name
///     mapping, with the `is_contiguous` events dropped: see `script_events`);
/// (3) calls:     the module calls equal `ExpectedCalls` of the spec (the Python classes are
///     `FuzzNet_<k>`, compared as `FuzzNet`);
/// (4) renders:   every backend accepts the trace, every call resolves back from its address;
/// (5) templated: the ops of the nets (outside libtorch's leaf modules), names and shapes in
///     order, equal the templated `FuzzNet`'s of the same spec, after the mapping of
///     `script_as_templated` (documented there);
/// (6) structure: a `record::Structure` trace has the same calls, and the ops of the `AtenOps`
///     trace outside leaf modules (for this front end a module whose forward calls no
///     submodule, so a net without children too).
///
///   fuzz_script --seeds N [--start S] [--batch B] [--skip S1,S2,...] [--verbose] [--keep DIR]
///
/// Ends with the line "N passed, F failed, K not scriptable"; exits 0 when nothing failed.

#include "accounts.hpp"
#include "net.hpp"
#include "python_leg.hpp"
#include "spec.hpp"

#include <recorder/recorder.hpp>
#include <recorder/script.hpp>

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#ifndef RECORDER_PYTHON3
#define RECORDER_PYTHON3 "/usr/bin/python3"
#endif

namespace {

namespace fs = std::filesystem;

/// Scripts the models `seed_<s>.py` of a folder (`python_driver`): `seed_<s>.pt`, or
/// `seed_<s>.err` with the Python traceback when scripting fails.
constexpr const char* kDriver = R"(torch.jit.script(model).save(base + ".pt"))";

void flatten_ivalue(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) flatten_ivalue(e, out);
  }
}

void compare_script_calls(const recorder::Graph& g, const fuzz::ModelSpec& m, fuzz::Problems& p) {
  const auto expected = fuzz::ExpectedCalls{}.of(m);
  const auto recorded = fuzz::python_calls(g);
  if (recorded != expected) p.add("calls", fuzz::first_difference(recorded, expected));
}

/// The observer's events of a TorchScript forward as `AtenLog` would log them if it could tell
/// what every op returns: TorchScript runs `x.is_contiguous()` (the helper `contiguous`) as an
/// interpreter operator whose `at::RecordFunction` event has no operator schema, so `AtenLog`
/// keeps it as if it returned tensors; it returns a bool (no tensor, no shape logged), and the
/// recorder, which records ops with a tensor result, rightly records none.
std::vector<fuzz::AtenLog::Event> script_events(const std::vector<fuzz::AtenLog::Event>& events) {
  std::vector<fuzz::AtenLog::Event> out;
  for (const auto& e : events)
    if (!((e.name == "aten::is_contiguous" || e.name == "is_contiguous") && e.shapes.empty()))
      out.push_back(e);
  return out;
}

/// The recorded function nodes, each "name shapes" (`recorded_functions`), whose module call
/// `keep(parent)` accepts (an invalid parent: an op outside every call).
template <class Keep>
std::vector<std::string> functions_where(const recorder::Graph& g, Keep keep) {
  const auto all = fuzz::recorded_functions(g);
  std::vector<std::string> out;
  std::size_t k = 0;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    const recorder::NodeId id{i};
    if (g.kind(id) != recorder::NodeKind::function) continue;
    if (keep(g.node(id).parent)) out.push_back(all[k]);
    ++k;
  }
  return out;
}

/// The function nodes recorded directly in nets (not in libtorch's leaf modules).
std::vector<std::string> net_ops(const recorder::Graph& g) {
  return functions_where(g, [&](recorder::NodeId parent) {
    return parent.valid() && fuzz::net_class(g.module_of(parent).class_name) == "FuzzNet";
  });
}

/// `ops` with each `reciprocal` followed by a `mul` as one `div` (the `mul`'s shapes): the ops
/// TorchScript compiles `2.0 / x` to (its builtin `div(a: float, b: Tensor)`), which a trace
/// outside record::AtenOps reports as one `div`. No other op of the catalogue runs
/// `reciprocal`, so the pair is unambiguous.
std::vector<std::string> fold_scalar_div(const std::vector<std::string>& ops) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].rfind("reciprocal ", 0) == 0 && i + 1 < ops.size() &&
        ops[i + 1].rfind("mul ", 0) == 0) {
      out.push_back("div" + ops[i + 1].substr(3));
      ++i;
    } else {
      out.push_back(ops[i]);
    }
  }
  return out;
}

/// The script trace's net ops as the templated trace records them:
/// - `torch.rsub(x, 1.0)` (written for `1.0 - x`) is `rsub`; the templated net's `1.0 - x` is
///   recorded as `sub` (libtorch's `empty_like`, `fill_`, `sub_`);
/// - `2.0 / x` is compiled by TorchScript to `reciprocal` and `mul`; the templated net records
///   `div` (libtorch's `empty_like`, `fill_`, `div_`). No other op of the catalogue runs
///   `reciprocal`, so the pair is unambiguous;
/// - TorchScript dispatches `contiguous()` where the Python wrote it; the helper `contiguous`
///   calls it, as the templated net does, only on a tensor that is not contiguous.
std::vector<std::string> script_as_templated(const std::vector<std::string>& ops) {
  std::vector<std::string> out = fold_scalar_div(ops);
  for (std::string& op : out)
    if (op.rfind("rsub ", 0) == 0) op = "sub" + op.substr(4);
  return out;
}

/// The templated `FuzzNet` of `spec`, traced: its net ops.
std::vector<std::string> templated_net_ops(const fuzz::ModelSpec& spec) {
  torch::manual_seed(static_cast<std::uint64_t>(spec.seed));
  fuzz::FuzzNet net(spec.root);
  net->eval();
  const at::Tensor x = torch::randn({fuzz::kRows, fuzz::kFeatures});
  const at::Tensor y = torch::randn({fuzz::kRows, fuzz::kFeatures});
  recorder::Tracer<recorder::record::AtenOps> tracer(
      recorder::TraceOptions{.mode = recorder::TrainMode::eval, .no_grad = true});
  if (spec.pair_root) return net_ops(recorder::Trace(tracer.run(net, x, y)).graph);
  return net_ops(recorder::Trace(tracer.run(net, x)).graph);
}

/// What the seeds reached: the leaf classes called, and how many nets had both forwards.
struct Coverage {
  std::set<std::string> leaves;
  std::uint64_t overloaded = 0;
};

/// The function nodes of an `AtenOps` trace that a `Structure` trace records too: those not
/// inside a leaf (for the TorchScript front end, a module whose forward calls no submodule).
std::vector<std::string> outside_leaves(const recorder::Graph& g) {
  return functions_where(
      g, [&](recorder::NodeId parent) { return !parent.valid() || !g.module_of(parent).leaf; });
}

/// Every account on the scripted model in `file` of `spec`.
void check(const fuzz::ModelSpec& spec, const fs::path& file, fuzz::Checked* checked,
           Coverage* coverage, fuzz::Problems& problems) {
  torch::jit::Module m = recorder::load_model(file);
  m.eval();
  torch::manual_seed(static_cast<std::uint64_t>(spec.seed));
  const at::Tensor x = torch::randn({fuzz::kRows, fuzz::kFeatures});
  const at::Tensor y = torch::randn({fuzz::kRows, fuzz::kFeatures});
  auto inputs = [&] {
    std::vector<c10::IValue> in{x.clone()};
    if (spec.pair_root) in.emplace_back(y.clone());
    return in;
  };

  std::vector<at::Tensor> plain, traced;
  {
    torch::NoGradGuard no_grad;
    flatten_ivalue(m.forward(inputs()), plain);
  }

  recorder::Tracer<recorder::record::AtenOps> tracer(
      recorder::TraceOptions{.mode = recorder::TrainMode::eval, .no_grad = true});
  // The first trace instruments a copy of the model (cloning and rewriting its graphs): the
  // observer watches the second, which reuses the copy, so it sees the forward alone.
  auto run = [&](auto&&... in) { return tracer.run(m, in...); };
  auto call = [&](std::vector<c10::IValue> in) {
    return spec.pair_root ? run(in[0].toTensor(), in[1].toTensor()) : run(in[0].toTensor());
  };
  (void)call(inputs());
  fuzz::AtenLog log;
  auto in = inputs();
  log.active = true;
  auto t = call(std::move(in));
  log.active = false;
  flatten_ivalue(t.output, traced);
  const recorder::Trace trace(std::move(t));

  fuzz::compare_outputs(plain, traced, problems);
  fuzz::compare_ops(trace.graph, script_events(log.ops), problems);
  compare_script_calls(trace.graph, spec, problems);
  fuzz::check_addresses(trace.graph, problems);
  fuzz::check_renders(trace, false, problems);

  // (6) structure: a Structure trace records the same calls, and the AtenOps trace's ops
  // outside leaves, a subscript's ops as one `__getitem__` and `2.0 / x`'s as one `div`.
  const recorder::Trace structure(
      recorder::Tracer<recorder::record::Structure>(
          recorder::TraceOptions{.mode = recorder::TrainMode::eval, .no_grad = true})
          .run(m, inputs()));
  if (fuzz::call_list(structure.graph) != fuzz::call_list(trace.graph))
    problems.add("structure", "calls: " + fuzz::first_difference(fuzz::call_list(structure.graph),
                                                                 fuzz::call_list(trace.graph)));
  const auto structure_ops = fuzz::recorded_functions(structure.graph);
  const auto aten_ops =
      fuzz::fold_subscripts(structure_ops, fold_scalar_div(outside_leaves(trace.graph)));
  if (structure_ops != aten_ops)
    problems.add("structure", "ops: " + fuzz::first_difference(structure_ops, aten_ops));

  const auto script = script_as_templated(net_ops(trace.graph));
  const auto templated = templated_net_ops(spec);
  if (script != templated) problems.add("templated", fuzz::first_difference(script, templated));

  if (coverage != nullptr) fuzz::add_leaves(trace.graph, coverage->leaves);
  if (checked != nullptr)
    *checked = {trace.graph.size(), log.ops.size(), fuzz::ExpectedCalls{}.of(spec).size(),
                traced.size()};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string python = RECORDER_PYTHON3;
  Coverage coverage;
  return fuzz::leg_main(
      argc, argv,
      fuzz::Leg{
          .program = "fuzz_script",
          .python = python,
          .driver = fuzz::python_driver(kDriver),
          .refused = "not scriptable",
          .refusal_fails = true,
          .account = "script",
          .what_failed = "torch.jit.script",
          .outputs = {".pt"},
          .ops = "aten ops",
          .needs = "torch",
          .missing = python + " cannot import torch: install python3-torch (scripts/lib.sh does)"},
      [&](std::uint64_t, const std::string& source) {
        for (std::size_t at = source.find("def forward(self, x: Tensor, y: Optional");
             at != std::string::npos;
             at = source.find("def forward(self, x: Tensor, y: Optional", at + 1))
          ++coverage.overloaded;
      },
      [&](const fuzz::ModelSpec& spec, const std::string& base, fuzz::Checked& checked,
          fuzz::Problems& problems) { check(spec, base + ".pt", &checked, &coverage, problems); },
      [&] {
        std::cout << fuzz::leaves_line(coverage.leaves)
                  << "; nets with both forwards (TorchScript overloads): " << coverage.overloaded
                  << '\n';
      });
}
