// SPDX-License-Identifier: LGPL-2.1-or-later
// wave2d: explicit elastic waves on unstructured triangle (or quadrilateral)
// meshes, the central-difference scheme of Pogo (Huthwaite 2014) on the GPU
// or the host. Runs a built-in plate with a hole when given no file.
//
// Usage: wave2d [parameter_file.prm]
//        wave2d --print-parameters   (a complete, documented default file)

#include "../common/app_utilities.h"
#include "parameters.h"
#include "simulation.h"

int
main(int argc, char **argv)
{
  return AppUtilities::run_one_process_app<Wave2D::Parameters>(
    argc,
    argv,
    "wave2d",
    "Without a file, the defaults below are used: a steel plate with a "
    "hole, a 2 MHz tone burst.",
    [](const Wave2D::Parameters &parameters) {
      Wave2D::Simulation(parameters).run();
    });
}
