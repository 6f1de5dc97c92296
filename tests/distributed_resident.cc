// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The resident distributed classes in host mode (the same loops as their
// CUDA kernels, on the CPU) against deal.II and Trilinos, under mpirun with
// any number of ranks:
// - DistributedAssembler into a DistributedDeviceMatrix and
//   DistributedDeviceVector equals its assembly into Trilinos objects (which
//   distributed_assembly checks against deal.II's) to 1e-13 relative, and a
//   second assemble() repeats the values bit for bit;
// - update_ghost_values() gives exactly the ghost entries of
//   LinearAlgebra::distributed::Vector::update_ghost_values();
// - vmult() equals TrilinosWrappers::SparseMatrix::vmult() to 1e-14, and
//   dot products and norms those of Trilinos to 1e-14;
// - DistributedJacobiCG converges to the solution of deal.II's SolverCG
//   with TrilinosWrappers::PreconditionJacobi (1e-8 relative for a
//   residual tolerance of 1e-10) within one iteration of its count, and its
//   solution's residual, computed by Trilinos, meets the tolerance;
// - the choice of the exchange path (HaloPath): automatic gives host memory
//   for host entries, NCCL and CUDA-aware MPI for host entries are refused
//   with a message that says why, NCCL without NCCL in the plugin names
//   GPU_ASSEMBLY_WITH_NCCL, CUDA-aware MPI is taken only when asked for and
//   refused where MPI does not report CUDA support, device entries on a
//   rank without a GPU are refused, and the names that programs parse and
//   print map to the paths.

#include <deal.II/base/mpi.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/trilinos_precondition.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>
#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/distributed/distributed_assembler.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/distributed_jacobi_cg.h>

#include <cmath>
#include <iostream>
#include <sstream>

#include "distributed_problems.h"
#include "resident_problems.h"

namespace
{
  using namespace Testing;

  constexpr double assembly_tolerance = 1e-13;
  constexpr double vmult_tolerance    = 1e-14;
  constexpr double cg_tolerance       = 1e-10;
  constexpr double solution_tolerance = 1e-8;

