// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_kernel_launch_cuh
#define gpu_assembly_base_kernel_launch_cuh

// The checked launch of a kernel, for .cu files: a failed launch reports
// which kernel and which configuration failed, in release builds too.

#include <gpu_assembly/base/cuda_check.h>

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * The number of blocks of @p block_size threads that give one thread to
     * each of @p n items.
     */
    constexpr unsigned int
    n_blocks_covering(const std::size_t n, const unsigned int block_size)
    {
      return static_cast<unsigned int>((n + block_size - 1) / block_size);
    }



    /**
     * Launch @p kernel on @p n_blocks blocks of @p block_size threads with
     * @p shared_bytes of dynamic shared memory on @p stream, and throw
     * ExcCudaError naming @p name and the configuration if the launch
     * fails. Where the kernel takes dynamic shared memory, its limit is
     * set to @p shared_bytes first: above 48 KiB a block must opt in, and
     * the limit is a property of the kernel, which another launch of it may
     * have set lower.
     */
    template <typename... Parameters, typename... Arguments>
    void
    launch_kernel(const char *const name,
                  void (*const kernel)(Parameters...),
                  const unsigned int n_blocks,
                  const unsigned int block_size,
                  const std::size_t  shared_bytes,
                  CUstream_st *const stream,
                  const Arguments &...arguments)
    {
      if (shared_bytes > 0)
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaFuncSetAttribute(kernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(shared_bytes)));
      kernel<<<n_blocks, block_size, shared_bytes, stream>>>(arguments...);
      const cudaError_t status = cudaGetLastError();
      if (status != cudaSuccess)
        {
          const std::string launch = std::string(name) + "<<<" +
                                     std::to_string(n_blocks) + ", " +
                                     std::to_string(block_size) + ", " +
                                     std::to_string(shared_bytes) + ">>>";
          check_cuda_status(status, launch.c_str(), __FILE__, __LINE__);
        }
    }



    /**
     * launch_kernel() with a thread for each of @p n_threads items, in
     * blocks of @p block_size threads and without dynamic shared memory;
     * nothing is launched for no items (a grid of no blocks is an error).
     */
    template <typename... Parameters, typename... Arguments>
    void
    launch_kernel_over(const char *const name,
                       void (*const kernel)(Parameters...),
                       const std::size_t  n_threads,
                       const unsigned int block_size,
                       CUstream_st *const stream,
                       const Arguments &...arguments)
    {
      if (n_threads > 0)
        launch_kernel(name,
                      kernel,
                      n_blocks_covering(n_threads, block_size),
                      block_size,
                      0,
                      stream,
                      arguments...);
    }
  } // namespace internal
} // namespace GPUAssembly

#endif
