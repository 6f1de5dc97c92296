// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>

#include <gpu_assembly/distributed/distributed_jacobi_cg.h>

#include <cmath>

namespace GPUAssembly
{
  template <typename Number>
  void
  cg_reinit(const DistributedDeviceMatrix<Number> &A,
            DistributedDeviceVector<Number>       &v)
  {
    if (v.get_partitioner() != A.get_partitioner() ||
        v.stores_on_device() != A.stores_on_device() ||
        v.get_additional_data().force_host_staging !=
          A.get_additional_data().force_host_staging)
      v.reinit(A.get_partitioner(), A.get_additional_data());
  }



  template <typename Number, typename PointPreconditioner>
  void
  cg_start(const PointPreconditioner             &preconditioner,
           const DistributedDeviceVector<Number> &b,
           DistributedDeviceVector<Number>       &x,
           DistributedDeviceVector<Number>       &r,
           DistributedDeviceVector<Number>       &z,
           DistributedDeviceVector<Number>       &p,
           double (&sums)[2])
  {
    r.sum_over_owned(CGStartStep<Number, PointPreconditioner>{b.data(),
                                                              preconditioner,
                                                              x.data(),
                                                              r.data(),
                                                              z.data(),
                                                              p.data()},
                     sums);
  }



  template <typename Number, typename PointPreconditioner>
  void
  cg_update(const double                           alpha,
            const PointPreconditioner             &preconditioner,
            const DistributedDeviceVector<Number> &p,
            const DistributedDeviceVector<Number> &q,
            DistributedDeviceVector<Number>       &x,
            DistributedDeviceVector<Number>       &r,
            DistributedDeviceVector<Number>       &z,
            double (&sums)[2])
  {
    r.sum_over_owned(
      CGUpdateStep<Number, PointPreconditioner>{static_cast<Number>(alpha),
                                                p.data(),
                                                q.data(),
                                                preconditioner,
                                                x.data(),
                                                r.data(),
                                                z.data()},
      sums);
  }



  template <typename Number>
  void
  cg_direction(const double                           beta,
               const DistributedDeviceVector<Number> &z,
               DistributedDeviceVector<Number>       &p)
  {
    for_each_index(p.stores_on_device(),
                   p.get_partitioner()->locally_owned_size(),
                   CGDirectionStep<Number>{static_cast<Number>(beta),
                                           z.data(),
                                           p.data()});
  }



  template <typename Number>
  typename DistributedJacobiCG<Number>::Result
  DistributedJacobiCG<Number>::solve(const DistributedDeviceMatrix<Number> &A,
                                     DistributedDeviceVector<Number>       &x,
                                     const DistributedDeviceVector<Number> &b,
                                     const double       relative_tolerance,
                                     const unsigned int max_iterations)
  {
    const auto &partitioner = A.get_partitioner();
    AssertThrow(partitioner,
                dealii::ExcMessage(
                  "DistributedJacobiCG::solve(): the matrix is empty; "
                  "reinit() it first."));
    AssertThrow(b.get_partitioner() &&
                  (b.get_partitioner() == partitioner ||
                   b.get_partitioner()->is_compatible(*partitioner)) &&
                  b.stores_on_device() == A.stores_on_device(),
                dealii::ExcMessage(
                  "DistributedJacobiCG::solve(): the right-hand side does "
                  "not have the matrix's layout (reinit() it with "
                  "A.get_partitioner()) or storage (host or device)."));
    AssertThrow(relative_tolerance >= 0 && std::isfinite(relative_tolerance),
                dealii::ExcMessage(
                  "DistributedJacobiCG::solve(): the relative tolerance must "
                  "be finite and not negative."));
    cg_reinit(A, inverse_diagonal);
    A.compute_inverse_diagonal(inverse_diagonal);
    CGControl control;
    control.relative_tolerance = relative_tolerance;
    control.absolute_tolerance = 0;
    control.max_iterations     = max_iterations;
    return cg.solve(A,
                    x,
                    b,
                    PointJacobi<Number>{inverse_diagonal.data()},
                    control);
  }



#define GPU_ASSEMBLY_INSTANTIATE(Number)                              \
  template void cg_reinit(const DistributedDeviceMatrix<Number> &,    \
                          DistributedDeviceVector<Number> &);         \
  template void cg_start(const PointJacobi<Number> &,                 \
                         const DistributedDeviceVector<Number> &,     \
                         DistributedDeviceVector<Number> &,           \
                         DistributedDeviceVector<Number> &,           \
                         DistributedDeviceVector<Number> &,           \
                         DistributedDeviceVector<Number> &,           \
                         double(&)[2]);                               \
  template void cg_update(const double,                               \
                          const PointJacobi<Number> &,                \
                          const DistributedDeviceVector<Number> &,    \
                          const DistributedDeviceVector<Number> &,    \
                          DistributedDeviceVector<Number> &,          \
                          DistributedDeviceVector<Number> &,          \
                          DistributedDeviceVector<Number> &,          \
                          double(&)[2]);                              \
  template void cg_direction(const double,                            \
                             const DistributedDeviceVector<Number> &, \
                             DistributedDeviceVector<Number> &);      \
  template class DistributedJacobiCG<Number>;

  GPU_ASSEMBLY_INSTANTIATE(float)
  GPU_ASSEMBLY_INSTANTIATE(double)
#undef GPU_ASSEMBLY_INSTANTIATE
} // namespace GPUAssembly
