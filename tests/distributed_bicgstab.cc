// SPDX-License-Identifier: LGPL-2.1-or-later
//
// DistributedJacobiBiCGStab on the resident distributed classes in host
// mode (the loops of its CUDA kernels, on the CPU), under mpirun with any
// number of ranks, on a non-symmetric matrix (upwind convection-diffusion,
// rows scaled unevenly; convection_diffusion.h):
// - its solution equals that of deal.II's SolverBicgstab with Trilinos'
//   Jacobi preconditioner to 1e-9 relative (both to a residual of 1e-12),
//   its true residual ||b - A x|| meets the tolerance (within a factor 10,
//   the recursive residual being what it tests), and its iteration count
//   is within 20 % (plus 2) of deal.II's, on two convection strengths;
// - a second solve gives the same solution and counts bit for bit;
// - in float it converges to 1e-5 and equals the double solution to 1e-4;
// - a right-hand side of zero gives x = 0 after no iteration; an iteration
//   limit below what the solve needs stops it there, not converged;
// - a right-hand side of another layout, a negative tolerance and an
//   empty matrix are refused with a message naming the solver or entry.
// The sums of the reductions depend on the number of ranks, so results on
// different numbers of ranks agree to the tolerances against deal.II, not
// bit for bit.

#include <deal.II/base/mpi.h>

#include <deal.II/lac/solver_bicgstab.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/trilinos_precondition.h>
#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/distributed/distributed_jacobi_bicgstab.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <sstream>

#include "convection_diffusion.h"
#include "distributed_problems.h"
#include "resident_problems.h"
#include "tests.h"

namespace
{
  using namespace Testing;

  constexpr double solver_tolerance   = 1e-12;
  constexpr double solution_tolerance = 1e-9;

  template <typename Number>
  std::vector<Number>
  owned_values(const DistributedDeviceVector<Number> &v)
  {
    std::vector<Number> values;
    v.copy_to_host(values);
    values.resize(v.locally_owned_size());
    return values;
  }

  bool
  run_case(const unsigned int n, const double peclet)
  {
    const MPI_Comm            comm = MPI_COMM_WORLD;
    const ConvectionDiffusion problem(n, peclet, comm);
    std::ostringstream        failures, report;

    // deal.II's BiCGStab with Jacobi.
    TrilinosWrappers::MPI::Vector b, x_dealii;
    problem.fill_rhs(b);
    x_dealii.reinit(b);
    TrilinosWrappers::PreconditionJacobi jacobi;
    jacobi.initialize(problem.trilinos);
    SolverControl control_dealii(10000, solver_tolerance * b.l2_norm());
    SolverBicgstab<TrilinosWrappers::MPI::Vector> dealii_solver(control_dealii);
    dealii_solver.solve(problem.trilinos, x_dealii, b, jacobi);
    const std::vector<double> reference(x_dealii.begin(), x_dealii.end());

    DistributedDeviceMatrix<double>::AdditionalData storage;
    storage.use_device = false;
    DistributedDeviceMatrix<double> A;
    DistributedDeviceVector<double> rhs, x;
    problem.make_resident_system(A, rhs, storage);

    CGControl control;
    control.relative_tolerance = solver_tolerance;
    control.max_iterations     = 10000;
    DistributedJacobiBiCGStab<double> solver;
    const CGResult                    result = solver.solve(A, x, rhs, control);
    const auto                        solution = owned_values(x);
    const double error = relative_difference(solution, reference, comm);

    // The true residual of the solution, with deal.II's product.
    TrilinosWrappers::MPI::Vector x_ours(b), residual(b);
    std::copy(solution.begin(), solution.end(), x_ours.begin());
    problem.trilinos.vmult(residual, x_ours);
    residual.sadd(-1., 1., b);
    const double true_residual = residual.l2_norm() / b.l2_norm();

    const unsigned int dealii_steps = control_dealii.last_step();
    report << " BiCGStab " << result.iterations << " iterations (deal.II "
           << dealii_steps << "), |x - x_deal.II|/|x_deal.II| "
           << scientific(error) << ", true residual "
           << scientific(true_residual);
    if (!result.converged)
      failures << " BiCGStab did not converge (final residual "
               << result.final_residual << ");";
    if (!(error <= solution_tolerance))
      failures << " the solution differs from deal.II's SolverBicgstab by "
               << error << " > " << solution_tolerance << ";";
    if (!(true_residual <= 10 * solver_tolerance))
      failures << " the true residual " << true_residual
               << " misses the tolerance " << solver_tolerance
               << " by more than a factor 10;";
    if (!(result.iterations <= dealii_steps + dealii_steps / 5 + 2 &&
          dealii_steps <= result.iterations + result.iterations / 5 + 2))
      failures << " " << result.iterations
               << " iterations are not within 20 % (+2) of deal.II's "
               << dealii_steps << ";";
    if (!(result.final_residual <= solver_tolerance * result.initial_residual))
      failures << " the reported final residual " << result.final_residual
               << " exceeds the tolerance;";

    // Repeatability.
    const CGResult again   = solver.solve(A, x, rhs, control);
    const auto     second  = owned_values(x);
    const bool     repeats = again.iterations == result.iterations &&
                         again.final_residual == result.final_residual &&
                         std::memcmp(second.data(),
                                     solution.data(),
                                     solution.size() * sizeof(double)) == 0;
    report << ", repeats bit for bit: " << (repeats ? "yes" : "no");
    if (!repeats)
      failures << " a second solve does not repeat the first bit for bit;";

    // An iteration limit below what the solve needs.
    CGControl short_control      = control;
    short_control.max_iterations = 2;
    const CGResult stopped       = solver.solve(A, x, rhs, short_control);
    if (stopped.converged || stopped.iterations != 2)
      failures << " with max_iterations = 2 the solve reports "
               << stopped.iterations << " iterations, converged "
               << stopped.converged << ";";

    // Float.
    DistributedDeviceMatrix<float>                 A_float;
    DistributedDeviceMatrix<float>::AdditionalData float_storage;
    float_storage.use_device = false;
    DistributedDeviceVector<float> rhs_float, x_float;
    problem.make_resident_system(A_float, rhs_float, float_storage);
    CGControl float_control          = control;
    float_control.relative_tolerance = 1e-5;
    DistributedJacobiBiCGStab<float> float_solver;
    const CGResult                   float_result =
      float_solver.solve(A_float, x_float, rhs_float, float_control);
    const auto   float_values = owned_values(x_float);
    const double float_error =
      relative_difference(std::vector<double>(float_values.begin(),
                                              float_values.end()),
                          reference,
                          comm);
    report << ", float " << float_result.iterations << " iterations, error "
           << scientific(float_error);
    if (!float_result.converged || !(float_error <= 1e-4))
      failures << " float BiCGStab: converged " << float_result.converged
               << ", error " << float_error << " > 1e-4;";

    std::ostringstream line;
    line << n * n << " unknowns, Peclet " << peclet << ":" << report.str();
    return report_on_rank_0(line.str(), failures.str());
  }



