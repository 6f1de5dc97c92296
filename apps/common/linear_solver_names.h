// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef apps_common_linear_solver_names_h
#define apps_common_linear_solver_names_h

// The names and descriptions of the device solvers
// (device_linear_solvers.h), without the solvers: parameter declarations
// list them where neither the plugin nor CUDA is built (the fuzz test of
// the parameter files).

#include <string>
#include <vector>

namespace AppSolvers
{
  /// A device solver as parameter files and tables name it.
  struct SolverDescription
  {
    const char *name;
    /// A factorization (else an iterative solver).
    bool direct;
    /// One line for the parameter documentation.
    const char *description;
  };

  /**
   * The device solvers, best first for elasticity: "auto" takes the first
   * that can run (and a direct one only where its factorization fits).
   * Chebyshev before point-block Jacobi, which on regular meshes is about
   * Jacobi (the node blocks of elasticity are then nearly diagonal). A new
   * solver is one row here and its class in device_linear_solvers.cc.
   */
  inline const std::vector<SolverDescription> &
  device_solvers()
  {
    static const std::vector<SolverDescription> table = {
      {"direct",
       true,
       "the sparse direct solver on cuDSS (Cholesky): analysis once per "
       "mesh, a factorization per assembled matrix; refused after the "
       "analysis where the factorization would not fit the device memory"},
      {"cg-chebyshev",
       false,
       "conjugate gradients with a Chebyshev-accelerated Jacobi "
       "preconditioner (deal.II's PreconditionChebyshev: degree 5, "
       "smoothing range 20, eigenvalues estimated by 8 CG steps)"},
      {"cg-block-jacobi",
       false,
       "conjugate gradients with the inverses of the nodes' dim x dim "
       "blocks as preconditioner (point-block Jacobi), for vector fields "
       "such as displacements"},
      {"cg-jacobi",
       false,
       "conjugate gradients with the inverse diagonal as preconditioner, "
       "the whole solve one CUDA graph"},
      {"direct-single",
       true,
       "the direct solver with single-precision factors (about half the "
       "memory) and iterative refinement in double; last, so that auto "
       "never takes it"},
    };
    return table;
  }

  /// The names of device_solvers(), without "auto".
  inline std::vector<std::string>
  device_solver_names()
  {
    std::vector<std::string> names;
    for (const SolverDescription &solver : device_solvers())
      names.emplace_back(solver.name);
    return names;
  }

  /// The description of solver @p name ("auto" included); empty for an
  /// unknown name.
  inline std::string
  describe(const std::string &name)
  {
    if (name == "auto")
      return "the direct solver where it is available and its "
             "factorization fits the device memory, else the first CG of "
             "this list that can run";
    for (const SolverDescription &solver : device_solvers())
      if (name == solver.name)
        return solver.description;
    return "";
  }

} // namespace AppSolvers

#endif
