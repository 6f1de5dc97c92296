// SPDX-License-Identifier: LGPL-2.1-or-later
// The hyperelastic app's rollers and prescribed displacements on the GPU
// against its host path: uniaxial extension of a block on three symmetry
// rollers driven by a prescribed displacement (quasi-static: the device
// direct solver, and Jacobi-CG as whole-step graphs and driven from the
// host), and a dynamic bar shaken by a prescribed displacement region on
// roller regions. The nodal states and the reaction forces equal the host
// run's to the solvers' tolerances.

#include <cmath>
#include <sstream>

#include "../hyperelastic_test_utilities.h"
#include "../tests.h"
#include "gpu_tests.h"

namespace
{
  using namespace Testing;

  const std::string quasi_static_extension =
    prm_subsection("Geometry",
                   {"Bar size = 2, 1, 1",
                    "Subdivisions = 8, 4, 4",
                    "Cell type = hexahedra"}) +
    prm_subsection("Boundary conditions",
                   {"Fixed boundary ids = ",
                    "Load region = ",
                    "Load = 0, 0, 0",
                    "Rollers = 0: x; 2: y; 4: z",
                    "Prescribed displacements = 1: x = 0.5*t"}) +
    prm_subsection("Time",
                   {"Mode = quasi-static", "End time = 1", "Time step = 0.1"});

  const std::string dynamic_shake =
    prm_subsection("Geometry",
                   {"Bar size = 4, 1, 1",
                    "Subdivisions = 8, 2, 2",
                    "Cell type = tetrahedra"}) +
    prm_subsection("Boundary conditions",
                   {"Load region = ",
                    "Load = 0, 0, 0",
                    "Roller regions = 0, 0, 0, 4, 1, 0: z",
                    "Prescribed displacement regions = 3.9, 0, 0, 4, 1, 1: "
                    "y = 0.05*sin(pi*t)"}) +
    prm_subsection("Time", {"Time step = 0.1"});

  const std::string tight = prm_subsection("Solver",
                                           {"Newton tolerance = 1e-10",
                                            "CG relative tolerance = 1e-12"});

  struct Result
  {
    NodalStates                                           states;
    std::vector<Hyperelastic::ImplicitSolid::RegionForce> forces;
  };

  Result
  run(const std::string &prm, const std::string &execution, unsigned int n)
  {
    std::ostringstream log;
    const auto solid = run_hyperelastic(prm + tight + "subsection Execution\n" +
                                          execution + "end\n",
                                        n,
                                        log);
    return {by_position(solid->gather_nodal_state()), solid->region_forces()};
  }

  void
  compare(Checks            &checks,
          const Result      &host,
          const Result      &device,
          const std::string &what)
  {
    const NodalDifference d = nodal_difference(host.states, device.states);
    const double          tolerance = 1e-8;
    checks.check(d.all_nodes_found && d.du <= tolerance * d.u_max &&
                   d.dp <= tolerance * std::max(d.p_max, 1e-300) + 1e-300,
                 what + ": nodal states equal the host's (|du| " +
                   scientific(d.du) + " of " + scientific(d.u_max) + ", |dp| " +
                   scientific(d.dp) + " of " + scientific(d.p_max) + ")");
    bool   same_regions = host.forces.size() == device.forces.size();
    double df = 0, f_max = 0;
    for (unsigned int r = 0; same_regions && r < host.forces.size(); ++r)
      {
        f_max = std::max(f_max, host.forces[r].force.norm());
        df =
          std::max(df, (host.forces[r].force - device.forces[r].force).norm());
      }
    checks.check(same_regions && df <= tolerance * f_max,
                 what + ": reaction forces equal the host's (" +
                   scientific(df) + " of " + scientific(f_max) + ")");
  }
} // namespace



int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Checks checks;

  const Result host = run(quasi_static_extension, "  set Device = host\n", 10);
  compare(checks,
          host,
          run(quasi_static_extension,
              "  set Device = gpu\n"
              "  set Precision = double\n",
              10),
          "quasi-static extension, device with auto (direct where cuDSS "
          "is)");
  const std::string jacobi = "subsection Solver\n  set Linear solver = "
                             "cg-jacobi\nend\n";
  compare(checks,
          host,
          run(quasi_static_extension + jacobi,
              "  set Device = gpu\n  set Step graph = true\n",
              10),
          "quasi-static extension, device Jacobi-CG in step graphs");
  compare(checks,
          host,
          run(quasi_static_extension + jacobi,
              "  set Device = gpu\n  set Step graph = false\n",
              10),
          "quasi-static extension, device Jacobi-CG driven from the host");

  const Result dynamic_host = run(dynamic_shake, "  set Device = host\n", 10);
  compare(checks,
          dynamic_host,
          run(dynamic_shake, "  set Device = gpu\n", 10),
          "dynamic shake, device step graphs");
  compare(checks,
          dynamic_host,
          run(dynamic_shake,
              "  set Device = gpu\n  set Step graph = false\n",
              10),
          "dynamic shake, device loop driven from the host");
  return checks.exit_code();
}
