// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>

#include <gpu_assembly/distributed/distributed_preconditioned_cg.h>

namespace GPUAssembly
{
  template <typename Number>
  CGResult
  DistributedPreconditionedCG<Number>::solve(const Matrix    &A,
                                             Vector          &x,
                                             const Vector    &b,
                                             const CGControl &control)
  {
    internal::check_cg_system(A, b, "DistributedPreconditionedCG");
    return solver.solve(A, x, b, data, control);
  }



  template class DistributedPreconditionedCG<float>;
  template class DistributedPreconditionedCG<double>;
} // namespace GPUAssembly
