# SPDX-License-Identifier: LGPL-2.1-or-later
##
## Finds NVIDIA cuDSS, the sparse direct solver library of the device direct
## solver (DeviceDirectSolver). Looked for, in this order:
##
##   - CUDSS_DIR or CUDSS_ROOT (CMake or environment variables): a prefix
##     with include/cudss.h and lib/ (or lib64/) libcudss, or the folder
##     lib/cmake/cudss below it;
##   - the PyPI wheel nvidia-cudss-cu13 (or -cu12) where
##     scripts/install-dependencies.sh unpacks it (/usr/local/lib/nvidia-cudss,
##     ~/.local/lib/nvidia-cudss);
##   - the PyPI wheel nvidia-cudss-cu13 (or -cu12) of the python3 on PATH,
##     whose folder python3 names (pip install nvidia-cudss-cu13);
##   - the system's default places.
##
## The wheel holds lib/libcudss.so.1 without a libcudss.so link, so the
## versioned name is looked for too.
##
## Defines CUDSS_FOUND, CUDSS_INCLUDE_DIR, CUDSS_LIBRARY, CUDSS_VERSION and
## the imported target CUDSS::cudss.
##

set(_cudss_hints)
foreach(_variable CUDSS_DIR CUDSS_ROOT)
  if(DEFINED ${_variable} AND NOT "${${_variable}}" STREQUAL "")
    list(APPEND _cudss_hints "${${_variable}}")
  endif()
  if(DEFINED ENV{${_variable}} AND NOT "$ENV{${_variable}}" STREQUAL "")
    list(APPEND _cudss_hints "$ENV{${_variable}}")
  endif()
endforeach()

# Where scripts/install-dependencies.sh unpacks the wheel (a folder every
# user can read: root's own Python environment is not).
foreach(_prefix /usr/local/lib/nvidia-cudss "$ENV{HOME}/.local/lib/nvidia-cudss")
  foreach(_flavour cu13 cu12)
    if(EXISTS "${_prefix}/nvidia/${_flavour}/include/cudss.h")
      list(APPEND _cudss_hints "${_prefix}/nvidia/${_flavour}")
    endif()
  endforeach()
endforeach()

# The wheel's folder, where python3 has the wheel installed: the cu13 wheels
# share the namespace package nvidia.cu13, older ones have nvidia.cudss.
include(${CMAKE_CURRENT_LIST_DIR}/NVIDIAWheelPrefixes.cmake)
if(NOT CUDSS_INCLUDE_DIR OR NOT CUDSS_LIBRARY)
  nvidia_wheel_prefixes(_cudss_hints cudss.h nvidia.cu13 nvidia.cu12
    nvidia.cudss)
endif()

# A CUDSS_DIR may also name the folder of cuDSS's own CMake configuration,
# <prefix>/lib/cmake/cudss; NVIDIA's Debian packages put cuDSS in folders
# named after the CUDA major version.
set(_cudss_prefixes)
foreach(_hint IN LISTS _cudss_hints)
  list(APPEND _cudss_prefixes "${_hint}" "${_hint}/../../..")
endforeach()
set(_cudss_cuda_major 13)
if(CUDAToolkit_VERSION_MAJOR)
  set(_cudss_cuda_major ${CUDAToolkit_VERSION_MAJOR})
endif()
find_path(CUDSS_INCLUDE_DIR cudss.h
  HINTS ${_cudss_prefixes}
  PATH_SUFFIXES include include/libcudss/${_cudss_cuda_major})
find_library(CUDSS_LIBRARY
  NAMES cudss libcudss.so.1
  HINTS ${_cudss_prefixes}
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu/libcudss/${_cudss_cuda_major}
    lib/aarch64-linux-gnu/libcudss/${_cudss_cuda_major})
mark_as_advanced(CUDSS_INCLUDE_DIR CUDSS_LIBRARY)

if(CUDSS_INCLUDE_DIR AND EXISTS "${CUDSS_INCLUDE_DIR}/cudss.h")
  file(STRINGS "${CUDSS_INCLUDE_DIR}/cudss.h" _cudss_version_lines
    REGEX "^#define CUDSS_VERSION_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define CUDSS_VERSION_${_part} +([0-9]+).*" "\\1"
      _cudss_${_part} "${_cudss_version_lines}")
  endforeach()
  set(CUDSS_VERSION "${_cudss_MAJOR}.${_cudss_MINOR}.${_cudss_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CUDSS
  REQUIRED_VARS CUDSS_LIBRARY CUDSS_INCLUDE_DIR
  VERSION_VAR CUDSS_VERSION)

if(CUDSS_FOUND AND NOT TARGET CUDSS::cudss)
  add_library(CUDSS::cudss SHARED IMPORTED)
  set_target_properties(CUDSS::cudss PROPERTIES
    IMPORTED_LOCATION "${CUDSS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CUDSS_INCLUDE_DIR}")
endif()
unset(_cudss_hints)
unset(_cudss_prefixes)
