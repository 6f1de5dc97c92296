// SPDX-License-Identifier: LGPL-2.1-or-later
//
// MPI-distributed assembly on the device: every rank picks its GPU by
// node-local rank (with more ranks than GPUs, ranks share one) and assembles
// its cells with each GPU method; the Trilinos matrix and right-hand side
// after the exchange must equal those of the host path to 1e-13 relative.
// Run on 2 ranks (ctest does); exits with 77 (skipped) where a rank has no
// CUDA device.

#include <deal.II/base/function_lib.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/distributed/device_selection.h>
#include <gpu_assembly/distributed/distributed_assembler.h>

#include <iostream>

#include "dealii_reference.h"
#include "distributed_problems.h"
#include "gpu/gpu_tests.h"
#include "resident_problems.h"

namespace
{
  using namespace Testing;

  constexpr double tolerance = 1e-13;

  template <int dim>
  bool
  run_case(const Form form, const unsigned int degree)
  {
    // The host path, the reference of every method.
    const DistributedProblem<dim> problem(TriaKind::p4est,
                                          form,
                                          degree,
                                          true,
                                          false);
    const IndexSet               &owned = problem.adapter.locally_owned_dofs();
    const TrilinosTarget<dim>     host(problem);

    bool passed = true;
    for (const GPUAssembly::AssemblyMethod method :
         {GPUAssembly::AssemblyMethod::global_nz,
          GPUAssembly::AssemblyMethod::shared_nz,
          GPUAssembly::AssemblyMethod::local_elem_atomic,
          GPUAssembly::AssemblyMethod::local_elem_colored})
      {
        TrilinosWrappers::SparseMatrix matrix;
        matrix.reinit(owned, owned, host.dsp, MPI_COMM_WORLD);
        TrilinosWrappers::MPI::Vector rhs(owned, MPI_COMM_WORLD);
        typename GPUAssembly::DistributedAssembler<dim, double>::AdditionalData
          data;
        data.use_device     = true;
        data.device.method  = method;
        data.n_nodal_fields = 0;
        GPUAssembly::DistributedAssembler<dim, double> assembler;
        assembler.reinit(problem.adapter, matrix, rhs, data);
        // Twice: the second assembly reuses the plan and the device data.
        for (unsigned int repetition = 0; repetition < 2; ++repetition)
          problem.with_kernel([&](const auto &kernel) {
            assembler.assemble(kernel, matrix, rhs);
          });
        const double matrix_error = matrix_difference(host.matrix, matrix);
        TrilinosWrappers::MPI::Vector difference = rhs;
        difference -= host.rhs;
        const double rhs_error = difference.l2_norm() / host.rhs.l2_norm();
        const bool   ok = matrix_error < tolerance && rhs_error < tolerance;
        passed          = passed && ok;
        if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0)
          std::cout << dim << "D " << to_string(form) << " Q" << degree
                    << ", hanging nodes, " << problem.dof_handler.n_dofs()
                    << " DoFs, " << GPUAssembly::to_string(method)
                    << ": relative difference to the host path " << matrix_error
                    << " (matrix), " << rhs_error << " (rhs)"
                    << (ok ? "" :
                             "; FAILED: the device path differs from the "
                             "host path by more than 1e-13")
                    << std::endl;
      }
    return passed;
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  const int device = GPUAssembly::select_device_by_node_rank(MPI_COMM_WORLD);
  if (Utilities::MPI::min(device, MPI_COMM_WORLD) < 0)
    return Testing::no_device_exit_code(
      Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0);
  const std::vector<int> devices =
    Utilities::MPI::all_gather(MPI_COMM_WORLD, device);
  if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0)
    {
      std::cout << GPUAssembly::describe_execution_path() << std::endl;
      for (unsigned int rank = 0; rank < devices.size(); ++rank)
        std::cout << "rank " << rank << ": GPU " << devices[rank] << std::endl;
    }

  return Testing::exit_code_on_all_ranks([&]() {
    bool passed = true;
    passed &= run_case<2>(Form::laplace, 2);
    passed &= run_case<2>(Form::elasticity, 1);
    passed &= run_case<3>(Form::laplace, 1);
    passed &= run_case<3>(Form::elasticity, 1);
    return passed;
  });
}
