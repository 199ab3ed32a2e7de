# Helpers for recorder's own tests, examples and benchmarks.
#
#   recorder_strict_warnings(<target>)
#   recorder_sanitize(<target>)
#   recorder_add_test(<name> SOURCES <file>... [TORCH] [LABELS <label>...] [WILL_FAIL])
#   recorder_add_compile_fail_test(<name> SOURCE <file> [EXPECT <regex>] [TORCH] [WILL_FAIL]
#                                  [LABELS <label>...])
#
# Tests use Boost.Test, dynamically linked (BOOST_TEST_DYN_LINK is defined for you: do not
# define it again). Exactly one source of each test executable defines BOOST_TEST_MODULE
# before including <boost/test/unit_test.hpp>.
#
# TORCH links recorder::recorder instead of recorder::core and labels the test `torch`
# (else `fast`). With RECORDER_WITH_TORCH=OFF, TORCH tests are skipped.
include_guard(GLOBAL)

find_package(Boost 1.74 REQUIRED COMPONENTS unit_test_framework)

set(RECORDER_TESTING_DIR "${CMAKE_CURRENT_LIST_DIR}")

# Debian's python3 (with python3-torch and python3-torchvision): /usr/bin/python3 first, then any
# python3 on PATH. It writes the TorchScript test models into RECORDER_SCRIPT_MODELS (the
# fixture `script_models` of tests/script; cli/tests, the script_model example and bench_script
# use them too) and checks files written for Python.
find_program(RECORDER_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT RECORDER_PYTHON3)
  find_program(RECORDER_PYTHON3 NAMES python3)
endif()
set(RECORDER_SCRIPT_MODELS "${CMAKE_BINARY_DIR}/script-models")

# libgloo-dev: ProcessGroupGloo's headers, for the programs that create a Gloo process group
# (examples/distributed_stats, tests/distributed, bench_distributed). <recorder/distributed.hpp>
# itself needs only c10d::ProcessGroup. scripts/setup.sh and scripts/test.sh install it; where
# it is missing, recorder_require_gloo registers a test that fails and says so.
find_path(RECORDER_GLOO_INCLUDE_DIR gloo/context.h)
function(recorder_require_gloo name)
  if(NOT RECORDER_GLOO_INCLUDE_DIR AND RECORDER_BUILD_TESTS AND NOT TEST ${name})
    message(WARNING "recorder: libgloo-dev is missing: ${name} is not built (its test fails)")
    add_test(NAME ${name} COMMAND sh -c
             "echo 'libgloo-dev is missing (gloo/context.h not found): scripts/test.sh installs it' >&2; exit 1")
    set_tests_properties(${name} PROPERTIES
                         LABELS "torch;distributed")
  endif()
endfunction()

# The project's own code (tests, examples, benchmarks) builds warning-free.
function(recorder_strict_warnings target)
  target_compile_options(${target} PRIVATE
    "$<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-Wall;-Wextra;-Wpedantic;-Werror>"
    "$<$<CXX_COMPILER_ID:MSVC>:/W4;/WX>")
endfunction()

# ASan + UBSan; every UB report is fatal.
function(recorder_sanitize target)
  set(flags -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_compile_options(${target} PRIVATE ${flags})
  target_link_options(${target} PRIVATE ${flags})
endfunction()

# The sanitizers' settings for test <name>: stop at the first report, with a stack trace.
function(recorder_sanitizer_environment name)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1;ASAN_OPTIONS=detect_stack_use_after_return=1")
endfunction()

# Picks recorder::core or recorder::recorder; sets <out> to "" when the TORCH target is absent.
function(_recorder_test_library out torch)
  if(torch)
    if(TARGET recorder::recorder)
      set(${out} recorder::recorder PARENT_SCOPE)
    else()
      set(${out} "" PARENT_SCOPE)
    endif()
  else()
    set(${out} recorder::core PARENT_SCOPE)
  endif()
endfunction()

function(recorder_add_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "TORCH;WILL_FAIL" "" "SOURCES;LABELS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "recorder_add_test(${name}): unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "recorder_add_test(${name}): SOURCES is required")
  endif()
  _recorder_test_library(lib "${arg_TORCH}")
  if(NOT lib)
    message(STATUS "recorder: skipping torch test ${name} (RECORDER_WITH_TORCH is OFF)")
    return()
  endif()

  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE ${lib} Boost::unit_test_framework)
  target_compile_definitions(${name} PRIVATE BOOST_TEST_DYN_LINK)
  recorder_strict_warnings(${name})

  if(arg_TORCH)
    set(kind torch)
  else()
    set(kind fast)
  endif()
  if(RECORDER_SANITIZE)  # torch-free tests (stage 2 of scripts/test.sh), model tests (stage 3)
    recorder_sanitize(${name})
  endif()

  add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY "${CMAKE_BINARY_DIR}")
  set(labels ${kind} ${arg_LABELS})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}")
  if(arg_WILL_FAIL)
    set_tests_properties(${name} PROPERTIES WILL_FAIL TRUE)
  endif()
  if(RECORDER_SANITIZE)
    recorder_sanitizer_environment(${name})
  endif()
