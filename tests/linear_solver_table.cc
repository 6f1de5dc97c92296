// SPDX-License-Identifier: LGPL-2.1-or-later
// The apps' table of device solvers (apps/common/device_linear_solvers.h,
// behind 'Linear solver' and the solver benchmark's rows): its names and
// descriptions, and the refusal of an unknown solver and of a device solver
// where no GPU can be seen, the path of a machine without a GPU (run with
// CUDA_VISIBLE_DEVICES=-1).
//
// With --gpu, on a GPU: every device solver and auto on 3D elasticity with
// inhomogeneous constraints, assembled on the host path and uploaded,
// against deal.II's SparseDirectUMFPACK on the same system; then the matrix
// doubled and factorized again without a new analysis (a Newton step's
// re-assembly), whose solution must be half the first. Without a GPU it
// reports itself skipped (77).

#include <deal.II/lac/sparse_direct.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>
#include <gpu_assembly/lac/direct_solver.h>

#include <set>

#include "../apps/common/device_linear_solvers.h"
#include "gpu/gpu_tests.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;

namespace
{
  void
  check_table(Testing::Checks &checks)
  {
    const std::vector<std::string> names = AppSolvers::device_solver_names();
    checks.check(!names.empty(), "the table lists device solvers");
    checks.check(std::set<std::string>(names.begin(), names.end()).size() ==
                   names.size(),
                 "the names of the table are unique");
    for (const std::string &name : names)
      {
        checks.check(name != "auto" && name != "host-cg",
                     name + ": no name of the table is auto or host-cg, "
                            "which the apps add themselves");
        checks.check(!AppSolvers::describe(name).empty(),
                     name + ": described for the parameter documentation");
      }
    checks.check(!AppSolvers::describe("auto").empty(), "auto is described");
    checks.check(AppSolvers::describe("lu").empty(),
                 "an unknown name has no description");

    checks.check_throws<ExceptionBase>(
      [] {
        AppSolvers::create_device_solver<double>("lu", {});
      },
      "Unknown linear solver 'lu'; the device solvers are auto",
      "an unknown solver is refused with the list of the known ones");
  }



  // CUDA_VISIBLE_DEVICES=-1: every device solver, and auto, say that there
  // is no GPU, and creating one is refused with that reason.
  void
  check_without_gpu(Testing::Checks &checks)
  {
    checks.check(GPUAssembly::n_cuda_devices() == 0,
                 "no CUDA device can be seen (CUDA_VISIBLE_DEVICES=-1)");
    for (const AppSolvers::SolverDescription &solver :
         AppSolvers::device_solvers())
      {
        const std::string name = solver.name;
        // A direct solver in a build without cuDSS lacks more than a GPU.
        const std::string reason =
          solver.direct &&
              !GPUAssembly::DeviceDirectSolver<double>::available() ?
            "the plugin was built without cuDSS" :
            "no CUDA device was found";
        checks.check(AppSolvers::unavailable_reason(name).find(reason) == 0,
                     name + ": unavailable, because " + reason);
        checks.check_throws<ExceptionBase>(
          [&] {
            AppSolvers::create_device_solver<double>(name, {});
          },
          "The linear solver '" + name + "' cannot run here: " + reason,
          name + ": creating it is refused with the reason");
      }
    checks.check(!AppSolvers::unavailable_reason("auto").empty(),
                 "auto is unavailable where no device solver can run");
    checks.check_throws<ExceptionBase>(
      [] {
        AppSolvers::create_device_solver<float>("auto", {});
      },
      "The linear solver 'auto' cannot run here",
      "auto is refused where no device solver can run");
  }



  void
  check_solves(Testing::Checks &checks)
  {
    Testing::TestProblem<3> problem;
    Testing::setup_problem(problem,
                           false,
                           1,
                           3,
                           Testing::ConstraintKind::inhomogeneous,
                           true,
                           4);
    const GPUAssembly::DoFHandlerAdapter<3> adapter =
      Testing::make_adapter(problem);
    const GPUAssembly::MeshArrays &arrays = adapter.get_arrays();
    GPUAssembly::LinearElasticityKernel<3, double> kernel;
    kernel.lambda        = 2;
    kernel.mu            = 5;
    kernel.body_force[2] = -1;
    std::vector<double> values, rhs;
    GPUAssembly::HostAssembler<3, double>(arrays).assemble(kernel, values, rhs);

    SparsityPattern sparsity;
    adapter.make_sparsity_pattern(sparsity);
    SparseMatrix<double> matrix(sparsity);
    adapter.copy_to_sparse_matrix(values, matrix);
    SparseDirectUMFPACK umfpack;
    umfpack.initialize(matrix);
    Vector<double> reference(rhs.begin(), rhs.end());
    umfpack.solve(reference);
    const std::vector<double> expected(reference.begin(), reference.end());

    std::vector<double> doubled(values);
    for (double &value : doubled)
      value *= 2;
    std::vector<double> half(expected);
    for (double &value : half)
      value /= 2;

    std::vector<std::string> names = AppSolvers::device_solver_names();
    names.emplace_back("auto");
    for (const std::string &name : names)
      {
        checks.check(AppSolvers::unavailable_reason(name).empty(),
                     name + ": available on a GPU");
        AppSolvers::SolverSettings settings;
        settings.relative_tolerance = 1e-12;
        std::unique_ptr<AppSolvers::DeviceLinearSolver<double>> solver =
          AppSolvers::create_device_solver<double>(name, settings);
        GPUAssembly::DeviceCSRMatrix<double> device_matrix;
        device_matrix.reinit(arrays);
        device_matrix.get_values().copy_from_host(values);
        const GPUAssembly::DeviceVector<double> b(rhs);
        GPUAssembly::DeviceVector<double>       x(arrays.n_dofs);
        solver->analyze(arrays, device_matrix);
        solver->factorize(device_matrix);
        AppSolvers::SolveResult result = solver->solve(x, b);
        std::vector<double>     solution;
        x.copy_to_host(solution);
        const std::string label = name + " (" + solver->name() + ")";
        double error = Testing::relative_l2_error(solution, expected);
        checks.check(error < 1e-8,
                     label + ": equals UMFPACK's solution to 1e-8 (" +
                       Testing::scientific(error) + ", " +
                       std::to_string(result.iterations) + " iterations)");
        checks.check(solver->is_direct() || result.iterations > 0,
                     label + ": an iterative solver reports its iterations");

        device_matrix.get_values().copy_from_host(doubled);
        solver->factorize(device_matrix);
        result = solver->solve(x, b);
        x.copy_to_host(solution);
        error = Testing::relative_l2_error(solution, half);
        checks.check(error < 1e-8,
                     label +
                       ": factorized again for the doubled matrix, "
                       "without a new analysis, its solution is half "
                       "UMFPACK's to 1e-8 (" +
                       Testing::scientific(error) + ")");
      }
  }
} // namespace



int
main(int argc, char **argv)
{
  const bool gpu = argc > 1 && std::string(argv[1]) == "--gpu";
  try
    {
      Testing::Checks checks;
      if (gpu)
        {
          if (!Testing::cuda_device_present())
            return Testing::no_device_exit_code();
          check_solves(checks);
        }
      else
        {
          check_table(checks);
          check_without_gpu(checks);
        }
      return checks.exit_code();
    }
  catch (const std::exception &error)
    {
      std::cout << "FAILED with an exception: " << error.what() << std::endl;
      return 1;
    }
}