  template <int dim>
  bool
  run_case(const TriaKind     kind,
           const Form         form,
           const unsigned int degree,
           const bool         hanging_nodes)
  {
    const DistributedProblem<dim> problem(kind, form, degree, hanging_nodes);
    const auto                   &adapter = problem.adapter;
    const IndexSet                owned   = adapter.locally_owned_dofs();
    const MPI_Comm                comm    = MPI_COMM_WORLD;
    std::ostringstream            failures;

    // The Trilinos target.
    const TrilinosTarget<dim> trilinos(problem);

    // The resident target, host mode.
    DistributedDeviceMatrix<double> A;
    A.reinit(adapter);
    DistributedDeviceVector<double> b;
    b.reinit(A.get_partitioner());
    DistributedAssembler<dim, double> assembler;
    assembler.reinit(adapter, A, b);
    problem.with_kernel([&](const auto &kernel) {
      assembler.assemble(kernel, A, b);
    });

    TrilinosWrappers::SparseMatrix resident_matrix;
    resident_matrix.reinit(owned, owned, trilinos.dsp, comm);
    A.copy_to(resident_matrix);
    const double matrix_error =
      matrix_difference(trilinos.matrix, resident_matrix);
    TrilinosWrappers::MPI::Vector resident_rhs(owned, comm);
    b.copy_locally_owned_to(resident_rhs);
    resident_rhs -= trilinos.rhs;
    const double rhs_error = resident_rhs.l2_norm() / trilinos.rhs.l2_norm();
    if (!(matrix_error < assembly_tolerance && rhs_error < assembly_tolerance))
      failures << " the resident assembly differs from the Trilinos target's "
                  "by more than 1e-13;";
    const std::size_t sent =
      Utilities::MPI::sum(assembler.n_resident_bytes_sent(), comm);
    const std::size_t received =
      Utilities::MPI::sum(assembler.n_resident_bytes_received(), comm);
    if (sent != received ||
        (Utilities::MPI::n_mpi_processes(comm) > 1) != (sent > 0))
      failures << " the resident exchange's bytes sent (" << sent
               << ") and received (" << received
               << ") differ or do not fit the number of ranks;";

    std::vector<double> first_values, first_rhs, values, rhs;
    A.copy_values_to_host(first_values);
    b.copy_to_host(first_rhs);
    problem.with_kernel([&](const auto &kernel) {
      assembler.assemble(kernel, A, b);
    });
    A.copy_values_to_host(values);
    b.copy_to_host(rhs);
    if (!bitwise_equal(values, first_values, comm) ||
        !bitwise_equal(rhs, first_rhs, comm))
      failures << " a second resident assemble() gives other values;";

    // Halo: the ghost entries deal.II's vector receives.
    LinearAlgebra::distributed::Vector<double> reference(A.get_partitioner());
    fill_owned(reference);
    DistributedDeviceVector<double> x;
    x.reinit(A.get_partitioner());
    x.copy_locally_owned_from(reference);
    reference.update_ghost_values();
    x.update_ghost_values();
    std::vector<double> x_local;
    x.copy_to_host(x_local);
    bool ghosts_equal =
      x_local.size() ==
      reference.locally_owned_size() + A.get_partitioner()->n_ghost_indices();
    for (std::size_t i = 0; ghosts_equal && i < x_local.size(); ++i)
      ghosts_equal = x_local[i] == reference.local_element(i);
    ghosts_equal = Utilities::MPI::min(ghosts_equal ? 1 : 0, comm) == 1;
    if (!ghosts_equal)
      failures << " update_ghost_values() gives other entries than "
                  "LinearAlgebra::distributed::Vector's;";
    if (x.get_halo_path() != HaloPath::host_memory)
      failures << " a host-mode vector reports the halo path "
               << to_string(x.get_halo_path()) << ";";

    // vmult, dot and norm against Trilinos.
    TrilinosWrappers::MPI::Vector trilinos_x(owned, comm),
      trilinos_y(owned, comm);
    x.copy_locally_owned_to(trilinos_x);
    trilinos.matrix.vmult(trilinos_y, trilinos_x);
    DistributedDeviceVector<double> y;
    y.reinit(x);
    x.zero_out_ghost_values();
    A.vmult(y, x);
    TrilinosWrappers::MPI::Vector resident_y(owned, comm);
    y.copy_locally_owned_to(resident_y);
    resident_y -= trilinos_y;
    const double vmult_error = resident_y.l2_norm() / trilinos_y.l2_norm();
    if (!(vmult_error < vmult_tolerance))
      failures << " vmult() differs from Trilinos' by more than 1e-14;";
    const double norm_error =
      std::abs(x.l2_norm() - trilinos_x.l2_norm()) / trilinos_x.l2_norm();
    const double dot_error = std::abs(x.dot(y) - (trilinos_x * trilinos_y)) /
                             std::abs(trilinos_x * trilinos_y);
    if (!(norm_error < vmult_tolerance && dot_error < vmult_tolerance))
      failures << " l2_norm() or dot() differ from Trilinos' by more than "
                  "1e-14;";

    // Jacobi-CG against deal.II's SolverCG with Trilinos' Jacobi.
    TrilinosWrappers::MPI::Vector reference_solution(owned, comm);
    SolverControl control(5000, cg_tolerance * trilinos.rhs.l2_norm());
    SolverCG<TrilinosWrappers::MPI::Vector> solver(control);
    TrilinosWrappers::PreconditionJacobi    jacobi;
    jacobi.initialize(trilinos.matrix);
    solver.solve(trilinos.matrix, reference_solution, trilinos.rhs, jacobi);

    DistributedJacobiCG<double>     cg;
    DistributedDeviceVector<double> solution;
    const auto result = cg.solve(A, solution, b, cg_tolerance, 5000);
    TrilinosWrappers::MPI::Vector resident_solution(owned, comm);
    solution.copy_locally_owned_to(resident_solution);
    TrilinosWrappers::MPI::Vector residual(owned, comm);
    trilinos.matrix.vmult(residual, resident_solution);
    residual -= trilinos.rhs;
    const double true_residual = residual.l2_norm() / trilinos.rhs.l2_norm();
    TrilinosWrappers::MPI::Vector difference = resident_solution;
    difference -= reference_solution;
    const double solution_error =
      difference.l2_norm() / reference_solution.l2_norm();
    const int iteration_difference =
      int(result.iterations) - int(control.last_step());
    if (!result.converged)
      failures << " DistributedJacobiCG did not converge;";
    if (std::abs(iteration_difference) > 1)
      failures << " DistributedJacobiCG took " << result.iterations
               << " iterations, deal.II's SolverCG " << control.last_step()
               << ";";
    if (!(solution_error < solution_tolerance))
      failures << " the CG solutions differ by more than 1e-8;";
    // The recursively updated residual and the true one part by rounding;
    // a factor 10 leaves room for it.
    if (!(true_residual < 10 * cg_tolerance))
      failures << " the solution's residual exceeds the tolerance;";
    if (std::abs(result.initial_residual - trilinos.rhs.l2_norm()) >
        1e-12 * trilinos.rhs.l2_norm())
      failures << " the initial residual is not ||b||;";

    // Storage must match use_device.
    bool refused = false;
    if (n_cuda_devices() == 0)
      {
        typename DistributedAssembler<dim, double>::AdditionalData data;
        data.use_device = true;
        DistributedAssembler<dim, double> wrong;
        try
          {
            wrong.reinit(adapter, A, b, data);
          }
        catch (const std::exception &exception)
          {
            refused = std::string(exception.what()).find("use_device") !=
                      std::string::npos;
          }
        if (!refused)
          failures << " a host-mode matrix with use_device set is not refused "
                      "with a message naming use_device;";
      }

    std::ostringstream line;
    line << dim << "D "
         << (kind == TriaKind::p4est ? "p4est" : "fullydistributed") << " "
         << to_string(form) << " Q" << degree
         << (hanging_nodes ? ", hanging nodes" : ", uniform") << ", "
         << problem.dof_handler.n_dofs() << " DoFs: assembly " << matrix_error
         << " (matrix), " << rhs_error << " (rhs); vmult " << vmult_error
         << "; CG " << result.iterations << " iterations (deal.II "
         << control.last_step() << "), solution " << solution_error
         << ", residual " << true_residual;
    return report_on_rank_0(line.str(), failures.str());
  }

