#pragma once
/// Version and compile-time knobs of recorder.

#define RECORDER_VERSION_MAJOR 0
#define RECORDER_VERSION_MINOR 1
#define RECORDER_VERSION_PATCH 0

namespace recorder {
/// The library version as "major.minor.patch".
inline constexpr const char* version = "0.1.0";
}  // namespace recorder
