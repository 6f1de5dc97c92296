// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_distributed_preconditioned_cg_h
#define gpu_assembly_distributed_distributed_preconditioned_cg_h

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/distributed_jacobi_cg.h>
#include <gpu_assembly/lac/cg_solver.h>

namespace GPUAssembly
{
  /**
   * The node blocks (PointBlocks::make()) of @p adapter's nodes for the
   * rows of @p A, which must have been reinit()ed from the same adapter:
   * the nodes whose DoFs this rank owns; a DoF on no such node is a block
   * of its own.
   */
  template <int dim, typename Number>
  PointBlocks
  make_point_blocks(const DoFHandlerAdapter<dim>          &adapter,
                    const DistributedDeviceMatrix<Number> &A)
  {
    const auto &partitioner     = *A.get_partitioner();
    const auto &local_to_global = adapter.get_local_to_global();
    const auto &arrays          = adapter.get_arrays();
    return PointBlocks::make(arrays.node_dofs,
                             arrays.layout.n_components,
                             A.m(),
                             [&](const std::size_t dof) -> long long {
                               const auto global = local_to_global[dof];
                               return partitioner.in_local_range(global) ?
                                        static_cast<long long>(
                                          partitioner.global_to_local(global)) :
                                        -1;
                             });
  }



  /**
   * Preconditioned CG on a DistributedDeviceMatrix and
   * DistributedDeviceVectors with the preconditioner of
   * AdditionalData::preconditioner: jacobi (the iterates of
   * DistributedJacobiCG, bit for bit), chebyshev (ChebyshevJacobi, whose
   * matrix-vector products update the halo) or point_block_jacobi
   * (PointBlockJacobi on the rank's nodes). Everything runs where the
   * objects store their entries (device, or host in host mode), and every
   * sum is accumulated in a fixed order on each rank and reduced with
   * MPI_Allreduce: a solve is bitwise reproducible for a fixed number of
   * ranks. On another number of ranks the sums differ by rounding, and so
   * does Chebyshev's eigenvalue estimate, whose start vector (as deal.II's)
   * follows the DoF numbering that the partition gives.
   *
   * Each solve sets the preconditioner up for the matrix's current values
   * (the inverse diagonal; Chebyshev's eigenvalue estimate,
   * eig_cg_n_iterations CG steps; the block inverses, one pass over the
   * matrix), so a solve after a re-assembly needs nothing else.
   *
   * Usage, after DistributedJacobiCG's example:
   * @code
   * DistributedPreconditionedCG<double>::AdditionalData data;
   * data.preconditioner = CGPreconditioner::chebyshev;
   * DistributedPreconditionedCG<double> cg;
   * cg.reinit(adapter, A, data);
   * CGControl control;
   * control.relative_tolerance = 1e-8;
   * const CGResult result = cg.solve(A, x, b, control);
   * @endcode
   *
   * Instantiated for float and double.
   */
  template <typename Number>
  class DistributedPreconditionedCG
  {
  public:
    using AdditionalData = CGSolverParameters;
    using Matrix         = DistributedDeviceMatrix<Number>;
    using Vector         = DistributedDeviceVector<Number>;

    /**
     * Choose the preconditioner; for point_block_jacobi the blocks of
     * @p adapter's nodes for the rows of @p A (reinit()ed from the same
     * adapter). Again after every change of the mesh or the DoFs.
     */
    template <int dim>
    void
    reinit(const DoFHandlerAdapter<dim> &adapter,
           const Matrix                 &A,
           const AdditionalData         &additional_data = AdditionalData())
    {
      additional_data.chebyshev.check();
      data = additional_data;
      if (data.preconditioner == CGPreconditioner::point_block_jacobi)
        solver.set_blocks(make_point_blocks(adapter, A), A);
    }

    /**
     * Set the preconditioner up for @p A's values and solve A x = b from
     * x = 0 (@p b with A's partitioner and storage; @p x reinit()ed to
     * them if it has not). Does not throw where the iteration limit is
     * reached: CGResult::converged says. Collective.
     */
    CGResult
    solve(const Matrix    &A,
          Vector          &x,
          const Vector    &b,
          const CGControl &control);

    const AdditionalData &
    get_additional_data() const
    {
      return data;
    }

    /// The preconditioners (Chebyshev's schedule holds its eigenvalue
    /// estimate; the block Jacobi's blocks and inverses).
    const CGSolver<Matrix, Vector> &
    get_solver() const
    {
      return solver;
    }

  private:
    AdditionalData           data;
    CGSolver<Matrix, Vector> solver;
  };
} // namespace GPUAssembly

#endif