  // Whether @p choose throws an exception whose message holds every one of
  // @p words.
  template <typename Choose>
  bool
  refused_naming(const Choose &choose, const std::vector<std::string> &words)
  {
    try
      {
        choose();
      }
    catch (const std::exception &exception)
      {
        const std::string message = exception.what();
        for (const std::string &word : words)
          if (message.find(word) == std::string::npos)
            return false;
        return true;
      }
    return false;
  }



  // The rules of choose_halo_path(), halo_path_from_string() and the
  // matrix's AdditionalData::halo_path that hold without a GPU.
  bool
  check_path_selection()
  {
    const MPI_Comm     comm = MPI_COMM_WORLD;
    std::ostringstream failures;
    for (const HaloPath requested : {HaloPath::automatic,
                                     HaloPath::host_memory,
                                     HaloPath::staged_through_host})
      if (choose_halo_path(false, requested, comm) != HaloPath::host_memory)
        failures << " host entries with " << to_string(requested)
                 << " asked for do not take host memory;";
    for (const HaloPath requested : {HaloPath::nccl, HaloPath::cuda_aware_mpi})
      if (!refused_naming(
            [&]() {
              choose_halo_path(false, requested, comm);
            },
            {to_string(requested), "host memory", "use_device"}))
        failures << " " << to_string(requested)
                 << " for host entries is not refused with a message naming "
                    "the path, host memory and use_device;";

    // A resident matrix gives its request to choose_halo_path().
    {
      const DistributedProblem<2>                     problem(TriaKind::p4est,
                                          Form::laplace,
                                          1,
                                          false);
      DistributedDeviceMatrix<double>::AdditionalData storage;
      storage.halo_path = HaloPath::nccl;
      DistributedDeviceMatrix<double> A;
      if (!refused_naming(
            [&]() {
              A.reinit(problem.adapter, storage);
            },
            {"NCCL", "use_device"}))
        failures << " a host-mode matrix with halo_path = nccl is not "
                    "refused naming NCCL and use_device;";
      storage.halo_path = HaloPath::automatic;
      A.reinit(problem.adapter, storage);
      if (A.get_halo_path() != HaloPath::host_memory)
        failures << " a host-mode matrix with halo_path = automatic takes "
                 << to_string(A.get_halo_path()) << ";";
    }

    // Device entries: what can be decided without a GPU.
    const bool has_device = n_cuda_devices() > 0;
    if (!has_device && !refused_naming(
                         [&]() {
                           choose_halo_path(true, HaloPath::automatic, comm);
                         },
                         {"no CUDA device", "use_device"}))
      failures << " device entries on a rank without a GPU are not refused "
                  "naming the missing device and use_device;";
    if (!nccl_available() && !refused_naming(
                               [&]() {
                                 choose_halo_path(true, HaloPath::nccl, comm);
                               },
                               {"GPU_ASSEMBLY_WITH_NCCL"}))
      failures << " NCCL asked for in a plugin without NCCL is not refused "
                  "naming GPU_ASSEMBLY_WITH_NCCL;";
    if (!mpi_supports_device_memory() &&
        !refused_naming(
          [&]() {
            choose_halo_path(true, HaloPath::cuda_aware_mpi, comm);
          },
          {"CUDA-aware MPI", "MPIX_Query_cuda_support"}))
      failures << " CUDA-aware MPI asked for where MPI has no CUDA support "
                  "is not refused naming MPIX_Query_cuda_support;";
    if (has_device && choose_halo_path(true, HaloPath::automatic, comm) ==
                        HaloPath::cuda_aware_mpi)
      failures << " automatic takes CUDA-aware MPI, which only a request "
                  "may;";

    // The names of the command line and the parameter files.
    const std::pair<const char *, HaloPath> names[] = {
      {"auto", HaloPath::automatic},
      {"host", HaloPath::staged_through_host},
      {"nccl", HaloPath::nccl},
      {"cuda-aware-mpi", HaloPath::cuda_aware_mpi}};
    for (const auto &[name, path] : names)
      if (halo_path_from_string(name) != path)
        failures << " '" << name << "' does not name " << to_string(path)
                 << ";";
    if (!refused_naming(
          []() {
            halo_path_from_string("gpu");
          },
          {"'gpu'", halo_path_choices()}))
      failures << " an unknown path name is not refused naming it and the "
                  "choices;";
    if (to_string(HaloPath::nccl) != "NCCL" ||
        to_string(HaloPath::staged_through_host) != "host staging" ||
        to_string(HaloPath::cuda_aware_mpi) != "CUDA-aware MPI")
      failures << " the paths' printed names are not NCCL, host staging and "
                  "CUDA-aware MPI;";

    return report_on_rank_0(
      std::string("exchange path selection (NCCL in the plugin: ") +
        (nccl_available() ? "yes" : "no") + ", CUDA device: " +
        (has_device ? "yes" : "no") + ", MPI with CUDA support: " +
        (mpi_supports_device_memory() ? "yes" : "no") + ")",
      failures.str());
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  return Testing::exit_code_on_all_ranks([&]() {
    bool passed = check_path_selection();
    for (const bool hanging : {false, true})
      {
        passed &= run_case<2>(TriaKind::p4est, Form::laplace, 2, hanging);
        passed &= run_case<2>(TriaKind::p4est, Form::elasticity, 1, hanging);
        passed &= run_case<3>(TriaKind::p4est, Form::laplace, 1, hanging);
        passed &= run_case<3>(TriaKind::p4est, Form::elasticity, 1, hanging);
      }
    passed &= run_case<2>(TriaKind::fully_distributed, Form::laplace, 1, true);
    passed &=
      run_case<3>(TriaKind::fully_distributed, Form::elasticity, 1, false);
    return passed;
  });
}
