# SPDX-License-Identifier: LGPL-2.1-or-later
##
## The plugin's modules and the direction of their dependencies, checked
## from the include lines of every source file:
##
##   cmake -DSOURCE_DIR=<checkout> -P cmake/CheckLayering.cmake
##
## (MIN_FILES, 50 unless given, guards against a wrong SOURCE_DIR.)
##
## A module is a folder of plugin/include/gpu_assembly (and the folder of the
## same name under plugin/src and plugin/cuda). A module may include only
## itself and the modules listed for it below; since every list names only
## modules above it, the dependencies point one way and hold no cycle.
## Applications and examples use the public API only: they may not name
## GPUAssembly::internal. The check fails with one line per broken rule,
## naming the file, the line and the rule.
##

# Module order, lowest first. Keep this table and the module picture at the
# top of doc/design.md in agreement.
set(_modules base element adapter lac grid engine kernels distributed wave
  tled)
set(_allowed_base "")
set(_allowed_element base)
set(_allowed_adapter base)
set(_allowed_lac base adapter)
set(_allowed_grid base)
set(_allowed_engine base element adapter lac)
set(_allowed_kernels base element engine)
set(_allowed_distributed base element adapter lac engine kernels)
set(_allowed_wave base adapter lac)
set(_allowed_tled base lac)

cmake_policy(VERSION 3.18)

if(NOT SOURCE_DIR)
  get_filename_component(SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
set(_plugin "${SOURCE_DIR}/plugin")

# The module of a path below plugin/include/gpu_assembly, plugin/src or
# plugin/cuda, or "" for a path outside them.
function(_module_of path out)
  set(_result "")
  foreach(_root "${_plugin}/include/gpu_assembly/" "${_plugin}/src/"
      "${_plugin}/cuda/")
    string(FIND "${path}" "${_root}" _at)
    if(_at EQUAL 0)
      string(LENGTH "${_root}" _length)
      string(SUBSTRING "${path}" ${_length} -1 _rest)
      string(REGEX REPLACE "/.*" "" _first "${_rest}")
      if(NOT _first STREQUAL _rest)
        set(_result "${_first}")
      endif()
    endif()
  endforeach()
  set(${out} "${_result}" PARENT_SCOPE)
endfunction()

set(_errors "")
set(_n_files 0)
set(_n_includes 0)

file(GLOB_RECURSE _files
  "${_plugin}/include/*.h" "${_plugin}/include/*.cuh" "${_plugin}/include/*.in"
  "${_plugin}/src/*.h" "${_plugin}/src/*.cc"
  "${_plugin}/cuda/*.cuh" "${_plugin}/cuda/*.cu")
foreach(_file IN LISTS _files)
  math(EXPR _n_files "${_n_files} + 1")
  _module_of("${_file}" _module)
  file(RELATIVE_PATH _name "${SOURCE_DIR}" "${_file}")
  if(_module STREQUAL "")
    string(APPEND _errors "${_name}: a plugin file outside every module "
      "folder (put it into one of: ${_modules})\n")
    continue()
  endif()
  list(FIND _modules "${_module}" _index)
  if(_index LESS 0)
    string(APPEND _errors "${_name}: module '${_module}' is not in the "
      "module table of cmake/CheckLayering.cmake\n")
    continue()
  endif()
  get_filename_component(_directory "${_file}" DIRECTORY)
  file(STRINGS "${_file}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(_line IN LISTS _lines)
    set(_target "")
    if(_line MATCHES "#[ \t]*include[ \t]*<gpu_assembly/([^>]+)>")
      set(_target "${_plugin}/include/gpu_assembly/${CMAKE_MATCH_1}")
    elseif(_line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
      get_filename_component(_target "${_directory}/${CMAKE_MATCH_1}"
        ABSOLUTE)
    endif()
    if(_target STREQUAL "")
      continue()
    endif()
    math(EXPR _n_includes "${_n_includes} + 1")
    _module_of("${_target}" _used)
    if(_used STREQUAL "" OR _used STREQUAL _module)
      continue()
    endif()
    if(NOT _used IN_LIST _allowed_${_module})
      string(STRIP "${_line}" _line)
      string(APPEND _errors "${_name}: '${_line}': module '${_module}' may "
        "not depend on '${_used}' (it may use: ${_allowed_${_module}})\n")
    endif()
  endforeach()
endforeach()

# Applications and examples: the public API only.
file(GLOB_RECURSE _programs
  "${SOURCE_DIR}/apps/*.h" "${SOURCE_DIR}/apps/*.cc"
  "${SOURCE_DIR}/apps/*.cu" "${SOURCE_DIR}/apps/*.cuh"
  "${SOURCE_DIR}/examples/*.h" "${SOURCE_DIR}/examples/*.cc"
  "${SOURCE_DIR}/examples/*.cu" "${SOURCE_DIR}/examples/*.cuh")
foreach(_file IN LISTS _programs)
  math(EXPR _n_files "${_n_files} + 1")
  file(RELATIVE_PATH _name "${SOURCE_DIR}" "${_file}")
  file(STRINGS "${_file}" _lines REGEX "GPUAssembly::internal|[^:a-z_]internal::")
  foreach(_line IN LISTS _lines)
    string(STRIP "${_line}" _line)
    if(_line MATCHES "^//")
      continue()
    endif()
    string(APPEND _errors "${_name}: '${_line}': applications and examples "
      "use the public API only, not GPUAssembly::internal\n")
  endforeach()
endforeach()

if(NOT MIN_FILES)
  set(MIN_FILES 50)
endif()
if(_n_files LESS MIN_FILES)
  message(FATAL_ERROR "layering check: only ${_n_files} files found below "
    "${SOURCE_DIR}: is SOURCE_DIR the checkout?")
endif()
if(NOT _errors STREQUAL "")
  # Plain messages are not re-wrapped: one line per broken rule.
  message("${_errors}")
  string(REGEX MATCHALL "\n" _newlines "${_errors}")
  list(LENGTH _newlines _n_errors)
  message(FATAL_ERROR "layering check: ${_n_errors} broken rules (above)")
endif()
message(STATUS "layering check: ${_n_files} files, ${_n_includes} plugin "
  "includes, every dependency points down the module order: ${_modules}")
