// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/nccl_check.h>

#include <string>

#ifdef GPU_ASSEMBLY_WITH_NCCL
#  include <nccl.h>
#endif

namespace GPUAssembly
{
  namespace internal
  {
    std::string
    nccl_error_string(const int status)
    {
#ifdef GPU_ASSEMBLY_WITH_NCCL
      return std::string(
               ncclGetErrorString(static_cast<ncclResult_t>(status))) +
             " (ncclResult_t " + std::to_string(status) + ")";
#else
      return "ncclResult_t " + std::to_string(status) +
             " (the plugin was built without NCCL)";
#endif
    }
  } // namespace internal
} // namespace GPUAssembly
