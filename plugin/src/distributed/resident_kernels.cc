// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The dispatch of the resident loops between the storage modes, and their
// host versions: the bodies of resident_loop_bodies.h, one index after
// another, and sums in the order of the indices.

#include "resident_loop_bodies.h"

namespace GPUAssembly
{
  namespace internal
  {
    namespace ResidentKernels
    {
      template <typename Number>
      void
      gather(const bool        on_device,
             const Number     *src,
             const int        *indices,
             const std::size_t n,
             Number           *dst)
      {
        if (on_device)
          return Device::gather(src, indices, n, dst);
        for (std::size_t j = 0; j < n; ++j)
          Body::gather(j, src, indices, dst);
      }



      template <typename Number>
      void
      scatter_add(const bool        on_device,
                  const Number     *values,
                  const int        *sources,
                  const int        *targets,
                  const std::size_t n,
                  Number           *target)
      {
        if (on_device)
          return Device::scatter_add(values, sources, targets, n, target);
        for (std::size_t i = 0; i < n; ++i)
          Body::scatter_add(i, values, sources, targets, target);
      }



      template <typename Number>
      void
      add_grouped(const bool        on_device,
                  const Number     *received,
                  const int        *group_targets,
                  const int        *group_offsets,
                  const int        *group_entries,
                  const std::size_t n_groups,
                  Number           *target)
      {
        if (on_device)
          return Device::add_grouped(received,
                                     group_targets,
                                     group_offsets,
                                     group_entries,
                                     n_groups,
                                     target);
        for (std::size_t u = 0; u < n_groups; ++u)
          Body::add_grouped(u,
                            received,
                            group_targets,
                            group_offsets,
                            group_entries,
                            target);
      }



      template <typename Number>
      void
      spmv_rows(const bool        on_device,
                const int        *row_offsets,
                const int        *columns,
                const Number     *values,
                const int        *rows,
                const std::size_t n_rows,
                const Number     *x,
                Number           *y)
      {
        if (on_device)
          return Device::spmv_rows(row_offsets,
                                   columns,
                                   values,
                                   rows,
                                   n_rows,
                                   x,
                                   y);
        for (std::size_t i = 0; i < n_rows; ++i)
          {
            const int row = rows[i];
            y[row] =
              Body::spmv_row_part(row, 0u, 1u, row_offsets, columns, values, x);
          }
      }



      template <typename Number>
      void
      inverse_diagonal(const bool        on_device,
                       const Number     *values,
                       const int        *diagonal_positions,
                       const std::size_t n,
                       Number           *result)
      {
        if (on_device)
          return Device::inverse_diagonal(values,
                                          diagonal_positions,
                                          n,
                                          result);
        for (std::size_t i = 0; i < n; ++i)
          Body::inverse_diagonal(i, values, diagonal_positions, result);
      }



      template <typename Number>
      double
      dot(const bool        on_device,
          const Number     *x,
          const Number     *y,
          const std::size_t n,
          const Workspace  &workspace)
      {
        if (on_device)
          return Device::dot(x, y, n, workspace);
        double sum = 0;
        for (std::size_t i = 0; i < n; ++i)
          Body::dot(i, x, y, sum);
        return sum;
      }



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
               double (&sums)[2])
      {
        if (on_device)
          return Device::cg_start(b,
                                  inverse_diagonal,
                                  x,
                                  r,
                                  z,
                                  p,
                                  n,
                                  workspace,
                                  sums);
        sums[0] = sums[1] = 0;
        for (std::size_t i = 0; i < n; ++i)
          Body::cg_start(i, b, inverse_diagonal, x, r, z, p, sums);
      }



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
                double (&sums)[2])
      {
        if (on_device)
          return Device::cg_update(alpha,
                                   p,
                                   q,
                                   inverse_diagonal,
                                   x,
                                   r,
                                   z,
                                   n,
                                   workspace,
                                   sums);
        const Number a = static_cast<Number>(alpha);
        sums[0] = sums[1] = 0;
        for (std::size_t i = 0; i < n; ++i)
          Body::cg_update(i, a, p, q, inverse_diagonal, x, r, z, sums);
      }



      template <typename Number>
      void
      cg_direction(const bool        on_device,
                   const double      beta,
                   const Number     *z,
                   Number           *p,
                   const std::size_t n)
      {
        if (on_device)
          return Device::cg_direction(beta, z, p, n);
        const Number b = static_cast<Number>(beta);
        for (std::size_t i = 0; i < n; ++i)
          Body::cg_direction(i, b, z, p);
      }



      GPU_ASSEMBLY_INSTANTIATE_RESIDENT_LOOPS(float)
      GPU_ASSEMBLY_INSTANTIATE_RESIDENT_LOOPS(double)
    } // namespace ResidentKernels
  }   // namespace internal
} // namespace GPUAssembly
