# cmake -DSOURCE=<recorder> -DCASE=<case> -DWORK=<dir> -DGENERATOR=<g> -P torch_prefix.cmake
#
# Configures recorder the way a user gets libtorch wrong and passes iff configuring stops with
# recorder's one line for it (cmake/RecorderFindTorch.cmake, RecorderTorchVersion.cmake). The libtorch packages here say only
# their version (nothing is compiled), written at test time:
#   empty_prefix   -DCMAKE_PREFIX_PATH= (a `$(python -c ...)` that printed nothing)
#   missing_wheel  CMAKE_PREFIX_PATH names a pip torch's folder that holds no libtorch, while
#                  another libtorch (Torch_DIR) is found
#   cached_other   CMAKE_PREFIX_PATH names a libtorch, Torch_DIR (cached earlier) another one
#   cuda_no_nvcc   a CUDA build of libtorch where no CUDA compiler is
#   no_tests_python  tests asked for, and no Python has torch of the libtorch's version
#   unsupported_<version>  a libtorch recorder does not support (2.0-2.4, older than 1.13)
file(REMOVE_RECURSE "${WORK}")

# A Torch package of version <version> in <dir>/Torch (and a Caffe2Config.cmake beside it).
function(fake_torch dir version cuda)
  file(MAKE_DIRECTORY "${dir}/Torch" "${dir}/Caffe2")
  file(WRITE "${dir}/Torch/TorchConfigVersion.cmake" "set(PACKAGE_VERSION \"${version}\")
set(PACKAGE_VERSION_COMPATIBLE TRUE)\n")
  file(WRITE "${dir}/Torch/TorchConfig.cmake" "add_library(torch INTERFACE IMPORTED GLOBAL)
set(Torch_FOUND TRUE)\n")
  file(WRITE "${dir}/Caffe2/Caffe2Config.cmake" "if(${cuda})
  # The file public/cuda.cmake exclusively uses CAFFE2_USE_*.
  message(FATAL_ERROR \"Your installed Caffe2 version uses CUDA but I cannot find the CUDA libraries\")
endif()\n")
endfunction()

set(args -DRECORDER_BUILD_TESTS=OFF)
set(wheel "${WORK}/venv/lib/python3.11/site-packages/torch/share/cmake")
if(CASE STREQUAL "empty_prefix")
  list(APPEND args "-DCMAKE_PREFIX_PATH=")
  set(expect "recorder: CMAKE_PREFIX_PATH is empty: the command meant to print libtorch's prefix printed nothing")
elseif(CASE STREQUAL "missing_wheel")
  fake_torch("${WORK}/system" 2.13.0 0)
  list(APPEND args "-DCMAKE_PREFIX_PATH=${wheel}" "-DTorch_DIR=${WORK}/system/Torch")
  set(expect "recorder: CMAKE_PREFIX_PATH names ${wheel}, which holds no libtorch (no Torch/TorchConfig.cmake")
elseif(CASE STREQUAL "cached_other")
  fake_torch("${wheel}" 2.13.0 0)
  fake_torch("${WORK}/system" 2.13.0 0)
  list(APPEND args "-DCMAKE_PREFIX_PATH=${wheel}" "-DTorch_DIR=${WORK}/system/Torch")
  set(expect "recorder: CMAKE_PREFIX_PATH names the libtorch in ${wheel}, but CMake took the one in ${WORK}/system/Torch (Torch_DIR, cached by an earlier configure?): configure a new build folder, or pass -DTorch_DIR=${wheel}/Torch")
elseif(CASE STREQUAL "cuda_no_nvcc")
  fake_torch("${wheel}" 2.13.0 1)
  list(APPEND args "-DCMAKE_PREFIX_PATH=${wheel}" "-DCMAKE_CUDA_COMPILER=${WORK}/no-cuda/nvcc")
  set(expect "recorder: the libtorch in ${WORK}/venv/lib/python3.11/site-packages/torch is a CUDA build, and no CUDA compiler (nvcc) was found")
elseif(CASE MATCHES "^unsupported_(.+)$")
  set(version "${CMAKE_MATCH_1}")
  fake_torch("${WORK}" "${version}" 0)
  list(APPEND args "-DTorch_DIR=${WORK}/Torch")
  set(expect "recorder: libtorch ${version} (${WORK}/Torch) is not supported: use libtorch 1.13 or 2.5 or newer")
elseif(CASE STREQUAL "no_tests_python")
  fake_torch("${WORK}/system" 2.7.0 0)
  set(args -DRECORDER_BUILD_TESTS=ON -DRECORDER_BUILD_EXAMPLES=OFF -DRECORDER_VERIFY_HEADERS=OFF
           "-DTorch_DIR=${WORK}/system/Torch")
  set(expect "recorder: the tests need a Python whose torch is the libtorch under test (2.7), and none was found (tried: ")
else()
  message(FATAL_ERROR "unknown CASE '${CASE}'")
endif()

execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}/build" -G "${GENERATOR}"
          -DRECORDER_BUILD_EXAMPLES=OFF -DRECORDER_BUILD_CLI=OFF -DRECORDER_BUILD_BENCHMARKS=OFF
          ${args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "configured (${CASE}), but it must not:\n${out}${err}")
endif()
string(REGEX REPLACE "[ \n]+" " " flat "${err}")
string(FIND "${flat}" "${expect}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the error does not say\n  ${expect}\nit says:\n${err}")
endif()
# One message, and CMake's own noise (Caffe2's CUDA error, find_package's advice) not reached.
string(FIND "${err}" "Caffe2" caffe2)
string(FIND "${err}" "Could not find a package configuration file" noise)
if(NOT caffe2 EQUAL -1 OR NOT noise EQUAL -1)
  message(FATAL_ERROR "recorder's line is not alone:\n${err}")
endif()
message(STATUS "refused (${CASE}): ${expect}")
