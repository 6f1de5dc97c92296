// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/lac/direct_solver.h>
#include <gpu_assembly/lac/direct_solver_exceptions.h>

#include <cmath>
#include <iostream>
#include <iterator>
#include <sstream>

namespace GPUAssembly
{
  std::string
  to_string(const DirectSolverMatrixType type)
  {
    switch (type)
      {
        case DirectSolverMatrixType::spd:
          return "spd (Cholesky)";
        case DirectSolverMatrixType::symmetric_indefinite:
          return "symmetric indefinite (LDL^T)";
        case DirectSolverMatrixType::general:
          return "general (LU)";
      }
    return "unknown";
  }



  template <typename Number>
  bool
  DeviceDirectSolver<Number>::available()
  {
#ifdef GPU_ASSEMBLY_WITH_CUDSS
    return true;
#else
    return false;
#endif
  }



  namespace internal
  {
    namespace
    {
      // A parameter's value as the messages print it (1e-14, not 0.000000).
      std::string
      value_string(const double value)
      {
        std::ostringstream out;
        out << value;
        return out.str();
      }
    } // namespace



    template <typename Number>
    void
    check_direct_solver_data(
      const typename DeviceDirectSolver<Number>::AdditionalData &data)
    {
      const std::string prefix = "DeviceDirectSolver::AdditionalData::";
      AssertThrow(sizeof(Number) == sizeof(double) ||
                    !data.single_precision_factorization,
                  dealii::ExcMessage(
                    prefix +
                    "single_precision_factorization needs a double solver: "
                    "a float solver factorizes in float already."));
      AssertThrow(data.matrix_type == DirectSolverMatrixType::spd ||
                    data.matrix_type ==
                      DirectSolverMatrixType::symmetric_indefinite ||
                    data.matrix_type == DirectSolverMatrixType::general,
                  dealii::ExcMessage(prefix +
                                     "matrix_type is not one of spd, "
                                     "symmetric_indefinite, general."));
      AssertThrow(data.refinement_tolerance > 0 &&
                    data.refinement_tolerance < 1,
                  dealii::ExcMessage(prefix + "refinement_tolerance = " +
                                     value_string(data.refinement_tolerance) +
                                     " must lie in (0, 1)."));
      AssertThrow(std::isfinite(data.singular_residual) &&
                    data.singular_residual >= 0,
                  dealii::ExcMessage(prefix + "singular_residual = " +
                                     value_string(data.singular_residual) +
                                     " must be 0 (no check) or positive."));
      AssertThrow(data.memory_margin >= 0 && data.memory_margin < 1,
                  dealii::ExcMessage(prefix + "memory_margin = " +
                                     value_string(data.memory_margin) +
                                     " must lie in [0, 1)."));
      AssertThrow(!data.single_precision_factorization ||
                    data.singular_residual == 0 ||
                    data.singular_residual >= data.refinement_tolerance,
                  dealii::ExcMessage(
                    prefix + "singular_residual = " +
                    value_string(data.singular_residual) +
                    " is below refinement_tolerance = " +
                    value_string(data.refinement_tolerance) +
                    ": a refined solution would be taken for singular."));
    }



    void
    check_direct_solver_memory(const std::size_t peak_estimate,
                               const std::size_t free_memory,
                               const std::size_t total_memory,
                               const double      margin)
    {
      AssertThrow(static_cast<double>(peak_estimate) <=
                    (1. - margin) * static_cast<double>(free_memory),
                  ExcDirectSolverMemory(peak_estimate,
                                        free_memory,
                                        total_memory,
                                        margin));
    }



    std::string
    direct_solver_unavailable_message()
    {
      return "The device direct solver (DeviceDirectSolver) is absent: the "
             "plugin was built without NVIDIA cuDSS. Install cuDSS (pip "
             "install nvidia-cudss-cu13, which scripts/install-dependencies.sh "
             "does where pip exists, or NVIDIA's packages), configure again "
             "(with -DCUDSS_DIR=<prefix> where CMake does not find it, and "
             "-DGPU_ASSEMBLY_WITH_CUDSS=ON) and rebuild; or solve with an "
             "iterative solver (DeviceJacobiCG).";
    }



