// SPDX-License-Identifier: LGPL-2.1-or-later
// The device direct solver's logic that needs no GPU: whether the build has
// cuDSS (and, where it has not, that the solver refuses with a message that
// says how to get it), the validation of AdditionalData naming the field,
// the refusal of a factorization that does not fit the free memory (its
// message: estimate, free memory, what to do), the singular-matrix message
// and cuDSS's status names.

#include <gpu_assembly/lac/direct_solver.h>
#include <gpu_assembly/lac/direct_solver_exceptions.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  bool
  contains(const std::string &text, const std::string &part)
  {
    return text.find(part) != std::string::npos;
  }

  // Whether @p action returns without throwing.
  bool
  runs(const std::function<void()> &action)
  {
    try
      {
        action();
        return true;
      }
    catch (const std::exception &)
      {
        return false;
      }
  }

  template <typename Number>
  void
  test_validation(Testing::Checks &checks)
  {
    const std::string precision = sizeof(Number) == 8 ? "double" : "float";
    using Data         = typename DeviceDirectSolver<Number>::AdditionalData;
    const auto refused = [&](const std::function<void(Data &)> &change,
                             const std::string                 &field,
                             const std::string                 &what) {
      Data data;
      change(data);
      checks.check_throws<ExceptionBase>(
        [&] {
          GPUAssembly::internal::check_direct_solver_data<Number>(data);
        },
        field,
        precision + ": " + what + " is refused, naming " + field);
    };

    const bool defaults_accepted = runs([] {
      GPUAssembly::internal::check_direct_solver_data<Number>(Data());
    });
    const Data defaults;
    checks.check(defaults_accepted &&
                   defaults.matrix_type == DirectSolverMatrixType::spd &&
                   !defaults.single_precision_factorization &&
                   defaults.memory_margin >= 0 && defaults.memory_margin < 1 &&
                   defaults.singular_residual > 0 && defaults.deterministic &&
                   defaults.stream == nullptr,
                 precision +
                   ": the defaults (Cholesky, factorization in the "
                   "solver's precision, deterministic, the default stream) are "
                   "valid");

    if (sizeof(Number) == 4)
      refused(
        [](Data &d) {
          d.single_precision_factorization = true;
        },
        "single_precision_factorization",
        "a single-precision factorization of a float solver");
    else
      {
        Data single;
        single.single_precision_factorization = true;
        checks.check(runs([&] {
                       GPUAssembly::internal::check_direct_solver_data<Number>(
                         single);
                     }),
                     "double: a single-precision factorization is accepted");
      }
    refused(
      [](Data &d) {
        d.refinement_tolerance = 0;
      },
      "refinement_tolerance",
      "refinement_tolerance = 0");
    refused(
      [](Data &d) {
        d.refinement_tolerance = 1.5;
      },
      "refinement_tolerance",
      "refinement_tolerance = 1.5");
    refused(
      [](Data &d) {
        d.memory_margin = 1;
      },
      "memory_margin",
      "memory_margin = 1");
    refused(
      [](Data &d) {
        d.memory_margin = -0.1;
      },
      "memory_margin",
      "memory_margin = -0.1");
    refused(
      [](Data &d) {
        d.singular_residual = -1;
      },
      "singular_residual",
      "singular_residual = -1");
    refused(
      [](Data &d) {
        d.singular_residual = std::numeric_limits<double>::quiet_NaN();
      },
      "singular_residual",
      "singular_residual = NaN");
    refused(
      [](Data &d) {
        d.matrix_type = static_cast<DirectSolverMatrixType>(7);
      },
      "matrix_type",
      "a matrix type out of the enumeration");
    if (sizeof(Number) == 8)
      refused(
        [](Data &d) {
          d.single_precision_factorization = true;
          d.refinement_tolerance           = 1e-8;
          d.singular_residual              = 1e-10;
        },
        "singular_residual",
        "a singular_residual below the refinement tolerance");

    // The constructor validates before anything else (and touches no
    // device), or refuses at once without cuDSS.
    Data bad;
    bad.memory_margin = 2;
    checks.check_throws<ExceptionBase>(
      [&] {
        DeviceDirectSolver<Number> solver(bad);
      },
      DeviceDirectSolver<Number>::available() ? "memory_margin" : "cuDSS",
      precision + ": the constructor refuses invalid data" +
        (DeviceDirectSolver<Number>::available() ? "" :
                                                   " (here: cuDSS absent)"));
  }
} // namespace



