# Helpers for recorder's own tests, examples and benchmarks.
#
#   recorder_strict_warnings(<target>)
#   recorder_sanitize(<target>)
#   recorder_add_test(<name> SOURCES <file>... [TORCH | RUNS_LIBTORCH] [LABELS <label>...]
#                     [WILL_FAIL])
#   recorder_add_compile_fail_test(<name> SOURCE <file> [EXPECT <regex>] [TORCH] [WILL_FAIL]
#                                  [LABELS <label>...])
#
# Tests use Boost.Test, dynamically linked (BOOST_TEST_DYN_LINK is defined for you: do not
# define it again). Exactly one source of each test executable defines BOOST_TEST_MODULE
# before including <boost/test/unit_test.hpp>.
#
# TORCH links recorder::recorder instead of recorder::core and labels the test `torch`
# (else `fast`). With RECORDER_WITH_TORCH=OFF, TORCH tests are skipped. RUNS_LIBTORCH: a torch-free
# test program that runs libtorch programs (the command line): linked to recorder::core, labelled
# `torch`. With RECORDER_TORCH_FREE_TESTS=OFF (the second libtorch leg), only TORCH and
# RUNS_LIBTORCH tests are added.
include_guard(GLOBAL)

find_package(Boost 1.74 REQUIRED COMPONENTS unit_test_framework)

set(RECORDER_TESTING_DIR "${CMAKE_CURRENT_LIST_DIR}")

