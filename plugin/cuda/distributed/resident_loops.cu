// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The device branches of the resident distributed linear algebra's loops,
// instantiated for its bodies, and its device memory operations.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/distributed/resident_array.h>
#include <gpu_assembly/distributed/resident_operations.h>
#include <gpu_assembly/lac/chebyshev.h>
#include <gpu_assembly/lac/index_loops.cuh>
#include <gpu_assembly/lac/point_block_jacobi.h>
#include <gpu_assembly/lac/preconditioned_cg.h>

#include <cuda_runtime.h>

namespace GPUAssembly
{
  namespace internal
  {
    namespace DeviceMemory
    {
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

      bool
      finished()
      {
        const cudaError_t status = cudaStreamQuery(0);
        if (status == cudaErrorNotReady)
          return false;
        GPU_ASSEMBLY_CHECK_CUDA(status);
        return true;
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
    } // namespace DeviceMemory
  }   // namespace internal
} // namespace GPUAssembly



// The loops of the CG and its preconditioners, which the resident classes
// run too, are instantiated with the rest of lac (cuda/lac/cg_loops.cu).
#define GPU_ASSEMBLY_INSTANTIATE_RESIDENT_LOOPS(Number)       \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                    \
    GPUAssembly::ResidentOperations::Gather<Number>)          \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                    \
    GPUAssembly::ResidentOperations::ZeroAt<Number>)          \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                    \
    GPUAssembly::ResidentOperations::ScatterAdd<Number>)      \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                    \
    GPUAssembly::ResidentOperations::AddGrouped<Number>)      \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(                    \
    GPUAssembly::ResidentOperations::InverseDiagonal<Number>) \
  GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_ROW(                      \
    GPUAssembly::ResidentOperations::RowProducts<Number>)

GPU_ASSEMBLY_INSTANTIATE_RESIDENT_LOOPS(float)
GPU_ASSEMBLY_INSTANTIATE_RESIDENT_LOOPS(double)
