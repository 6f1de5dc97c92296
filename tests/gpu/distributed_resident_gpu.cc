// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The resident distributed classes on the device against their host mode
// (which distributed_resident checks against deal.II and Trilinos), under
// mpirun (select_device_by_node_rank; with more ranks than GPUs, ranks share
// one). For each exchange path available (host staging always; NCCL where
// the plugin has it and every rank its own GPU; CUDA-aware MPI where the MPI
// library reads device memory) and each assembly method:
// - DistributedAssembler into a device DistributedDeviceMatrix equals the
//   host mode to 1e-15 relative (Frobenius) with GlobalNZ, SharedNZ and
//   LocalElem-colored, to 1e-13 with LocalElem-atomic, and a second
//   assemble() repeats the values bit for bit with the methods without
//   atomics (the interface elements assembled first, their rows sent while
//   the interior is assembled), and the exposed exchange time is a part of
//   the exchange time;
// - update_ghost_values() gives exactly the host mode's entries;
// - vmult() equals the host mode's to 1e-14;
// - DistributedJacobiCG's solution equals the host mode's to 1e-8 relative
//   (residual tolerance 1e-10), its iteration count within one;
// - DistributedPreconditionedCG with chebyshev and point_block_jacobi: the
//   solution equals the host mode's to 1e-8 relative, the iteration count
//   within one, Chebyshev's eigenvalue estimate to 1e-10 and the block
//   inverses to 1e-13 (the same bodies, their sums in another order), and
//   a second device solve repeats the first bit for bit;
// - every path other than host staging gives host staging's results bit for
//   bit (the same values travel, added in the same order): the assembled
//   matrix and right-hand side (methods without atomics), the ghost
//   entries, vmult(), and each CG's iteration count, final residual and
//   solution (the same iterates);
// - the path that runs is the one asked for; where the plugin has NCCL but
//   ranks share a GPU (automatic then takes host staging), NCCL asked for
//   is refused with a message that says the ranks share one GPU.
// Which path automatic takes is printed; NCCL runs where each rank has a GPU
// of its own (2 ranks on 2 GPUs, 4 on 4), with NCCL_NVLS_ENABLE=0.
// Exits with 77 (skipped) where a rank finds no CUDA device.

#include <deal.II/base/mpi.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/distributed/device_selection.h>
#include <gpu_assembly/distributed/distributed_assembler.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/distributed_jacobi_cg.h>
#include <gpu_assembly/distributed/distributed_preconditioned_cg.h>

#include <cstring>
#include <iostream>
#include <map>
#include <sstream>

#include "distributed_problems.h"
#include "gpu/gpu_tests.h"
#include "resident_problems.h"

namespace
{
  using namespace Testing;

  constexpr double cg_tolerance = 1e-10;

  // A solve of DistributedPreconditionedCG.
  struct PreconditionedResult
  {
    std::vector<double> solution, block_inverses;
    CGResult            cg;
    double              max_eigenvalue = 0;
    bool                repeats        = false;
  };

  struct HostResult
  {
    std::vector<double>                 values, rhs, ghosted, y, solution;
    DistributedJacobiCG<double>::Result cg;
    PreconditionedResult                chebyshev, block_jacobi;
    // The assembly's exposed exchange time is a part of its exchange time.
    bool exposed_within_exchange = false;
  };

