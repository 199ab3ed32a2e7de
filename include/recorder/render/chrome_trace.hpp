#pragma once
/// The runs of a timing as Chrome Trace Event JSON (`chrome_trace_json`, `backend::ChromeTrace`),
/// the shape PyTorch's profiler writes, for Perfetto and `chrome://tracing`.

#include <recorder/detail/escape.hpp>
#include <recorder/graph/timed_run.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/options.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace recorder {

namespace detail {

/// Appends `ns` as microseconds with three decimals (`1234567` -> `1234.567`).
inline void append_micros(std::string& out, std::int64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  out += buf;
}

}  // namespace detail

namespace detail {

/// The head of a Chrome trace up to its first event (`base_ns`: `baseTimeNanoseconds`).
inline std::string chrome_trace_head(std::int64_t base_ns, std::string_view name) {
  return "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": " +
         std::to_string(base_ns) + ", \"otherData\": {\"producer\": \"recorder\", \"model\": \"" +
         json_escape(name) + "\"},\n\"traceEvents\": [\n";
}
inline constexpr std::string_view chrome_trace_tail = "\n]}\n";

/// The name of span `s`'s event: its layer key ("layer1.0", "relu#1"), but the model's class
/// ("ResNet") for the root call, whose key "<root>" names no module a reader knows.
inline std::string_view chrome_span_name(const TimedSpan& s) {
  return s.path.empty() && s.parent < 0 && !s.class_name.empty() ? std::string_view(s.class_name)
                                                                 : std::string_view(s.key);
}

/// `runs` as the events of process `pid`, named `process` (its `M` events first), each after
/// ",\n" but the first: see `chrome_trace_json`.
inline void append_chrome_events(std::string& out, const std::vector<TimedRun>& runs,
                                 std::string_view process, int pid) {
  const std::string pid_text = std::to_string(pid);
  const auto name_event = [&](bool first, std::string_view what, int tid, std::string_view value) {
    if (!first) out += ",\n";
    out += "{\"ph\": \"M\", \"name\": \"";
    out += what;
    out += "\", \"pid\": " + pid_text + ", \"tid\": " + std::to_string(tid) +
           ", \"args\": {\"name\": \"" + json_escape(value) + "\"}}";
  };
  name_event(true, "process_name", 0, process);
  name_event(false, "thread_name", 1, "forward");
  const bool any_backward = std::any_of(runs.begin(), runs.end(), [](const TimedRun& r) {
    return std::any_of(r.backward_ticks.begin(), r.backward_ticks.end(),
                       [](const auto& t) { return t.first != 0; });
  });
  if (any_backward) name_event(false, "thread_name", 2, "backward");
  const std::int64_t gap = runs.empty() ? 0 : runs.front().duration_ns / 10 + 1000;
  std::int64_t offset = 0;
  const auto event = [&](std::string_view cat, std::string_view event_name, std::int64_t ts,
                         std::int64_t dur, int tid = 1) {
    out += ",\n{\"ph\": \"X\", \"cat\": \"";
    out += cat;
    out += "\", \"name\": \"";
    out += json_escape(event_name);
    out += "\", \"pid\": " + pid_text + ", \"tid\": ";
    out += tid == 1 ? '1' : '2';
    out += ", \"ts\": ";
    append_micros(out, ts);
    out += ", \"dur\": ";
    append_micros(out, dur);
    out += ", \"args\": {";
  };
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const TimedRun& run = runs[r];
    for (const TimedSpan& s : run.spans) {
      event("user_annotation", chrome_span_name(s), offset + s.start_ns, s.duration_ns);
      out += "\"Module Hierarchy\": \"" + json_escape(s.path) + "\", \"module_type\": \"" +
             json_escape(s.class_name) + "\", \"run\": " + std::to_string(r) +
             ", \"Input Dims\": [";
      for (std::size_t i = 0; i < s.input_dims.size(); ++i) {
        if (i > 0) out += ", ";
        out += to_string(Shape(s.input_dims[i]));
      }
      out += "]}}";
    }
    for (const TimedOp& op : run.ops) {
      event("cpu_op", run.name_of(op), offset + op.start_ns, op.duration_ns);
      out += "\"Module Hierarchy\": \"";
      if (op.parent >= 0) out += json_escape(run.spans[static_cast<std::size_t>(op.parent)].path);
      out += "\", \"run\": " + std::to_string(r) + ", \"Input Dims\": [";
      const std::span<const TimedInput> inputs = run.inputs_of(op);
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (i > 0) out += ", ";
        out += to_string(run.dims_of(inputs[i]));
      }
      out += "], \"Input type\": [";
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (i > 0) out += ", ";
        out += '"';
        out += json_escape(run.dtype_of(inputs[i]));
        out += '"';
      }
      out += "]}}";
    }
    std::int64_t run_end = run.duration_ns;
    for (const TimedSpan& s : backward_spans(run)) {
      event("backward", std::string(chrome_span_name(s)) + " (backward)", offset + s.start_ns,
            s.duration_ns, 2);
      out += "\"Module Hierarchy\": \"" + json_escape(s.path) + "\", \"module_type\": \"" +
             json_escape(s.class_name) + "\", \"run\": " + std::to_string(r) + "}}";
      run_end = std::max(run_end, s.start_ns + s.duration_ns);
    }
    offset += run_end + gap;
  }
}

}  // namespace detail

