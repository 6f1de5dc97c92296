// SPDX-License-Identifier: LGPL-2.1-or-later
// wave2d: explicit elastic waves on unstructured triangle (or quadrilateral)
// meshes, the central-difference scheme of Pogo (Huthwaite 2014) on the GPU
// or the host. Runs a built-in plate with a hole when given no file.
//
// Usage: wave2d [parameter_file.prm]
//        wave2d --print-parameters   (a complete, documented default file)

#include <deal.II/base/mpi.h>
#include <deal.II/base/parameter_handler.h>

#include <iostream>

#include "../common/app_utilities.h"
#include "parameters.h"
#include "simulation.h"

int
main(int argc, char **argv)
{
  using namespace dealii;
  try
    {
      Utilities::MPI::MPI_InitFinalize mpi(argc, argv);
      if (!AppUtilities::refuse_several_processes("wave2d"))
        return 1;
      ParameterHandler prm;
      Wave2D::Parameters::declare_parameters(prm);
      const std::string argument = argc > 1 ? argv[1] : "";
      if (argument == "--print-parameters" || argument == "--help" ||
          argument == "-h")
        {
          if (argument != "--print-parameters")
            std::cout << "Usage: " << argv[0]
                      << " [parameter_file.prm | --print-parameters]\n"
                         "Without a file, the defaults below are used: a "
                         "steel plate with a hole, a 2 MHz tone burst.\n\n";
          prm.print_parameters(std::cout, ParameterHandler::PRM);
          return 0;
        }
      if (!argument.empty())
        prm.parse_input(argument);
      Wave2D::Parameters parameters;
      parameters.parse_parameters(prm);
      Wave2D::Simulation(parameters).run();
    }
  catch (std::exception &exc)
    {
      std::cerr << "\n----------------------------------------------------\n"
                << "wave2d stopped with an error:\n"
                << exc.what() << "\nAborting."
                << "\n----------------------------------------------------"
                << std::endl;
      return 1;
    }
  catch (...)
    {
      std::cerr << "wave2d stopped with an unknown exception." << std::endl;
      return 1;
    }
  return 0;
}