  // Zero right-hand side and refusals.
  bool
  check_pieces()
  {
    const MPI_Comm                                  comm = MPI_COMM_WORLD;
    const ConvectionDiffusion                       problem(8, 1., comm);
    std::ostringstream                              failures;
    DistributedDeviceMatrix<double>::AdditionalData storage;
    storage.use_device = false;
    DistributedDeviceMatrix<double> A;
    problem.make_resident(A, storage);
    DistributedDeviceVector<double> zero, x;
    zero.reinit(A.get_partitioner(), storage);
    DistributedJacobiBiCGStab<double> solver;
    const CGResult result = solver.solve(A, x, zero, CGControl());
    const auto     values = owned_values(x);
    const bool     all_zero =
      std::all_of(values.begin(), values.end(), [](const double v) {
        return v == 0;
      });
    if (!(result.converged && result.iterations == 0 && all_zero))
      failures << " b = 0 must give x = 0 after no iteration (converged "
               << result.converged << ", " << result.iterations
               << " iterations);";

    DistributedDeviceVector<double> other;
    other.reinit(
      std::make_shared<const Utilities::MPI::Partitioner>(complete_index_set(3),
                                                          comm),
      storage);
    if (!throws_naming(
          [&]() {
            solver.solve(A, x, other, CGControl());
          },
          "DistributedJacobiBiCGStab::solve(): the right-hand side "
          "does not have the matrix's layout"))
      failures << " a right-hand side of another layout is not refused "
                  "naming the solver;";
    CGControl negative;
    negative.relative_tolerance = -1;
    if (!throws_naming(
          [&]() {
            solver.solve(A, x, zero, negative);
          },
          "CGControl: the tolerances must be finite and not negative"))
      failures << " a negative tolerance is not refused naming CGControl;";
    DistributedDeviceMatrix<double> empty;
    if (!throws_naming(
          [&]() {
            solver.solve(empty, x, zero, CGControl());
          },
          "DistributedJacobiBiCGStab::solve(): the matrix is empty"))
      failures << " an empty matrix is not refused naming the solver;";
    return report_on_rank_0(
      "zero right-hand side, iteration limit and refusals",
      failures.str());
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  return Testing::exit_code_on_all_ranks([&]() {
    bool passed = check_pieces();
    passed &= run_case(24, 2.);
    passed &= run_case(32, 0.5);
    return passed;
  });
}
