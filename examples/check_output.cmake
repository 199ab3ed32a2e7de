cmake_minimum_required(VERSION 3.25)
# Runs an example and compares its standard output with a golden file, byte for byte.
#   cmake -DPROGRAM=<exe> -DEXPECTED=<file> [-DARGS=<a;b>] [-DTORCH_MAJOR=2] [-DUPDATE=1]
#         -P check_output.cmake
execute_process(COMMAND "${PROGRAM}" ${ARGS}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}:\n${err}")
endif()
# An output that differs by libtorch (torchinfo's `Input size` under PyTorch 2.x) has a second
# file, <stem>.torch2.txt, for TORCH_MAJOR 2 and later; updating writes it only when it differs.
get_filename_component(dir "${EXPECTED}" DIRECTORY)
get_filename_component(stem "${EXPECTED}" NAME_WLE)
set(variant "${dir}/${stem}.torch2.txt")
if(UPDATE OR "$ENV{RECORDER_UPDATE_GOLDEN}")
  if(TORCH_MAJOR GREATER_EQUAL 2)
    file(READ "${EXPECTED}" base)
    if(out STREQUAL base)
      file(REMOVE "${variant}")
      return()
    endif()
    set(EXPECTED "${variant}")
  endif()
  file(WRITE "${EXPECTED}" "${out}")
  message(STATUS "updated ${EXPECTED}")
  return()
endif()
if(TORCH_MAJOR GREATER_EQUAL 2 AND EXISTS "${variant}")
  set(EXPECTED "${variant}")
endif()
file(READ "${EXPECTED}" expected)
if(NOT out STREQUAL expected)
  file(WRITE "${EXPECTED}.actual" "${out}")
  message(FATAL_ERROR "output of ${PROGRAM} differs from ${EXPECTED}; see ${EXPECTED}.actual\n"
                      "(RECORDER_UPDATE_GOLDEN=1 ctest -R example rewrites it after review)")
endif()
