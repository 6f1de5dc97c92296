// SPDX-License-Identifier: LGPL-2.1-or-later
// DevicePreconditionedCG (one GPU, a DeviceCSRMatrix as assembled) with
// each preconditioner (jacobi, chebyshev, point_block_jacobi), in double
// and float, on 3D elasticity: Q1 on a locally refined ball (hanging nodes,
// Dirichlet rows) and P1 on tetrahedra. Against
// - the host version: the same CGSolver on the resident distributed classes
//   in host mode on one process, the same loop bodies with the sums and
//   the SpMV in another order, so to a tolerance: solution 1e-9 (float
//   1e-3), iterations within 2 (float 5 %), Chebyshev's eigenvalue estimate
//   1e-10 (float 1e-4), block inverses 1e-13 (float 1e-6);
// - deal.II's SparseDirectUMFPACK solution of the same matrix: 1e-8 for a
//   residual tolerance of 1e-12 (float 1e-2 for 1e-5);
// and a second solve repeats the first bit for bit; jacobi equals
// DeviceJacobiCG bit for bit; in double, Chebyshev and point-block Jacobi
// take fewer iterations than Jacobi.
// Needs a GPU: exits with 77 (skipped) where there is none; with
// --host-only it checks the host version alone against UMFPACK.

#include <deal.II/base/index_set.h>
#include <deal.II/base/mpi.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/sparse_direct.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/distributed/distributed_preconditioned_cg.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>
#include <gpu_assembly/lac/device_preconditioned_cg.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "../constraint_problems.h"
#include "../test_problems.h"
#include "../tests.h"
#include "gpu_tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  bool host_only = false;

  struct System
  {
    std::string         name;
    const MeshArrays   *arrays;
    std::vector<double> values, b, direct;
  };

  double
  relative_error(const std::vector<double> &x, const std::vector<double> &y)
  {
    return Testing::relative_l2_error(x, y);
  }

  template <typename Number>
  std::vector<double>
  to_double(const std::vector<Number> &v)
  {
    return std::vector<double>(v.begin(), v.end());
  }

  // The host version: the resident classes in host mode on one process,
  // with the matrix's values.
  template <int dim, typename Number>
  struct HostVersion
  {
    HostVersion(const DoFHandlerAdapter<dim> &adapter, const System &system)
    {
      const MeshArrays      &arrays = *system.arrays;
      DynamicSparsityPattern dsp(arrays.n_dofs, arrays.n_dofs);
      for (unsigned int i = 0; i < arrays.n_dofs; ++i)
        for (auto j = arrays.row_offsets[i]; j < arrays.row_offsets[i + 1]; ++j)
          dsp.add(i, arrays.column_indices[j]);
      A.reinit(dsp, complete_index_set(arrays.n_dofs), MPI_COMM_SELF);
      AssertThrow(A.get_row_offsets() ==
                      std::vector<int>(arrays.row_offsets.begin(),
                                       arrays.row_offsets.end()) &&
                    A.get_column_indices() ==
                      std::vector<int>(arrays.column_indices.begin(),
                                       arrays.column_indices.end()),
                  ExcMessage("the resident matrix's CSR is not the arrays'"));
      std::copy(system.values.begin(), system.values.end(), A.values_data());
      b.reinit(A.get_partitioner());
      std::copy(system.b.begin(), system.b.end(), b.data());
      this->adapter = &adapter;
    }

    CGResult
    solve(const CGSolverParameters &parameters,
          const CGControl          &control,
          std::vector<double>      &solution)
    {
      cg.reinit(*adapter, A, parameters);
      DistributedDeviceVector<Number> x;
      const CGResult                  result = cg.solve(A, x, b, control);
      std::vector<Number>             values;
      x.copy_to_host(values);
      solution = to_double(values);
      return result;
    }

    const DoFHandlerAdapter<dim>       *adapter;
    DistributedDeviceMatrix<Number>     A;
    DistributedDeviceVector<Number>     b;
    DistributedPreconditionedCG<Number> cg;
  };



  template <int dim, typename Number>
  void
  test_precision(Testing::Checks              &checks,
                 const DoFHandlerAdapter<dim> &adapter,
                 const System                 &system)
  {
    const bool        is_double = sizeof(Number) == 8;
    const std::string name = system.name + (is_double ? ", double" : ", float");
    const MeshArrays &arrays = *system.arrays;
    CGControl         control;
    control.relative_tolerance    = is_double ? 1e-12 : 1e-5;
    control.max_iterations        = 20000;
    const double direct_tolerance = is_double ? 1e-8 : 1e-2;

    HostVersion<dim, Number>                        host(adapter, system);
    std::unique_ptr<DeviceCSRMatrix<Number>>        matrix;
    std::unique_ptr<DeviceVector<Number>>           b;
    std::unique_ptr<DevicePreconditionedCG<Number>> device_cg;
    if (!host_only)
      {
        matrix = std::make_unique<DeviceCSRMatrix<Number>>();
        matrix->reinit(arrays);
        matrix->get_values().copy_from_host(
          std::vector<Number>(system.values.begin(), system.values.end()));
        b = std::make_unique<DeviceVector<Number>>(
          std::vector<Number>(system.b.begin(), system.b.end()));
        device_cg = std::make_unique<DevicePreconditionedCG<Number>>();
      }

    unsigned int iterations[3] = {};
    for (const CGPreconditioner preconditioner :
         {CGPreconditioner::jacobi,
          CGPreconditioner::chebyshev,
          CGPreconditioner::point_block_jacobi})
      {
        const std::string  what = name + ", " + to_string(preconditioner);
        CGSolverParameters parameters;
        parameters.preconditioner = preconditioner;
        std::vector<double> host_x;
        const CGResult host_result = host.solve(parameters, control, host_x);
        const double   host_direct = relative_error(host_x, system.direct);
        iterations[static_cast<int>(preconditioner)] = host_result.iterations;
        std::cout << "      " << what << ": host " << host_result.iterations
                  << " iterations, against UMFPACK " << host_direct
                  << std::endl;
        checks.check(host_result.converged && host_direct <= direct_tolerance,
                     what +
                       ": the host version converges to UMFPACK's "
                       "solution (" +
                       Testing::scientific(host_direct) + ")");
        if (host_only)
          continue;

        device_cg->reinit(arrays, *matrix, parameters);
        DeviceVector<Number> x, again;
        const CGResult       result = device_cg->solve(*matrix, x, *b, control);
        const CGResult repeat = device_cg->solve(*matrix, again, *b, control);
        const std::vector<double> device_x   = to_double(x.to_host());
        const double              difference = relative_error(device_x, host_x);
        const double direct = relative_error(device_x, system.direct);
        std::cout << "      " << what << ": device " << result.iterations
                  << " iterations, against the host " << difference
                  << ", against UMFPACK " << direct << std::endl;
        checks.check(result.converged && direct <= direct_tolerance,
                     what +
                       ": the device solve converges to UMFPACK's "
                       "solution (" +
                       Testing::scientific(direct) + ")");
        // Float iterates part sooner when sums are added in another order.
        const int iteration_slack =
          is_double ? 2 : std::max(2, int(host_result.iterations) / 20);
        checks.check(difference <= (is_double ? 1e-9 : 1e-3) &&
                       std::abs(int(result.iterations) -
                                int(host_result.iterations)) <= iteration_slack,
                     what + ": equals the host version (" +
                       Testing::scientific(difference) + ", " +
                       std::to_string(result.iterations) + " against " +
                       std::to_string(host_result.iterations) + " iterations)");
        checks.check(to_double(again.to_host()) == device_x &&
                       repeat.iterations == result.iterations &&
                       repeat.final_residual == result.final_residual,
                     what + ": a second solve is bitwise identical");

        if (preconditioner == CGPreconditioner::jacobi)
          {
            // The jacobi choice is DeviceJacobiCG's graph, with the inverse
            // diagonal computed on the device.
            std::vector<Number> diagonal(arrays.n_dofs);
            for (unsigned int i = 0; i < arrays.n_dofs; ++i)
              for (auto j = arrays.row_offsets[i];
                   j < arrays.row_offsets[i + 1];
                   ++j)
                if (static_cast<unsigned int>(arrays.column_indices[j]) == i)
                  diagonal[i] = Number(1) / Number(system.values[j]);
            const DeviceVector<Number> D(diagonal);
            DeviceJacobiCG<Number>     graph_cg;
            DeviceVector<Number>       y;
            const CGResult graph = graph_cg.solve(*matrix, D, y, *b, control);
            checks.check(to_double(y.to_host()) == device_x &&
                           graph.iterations == result.iterations,
                         what + ": equals DeviceJacobiCG bit for bit");
          }
        if (preconditioner == CGPreconditioner::chebyshev)
          {
            const ChebyshevSchedule &d =
              device_cg->get_solver().get_chebyshev().get_schedule();
            const ChebyshevSchedule &h =
              host.cg.get_solver().get_chebyshev().get_schedule();
            const double error = std::max(
              std::abs(d.max_eigenvalue - h.max_eigenvalue) / h.max_eigenvalue,
              std::abs(d.min_eigenvalue - h.min_eigenvalue) / h.min_eigenvalue);
            checks.check(error <= (is_double ? 1e-10 : 1e-4) &&
                           d.cg_iterations == h.cg_iterations,
                         what +
                           ": the eigenvalue estimate equals the host "
                           "version's (" +
                           Testing::scientific(error) + ")");
          }
        if (preconditioner == CGPreconditioner::point_block_jacobi)
          {
            std::vector<Number> d, h;
            device_cg->get_solver()
              .get_point_block_jacobi()
              .copy_inverses_to_host(d);
            host.cg.get_solver().get_point_block_jacobi().copy_inverses_to_host(
              h);
            double error = d.size() == h.size() ? 0. : 1.;
            double norm  = 0;
            for (std::size_t i = 0; i < d.size() && i < h.size(); ++i)
              {
                error = std::max(error, std::abs(double(d[i]) - double(h[i])));
                norm  = std::max(norm, std::abs(double(h[i])));
              }
            checks.check(error <= (is_double ? 1e-13 : 1e-6) * norm,
                         what +
                           ": the block inverses equal the host "
                           "version's (" +
                           Testing::scientific(error / norm) + ")");
          }
      }
    if (is_double)
      checks.check(iterations[1] < iterations[0] &&
                     iterations[2] < iterations[0],
                   name + ": Chebyshev (" + std::to_string(iterations[1]) +
                     ") and point-block Jacobi (" +
                     std::to_string(iterations[2]) +
                     ") take fewer iterations than Jacobi (" +
                     std::to_string(iterations[0]) + ")");
  }



  template <int dim>
  void
  test_problem(Testing::Checks &checks, Testing::TestProblem<dim> &problem)
  {
    const DoFHandlerAdapter<dim> adapter = Testing::make_adapter(problem);
    const MeshArrays            &arrays  = adapter.get_arrays();
    System                       system;
    system.name   = problem.name();
    system.arrays = &arrays;
    std::vector<double>                 unused_rhs;
    LinearElasticityKernel<dim, double> kernel;
    kernel.lambda = 2.;
    kernel.mu     = 5.;
    HostAssembler<dim, double>(arrays).assemble(kernel,
                                                system.values,
                                                unused_rhs);
    std::mt19937                           random(42);
    std::uniform_real_distribution<double> uniform(-1., 1.);
    system.b.resize(arrays.n_dofs);
    for (std::size_t i = 0; i < system.b.size(); ++i)
      system.b[i] = arrays.dof_is_constrained[i] ? 0. : uniform(random);

    SparsityPattern pattern;
    adapter.make_sparsity_pattern(pattern);
    SparseMatrix<double> matrix(pattern);
    adapter.copy_to_sparse_matrix(system.values, matrix);
    SparseDirectUMFPACK direct;
    direct.initialize(matrix);
    Vector<double> x(system.b.begin(), system.b.end());
    direct.solve(x);
    system.direct.assign(x.begin(), x.end());
    std::cout << system.name << ", " << arrays.n_dofs << " unknowns, "
              << arrays.n_constraint_lines() << " constraint lines"
              << std::endl;

    test_precision<dim, double>(checks, adapter, system);
    test_precision<dim, float>(checks, adapter, system);
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  host_only = argc > 1 && std::string(argv[1]) == "--host-only";
  if (!host_only && !Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks checks;
  {
    Testing::TestProblem<3> problem;
    Testing::setup_constrained_problem(problem,
                                       Testing::ConstrainedCase::refined_ball,
                                       1,
                                       3,
                                       1);
    test_problem(checks, problem);
  }
  {
    Testing::TestProblem<3> problem;
    Testing::setup_problem(problem,
                           true,
                           1,
                           3,
                           Testing::ConstraintKind::homogeneous,
                           true,
                           10);
    test_problem(checks, problem);
  }
  return checks.exit_code();
}
