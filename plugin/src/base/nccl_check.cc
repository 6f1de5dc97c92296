// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/nccl_check.h>

#include <iostream>

namespace GPUAssembly
{
  namespace internal
  {
    // Status 0 is ncclSuccess; the checks live here rather than in the .cu
    // file so that deal.II's exception machinery never passes through nvcc.
    void
    check_nccl_status(const int         status,
                      const char *const call,
                      const char *const file,
                      const int         line)
    {
      AssertThrow(status == 0,
                  ExcNcclError(call, file, line, nccl_error_string(status)));
    }



    void
    check_nccl_status_nothrow(const int         status,
                              const char *const call,
                              const char *const file,
                              const int         line) noexcept
    {
      if (status != 0)
        std::cerr << "Warning: the NCCL call " << call << " at " << file << ':'
                  << line << " failed with " << nccl_error_string(status)
                  << " (reported, not thrown, because it happened during "
                     "clean-up)."
                  << std::endl;
    }
  } // namespace internal
} // namespace GPUAssembly
