# cmake -DROOT=<recorder> -P RecorderOptionsCheck.cmake
#
# README.md lists every RECORDER_* CMake option and cache setting the project defines (option,
# cmake_dependent_option, set(... CACHE ...)) as a row of its options table, `| \`NAME\` | default |`.
cmake_minimum_required(VERSION 3.25)
file(GLOB_RECURSE lists "${ROOT}/CMakeLists.txt" "${ROOT}/cmake/*.cmake" "${ROOT}/cli/*CMakeLists.txt"
     "${ROOT}/tests/*CMakeLists.txt" "${ROOT}/examples/*CMakeLists.txt"
     "${ROOT}/benchmarks/*CMakeLists.txt")
set(names "")
foreach(f IN LISTS lists)
  file(READ "${f}" text)
  string(REGEX MATCHALL "(option|cmake_dependent_option)\\((RECORDER_[A-Z0-9_]+)" found "${text}")
  string(REGEX MATCHALL "set\\((RECORDER_[A-Z0-9_]+) [^)]*CACHE" cached "${text}")
  foreach(m IN LISTS found cached)
    string(REGEX MATCH "RECORDER_[A-Z0-9_]+" n "${m}")
    list(APPEND names "${n}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES names)
list(SORT names)
file(READ "${ROOT}/README.md" readme)
set(missing "")
foreach(n IN LISTS names)
  if(NOT readme MATCHES "\n\\| `${n}` \\| [^|\n]+ \\|")
    list(APPEND missing "${n}")
  endif()
endforeach()
list(LENGTH names count)
if(missing)
  list(JOIN missing ", " missing)
  message(FATAL_ERROR "README.md's options table has no row (| `NAME` | default | ...) for: ${missing}")
endif()
message(STATUS "README.md lists all ${count} RECORDER_* options with their defaults")
