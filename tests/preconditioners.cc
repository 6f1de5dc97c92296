// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The CG preconditioners on the resident distributed classes in host mode
// (the loops of their CUDA kernels, on the CPU), under mpirun with any
// number of ranks, on 3D elasticity (and 2D) with hanging nodes and
// Dirichlet constraints:
// - ChebyshevJacobi's eigenvalue estimate equals that of deal.II's
//   PreconditionChebyshev (Lanczos on the Jacobi-preconditioned matrix) to
//   1e-8, its CG step count equals deal.II's, and given the same
//   eigenvalue bound the preconditioned vector equals deal.II's to 1e-13
//   for degrees 1, 2, 3 and 5;
// - the point-block Jacobi inverses equal FullMatrix::gauss_jordan's of
//   the same blocks to 1e-12, the blocks are the dim x dim node blocks, and
//   blocks with constrained (identity-like) rows are among them;
// - CG with each preconditioner converges to the solution of deal.II's
//   SolverCG to 1e-10 (both to a residual of 1e-13), with a true residual
//   that meets the tolerance;
// - in 3D elasticity, Chebyshev and point-block Jacobi take fewer
//   iterations than point Jacobi;
// - a second solve gives the same solution bit for bit, and the jacobi
//   choice gives DistributedJacobiCG's iterates bit for bit;
// - on hand-made input: the eigenvalues of a known tridiagonal matrix, the
//   blocks of nodes a process does not own whole, the inverses of a
//   regular, a constrained and a singular block, and bad parameters
//   refused with a message naming them.
// The sums of the reductions depend on the number of ranks, so results on
// different numbers of ranks agree to the tolerances against deal.II, not
// bit for bit.

#include <deal.II/base/mpi.h>

#include <deal.II/lac/diagonal_matrix.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/precondition.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/trilinos_precondition.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>
#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/distributed/distributed_assembler.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/distributed_jacobi_cg.h>
#include <gpu_assembly/distributed/distributed_preconditioned_cg.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <sstream>

#include "distributed_problems.h"
#include "resident_problems.h"
#include "tests.h"

namespace
{
  using namespace Testing;

  using LAVector = LinearAlgebra::distributed::Vector<double>;

  constexpr double eigenvalue_tolerance = 1e-8;
  constexpr double chebyshev_tolerance  = 1e-13;
  constexpr double inverse_tolerance    = 1e-12;
  constexpr double cg_tolerance         = 1e-13;
  constexpr double solution_tolerance   = 1e-10;

  std::vector<double>
  owned_values(const DistributedDeviceVector<double> &v)
  {
    std::vector<double> values;
    v.copy_to_host(values);
    values.resize(v.locally_owned_size());
    return values;
  }



