// SPDX-License-Identifier: LGPL-2.1-or-later
// The hyperelastic app's explicit integrator (TLED) against its implicit
// quasi-static solution on the same mesh: a cube of tetrahedra (the same
// discretization in both: linear tetrahedra, one point, the same
// neo-Hookean material, E = 3000 Pa, nu = 0.49) clamped at the bottom and
// pressed by a load on its top face, slowly ramped and damped in the
// explicit run, ends within 1 % of the implicit solution (the whole
// displacement field, the top face's mean and the centre node). Through the
// app's parameters: a time step above the stable limit is refused, naming
// the limit; the trace (CSV and PNG) and VTU files are written.

#include <deal.II/base/parameter_handler.h>

#include <filesystem>
#include <map>

#include "explicit_solid.h"
#include "hyperelastic_test_utilities.h"
#include "tests.h"

namespace
{
  const std::string common = R"(
subsection Geometry
  set Bar size     = 0.08, 0.08, 0.08
  set Subdivisions = 4, 4, 4
  set Cell type    = tetrahedra
end
subsection Material
  set Shear modulus = 1006.711409
  set Lame lambda   = 49328.85906
  set Body force    = 0, 0, 0
end
subsection Boundary conditions
  set Fixed boundary ids = 4
  set Load region        = 0, 0, 0.08, 0.08, 0.08, 0.08
  set Load               = 0, 0, -1
end
subsection Execution
  set Device = host
end
)";
} // namespace

int
main()
{
  Testing::Checks    checks;
  std::ostringstream log;

  // Implicit, quasi-static: the load in 4 increments.
  const auto implicit                 = Testing::run_hyperelastic(common + R"(
subsection Boundary conditions
  set Load time function = t
end
subsection Time
  set Mode      = quasi-static
  set End time  = 1
  set Time step = 0.25
end
)",
                                                  4,
                                                  log);
  const auto [u_implicit, p_implicit] = implicit->state();
  const GPUAssembly::MeshArrays &a    = implicit->arrays();

  // Explicit: ramped over 2 s, damped, 1 s to settle.
  const Hyperelastic::Parameters parameters =
    Testing::hyperelastic_parameters(common + R"(
subsection Material
  set Density = 1000
end
subsection Time
  set Time integration = explicit
  set End time         = 3
end
subsection Explicit dynamics
  set Damping        = 30
  set Ramp time      = 2
  set Trace interval = 100
end
subsection Output
  set Directory       = tled_truth_cube_output
  set Output interval = 2000
end
)");
  std::filesystem::remove_all("tled_truth_cube_output");
  Hyperelastic::ExplicitSolid solid(parameters, log);
  solid.run();
  const std::vector<double> u_explicit = solid.displacement();

  // Nodes matched by position.
  std::map<std::array<long, 3>, unsigned int> implicit_node;
  const auto key = [](const double x, const double y, const double z) {
    return std::array<long, 3>{
      {std::lround(x * 1e7), std::lround(y * 1e7), std::lround(z * 1e7)}};
  };
  for (unsigned int n = 0; n < a.n_nodes; ++n)
    implicit_node[key(a.nodal_coordinates[3 * n],
                      a.nodal_coordinates[3 * n + 1],
                      a.nodal_coordinates[3 * n + 2])] = n;
  const auto &model = solid.model();
  checks.check(model.n_nodes == a.n_nodes,
               "the explicit and implicit runs have the same nodes");
  std::vector<double> implicit_u(u_explicit.size());
  double              top_implicit = 0, top_explicit = 0;
  unsigned int        n_top = 0, centre = 0;
  double              best = 1e300;
  for (unsigned int v = 0; v < model.n_nodes; ++v)
    {
      const double x = model.coordinates[3 * v],
                   y = model.coordinates[3 * v + 1],
                   z = model.coordinates[3 * v + 2];
      const auto it  = implicit_node.find(key(x, y, z));
      AssertThrow(it != implicit_node.end(),
                  dealii::ExcMessage("A node of the explicit mesh is not in "
                                     "the implicit one."));
      for (unsigned int d = 0; d < 3; ++d)
        implicit_u[3 * v + d] = u_implicit[a.node_dofs[3 * it->second + d]];
      if (z > 0.08 * (1 - 1e-9))
        {
          top_implicit += implicit_u[3 * v + 2];
          top_explicit += u_explicit[3 * v + 2];
          ++n_top;
        }
      const double d2 =
        std::pow(x - 0.04, 2) + std::pow(y - 0.04, 2) + std::pow(z - 0.04, 2);
      if (d2 < best)
        best = d2, centre = v;
    }
  const double field = Testing::relative_l2_error(u_explicit, implicit_u);
  const double top =
    std::abs(top_explicit - top_implicit) / std::abs(top_implicit);
  const double mid =
    std::abs(u_explicit[3 * centre + 2] - implicit_u[3 * centre + 2]) /
    std::abs(implicit_u[3 * centre + 2]);
  std::cout << "      top face mean u_z: implicit "
            << Testing::scientific(top_implicit / n_top) << ", explicit "
            << Testing::scientific(top_explicit / n_top) << std::endl;
  checks.check(top_implicit / n_top < -1e-3,
               "the load compresses the cube by more than 1 % (top face mean "
               "u_z " +
                 Testing::scientific(top_implicit / n_top) + " m)");
  checks.check(field < 0.01,
               "explicit (TLED, slowly ramped and damped) against implicit "
               "quasi-static: displacement field within 1 % (relative L2 " +
                 Testing::scientific(field) + ")");
  checks.check(top < 0.01,
               "top face mean displacement within 1 % (" +
                 Testing::scientific(top) + ")");
  checks.check(mid < 0.01,
               "centre node u_z within 1 % (" + Testing::scientific(mid) + ")");
  checks.check(std::filesystem::exists("tled_truth_cube_output/trace.csv") &&
                 std::filesystem::exists("tled_truth_cube_output/trace.png") &&
                 std::filesystem::exists("tled_truth_cube_output/solid.pvd") &&
                 solid.trace().size() > 10,
               "the trace (CSV, PNG) and the VTU series are written");

  // A time step above the limit is refused with the limit in the message.
  checks.check_throws<dealii::ExceptionBase>(
    [&]() {
      const Hyperelastic::Parameters p =
        Testing::hyperelastic_parameters(common + R"(
subsection Material
  set Density = 1000
end
subsection Time
  set Time integration = explicit
end
subsection Explicit dynamics
  set Time step = 0.01
end
)");
      Hyperelastic::ExplicitSolid s(p, log);
      s.setup();
    },
    "exceeds the stable limit",
    "'Explicit dynamics/Time step' above the stable limit is refused, the "
    "limit printed");
  return checks.exit_code();
}
