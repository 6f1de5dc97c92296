// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_block_sum_cuh
#define gpu_assembly_lac_block_sum_cuh

// Device code only: include from .cu files.

namespace GPUAssembly
{
  /**
   * Sum @p value (n_sums values per thread) over the threads of a block
   * of @p block_size threads, in a fixed tree order, and give every
   * thread the totals. The order depends on the block size alone, so a
   * reduction built from block sums and a fixed second pass is bitwise
   * reproducible, which atomics would not be. All threads of the block
   * must call it.
   */
  template <unsigned int block_size, unsigned int n_sums>
  __device__ inline void
  block_sum(double (&value)[n_sums])
  {
    static_assert((block_size & (block_size - 1)) == 0,
                  "the tree needs a power-of-two block size");
    __shared__ double buffer[n_sums][block_size];
    for (unsigned int s = 0; s < n_sums; ++s)
      buffer[s][threadIdx.x] = value[s];
    __syncthreads();
    for (unsigned int stride = block_size / 2; stride > 0; stride /= 2)
      {
        if (threadIdx.x < stride)
          for (unsigned int s = 0; s < n_sums; ++s)
            buffer[s][threadIdx.x] += buffer[s][threadIdx.x + stride];
        __syncthreads();
      }
    for (unsigned int s = 0; s < n_sums; ++s)
      value[s] = buffer[s][0];
    // The buffer is reused by the next call in the same kernel.
    __syncthreads();
  }

  /**
   * The first pass of a reduction whose second is sum_partials():
   * block_sum() of @p value, and thread 0 stores the totals at
   * partial[blockIdx.x * n_sums + s].
   */
  template <unsigned int block_size, unsigned int n_sums>
  __device__ inline void
  store_block_sums(double (&value)[n_sums], double *partial)
  {
    block_sum<block_size>(value);
    if (threadIdx.x == 0)
      for (unsigned int s = 0; s < n_sums; ++s)
        partial[blockIdx.x * n_sums + s] = value[s];
  }



  /**
   * The sum of @p n_partials block sums (n_sums interleaved sums each),
   * the same value in every thread of every block that calls it: each
   * block adds the same numbers in the same order. Lets a kernel use a
   * global sum without a separate one-block kernel and without atomics,
   * and lets two kernels that finish the same sums agree bit for bit.
   */
  template <unsigned int block_size, unsigned int n_sums>
  __device__ inline void
  sum_partials(const double      *partial,
               const unsigned int n_partials,
               double (&total)[n_sums])
  {
    for (unsigned int s = 0; s < n_sums; ++s)
      total[s] = 0;
    for (unsigned int b = threadIdx.x; b < n_partials; b += block_size)
      for (unsigned int s = 0; s < n_sums; ++s)
        total[s] += partial[b * n_sums + s];
    block_sum<block_size>(total);
  }
} // namespace GPUAssembly

#endif
