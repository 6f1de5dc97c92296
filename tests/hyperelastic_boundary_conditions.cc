// SPDX-License-Identifier: LGPL-2.1-or-later
// The hyperelastic app's rollers and prescribed displacements on the host
// path: uniaxial extension of a compressible neo-Hookean block, held by
// rollers on its symmetry planes x = 0, y = 0, z = 0 and driven by a
// prescribed displacement of its face x = Lx. The state is homogeneous,
// F = diag(l1, l2, l2), which linear and trilinear elements represent
// exactly on any mesh: the reaction force and the lateral contraction
// equal the closed form to the solver's tolerance, on the built-in bar and
// on a distorted mesh. Then the step cutting of quasi-static load control,
// the stop when the cuts are used up, and the entries' errors.

#include <deal.II/base/exceptions.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "explicit_solid.h"
#include "hyperelastic_test_utilities.h"
#include "tests.h"

namespace
{
  using namespace Testing;

  constexpr double mu = 5, lambda = 2;

  /**
   * The closed form of uniaxial extension by the stretch @p l1: the
   * lateral stretch l2 from zero lateral stress, P_22 = mu (l2 - 1/l2) +
   * lambda ln(l1 l2^2) / l2 = 0, by bisection (P_22 grows with l2), and
   * the first Piola stress P_11 = mu (l1 - 1/l1) + lambda ln(J) / l1.
   */
  std::pair<double, double>
  uniaxial(const double l1)
  {
    const auto lateral = [&](const double l2) {
      return mu * (l2 * l2 - 1) + lambda * std::log(l1 * l2 * l2);
    };
    double a = 1e-3, b = 10;
    for (unsigned int i = 0; i < 200; ++i)
      {
        const double m           = 0.5 * (a + b);
        (lateral(m) > 0 ? b : a) = m;
      }
    const double l2 = 0.5 * (a + b);
    const double J  = l1 * l2 * l2;
    return {l2, mu * (l1 - 1 / l1) + lambda * std::log(J) / l1};
  }

  const std::string tight_solver =
    prm_subsection("Solver",
                   {"Newton tolerance = 1e-11",
                    "CG relative tolerance = 1e-13"});

  const std::string quasi_static =
    prm_subsection("Time",
                   {"Mode = quasi-static", "End time = 1", "Time step = 0.25"});

  // No clamp and no nodal load: the rollers and the drive hold the body.
  const std::string free_boundary = "Fixed boundary ids = ";
  const std::string no_load       = "Load region = ";

  // The bar 2 x 1 x 1: rollers on x = 0 (id 0), y = 0 (id 2), z = 0 (id 4),
  // the face x = 2 (id 1) pulled to u_x = 0.5 t.
  std::string
  bar_extension(const std::string &cell_type)
  {
    return prm_subsection("Geometry",
                          {"Bar size = 2, 1, 1",
                           "Subdivisions = 4, 2, 2",
                           "Cell type = " + cell_type}) +
           prm_subsection("Execution", {"Device = host"}) +
           prm_subsection("Boundary conditions",
                          {free_boundary,
                           no_load,
                           "Load = 0, 0, 0",
                           "Rollers = 0: x; 2: y; 4: z",
                           "Prescribed displacements = 1: x = 0.5*t"}) +
           quasi_static + tight_solver;
  }

  /// Writes a block [0, 2] x [0, 1] x [0, 1] of 4 x 3 x 3 hexahedra with
  /// its inner vertices moved off the grid, as legacy VTK.
  void
  write_distorted_block(const std::string &file)
  {
    const unsigned int nx = 4, ny = 3, nz = 3;
    std::ofstream      out(file);
    out << "# vtk DataFile Version 3.0\ndistorted block\nASCII\n"
        << "DATASET UNSTRUCTURED_GRID\nPOINTS "
        << (nx + 1) * (ny + 1) * (nz + 1) << " double\n";
    const auto index = [&](unsigned int i, unsigned int j, unsigned int k) {
      return i + (nx + 1) * (j + (ny + 1) * k);
    };
    for (unsigned int k = 0; k <= nz; ++k)
      for (unsigned int j = 0; j <= ny; ++j)
        for (unsigned int i = 0; i <= nx; ++i)
          {
            double x = 2. * i / nx, y = 1. * j / ny, z = 1. * k / nz;
            if (i > 0 && i < nx && j > 0 && j < ny && k > 0 && k < nz)
              {
                // A fixed pattern of shifts up to a fifth of the spacing.
                const unsigned int n = index(i, j, k);
                x += 0.1 * std::sin(1.7 * n + 0.3);
                y += 0.066 * std::sin(2.9 * n + 1.1);
                z += 0.066 * std::cos(3.7 * n + 0.5);
              }
            out << x << ' ' << y << ' ' << z << '\n';
          }
    const unsigned int n_cells = nx * ny * nz;
    out << "CELLS " << n_cells << ' ' << 9 * n_cells << '\n';
    for (unsigned int k = 0; k < nz; ++k)
      for (unsigned int j = 0; j < ny; ++j)
        for (unsigned int i = 0; i < nx; ++i)
          out << "8 " << index(i, j, k) << ' ' << index(i + 1, j, k) << ' '
              << index(i + 1, j + 1, k) << ' ' << index(i, j + 1, k) << ' '
              << index(i, j, k + 1) << ' ' << index(i + 1, j, k + 1) << ' '
              << index(i + 1, j + 1, k + 1) << ' ' << index(i, j + 1, k + 1)
              << '\n';
    out << "CELL_TYPES " << n_cells << '\n';
    for (unsigned int c = 0; c < n_cells; ++c)
      out << "12\n";
  }

