// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>

#include <gpu_assembly/distributed/distributed_jacobi_bicgstab.h>

namespace GPUAssembly
{
  template <typename Number>
  CGResult
  DistributedJacobiBiCGStab<Number>::solve(
    const DistributedDeviceMatrix<Number> &A,
    DistributedDeviceVector<Number>       &x,
    const DistributedDeviceVector<Number> &b,
    const CGControl                       &control)
  {
    internal::check_cg_system(A, b, "DistributedJacobiBiCGStab");
    control.check();
    cg_reinit(A, inverse_diagonal);
    A.compute_inverse_diagonal(inverse_diagonal);
    return bicgstab.solve(A,
                          x,
                          b,
                          PointJacobi<Number>{inverse_diagonal.data()},
                          control);
  }



  template class DistributedJacobiBiCGStab<float>;
  template class DistributedJacobiBiCGStab<double>;
} // namespace GPUAssembly