int
main()
{
  Testing::Checks checks;

  // Whether the solver is there follows the build's configuration.
#ifdef GPU_ASSEMBLY_TEST_WITH_CUDSS
  const bool built_with_cudss = true;
#else
  const bool built_with_cudss = false;
#endif
  checks.check(DeviceDirectSolver<double>::available() == built_with_cudss &&
                 DeviceDirectSolver<float>::available() == built_with_cudss,
               std::string("available() is ") +
                 (built_with_cudss ? "true" : "false") +
                 ", as the build's GPU_ASSEMBLY_WITH_CUDSS says");

  const std::string unavailable =
    GPUAssembly::internal::direct_solver_unavailable_message();
  checks.check(contains(unavailable, "built without NVIDIA cuDSS") &&
                 contains(unavailable, "pip install nvidia-cudss-cu13") &&
                 contains(unavailable, "CUDSS_DIR") &&
                 contains(unavailable, "GPU_ASSEMBLY_WITH_CUDSS") &&
                 contains(unavailable, "DeviceJacobiCG"),
               "the message of a build without cuDSS says so, how to get "
               "cuDSS (pip, CUDSS_DIR, the CMake option) and the iterative "
               "alternative");
  checks.check_throws<ExcDirectSolverUnavailable>(
    [] {
      GPUAssembly::internal::throw_direct_solver_unavailable();
    },
    "built without NVIDIA cuDSS",
    "ExcDirectSolverUnavailable carries that message");
  if (!built_with_cudss)
    checks.check_throws<ExcDirectSolverUnavailable>(
      [] {
        DeviceDirectSolver<double> solver;
      },
      "pip install nvidia-cudss-cu13",
      "without cuDSS the constructor throws ExcDirectSolverUnavailable");

  test_validation<double>(checks);
  test_validation<float>(checks);

  // The memory check after the analysis: 10 GiB do not fit 90 % of 8 GiB.
  const std::size_t GiB = std::size_t(1) << 30;
  checks.check_throws<ExcDirectSolverMemory>(
    [&] {
      GPUAssembly::internal::check_direct_solver_memory(10 * GiB,
                                                        8 * GiB,
                                                        80 * GiB,
                                                        0.1);
    },
    "estimates its peak device memory at 10240 MiB, but only 8192 MiB of "
    "81920 MiB are free",
    "a factorization larger than the free memory is refused with the "
    "estimate, the free and the total memory");
  checks.check_throws<ExcDirectSolverMemory>(
    [&] {
      GPUAssembly::internal::check_direct_solver_memory(15 * GiB / 2,
                                                        8 * GiB,
                                                        80 * GiB,
                                                        0.1);
    },
    "Use an iterative solver (DeviceJacobiCG), a smaller problem, or, in "
    "double, a single-precision factorization",
    "one that fits the free memory but not its margin is refused too, and "
    "the message says what to do");
  const bool fits = runs([&] {
    GPUAssembly::internal::check_direct_solver_memory(7 * GiB,
                                                      8 * GiB,
                                                      80 * GiB,
                                                      0.1);
    GPUAssembly::internal::check_direct_solver_memory(8 * GiB,
                                                      8 * GiB,
                                                      80 * GiB,
                                                      0);
  });
  checks.check(fits,
               "a factorization within (1 - margin) of the free memory "
               "passes, up to all of it with margin 0");

  const std::string spd =
    GPUAssembly::internal::singular_matrix_message(DirectSolverMatrixType::spd,
                                                   "cuDSS reports status 12");
  const std::string lu = GPUAssembly::internal::singular_matrix_message(
    DirectSolverMatrixType::general,
    "the solution is not finite");
  checks.check(contains(spd, "spd (Cholesky)") &&
                 contains(spd, "singular or not positive definite") &&
                 contains(spd, "cuDSS reports status 12") &&
                 contains(spd, "Dirichlet constraints are missing") &&
                 contains(spd, "rigid-body modes") &&
                 contains(spd, "symmetric_indefinite"),
               "the singular-matrix message of Cholesky names the finding, "
               "the missing constraints or rigid-body modes, and the other "
               "matrix types");
  checks.check(contains(lu, "general (LU)") &&
                 !contains(lu, "positive definite") &&
                 contains(lu, "the solution is not finite") &&
                 contains(lu, "constraints were not passed"),
               "the LU message speaks of singularity alone, and of "
               "constraints that were not applied");
  checks.check_throws<ExcSingularMatrix>(
    [] {
      GPUAssembly::internal::throw_singular_matrix(
        DirectSolverMatrixType::general,
        "x");
    },
    "nothing holds the body",
    "ExcSingularMatrix carries the message");
  checks.check_throws<ExcDirectSolverRefinement>(
    [] {
      GPUAssembly::internal::throw_refinement_error(10, 1e-6, 1e-12);
    },
    "stopped after 10 steps",
    "ExcDirectSolverRefinement says the steps, the residual and the "
    "tolerance");

  checks.check(
    contains(GPUAssembly::internal::cudss_error_string(2), "ALLOC_FAILED") &&
      contains(GPUAssembly::internal::cudss_error_string(7), "IR_FAILED") &&
      GPUAssembly::internal::cudss_error_string(99) ==
        "unknown cuDSS status 99",
    "cuDSS statuses are named, unknown ones by number");
  checks.check_throws<ExcCudssError>(
    [] {
      GPUAssembly::internal::check_cudss_status(3,
                                                "cudssExecute(...)",
                                                "file.cu",
                                                7);
    },
    "The cuDSS call cudssExecute(...) at file.cu:7 failed with "
    "CUDSS_STATUS_INVALID_VALUE",
    "a failed cuDSS call throws ExcCudssError naming the call, the place "
    "and the status");
  checks.check(to_string(DirectSolverMatrixType::symmetric_indefinite) ==
                 "symmetric indefinite (LDL^T)",
               "matrix types have names");
  return checks.exit_code();
}
