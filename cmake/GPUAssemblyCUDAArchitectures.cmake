# SPDX-License-Identifier: LGPL-2.1-or-later
#
# gpu_assembly_default_cuda_architectures(<variable>)
#
# The CUDA architectures to build for when the user names none
# (-DCMAKE_CUDA_ARCHITECTURES or the CUDAARCHS environment variable): those of
# the GPUs that nvidia-smi reports on this machine, or, where there is none,
# machine code for the data-centre (sm_80, sm_90) and workstation (sm_86,
# sm_89) chips plus PTX that newer chips compile when they load it.
# nvidia-smi rather than CMake's "native": that needs CMake 3.24 and fails on
# machines without a GPU, where builds and CI runs happen as well.

set(GPU_ASSEMBLY_PORTABLE_CUDA_ARCHITECTURES
  "80-real;86-real;89-real;90-real;90-virtual")

function(gpu_assembly_default_cuda_architectures variable)
  set(_architectures "${GPU_ASSEMBLY_PORTABLE_CUDA_ARCHITECTURES}")
  set(_origin "no GPU found: portable list")
  find_program(GPU_ASSEMBLY_NVIDIA_SMI nvidia-smi)
  mark_as_advanced(GPU_ASSEMBLY_NVIDIA_SMI)
  if(GPU_ASSEMBLY_NVIDIA_SMI)
    execute_process(
      COMMAND ${GPU_ASSEMBLY_NVIDIA_SMI} --query-gpu=compute_cap
              --format=csv,noheader
      RESULT_VARIABLE _result
      OUTPUT_VARIABLE _output
      ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    string(REPLACE "\n" ";" _lines "${_output}")
    set(_found)
    foreach(_line IN LISTS _lines)
      string(STRIP "${_line}" _line)
      if(_line MATCHES "^([0-9]+)\\.([0-9]+)$")
        list(APPEND _found "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
      endif()
    endforeach()
    if(_result EQUAL 0 AND _found)
      list(REMOVE_DUPLICATES _found)
      list(SORT _found COMPARE NATURAL)
      # Machine code for every GPU present, and PTX of the newest of them.
      list(POP_BACK _found _newest)
      set(_architectures)
      foreach(_architecture IN LISTS _found)
        list(APPEND _architectures "${_architecture}-real")
      endforeach()
      list(APPEND _architectures "${_newest}")
      set(_origin "the GPUs of this machine")
    endif()
  endif()
  message(STATUS
    "CUDA architectures: ${_architectures} (${_origin}; "
    "choose others with -DCMAKE_CUDA_ARCHITECTURES)")
  set(${variable} "${_architectures}" PARENT_SCOPE)
endfunction()