  /// The block's lateral faces y = 1 and z = 1 contract by l2 - 1, its
  /// driven face's reaction is P_11 times the reference area 1, and the
  /// rollers' reactions balance it.
  void
  check_extension(Checks                            &checks,
                  const Hyperelastic::ImplicitSolid &solid,
                  const std::string                 &what)
  {
    const double u_end   = 0.5 * solid.current_time();
    const auto [l2, P11] = uniaxial(1 + u_end / 2);
    const auto forces    = solid.region_forces();
    checks.check(forces.size() == 4 &&
                   forces[0].name.find("Prescribed") != std::string::npos,
                 what + ": four regions, the drive first (" +
                   std::to_string(forces.size()) + ")");
    if (forces.size() != 4)
      return;
    const double tolerance = 1e-8 * std::abs(P11);
    checks.check(std::abs(forces[0].force[0] - P11) <= tolerance &&
                   std::abs(forces[0].force[1]) <= tolerance &&
                   std::abs(forces[0].force[2]) <= tolerance,
                 what + ": reaction on the driven face " +
                   scientific(forces[0].force[0]) +
                   ", closed form P_11 A = " + scientific(P11) + " (stretch " +
                   scientific(1 + u_end / 2) + ")");
    checks.check(std::abs(forces[1].force[0] + P11) <= tolerance,
                 what + ": the rollers on x = 0 hold " +
                   scientific(forces[1].force[0]) + " = -P_11 A");
    checks.check(std::abs(forces[2].force[1]) <= tolerance &&
                   std::abs(forces[3].force[2]) <= tolerance,
                 what + ": no lateral reaction on y = 0 and z = 0 (" +
                   scientific(forces[2].force[1]) + ", " +
                   scientific(forces[3].force[2]) + ")");
    checks.check(std::abs(forces[0].mean_displacement[0] - u_end) <= 1e-12,
                 what + ": the driven face is at its prescribed u_x = " +
                   scientific(u_end));
    double worst = 0;
    for (const auto &node : solid.gather_nodal_state())
      for (unsigned int d = 1; d < 3; ++d)
        worst =
          std::max(worst, std::abs(node.u[d] - (l2 - 1) * node.position[d]));
    double worst_x = 0;
    for (const auto &node : solid.gather_nodal_state())
      worst_x =
        std::max(worst_x, std::abs(node.u[0] - u_end / 2 * node.position[0]));
    checks.check(worst <= 1e-9 && worst_x <= 1e-9,
                 what +
                   ": every node at the homogeneous state, lateral "
                   "stretch " +
                   scientific(l2) + " (largest deviation " +
                   scientific(std::max(worst, worst_x)) + ")");
  }
} // namespace