  // Assembly, halo, vmult and CG of one storage mode; the vectors'
  // local entries (owned and ghosts) come back to the host.
  template <int dim>
  void
  run_resident(const DistributedProblem<dim> &problem,
               const bool                     use_device,
               const HaloPath                 requested,
               const AssemblyMethod           method,
               HostResult                    &out,
               bool                          &repeats,
               HaloPath                      &path)
  {
    typename DistributedDeviceMatrix<double>::AdditionalData storage;
    storage.use_device = use_device;
    storage.halo_path  = requested;
    DistributedDeviceMatrix<double> A;
    A.reinit(problem.adapter, storage);
    DistributedDeviceVector<double> b;
    b.reinit(A.get_partitioner(), storage);
    typename DistributedAssembler<dim, double>::AdditionalData data;
    data.use_device    = use_device;
    data.device.method = method;
    DistributedAssembler<dim, double> assembler;
    assembler.reinit(problem.adapter, A, b, data);
    problem.with_kernel([&](const auto &kernel) {
      assembler.assemble(kernel, A, b);
    });
    A.copy_values_to_host(out.values);
    b.copy_to_host(out.rhs);
    problem.with_kernel([&](const auto &kernel) {
      assembler.assemble(kernel, A, b);
    });
    std::vector<double> values, rhs;
    A.copy_values_to_host(values);
    b.copy_to_host(rhs);
    repeats = bitwise_equal(values, out.values, MPI_COMM_WORLD) &&
              bitwise_equal(rhs, out.rhs, MPI_COMM_WORLD);
    const auto &times = assembler.get_times();
    out.exposed_within_exchange =
      times.exposed >= 0 && times.exposed <= times.communication;

    LinearAlgebra::distributed::Vector<double> reference(A.get_partitioner());
    fill_owned(reference);
    DistributedDeviceVector<double> x, y;
    x.reinit(A.get_partitioner(), storage);
    y.reinit(x);
    x.copy_locally_owned_from(reference);
    x.update_ghost_values();
    x.copy_to_host(out.ghosted);
    x.zero_out_ghost_values();
    A.vmult(y, x);
    y.copy_to_host(out.y);
    path = A.get_halo_path() == x.get_halo_path() ? x.get_halo_path() :
                                                    HaloPath::automatic;

    DistributedJacobiCG<double>     cg;
    DistributedDeviceVector<double> solution;
    out.cg = cg.solve(A, solution, b, cg_tolerance, 5000);
    solution.copy_to_host(out.solution);
    // Ghost entries of the solution are not part of the result.
    out.solution.resize(A.m());

    CGControl control;
    control.relative_tolerance = cg_tolerance;
    control.max_iterations     = 5000;
    for (const CGPreconditioner preconditioner :
         {CGPreconditioner::chebyshev, CGPreconditioner::point_block_jacobi})
      {
        PreconditionedResult &result =
          preconditioner == CGPreconditioner::chebyshev ? out.chebyshev :
                                                          out.block_jacobi;
        DistributedPreconditionedCG<double>::AdditionalData parameters;
        parameters.preconditioner = preconditioner;
        DistributedPreconditionedCG<double> preconditioned;
        preconditioned.reinit(problem.adapter, A, parameters);
        DistributedDeviceVector<double> x, again;
        result.cg                 = preconditioned.solve(A, x, b, control);
        const CGResult      rerun = preconditioned.solve(A, again, b, control);
        std::vector<double> repeated;
        x.copy_to_host(result.solution);
        again.copy_to_host(repeated);
        result.solution.resize(A.m());
        repeated.resize(A.m());
        result.repeats =
          bitwise_equal(result.solution, repeated, MPI_COMM_WORLD) &&
          rerun.iterations == result.cg.iterations;
        const auto &solver = preconditioned.get_solver();
        result.max_eigenvalue =
          solver.get_chebyshev().get_schedule().max_eigenvalue;
        if (preconditioner == CGPreconditioner::point_block_jacobi)
          solver.get_point_block_jacobi().copy_inverses_to_host(
            result.block_inverses);
      }
  }

  // The failures of a device PreconditionedResult against the host mode's.
  std::string
  preconditioned_failures(const std::string          &name,
                          const PreconditionedResult &device,
                          const PreconditionedResult &host)
  {
    const MPI_Comm     comm = MPI_COMM_WORLD;
    std::ostringstream failures;
    const double       solution_error =
      relative_difference(device.solution, host.solution, comm);
    if (!device.cg.converged ||
        std::abs(int(device.cg.iterations) - int(host.cg.iterations)) > 1 ||
        !(solution_error < 1e-8))
      failures << " the device CG with " << name << " (" << device.cg.iterations
               << " iterations) does not match the "
               << "host mode's (" << host.cg.iterations << ") to 1e-8 ("
               << solution_error << ");";
    if (!device.repeats)
      failures << " a second device solve with " << name
               << " gives another solution;";
    if (!(std::abs(device.max_eigenvalue - host.max_eigenvalue) <=
          1e-10 * std::abs(host.max_eigenvalue)))
      failures << " the device eigenvalue estimate differs from the host "
                  "mode's;";
    if (!(relative_difference(device.block_inverses,
                              host.block_inverses,
                              comm) <= 1e-13))
      failures << " the device block inverses differ from the host mode's "
                  "by more than 1e-13;";
    return failures.str();
  }



