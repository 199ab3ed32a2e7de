# The libtorch versions recorder supports: 1.13 and 2.5 or newer (include/recorder/torch_version.hpp
# says why 2.0-2.4 are not). Anything else stops at configure time with one line.
#
#   recorder_check_torch_version()   after find_package(Torch); sets RECORDER_TORCH_VERSION
#                                    ("1.13", "2.13": major.minor) and RECORDER_TORCH_RUNPATH
#                                    (libtorch's library folder where the loader does not look
#                                    by itself, else "") in the caller's scope
include_guard(GLOBAL)

function(recorder_check_torch_version)
  set(version "${Torch_VERSION}")
  if(version STREQUAL "" AND TARGET torch)
    # Found by a parent project some other way: read the header every libtorch has.
    get_target_property(dirs torch INTERFACE_INCLUDE_DIRECTORIES)
    foreach(d IN LISTS dirs)
      foreach(h IN ITEMS "${d}/torch/headeronly/version.h" "${d}/torch/version.h")
        if(version STREQUAL "" AND EXISTS "${h}")
          file(STRINGS "${h}" lines REGEX "#define TORCH_VERSION_(MAJOR|MINOR) ")
          string(REGEX REPLACE ".*MAJOR ([0-9]+).*" "\\1" major "${lines}")
          string(REGEX REPLACE ".*MINOR ([0-9]+).*" "\\1" minor "${lines}")
          if(major MATCHES "^[0-9]+$" AND minor MATCHES "^[0-9]+$")
            set(version "${major}.${minor}")
          endif()
        endif()
      endforeach()
    endforeach()
  endif()
  if(NOT version MATCHES "^([0-9]+)\\.([0-9]+)")
    message(FATAL_ERROR "recorder: cannot tell the version of the libtorch found (${Torch_DIR}): recorder supports libtorch 1.13 and 2.5 or newer")
  endif()
  set(mm "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
  if(mm VERSION_LESS 1.13 OR (mm VERSION_GREATER_EQUAL 2.0 AND mm VERSION_LESS 2.5))
    message(FATAL_ERROR "recorder: libtorch ${version} (${Torch_DIR}) is not supported: use libtorch 1.13 or 2.5 or newer")
  endif()
  set(where "${Torch_DIR}")
  set(lib_dir "")
  if(TARGET torch_cpu)
    # The libraries the targets link (TorchConfig's "Found Torch:" line may name another file).
    get_target_property(lib torch_cpu LOCATION)
    if(lib)
      get_filename_component(lib_dir "${lib}" DIRECTORY)
      string(APPEND where ", libraries in ${lib_dir}")
    endif()
  endif()
  message(STATUS "recorder: libtorch ${mm} (${where})")
  set(RECORDER_TORCH_VERSION "${mm}" PARENT_SCOPE)
  # The folder of libtorch's libraries when the loader would not search it by itself (a wheel's
  # torch/lib, pytorch.org's libtorch/lib; not Debian's /usr/lib/<arch>): the run path of an
  # installed program.
  if(lib_dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES
     OR lib_dir IN_LIST CMAKE_PLATFORM_IMPLICIT_LINK_DIRECTORIES)
    set(lib_dir "")
  endif()
  set(RECORDER_TORCH_RUNPATH "${lib_dir}" PARENT_SCOPE)
endfunction()
