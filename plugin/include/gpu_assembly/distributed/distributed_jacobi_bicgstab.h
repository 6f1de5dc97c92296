// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_distributed_jacobi_bicgstab_h
#define gpu_assembly_distributed_distributed_jacobi_bicgstab_h

#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/distributed_jacobi_cg.h>
#include <gpu_assembly/lac/preconditioned_bicgstab.h>

namespace GPUAssembly
{
  /**
   * BiCGStab preconditioned with the matrix diagonal (Jacobi, from the
   * right) on a DistributedDeviceMatrix and DistributedDeviceVectors, for
   * matrices that are not symmetric: PreconditionedBiCGStab with
   * PointJacobi. As DistributedJacobiCG, every vector operation runs where
   * the objects store their entries (device, or host in host mode), each
   * SpMV updates the halo of its operand while the interior rows are
   * multiplied, and every sum is accumulated in double in a fixed order on
   * each rank and reduced with MPI_Allreduce: a solve is bitwise
   * reproducible for a fixed number of ranks, and the same on every
   * exchange path. Each iteration makes two SpMVs and four global
   * reductions.
   *
   * It is the iteration of deal.II's SolverBicgstab with
   * TrilinosWrappers::PreconditionJacobi: x_0 = 0, and stop when
   * ||r|| <= max(relative_tolerance ||b||, absolute_tolerance) (the
   * unpreconditioned residual). Usage as DistributedJacobiCG:
   * @code
   * DistributedJacobiBiCGStab<double> bicgstab;
   * CGControl control;
   * control.relative_tolerance = 1e-8;
   * const CGResult result = bicgstab.solve(A, x, b, control);
   * AssertThrow(result.converged, ExcMessage("BiCGStab did not converge"));
   * @endcode
   *
   * Instantiated for float and double.
   */
  template <typename Number>
  class DistributedJacobiBiCGStab
  {
  public:
    /**
     * Solve A x = b from x = 0 with the inverse diagonal of A's current
     * values. @p b must have A's partitioner and storage; @p x is
     * reinit()ed to them if it has not. Work vectors are kept for the next
     * solve of the same layout. Does not throw where the iteration limit
     * is reached or the iteration breaks down: CGResult::converged says,
     * and a breakdown leaves CGResult::final_residual not finite.
     * Collective.
     */
    CGResult
    solve(const DistributedDeviceMatrix<Number> &A,
          DistributedDeviceVector<Number>       &x,
          const DistributedDeviceVector<Number> &b,
          const CGControl                       &control);

  private:
    PreconditionedBiCGStab<DistributedDeviceMatrix<Number>,
                           DistributedDeviceVector<Number>,
                           PointJacobi<Number>>
                                    bicgstab;
    DistributedDeviceVector<Number> inverse_diagonal;
  };
} // namespace GPUAssembly

#endif
