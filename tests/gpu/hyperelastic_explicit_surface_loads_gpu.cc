// SPDX-License-Identifier: LGPL-2.1-or-later
// The explicit (TLED) integrator's surface loads on the GPU against its host
// path: a bar on rollers under a dead traction with its own time function
// and a follower pressure on two faces, stepped in batches that cut the
// CUDA graphs' launches (7 steps per graph, and a remainder), with the plan
// and the fused nodal sums. In double the GPU run equals the host run to
// 1e-13 of the largest displacement: the element forces, the pressure's
// face forces and their fixed-order gathers are the same arithmetic on both
// sides, compiled without fused multiply-add (-fmad=false, and
// -ffp-contract=off on the host), so only a compiler's different but legal
// evaluation of the same expressions could separate them; the check prints
// whether they are bitwise equal. Two GPU runs are bitwise equal (no
// atomics). In float the run stays within 1e-3 of the host's double run.

#include <algorithm>
#include <cmath>
#include <sstream>

#include "../hyperelastic_test_utilities.h"
#include "../tests.h"
#include "explicit_solid.h"
#include "gpu_tests.h"

namespace
{
  using namespace Testing;

  const std::string bar =
    prm_subsection("Geometry",
                   {"Bar size = 2, 1, 1",
                    "Subdivisions = 8, 4, 4",
                    "Cell type = hexahedra"}) +
    prm_subsection("Boundary conditions",
                   {"Fixed boundary ids = ",
                    "Load region = ",
                    "Load = 0, 0, 0",
                    "Rollers = 0: x; 2: y; 4: z"}) +
    prm_subsection("Time", {"Time integration = explicit"}) +
    prm_subsection("Surface loads",
                   {"Traction boundary ids = 1",
                    "Traction = 0.3, 0.1, 0.05",
                    "Traction time function = min(1, 2*t)",
                    "Pressure boundary ids = 3, 5",
                    "Pressure = 0.2",
                    "Pressure time function = sin(t)"});

  /// The displacement after 100 + 57 steps on @p device with @p precision
  /// and @p nodal_sum.
  std::vector<double>
  run(const std::string &device,
      const std::string &precision,
      const std::string &nodal_sum)
  {
    std::ostringstream          log;
    Hyperelastic::ExplicitSolid solid(
      hyperelastic_parameters(
        bar +
        prm_subsection("Execution",
                       device == "gpu" ?
                         std::vector<std::string>{"Device = gpu",
                                                  "Precision = " + precision} :
                         std::vector<std::string>{"Device = host"}) +
        prm_subsection("Explicit dynamics",
                       device == "gpu" ?
                         std::vector<std::string>{"Damping = 0.5",
                                                  "Steps per graph = 7",
                                                  "Nodal sum = " + nodal_sum} :
                         std::vector<std::string>{"Damping = 0.5"})),
      log);
    solid.setup();
    solid.advance(100);
    solid.advance(57);
    return solid.displacement();
  }

  double
  largest(const std::vector<double> &u)
  {
    double m = 0;
    for (const double v : u)
      m = std::max(m, std::abs(v));
    return m;
  }

  double
  largest_difference(const std::vector<double> &a, const std::vector<double> &b)
  {
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      m = std::max(m, std::abs(a[i] - b[i]));
    return m;
  }
} // namespace



int
main()
{
  if (!cuda_device_present())
    return no_device_exit_code();
  Checks checks;

  const std::vector<double> host = run("host", "double", "plan");
  const double              size = largest(host);
  checks.check(size > 1e-2,
               "the host run moves the bar (largest |u| " + scientific(size) +
                 " > 1e-2)");
  for (const std::string sum : {"plan", "fused"})
    {
      const std::vector<double> gpu        = run("gpu", "double", sum);
      const double              difference = largest_difference(gpu, host);
      std::cout << "double, " << sum << ": largest |u_gpu - u_host| "
                << scientific(difference) << " of largest |u| "
                << scientific(size) << (gpu == host ? ", bitwise equal" : "")
                << std::endl;
      checks.check(gpu.size() == host.size() && difference <= 1e-13 * size,
                   "double, nodal sum " + sum +
                     ": the GPU run equals the host run after 157 steps to "
                     "1e-13 of the largest displacement (difference " +
                     scientific(difference) + ")");
      checks.check(run("gpu", "double", sum) == gpu,
                   "double, nodal sum " + sum +
                     ": two GPU runs are bitwise equal");
    }
  const std::vector<double> gpu_float  = run("gpu", "float", "plan");
  const double              difference = largest_difference(gpu_float, host);
  checks.check(difference <= 1e-3 * size,
               "float: the GPU run stays within 1e-3 of the host's double "
               "run (difference " +
                 scientific(difference) + " of largest |u| " +
                 scientific(size) + ")");
  checks.check(run("gpu", "float", "plan") == gpu_float,
               "float: two GPU runs are bitwise equal");
  return checks.exit_code();
}
