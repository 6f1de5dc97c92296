// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_distributed_resident_loop_bodies_h
#define gpu_assembly_src_distributed_resident_loop_bodies_h

// The bodies of the resident loops, written once for both storage modes:
// resident_kernels.cc runs them one index after another on the host, the
// CUDA kernels of plugin/cuda/distributed/resident_kernels.cu one index a
// thread, so the two paths cannot drift apart. What differs between the
// two is only how the indices are spread and how sums over the indices are
// combined (in index order on the host, per block and then over the blocks
// on the device). No deal.II here: nvcc compiles this header.

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/distributed/resident_kernels.h>

#include <cstddef>

namespace GPUAssembly
{
  namespace internal
  {
    namespace ResidentKernels
    {
      /**
       * One index of each loop of resident_kernels.h. The reductions add
       * this index's terms to the caller's running sums.
       */
      namespace Body
      {
        template <typename Number>
        GPU_ASSEMBLY_HOST_DEVICE inline void
        gather(const std::size_t j,
               const Number     *src,
               const int        *indices,
               Number           *dst)
        {
          dst[j] = src[indices[j]];
        }

        template <typename Number>
        GPU_ASSEMBLY_HOST_DEVICE inline void
        scatter_add(const std::size_t i,
                    const Number     *values,
                    const int        *sources,
                    const int        *targets,
                    Number           *target)
        {
          target[targets[i]] += values[sources[i]];
        }

        template <typename Number>
        GPU_ASSEMBLY_HOST_DEVICE inline void
        add_grouped(const std::size_t u,
                    const Number     *received,
                    const int        *group_targets,
                    const int        *group_offsets,
                    const int        *group_entries,
                    Number           *target)
        {
          Number value = target[group_targets[u]];
          for (int k = group_offsets[u]; k < group_offsets[u + 1]; ++k)
            value += received[group_entries[k]];
          target[group_targets[u]] = value;
        }

        /**
         * The entries row_offsets[row] + part, + part + n_parts, ... of
         * row @p row times x, added in this order: the whole row with
         * part 0 of 1 (the host), one lane's share with the device's
         * lanes per row.
         */
        template <typename Number>
        GPU_ASSEMBLY_HOST_DEVICE inline Number
        spmv_row_part(const int          row,
                      const unsigned int part,
                      const unsigned int n_parts,
                      const int         *row_offsets,
                      const int         *columns,
                      const Number      *values,
                      const Number      *x)
        {
          Number sum = 0;
          for (int k = row_offsets[row] + part; k < row_offsets[row + 1];
               k += n_parts)
            sum += values[k] * x[columns[k]];
          return sum;
        }

        template <typename Number>
        GPU_ASSEMBLY_HOST_DEVICE inline void
        inverse_diagonal(const std::size_t i,
                         const Number     *values,
                         const int        *diagonal_positions,
                         Number           *result)
        {
          const Number d = values[diagonal_positions[i]];
          result[i]      = d != Number(0) ? Number(1) / d : Number(0);
        }

        template <typename Number>
        GPU_ASSEMBLY_HOST_DEVICE inline void
        dot(const std::size_t i, const Number *x, const Number *y, double &sum)
        {
          sum += double(x[i]) * double(y[i]);
        }

        template <typename Number>
        GPU_ASSEMBLY_HOST_DEVICE inline void
        cg_start(const std::size_t i,
                 const Number     *b,
                 const Number     *inverse_diagonal,
                 Number           *x,
                 Number           *r,
                 Number           *z,
                 Number           *p,
                 double (&sums)[2])
        {
          const Number ri = b[i];
          const Number zi = inverse_diagonal[i] * ri;
          x[i]            = 0;
          r[i]            = ri;
          z[i]            = zi;
          p[i]            = zi;
          sums[0] += double(ri) * double(zi);
          sums[1] += double(ri) * double(ri);
        }

        /// @p alpha is rounded to Number by the caller, once for all
        /// indices.
        template <typename Number>
        GPU_ASSEMBLY_HOST_DEVICE inline void
        cg_update(const std::size_t i,
                  const Number      alpha,
                  const Number     *p,
                  const Number     *q,
                  const Number     *inverse_diagonal,
                  Number           *x,
                  Number           *r,
                  Number           *z,
                  double (&sums)[2])
        {
          x[i] += alpha * p[i];
          const Number ri = r[i] - alpha * q[i];
          const Number zi = inverse_diagonal[i] * ri;
          r[i]            = ri;
          z[i]            = zi;
          sums[0] += double(ri) * double(zi);
          sums[1] += double(ri) * double(ri);
        }

        /// @p beta is rounded to Number by the caller.
        template <typename Number>
        GPU_ASSEMBLY_HOST_DEVICE inline void
        cg_direction(const std::size_t i,
                     const Number      beta,
                     const Number     *z,
                     Number           *p)
        {
          p[i] = z[i] + beta * p[i];
        }
      } // namespace Body



      /**
       * The device versions of the loops of resident_kernels.h, the same
       * arguments but the storage mode (CUDA kernels on the default
       * stream, in plugin/cuda/distributed/resident_kernels.cu). Only the
       * dispatch in resident_kernels.cc calls them.
       */
      namespace Device
      {
        template <typename Number>
        void
        gather(const Number     *src,
               const int        *indices,
               const std::size_t n,
               Number           *dst);

        template <typename Number>
        void
        scatter_add(const Number     *values,
                    const int        *sources,
                    const int        *targets,
                    const std::size_t n,
                    Number           *target);

        template <typename Number>
        void
        add_grouped(const Number     *received,
                    const int        *group_targets,
                    const int        *group_offsets,
                    const int        *group_entries,
                    const std::size_t n_groups,
                    Number           *target);

        template <typename Number>
        void
        spmv_rows(const int        *row_offsets,
                  const int        *columns,
                  const Number     *values,
                  const int        *rows,
                  const std::size_t n_rows,
                  const Number     *x,
                  Number           *y);

        template <typename Number>
        void
        inverse_diagonal(const Number     *values,
                         const int        *diagonal_positions,
                         const std::size_t n,
                         Number           *inverse_diagonal);

        template <typename Number>
        double
        dot(const Number     *x,
            const Number     *y,
            const std::size_t n,
            const Workspace  &workspace);

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
                 double (&sums)[2]);

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
                  double (&sums)[2]);

        template <typename Number>
        void
        cg_direction(const double      beta,
                     const Number     *z,
                     Number           *p,
                     const std::size_t n);
      } // namespace Device
    }   // namespace ResidentKernels
  }     // namespace internal
} // namespace GPUAssembly

/**
 * Instantiates the loops of resident_kernels.h (in resident_kernels.cc) or
 * their device versions (in namespace Device of resident_kernels.cu) for
 * @p Number: each from its own declaration, so that the signatures are
 * written once, where they are declared.
 */
#define GPU_ASSEMBLY_INSTANTIATE_RESIDENT_LOOPS(Number)                 \
  template decltype(gather<Number>)           gather<Number>;           \
  template decltype(scatter_add<Number>)      scatter_add<Number>;      \
  template decltype(add_grouped<Number>)      add_grouped<Number>;      \
  template decltype(spmv_rows<Number>)        spmv_rows<Number>;        \
  template decltype(inverse_diagonal<Number>) inverse_diagonal<Number>; \
  template decltype(dot<Number>)              dot<Number>;              \
  template decltype(cg_start<Number>)         cg_start<Number>;         \
  template decltype(cg_update<Number>)        cg_update<Number>;        \
  template decltype(cg_direction<Number>)     cg_direction<Number>;

#endif
