#pragma once
/// Test helpers: the messages of the exceptions a piece of code throws, for exact comparisons.

#include <recorder/error.hpp>

#include <exception>
#include <string>

namespace test {

/// The message of the `E` that `f` throws ("<no exception>" when it returns).
template <class E = std::exception, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no exception>";
}

/// The message of the exception nested in a `TraceError` `f` throws: what the model itself
/// threw ("<no exception>" when `f` throws none).
template <class F>
std::string nested_error_of(F&& f) {
  try {
    f();
  } catch (const recorder::TraceError& e) {
    try {
      std::rethrow_if_nested(e);
    } catch (const std::exception& inner) {
      return inner.what();
    }
    return std::string("<nothing nested in> ") + e.what();
  }
  return "<no exception>";
}

}  // namespace test
