// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The device versions of the resident loops: the bodies of
// resident_loop_bodies.h, one index a thread in grid-stride loops, and sums
// per block, then over the blocks, in an order that depends on n alone.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/block_sum.cuh>

#include <cuda_runtime.h>

#include <algorithm>

#include "../../src/distributed/resident_loop_bodies.h"

namespace GPUAssembly
{
  namespace internal
  {
    namespace ResidentKernels
    {
      namespace
      {
        constexpr unsigned int block_size = 256;

        unsigned int
        n_grid_blocks(const std::size_t n)
        {
          const std::size_t blocks = (n + block_size - 1) / block_size;
          return static_cast<unsigned int>(
            std::max<std::size_t>(1, std::min<std::size_t>(blocks, 65535)));
        }

        // The reductions' grid depends on n alone, so that their order of
        // summation, and the result, are the same at every call.
        unsigned int
        n_reduction_blocks(const std::size_t n)
        {
          const std::size_t blocks = (n + block_size - 1) / block_size;
          return static_cast<unsigned int>(
            std::max<std::size_t>(1,
                                  std::min<std::size_t>(blocks, max_blocks)));
        }

        void
        check_launch()
        {
          GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
        }

#define GRID_STRIDE_LOOP(i, n)                                             \
  for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x; \
       i < (n);                                                            \
       i += std::size_t(gridDim.x) * block_size)

        template <typename Number>
        __global__ void
        gather_kernel(const Number *__restrict__ src,
                      const int *__restrict__ indices,
                      const std::size_t n,
                      Number *__restrict__ dst)
        {
          GRID_STRIDE_LOOP(j, n)
          Body::gather(j, src, indices, dst);
        }

        template <typename Number>
        __global__ void
        scatter_add_kernel(const Number *__restrict__ values,
                           const int *__restrict__ sources,
                           const int *__restrict__ targets,
                           const std::size_t n,
                           Number *__restrict__ target)
        {
          GRID_STRIDE_LOOP(i, n)
          Body::scatter_add(i, values, sources, targets, target);
        }

        template <typename Number>
        __global__ void
        add_grouped_kernel(const Number *__restrict__ received,
                           const int *__restrict__ group_targets,
                           const int *__restrict__ group_offsets,
                           const int *__restrict__ group_entries,
                           const std::size_t n_groups,
                           Number *__restrict__ target)
        {
          GRID_STRIDE_LOOP(u, n_groups)
          Body::add_grouped(u,
                            received,
                            group_targets,
                            group_offsets,
                            group_entries,
                            target);
        }

        // Eight lanes per row (a row of 3D elasticity with linear elements
        // has up to 81 entries); the lanes' sums are combined by a butterfly
        // of shuffles, the same order for every row.
        constexpr unsigned int lanes_per_row = 8;

        template <typename Number>
        __global__ void
        spmv_rows_kernel(const int *__restrict__ row_offsets,
                         const int *__restrict__ columns,
                         const Number *__restrict__ values,
                         const int *__restrict__ rows,
                         const std::size_t n_rows,
                         const Number *__restrict__ x,
                         Number *__restrict__ y)
        {
          const std::size_t i =
            (blockIdx.x * std::size_t(block_size) + threadIdx.x) /
            lanes_per_row;
          const unsigned int lane = threadIdx.x % lanes_per_row;
          Number             sum  = 0;
          int                row  = -1;
          if (i < n_rows)
            {
              row = rows[i];
              sum = Body::spmv_row_part(row,
                                        lane,
                                        lanes_per_row,
                                        row_offsets,
                                        columns,
                                        values,
                                        x);
            }
          // Every lane of the warp takes part in the shuffles.
          for (unsigned int offset = lanes_per_row / 2; offset > 0; offset /= 2)
            sum += __shfl_xor_sync(0xffffffffu, sum, offset, lanes_per_row);
          if (row >= 0 && lane == 0)
            y[row] = sum;
        }

        template <typename Number>
        __global__ void
        inverse_diagonal_kernel(const Number *__restrict__ values,
                                const int *__restrict__ positions,
                                const std::size_t n,
                                Number *__restrict__ result)
        {
          GRID_STRIDE_LOOP(i, n)
          Body::inverse_diagonal(i, values, positions, result);
        }

        template <unsigned int n_sums>
        __device__ void
        write_block_sums(double (&value)[n_sums], double *partial)
        {
          block_sum<block_size>(value);
          if (threadIdx.x == 0)
            for (unsigned int s = 0; s < n_sums; ++s)
              partial[blockIdx.x * n_sums + s] = value[s];
        }

