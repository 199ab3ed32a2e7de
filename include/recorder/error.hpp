#pragma once
/// The exceptions of tracing: a traced forward's (where it failed, and the partial trace), and a
/// recording claimed by two forwards at once.

#include <recorder/graph/trace.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace recorder {

/// Thrown when a traced forward fails. `what()` names the op and the module path; the
/// original exception is nested (`std::rethrow_if_nested`). After `Tracer::run` the partial
/// trace recorded up to the failure is attached and renders like any other trace.
class TraceError : public std::runtime_error {
 public:
  explicit TraceError(Failure f) : std::runtime_error(describe(f)), failure_(std::move(f)) {}

  const Failure& failure() const noexcept { return failure_; }

  /// The trace recorded up to the failure; null until `Tracer::run` attaches it.
  const std::shared_ptr<const Trace>& partial_trace() const noexcept { return trace_; }
  void attach(std::shared_ptr<const Trace> t) noexcept { trace_ = std::move(t); }

  static std::string describe(const Failure& f) {
    std::string s = "recorder: ";
    if (!f.op.empty())
      s += "op '" + f.op + "' failed";
    else
      s += "forward failed";
    s += " in module ";
    s += f.module_path.empty() ? std::string("<root>") : "'" + f.module_path + "'";
    if (!f.module_class.empty()) s += " (" + f.module_class + ")";
    s += ": " + f.message;
    return s;
  }

 private:
  Failure failure_;
  std::shared_ptr<const Trace> trace_;
};

/// Thrown when a forward would record into a recording another forward is recording into (a
/// policy handle shared by tracers on two threads): refused before anything is recorded, so
/// both the recording and the other forward are untouched.
class RecordingBusy : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace recorder
