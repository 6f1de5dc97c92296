// SPDX-License-Identifier: LGPL-2.1-or-later
// The pattern and K(e, d1, d2) built on the GPU against the adapter's
// row-by-row host build, array by array, on meshes with hanging nodes,
// periodicity, chained lines and tetrahedra (and the benchmark's cube with
// a refined octant at 16^3 cells), with and without keep_constrained_dofs;
// and pattern_construction automatic choosing the device.

#include <gpu_assembly/adapter/dof_handler_adapter.h>

#include "../pattern_cases.h"
#include "gpu_tests.h"

using namespace dealii;
using namespace GPUAssembly;

template <int dim>
void
check_device_build(const std::string               &name,
                   const Testing::TestProblem<dim> &problem,
                   Testing::Checks                 &checks)
{
  Testing::for_each_keep_constrained_dofs<dim>(
    name,
    [&](typename DoFHandlerAdapter<dim>::AdditionalData data,
        const std::string                              &what) {
      data.pattern_construction         = PatternConstruction::host;
      const DoFHandlerAdapter<dim> host = Testing::make_adapter(problem, data);
      data.pattern_construction         = PatternConstruction::device;
      const DoFHandlerAdapter<dim> device =
        Testing::make_adapter(problem, data);
      checks.check(device.pattern_built_on() == PatternConstruction::device,
                   what + ": pattern_construction device builds on the device");
      checks.check(host.get_arrays().location == device.get_arrays().location,
                   what + ": L(e, d) is the same for both builds");
      Testing::check_same_pattern(checks,
                                  what + ", built on the GPU",
                                  host.get_arrays(),
                                  device.get_arrays());
    });
}



int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks checks;
  Testing::for_each_pattern_case(true,
                                 [&](const std::string &name,
                                     const auto        &problem) {
                                   check_device_build(name, problem, checks);
                                 });

  Testing::TestProblem<3> problem;
  Testing::setup_refined_octant(problem, 4);
  DoFHandlerAdapter<3>::AdditionalData data;
  data.pattern_construction            = PatternConstruction::automatic;
  const DoFHandlerAdapter<3> automatic = Testing::make_adapter(problem, data);
  checks.check(automatic.pattern_built_on() == PatternConstruction::device,
               "pattern_construction automatic builds on the device where "
               "one is present");
  return checks.exit_code();
}
