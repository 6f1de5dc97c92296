// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_gpu_tests_h
#define gpu_assembly_tests_gpu_tests_h

// What every GPU test program does first.

#include <gpu_assembly/base/device.h>

#include <iostream>

namespace Testing
{
  /**
   * Whether this host has a CUDA device. If it has, prints the execution
   * path (device, compute capability, memory); if not, says that the test
   * is skipped, and the caller returns skip_return_code, which ctest
   * reports as skipped, never as passed.
   */
  inline bool
  cuda_device_present()
  {
    if (GPUAssembly::n_cuda_devices() == 0)
      {
        std::cout << "SKIPPED: no CUDA device; this test needs a GPU."
                  << std::endl;
        return false;
      }
    std::cout << GPUAssembly::describe_execution_path() << std::endl;
    return true;
  }
} // namespace Testing

#endif