int
main()
{
  Checks checks;

  for (const std::string cell_type : {"hexahedra", "tetrahedra"})
    {
      std::ostringstream log;
      const auto solid = run_hyperelastic(bar_extension(cell_type), 4, log);
      checks.check(std::abs(solid->current_time() - 1) < 1e-12,
                   cell_type + ": four load steps reach t = 1");
      check_extension(checks, *solid, "uniaxial extension, " + cell_type);
    }

  {
    // A distorted mesh read from a file: all its faces have boundary id 0,
    // so the rollers and the drive select their nodes by boxes.
    write_distorted_block("distorted_block.vtk");
    const std::string prm =
      prm_subsection("Geometry", {"Mesh file = distorted_block.vtk"}) +
      prm_subsection("Execution", {"Device = host"}) +
      prm_subsection(
        "Boundary conditions",
        {free_boundary,
         no_load,
         "Load = 0, 0, 0",
         "Prescribed displacement regions = 2, 0, 0, 2, 1, 1: x = 0.5*t",
         "Roller regions = 0, 0, 0, 0, 1, 1: x; 0, 0, 0, 2, 0, 1: y; "
         "0, 0, 0, 2, 1, 0: z"}) +
      quasi_static + tight_solver;
    std::ostringstream log;
    const auto         solid = run_hyperelastic(prm, 4, log);
    check_extension(checks, *solid, "uniaxial extension, distorted mesh");
  }

  {
    // The whole run with its force trace: one row per step and the start.
    const std::filesystem::path directory = "uniaxial_extension_output";
    std::filesystem::remove_all(directory);
    std::ostringstream          log;
    Hyperelastic::ImplicitSolid solid(
      hyperelastic_parameters(
        bar_extension("hexahedra") +
        prm_subsection("Output",
                       {"Directory = " + directory.string(),
                        "Output interval = 0"})),
      log);
    solid.run();
    std::ifstream            csv(directory / "force_displacement.csv");
    std::vector<std::string> lines;
    for (std::string line; std::getline(csv, line);)
      lines.push_back(line);
    checks.check(lines.size() == 6 &&
                   std::filesystem::exists(directory / "trace.csv") &&
                   std::filesystem::exists(directory / "trace.png") &&
                   std::filesystem::exists(directory /
                                           "force_displacement.png"),
                 "the run writes trace.csv/png and force_displacement.csv/"
                 "png, the curve with a header and 5 rows (" +
                   std::to_string(lines.size()) + " lines)");
    if (lines.size() == 6)
      {
        // The last row: step, time, displacement, fx, fy, fz.
        std::istringstream  row(lines.back());
        std::vector<double> values;
        for (std::string value; std::getline(row, value, ',');)
          values.push_back(std::stod(value));
        const double P11 = uniaxial(1.25).second;
        checks.check(values.size() == 6 && std::abs(values[2] - 0.5) < 1e-9 &&
                       std::abs(values[3] - P11) < 1e-7 * P11,
                     "the curve ends at the prescribed 0.5 with the "
                     "closed-form reaction " +
                       scientific(P11));
      }
  }

  {
    // A load step too large for 'Maximum Newton iterations' is cut in
    // half until it converges; the run still reaches the end time, at the
    // same state.
    std::ostringstream log;
    const auto         solid = run_hyperelastic(
      bar_extension("hexahedra") + prm_subsection("Time", {"Time step = 1"}) +
        prm_subsection("Solver", {"Maximum Newton iterations = 3"}),
      0,
      log);
    while (solid->current_time() < 1 - 1e-12)
      solid->do_step();
    checks.check(solid->n_step_cuts() > 0,
                 "a step too large to converge in 3 Newton iterations is "
                 "cut (" +
                   std::to_string(solid->n_step_cuts()) + " cuts, " +
                   std::to_string(solid->statistics().n_steps) + " steps)");
    check_extension(checks, *solid, "uniaxial extension after step cuts");
  }

  {
    // A drive that jumps at t = 0.55: from t = 0.5 two cuts (steps of
    // 0.5, 0.25, 0.125) cannot reach a step that ends before the jump, the
    // run stops naming 'Maximum step cuts' and writes the last converged
    // state, the one at t = 0.5.
    const std::filesystem::path directory = "step_cut_stop_output";
    std::filesystem::remove_all(directory);
    std::ostringstream log;
    const std::string  prm =
      bar_extension("hexahedra") +
      prm_subsection("Boundary conditions",
                     {"Prescribed displacements = 1: x = t < 0.55 ? 0.1*t "
                      ": 3"}) +
      prm_subsection("Time", {"Time step = 0.5"}) +
      prm_subsection("Solver",
                     {"Maximum Newton iterations = 3",
                      "Maximum step cuts = 2"}) +
      prm_subsection("Output",
                     {"Directory = " + directory.string(),
                      "Output interval = 0"});
    Hyperelastic::ImplicitSolid solid(hyperelastic_parameters(prm), log);
    solid.setup();
    checks.check_throws<Hyperelastic::ExcSimulationStopped>(
      [&]() {
        for (unsigned int s = 0; s < 10; ++s)
          solid.do_step();
      },
      "'Solver/Maximum step cuts'",
      "a step that cannot converge stops the run when the cuts are used "
      "up");
    const auto forces = solid.region_forces();
    checks.check(std::abs(solid.current_time() - 0.5) < 1e-12 &&
                   std::abs(forces[0].mean_displacement[0] - 0.05) < 1e-12 &&
                   std::filesystem::exists(directory / "solid.pvd") &&
                   !solid.statistics().output_files.empty(),
                 "the stop leaves and writes the last converged state "
                 "(t = 0.5, u_x = 0.05 on the driven face)");
  }

  {
    // Bad entries are refused, naming the entry.
    const auto refused = [&](const std::string &entry,
                             const std::string &expected,
                             const std::string &what) {
      checks.check_throws<dealii::ExceptionBase>(
        [&]() {
          std::ostringstream          log;
          Hyperelastic::ImplicitSolid solid(
            hyperelastic_parameters(
              prm_subsection("Geometry",
                             {"Bar size = 2, 1, 1", "Subdivisions = 2, 1, 1"}) +
              prm_subsection("Execution", {"Device = host"}) + quasi_static +
              prm_subsection(
                "Boundary conditions",
                {free_boundary, no_load, "Load = 0, 0, 0", entry})),
            log);
          solid.setup();
        },
        expected,
        what);
    };
    refused("Rollers = 0 x", "'Rollers' has the item '0 x'", "no ':'");
    refused("Rollers = 0: w", "the component 'w'", "an unknown component");
    refused("Rollers = 300: x", "not a boundary id", "an id out of range");
    refused("Rollers = 0: x, x", "names the component x twice", "twice");
    refused("Rollers = 0: x;; 2: y", "empty item", "an empty item");
    refused("Rollers = 9: x", "boundary id 9", "an id the mesh lacks");
    refused("Roller regions = 0, 0, 0, 1, 1: x",
            "'Roller regions' needs 6",
            "a box of five numbers");
    refused("Roller regions = 5, 5, 5, 6, 6, 6: x",
            "selects no node",
            "a box outside the body");
    refused("Prescribed displacements = 1: x 0.1",
            "'Prescribed displacements' has the item",
            "no '='");
    const std::string rollers = "Rollers = 0: x; 2: y; 4: z\n  set ";
    refused("Prescribed displacements = 1: x = sin(",
            "not a valid expression of t",
            "a bad expression");
    refused(rollers + "Prescribed displacements = 1: x = 1/t",
            "not finite",
            "an expression that is not finite");
    refused("Rollers = 0: x",
            "leave a rigid motion",
            "rollers that leave the body free to move");
    refused(rollers +
              "Prescribed displacement regions = 2, 0, 0, 2, 1, 1: x = t; "
              "2, 0, 0, 2, 1, 1: x = 2*t",
            "selects no node",
            "a second drive of the same DoFs");
  }

  {
    // The explicit integrator reads the same roller entries: 'Rollers' on
    // the normal components equals its 'Roller boundary ids', bit for bit;
    // a prescribed displacement, whose function of time TLED does not
    // follow, is refused with its own entries named.
    const std::string tled =
      prm_subsection("Geometry",
                     {"Bar size = 2, 1, 1",
                      "Subdivisions = 4, 2, 2",
                      "Cell type = hexahedra"}) +
      prm_subsection("Execution", {"Device = host"}) +
      prm_subsection("Time", {"Time integration = explicit"});
    const auto displacement = [&](const std::string &boundary) {
      std::ostringstream          log;
      Hyperelastic::ExplicitSolid solid(
        hyperelastic_parameters(tled +
                                "subsection Boundary conditions\n"
                                "  set Load region = 1.9, 0, 0, 2, 1, 1\n"
                                "  set Load = 0, 0.02, 0.05\n" +
                                boundary + "end\n"),
        log);
      solid.setup();
      solid.advance(200);
      const std::vector<double> u = solid.displacement();
      AssertThrow(*std::max_element(u.begin(), u.end()) > 1e-6,
                  dealii::ExcMessage("the explicit bar does not move"));
      return u;
    };
    checks.check(displacement("  set Rollers = 2: y; 4: z\n") ==
                   displacement("end\nsubsection Explicit dynamics\n"
                                "  set Roller boundary ids = 2, 4\n"),
                 "explicit: 'Rollers' = '2: y; 4: z' moves the bar as "
                 "'Roller boundary ids' = '2, 4' does");
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        displacement("  set Prescribed displacements = 1: x = 0.1*t\n");
      },
      "'Explicit dynamics/Displaced region'",
      "explicit: a prescribed displacement is refused, naming the "
      "explicit integrator's own entries");
  }

  return checks.exit_code();
}