  // Chebyshev against deal.II's PreconditionChebyshev on the same matrix.
  template <int dim>
  void
  check_chebyshev(const TrilinosWrappers::SparseMatrix  &trilinos_matrix,
                  const DistributedDeviceMatrix<double> &A,
                  std::ostringstream                    &failures,
                  std::ostringstream                    &report)
  {
    const MPI_Comm comm        = MPI_COMM_WORLD;
    const auto    &partitioner = A.get_partitioner();
    const auto     owned_partitioner =
      std::make_shared<Utilities::MPI::Partitioner>(
        partitioner->locally_owned_range(),
        comm);

    auto diagonal = std::make_shared<DiagonalMatrix<LAVector>>();
    diagonal->get_vector().reinit(owned_partitioner);
    for (unsigned int i = 0; i < owned_partitioner->locally_owned_size(); ++i)
      diagonal->get_vector().local_element(i) =
        1. /
        trilinos_matrix.diag_element(owned_partitioner->local_to_global(i));

    using DealChebyshev = PreconditionChebyshev<TrilinosWrappers::SparseMatrix,
                                                LAVector,
                                                DiagonalMatrix<LAVector>>;
    ChebyshevParameters parameters;
    {
      DealChebyshev::AdditionalData data;
      data.degree              = parameters.degree;
      data.smoothing_range     = parameters.smoothing_range;
      data.eig_cg_n_iterations = parameters.eig_cg_n_iterations;
      data.preconditioner      = diagonal;
      DealChebyshev reference;
      reference.initialize(trilinos_matrix, data);
      LAVector   src(owned_partitioner);
      const auto info = reference.estimate_eigenvalues(src);

      ChebyshevJacobi<DistributedDeviceMatrix<double>,
                      DistributedDeviceVector<double>>
        chebyshev;
      chebyshev.initialize(A, parameters);
      const ChebyshevSchedule &schedule = chebyshev.get_schedule();
      const double             min_error =
        std::abs(schedule.min_eigenvalue - info.min_eigenvalue_estimate) /
        info.min_eigenvalue_estimate;
      const double max_error =
        std::abs(schedule.max_eigenvalue - info.max_eigenvalue_estimate) /
        info.max_eigenvalue_estimate;
      report << " eigenvalues [" << schedule.min_eigenvalue << ", "
             << schedule.max_eigenvalue << "] (deal.II ["
             << info.min_eigenvalue_estimate << ", "
             << info.max_eigenvalue_estimate << "], errors " << min_error
             << ", " << max_error << ");";
      if (!(min_error < eigenvalue_tolerance &&
            max_error < eigenvalue_tolerance))
        failures << " the Chebyshev eigenvalue estimate differs from "
                    "deal.II's by more than 1e-8;";
      if (schedule.cg_iterations != info.cg_iterations)
        failures << " the eigenvalue estimate took " << schedule.cg_iterations
                 << " CG steps, deal.II's " << info.cg_iterations << ";";
      if (schedule.n_steps() != parameters.degree)
        failures << " a degree " << parameters.degree << " schedule has "
                 << schedule.n_steps() << " steps;";
    }

    // The same bound: the same polynomial, so the same vector.
    for (const unsigned int degree : {1u, 2u, 3u, 5u})
      {
        ChebyshevParameters given;
        given.degree              = degree;
        given.eig_cg_n_iterations = 0;
        given.max_eigenvalue      = 2.1;
        DealChebyshev::AdditionalData data;
        data.degree              = degree;
        data.smoothing_range     = given.smoothing_range;
        data.eig_cg_n_iterations = 0;
        data.max_eigenvalue      = given.max_eigenvalue;
        data.preconditioner      = diagonal;
        DealChebyshev reference;
        reference.initialize(trilinos_matrix, data);
        LAVector r(owned_partitioner), z(owned_partitioner);
        fill_owned(r);
        reference.vmult(z, r);

        ChebyshevJacobi<DistributedDeviceMatrix<double>,
                        DistributedDeviceVector<double>>
          chebyshev;
        chebyshev.initialize(A, given);
        DistributedDeviceVector<double> resident_r, resident_z;
        resident_r.reinit(partitioner);
        resident_z.reinit(partitioner);
        resident_r.copy_locally_owned_from(r);
        chebyshev.vmult(resident_z, resident_r);
        LAVector result(owned_partitioner);
        resident_z.copy_locally_owned_to(result);
        result -= z;
        const double error = result.l2_norm() / z.l2_norm();
        report << " degree " << degree << " " << error << ";";
        if (!(error < chebyshev_tolerance))
          failures << " the degree " << degree
                   << " Chebyshev vector differs from deal.II's by " << error
                   << ";";
      }
  }



