// SPDX-License-Identifier: LGPL-2.1-or-later
// DeviceDirectSolver (cuDSS) on systems the plugin assembles on the GPU,
// against deal.II's SparseDirectUMFPACK on the same matrix and right-hand
// side copied to the host: Laplace and elasticity with hanging nodes,
// periodicity, inhomogeneous Dirichlet values and chained user
// constraints; Cholesky, LDL^T and LU; double, float, and a float
// factorization refined in double; a shifted (indefinite) Laplacian, which
// LDL^T and LU solve and Cholesky refuses; refactorization after
// re-assembly with other coefficients against a fresh factorization and
// UMFPACK, without device allocations; a singular system (elasticity with
// no constraints) that must give ExcSingularMatrix, not NaN; the memory
// refusal after the analysis; misuse. Everything runs on a stream of its
// own, as an assembly would use it. Needs a GPU: exits with 77 (skipped)
// where there is none.

#include <deal.II/lac/sparse_direct.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/cuda_handles.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/lac/direct_solver.h>
#include <gpu_assembly/lac/direct_solver_exceptions.h>

#include <cuda_runtime_api.h>

#include "../constraint_problems.h"
#include "../dealii_reference.h"
#include "../tests.h"
#include "gpu_tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  const std::vector<DirectSolverMatrixType> all_types = {
    DirectSolverMatrixType::spd,
    DirectSolverMatrixType::symmetric_indefinite,
    DirectSolverMatrixType::general};

  // Assembles @p kernel on the device on @p stream into @p matrix (reinit()ed
  // here if empty) and @p rhs, inhomogeneities in the right-hand side (as
  // deal.II's step-6 does).
  template <int dim, typename Number, class Kernel>
  void
  assemble_on_device(const MeshArrays        &arrays,
                     const Kernel            &kernel,
                     DeviceCSRMatrix<Number> &matrix,
                     DeviceVector<Number>    &rhs,
                     CUstream_st             *stream)
  {
    typename DeviceAssembler<dim, Number>::AdditionalData data;
    data.method                              = AssemblyMethod::shared_nz;
    data.options.use_inhomogeneities_for_rhs = true;
    DeviceAssembler<dim, Number> assembler;
    assembler.reinit(arrays, data);
    if (matrix.m() == 0)
      matrix.reinit(arrays);
    const DeviceVector<Number> nodal(
      std::vector<Number>(arrays.nodal_coordinates.begin(),
                          arrays.nodal_coordinates.end()));
    assembler.assemble(kernel, nodal, matrix, rhs, stream);
    GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(stream));
  }

  template <typename Number>
  std::vector<double>
  to_double(const DeviceVector<Number> &v)
  {
    const std::vector<Number> values = v.to_host();
    return std::vector<double>(values.begin(), values.end());
  }

  // deal.II's direct solution of the system on the host.
  template <int dim>
  std::vector<double>
  umfpack_solution(const DoFHandlerAdapter<dim> &adapter,
                   const std::vector<double>    &values,
                   const std::vector<double>    &rhs)
  {
    SparsityPattern sparsity_pattern;
    adapter.make_sparsity_pattern(sparsity_pattern);
    SparseMatrix<double> matrix(sparsity_pattern);
    adapter.copy_to_sparse_matrix(values, matrix);
    SparseDirectUMFPACK umfpack;
    umfpack.initialize(matrix);
    Vector<double> x(rhs.begin(), rhs.end());
    umfpack.solve(x);
    return std::vector<double>(x.begin(), x.end());
  }

  template <typename Number>
  typename DeviceDirectSolver<Number>::AdditionalData
  solver_data(const DirectSolverMatrixType type, CUstream_st *stream)
  {
    typename DeviceDirectSolver<Number>::AdditionalData data;
    data.matrix_type = type;
    data.stream      = stream;
    return data;
  }

  // analyze(), factorize() and solve() of a fresh solver.
  template <typename Number>
  std::vector<double>
  direct_solution(
    const typename DeviceDirectSolver<Number>::AdditionalData &data,
    const DeviceCSRMatrix<Number>                             &matrix,
    const DeviceVector<Number>                                &rhs,
    typename DeviceDirectSolver<Number>::Statistics *statistics = nullptr)
  {
    DeviceDirectSolver<Number> solver(data);
    solver.analyze(matrix);
    solver.factorize(matrix);
    DeviceVector<Number> x;
    solver.solve(x, rhs);
    if (statistics != nullptr)
      *statistics = solver.get_statistics();
    return to_double(x);
  }

  std::size_t
  free_device_memory()
  {
    std::size_t free = 0, total = 0;
    GPU_ASSEMBLY_CHECK_CUDA(cudaMemGetInfo(&free, &total));
    return free;
  }



  // A problem with constraints: every matrix type in double, a float
  // factorization refined in double, and float.
  template <int dim>
  void
  test_constrained(Testing::Checks               &checks,
                   const Testing::ConstrainedCase constrained_case,
                   const unsigned int             degree,
                   const Form                     form,
                   const unsigned int             extra_refinements,
                   CUstream_st                   *stream)
  {
    const unsigned int        n_components = form == Form::elasticity ? dim : 1;
    Testing::TestProblem<dim> problem;
    Testing::setup_constrained_problem(problem,
                                       constrained_case,
                                       degree,
                                       n_components,
                                       extra_refinements);
    const DoFHandlerAdapter<dim> adapter =
      Testing::make_adapter(problem,
                            {SupplementalDataFormat::quadrature_gradients,
                             false});
    const MeshArrays &arrays = adapter.get_arrays();
    const std::string name   = problem.name() + ", " + to_string(form) + ", " +
                             Testing::to_string(constrained_case) + " (" +
                             std::to_string(arrays.n_dofs) + " unknowns)";

    with_kernel<dim, double>(form, n_components, [&](const auto &kernel) {
      DeviceCSRMatrix<double> matrix;
      DeviceVector<double>    rhs;
      assemble_on_device<dim>(arrays, kernel, matrix, rhs, stream);
      const std::vector<double> reference =
        umfpack_solution(adapter, matrix.get_values().to_host(), rhs.to_host());
      for (const DirectSolverMatrixType type : all_types)
        {
          DeviceDirectSolver<double>::Statistics statistics;
          const double error = Testing::relative_l2_error(
            direct_solution<double>(solver_data<double>(type, stream),
                                    matrix,
                                    rhs,
                                    &statistics),
            reference);
          checks.check(error <= 1e-10,
                       name + ", " + to_string(type) +
                         " in double equals UMFPACK: relative " +
                         Testing::scientific(error) + " <= 1e-10");
          const std::vector<double> again =
            direct_solution<double>(solver_data<double>(type, stream),
                                    matrix,
                                    rhs);
          const std::vector<double> first =
            direct_solution<double>(solver_data<double>(type, stream),
                                    matrix,
                                    rhs);
          checks.check(again == first,
                       name + ", " + to_string(type) +
                         ": two solvers give bitwise the same solution "
                         "(deterministic mode)");
          if (type == DirectSolverMatrixType::spd)
            checks.check(statistics.peak_device_memory >=
                             statistics.permanent_device_memory &&
                           statistics.permanent_device_memory > 0 &&
                           statistics.free_device_memory > 0 &&
                           statistics.factor_nonzeros >= arrays.n_dofs &&
                           statistics.n_factorizations == 1 &&
                           statistics.refinement_steps == 0 &&
                           statistics.relative_residual >= 0 &&
                           statistics.relative_residual <= 1e-10,
                         name + ": statistics: peak device memory " +
                           std::to_string(statistics.peak_device_memory) +
                           " >= permanent " +
                           std::to_string(statistics.permanent_device_memory) +
                           " > 0 bytes, " +
                           std::to_string(statistics.factor_nonzeros) +
                           " nonzeros in the factors, relative residual " +
                           Testing::scientific(statistics.relative_residual));
        }

      auto single = solver_data<double>(DirectSolverMatrixType::spd, stream);
      single.single_precision_factorization = true;
      DeviceDirectSolver<double>::Statistics statistics;
      const double                           error = Testing::relative_l2_error(
        direct_solution<double>(single, matrix, rhs, &statistics),
        reference);
      checks.check(error <= 1e-10 && statistics.refinement_steps >= 1 &&
                     statistics.refinement_steps <=
                       single.max_refinement_steps &&
                     statistics.relative_residual >= 0 &&
                     statistics.relative_residual <= 1e-10,
                   name +
                     ", Cholesky of a float copy refined in double equals "
                     "UMFPACK: relative " +
                     Testing::scientific(error) + " <= 1e-10 after " +
                     std::to_string(statistics.refinement_steps) +
                     " refinement steps (at least one), relative residual " +
                     Testing::scientific(statistics.relative_residual) +
                     " <= 1e-10");
    });

    with_kernel<dim, float>(form, n_components, [&](const auto &kernel) {
      DeviceCSRMatrix<float> matrix;
      DeviceVector<float>    rhs;
      assemble_on_device<dim>(arrays, kernel, matrix, rhs, stream);
      const std::vector<double> reference =
        umfpack_solution(adapter,
                         to_double(matrix.get_values()),
                         to_double(rhs));
      const double error = Testing::relative_l2_error(
        direct_solution<float>(solver_data<float>(DirectSolverMatrixType::spd,
                                                  stream),
                               matrix,
                               rhs),
        reference);
      checks.check(error <= 1e-3,
                   name +
                     ", Cholesky in float equals UMFPACK on the float "
                     "system: relative " +
                     Testing::scientific(error) +
                     " <= 1e-3 (float rounding times the condition number)");
    });
  }



  // New values of the same pattern: a refactorization equals a fresh
  // factorization and UMFPACK, and allocates nothing.
  void
  test_refactorization(Testing::Checks &checks, CUstream_st *stream)
  {
    Testing::TestProblem<3> problem;
    Testing::setup_constrained_problem(
      problem,
      Testing::ConstrainedCase::refined_ball_inhomogeneous,
      1,
      3,
      1);
    const DoFHandlerAdapter<3> adapter =
      Testing::make_adapter(problem,
                            {SupplementalDataFormat::quadrature_gradients,
                             false});
    const MeshArrays                 &arrays = adapter.get_arrays();
    LinearElasticityKernel<3, double> first, second;
    first.lambda  = lambda;
    first.mu      = mu;
    second.lambda = 2.5 * lambda;
    second.mu     = 0.6 * mu;
    for (unsigned int d = 0; d < 3; ++d)
      {
        first.body_force[d]  = force[d];
        second.body_force[d] = -0.5 * force[d] + 0.25;
      }

    for (const DirectSolverMatrixType type :
         {DirectSolverMatrixType::spd, DirectSolverMatrixType::general})
      {
        const std::string name =
          "3D elasticity, hanging nodes, " + to_string(type);
        DeviceCSRMatrix<double>    matrix;
        DeviceVector<double>       rhs, x;
        DeviceDirectSolver<double> solver(solver_data<double>(type, stream));
        assemble_on_device<3>(arrays, first, matrix, rhs, stream);
        solver.analyze(matrix);
        solver.factorize(matrix);
        solver.solve(x, rhs);
        const std::vector<double> x_first = x.to_host();

        // Re-assembled with other coefficients in place, as a Newton step.
        assemble_on_device<3>(arrays, second, matrix, rhs, stream);
        solver.factorize(matrix);
        solver.solve(x, rhs);
        const std::size_t         free_after_first = free_device_memory();
        const std::vector<double> x_second         = x.to_host();
        const std::vector<double> fresh =
          direct_solution<double>(solver_data<double>(type, stream),
                                  matrix,
                                  rhs);
        const std::vector<double> reference =
          umfpack_solution(adapter,
                           matrix.get_values().to_host(),
                           rhs.to_host());
        const double to_fresh = Testing::relative_l2_error(x_second, fresh);
        const double to_umfpack =
          Testing::relative_l2_error(x_second, reference);
        checks.check(to_fresh <= 1e-14 && to_umfpack <= 1e-10,
                     name +
                       ": refactorized after re-assembly, equals a "
                       "fresh factorization (" +
                       (x_second == fresh ?
                          std::string("bitwise") :
                          "relative " + Testing::scientific(to_fresh) +
                            " <= 1e-14") +
                       ") and UMFPACK (relative " +
                       Testing::scientific(to_umfpack) + " <= 1e-10)");

        // Back to the first values: the first solution again, and the
        // device memory of the last refactorization unchanged.
        assemble_on_device<3>(arrays, first, matrix, rhs, stream);
        const std::size_t free_before = free_device_memory();
        solver.factorize(matrix);
        solver.solve(x, rhs);
        const std::size_t free_after = free_device_memory();
        const double      to_first =
          Testing::relative_l2_error(x.to_host(), x_first);
        checks.check(to_first <= 1e-14 &&
                       solver.get_statistics().n_factorizations == 3,
                     name +
                       ": refactorized with the first values, the "
                       "first solution (" +
                       (x.to_host() == x_first ?
                          std::string("bitwise") :
                          "relative " + Testing::scientific(to_first)) +
                       ")");
        checks.check(free_before == free_after,
                     name +
                       ": a refactorization and solve keep no device memory "
                       "(free memory " +
                       std::to_string(free_before) + " bytes before, " +
                       std::to_string(free_after) +
                       " after; after the first refactorization " +
                       std::to_string(free_after_first) + ")");
      }
  }



  // K - sigma M of a 2D Laplacian, sigma between the 3rd and 4th
  // eigenvalues of K x = lambda M x: LDL^T and LU solve it, Cholesky
  // refuses it.
  void
  test_indefinite(Testing::Checks &checks, CUstream_st *stream)
  {
    Testing::TestProblem<2> problem;
    Testing::setup_constrained_problem(problem,
                                       Testing::ConstrainedCase::refined_ball,
                                       1,
                                       1,
                                       2);
    const DoFHandlerAdapter<2> adapter =
      Testing::make_adapter(problem,
                            {SupplementalDataFormat::quadrature_gradients,
                             false});
    const MeshArrays        &arrays = adapter.get_arrays();
    DeviceCSRMatrix<double>  stiffness, mass, shifted;
    DeviceVector<double>     rhs, mass_rhs;
    LaplaceKernel<2, double> laplace;
    laplace.diffusion = diffusion;
    laplace.source    = source;
    MassKernel<2, 1, double> mass_kernel;
    mass_kernel.density = density;
    assemble_on_device<2>(arrays, laplace, stiffness, rhs, stream);
    assemble_on_device<2>(arrays, mass_kernel, mass, mass_rhs, stream);
    const double              sigma = 12.;
    const std::vector<double> k     = stiffness.get_values().to_host(),
                              m     = mass.get_values().to_host();
    std::vector<double> values(k.size());
    for (std::size_t i = 0; i < k.size(); ++i)
      values[i] = k[i] - sigma * m[i];
    shifted.reinit(arrays);
    shifted.get_values().copy_from_host(values);
    const std::vector<double> reference =
      umfpack_solution(adapter, values, rhs.to_host());
    const std::string name =
      "2D shifted Laplacian K - " + std::to_string(int(sigma)) +
      " M, hanging nodes (" + std::to_string(arrays.n_dofs) + " unknowns)";
    for (const DirectSolverMatrixType type :
         {DirectSolverMatrixType::symmetric_indefinite,
          DirectSolverMatrixType::general})
      {
        const double error = Testing::relative_l2_error(
          direct_solution<double>(solver_data<double>(type, stream),
                                  shifted,
                                  rhs),
          reference);
        checks.check(error <= 1e-10,
                     name + ", " + to_string(type) +
                       " equals UMFPACK: relative " +
                       Testing::scientific(error) + " <= 1e-10");
      }
    checks.check_throws<ExcSingularMatrix>(
      [&] {
        direct_solution<double>(solver_data<double>(DirectSolverMatrixType::spd,
                                                    stream),
                                shifted,
                                rhs);
      },
      "not positive definite",
      name + ": Cholesky refuses the indefinite matrix with "
             "ExcSingularMatrix");
  }



  // Elasticity with no constraints: the rigid-body modes make the matrix
  // singular, and the body force is not balanced.
  void
  test_singular(Testing::Checks &checks, CUstream_st *stream)
  {
    Testing::TestProblem<3> problem;
    Testing::setup_problem(problem,
                           false,
                           1,
                           3,
                           Testing::ConstraintKind::none,
                           false,
                           3);
    const DoFHandlerAdapter<3>        adapter = Testing::make_adapter(problem);
    const MeshArrays                 &arrays  = adapter.get_arrays();
    LinearElasticityKernel<3, double> kernel;
    kernel.lambda = lambda;
    kernel.mu     = mu;
    for (unsigned int d = 0; d < 3; ++d)
      kernel.body_force[d] = force[d];
    DeviceCSRMatrix<double> matrix;
    DeviceVector<double>    rhs;
    assemble_on_device<3>(arrays, kernel, matrix, rhs, stream);
    for (const DirectSolverMatrixType type : all_types)
      checks.check_throws<ExcSingularMatrix>(
        [&] {
          direct_solution<double>(solver_data<double>(type, stream),
                                  matrix,
                                  rhs);
        },
        "Dirichlet constraints are missing",
        "3D elasticity without constraints, " + to_string(type) +
          ": ExcSingularMatrix names the missing constraints, no NaN "
          "returned");
  }



  // The memory refusal after the analysis, and misuse.
  void
  test_refusals(Testing::Checks &checks, CUstream_st *stream)
  {
    Testing::TestProblem<2> problem;
    Testing::setup_constrained_problem(problem,
                                       Testing::ConstrainedCase::refined_ball,
                                       1,
                                       1,
                                       1);
    const DoFHandlerAdapter<2> adapter =
      Testing::make_adapter(problem,
                            {SupplementalDataFormat::quadrature_gradients,
                             false});
    const MeshArrays        &arrays = adapter.get_arrays();
    LaplaceKernel<2, double> kernel;
    kernel.diffusion = diffusion;
    kernel.source    = source;
    DeviceCSRMatrix<double> matrix;
    DeviceVector<double>    rhs;
    assemble_on_device<2>(arrays, kernel, matrix, rhs, stream);

    // A margin that leaves (almost) nothing of the free memory.
    auto data = solver_data<double>(DirectSolverMatrixType::spd, stream);
    data.memory_margin = 1 - 1e-12;
    DeviceDirectSolver<double> greedy(data);
    checks.check_throws<ExcDirectSolverMemory>(
      [&] {
        greedy.analyze(matrix);
      },
      "would not fit the device: cuDSS estimates its peak device memory",
      "analyze() refuses a factorization that does not fit the free memory "
      "less the margin, with cuDSS's estimate");
    checks.check(greedy.get_statistics().peak_device_memory > 0,
                 "the refused analysis still reports cuDSS's estimate (" +
                   std::to_string(greedy.get_statistics().peak_device_memory) +
                   " bytes)");
    checks.check_throws<ExceptionBase>(
      [&] {
        greedy.factorize(matrix);
      },
      "needs analyze() first",
      "after a refused analysis, factorize() asks for analyze()");

    DeviceDirectSolver<double> solver(
      solver_data<double>(DirectSolverMatrixType::spd, stream));
    DeviceVector<double> x;
    solver.analyze(matrix);
    checks.check_throws<ExceptionBase>(
      [&] {
        solver.solve(x, rhs);
      },
      "needs a successful factorize() first",
      "solve() before factorize() is refused");
    solver.factorize(matrix);
    const DeviceVector<double> short_rhs(arrays.n_dofs - 1);
    checks.check_throws<ExceptionBase>(
      [&] {
        solver.solve(x, short_rhs);
      },
      "entries",
      "a right-hand side of the wrong size is refused");
    DeviceVector<double> in_place(rhs.to_host());
    checks.check_throws<ExceptionBase>(
      [&] {
        solver.solve(in_place, in_place);
      },
      "must be different vectors",
      "a solve in place (x and b the same vector) is refused");
  }
} // namespace



int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks checks;
  using C = Testing::ConstrainedCase;
  try
    {
      // Assembly and solves on a stream of their own, as a program would.
      const CudaStream stream;
      test_constrained<2>(checks,
                          C::refined_ball_inhomogeneous,
                          2,
                          Form::laplace,
                          2,
                          stream.get());
      test_constrained<3>(checks,
                          C::refined_ball_inhomogeneous,
                          1,
                          Form::elasticity,
                          1,
                          stream.get());
      test_constrained<2>(checks,
                          C::periodic_cube,
                          2,
                          Form::laplace,
                          2,
                          stream.get());
      test_constrained<3>(checks,
                          C::periodic_cube,
                          1,
                          Form::elasticity,
                          0,
                          stream.get());
      test_constrained<3>(checks,
                          C::chained,
                          1,
                          Form::elasticity,
                          0,
                          stream.get());
      test_refactorization(checks, stream.get());
      test_indefinite(checks, stream.get());
      test_singular(checks, stream.get());
      test_refusals(checks, stream.get());
    }
  catch (const std::exception &exc)
    {
      checks.check(false, std::string("unexpected exception: ") + exc.what());
    }
  return checks.exit_code();
}