        template <typename Number>
        __global__ void
        dot_kernel(const Number *__restrict__ x,
                   const Number *__restrict__ y,
                   const std::size_t n,
                   double           *partial)
        {
          double sum[1] = {0.};
          GRID_STRIDE_LOOP(i, n)
          Body::dot(i, x, y, sum[0]);
          write_block_sums<1>(sum, partial);
        }

        template <unsigned int n_sums>
        __global__ void
        finish_kernel(const double      *partial,
                      const unsigned int n_partials,
                      double            *result)
        {
          double total[n_sums];
          sum_partials<block_size>(partial, n_partials, total);
          if (threadIdx.x == 0)
            for (unsigned int s = 0; s < n_sums; ++s)
              result[s] = total[s];
        }

        template <unsigned int n_sums>
        void
        finish(const unsigned int n_blocks,
               const Workspace   &workspace,
               double            *sums)
        {
          finish_kernel<n_sums>
            <<<1, block_size>>>(workspace.partial, n_blocks, workspace.result);
          check_launch();
          GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(sums,
                                             workspace.result,
                                             n_sums * sizeof(double),
                                             cudaMemcpyDeviceToHost));
        }

        template <typename Number>
        __global__ void
        cg_start_kernel(const Number *__restrict__ b,
                        const Number *__restrict__ inverse_diagonal,
                        Number *__restrict__ x,
                        Number *__restrict__ r,
                        Number *__restrict__ z,
                        Number *__restrict__ p,
                        const std::size_t n,
                        double           *partial)
        {
          double sums[2] = {0., 0.};
          GRID_STRIDE_LOOP(i, n)
          Body::cg_start(i, b, inverse_diagonal, x, r, z, p, sums);
          write_block_sums<2>(sums, partial);
        }

        template <typename Number>
        __global__ void
        cg_update_kernel(const Number alpha,
                         const Number *__restrict__ p,
                         const Number *__restrict__ q,
                         const Number *__restrict__ inverse_diagonal,
                         Number *__restrict__ x,
                         Number *__restrict__ r,
                         Number *__restrict__ z,
                         const std::size_t n,
                         double           *partial)
        {
          double sums[2] = {0., 0.};
          GRID_STRIDE_LOOP(i, n)
          Body::cg_update(i, alpha, p, q, inverse_diagonal, x, r, z, sums);
          write_block_sums<2>(sums, partial);
        }

        template <typename Number>
        __global__ void
        cg_direction_kernel(const Number beta,
                            const Number *__restrict__ z,
                            Number *__restrict__ p,
                            const std::size_t n)
        {
          GRID_STRIDE_LOOP(i, n)
          Body::cg_direction(i, beta, z, p);
        }
#undef GRID_STRIDE_LOOP
      } // namespace



      namespace Device
      {
        template <typename Number>
        void
        gather(const Number     *src,
               const int        *indices,
               const std::size_t n,
               Number           *dst)
        {
          if (n == 0)
            return;
          gather_kernel<<<n_grid_blocks(n), block_size>>>(src, indices, n, dst);
          check_launch();
        }

        template <typename Number>
        void
        scatter_add(const Number     *values,
                    const int        *sources,
                    const int        *targets,
                    const std::size_t n,
                    Number           *target)
        {
          if (n == 0)
            return;
          scatter_add_kernel<<<n_grid_blocks(n), block_size>>>(values,
                                                               sources,
                                                               targets,
                                                               n,
                                                               target);
          check_launch();
        }

        template <typename Number>
        void
        add_grouped(const Number     *received,
                    const int        *group_targets,
                    const int        *group_offsets,
                    const int        *group_entries,
                    const std::size_t n_groups,
                    Number           *target)
        {
          if (n_groups == 0)
            return;
          add_grouped_kernel<<<n_grid_blocks(n_groups), block_size>>>(
            received,
            group_targets,
            group_offsets,
            group_entries,
            n_groups,
            target);
          check_launch();
        }

        template <typename Number>
        void
        spmv_rows(const int        *row_offsets,
                  const int        *columns,
                  const Number     *values,
                  const int        *rows,
                  const std::size_t n_rows,
                  const Number     *x,
                  Number           *y)
        {
          if (n_rows == 0)
            return;
          const std::size_t rows_per_block = block_size / lanes_per_row;
          const std::size_t n_blocks =
            (n_rows + rows_per_block - 1) / rows_per_block;
          if (n_blocks > 2147483647u)
            throw_error("spmv_rows: too many rows for one launch.");
          spmv_rows_kernel<<<static_cast<unsigned int>(n_blocks), block_size>>>(
            row_offsets,
            columns,
            values,
            rows,
            n_rows,
            x,
            y);
          check_launch();
        }