  // The failures of the results of an exchange path against host
  // staging's, which must be equal bit for bit: the same values travel and
  // are added in the same order. The assembly itself repeats bit for bit
  // only with @p deterministic methods (no atomics).
  std::string
  path_failures(const HostResult &path,
                const HostResult &staged,
                const bool        deterministic)
  {
    const MPI_Comm     comm = MPI_COMM_WORLD;
    std::ostringstream failures;
    if (deterministic && !(bitwise_equal(path.values, staged.values, comm) &&
                           bitwise_equal(path.rhs, staged.rhs, comm)))
      failures << " the assembled matrix or right-hand side differs from "
                  "host staging's;";
    if (!bitwise_equal(path.ghosted, staged.ghosted, comm))
      failures << " update_ghost_values() differs from host staging's;";
    if (!deterministic)
      return failures.str();
    if (!bitwise_equal(path.y, staged.y, comm))
      failures << " vmult() differs from host staging's;";
    const auto same_iterates = [&](const std::string         &name,
                                   const CGResult            &a,
                                   const CGResult            &b,
                                   const std::vector<double> &x,
                                   const std::vector<double> &y) {
      if (a.iterations != b.iterations ||
          std::memcmp(&a.final_residual, &b.final_residual, sizeof(double)) !=
            0 ||
          !bitwise_equal(x, y, comm))
        failures << " " << name << " (" << a.iterations
                 << " iterations) does not repeat host staging's iterates ("
                 << b.iterations << " iterations, the same final residual "
                 << "and solution bit for bit);";
    };
    same_iterates("DistributedJacobiCG",
                  path.cg,
                  staged.cg,
                  path.solution,
                  staged.solution);
    same_iterates("Chebyshev-CG",
                  path.chebyshev.cg,
                  staged.chebyshev.cg,
                  path.chebyshev.solution,
                  staged.chebyshev.solution);
    same_iterates("block-Jacobi-CG",
                  path.block_jacobi.cg,
                  staged.block_jacobi.cg,
                  path.block_jacobi.solution,
                  staged.block_jacobi.solution);
    return failures.str();
  }



