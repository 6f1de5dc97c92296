// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_dealii_cg_h
#define hyperelastic_dealii_cg_h

// The CG of the backends that solve with deal.II's SolverCG (the host
// backend's deal.II preconditioners, the Trilinos backend), with the
// stopping rule and the reporting of the plugin's CGs.

#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>

#include "integrator_backend.h"

namespace Hyperelastic
{
  /**
   * Solve @p A x = @p b from x = 0 with deal.II's SolverCG and
   * @p preconditioner, stopped at relative_tolerance * @p b_norm. As the
   * plugin's CGs, an iteration that ran out of steps still counts (Newton's
   * next residual judges its update), and one that broke down reports a
   * final residual that is not finite.
   */
  template <typename MatrixType,
            typename VectorType,
            typename PreconditionerType>
  LinearSolveResult
  solve_with_dealii_cg(const MatrixType         &A,
                       VectorType               &x,
                       const VectorType         &b,
                       const double              b_norm,
                       const PreconditionerType &preconditioner,
                       const double              relative_tolerance,
                       const unsigned int        max_iterations)
  {
    LinearSolveResult result;
    result.initial_residual = b_norm;
    dealii::SolverControl        control(max_iterations,
                                  relative_tolerance * b_norm,
                                  false,
                                  false);
    dealii::SolverCG<VectorType> cg(control);
    x = 0.;
    try
      {
        cg.solve(A, x, b, preconditioner);
      }
    catch (const dealii::SolverControl::NoConvergence &)
      {}
    result.iterations     = control.last_step();
    result.final_residual = control.last_value();
    result.converged = control.last_check() == dealii::SolverControl::success;
    return result;
  }
} // namespace Hyperelastic

#endif