/// The runs as Chrome Trace Event JSON shaped like PyTorch's profiler (Kineto) writes it, for
/// Perfetto and `chrome://tracing`: one `X` event per module call (`cat` `user_annotation`,
/// `args` with `Module Hierarchy`, the path, `module_type`, `Input Dims` and `run`) and one per
/// op (`cat` `cpu_op`, `args` with `Input Dims`, `Input type`, the enclosing call's `Module
/// Hierarchy` and `run`); `ts`/`dur` in microseconds with nanosecond decimals from the first
/// run's start; process and thread names as `M` events. Runs are laid side by side in time, 10%
/// of the first run's length apart, on one thread, so spans nest perfectly (Perfetto needs it).
/// Module calls are named by their layer key ("layer1.0", "relu#1"), the root call by the
/// model's class ("ResNet"), as the profiler names a module's span by its module.
/// Backward spans (`TimingOptions::backward`), named `<name> (backward)`, `cat` `backward`, are
/// on a second thread named "backward", after their forward. The runs of many ranks, one
/// process each: `gather_chrome_trace` (distributed.hpp).
inline std::string chrome_trace_json(const std::vector<TimedRun>& runs, std::string_view name) {
  std::string out = detail::chrome_trace_head(runs.empty() ? 0 : runs.front().epoch_ns, name);
  detail::append_chrome_events(out, runs, "recorder: " + std::string(name) + " forward", 1);
  out += detail::chrome_trace_tail;
  return out;
}

namespace backend {

/// The runs of a `record::Timing` as a Chrome/Perfetto trace (`chrome_trace_json`), through the
/// render entry points: `render_to_file(trace, {}, "resnet", backend::ChromeTrace{.runs =
/// &timing.runs()})` writes `resnet.trace.json`. The trace gives the name (`graph_name` first).
struct ChromeTrace {
  static constexpr std::string_view extension = ".trace.json";

  const std::vector<TimedRun>* runs = nullptr;  ///< `&timing.runs()`

  void render(const Trace& trace, const RenderOptions& options, std::ostream& os) const {
    if (runs == nullptr)
      throw std::invalid_argument(
          "recorder: backend::ChromeTrace needs the runs of a record::Timing: "
          "backend::ChromeTrace{.runs = &timing.runs()}");
    os << chrome_trace_json(*runs,
                            options.graph_name.empty() ? trace.model_name : options.graph_name);
  }
};

}  // namespace backend

}  // namespace recorder