  template <int dim>
  bool
  run_case(const Form form, const unsigned int degree)
  {
    const DistributedProblem<dim> problem(TriaKind::p4est, form, degree, true);
    const MPI_Comm                comm = MPI_COMM_WORLD;
    HostResult                    host;
    bool                          host_repeats = false;
    HaloPath                      host_path;
    run_resident(problem,
                 false,
                 HaloPath::automatic,
                 AssemblyMethod::global_nz,
                 host,
                 host_repeats,
                 host_path);

    // Host staging first: the other paths are compared with its results.
    bool                  passed = true;
    std::vector<HaloPath> paths  = {HaloPath::staged_through_host};
    const HaloPath        automatic =
      choose_halo_path(true, HaloPath::automatic, comm);
    if (automatic == HaloPath::nccl)
      paths.push_back(HaloPath::nccl);
    if (mpi_supports_device_memory())
      paths.push_back(HaloPath::cuda_aware_mpi);
    if (Utilities::MPI::this_mpi_process(comm) == 0)
      std::cout << "automatic exchange path: " << to_string(automatic)
                << " (NCCL in the plugin: " << (nccl_available() ? "yes" : "no")
                << ")" << std::endl;
    if (nccl_available() && automatic != HaloPath::nccl)
      {
        // Ranks share a GPU: NCCL asked for is refused, saying so.
        bool refused = false;
        try
          {
            choose_halo_path(true, HaloPath::nccl, comm);
          }
        catch (const std::exception &exception)
          {
            refused = std::string(exception.what()).find("share one GPU") !=
                      std::string::npos;
          }
        refused = Utilities::MPI::min(refused ? 1 : 0, comm) == 1;
        passed  = passed && refused;
        if (Utilities::MPI::this_mpi_process(comm) == 0)
          std::cout << "NCCL asked for with ranks sharing a GPU: "
                    << (refused ? "refused naming the shared GPU" :
                                  "FAILED: not refused naming the shared GPU")
                    << std::endl;
      }
    std::map<AssemblyMethod, HostResult> staged;
    for (const HaloPath requested : paths)
      for (const AssemblyMethod method : {AssemblyMethod::global_nz,
                                          AssemblyMethod::shared_nz,
                                          AssemblyMethod::local_elem_colored,
                                          AssemblyMethod::local_elem_atomic})
        {
          HostResult device;
          bool       repeats = false;
          HaloPath   path;
          run_resident(problem, true, requested, method, device, repeats, path);
          const bool   atomic = method == AssemblyMethod::local_elem_atomic;
          const double assembly_tolerance = atomic ? 1e-13 : 1e-15;
          const double matrix_error =
            relative_difference(device.values, host.values, comm);
          const double rhs_error =
            relative_difference(device.rhs, host.rhs, comm);
          const bool bitwise =
            bitwise_equal(device.values, host.values, comm) &&
            bitwise_equal(device.rhs, host.rhs, comm);
          const bool ghosts_equal =
            bitwise_equal(device.ghosted, host.ghosted, comm);
          const double vmult_error =
            relative_difference(device.y, host.y, comm);
          const double solution_error =
            relative_difference(device.solution, host.solution, comm);
          const int iteration_difference =
            int(device.cg.iterations) - int(host.cg.iterations);
          const HaloPath expected = requested;

          std::ostringstream failures;
          if (!(matrix_error <= assembly_tolerance &&
                rhs_error <= assembly_tolerance))
            failures << " the device assembly differs from the host mode's "
                        "by more than "
                     << assembly_tolerance << ";";
          if (!atomic && !repeats)
            failures << " a second assemble() gives other values;";
          if (!device.exposed_within_exchange)
            failures << " the exposed exchange time is not a part of the "
                        "exchange time;";
          if (!ghosts_equal)
            failures << " update_ghost_values() differs from the host mode;";
          if (!(vmult_error < 1e-14))
            failures << " vmult() differs from the host mode's by more than "
                        "1e-14;";
          if (!device.cg.converged || std::abs(iteration_difference) > 1 ||
              !(solution_error < 1e-8))
            failures << " the device CG (" << device.cg.iterations
                     << " iterations) does not match the host CG ("
                     << host.cg.iterations << ") to 1e-8;";
          failures << preconditioned_failures("chebyshev",
                                              device.chebyshev,
                                              host.chebyshev)
                   << preconditioned_failures("point_block_jacobi",
                                              device.block_jacobi,
                                              host.block_jacobi);
          if (path != expected)
            failures << " the halo path is " << to_string(path) << ", expected "
                     << to_string(expected) << ";";
          if (requested == HaloPath::staged_through_host)
            staged[method] = device;
          else
            failures << path_failures(device, staged[method], !atomic);
          const bool ok = failures.str().empty();
          passed        = passed && ok;
          if (Utilities::MPI::this_mpi_process(comm) == 0)
            std::cout << dim << "D " << to_string(form) << " Q" << degree
                      << ", hanging nodes, " << problem.dof_handler.n_dofs()
                      << " DoFs, " << to_string(method) << ", halo "
                      << to_string(path) << ": assembly " << matrix_error
                      << " (matrix), " << rhs_error << " (rhs)"
                      << (bitwise ? " bitwise equal" : "")
                      << (repeats ? ", repeats bitwise" : "") << "; vmult "
                      << vmult_error << "; CG " << device.cg.iterations
                      << " iterations (host " << host.cg.iterations
                      << "), solution " << solution_error << "; Chebyshev-CG "
                      << device.chebyshev.cg.iterations << " (host "
                      << host.chebyshev.cg.iterations << "), block-Jacobi-CG "
                      << device.block_jacobi.cg.iterations << " (host "
                      << host.block_jacobi.cg.iterations << ")"
                      << (ok ? "" : "; FAILED:" + failures.str()) << std::endl;
        }
    return Utilities::MPI::min(passed ? 1 : 0, comm) == 1;
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  const int device = select_device_by_node_rank(MPI_COMM_WORLD);
  if (Utilities::MPI::min(device, MPI_COMM_WORLD) < 0)
    return Testing::no_device_exit_code(
      Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0);
  if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0)
    std::cout << describe_execution_path() << "; "
              << Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD)
              << " ranks; MPI reads device memory: "
              << (mpi_supports_device_memory() ? "yes" : "no") << std::endl;

  return Testing::exit_code_on_all_ranks([&]() {
    bool passed = true;
    passed &= run_case<2>(Form::laplace, 2);
    passed &= run_case<3>(Form::elasticity, 1);
    passed &= run_case<3>(Form::laplace, 1);
    return passed;
  });
}