endfunction()

# A source that must NOT compile, with a compiling twin.
#
# The test builds target <name> (an object library outside ALL) and passes iff the build fails
# and its output matches the expected regex (a CMake regex, matched against the compiler's
# output in the C locale). The twin <name>_twin is the same source compiled with
# RECORDER_COMPILE_FAIL_TWIN defined; it is part of ALL, so it must compile (without warnings).
#
# The regex is the source's first line, `// EXPECT: <regex>`, next to the code that must fail
# (as stdexec keeps its expected diagnostics), or EXPECT <regex> here. Expect the library's own
# words (its static_assert messages), not one compiler's: only language-level misuse, where
# recorder has no words of its own, expects GCC's and carries the label `gcc`.
#
#   recorder_add_compile_fail_test(compile_fail_tracer_not_a_policy
#     SOURCE tracer_not_a_policy.cpp TORCH)
#
# with, in the source:
#   // EXPECT: recorder: not a recording policy: add `using recording_policy_tag = void;`
#   #ifdef RECORDER_COMPILE_FAIL_TWIN
#   using T = recorder::Tracer<recorder::record::Structure>;   // the right way: compiles
#   #else
#   using T = recorder::Tracer<int>;                           // the misuse: must not compile
#   #endif
#
# Without TORCH the case links recorder::core, is labelled `fast` and runs in the torch-free
# sanitizer stage too. WILL_FAIL inverts the result: only for the harness's own sanity check
# (a valid source registered as failing must make the harness report a failure).
function(recorder_add_compile_fail_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "TORCH;WILL_FAIL" "SOURCE;EXPECT" "LABELS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "recorder_add_compile_fail_test(${name}): unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCE)
    message(FATAL_ERROR "recorder_add_compile_fail_test(${name}): SOURCE is required")
  endif()
  set(expect "${arg_EXPECT}")
  if(expect STREQUAL "")
    get_filename_component(source_path "${arg_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    file(READ "${source_path}" head LIMIT 4096)
    if(head MATCHES "^// EXPECT: ([^\n]+)")
      set(expect "${CMAKE_MATCH_1}")
    else()
      message(FATAL_ERROR "recorder_add_compile_fail_test(${name}): give EXPECT <regex>, or start "
                          "${arg_SOURCE} with the line `// EXPECT: <regex>`")
    endif()
  endif()
  _recorder_test_library(lib "${arg_TORCH}")
  if(NOT lib)
    message(STATUS "recorder: skipping torch compile-fail test ${name} (RECORDER_WITH_TORCH is OFF)")
    return()
  endif()

  foreach(tgt IN ITEMS ${name} ${name}_twin)
    if(tgt STREQUAL name)
      add_library(${tgt} OBJECT EXCLUDE_FROM_ALL ${arg_SOURCE})
    else()
      add_library(${tgt} OBJECT ${arg_SOURCE})
      target_compile_definitions(${tgt} PRIVATE RECORDER_COMPILE_FAIL_TWIN)
    endif()
    target_link_libraries(${tgt} PRIVATE ${lib})
    recorder_strict_warnings(${tgt})
  endforeach()

  # The regex goes through a file, so no character of it needs escaping on a command line.
  set(expect_file "${CMAKE_CURRENT_BINARY_DIR}/${name}.expect")
  file(WRITE "${expect_file}" "${expect}")
  add_test(NAME ${name}
    COMMAND "${CMAKE_COMMAND}"
      "-DBUILD_DIR=${CMAKE_BINARY_DIR}" "-DTARGET=${name}" "-DCONFIG=$<CONFIG>"
      "-DEXPECT_FILE=${expect_file}"
      -P "${RECORDER_TESTING_DIR}/RecorderCompileFail.cmake")
  if(arg_TORCH)
    set(kind torch)
  else()
    set(kind fast)
  endif()
  set(labels ${kind} compile_fail ${arg_LABELS})
  # Builds in one tree must not run concurrently (the generator's logs and dep files).
  set_tests_properties(${name} PROPERTIES
    LABELS "${labels}"
    RESOURCE_LOCK recorder_build_tree)
  if(arg_WILL_FAIL)
    set_tests_properties(${name} PROPERTIES WILL_FAIL TRUE)
  endif()
endfunction()
