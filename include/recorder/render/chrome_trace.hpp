#pragma once
/// The runs of a timing as Chrome Trace Event JSON (`chrome_trace_json`, `backend::ChromeTrace`),
/// the shape PyTorch's profiler writes, for Perfetto and `chrome://tracing`.

#include <recorder/detail/json_writer.hpp>
#include <recorder/graph/timed_run.hpp>
#include <recorder/graph/trace.hpp>
#include <recorder/render/options.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace recorder {

namespace detail {

/// The trace's events: one a line, the closing bracket on a line of its own.
inline constexpr JsonLayout chrome_events{.lines = true, .close_on_line = true};

/// Writes a Chrome trace to `out`: its head (`base_ns`: `baseTimeNanoseconds`), the events
/// `events(w)` writes into the `traceEvents` list, and its end.
template <class Events>
void write_chrome_trace(std::string& out, std::int64_t base_ns, std::string_view name,
                        Events&& events) {
  JsonWriter w(out, json_one_line);
  w.begin_object();
  w.field("schemaVersion", 1);
  w.field("displayTimeUnit", "ms");
  w.field("baseTimeNanoseconds", base_ns);
  w.key("otherData");
  w.begin_object();
  w.field("producer", "recorder");
  w.field("model", name);
  w.end_object();
  w.break_line();
  w.key("traceEvents");
  w.begin_array(chrome_events);
  std::forward<Events>(events)(w);
  w.end_array();
  w.end_object();
  out += '\n';
}

/// The name of span `s`'s event: its layer key ("layer1.0", "relu#1"), but the model's class
/// ("ResNet") for the root call, whose key "<root>" names no module a reader knows.
inline std::string_view chrome_span_name(const TimedSpan& s) {
  return s.path.empty() && s.parent < 0 && !s.class_name.empty() ? std::string_view(s.class_name)
                                                                 : std::string_view(s.key);
}

/// Writes `runs` as the events of process `pid`, named `process` (its `M` events first), into
/// the current list of `w`: see `chrome_trace_json`.
inline void append_chrome_events(JsonWriter& w, const std::vector<TimedRun>& runs,
                                 std::string_view process, int pid) {
  const auto name_event = [&](std::string_view what, int tid, std::string_view value) {
    w.begin_object(json_one_line);
    w.field("ph", "M");
    w.field("name", what);
    w.field("pid", pid);
    w.field("tid", tid);
    w.key("args");
    w.begin_object();
    w.field("name", value);
    w.end_object();
    w.end_object();
  };
  name_event("process_name", 0, process);
  name_event("thread_name", 1, "forward");
  const bool any_backward = std::any_of(runs.begin(), runs.end(), [](const TimedRun& r) {
    return std::any_of(r.backward_ticks.begin(), r.backward_ticks.end(),
                       [](const auto& t) { return t.first != 0; });
  });
  if (any_backward) name_event("thread_name", 2, "backward");
  const std::int64_t gap = runs.empty() ? 0 : runs.front().duration_ns / 10 + 1000;
  std::int64_t offset = 0;
  // Opens an `X` event and its `args`; the caller writes the arguments and closes both.
  const auto event = [&](std::string_view cat, std::string_view event_name, std::int64_t ts,
                         std::int64_t dur, int tid = 1) {
    w.begin_object(json_one_line);
    w.field("ph", "X");
    w.field("cat", cat);
    w.field("name", event_name);
    w.field("pid", pid);
    w.field("tid", tid);
    w.key("ts");
    w.thousandths(ts);
    w.key("dur");
    w.thousandths(dur);
    w.key("args");
    w.begin_object();
  };
  const auto end_event = [&] {
    w.end_object();
    w.end_object();
  };
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const TimedRun& run = runs[r];
    for (const TimedSpan& s : run.spans) {
      event("user_annotation", chrome_span_name(s), offset + s.start_ns, s.duration_ns);
      w.field("Module Hierarchy", s.path);
      w.field("module_type", s.class_name);
      w.field("run", r);
      w.key("Input Dims");
      w.begin_array();
      for (const std::vector<std::int64_t>& dims : s.input_dims) w.numbers(dims);
      w.end_array();
      end_event();
    }
    for (const TimedOp& op : run.ops) {
      event("cpu_op", run.name_of(op), offset + op.start_ns, op.duration_ns);
      w.field("Module Hierarchy",
              op.parent >= 0 ? std::string_view(run.spans[static_cast<std::size_t>(op.parent)].path)
                             : std::string_view());
      w.field("run", r);
      const std::span<const TimedInput> inputs = run.inputs_of(op);
      w.key("Input Dims");
      w.begin_array();
      for (const TimedInput& in : inputs) w.numbers(run.dims_of(in));
      w.end_array();
      w.key("Input type");
      w.begin_array();
      for (const TimedInput& in : inputs) w.string(run.dtype_of(in));
      w.end_array();
      end_event();
    }
    std::int64_t run_end = run.duration_ns;
    for (const TimedSpan& s : backward_spans(run)) {
      event("backward", std::string(chrome_span_name(s)) + " (backward)", offset + s.start_ns,
            s.duration_ns, 2);
      w.field("Module Hierarchy", s.path);
      w.field("module_type", s.class_name);
      w.field("run", r);
      end_event();
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
  std::string out;
  detail::write_chrome_trace(
      out, runs.empty() ? 0 : runs.front().epoch_ns, name, [&](detail::JsonWriter& w) {
        detail::append_chrome_events(w, runs, "recorder: " + std::string(name) + " forward", 1);
      });
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