  // Block inverses against FullMatrix::gauss_jordan.
  template <int dim>
  void
  check_blocks(
    const DistributedProblem<dim>                           &problem,
    const TrilinosWrappers::SparseMatrix                    &trilinos_matrix,
    const DistributedDeviceMatrix<double>                   &A,
    const PointBlockJacobi<DistributedDeviceMatrix<double>,
                           DistributedDeviceVector<double>> &block_jacobi,
    std::ostringstream                                      &failures,
    std::ostringstream                                      &report)
  {
    const MPI_Comm      comm        = MPI_COMM_WORLD;
    const auto         &partitioner = *A.get_partitioner();
    const PointBlocks  &blocks      = block_jacobi.get_blocks();
    std::vector<double> inverses;
    block_jacobi.copy_inverses_to_host(inverses);
    double       error       = 0;
    unsigned int node_blocks = 0, constrained_blocks = 0, other_sizes = 0;
    bool         sizes_allowed   = true;
    types::global_dof_index rows = 0;
    for (unsigned int k = 0; k < blocks.n_blocks(); ++k)
      {
        const unsigned int n = blocks.offsets[k + 1] - blocks.offsets[k];
        FullMatrix<double> block(n, n);
        bool               constrained = false;
        for (unsigned int i = 0; i < n; ++i)
          {
            const auto row =
              partitioner.local_to_global(blocks.rows[blocks.offsets[k] + i]);
            constrained =
              constrained || problem.constraints.is_constrained(row);
            for (unsigned int j = 0; j < n; ++j)
              block(i, j) =
                trilinos_matrix.el(row,
                                   partitioner.local_to_global(
                                     blocks.rows[blocks.offsets[k] + j]));
          }
        block.gauss_jordan();
        double norm = 0, difference = 0;
        for (unsigned int i = 0; i < n; ++i)
          for (unsigned int j = 0; j < n; ++j)
            {
              const double value = inverses[std::size_t(k) * blocks.block_size *
                                              blocks.block_size +
                                            i * n + j];
              norm               = std::max(norm, std::abs(block(i, j)));
              difference = std::max(difference, std::abs(value - block(i, j)));
            }
        error = std::max(error, difference / norm);
        node_blocks += n == problem.n_components ? 1 : 0;
        other_sizes += n == problem.n_components ? 0 : 1;
        sizes_allowed = sizes_allowed && (n == problem.n_components || n == 1);
        rows += n;
        constrained_blocks += constrained && n == problem.n_components ? 1 : 0;
      }
    error              = Utilities::MPI::max(error, comm);
    node_blocks        = Utilities::MPI::sum(node_blocks, comm);
    constrained_blocks = Utilities::MPI::sum(constrained_blocks, comm);
    other_sizes        = Utilities::MPI::sum(other_sizes, comm);
    rows               = Utilities::MPI::sum(rows, comm);
    sizes_allowed      = Utilities::MPI::min(sizes_allowed ? 1 : 0, comm) == 1;
    report << " blocks " << node_blocks << " (" << constrained_blocks
           << " constrained, " << other_sizes << " single rows), inverses "
           << error << ";";
    if (!(error < inverse_tolerance))
      failures << " block inverses differ from gauss_jordan()'s by " << error
               << ";";
    // Single rows: DoFs of no node of the owning rank, if any.
    if (node_blocks == 0 || !sizes_allowed ||
        rows != problem.dof_handler.n_dofs())
      failures << " the blocks are not the node blocks (and single rows) "
                  "of every DoF once;";
    if (constrained_blocks == 0)
      failures << " no block holds a constrained row, the case to test;";
  }