        template <typename Number>
        void
        inverse_diagonal(const Number     *values,
                         const int        *diagonal_positions,
                         const std::size_t n,
                         Number           *result)
        {
          if (n == 0)
            return;
          inverse_diagonal_kernel<<<n_grid_blocks(n), block_size>>>(
            values,
            diagonal_positions,
            n,
            result);
          check_launch();
        }

        template <typename Number>
        double
        dot(const Number     *x,
            const Number     *y,
            const std::size_t n,
            const Workspace  &workspace)
        {
          const unsigned int n_blocks = n_reduction_blocks(n);
          dot_kernel<<<n_blocks, block_size>>>(x, y, n, workspace.partial);
          check_launch();
          double sum = 0;
          finish<1>(n_blocks, workspace, &sum);
          return sum;
        }

        template <typename Number>
        void
        cg_start(const Number     *b,
                 const Number     *inverse_diagonal,
                 Number           *x,
                 Number           *r,
                 Number           *z,
                 Number           *p,
                 const std::size_t n,
                 const Workspace  &workspace,
                 double (&sums)[2])
        {
          const unsigned int n_blocks = n_reduction_blocks(n);
          cg_start_kernel<<<n_blocks, block_size>>>(b,
                                                    inverse_diagonal,
                                                    x,
                                                    r,
                                                    z,
                                                    p,
                                                    n,
                                                    workspace.partial);
          check_launch();
          finish<2>(n_blocks, workspace, sums);
        }

        template <typename Number>
        void
        cg_update(const double      alpha,
                  const Number     *p,
                  const Number     *q,
                  const Number     *inverse_diagonal,
                  Number           *x,
                  Number           *r,
                  Number           *z,
                  const std::size_t n,
                  const Workspace  &workspace,
                  double (&sums)[2])
        {
          const unsigned int n_blocks = n_reduction_blocks(n);
          cg_update_kernel<<<n_blocks, block_size>>>(static_cast<Number>(alpha),
                                                     p,
                                                     q,
                                                     inverse_diagonal,
                                                     x,
                                                     r,
                                                     z,
                                                     n,
                                                     workspace.partial);
          check_launch();
          finish<2>(n_blocks, workspace, sums);
        }

        template <typename Number>
        void
        cg_direction(const double      beta,
                     const Number     *z,
                     Number           *p,
                     const std::size_t n)
        {
          if (n == 0)
            return;
          cg_direction_kernel<<<n_grid_blocks(n), block_size>>>(
            static_cast<Number>(beta),
            z,
            p,
            n);
          check_launch();
        }



        void
        copy_to_host(void *dst, const void *src, const std::size_t bytes)
        {
          if (bytes > 0)
            GPU_ASSEMBLY_CHECK_CUDA(
              cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
        }

        void
        copy_to_device(void *dst, const void *src, const std::size_t bytes)
        {
          if (bytes > 0)
            GPU_ASSEMBLY_CHECK_CUDA(
              cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
        }

        void
        copy_on_device(void *dst, const void *src, const std::size_t bytes)
        {
          if (bytes > 0)
            GPU_ASSEMBLY_CHECK_CUDA(
              cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
        }

        void
        set_zero(void *dst, const std::size_t bytes)
        {
          if (bytes > 0)
            GPU_ASSEMBLY_CHECK_CUDA(cudaMemset(dst, 0, bytes));
        }

        void
        synchronize()
        {
          GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(0));
        }

        void *
        allocate_pinned(const std::size_t bytes)
        {
          void *pointer = nullptr;
          GPU_ASSEMBLY_CHECK_CUDA(cudaMallocHost(&pointer, bytes));
          return pointer;
        }

        void
        free_pinned(void *pointer) noexcept
        {
          if (pointer != nullptr)
            GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaFreeHost(pointer));
        }

        GPU_ASSEMBLY_INSTANTIATE_RESIDENT_LOOPS(float)
        GPU_ASSEMBLY_INSTANTIATE_RESIDENT_LOOPS(double)
      } // namespace Device
    }   // namespace ResidentKernels
  }     // namespace internal
} // namespace GPUAssembly
