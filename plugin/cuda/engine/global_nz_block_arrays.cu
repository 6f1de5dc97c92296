// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/kernel_launch.cuh>
#include <gpu_assembly/engine/global_nz/reduction_lists.h>

#include <cuda_runtime.h>

// GlobalNZ's block layout of S(e) gathered on the device from the mesh's
// element-by-element copy: the host plan then neither sizes nor fills the
// largest of its arrays, and the upload carries the same bytes.

namespace GPUAssembly
{
  namespace internal
  {
    namespace
    {
      // A thread per value of the block layout. Consecutive threads write
      // consecutive values; the S(e) of a block's elements, which they
      // read across, are reread by the neighbouring threads from the L2
      // cache.
      template <typename Number>
      __global__ void
      gather_supplemental(const index_type *const block_element,
                          const Number *const     supplemental,
                          const std::size_t       n_values,
                          const unsigned int      B,
                          const unsigned int      n_supplemental,
                          Number *const           block_supplemental)
      {
        const std::size_t v =
          blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
        if (v >= n_values)
          return;
        const long long source =
          block_supplemental_source(block_element, v, B, n_supplemental);
        block_supplemental[v] = source >= 0 ? supplemental[source] : Number(0);
      }
    } // namespace



    template <typename Number>
    void
    gather_block_supplemental(const index_type *const block_element,
                              const Number *const     supplemental,
                              const unsigned int      n_element_blocks,
                              const unsigned int      elements_per_block,
                              const unsigned int      n_supplemental,
                              Number *const           block_supplemental)
    {
      const std::size_t n_values =
        std::size_t(n_element_blocks) * n_supplemental * elements_per_block;
      launch_kernel_over("gather_supplemental",
                         gather_supplemental<Number>,
                         n_values,
                         256,
                         nullptr,
                         block_element,
                         supplemental,
                         n_values,
                         elements_per_block,
                         n_supplemental,
                         block_supplemental);
    }



    template void
    gather_block_supplemental<float>(const index_type *,
                                     const float *,
                                     unsigned int,
                                     unsigned int,
                                     unsigned int,
                                     float *);
    template void
    gather_block_supplemental<double>(const index_type *,
                                      const double *,
                                      unsigned int,
                                      unsigned int,
                                      unsigned int,
                                      double *);
  } // namespace internal
} // namespace GPUAssembly