  // The pieces on hand-made input: eigenvalues of a known tridiagonal
  // matrix, the blocks of nodes that a process does not own whole, block
  // inverses of a regular, a constrained and a singular block, and the
  // messages on bad parameters.
  bool
  check_pieces()
  {
    std::ostringstream failures, line;

    // The 1D Laplacian: eigenvalues 2 - 2 cos(k pi / (n + 1)).
    const unsigned int  n = 10;
    std::vector<double> diagonal(n, 2.), off_diagonal(n - 1, -1.);
    double              lowest = 0, highest = 0;
    tridiagonal_eigenvalue_range(diagonal, off_diagonal, lowest, highest);
    const double exact_low  = 2 - 2 * std::cos(numbers::PI / (n + 1));
    const double exact_high = 2 - 2 * std::cos(n * numbers::PI / (n + 1));
    line << "pieces: tridiagonal eigenvalues " << lowest << ", " << highest;
    if (!(std::abs(lowest - exact_low) < 1e-14 &&
          std::abs(highest - exact_high) < 1e-14))
      failures << " the tridiagonal eigenvalues of the 1D Laplacian are off;";
    double unused_low = 0, unused_high = 0;
    if (lanczos_eigenvalue_range({0.5}, {}, unused_low, unused_high))
      failures << " one CG step gives a Lanczos estimate;";
    const ChebyshevSchedule none =
      ChebyshevSchedule::make(ChebyshevParameters(), false, 0, 0);
    if (none.max_eigenvalue != 1 || none.min_eigenvalue != 1)
      failures << " without an estimate the range is not [1, 1], as "
                  "deal.II's;";

    // Two fields per node; node 1's second DoF belongs to another process
    // (row -1), node 2 names one row twice: their rows are single blocks.
    const std::vector<int> node_dofs = {0, 1, 2, 3, 4, 4, 5, 6};
    const PointBlocks      blocks =
      PointBlocks::make(node_dofs, 2, 6, [](const int dof) -> long long {
        return dof == 3 ? -1 : dof == 6 ? 5 : dof;
      });
    if (blocks.offsets != std::vector<int>{0, 2, 3, 4, 5, 6} ||
        blocks.rows != std::vector<int>{0, 1, 2, 3, 4, 5} ||
        blocks.block_size != 2)
      failures << " PointBlocks::make() gives other blocks than node 0 and "
                  "four single rows;";

    // Rows 0-1: a regular block coupled to row 2; row 2 constrained (its
    // diagonal alone); rows 3-4 a singular block; row 5 a zero diagonal.
    const std::vector<int>    row_offsets = {0, 3, 6, 7, 9, 11, 12};
    const std::vector<int>    columns = {0, 1, 2, 0, 1, 2, 2, 3, 4, 3, 4, 5};
    const std::vector<double> values  = {4, 1, -1, 1, 3, -2, 7, 1, 1, 1, 1, 0};
    PointBlocks               hand;
    hand.offsets    = {0, 2, 3, 5, 6};
    hand.rows       = {0, 1, 2, 3, 4, 5};
    hand.block_size = 2;
    std::vector<double> inverses(4 * 4);
    std::vector<int>    singular(4);
    for_each_index(false,
                   4,
                   PointBlockInverse<double>{row_offsets.data(),
                                             columns.data(),
                                             values.data(),
                                             hand.offsets.data(),
                                             hand.rows.data(),
                                             2,
                                             inverses.data(),
                                             singular.data()});
    FullMatrix<double> block(2, 2);
    block(0, 0) = 4, block(0, 1) = 1, block(1, 0) = 1, block(1, 1) = 3;
    block.gauss_jordan();
    double error = 0;
    for (unsigned int i = 0; i < 2; ++i)
      for (unsigned int j = 0; j < 2; ++j)
        error = std::max(error, std::abs(inverses[i * 2 + j] - block(i, j)));
    if (!(error < 1e-15))
      failures << " a 2 x 2 inverse differs from gauss_jordan()'s;";
    if (inverses[4] != 1. / 7)
      failures << " a constrained row does not invert to its reciprocal;";
    if (singular != std::vector<int>{0, 0, 1, 1} || inverses[8] != 1 ||
        inverses[9] != 0 || inverses[10] != 0 || inverses[11] != 1 ||
        inverses[12] != 0)
      failures << " a singular block does not fall back to its diagonal's "
                  "reciprocals (0 for a zero diagonal), flagged;";
    const std::vector<double> r = {1, 2, 3, 4, 5, 6};
    std::vector<double>       z(6);
    for_each_index(false,
                   4,
                   PointBlockApply<double>{hand.offsets.data(),
                                           hand.rows.data(),
                                           2,
                                           inverses.data(),
                                           r.data(),
                                           z.data()});
    if (!(std::abs(z[0] - (block(0, 0) * 1 + block(0, 1) * 2)) < 1e-15 &&
          std::abs(z[1] - (block(1, 0) * 1 + block(1, 1) * 2)) < 1e-15 &&
          z[2] == 3. / 7 && z[3] == 4 && z[4] == 5 && z[5] == 0))
      failures << " PointBlockApply does not apply the inverses;";

    // Bad input: a message that names the parameter (throws_naming()).
    ChebyshevParameters zero_degree, two_steps, no_bound;
    zero_degree.degree            = 0;
    two_steps.eig_cg_n_iterations = 2;
    no_bound.eig_cg_n_iterations  = 0;
    no_bound.max_eigenvalue       = -1;
    if (!throws_naming(
          [&] {
            zero_degree.check();
          },
          "degree") ||
        !throws_naming(
          [&] {
            two_steps.check();
          },
          "eig_cg_n_iterations") ||
        !throws_naming(
          [&] {
            no_bound.check();
          },
          "max_eigenvalue"))
      failures << " bad ChebyshevParameters are not refused with a message "
                  "naming the parameter;";
    if (!throws_naming(
          [] {
            PointBlocks::make(std::vector<int>{0, 1, 2}, 2, 3, [](const int d) {
              return static_cast<long long>(d);
            });
          },
          "fields per node"))
      failures << " node DoFs that are no multiple of the fields are not "
                  "refused;";
    return report_on_rank_0(line.str(), failures.str());
  }



