// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The host versions of the resident loops: the same work as the CUDA
// kernels of plugin/cuda/distributed/resident_kernels.cu, one entry after
// another, and the dispatch between the two.

#include <gpu_assembly/distributed/resident_kernels.h>

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
          dst[j] = src[indices[j]];
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
          target[targets[i]] += values[sources[i]];
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
          {
            Number value = target[group_targets[u]];
            for (int k = group_offsets[u]; k < group_offsets[u + 1]; ++k)
              value += received[group_entries[k]];
            target[group_targets[u]] = value;
          }
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
            Number    sum = 0;
            for (int k = row_offsets[row]; k < row_offsets[row + 1]; ++k)
              sum += values[k] * x[columns[k]];
            y[row] = sum;
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
          {
            const Number d = values[diagonal_positions[i]];
            result[i]      = d != Number(0) ? Number(1) / d : Number(0);
          }
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
          sum += double(x[i]) * double(y[i]);
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
          {
            x[i] += a * p[i];
            const Number ri = r[i] - a * q[i];
            const Number zi = inverse_diagonal[i] * ri;
            r[i]            = ri;
            z[i]            = zi;
            sums[0] += double(ri) * double(zi);
            sums[1] += double(ri) * double(ri);
          }
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
          p[i] = z[i] + b * p[i];
      }



#define INSTANTIATE(Number)                        \
  template void   gather(bool,                     \
                         const Number *,           \
                         const int *,              \
                         std::size_t,              \
                         Number *);                \
  template void   scatter_add(bool,                \
                              const Number *,      \
                              const int *,         \
                              const int *,         \
                              std::size_t,         \
                              Number *);           \
  template void   add_grouped(bool,                \
                              const Number *,      \
                              const int *,         \
                              const int *,         \
                              const int *,         \
                              std::size_t,         \
                              Number *);           \
  template void   spmv_rows(bool,                  \
                            const int *,           \
                            const int *,           \
                            const Number *,        \
                            const int *,           \
                            std::size_t,           \
                            const Number *,        \
                            Number *);             \
  template void   inverse_diagonal(bool,           \
                                   const Number *, \
                                   const int *,    \
                                   std::size_t,    \
                                   Number *);      \
  template double dot(bool,                        \
                      const Number *,              \
                      const Number *,              \
                      std::size_t,                 \
                      const Workspace &);          \
  template void   cg_start(bool,                   \
                           const Number *,         \
                           const Number *,         \
                           Number *,               \
                           Number *,               \
                           Number *,               \
                           Number *,               \
                           std::size_t,            \
                           const Workspace &,      \
                           double(&)[2]);          \
  template void   cg_update(bool,                  \
                            double,                \
                            const Number *,        \
                            const Number *,        \
                            const Number *,        \
                            Number *,              \
                            Number *,              \
                            Number *,              \
                            std::size_t,           \
                            const Workspace &,     \
                            double(&)[2]);         \
  template void   cg_direction(bool,               \
                               double,             \
                               const Number *,     \
                               Number *,           \
                               std::size_t);

      INSTANTIATE(float)
      INSTANTIATE(double)
#undef INSTANTIATE
    } // namespace ResidentKernels
  }   // namespace internal
} // namespace GPUAssembly
