# SPDX-License-Identifier: LGPL-2.1-or-later
##
## Finds NVIDIA NCCL, the device-to-device transport of the distributed
## exchanges (HaloPath::nccl). Looked for, in this order:
##
##   - NCCL_DIR or NCCL_ROOT (CMake or environment variables): a prefix with
##     include/nccl.h and lib/ (or lib64/) libnccl;
##   - the PyPI wheel nvidia-nccl-cu13 (or -cu12) of the python3 on PATH,
##     whose folder python3 names (pip install nvidia-nccl-cu13);
##   - the CUDA toolkit's folders, then the system's default places.
##
## The wheel holds lib/libnccl.so.2 without a libnccl.so link, so the
## versioned name is looked for too.
##
## Defines NCCL_FOUND, NCCL_INCLUDE_DIR, NCCL_LIBRARY, NCCL_VERSION and the
## imported target NCCL::nccl.
##

set(_nccl_hints)
foreach(_variable NCCL_DIR NCCL_ROOT)
  if(DEFINED ${_variable} AND NOT "${${_variable}}" STREQUAL "")
    list(APPEND _nccl_hints "${${_variable}}")
  endif()
  if(DEFINED ENV{${_variable}} AND NOT "$ENV{${_variable}}" STREQUAL "")
    list(APPEND _nccl_hints "$ENV{${_variable}}")
  endif()
endforeach()

# The wheel's folder: nvidia.nccl (cu12 and cu13 wheels) or the namespace
# package nvidia.cu13 that several cu13 wheels share.
include(${CMAKE_CURRENT_LIST_DIR}/NVIDIAWheelPrefixes.cmake)
if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
  nvidia_wheel_prefixes(_nccl_hints nccl.h nvidia.nccl nvidia.cu13
    nvidia.cu12)
endif()

# The CUDA toolkit ships NCCL in its own include/ and lib/ folders on some
# installations.
if(CUDAToolkit_INCLUDE_DIRS)
  foreach(_include IN LISTS CUDAToolkit_INCLUDE_DIRS)
    list(APPEND _nccl_hints "${_include}/..")
  endforeach()
endif()
if(CUDAToolkit_LIBRARY_DIR)
  list(APPEND _nccl_hints "${CUDAToolkit_LIBRARY_DIR}/..")
endif()

find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${_nccl_hints}
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY
  NAMES nccl libnccl.so.2
  HINTS ${_nccl_hints}
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu lib/aarch64-linux-gnu)
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_version_lines
    REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define NCCL_${_part} +([0-9]+).*" "\\1"
      _nccl_${_part} "${_nccl_version_lines}")
  endforeach()
  set(NCCL_VERSION "${_nccl_MAJOR}.${_nccl_MINOR}.${_nccl_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL
  REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
  VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl SHARED IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
unset(_nccl_hints)
