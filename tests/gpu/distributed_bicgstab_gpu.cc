// SPDX-License-Identifier: LGPL-2.1-or-later
//
// DistributedJacobiBiCGStab on the device against its host mode (which
// distributed_bicgstab checks against deal.II's SolverBicgstab), under
// mpirun (select_device_by_node_rank; with more ranks than GPUs, ranks
// share one), on the non-symmetric convection-diffusion matrix of
// convection_diffusion.h. For each exchange path available (host staging
// always; NCCL where automatic takes it, every rank with a GPU of its own;
// CUDA-aware MPI where the MPI library reads device memory):
// - the device solution equals the host mode's to 1e-8 relative (both to a
//   residual of 1e-12; the same bodies, their sums in another order), the
//   iteration count within 10 % (plus 2), and the device solve converges;
// - a second device solve repeats the first bit for bit;
// - every path other than host staging gives host staging's iteration
//   count, final residual and solution bit for bit (the same values travel
//   and are added in the same order);
// - in float the device solve converges to 1e-5 and equals the double
//   host solution to 1e-4.
// Exits with 77 (skipped) where a rank finds no CUDA device.

#include <deal.II/base/mpi.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/distributed/device_selection.h>
#include <gpu_assembly/distributed/distributed_jacobi_bicgstab.h>

#include <cstring>
#include <iostream>
#include <sstream>

#include "convection_diffusion.h"
#include "distributed_problems.h"
#include "gpu/gpu_tests.h"
#include "resident_problems.h"
#include "tests.h"

namespace
{
  using namespace Testing;

  constexpr double solver_tolerance = 1e-12;

  struct Solve
  {
    CGResult            result;
    std::vector<double> solution;
    bool                repeats = false;
    HaloPath            path    = HaloPath::automatic;
  };

  // Two solves of @p Number with the storage and the path asked for.
  template <typename Number>
  Solve
  solve(const ConvectionDiffusion &problem,
        const bool                 use_device,
        const HaloPath             requested,
        const double               tolerance)
  {
    typename DistributedDeviceMatrix<Number>::AdditionalData storage;
    storage.use_device = use_device;
    storage.halo_path  = requested;
    DistributedDeviceMatrix<Number> A;
    DistributedDeviceVector<Number> rhs, x;
    problem.make_resident_system(A, rhs, storage);

    CGControl control;
    control.relative_tolerance = tolerance;
    control.max_iterations     = 10000;
    DistributedJacobiBiCGStab<Number> bicgstab;
    Solve                             out;
    out.result = bicgstab.solve(A, x, rhs, control);
    std::vector<Number> first, second;
    x.copy_to_host(first);
    first.resize(A.m());
    const CGResult again = bicgstab.solve(A, x, rhs, control);
    x.copy_to_host(second);
    second.resize(A.m());
    out.repeats =
      again.iterations == out.result.iterations &&
      again.final_residual == out.result.final_residual &&
      std::memcmp(first.data(), second.data(), first.size() * sizeof(Number)) ==
        0;
    out.repeats = Utilities::MPI::min(out.repeats ? 1 : 0, MPI_COMM_WORLD) == 1;
    out.solution.assign(first.begin(), first.end());
    out.path = A.get_halo_path();
    return out;
  }



  bool
  run_case(const unsigned int n, const double peclet)
  {
    const MPI_Comm            comm = MPI_COMM_WORLD;
    const ConvectionDiffusion problem(n, peclet, comm);
    const Solve               host =
      solve<double>(problem, false, HaloPath::automatic, solver_tolerance);

    std::vector<HaloPath> paths = {HaloPath::staged_through_host};
    if (choose_halo_path(true, HaloPath::automatic, comm) == HaloPath::nccl)
      paths.push_back(HaloPath::nccl);
    if (mpi_supports_device_memory())
      paths.push_back(HaloPath::cuda_aware_mpi);

    bool  passed = true;
    Solve staged;
    for (const HaloPath requested : paths)
      {
        const Solve device =
          solve<double>(problem, true, requested, solver_tolerance);
        std::ostringstream failures, report;
        const double       error =
          relative_difference(device.solution, host.solution, comm);
        const unsigned int d = device.result.iterations,
                           h = host.result.iterations;
        report << n * n << " unknowns, Peclet " << peclet << ", path "
               << to_string(device.path) << ": device " << d
               << " iterations (host " << h << "), |x_device - x_host| / "
               << "|x_host| " << scientific(error)
               << ", repeats bit for bit: " << (device.repeats ? "yes" : "no");
        if (device.path != requested)
          failures << " the path " << to_string(requested) << " was asked for, "
                   << to_string(device.path) << " ran;";
        if (!device.result.converged)
          failures << " the device solve did not converge;";
        if (!(error <= 1e-8))
          failures << " the device solution differs from the host mode's "
                      "by "
                   << error << " > 1e-8;";
        if (!(d <= h + h / 10 + 2 && h <= d + d / 10 + 2))
          failures << " the iteration counts " << d << " (device) and " << h
                   << " (host) differ by more than 10 % + 2;";
        if (!device.repeats)
          failures << " a second device solve does not repeat the first bit "
                      "for bit;";
        if (requested == HaloPath::staged_through_host)
          staged = device;
        else
          {
            const bool same =
              device.result.iterations == staged.result.iterations &&
              device.result.final_residual == staged.result.final_residual &&
              bitwise_equal(device.solution, staged.solution, comm);
            report << ", equal to host staging bit for bit: "
                   << (same ? "yes" : "no");
            if (!same)
              failures << " the solve differs from host staging's (the same "
                          "values must travel and be added in the same "
                          "order);";
          }
        passed = report_on_rank_0(report.str(), failures.str()) && passed;
      }

    const Solve single = solve<float>(problem, true, HaloPath::automatic, 1e-5);
    const double float_error =
      relative_difference(single.solution, host.solution, comm);
    std::ostringstream failures, report;
    report << n * n << " unknowns, Peclet " << peclet << ", float on the "
           << "device: " << single.result.iterations << " iterations, error "
           << scientific(float_error);
    if (!single.result.converged || !(float_error <= 1e-4))
      failures << " float BiCGStab: converged " << single.result.converged
               << ", error " << float_error << " > 1e-4;";
    return report_on_rank_0(report.str(), failures.str()) && passed;
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
    bool passed = run_case(24, 2.);
    passed &= run_case(64, 0.5);
    return passed;
  });
}