    void
    throw_direct_solver_unavailable()
    {
      AssertThrow(false,
                  ExcDirectSolverUnavailable(
                    direct_solver_unavailable_message()));
      __builtin_unreachable();
    }



    std::string
    singular_matrix_message(const DirectSolverMatrixType type,
                            const std::string           &finding)
    {
      std::string message =
        "The direct solver (" + to_string(type) +
        ") found the matrix singular" +
        (type == DirectSolverMatrixType::spd ? " or not positive definite" :
                                               "") +
        ": " + finding +
        ". In a deal.II program this usually means that nothing holds the "
        "body: Dirichlet constraints are missing, or too few to remove the "
        "rigid-body modes (translations and rotations in elasticity, the "
        "constant of a pure Neumann Laplace problem), or the constraints "
        "were not passed to the DoFHandlerAdapter, so that their rows were "
        "not condensed.";
      if (type == DirectSolverMatrixType::spd)
        message += " A matrix that is symmetric but indefinite (a shifted "
                   "Laplacian, a saddle-point system) needs "
                   "DirectSolverMatrixType::symmetric_indefinite, a "
                   "nonsymmetric one DirectSolverMatrixType::general.";
      return message;
    }



    void
    throw_singular_matrix(const DirectSolverMatrixType type,
                          const std::string           &finding)
    {
      AssertThrow(false,
                  ExcSingularMatrix(singular_matrix_message(type, finding)));
      __builtin_unreachable();
    }



    void
    throw_refinement_error(const unsigned int steps,
                           const double       relative_residual,
                           const double       tolerance)
    {
      AssertThrow(false,
                  ExcDirectSolverRefinement(steps,
                                            relative_residual,
                                            tolerance));
      __builtin_unreachable();
    }



    std::string
    cudss_error_string(const int status)
    {
      // cudssStatus_t in the order of cudss_data_types.h.
      static const char *const names[] = {
        "CUDSS_STATUS_SUCCESS",
        "CUDSS_STATUS_NOT_INITIALIZED",
        "CUDSS_STATUS_ALLOC_FAILED: a device or host allocation failed",
        "CUDSS_STATUS_INVALID_VALUE: an argument or setting is invalid",
        "CUDSS_STATUS_NOT_SUPPORTED: the settings or the matrix type are not "
        "supported",
        "CUDSS_STATUS_EXECUTION_FAILED: a device kernel failed",
        "CUDSS_STATUS_INTERNAL_ERROR",
        "CUDSS_STATUS_IR_FAILED: iterative refinement failed"};
      if (status >= 0 && status < static_cast<int>(std::size(names)))
        return names[status];
      return "unknown cuDSS status " + std::to_string(status);
    }



    void
    check_cudss_status(const int         status,
                       const char *const call,
                       const char *const file,
                       const int         line)
    {
      AssertThrow(status == 0,
                  ExcCudssError(call, file, line, cudss_error_string(status)));
    }



    void
    check_cudss_status_nothrow(const int         status,
                               const char *const call,
                               const char *const file,
                               const int         line) noexcept
    {
      if (status != 0)
        std::cerr << "Warning: the cuDSS call " << call << " at " << file << ':'
                  << line << " failed with " << cudss_error_string(status)
                  << " while the direct solver released it (reported, not "
                     "thrown)."
                  << std::endl;
    }



    template void
    check_direct_solver_data<float>(
      const DeviceDirectSolver<float>::AdditionalData &);
    template void
    check_direct_solver_data<double>(
      const DeviceDirectSolver<double>::AdditionalData &);
  } // namespace internal



  template bool
  DeviceDirectSolver<float>::available();
  template bool
  DeviceDirectSolver<double>::available();
} // namespace GPUAssembly
