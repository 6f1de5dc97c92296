// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>

#include <gpu_assembly/distributed/distributed_jacobi_cg.h>

#include <cmath>

namespace GPUAssembly
{
  template <typename Number>
  typename DistributedJacobiCG<Number>::Result
  DistributedJacobiCG<Number>::solve(const DistributedDeviceMatrix<Number> &A,
                                     DistributedDeviceVector<Number>       &x,
                                     const DistributedDeviceVector<Number> &b,
                                     const double       relative_tolerance,
                                     const unsigned int max_iterations)
  {
    internal::check_cg_system(A, b, "DistributedJacobiCG");
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



  template class DistributedJacobiCG<float>;
  template class DistributedJacobiCG<double>;
} // namespace GPUAssembly
