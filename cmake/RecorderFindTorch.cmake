# Finding libtorch, with a clear line where CMake would otherwise fail obscurely or silently take
# another libtorch than the one asked for.
#
#   recorder_find_torch()    a macro (find_package must run in the caller's scope): checks
#                            CMAKE_PREFIX_PATH, runs find_package(Torch GLOBAL), then
#                            checks that the libtorch found is the one asked for
#
# Refused at configure time, each with one line naming what was found and what to do:
# - CMAKE_PREFIX_PATH given but empty: the command meant to print libtorch's prefix printed
#   nothing (`$(python -c 'import torch.utils; ...')` with a Python that has no torch);
# - a CUDA build of libtorch (PyPI's default Linux wheel) where no CUDA compiler is found: its
#   CMake package needs the CUDA toolkit, and fails deep inside Caffe2's files without it;
# - CMAKE_PREFIX_PATH naming a libtorch (a folder with Torch/TorchConfig.cmake, or a path with
#   "torch" in it) while find_package took another one: a system libtorch found instead of a
#   missing wheel, or a Torch_DIR cached by an earlier configure;
# - a Torch package whose Caffe2 package (its targets) comes from another libtorch.
include_guard(GLOBAL)

# <dir>/Torch/TorchConfig.cmake under one of the layouts find_package searches, or "".
function(_recorder_torch_config_under prefix out)
  set(found "")
  foreach(sub IN ITEMS "" "share/cmake/" "lib/cmake/" "lib64/cmake/" "share/"
                       "lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/")
    if(found STREQUAL "" AND EXISTS "${prefix}/${sub}Torch/TorchConfig.cmake")
      set(found "${prefix}/${sub}Torch")
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# The CUDA check: the Caffe2Config.cmake beside <torch_dir> (a folder holding TorchConfig.cmake)
# includes public/cuda.cmake under `if(1)`/`if(ON)` in a CUDA build.
function(_recorder_refuse_cuda_without_toolkit torch_dir)
  set(caffe2 "${torch_dir}/../Caffe2/Caffe2Config.cmake")
  if(NOT EXISTS "${caffe2}")
    return()
  endif()
  file(READ "${caffe2}" text)
  if(NOT text MATCHES "if\\((1|ON|TRUE)\\)[ \t\r\n]*# The file public/cuda\\.cmake")
    return()
  endif()
  if(DEFINED CMAKE_CUDA_COMPILER)
    set(nvcc "${CMAKE_CUDA_COMPILER}")
  else()
    find_program(RECORDER_NVCC NAMES nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATH_SUFFIXES bin
                 PATHS /usr/local/cuda/bin)
    set(nvcc "${RECORDER_NVCC}")
  endif()
  if(nvcc AND EXISTS "${nvcc}")
    return()
  endif()
  get_filename_component(where "${torch_dir}/../../.." ABSOLUTE)
  message(FATAL_ERROR "recorder: the libtorch in ${where} is a CUDA build, and no CUDA compiler "
          "(nvcc) was found: its CMake package needs the CUDA toolkit. Use PyTorch's CPU build "
          "(pip install torch --index-url https://download.pytorch.org/whl/cpu) or pytorch.org's "
          "CPU libtorch, or install the CUDA toolkit")
endfunction()

function(_recorder_torch_prefix_checks)
  if(DEFINED CMAKE_PREFIX_PATH AND "${CMAKE_PREFIX_PATH}" STREQUAL "" AND NOT Torch_DIR)
    message(FATAL_ERROR "recorder: CMAKE_PREFIX_PATH is empty: the command meant to print "
            "libtorch's prefix printed nothing (for a pip torch, "
            "`<venv>/bin/python -c 'import torch.utils; print(torch.utils.cmake_prefix_path)'` "
            "must print a folder: is torch installed in that Python?). Give libtorch's prefix, or "
            "drop the option (-UCMAKE_PREFIX_PATH) to use the system's libtorch")
  endif()
  set(dirs "")
  if(Torch_DIR)
    list(APPEND dirs "${Torch_DIR}")
  endif()
  foreach(p IN LISTS CMAKE_PREFIX_PATH)
    _recorder_torch_config_under("${p}" d)
    if(d)
      list(APPEND dirs "${d}")
    endif()
  endforeach()
  foreach(d IN LISTS dirs)
    _recorder_refuse_cuda_without_toolkit("${d}")
  endforeach()
