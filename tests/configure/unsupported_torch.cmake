# cmake -DSOURCE=<recorder> -DVERSION=<x.y.z> -DWORK=<dir> -DGENERATOR=<g> -P unsupported_torch.cmake
#
# Writes a Torch CMake package of version VERSION into WORK, configures recorder against it and
# passes iff the configuration fails with recorder's one line for an unsupported libtorch.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/Torch")
file(WRITE "${WORK}/Torch/TorchConfigVersion.cmake" "set(PACKAGE_VERSION \"${VERSION}\")
set(PACKAGE_VERSION_COMPATIBLE TRUE)\n")
file(WRITE "${WORK}/Torch/TorchConfig.cmake" "add_library(torch INTERFACE IMPORTED GLOBAL)
set(Torch_FOUND TRUE)\n")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}/build" -G "${GENERATOR}"
          "-DTorch_DIR=${WORK}/Torch" -DRECORDER_BUILD_TESTS=OFF -DRECORDER_BUILD_EXAMPLES=OFF
          -DRECORDER_BUILD_CLI=OFF -DRECORDER_BUILD_BENCHMARKS=OFF
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(expect "recorder: libtorch ${VERSION} (${WORK}/Torch) is not supported: use libtorch 1.13 or 2.5 or newer")
if(rc EQUAL 0)
  message(FATAL_ERROR "configured against libtorch ${VERSION}, but it must not:\n${out}${err}")
endif()
string(REGEX REPLACE "[ \n]+" " " flat "${err}")
string(FIND "${flat}" "${expect}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the error does not say\n  ${expect}\nit says:\n${err}")
endif()
message(STATUS "refused libtorch ${VERSION}: ${expect}")
