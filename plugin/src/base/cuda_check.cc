// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/exceptions.h>

#include <iostream>

namespace GPUAssembly
{
  namespace internal
  {
    // Status 0 is cudaSuccess and CUSPARSE_STATUS_SUCCESS alike; the checks
    // live here rather than in the .cu file so that deal.II's exception
    // machinery never passes through nvcc.
    void
    check_cuda_status(const int         status,
                      const char *const call,
                      const char *const file,
                      const int         line)
    {
      AssertThrow(status == 0,
                  ExcCudaError(call, file, line, cuda_error_string(status)));
    }



    void
    check_cusparse_status(const int         status,
                          const char *const call,
                          const char *const file,
                          const int         line)
    {
      AssertThrow(
        status == 0,
        ExcCusparseError(call, file, line, cusparse_error_string(status)));
    }



    void
    throw_error(const std::string &message)
    {
      AssertThrow(false, dealii::ExcMessage(message));
      __builtin_unreachable();
    }



    void
    throw_device_memory_error(const std::size_t  requested,
                              const std::size_t  free,
                              const std::size_t  total,
                              const std::string &cuda_message)
    {
      AssertThrow(false, ExcDeviceMemory(requested, free, total, cuda_message));
      __builtin_unreachable();
    }



    void
    check_cuda_status_nothrow(const int         status,
                              const char *const call,
                              const char *const file,
                              const int         line) noexcept
    {
      if (status != 0)
        std::cerr << "Warning: the CUDA call " << call << " at " << file << ':'
                  << line << " failed with " << cuda_error_string(status)
                  << " (reported, not thrown, because it happened during "
                     "clean-up)."
                  << std::endl;
    }



    void
    check_cusparse_status_nothrow(const int         status,
                                  const char *const call,
                                  const char *const file,
                                  const int         line) noexcept
    {
      if (status != 0)
        std::cerr << "Warning: the cuSPARSE call " << call << " at " << file
                  << ':' << line << " failed with "
                  << cusparse_error_string(status)
                  << " (reported, not thrown, because it happened during "
                     "clean-up)."
                  << std::endl;
    }
  } // namespace internal
} // namespace GPUAssembly
