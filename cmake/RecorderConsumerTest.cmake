# cmake -DBUILD_DIR=... -DPREFIX=... -DCONSUMER_SOURCE=... -DCONSUMER_BUILD=...
#       -DGENERATOR=... -DCXX_COMPILER=... -DCTEST=... [-DCONFIG=...] -P RecorderConsumerTest.cmake
#
# Installs the build tree into PREFIX, then configures, builds and runs the consumer project
# against that prefix only (EXPECT_TORCH_DIR: the libtorch its find_package(recorder) must take;
# empty without libtorch). Any failing step fails the test.
foreach(v IN ITEMS BUILD_DIR PREFIX CONSUMER_SOURCE CONSUMER_BUILD GENERATOR CXX_COMPILER CTEST)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "RecorderConsumerTest.cmake: ${v} is not set")
  endif()
endforeach()
if(NOT CONFIG)
  set(CONFIG Release)
endif()

function(step what)
  message(STATUS "consumer: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${what} failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BUILD}")
step("install into ${PREFIX}"
  "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" --config "${CONFIG}")
step("configure"
  "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE}" -B "${CONSUMER_BUILD}" -G "${GENERATOR}"
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_BUILD_TYPE=${CONFIG}"
  "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DCMAKE_FIND_PACKAGE_PREFER_CONFIG=ON"
  "-DRECORDER_EXPECT_TORCH_DIR=${EXPECT_TORCH_DIR}")
step("build" "${CMAKE_COMMAND}" --build "${CONSUMER_BUILD}" --config "${CONFIG}")
step("run" "${CMAKE_COMMAND}" -E chdir "${CONSUMER_BUILD}" "${CTEST}" -C "${CONFIG}" -V)