# The Pythons of the tests (scripts/test.sh sets all three; see README, "libtorch versions"):
#   RECORDER_PYTHON3        the Python whose torch is the libtorch under test: Debian's python3
#                           (python3-torch, python3-torchvision) by default, PyTorch 2.13's from
#                           the project's venv on the 2.x leg. It writes the TorchScript test models
#                           into RECORDER_SCRIPT_MODELS (the fixture `script_models` of
#                           tests/script; cli/tests, the examples and bench_script use them too)
#                           and checks the files written for Python; configuring fails when its
#                           torch is not the libtorch's version.
#   RECORDER_OTHER_PYTHON   optional: a Python with the other leg's torch. It writes the same
#                           models into RECORDER_OTHER_SCRIPT_MODELS (script-models/torch-<M.m>):
#                           the files a newer PyTorch saved, refused on 1.13; the files an older
#                           one saved, traced on 2.x; and torchvision's models where the leg's
#                           Python has no torchvision (copied into RECORDER_SCRIPT_MODELS).
#   RECORDER_PEERS_PYTHON   optional: a Python with torchinfo 1.8.0 and torchview 0.2.7, run live
#                           by the parity tests (cli/tests/peers_test.cpp).
#
# Not given, RECORDER_PYTHON3 is the first Python whose torch is the libtorch under test, among:
# the venv or Python installation that holds the libtorch found (a pip wheel's), Debian's
# /usr/bin/python3, python3 on PATH (recorder_tests_python below).
# Debian's python3 itself, for the torch-free checks that need Debian's python3-jsonschema.
find_program(RECORDER_SYSTEM_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
set(RECORDER_OTHER_PYTHON "" CACHE FILEPATH "A Python whose torch is the other libtorch leg's")
set(RECORDER_PEERS_PYTHON "" CACHE FILEPATH "A Python with torchinfo 1.8.0 and torchview 0.2.7")
set(RECORDER_SCRIPT_MODELS "${CMAKE_BINARY_DIR}/script-models")

# _recorder_python_probe(<python> <out-prefix>): <out>_TORCH ("1.13", "" without torch) and
# <out>_VISION (TRUE when torchvision imports).
function(_recorder_python_probe python out)
  set(torch "")
  set(vision FALSE)
  if(python)
    execute_process(COMMAND "${python}" -c
      "import torch; v = torch.__version__.split('.'); print(v[0] + '.' + v[1])"
      RESULT_VARIABLE rc OUTPUT_VARIABLE v OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0)
      set(torch "${v}")
      execute_process(COMMAND "${python}" -c "import torchvision"
                      RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
      if(rc EQUAL 0)
        set(vision TRUE)
      endif()
    endif()
  endif()
  set(${out}_TORCH "${torch}" PARENT_SCOPE)
  set(${out}_VISION "${vision}" PARENT_SCOPE)
endfunction()

# recorder_tests_python(): sets RECORDER_PYTHON3 (cached) when it is not given, to the first
# candidate Python whose torch has the libtorch's version; with none, configuring fails naming
# each candidate and the torch it has.
function(recorder_tests_python)
  if(RECORDER_PYTHON3)
    return()
  endif()
  set(candidates "")
  if(Torch_DIR)
    # A wheel's Torch_DIR is <prefix>/lib/pythonX.Y/site-packages/torch/share/cmake/Torch; a
    # venv's root holds pyvenv.cfg.
    get_filename_component(dir "${Torch_DIR}" ABSOLUTE)
    foreach(i RANGE 8)
      if(EXISTS "${dir}/pyvenv.cfg")
        list(APPEND candidates "${dir}/bin/python3" "${dir}/bin/python")
        break()
      endif()
      get_filename_component(dir "${dir}" DIRECTORY)
    endforeach()
    if(Torch_DIR MATCHES "^(.*)/lib/python([0-9]+\\.[0-9]+)/(site|dist)-packages/torch/")
      list(APPEND candidates "${CMAKE_MATCH_1}/bin/python${CMAKE_MATCH_2}"
                             "${CMAKE_MATCH_1}/bin/python3")
    endif()
  endif()
  list(APPEND candidates /usr/bin/python3)
  find_program(_recorder_path_python3 NAMES python3 NO_CACHE)
  if(_recorder_path_python3)
    list(APPEND candidates "${_recorder_path_python3}")
  endif()
  list(REMOVE_DUPLICATES candidates)
  set(tried "")
  foreach(py IN LISTS candidates)
    if(NOT EXISTS "${py}")
      continue()
    endif()
    _recorder_python_probe("${py}" _c)
    if(_c_TORCH STREQUAL RECORDER_TORCH_VERSION)
      set(RECORDER_PYTHON3 "${py}" CACHE FILEPATH
          "The tests' Python: its torch is the libtorch under test" FORCE)
      message(STATUS "recorder: the tests' Python is ${py} (torch ${_c_TORCH})")
      return()
    endif()
    if(_c_TORCH STREQUAL "")
      list(APPEND tried "${py} (no torch)")
    else()
      list(APPEND tried "${py} (torch ${_c_TORCH})")
    endif()
  endforeach()
  list(JOIN tried ", " tried)
  message(FATAL_ERROR "recorder: the tests need a Python whose torch is the libtorch under test "
          "(${RECORDER_TORCH_VERSION}), and none was found (tried: ${tried}): pass "
          "-DRECORDER_PYTHON3=<that python>, or configure without -DRECORDER_BUILD_TESTS=ON")
endfunction()
if(RECORDER_WITH_TORCH AND RECORDER_BUILD_TESTS)
  recorder_tests_python()
elseif(NOT RECORDER_PYTHON3)
  # Without libtorch, for the torch-free checks run in Python (the viewer's generated assets).
  set(RECORDER_PYTHON3 "${RECORDER_SYSTEM_PYTHON3}")
endif()
if(NOT RECORDER_SYSTEM_PYTHON3)
  set(RECORDER_SYSTEM_PYTHON3 "${RECORDER_PYTHON3}")
endif()

set(RECORDER_OTHER_SCRIPT_MODELS "")
# What a test that reads the other PyTorch's files requires (FIXTURES_REQUIRED).
set(RECORDER_SCRIPT_FIXTURES script_models)
set(RECORDER_VISION_PYTHON "")  # the Python that writes (and checks) torchvision's models
if(RECORDER_WITH_TORCH AND RECORDER_BUILD_TESTS AND RECORDER_PYTHON3)
  _recorder_python_probe("${RECORDER_PYTHON3}" _py)
  if(NOT _py_TORCH STREQUAL RECORDER_TORCH_VERSION)
    message(FATAL_ERROR "recorder: the tests' Python ${RECORDER_PYTHON3} has torch '${_py_TORCH}', "
            "not the libtorch under test (${RECORDER_TORCH_VERSION}): pass "
            "-DRECORDER_PYTHON3=<a python with torch ${RECORDER_TORCH_VERSION}> (scripts/test.sh does)")
  endif()
  if(_py_VISION)
    set(RECORDER_VISION_PYTHON "${RECORDER_PYTHON3}")
  endif()
  if(RECORDER_OTHER_PYTHON)
    _recorder_python_probe("${RECORDER_OTHER_PYTHON}" _other)
    if(_other_TORCH STREQUAL "" OR _other_TORCH STREQUAL RECORDER_TORCH_VERSION)
      message(FATAL_ERROR "recorder: RECORDER_OTHER_PYTHON ${RECORDER_OTHER_PYTHON} has torch "
              "'${_other_TORCH}': it must have the other leg's torch (not ${RECORDER_TORCH_VERSION})")
    endif()
    set(RECORDER_OTHER_SCRIPT_MODELS "${RECORDER_SCRIPT_MODELS}/torch-${_other_TORCH}")
    list(APPEND RECORDER_SCRIPT_FIXTURES script_models_other)
    if(NOT RECORDER_VISION_PYTHON AND _other_VISION)
      set(RECORDER_VISION_PYTHON "${RECORDER_OTHER_PYTHON}")
    endif()
  else()
    message(WARNING "recorder: RECORDER_OTHER_PYTHON is not set: the tests of files saved by another "
            "PyTorch are disabled (scripts/test.sh sets it)")
  endif()
  if(NOT RECORDER_VISION_PYTHON)
    message(WARNING "recorder: no Python with torchvision: the tests of torchvision's models fail "
            "(install python3-torchvision, or set RECORDER_OTHER_PYTHON to Debian's python3)")
  endif()
endif()

# The Python that writes the tests' torch.export archives (tests/export/make_exports.py): the
# first of the leg's, the other leg's and the peers' Pythons whose torch has torch.export.save's
# PT2 archive (2.8 or later); on both legs the venv's 2.13. Empty: the .pt2 tests fail, saying so.
set(RECORDER_EXPORT_PYTHON "")
if(RECORDER_WITH_TORCH AND RECORDER_BUILD_TESTS)
  foreach(py IN ITEMS "${RECORDER_PYTHON3}" "${RECORDER_OTHER_PYTHON}" "${RECORDER_PEERS_PYTHON}")
    if(py AND NOT RECORDER_EXPORT_PYTHON)
      _recorder_python_probe("${py}" _export)
      if(_export_TORCH VERSION_GREATER_EQUAL 2.8)
        set(RECORDER_EXPORT_PYTHON "${py}")
      endif()
    endif()
  endforeach()
endif()
set(RECORDER_EXPORT_MODELS "${CMAKE_BINARY_DIR}/export-models")

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

# The project's own code (tests, examples, benchmarks) builds warning-free. GCC 13 and later
# (Debian 13's g++ 14) report -Wmaybe-uninitialized inside libstdc++'s std::vector and
# std::function inlined into recorder's observer at -O2/-O3, false positives measured against
# libtorch 2.6 (../shared/research/libtorch2.md): a warning there, never an error.
function(recorder_strict_warnings target)
  target_compile_options(${target} PRIVATE
    "$<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-Wall;-Wextra;-Wpedantic;-Werror>"
    "$<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_GREATER_EQUAL:$<CXX_COMPILER_VERSION>,13>>:-Wno-error=maybe-uninitialized>"
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
  cmake_parse_arguments(PARSE_ARGV 1 arg "TORCH;RUNS_LIBTORCH;WILL_FAIL" "" "SOURCES;LABELS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "recorder_add_test(${name}): unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "recorder_add_test(${name}): SOURCES is required")
  endif()
  if(NOT arg_TORCH AND NOT arg_RUNS_LIBTORCH AND NOT RECORDER_TORCH_FREE_TESTS)
    return()
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

  if(arg_TORCH OR arg_RUNS_LIBTORCH)
    set(kind torch)
    # Expected outputs that differ by libtorch (tests/render/golden.hpp's `.torch2` files).
    string(REGEX MATCH "^[0-9]+" major "${RECORDER_TORCH_VERSION}")
    if(major)
      target_compile_definitions(${name} PRIVATE RECORDER_TORCH_MAJOR=${major})
    endif()
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
  if(NOT arg_TORCH AND NOT RECORDER_TORCH_FREE_TESTS)
    return()
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
