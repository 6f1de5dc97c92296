// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_device_scan_cuh
#define gpu_assembly_base_device_scan_cuh

// Host reads of device values and a prefix sum on the device, for .cu files
// that build arrays on the device in passes of sizes and writes.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/device_memory.h>

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <cstddef>

namespace GPUAssembly
{
  namespace internal
  {
    /// One value from device memory; synchronises with the default stream.
    template <typename T>
    T
    read_device_value(const T *const address)
    {
      T value;
      GPU_ASSEMBLY_CHECK_CUDA(
        cudaMemcpy(&value, address, sizeof(T), cudaMemcpyDeviceToHost));
      return value;
    }

    /**
     * The exclusive sum of @p counts[0, n] into @p offsets[0, n] on the
     * default stream (the last count may be any value); returns offsets[n],
     * the sum of the first @p n counts.
     */
    inline std::size_t
    exclusive_sum_on_device(const std::size_t *const counts,
                            std::size_t *const       offsets,
                            const std::size_t        n)
    {
      std::size_t temp_bytes = 0;
      GPU_ASSEMBLY_CHECK_CUDA(cub::DeviceScan::ExclusiveSum(nullptr,
                                                            temp_bytes,
                                                            counts,
                                                            offsets,
                                                            n + 1));
      void *const       temp = allocate_device_memory(temp_bytes);
      const cudaError_t status =
        cub::DeviceScan::ExclusiveSum(temp, temp_bytes, counts, offsets, n + 1);
      std::size_t       total  = 0;
      const cudaError_t copied = status == cudaSuccess ?
                                   cudaMemcpy(&total,
                                              offsets + n,
                                              sizeof(total),
                                              cudaMemcpyDeviceToHost) :
                                   status;
      free_device_memory(temp);
      GPU_ASSEMBLY_CHECK_CUDA(copied);
      return total;
    }
  } // namespace internal
} // namespace GPUAssembly

#endif
