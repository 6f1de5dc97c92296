// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_config_h
#define gpu_assembly_base_config_h

#include <gpu_assembly/base/version.h>

/**
 * @file
 * Configuration shared by host and device code. This header must stay
 * includable from both .cc and .cu files, so it includes neither deal.II nor
 * CUDA headers.
 */

/**
 * Marks functions that the host reference assembly and the CUDA kernels
 * share. Element kernels are written once with this annotation so the two
 * paths cannot drift apart.
 */
#if defined(__CUDACC__)
#  define GPU_ASSEMBLY_HOST_DEVICE __host__ __device__
#else
#  define GPU_ASSEMBLY_HOST_DEVICE
#endif

/**
 * Asks nvcc to unroll the loop that follows completely. Element kernels
 * keep small per-element arrays in registers only if every index into
 * them is a compile-time constant; a loop nest the compiler leaves rolled
 * puts them on the stack, in local memory. The host compiler ignores it.
 */
#if defined(__CUDA_ARCH__)
#  define GPU_ASSEMBLY_UNROLL _Pragma("unroll")
#else
#  define GPU_ASSEMBLY_UNROLL
#endif

/**
 * Asks nvcc to keep the loop that follows rolled: for rare paths, such as
 * the Dirichlet condensation, whose loops the compiler would otherwise
 * unroll where the sizes are constants, at the price of registers that
 * every element pays for.
 */
#if defined(__CUDA_ARCH__)
#  define GPU_ASSEMBLY_NO_UNROLL _Pragma("unroll 1")
#else
#  define GPU_ASSEMBLY_NO_UNROLL
#endif

/**
 * Everything this plugin provides lives in this namespace.
 */
namespace GPUAssembly
{
  /**
   * Index type of the flat mesh arrays. Signed so that the reduction arrays
   * of the GPU methods can tell sources from targets by sign, as the GPU
   * Gems chapter does, and 32 bits wide because it is read on every
   * assembly and its bandwidth counts.
   */
  using index_type = int;

  /**
   * Value of a nonzero map entry whose element contribution is dropped by the
   * constraints (and that has no slot in the sparsity pattern).
   */
  constexpr index_type invalid_index = -1;
} // namespace GPUAssembly

#endif
