// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_direct_solver_exceptions_h
#define gpu_assembly_lac_direct_solver_exceptions_h

#include <deal.II/base/exceptions.h>

#include <cstddef>
#include <string>

/**
 * @file
 * The exceptions of DeviceDirectSolver (lac/direct_solver.h), for host code
 * that catches them: a program may fall back to an iterative solver on
 * ExcDirectSolverMemory or ExcDirectSolverUnavailable, and report
 * ExcSingularMatrix to its user.
 */

namespace GPUAssembly
{
  /**
   * A cuDSS call failed: the call as written, where it was made and the
   * status.
   */
  DeclException4(ExcCudssError,
                 std::string,
                 std::string,
                 int,
                 std::string,
                 << "The cuDSS call\n    " << arg1 << "\nat " << arg2 << ':'
                 << arg3 << " failed with " << arg4);

  /**
   * The plugin was built without cuDSS, so the device direct solver is
   * absent; the message says how to get it.
   */
  DeclException1(ExcDirectSolverUnavailable, std::string, << arg1);

  /**
   * The factorization would not fit the device: cuDSS's peak estimate
   * after the analysis, the free and the total device memory (bytes), the
   * fraction kept free, and what to do.
   */
  DeclException4(
    ExcDirectSolverMemory,
    std::size_t,
    std::size_t,
    std::size_t,
    double,
    << "The direct solver's factorization would not fit the device: cuDSS "
    << "estimates its peak device memory at " << arg1 / (1024. * 1024.)
    << " MiB, but only " << arg2 / (1024. * 1024.) << " MiB of "
    << arg3 / (1024. * 1024.) << " MiB are free, of which a fraction of "
    << arg4 << " (AdditionalData::memory_margin) is kept free. Use an "
    << "iterative solver (DeviceJacobiCG), a smaller problem, or, in double, "
    << "a single-precision factorization "
    << "(AdditionalData::single_precision_factorization), which takes about "
    << "half the memory.");

  /**
   * The matrix is singular (or, for a Cholesky factorization, not positive
   * definite); the message says how that showed and what usually causes
   * it (internal::singular_matrix_message()).
   */
  DeclException1(ExcSingularMatrix, std::string, << arg1);

  /**
   * Iterative refinement with single-precision factors did not reach its
   * tolerance: the steps done, the relative residual reached and the
   * tolerance.
   */
  DeclException3(ExcDirectSolverRefinement,
                 unsigned int,
                 double,
                 double,
                 << "Iterative refinement with the single-precision factors "
                 << "stopped after " << arg1 << " steps at a relative "
                 << "residual of " << arg2 << ", above the tolerance " << arg3
                 << " (AdditionalData::refinement_tolerance): the matrix is "
                 << "too ill-conditioned for float factors. Factorize in "
                 << "double (single_precision_factorization = false).");
} // namespace GPUAssembly

#endif
