# cmake -DBUILD_DIR=<dir> -DTARGET=<tgt> [-DCONFIG=<cfg>] -DEXPECT_FILE=<file> -P RecorderCompileFail.cmake
#
# Passes iff building <tgt> fails and the build output matches the regex in <file>.
foreach(v IN ITEMS BUILD_DIR TARGET EXPECT_FILE)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "RecorderCompileFail.cmake: ${v} is not set")
  endif()
endforeach()
file(READ "${EXPECT_FILE}" expect)

set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
# The C locale keeps the compiler's quotes plain ASCII, so EXPECT need not guess them.
execute_process(
  COMMAND "${CMAKE_COMMAND}" -E env LC_ALL=C LANG=C
          "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}" ${config_args}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)

if(rc EQUAL 0)
  message("${out}")
  message(FATAL_ERROR "${TARGET}: compiled, but it must not.")
endif()
if(NOT out MATCHES "${expect}")
  message("${out}")
  message(FATAL_ERROR "${TARGET}: failed to compile, but the output above does not match\n  ${expect}")
endif()
message(STATUS "${TARGET}: fails to compile, as expected (matched \"${expect}\")")
