// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_index_loops_cuh
#define gpu_assembly_lac_index_loops_cuh

// The device branches of the loops of index_loops.h, for the .cu file that
// instantiates them for a set of bodies.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/block_sum.cuh>
#include <gpu_assembly/lac/index_loops.h>

#include <cuda_runtime.h>

#include <algorithm>

namespace GPUAssembly
{
  namespace internal
  {
    namespace IndexLoopKernels
    {
      constexpr unsigned int block_size = 256;

      // Eight lanes per row: a row of 3D elasticity with linear elements
      // has up to 81 entries.
      constexpr unsigned int lanes_per_row = 8;

      inline unsigned int
      n_grid_blocks(const std::size_t n)
      {
        const std::size_t blocks = (n + block_size - 1) / block_size;
        return static_cast<unsigned int>(
          std::max<std::size_t>(1, std::min<std::size_t>(blocks, 65535)));
      }

      // The reductions' grid depends on n alone, so that their order of
      // summation, and the result, are the same at every call.
      inline unsigned int
      n_reduction_blocks(const std::size_t n)
      {
        const std::size_t blocks = (n + block_size - 1) / block_size;
        return static_cast<unsigned int>(std::max<std::size_t>(
          1,
          std::min<std::size_t>(blocks, ReductionWorkspace::max_blocks)));
      }

      template <typename Body>
      __global__ void
      for_each_index_kernel(const std::size_t n, const Body body)
      {
        for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x;
             i < n;
             i += std::size_t(gridDim.x) * block_size)
          body(i);
      }

      template <unsigned int n_sums, typename Body>
      __global__ void
      sum_over_indices_kernel(const std::size_t n,
                              const Body        body,
                              double           *partial)
      {
        double sums[n_sums] = {};
        for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x;
             i < n;
             i += std::size_t(gridDim.x) * block_size)
          body(i, sums);
        store_block_sums<block_size>(sums, partial);
      }

      template <unsigned int n_sums>
      __global__ void
      finish_sums_kernel(const double      *partial,
                         const unsigned int n_partials,
                         double            *result)
      {
        double total[n_sums];
        sum_partials<block_size>(partial, n_partials, total);
        if (threadIdx.x == 0)
          for (unsigned int s = 0; s < n_sums; ++s)
            result[s] = total[s];
      }

      template <typename Body>
      __global__ void
      for_each_row_kernel(const std::size_t n, const Body body)
      {
        const std::size_t i =
          (blockIdx.x * std::size_t(block_size) + threadIdx.x) / lanes_per_row;
        const unsigned int lane = threadIdx.x % lanes_per_row;
        decltype(body.part(i, lane, lanes_per_row)) sum = 0;
        if (i < n)
          sum = body.part(i, lane, lanes_per_row);
        // Every lane of the warp takes part in the shuffles.
        for (unsigned int offset = lanes_per_row / 2; offset > 0; offset /= 2)
          sum += __shfl_xor_sync(0xffffffffu, sum, offset, lanes_per_row);
        if (i < n && lane == 0)
          body.store(i, sum);
      }
    } // namespace IndexLoopKernels



    template <typename Body>
    void
    launch_for_each_index(const std::size_t n, const Body &body)
    {
      using namespace IndexLoopKernels;
      for_each_index_kernel<<<n_grid_blocks(n), block_size>>>(n, body);
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
    }



    template <unsigned int n_sums, typename Body>
    void
    launch_sum_over_indices(const std::size_t         n,
                            const Body               &body,
                            const ReductionWorkspace &workspace,
                            double (&sums)[n_sums])
    {
      using namespace IndexLoopKernels;
      const unsigned int n_blocks = n_reduction_blocks(n);
      sum_over_indices_kernel<n_sums>
        <<<n_blocks, block_size>>>(n, body, workspace.partial());
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      finish_sums_kernel<n_sums>
        <<<1, block_size>>>(workspace.partial(), n_blocks, workspace.result());
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(sums,
                                         workspace.result(),
                                         n_sums * sizeof(double),
                                         cudaMemcpyDeviceToHost));
    }



    template <typename Body>
    void
    launch_for_each_row(const std::size_t n, const Body &body)
    {
      using namespace IndexLoopKernels;
      const std::size_t rows_per_block = block_size / lanes_per_row;
      const std::size_t n_blocks = (n + rows_per_block - 1) / rows_per_block;
      if (n_blocks > 2147483647u)
        throw_error("for_each_row(): too many rows for one launch.");
      for_each_row_kernel<<<static_cast<unsigned int>(n_blocks), block_size>>>(
        n,
        body);
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
    }
  } // namespace internal
} // namespace GPUAssembly

/// Instantiates the device branch of for_each_index() for @p Body.
#define GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(Body)               \
  template void GPUAssembly::internal::launch_for_each_index<Body>( \
    const std::size_t,                                              \
    const Body &);

/// Instantiates the device branch of sum_over_indices() for @p Body and
/// @p n_sums sums.
#define GPU_ASSEMBLY_INSTANTIATE_SUM_OVER_INDICES(n_sums, Body)               \
  template void GPUAssembly::internal::launch_sum_over_indices<n_sums, Body>( \
    const std::size_t,                                                        \
    const Body &,                                                             \
    const GPUAssembly::ReductionWorkspace &,                                  \
    double(&)[n_sums]);

/// Instantiates the device branch of for_each_row() for @p Body.
#define GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_ROW(Body)               \
  template void GPUAssembly::internal::launch_for_each_row<Body>( \
    const std::size_t,                                            \
    const Body &);

#endif
