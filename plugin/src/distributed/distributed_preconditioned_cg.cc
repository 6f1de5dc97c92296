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
    const auto &partitioner = A.get_partitioner();
    AssertThrow(partitioner,
                dealii::ExcMessage(
                  "DistributedPreconditionedCG::solve(): the matrix is "
                  "empty; reinit() it first."));
    AssertThrow(b.get_partitioner() &&
                  (b.get_partitioner() == partitioner ||
                   b.get_partitioner()->is_compatible(*partitioner)) &&
                  b.stores_on_device() == A.stores_on_device(),
                dealii::ExcMessage(
                  "DistributedPreconditionedCG::solve(): the right-hand side "
                  "does not have the matrix's layout (reinit() it with "
                  "A.get_partitioner()) or storage (host or device)."));
    return solver.solve(A, x, b, data, control);
  }



  template class DistributedPreconditionedCG<float>;
  template class DistributedPreconditionedCG<double>;
} // namespace GPUAssembly
