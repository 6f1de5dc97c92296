// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>

#include <cuda_runtime.h>

namespace GPUAssembly
{
  namespace internal
  {
    // Declared in gpu_assembly/distributed/device_selection.h, which nvcc
    // does not read (it includes MPI's headers), and in
    // src/base/device_task.h.
    void
    set_cuda_device(const int index);

    void
    set_cuda_device(const int index)
    {
      GPU_ASSEMBLY_CHECK_CUDA(cudaSetDevice(index));
    }
  } // namespace internal
} // namespace GPUAssembly
