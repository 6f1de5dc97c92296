// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_distributed_preconditioned_cg_h
#define gpu_assembly_distributed_distributed_preconditioned_cg_h

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/distributed_jacobi_cg.h>
#include <gpu_assembly/distributed/resident_array.h>
#include <gpu_assembly/lac/chebyshev.h>
#include <gpu_assembly/lac/point_block_jacobi.h>
#include <gpu_assembly/lac/preconditioned_cg.h>

#include <string>
#include <vector>

namespace GPUAssembly
{
  /// The preconditioner of a CG solve.
  enum class CGPreconditioner
  {
    /// The inverse diagonal (PointJacobi), fused into CG's loops.
    jacobi,
    /// Chebyshev-accelerated Jacobi (ChebyshevJacobi): degree - 1 SpMVs
    /// per iteration, far fewer iterations where the mesh is fine.
    chebyshev,
    /// The inverses of the node blocks (PointBlocks): for vector-valued
    /// problems, whose fields at one node couple strongly.
    point_block_jacobi
  };

  /// "jacobi", "chebyshev" or "point_block_jacobi".
  std::string
  to_string(const CGPreconditioner preconditioner);



  /**
   * Point-block Jacobi on the resident distributed matrix: a vector
   * operator (vmult()) for PreconditionedCG. The blocks are the rank's
   * nodes whose DoFs it owns (PointBlocks::make()); their inverses are
   * computed where the matrix stores its values (initialize(), after every
   * assembly), one block per index, and applied one block per index, so
   * the result does not depend on the number of threads, and on one rank
   * equals the single-process result.
   *
   * Instantiated for float and double.
   */
  template <typename Number>
  class DistributedPointBlockJacobi
  {
  public:
    /**
     * The blocks of the nodes of @p adapter (its arrays' node_dofs, the
     * fields of MeshArrays::layout) for the rows of @p A, which must have
     * been reinit()ed from the same adapter.
     */
    template <int dim>
    void
    reinit(const DoFHandlerAdapter<dim>          &adapter,
           const DistributedDeviceMatrix<Number> &A)
    {
      const auto &partitioner     = *A.get_partitioner();
      const auto &local_to_global = adapter.get_local_to_global();
      const auto &arrays          = adapter.get_arrays();
      reinit(PointBlocks::make(arrays.node_dofs,
                               arrays.layout.n_components,
                               A.m(),
                               [&](const std::size_t dof) -> long long {
                                 const auto global = local_to_global[dof];
                                 return partitioner.in_local_range(global) ?
                                          static_cast<long long>(
                                            partitioner.global_to_local(
                                              global)) :
                                          -1;
                               }),
             A);
    }

    /// The blocks @p blocks (in @p A's local row numbering).
    void
    reinit(const PointBlocks &blocks, const DistributedDeviceMatrix<Number> &A);

    /**
     * The inverses of the blocks of @p A's current values. Returns the
     * number of singular blocks over all ranks (they take the reciprocals
     * of their diagonal; PointBlockInverse). Collective.
     */
    unsigned int
    initialize(const DistributedDeviceMatrix<Number> &A);

    /// z = P r on the owned entries.
    void
    vmult(DistributedDeviceVector<Number>       &z,
          const DistributedDeviceVector<Number> &r) const;

    const PointBlocks &
    get_blocks() const
    {
      return blocks;
    }

    /// The inverses, block k's row-major at k * block_size^2.
    void
    copy_inverses_to_host(std::vector<Number> &values) const
    {
      inverses.copy_to_host(values);
    }

  private:
    PointBlocks           blocks;
    ResidentArray<int>    offsets, rows, singular;
    ResidentArray<Number> inverses;
  };



  /**
   * Preconditioned CG on a DistributedDeviceMatrix and
   * DistributedDeviceVectors with the preconditioner of
   * AdditionalData::preconditioner: PreconditionedCG with PointJacobi
   * (the iterates of DistributedJacobiCG, bit for bit), ChebyshevJacobi or
   * DistributedPointBlockJacobi. Everything runs where the objects store
   * their entries (device, or host in host mode), and every sum is
   * accumulated in a fixed order on each rank and reduced with
   * MPI_Allreduce: a solve is bitwise reproducible for a fixed number of
   * ranks; on other numbers of ranks the sums, and so the iterates, differ
   * by rounding.
   *
   * The preconditioner is set up for the matrix's current values at every
   * solve (the inverse diagonal; Chebyshev's eigenvalue estimate,
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
    struct AdditionalData
    {
      /// Chebyshev: its iteration counts grow more slowly with the mesh
      /// than Jacobi's, and it needs nothing but the matrix.
      CGPreconditioner preconditioner = CGPreconditioner::chebyshev;
      /// The Chebyshev polynomial and its eigenvalue estimate.
      ChebyshevParameters chebyshev;
    };

    /**
     * Choose the preconditioner; for point_block_jacobi the blocks of
     * @p adapter's nodes for the rows of @p A (reinit()ed from the same
     * adapter). Again after every change of the mesh or the DoFs.
     */
    template <int dim>
    void
    reinit(const DoFHandlerAdapter<dim>          &adapter,
           const DistributedDeviceMatrix<Number> &A,
           const AdditionalData &additional_data = AdditionalData())
    {
      additional_data.chebyshev.check();
      data = additional_data;
      if (data.preconditioner == CGPreconditioner::point_block_jacobi)
        block_jacobi.reinit(adapter, A);
      blocks_ready =
        data.preconditioner == CGPreconditioner::point_block_jacobi;
    }

    /**
     * Set the preconditioner up for @p A's values and solve A x = b from
     * x = 0 (@p b with A's partitioner and storage; @p x reinit()ed to
     * them if it has not). Does not throw where the iteration limit is
     * reached: CGResult::converged says. Collective.
     */
    CGResult
    solve(const DistributedDeviceMatrix<Number> &A,
          DistributedDeviceVector<Number>       &x,
          const DistributedDeviceVector<Number> &b,
          const CGControl                       &control);

    const AdditionalData &
    get_additional_data() const
    {
      return data;
    }

    /// The Chebyshev preconditioner of the last solve (its schedule holds
    /// the eigenvalue estimate).
    const ChebyshevJacobi<DistributedDeviceMatrix<Number>,
                          DistributedDeviceVector<Number>> &
    get_chebyshev() const
    {
      return chebyshev;
    }

    /// The point-block Jacobi preconditioner.
    const DistributedPointBlockJacobi<Number> &
    get_point_block_jacobi() const
    {
      return block_jacobi;
    }

  private:
    using Matrix = DistributedDeviceMatrix<Number>;
    using Vector = DistributedDeviceVector<Number>;

    AdditionalData                                        data;
    bool                                                  blocks_ready = false;
    Vector                                                inverse_diagonal;
    ChebyshevJacobi<Matrix, Vector>                       chebyshev;
    DistributedPointBlockJacobi<Number>                   block_jacobi;
    PreconditionedCG<Matrix, Vector, PointJacobi<Number>> jacobi_cg;
    PreconditionedCG<Matrix, Vector, ChebyshevJacobi<Matrix, Vector>>
      chebyshev_cg;
    PreconditionedCG<Matrix, Vector, DistributedPointBlockJacobi<Number>>
      block_jacobi_cg;
  };
} // namespace GPUAssembly

#endif