endfunction()

function(_recorder_torch_found_checks)
  if(NOT CMAKE_PREFIX_PATH OR NOT Torch_DIR)
    return()
  endif()
  file(REAL_PATH "${Torch_DIR}" found)
  set(asked "")
  set(holds "")
  foreach(p IN LISTS CMAKE_PREFIX_PATH)
    if(p STREQUAL "")
      continue()
    endif()
    get_filename_component(abs "${p}" ABSOLUTE)
    if(EXISTS "${abs}")
      file(REAL_PATH "${abs}" abs)
    endif()
    string(FIND "${found}/" "${abs}/" at)
    if(at EQUAL 0)
      return()  # found under a prefix the user gave
    endif()
    _recorder_torch_config_under("${abs}" d)
    string(TOLOWER "${p}" lower)
    if(d OR lower MATCHES "torch")
      list(APPEND asked "${p}")
      if(d)
        list(APPEND holds "${d}")
      endif()
    endif()
  endforeach()
  if(asked STREQUAL "")
    message(STATUS "recorder: libtorch found in ${Torch_DIR}, under none of CMAKE_PREFIX_PATH")
    return()
  endif()
  list(JOIN asked ", " asked_text)
  if(holds)
    list(GET holds 0 want)
    message(FATAL_ERROR "recorder: CMAKE_PREFIX_PATH names the libtorch in ${asked_text}, but "
            "CMake took the one in ${Torch_DIR} (Torch_DIR, cached by an earlier configure?): "
            "configure a new build folder, or pass -DTorch_DIR=${want}")
  endif()
  message(FATAL_ERROR "recorder: CMAKE_PREFIX_PATH names ${asked_text}, which holds no libtorch "
          "(no Torch/TorchConfig.cmake: torch not installed there, or a wheel without its C++ "
          "files?), and CMake took the one in ${Torch_DIR} instead. Give the folder "
          "torch.utils.cmake_prefix_path prints, or drop the option to use that libtorch")
endfunction()

# TorchConfig.cmake finds its Caffe2 package with PATHS, which come after the system's: given
# only Torch_DIR (no CMAKE_PREFIX_PATH), a wheel's TorchConfig takes Debian's Caffe2 when
# libtorch-dev is installed too, and the targets then mix the two libtorch builds. Point Caffe2
# at the one beside the Torch package asked for; after finding, refuse a mix that remains.
function(_recorder_torch_caffe2_beside)
  if(Torch_DIR AND NOT Caffe2_DIR AND EXISTS "${Torch_DIR}/../Caffe2/Caffe2Config.cmake")
    get_filename_component(dir "${Torch_DIR}/../Caffe2" ABSOLUTE)
    set(Caffe2_DIR "${dir}" CACHE PATH "The Caffe2 package beside Torch_DIR")
  endif()
endfunction()

function(_recorder_torch_caffe2_check)
  if(NOT Torch_DIR OR NOT Caffe2_DIR)
    return()
  endif()
  file(REAL_PATH "${Torch_DIR}/.." torch_parent)
  file(REAL_PATH "${Caffe2_DIR}/.." caffe2_parent)
  if(NOT torch_parent STREQUAL caffe2_parent)
    message(FATAL_ERROR "recorder: the libtorch package in ${Torch_DIR} took its Caffe2 package "
            "from ${Caffe2_DIR}, another libtorch: give libtorch's prefix in CMAKE_PREFIX_PATH "
            "(${torch_parent}), or pass -DCaffe2_DIR=${torch_parent}/Caffe2")
  endif()
endfunction()

macro(recorder_find_torch)
  _recorder_torch_prefix_checks()
  _recorder_torch_caffe2_beside()
  find_package(Torch QUIET GLOBAL)
  if(NOT Torch_FOUND)
    message(FATAL_ERROR "recorder: no libtorch found (no TorchConfig.cmake on CMake's search "
            "path): install Debian's libtorch-dev, or give libtorch's prefix with "
            "-DCMAKE_PREFIX_PATH=... (pytorch.org's libtorch folder, or what a pip torch's "
            "torch.utils.cmake_prefix_path prints), or configure with -DRECORDER_WITH_TORCH=OFF "
            "for recorder::core alone")
  endif()
  _recorder_torch_found_checks()
  _recorder_torch_caffe2_check()
endmacro()
