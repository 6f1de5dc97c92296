// SPDX-License-Identifier: LGPL-2.1-or-later
// hyperelastic: real-time nonlinear elastodynamics of a compressible
// neo-Hookean solid (GPU Gems chapter, Sec. 16.4), every stage on the GPU:
// GlobalNZ or SharedNZ assembly of the tangent and residual, the linear
// solve ('Solver/Linear solver': Jacobi-CG, the cuDSS direct solver or a
// Chebyshev- or block-Jacobi-preconditioned CG), Newton and midpoint-rule
// time updates. The host path runs the same steps on the CPU cores.
//
// Usage: hyperelastic [parameter_file.prm]
//        hyperelastic --print-parameters   (a documented default file)
//        mpirun -np R hyperelastic [parameter_file.prm]
// The implicit integrator (ImplicitSolid) runs on one process, or on
// several MPI ranks (each rank its part of the mesh, on its GPU or on the
// host), as it does on one process with 'Execution/Distributed solver on
// one process'. The explicit integrator runs on one process only.

#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/parameter_handler.h>

#include <gpu_assembly/base/device.h>

#include <fstream>
#include <iostream>

#include "explicit_solid.h"
#include "implicit_solid.h"
#include "parameters.h"

int
main(int argc, char *argv[])
{
  using namespace dealii;
  unsigned int n_ranks = 1, rank = 0;
  try
    {
      Utilities::MPI::MPI_InitFinalize mpi(argc, argv);
      n_ranks = Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD);
      rank    = Utilities::MPI::this_mpi_process(MPI_COMM_WORLD);
      ParameterHandler prm;
      Hyperelastic::Parameters::declare_parameters(prm);
      const std::string argument = argc > 1 ? argv[1] : "";
      if (argument == "--print-parameters" || argument == "--help" ||
          argument == "-h")
        {
          if (rank != 0)
            return 0;
          if (argument != "--print-parameters")
            std::cout << "Usage: " << argv[0]
                      << " [parameter_file.prm | --print-parameters]\n"
                      << "Without a file the built-in bar runs with the "
                         "defaults below.\n\n";
          prm.print_parameters(std::cout, ParameterHandler::Text);
          return 0;
        }
      if (argc > 2)
        {
          if (rank == 0)
            std::cerr << "Usage: " << argv[0]
                      << " [parameter_file.prm | --print-parameters]"
                      << std::endl;
          return 1;
        }
      if (!argument.empty())
        {
          std::ifstream file(argument);
          AssertThrow(file,
                      ExcMessage("Cannot open the parameter file '" + argument +
                                 "'."));
          prm.parse_input(argument);
        }
      Hyperelastic::Parameters parameters;
      parameters.parse_parameters(prm);
      parameters.check_device_entries(prm, GPUAssembly::n_cuda_devices() > 0);

      if (parameters.explicit_dynamics.is_explicit())
        {
          if (n_ranks > 1)
            {
              if (rank == 0)
                std::cerr << "'Time/Time integration' = explicit runs as one "
                             "process, but hyperelastic was started on "
                          << n_ranks << " MPI processes (mpirun -np " << n_ranks
                          << "). Run it without mpirun, or with -np 1 (it "
                             "uses the cores of its machine through threads "
                             "and the GPU), or set 'Time integration' to "
                             "implicit, which runs on several ranks."
                          << std::endl;
              return 1;
            }
          Hyperelastic::ExplicitSolid solid(parameters);
          solid.run();
        }
      else if (n_ranks > 1 || parameters.execution.distributed_on_one_process)
        {
          Hyperelastic::ImplicitSolid solid(parameters, MPI_COMM_WORLD);
          solid.run();
        }
      else
        {
          // One process on the serial path: the MPI path's linear algebra
          // is not used. (A program that gives ImplicitSolid a communicator
          // runs the MPI path on one process, so the check is here.)
          const std::string entry = "Execution/Distributed linear algebra";
          AssertThrow(parameters.changed_entries.count(entry) == 0,
                      ExcMessage(
                        "'" + entry + "' = '" +
                        parameters.execution.distributed_linear_algebra +
                        "' is not used: it chooses the linear algebra of the "
                        "MPI path, and this run is one process without "
                        "'Execution/Distributed solver on one process'. "
                        "Remove the entry, or run under mpirun."));
          Hyperelastic::ImplicitSolid solid(parameters);
          solid.run();
        }
    }
  catch (std::exception &exc)
    {
      // Under mpirun every rank reports (the checks fail on all of them
      // alike; a stop names the step and element on each).
      std::cerr << "\n----------------------------------------------------\n"
                << "hyperelastic stopped with an error"
                << (n_ranks > 1 ? " (MPI rank " + std::to_string(rank) +
                                    " of " + std::to_string(n_ranks) + ")" :
                                  std::string())
                << ":\n"
                << exc.what() << "\n"
                << "----------------------------------------------------"
                << std::endl;
      return 1;
    }
  catch (...)
    {
      std::cerr << "hyperelastic stopped with an unknown exception."
                << std::endl;
      return 1;
    }
  return 0;
}
