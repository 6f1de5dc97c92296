// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_resident_kernels_h
#define gpu_assembly_distributed_resident_kernels_h

#include <cstddef>

/**
 * @file
 * The loops of the resident distributed linear algebra
 * (DistributedDeviceVector, DistributedDeviceMatrix, DistributedJacobiCG and
 * the resident exchange of DistributedAssembler): @p on_device chooses
 * whether a loop runs on the host or as a CUDA kernel on the default
 * stream, and the pointers must then be host or device pointers alike. The
 * body of each loop is written once and shared by both (the internal
 * header plugin/src/distributed/resident_loop_bodies.h); the host path is
 * what CI runs. No deal.II or MPI here: nvcc compiles this header.
 *
 * Sums that leave a rank (dots, norms) are accumulated in double and are
 * this rank's part only; the callers reduce them over the ranks.
 */

namespace GPUAssembly
{
  namespace internal
  {
    namespace ResidentKernels
    {
      /// dst[j] = src[indices[j]] for j < n.
      template <typename Number>
      void
      gather(const bool        on_device,
             const Number     *src,
             const int        *indices,
             const std::size_t n,
             Number           *dst);

      /// target[targets[i]] += values[sources[i]] for i < n; the targets
      /// are distinct (no two threads write one entry).
      template <typename Number>
      void
      scatter_add(const bool        on_device,
                  const Number     *values,
                  const int        *sources,
                  const int        *targets,
                  const std::size_t n,
                  Number           *target);

      /**
       * For each u < n_groups, target[group_targets[u]] += the values
       * received[group_entries[k]] for k in [group_offsets[u],
       * group_offsets[u + 1]), added one after another in this order: the
       * received entries of one target, grouped so that one thread adds
       * them all in a fixed order (no atomics).
       */
      template <typename Number>
      void
      add_grouped(const bool        on_device,
                  const Number     *received,
                  const int        *group_targets,
                  const int        *group_offsets,
                  const int        *group_entries,
                  const std::size_t n_groups,
                  Number           *target);

      /**
       * y[rows[i]] = sum over k in [row_offsets[r], row_offsets[r + 1]) of
       * values[k] x[columns[k]], r = rows[i], for i < n_rows.
       */
      template <typename Number>
      void
      spmv_rows(const bool        on_device,
                const int        *row_offsets,
                const int        *columns,
                const Number     *values,
                const int        *rows,
                const std::size_t n_rows,
                const Number     *x,
                Number           *y);

      /// inverse_diagonal[i] = 1 / values[diagonal_positions[i]] (0 where
      /// the diagonal is 0) for i < n.
      template <typename Number>
      void
      inverse_diagonal(const bool        on_device,
                       const Number     *values,
                       const int        *diagonal_positions,
                       const std::size_t n,
                       Number           *inverse_diagonal);

      /**
       * Scratch space of the device reductions: partial sums per block and
       * the finished sums. Unused by the host versions.
       */
      struct Workspace
      {
        double *partial = nullptr; // room for 2 * max_blocks values
        double *result  = nullptr; // 2 values
      };

      /// Blocks of the device reductions at most (the size of
      /// Workspace::partial is 2 * max_blocks).
      constexpr unsigned int max_blocks = 1024;

      /// sum x[i] y[i], i < n, in double.
      template <typename Number>
      double
      dot(const bool        on_device,
          const Number     *x,
          const Number     *y,
          const std::size_t n,
          const Workspace  &workspace);

      /**
       * CG start with x_0 = 0: r = b, z = D^{-1} r, p = z, x = 0;
       * sums[0] = r.z, sums[1] = r.r.
       */
      template <typename Number>
      void
      cg_start(const bool        on_device,
               const Number     *b,
               const Number     *inverse_diagonal,
               Number           *x,
               Number           *r,
               Number           *z,
               Number           *p,
               const std::size_t n,
               const Workspace  &workspace,
               double (&sums)[2]);

      /**
       * x += alpha p, r -= alpha q, z = D^{-1} r; sums[0] = r.z,
       * sums[1] = r.r of the new r.
       */
      template <typename Number>
      void
      cg_update(const bool        on_device,
                const double      alpha,
                const Number     *p,
                const Number     *q,
                const Number     *inverse_diagonal,
                Number           *x,
                Number           *r,
                Number           *z,
                const std::size_t n,
                const Workspace  &workspace,
                double (&sums)[2]);

      /// p = z + beta p.
      template <typename Number>
      void
      cg_direction(const bool        on_device,
                   const double      beta,
                   const Number     *z,
                   Number           *p,
                   const std::size_t n);

      /**
       * The memory of the device path (synchronous copies on the default
       * stream, in plugin/cuda/distributed/resident_kernels.cu). The host
       * path never calls these.
       */
      namespace Device
      {
        void
        copy_to_host(void *dst, const void *src, const std::size_t bytes);

        void
        copy_to_device(void *dst, const void *src, const std::size_t bytes);

        void
        copy_on_device(void *dst, const void *src, const std::size_t bytes);

        void
        set_zero(void *dst, const std::size_t bytes);

        /// Wait for the default stream (before MPI reads device buffers).
        void
        synchronize();

        /// Page-locked host memory, for staging messages of the device.
        void *
        allocate_pinned(const std::size_t bytes);

        void
        free_pinned(void *pointer) noexcept;
      } // namespace Device
    }   // namespace ResidentKernels
  }     // namespace internal
} // namespace GPUAssembly

#endif
