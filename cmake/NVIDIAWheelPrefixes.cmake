# SPDX-License-Identifier: LGPL-2.1-or-later
##
## nvidia_wheel_prefixes(<variable> <header> <module>...): appends to
## <variable> the folder of each Python package <module> (e.g. nvidia.cu13)
## of the python3 on PATH that holds include/<header>: where pip installs
## NVIDIA's library wheels (nvidia-cudss-cu13, nvidia-nccl-cu13).
##

function(nvidia_wheel_prefixes variable header)
  find_program(_nvidia_wheel_python3 NAMES python3)
  set(_prefixes ${${variable}})
  if(_nvidia_wheel_python3)
    foreach(_module IN LISTS ARGN)
      execute_process(
        COMMAND "${_nvidia_wheel_python3}" -c
          "import importlib, sys; m = importlib.import_module('${_module}'); sys.stdout.write(list(m.__path__)[0])"
        OUTPUT_VARIABLE _wheel
        RESULT_VARIABLE _result
        ERROR_QUIET)
      if(_result EQUAL 0 AND EXISTS "${_wheel}/include/${header}")
        list(APPEND _prefixes "${_wheel}")
      endif()
    endforeach()
  endif()
  unset(_nvidia_wheel_python3 CACHE)
  set(${variable} ${_prefixes} PARENT_SCOPE)
endfunction()
