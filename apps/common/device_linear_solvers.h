// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef apps_common_device_linear_solvers_h
#define apps_common_device_linear_solvers_h

// The linear solvers on the device that the apps and the benchmarks offer
// by name ('Linear solver' = auto | direct | cg-jacobi | ...), behind one
// interface in the phases of a Newton or time loop. Each solver is one entry
// of a table (device_solvers() in linear_solver_names.h, and its class in
// device_linear_solvers.cc), so that a new solver of the plugin appears in
// every app's parameter and in the benchmark.

#include <gpu_assembly/lac/device_csr_matrix.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "linear_solver_names.h"

namespace AppSolvers
{
  /// What one solve() did.
  struct SolveResult
  {
    /// CG iterations; 0 for a direct solve.
    unsigned int iterations = 0;
    /// ||b - A x|| / ||b|| as the solver measured it (CG: its recurrence),
    /// or 0 where the solver does not measure it.
    double relative_residual = 0;
  };

  /// The choices every solver reads; each uses those that concern it.
  struct SolverSettings
  {
    /// CG stops at ||r|| <= relative_tolerance ||b||.
    double relative_tolerance = 1e-10;
    /// CG that has not converged after this many iterations throws.
    unsigned int max_iterations = 100000;
  };

  /**
   * A linear solver for A x = b on the device, A a DeviceCSRMatrix as the
   * plugin assembles it (constrained rows included), in three phases:
   * analyze() once per sparsity pattern (direct: reordering and symbolic
   * factorization; CG: its work vectors), factorize() once per assembled
   * matrix (direct: numerical factorization; CG: the preconditioner) and
   * solve() per right-hand side. Each phase returns when its work on the
   * device is done, so that a caller can time the phases apart.
   */
  template <typename Number>
  class DeviceLinearSolver
  {
  public:
    virtual ~DeviceLinearSolver() = default;

    /// Once per sparsity pattern: @p A reinit()ed from @p arrays (whose
    /// nodes a block preconditioner reads); factorize() must follow.
    virtual void
    analyze(const GPUAssembly::MeshArrays              &arrays,
            const GPUAssembly::DeviceCSRMatrix<Number> &A) = 0;

    /// Once per assembled matrix of the analyzed pattern.
    virtual void
    factorize(const GPUAssembly::DeviceCSRMatrix<Number> &A) = 0;

    /// x = A^-1 b with the last factorized A. Throws where the solver
    /// fails (CG: no convergence), with what it reached.
    virtual SolveResult
    solve(GPUAssembly::DeviceVector<Number>       &x,
          const GPUAssembly::DeviceVector<Number> &b) = 0;

    /// The name of the table entry that runs (for auto, the one it chose).
    virtual std::string
    name() const = 0;

    /// True for a factorization, false for an iterative solver: what
    /// analyze() and factorize() are called in logs and tables.
    virtual bool
    is_direct() const = 0;

    /// Device memory the solver holds beyond A, x and b, in bytes, as far
    /// as it knows it (a direct solver: its factors and work space).
    virtual std::size_t
    device_memory() const = 0;

    /// What explains the solver's cost, for benchmark tables (a direct
    /// solver's factor size, a preconditioner's parameters); may be empty.
    virtual std::string
    details() const
    {
      return "";
    }
  };

  /**
   * Whether solver @p name can run in this build on this machine: empty if
   * it can, else why not (no CUDA device; the plugin built without the
   * library it needs).
   */
  std::string
  unavailable_reason(const std::string &name);

  /**
   * The solver @p name (an entry of device_solvers() or "auto"). "auto"
   * chooses in its analyze(): the first solver of the list that can run
   * and whose analysis succeeds; a direct solver refuses there a
   * factorization that would not fit the device memory. Throws, saying
   * why, for an unknown or unavailable name.
   */
  template <typename Number>
  std::unique_ptr<DeviceLinearSolver<Number>>
  create_device_solver(const std::string &name, const SolverSettings &settings);
} // namespace AppSolvers

#endif
