// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_gpu_tests_h
#define gpu_assembly_tests_gpu_tests_h

// What every GPU test program does first.

#include <gpu_assembly/base/device.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

namespace Testing
{
  /// Exit code that ctest maps to "skipped" (SKIP_RETURN_CODE).
  constexpr int skip_return_code = 77;

  /**
   * Whether the environment demands a GPU: GPU_ASSEMBLY_REQUIRE_GPU set to
   * anything but "" or "0" (the CMake option GPU_ASSEMBLY_REQUIRE_GPU sets it
   * on every "gpu" test). On a GPU host this makes sure that a run of the
   * GPU tests cannot pass with nothing run.
   */
  inline bool
  gpu_demanded()
  {
    const char *const value = std::getenv("GPU_ASSEMBLY_REQUIRE_GPU");
    return value != nullptr && std::string(value) != "" &&
           std::string(value) != "0";
  }

  /**
   * The exit code of a GPU test that finds no CUDA device: skipped
   * (skip_return_code), or 1 where gpu_demanded(). Prints which, if
   * @p print (rank 0 of an MPI test).
   */
  inline int
  no_device_exit_code(const bool print = true)
  {
    if (gpu_demanded())
      {
        if (print)
          std::cout << "FAILED: no CUDA device, but GPU_ASSEMBLY_REQUIRE_GPU "
                       "demands one."
                    << std::endl;
        return 1;
      }
    if (print)
      std::cout << "SKIPPED: no CUDA device; this test needs a GPU."
                << std::endl;
    return skip_return_code;
  }

  /**
   * Whether this host has a CUDA device. If it has, prints the execution
   * path (device, compute capability, memory); if not, the caller returns
   * no_device_exit_code(), which ctest reports as skipped, never as passed
   * (or as failed, where a GPU is demanded). A broken CUDA set-up (a driver
   * older than the runtime, which n_cuda_devices() throws for) ends the
   * program with exit code 1 and CUDA's message: a failure, not a skip.
   */
  inline bool
  cuda_device_present()
  {
    try
      {
        if (GPUAssembly::n_cuda_devices() == 0)
          return false;
      }
    catch (const std::exception &exception)
      {
        std::cout << "FAILED: the CUDA set-up is broken: " << exception.what()
                  << std::endl;
        std::exit(1);
      }
    std::cout << GPUAssembly::describe_execution_path() << std::endl;
    return true;
  }
} // namespace Testing

#endif
