// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_cg_solver_h
#define gpu_assembly_lac_cg_solver_h

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/chebyshev.h>
#include <gpu_assembly/lac/point_block_jacobi.h>
#include <gpu_assembly/lac/preconditioned_cg.h>

#include <string>

/**
 * @file
 * The choice of a CG preconditioner and the solver that holds them all for
 * one matrix and vector type: what DevicePreconditionedCG (one GPU) and
 * DistributedPreconditionedCG (the resident distributed matrix) are made
 * of. No deal.II or CUDA headers here.
 */

namespace GPUAssembly
{
  /// The preconditioner of a CG solve.
  enum class CGPreconditioner
  {
    /// The inverse diagonal (PointJacobi), fused into CG's loops.
    jacobi,
    /// Chebyshev-accelerated Jacobi (ChebyshevJacobi): degree - 1 SpMVs
    /// more per iteration, several times fewer iterations.
    chebyshev,
    /// The inverses of the node blocks (PointBlockJacobi): for
    /// vector-valued problems, whose fields at one node couple.
    point_block_jacobi
  };

  /// "jacobi", "chebyshev" or "point_block_jacobi".
  inline std::string
  to_string(const CGPreconditioner preconditioner)
  {
    switch (preconditioner)
      {
        case CGPreconditioner::jacobi:
          return "jacobi";
        case CGPreconditioner::chebyshev:
          return "chebyshev";
        case CGPreconditioner::point_block_jacobi:
          return "point_block_jacobi";
      }
    return "unknown";
  }

  /// The preconditioner of a preconditioned CG solver and its parameters.
  struct CGSolverParameters
  {
    /// Chebyshev: several times fewer iterations, and so reductions, than
    /// Jacobi, and it needs nothing but the matrix.
    CGPreconditioner preconditioner = CGPreconditioner::chebyshev;
    /// The Chebyshev polynomial and its eigenvalue estimate.
    ChebyshevParameters chebyshev;
  };



  /**
   * PreconditionedCG with each preconditioner of CGPreconditioner for
   * matrices of @p MatrixType and vectors of @p VectorType (the operations
   * PreconditionedCG, ChebyshevJacobi and PointBlockJacobi name). solve()
   * sets the chosen preconditioner up for the matrix's current values
   * (the inverse diagonal; Chebyshev's eigenvalue estimate; the block
   * inverses) and solves; work vectors are kept for the next solve.
   */
  template <typename MatrixType, typename VectorType>
  class CGSolver
  {
  public:
    using Number = internal::CGNumber<VectorType>;

    /// The node blocks of point_block_jacobi for the rows of @p A.
    void
    set_blocks(const PointBlocks &blocks, const MatrixType &A)
    {
      block_jacobi.reinit(blocks, A);
    }

    /// Solve A x = b from x = 0 with the preconditioner of @p parameters.
    CGResult
    solve(const MatrixType         &A,
          VectorType               &x,
          const VectorType         &b,
          const CGSolverParameters &parameters,
          const CGControl          &control)
    {
      control.check();
      switch (parameters.preconditioner)
        {
          case CGPreconditioner::jacobi:
            cg_reinit(A, inverse_diagonal);
            cg_inverse_diagonal(A, inverse_diagonal);
            return jacobi_cg.solve(A,
                                   x,
                                   b,
                                   PointJacobi<Number>{inverse_diagonal.data()},
                                   control);
          case CGPreconditioner::chebyshev:
            chebyshev.initialize(A, parameters.chebyshev);
            return chebyshev_cg.solve(A, x, b, chebyshev, control);
          case CGPreconditioner::point_block_jacobi:
            if (!block_jacobi.fits(A))
              internal::throw_error(
                "CG with point_block_jacobi: the preconditioner has no node "
                "blocks for this matrix; reinit() the solver with the mesh's "
                "arrays (or adapter) and this matrix first.");
            block_jacobi.initialize(A);
            return block_jacobi_cg.solve(A, x, b, block_jacobi, control);
        }
      internal::throw_error("CG: unknown CGPreconditioner.");
    }

    /// The Chebyshev preconditioner of the last Chebyshev solve.
    const ChebyshevJacobi<MatrixType, VectorType> &
    get_chebyshev() const
    {
      return chebyshev;
    }

    /// The point-block Jacobi preconditioner.
    const PointBlockJacobi<MatrixType, VectorType> &
    get_point_block_jacobi() const
    {
      return block_jacobi;
    }

  private:
    VectorType                               inverse_diagonal;
    ChebyshevJacobi<MatrixType, VectorType>  chebyshev;
    PointBlockJacobi<MatrixType, VectorType> block_jacobi;
    PreconditionedCG<MatrixType, VectorType, PointJacobi<Number>> jacobi_cg;
    PreconditionedCG<MatrixType,
                     VectorType,
                     ChebyshevJacobi<MatrixType, VectorType>>
      chebyshev_cg;
    PreconditionedCG<MatrixType,
                     VectorType,
                     PointBlockJacobi<MatrixType, VectorType>>
      block_jacobi_cg;
  };
} // namespace GPUAssembly

#endif
