// SPDX-License-Identifier: LGPL-2.1-or-later
// hyperelastic: real-time nonlinear elastodynamics of a compressible
// neo-Hookean solid (GPU Gems chapter, Sec. 16.4), every stage on the GPU:
// GlobalNZ or SharedNZ assembly of the tangent and residual, Jacobi-CG,
// Newton and midpoint-rule time updates. The host path runs the same steps
// on the CPU cores.
//
// Usage: hyperelastic [parameter_file.prm]
//        hyperelastic --print-parameters   (a documented default file)

#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/parameter_handler.h>

#include <fstream>
#include <iostream>

#include "../common/app_utilities.h"
#include "explicit_solid.h"
#include "hyperelastic_solid.h"
#include "parameters.h"

int
main(int argc, char *argv[])
{
  using namespace dealii;
  try
    {
      Utilities::MPI::MPI_InitFinalize mpi(argc, argv);
      if (!AppUtilities::refuse_several_processes("hyperelastic"))
        return 1;
      ParameterHandler prm;
      Hyperelastic::Parameters::declare_parameters(prm);
      const std::string argument = argc > 1 ? argv[1] : "";
      if (argument == "--print-parameters" || argument == "--help" ||
          argument == "-h")
        {
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

      if (parameters.explicit_dynamics.is_explicit())
        {
          Hyperelastic::ExplicitSolid solid(parameters);
          solid.run();
        }
      else
        {
          Hyperelastic::HyperelasticSolid solid(parameters);
          solid.run();
        }
    }
  catch (std::exception &exc)
    {
      std::cerr << "\n----------------------------------------------------\n"
                << "hyperelastic stopped with an error:\n"
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
