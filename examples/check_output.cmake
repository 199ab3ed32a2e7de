cmake_minimum_required(VERSION 3.25)
# Runs an example and compares its standard output with a golden file, byte for byte.
#   cmake -DPROGRAM=<exe> -DEXPECTED=<file> [-DARGS=<a;b>] [-DUPDATE=1] -P check_output.cmake
execute_process(COMMAND "${PROGRAM}" ${ARGS}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}:\n${err}")
endif()
if(UPDATE OR "$ENV{RECORDER_UPDATE_GOLDEN}")
  file(WRITE "${EXPECTED}" "${out}")
  message(STATUS "updated ${EXPECTED}")
  return()
endif()
file(READ "${EXPECTED}" expected)
if(NOT out STREQUAL expected)
  file(WRITE "${EXPECTED}.actual" "${out}")
  message(FATAL_ERROR "output of ${PROGRAM} differs from ${EXPECTED}; see ${EXPECTED}.actual\n"
                      "(RECORDER_UPDATE_GOLDEN=1 ctest -R example rewrites it after review)")
endif()