  template <int dim>
  bool
  run_case(const Form form, const unsigned int extra_refinements)
  {
    // Sheared and refined further: big enough for iteration counts to tell
    // the preconditioners apart, with node blocks that are not diagonal.
    const DistributedProblem<dim>
      problem(TriaKind::p4est, form, 1, true, true, 0.8, extra_refinements);
    const auto        &adapter = problem.adapter;
    const IndexSet     owned   = adapter.locally_owned_dofs();
    const MPI_Comm     comm    = MPI_COMM_WORLD;
    std::ostringstream failures, report;

    DynamicSparsityPattern dsp;
    adapter.make_sparsity_pattern(dsp);
    TrilinosWrappers::SparseMatrix trilinos_matrix;
    trilinos_matrix.reinit(owned, owned, dsp, comm);
    TrilinosWrappers::MPI::Vector     trilinos_rhs(owned, comm);
    DistributedAssembler<dim, double> trilinos_assembler;
    trilinos_assembler.reinit(adapter, trilinos_matrix, trilinos_rhs);
    DistributedDeviceMatrix<double> A;
    A.reinit(adapter);
    DistributedDeviceVector<double> b;
    b.reinit(A.get_partitioner());
    DistributedAssembler<dim, double> assembler;
    assembler.reinit(adapter, A, b);
    with_kernel<dim, double>(form, problem.n_components, [&](const auto &k) {
      trilinos_assembler.assemble(k, trilinos_matrix, trilinos_rhs);
      assembler.assemble(k, A, b);
    });

    check_chebyshev<dim>(trilinos_matrix, A, failures, report);

    // deal.II's solution.
    TrilinosWrappers::MPI::Vector reference(owned, comm);
    SolverControl control(10000, cg_tolerance * trilinos_rhs.l2_norm());
    SolverCG<TrilinosWrappers::MPI::Vector> solver(control);
    TrilinosWrappers::PreconditionJacobi    jacobi;
    jacobi.initialize(trilinos_matrix);
    solver.solve(trilinos_matrix, reference, trilinos_rhs, jacobi);

    CGControl cg_control;
    cg_control.relative_tolerance = cg_tolerance;
    cg_control.max_iterations     = 10000;
    unsigned int iterations[3]    = {};
    for (const CGPreconditioner preconditioner :
         {CGPreconditioner::jacobi,
          CGPreconditioner::chebyshev,
          CGPreconditioner::point_block_jacobi})
      {
        DistributedPreconditionedCG<double>                 cg;
        DistributedPreconditionedCG<double>::AdditionalData data;
        data.preconditioner = preconditioner;
        cg.reinit(adapter, A, data);
        DistributedDeviceVector<double> x, again;
        const CGResult                  result = cg.solve(A, x, b, cg_control);
        const CGResult    repeat = cg.solve(A, again, b, cg_control);
        const std::string name   = to_string(preconditioner);
        iterations[static_cast<int>(preconditioner)] = result.iterations;

        TrilinosWrappers::MPI::Vector solution(owned, comm),
          residual(owned, comm);
        x.copy_locally_owned_to(solution);
        trilinos_matrix.vmult(residual, solution);
        residual -= trilinos_rhs;
        const double true_residual =
          residual.l2_norm() / trilinos_rhs.l2_norm();
        solution -= reference;
        const double error = solution.l2_norm() / reference.l2_norm();
        report << " " << name << " " << result.iterations << " iterations, "
               << "error " << error << ";";
        if (!result.converged)
          failures << " CG with " << name << " did not converge;";
        if (!(error < solution_tolerance))
          failures << " CG with " << name
                   << " differs from deal.II's solution by " << error << ";";
        if (!(true_residual < 100 * cg_tolerance))
          failures << " CG with " << name << " leaves a true residual of "
                   << true_residual << ";";
        if (!bitwise_equal(owned_values(x), owned_values(again), comm) ||
            repeat.iterations != result.iterations)
          failures << " a second solve with " << name
                   << " gives another solution;";

        if (preconditioner == CGPreconditioner::jacobi)
          {
            DistributedJacobiCG<double>     jacobi_cg;
            DistributedDeviceVector<double> y;
            jacobi_cg.solve(A, y, b, cg_tolerance, 10000);
            if (!bitwise_equal(owned_values(x), owned_values(y), comm))
              failures << " the jacobi choice differs from "
                          "DistributedJacobiCG;";
          }
        if (preconditioner == CGPreconditioner::point_block_jacobi)
          check_blocks(problem,
                       trilinos_matrix,
                       A,
                       cg.get_solver().get_point_block_jacobi(),
                       failures,
                       report);
      }
    if (form == Form::elasticity && dim == 3 &&
        !(iterations[1] < iterations[0] && iterations[2] < iterations[0]))
      failures << " on 3D elasticity Chebyshev (" << iterations[1]
               << ") and point-block Jacobi (" << iterations[2]
               << ") must take fewer iterations than Jacobi (" << iterations[0]
               << ");";

    std::ostringstream line;
    line << dim << "D " << to_string(form) << ", "
         << problem.dof_handler.n_dofs()
         << " DoFs, hanging nodes:" << report.str();
    return report_on_rank_0(line.str(), failures.str());
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  return Testing::exit_code_on_all_ranks([&]() {
    bool passed = check_pieces();
    passed &= run_case<3>(Form::elasticity, 1);
    passed &= run_case<2>(Form::elasticity, 2);
    passed &= run_case<3>(Form::laplace, 1);
    return passed;
  });
}
