// SPDX-License-Identifier: LGPL-2.1-or-later
// The hyperelastic app's surface loads on the device backend against its
// host path: the block under a dead traction on a distorted mesh, the
// cylinder under a follower pressure (cuDSS LU, the load stiffness being
// non-symmetric), quasi-static and dynamic, reach the host's states to the
// solver's tolerance; and two device runs are bitwise equal (the per-face
// buffers are gathered in a fixed order, without atomics).

#include <cmath>
#include <sstream>

#include "../surface_load_problems.h"
#include "../tests.h"
#include "gpu_tests.h"

namespace
{
  using namespace Testing;

  // Largest distance between the current positions of the same nodes.
  double
  largest_difference(const std::vector<std::pair<Point<3>, Point<3>>> &a,
                     const std::vector<std::pair<Point<3>, Point<3>>> &b)
  {
    double difference = a.size() == b.size() ? 0. : 1e300;
    for (std::size_t n = 0; n < std::min(a.size(), b.size()); ++n)
      difference = std::max(difference, a[n].second.distance(b[n].second));
    return difference;
  }

  bool
  bitwise_equal(const std::vector<std::pair<Point<3>, Point<3>>> &a,
                const std::vector<std::pair<Point<3>, Point<3>>> &b)
  {
    if (a.size() != b.size())
      return false;
    for (std::size_t n = 0; n < a.size(); ++n)
      for (unsigned int d = 0; d < 3; ++d)
        if (a[n].second[d] != b[n].second[d])
          return false;
    return true;
  }

  bool
  converged(const std::vector<StepReport> &reports)
  {
    return !reports.empty() && reports.back().status == StepStatus::converged;
  }
} // namespace



int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Checks               checks;
  const BackendFactory device = make_device_backend<double>;

  {
    // The block: a distorted mesh, the traction face's forces consistent.
    const double T   = 0.4;
    const auto   run = [&](const BackendFactory &factory) {
      Triangulation<3> triangulation;
      GridGenerator::subdivided_hyper_cube(triangulation, 3);
      GridTools::distort_random(0.25, triangulation, true, 1);
      Problem problem(triangulation);
      problem.set_surface_loads(problem.faces_where([](const Point<3> &X) {
        return std::abs(X[0] - 1.) < 1e-12;
      }),
                                Tensor<1, 3>({T, 0., 0.}),
                                {});
      const auto reports = problem.solve(1., 0., 2, factory);
      return std::make_pair(converged(reports), problem.positions());
    };
    const auto [host_ok, host]     = run(make_host_backend);
    const auto [device_ok, on_gpu] = run(device);
    const double difference        = largest_difference(host, on_gpu);
    checks.check(host_ok && device_ok && difference < 1e-10,
                 "dead traction on a distorted block: device and host "
                 "positions differ by " +
                   scientific(difference) + " < 1e-10");
  }

  {
    // The cylinder under a follower pressure: LU on the device.
    const double         p     = 0.4;
    const CylinderResult host  = run_cylinder(2, p, 2, true);
    const CylinderResult gpu   = run_cylinder(2, p, 2, true, 30, device);
    const CylinderResult again = run_cylinder(2, p, 2, true, 30, device);
    const double difference = largest_difference(host.positions, gpu.positions);
    checks.check(converged(host.reports) && converged(gpu.reports) &&
                   difference < 1e-9,
                 "follower pressure on the cylinder, quasi-static: device "
                 "and host positions differ by " +
                   scientific(difference) + " < 1e-9");
    checks.check(gpu.reports.back().residuals.size() ==
                   host.reports.back().residuals.size(),
                 "the device's Newton iterations (" +
                   std::to_string(gpu.reports.back().residuals.size()) +
                   " residuals) are the host's (" +
                   std::to_string(host.reports.back().residuals.size()) +
                   "): the load stiffness is there");
    bool same_residuals = gpu.reports.size() == again.reports.size();
    for (std::size_t s = 0; same_residuals && s < gpu.reports.size(); ++s)
      same_residuals = gpu.reports[s].residuals == again.reports[s].residuals;
    checks.check(same_residuals &&
                   bitwise_equal(gpu.positions, again.positions),
                 "two device runs give bitwise the same residuals and "
                 "positions");

    // Dynamic: the pressure at the midpoint, scaled as the element terms.
    const CylinderResult host_dynamic =
      run_cylinder(2, p, 3, true, 30, make_host_backend, 0.1);
    const CylinderResult gpu_dynamic =
      run_cylinder(2, p, 3, true, 30, device, 0.1);
    const double dynamic_difference =
      largest_difference(host_dynamic.positions, gpu_dynamic.positions);
    checks.check(converged(host_dynamic.reports) &&
                   converged(gpu_dynamic.reports) && dynamic_difference < 1e-9,
                 "follower pressure on the cylinder, dynamic (dt = 0.1): "
                 "device and host positions differ by " +
                   scientific(dynamic_difference) + " < 1e-9");
  }
  return checks.exit_code();
}
