#pragma once
/// Test helper: the message of the `std::runtime_error` a callable throws.

#include <stdexcept>
#include <string>

namespace recorder::testing {

/// `f()`'s exception message, or "<no exception>" when it returns normally.
inline std::string message_of(const auto& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "<no exception>";
}

}  // namespace recorder::testing
