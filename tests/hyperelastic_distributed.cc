// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The hyperelastic app's ImplicitSolid on a communicator (host path) on all
// ranks of MPI_COMM_WORLD against ImplicitSolid on one process and, on
// several ranks, against the same run on rank 0 alone: after 10
// midpoint-rule steps of a hexahedral bar with a local refinement step
// (hanging nodes, p4est), of the same bar quasi-static under a body force
// with a fixed region (indefinite Newton tangents), and of a tetrahedral bar
// (parallel::fullydistributed), displacement and momentum at every node,
// keyed by the node's position (the DoF numbering depends on the partition),
// and the energies, momentum and load-region displacement must agree to a
// tolerance tied to the CG tolerance. The resident backend in host storage
// mode ('Distributed linear algebra = resident': DistributedDeviceMatrix,
// DistributedJacobiCG and the updates in host memory) must give the Trilinos
// backend's states on all ranks and on rank 0 alone. On the quasi-static
// bar, the other linear solvers must give the serial Jacobi-CG's states as
// well: the Trilinos backend's (Trilinos' direct solver, deal.II's
// Chebyshev-Jacobi and Trilinos' node-block Jacobi around CG) and the
// resident backend's (the plugin's DistributedPreconditionedCG with
// Chebyshev-Jacobi and point-block Jacobi). Surface loads: a block on
// rollers under a dead traction on both backends must take the homogeneous
// uniaxial state; a thick cylinder and a bar with hanging nodes under a
// follower pressure on the Trilinos backend must run its direct solver
// ('Linear solver' = auto) and give the one-process host result, as must a
// dynamic bar under both loads (and under the traction alone on both
// backends), and two runs of the cylinder must be bitwise equal. On the
// resident backend the cylinder runs DistributedJacobiBiCGStab ('Linear
// solver' = auto), the pressure's load stiffness added to the
// DistributedDeviceMatrix: its states must equal the Trilinos backend's on
// all ranks and on rank 0 alone, Newton must converge quadratically (the
// residuals of every step), two runs must be bitwise equal, and cg-jacobi
// with the pressure must be refused naming the entries. Run under mpirun
// (ctest runs 3 ranks and 1).

#include <deal.II/base/mpi.h>

#include <deal.II/grid/grid_out.h>

#include <array>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hyperelastic_test_utilities.h"
#include "surface_load_problems.h"

namespace
{
  using namespace dealii;
  using Hyperelastic::ImplicitSolid;

  using Testing::comparison_n_steps;
  constexpr double tolerance = Testing::comparison_tolerance;

  std::string
  solver_entries()
  {
    return Testing::comparison_solver() +
           "subsection Output\n  set Output interval = 0\n"
           "  set Screen interval = 0\nend\n";
  }

  using Testing::NodalStates;

  struct Diagnostics
  {
    double       kinetic = 0, strain = 0;
    Tensor<1, 3> momentum, tip;
    NodalStates  states;
    /// ImplicitSolid::backend_description().
    std::string description;
  };

  // The host path with the linear algebra @p algebra (trilinos or
  // resident).
  std::string
  execution(const std::string &algebra)
  {
    return "subsection Execution\n  set Device = host\n"
           "  set Distributed linear algebra = " +
           algebra + "\nend\n";
  }

  Diagnostics
  run_distributed(const std::string &prm,
                  const MPI_Comm     comm,
                  const std::string &algebra = "trilinos",
                  std::ostream      *output  = nullptr)
  {
    std::ostringstream log;
    ImplicitSolid      solid(Testing::hyperelastic_parameters(prm +
                                                         execution(algebra)),
                        comm,
                        output != nullptr ? *output : log);
    solid.setup();
    const std::string description = solid.backend_description();
    AssertThrow(
      description.find(algebra == "resident" ? "resident" : "Trilinos") !=
        std::string::npos,
      ExcMessage("asked for the " + algebra + " backend, got: " + description));
    for (unsigned int s = 0; s < comparison_n_steps; ++s)
      solid.do_step();
    Diagnostics d;
    d.description = description;
    d.kinetic     = solid.kinetic_energy();
    d.strain      = solid.strain_energy();
    d.momentum    = solid.linear_momentum();
    d.tip         = solid.load_region_displacement();
    d.states      = Testing::by_position(solid.gather_nodal_state(0));
    return d;
  }

  Diagnostics
  run_serial(const std::string &prm, unsigned int &n_hanging)
  {
    std::ostringstream log;
    const auto solid  = Testing::run_hyperelastic(prm + execution("trilinos"),
                                                 comparison_n_steps,
                                                 log);
    const auto [u, p] = solid->state();
    const GPUAssembly::MeshArrays &a = solid->arrays();
    n_hanging                        = a.n_constraint_lines();
    Diagnostics d;
    d.kinetic  = solid->kinetic_energy();
    d.strain   = solid->strain_energy();
    d.momentum = solid->linear_momentum();
    d.tip      = solid->load_region_displacement();
    for (unsigned int n = 0; n < a.n_nodes; ++n)
      {
        const Point<3> X(a.nodal_coordinates[3 * n],
                         a.nodal_coordinates[3 * n + 1],
                         a.nodal_coordinates[3 * n + 2]);
        Tensor<1, 3>   u_n, p_n;
        for (unsigned int c = 0; c < 3; ++c)
          {
            u_n[c] = u[a.node_dofs[3 * n + c]];
            p_n[c] = p[a.node_dofs[3 * n + c]];
          }
        d.states[Testing::node_key(X)] = {u_n, p_n};
      }
    return d;
  }

  // Whether @p b equals the reference @p a; prints what differs.
  bool
  same_state(const std::string &what,
             const Diagnostics &a,
             const Diagnostics &b)
  {
    bool ok = true;
    if (a.states.size() != b.states.size())
      {
        std::cout << "FAIL " << what << ": " << b.states.size()
                  << " nodes instead of " << a.states.size()
                  << " (the meshes differ)" << std::endl;
        return false;
      }
    const auto [all_nodes_found, u_max, p_max, du, dp] =
      Testing::nodal_difference(a.states, b.states);
    if (!all_nodes_found)
      {
        std::cout << "FAIL " << what << ": a node of the reference is "
                  << "missing (the meshes differ)" << std::endl;
        return false;
      }
    const auto check = [&](const std::string &name,
                           const double       difference,
                           const double       scale) {
      const bool pass = difference <= tolerance * scale;
      std::cout << (pass ? "  ok   " : "  FAIL ") << what << ": " << name
                << " differs by " << difference << " (scale " << scale
                << ", allowed " << tolerance * scale << ")" << std::endl;
      ok = ok && pass;
    };
    check("nodal displacement", du, u_max);
    check("nodal momentum", dp, p_max);
    check("kinetic energy", std::abs(a.kinetic - b.kinetic), a.kinetic);
    check("strain energy", std::abs(a.strain - b.strain), a.strain);
    check("total momentum", (a.momentum - b.momentum).norm(), p_max);
    check("load region displacement", (a.tip - b.tip).norm(), a.tip.norm());
    if (u_max < 1e-4)
      {
        std::cout << "FAIL " << what
                  << ": the bar hardly moved (max |u| = " << u_max
                  << "), the comparison would prove nothing" << std::endl;
        ok = false;
      }
    return ok;
  }

  /// Runs @p prm: on all ranks with the Trilinos and (with @p resident)
  /// the resident backend, on rank 0 alone with both and serially, and on
  /// all ranks with each of @p other_solvers ('Solver/Linear solver'
  /// values) on the Trilinos backend and, but direct, on the resident one;
  /// compares the states, and checks the Trilinos states on all ranks with
  /// @p check_world where given.
  bool
  run_case(
    const std::string                                   &name,
    const std::string                                   &prm,
    const std::vector<std::string>                      &other_solvers = {},
    const bool                                           resident      = true,
    const std::function<bool(const Diagnostics &world)> &check_world   = {})
  {
    const unsigned int rank = Utilities::MPI::this_mpi_process(MPI_COMM_WORLD);
    const unsigned int n_ranks =
      Utilities::MPI::n_mpi_processes(MPI_COMM_WORLD);
    const Diagnostics world = run_distributed(prm, MPI_COMM_WORLD);
    const Diagnostics world_resident =
      resident ? run_distributed(prm, MPI_COMM_WORLD, "resident") :
                 Diagnostics();
    std::vector<std::pair<std::string, Diagnostics>> world_other;
    for (const std::string &solver : other_solvers)
      for (const std::string algebra : {"trilinos", "resident"})
        if (algebra == "trilinos" || (resident && solver != "direct"))
          world_other.emplace_back(
            algebra + " backend with " + solver,
            // A direct solver refuses a CG tolerance other than the
            // default, which the comparison's entries set.
            run_distributed(
              prm + "subsection Solver\n  set Linear solver = " + solver +
                (solver == "direct" ? "\n  set CG relative tolerance = 1e-6" :
                                      "") +
                "\nend\n",
              MPI_COMM_WORLD,
              algebra));

    MPI_Comm self;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &self);
    bool ok = true;
    if (rank == 0)
      {
        const std::string ranks =
          std::to_string(n_ranks) + (n_ranks == 1 ? " rank" : " ranks");
        unsigned int      n_hanging = 0;
        const Diagnostics serial    = run_serial(prm, n_hanging);
        std::cout << name << ": " << serial.states.size() << " nodes, "
                  << n_hanging << " hanging DoFs" << std::endl;
        ok =
          same_state(name + ", " + ranks + " against serial", serial, world) &&
          ok;
        if (resident)
          ok = same_state(name +
                            ", resident backend (host storage) against "
                            "Trilinos on " +
                            ranks,
                          world,
                          world_resident) &&
               ok;
        if (check_world)
          ok = check_world(world) && ok;
        for (const auto &[what, other] : world_other)
          ok = same_state(name + ", " + what + " on " + ranks +
                            " against serial Jacobi-CG",
                          serial,
                          other) &&
               ok;
        // On several ranks, rank 0 alone as well: the partition must not
        // change the result.
        if (n_ranks > 1)
          {
            const Diagnostics one = run_distributed(prm, self);
            if (resident)
              ok = same_state(name + ", resident backend (host storage) "
                                     "against Trilinos on 1 rank",
                              one,
                              run_distributed(prm, self, "resident")) &&
                   ok;
            ok =
              same_state(name + ", 1 rank against serial", serial, one) && ok;
            ok =
              same_state(name + ", " + ranks + " against 1 rank", one, world) &&
              ok;
          }
        MPI_Comm_free(&self);
        if (name.find("hanging") != std::string::npos && n_hanging == 0)
          {
            std::cout << "FAIL " << name << ": no hanging nodes" << std::endl;
            ok = false;
          }
      }
    return Utilities::MPI::min(ok ? 1 : 0, MPI_COMM_WORLD) == 1;
  }
  /**
   * The block [0, 2] x [0, 1] x [0, 1] on rollers on its planes X_c = 0
   * (boundary ids 0, 2, 4), under the dead traction (T t, 0, 0) on its face X =
   * 2 (boundary id 1), quasi-static.
   */
  constexpr double block_traction = 0.3;

  std::string
  traction_block()
  {
    std::ostringstream prm;
    prm << "subsection Geometry\n  set Bar size = 2, 1, 1\n"
           "  set Subdivisions = 4, 2, 2\n  set Cell type = hexahedra\n"
           "end\n"
           "subsection Material\n  set Shear modulus = "
        << Testing::mu << "\n  set Lame lambda = " << Testing::lambda
        << "\nend\n"
           "subsection Boundary conditions\n  set Fixed boundary ids =\n"
           "  set Load region =\n  set Load = 0, 0, 0\n"
           "  set Rollers = 0: x; 2: y; 4: z\nend\n"
           "subsection Surface loads\n  set Traction boundary ids = 1\n"
           "  set Traction = "
        << block_traction
        << ", 0, 0\n  set Traction time function = t\nend\n"
           "subsection Time\n  set Mode = quasi-static\n"
           "  set Time step = 0.1\n  set End time = 1\nend\n"
        << solver_entries();
    return prm.str();
  }

  /// Whether the block's states are the homogeneous uniaxial state of the
  /// traction at t = 1 (stretches from Testing::uniaxial_stretches()):
  /// the consistent nodal forces give it exactly on any mesh, an equal
  /// share per node does not.
  bool
  is_uniaxial_state(const Diagnostics &world)
  {
    const auto [l1, l2] = Testing::uniaxial_stretches(block_traction);
    double error = 0, scale = 0;
    for (const auto &[key, state] : world.states)
      {
        const Point<3>     X(key[0] * 1e-8, key[1] * 1e-8, key[2] * 1e-8);
        const Tensor<1, 3> exact(
          {(l1 - 1) * X[0], (l2 - 1) * X[1], (l2 - 1) * X[2]});
        error = std::max(error, (state.first - exact).norm());
        scale = std::max(scale, exact.norm());
      }
    const bool pass = error <= tolerance * scale && !world.states.empty();
    std::cout << (pass ? "  ok   " : "  FAIL ")
              << "dead traction block: the nodal displacements differ from "
                 "the homogeneous uniaxial state by "
              << error << " (scale " << scale << ", allowed "
              << tolerance * scale << ")" << std::endl;
    return pass;
  }

  /// Whether the Trilinos backend solved with its direct solver, which
  /// 'Linear solver' = auto must choose for the pressure's non-symmetric
  /// tangent.
  bool
  ran_direct_solver(const Diagnostics &world)
  {
    const bool pass =
      world.description.find("SolverDirect") != std::string::npos;
    std::cout << (pass ? "  ok   " : "  FAIL ")
              << "with a pressure, 'Linear solver' = auto runs Trilinos' "
                 "direct solver: "
              << world.description << std::endl;
    return pass;
  }

  /// Whether two runs of @p prm on all ranks (Trilinos backend) give the
  /// same states bit for bit: the sums over the ranks take the same order
  /// every time.
  bool
  bitwise_repeatable(const std::string &name, const std::string &prm)
  {
    const Diagnostics first  = run_distributed(prm, MPI_COMM_WORLD);
    const Diagnostics second = run_distributed(prm, MPI_COMM_WORLD);
    if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) != 0)
      return true;
    const auto [all_nodes_found, u_max, p_max, du, dp] =
      Testing::nodal_difference(first.states, second.states);
    const bool pass = all_nodes_found && !first.states.empty() && du == 0 &&
                      dp == 0 && first.strain == second.strain;
    std::cout << (pass ? "  ok   " : "  FAIL ") << name
              << ": two runs on all ranks differ by " << du
              << " in the displacement, " << dp << " in the momentum and "
              << std::abs(first.strain - second.strain)
              << " in the strain energy (must be 0)" << std::endl;
    return pass;
  }

  /// The residuals of the step lines of @p log ("... |r|: r0 r1 ..."),
  /// one list per step.
  std::vector<std::vector<double>>
  step_residuals(const std::string &log)
  {
    std::vector<std::vector<double>> steps;
    std::istringstream               lines(log);
    std::string                      line;
    while (std::getline(lines, line))
      {
        const auto marker = line.find("|r|:");
        if (line.rfind("Step", 0) != 0 || marker == std::string::npos)
          continue;
        std::istringstream values(line.substr(marker + 4));
        steps.emplace_back();
        for (double r; values >> r;)
          steps.back().push_back(r);
      }
    return steps;
  }

  /**
   * The follower pressure @p prm on the resident backend (host storage) on
   * all ranks: its faces computed on the host, 'Linear solver' = auto runs
   * DistributedJacobiBiCGStab, Newton
   * converges quadratically with the load stiffness in the matrix (the
   * order of every step's residuals above 1e-7 of its first, the
   * BiCGStab's tolerance making the iteration inexact below), two runs are
   * equal bit for bit, and a CG ('Linear solver' = cg-jacobi) is refused at
   * set-up naming 'Solver/Linear solver' and 'Surface loads/Pressure'.
   */
  bool
  resident_pressure_checks(const std::string &name, const std::string &prm)
  {
    const bool rank_0 = Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0;
    std::ostringstream log;
    const Diagnostics  first =
      run_distributed(prm +
                        "subsection Output\n  set Screen interval = 1\nend\n",
                      MPI_COMM_WORLD,
                      "resident",
                      &log);
    const Diagnostics second = run_distributed(prm, MPI_COMM_WORLD, "resident");
    bool              ok     = true;
    const auto        report = [&](const bool pass, const std::string &what) {
      if (rank_0)
        std::cout << (pass ? "  ok   " : "  FAIL ") << name << ", resident "
                  << "backend: " << what << std::endl;
      ok = ok && pass;
    };
    if (rank_0)
      {
        report(first.description.find("DistributedJacobiBiCGStab") !=
                 std::string::npos,
               "'Linear solver' = auto runs BiCGStab: " + first.description);
        report(first.description.find("pressure faces on the host") !=
                 std::string::npos,
               "the host storage computes the pressure faces on the host");
        const auto         steps     = step_residuals(log.str());
        double             min_order = steps.empty() ? 0 : 1e300;
        std::ostringstream list;
        list << std::scientific << std::setprecision(2);
        for (const auto &r : steps)
          {
            // A step that converges in two iterations shows no order.
            std::vector<double> above;
            for (const double value : r)
              if (value > 1e-7 * r.front())
                above.push_back(value);
            if (above.size() >= 3)
              min_order =
                std::min(min_order,
                         Testing::convergence_order(r, 1e-7 * r.front()));
          }
        if (!steps.empty())
          for (const double r : steps.front())
            list << ' ' << r;
        report(steps.size() == comparison_n_steps && min_order > 1.7,
               std::to_string(steps.size()) +
                 " steps, Newton converges quadratically, the smallest "
                 "order over the steps " +
                 std::to_string(min_order) +
                 " > 1.7 (first step's residuals:" + list.str() + ")");
        const auto [all_nodes_found, u_max, p_max, du, dp] =
          Testing::nodal_difference(first.states, second.states);
        (void)u_max;
        (void)p_max;
        report(all_nodes_found && !first.states.empty() && du == 0 && dp == 0 &&
                 first.strain == second.strain,
               "two runs on all ranks equal bit for bit (differences " +
                 std::to_string(du) + ", " + std::to_string(dp) + ")");
      }

    std::string message;
    try
      {
        std::ostringstream refused_log;
        ImplicitSolid      solid(
          Testing::hyperelastic_parameters(
            prm + execution("resident") +
            "subsection Solver\n  set Linear solver = cg-jacobi\nend\n"),
          MPI_COMM_WORLD,
          refused_log);
        solid.setup();
      }
    catch (const std::exception &error)
      {
        message = error.what();
      }
    const bool refused =
      Utilities::MPI::min(message.find("Surface loads/Pressure") !=
                                std::string::npos &&
                              message.find("'Solver/Linear solver' = "
                                           "cg-jacobi") != std::string::npos ?
                            1 :
                            0,
                          MPI_COMM_WORLD) == 1;
    report(refused,
           "cg-jacobi with the pressure is refused at set-up naming "
           "'Solver/Linear solver' and 'Surface loads/Pressure'" +
             std::string(message.empty() ? " (it did not refuse)" : ""));
    return Utilities::MPI::min(ok ? 1 : 0, MPI_COMM_WORLD) == 1;
  }

  /**
   * The quarter ring 1 <= R <= 2 of Testing::make_quarter_cylinder(), one
   * layer of thickness 0.2, in a Gmsh file with boundary ids: 1 the inner
   * face, 2 the outer, 3 the plane X = 0, 4 the plane Y = 0, 5 the planes
   * Z = 0 and Z = 0.2. Written by rank 0; returns its name.
   */
  std::string
  write_quarter_cylinder()
  {
    const std::string path = "hyperelastic_distributed_cylinder.msh";
    if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0)
      {
        Triangulation<3> triangulation;
        Testing::make_quarter_cylinder(triangulation, 1);
        for (const auto &face : triangulation.active_face_iterators())
          if (face->at_boundary())
            {
              const Point<3> c = face->center();
              face->set_boundary_id(
                std::abs(c[2]) < 1e-10 || std::abs(c[2] - 0.2) < 1e-10 ? 5 :
                std::abs(c[0]) < 1e-10                                 ? 3 :
                std::abs(c[1]) < 1e-10                                 ? 4 :
                std::hypot(c[0], c[1]) < 1.5                           ? 1 :
                                                                         2);
            }
        GridOut grid_out;
        grid_out.set_flags(GridOutFlags::Msh(true));
        std::ofstream out(path);
        grid_out.write_msh(triangulation, out);
        AssertThrow(out.good(), ExcMessage("Cannot write " + path + "."));
      }
    MPI_Barrier(MPI_COMM_WORLD);
    return path;
  }
} // namespace

int
main(int argc, char *argv[])
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  try
    {
      const std::string bar = "subsection Geometry\n"
                              "  set Bar size = 4, 1, 1\n"
                              "  set Subdivisions = 8, 2, 2\n";
      bool              ok  = run_case("hexahedra with hanging nodes",
                         bar +
                           "  set Cell type = hexahedra\n"
                                         "  set Local refinement steps = 1\nend\n" +
                           solver_entries());
      // Quasi-static Newton steps under a body force, held on a region as
      // well: the tangent of the first iterations is indefinite, where CG
      // must go on as deal.II's SolverCG does.
      ok = run_case("quasi-static hexahedra with hanging nodes and a fixed "
                    "region",
                    "subsection Geometry\n  set Bar size = 4, 1, 1\n"
                    "  set Subdivisions = 6, 2, 2\n"
                    "  set Cell type = hexahedra\n"
                    "  set Local refinement steps = 1\nend\n"
                    "subsection Boundary conditions\n"
                    "  set Fixed region = 0, 0, 0, 0.6, 1, 0.3\nend\n"
                    "subsection Material\n"
                    "  set Body force = 0, 0, -0.5\nend\n"
                    "subsection Time\n  set Mode = quasi-static\n"
                    "  set Time step = 0.1\n  set End time = 1\nend\n" +
                      solver_entries(),
                    {"direct", "cg-chebyshev", "cg-block-jacobi"}) &&
           ok;
      // Rollers on the symmetry planes and a prescribed displacement: the
      // held components and the prescribed values on every rank.
      const std::string extension =
        "subsection Boundary conditions\n  set Fixed boundary ids =\n"
        "  set Load region =\n  set Load = 0, 0, 0\n  set Rollers = 0: x; 2: y; 4: z\n";
      ok = run_case("quasi-static uniaxial extension on rollers",
                    "subsection Geometry\n  set Bar size = 2, 1, 1\n"
                    "  set Subdivisions = 4, 2, 2\n"
                    "  set Cell type = hexahedra\nend\n" +
                      extension +
                      "  set Prescribed displacements = 1: x = 0.5*t\nend\n"
                      "subsection Time\n  set Mode = quasi-static\n"
                      "  set Time step = 0.1\n  set End time = 1\nend\n" +
                      solver_entries()) &&
           ok;
      ok = run_case("dynamic tetrahedra with a prescribed displacement "
                    "region and roller regions",
                    bar + "  set Cell type = tetrahedra\nend\n" +
                      "subsection Boundary conditions\n"
                      "  set Load region =\n  set Load = 0, 0, 0\n"
                      "  set Roller regions = 0, 0, 0, 4, 1, 0: z\n"
                      "  set Prescribed displacement regions = 3.9, 0, 0, "
                      "4, 1, 1: y = 0.05*sin(pi*t)\nend\n" +
                      solver_entries()) &&
           ok;
      ok = run_case("tetrahedra",
                    bar + "  set Cell type = tetrahedra\nend\n" +
                      solver_entries()) &&
           ok;
      // Surface loads: the dead traction's nodal forces summed over the
      // ranks' faces (both backends), and the follower pressure's forces
      // and load stiffness added on the rows' owners, solved by Trilinos'
      // direct solver (LU: the tangent is not symmetric; 'Linear solver'
      // = auto must choose it).
      ok = run_case("dead traction on a block on rollers",
                    traction_block(),
                    {},
                    true,
                    is_uniaxial_state) &&
           ok;
      const std::string cylinder =
        "subsection Geometry\n  set Mesh file = " + write_quarter_cylinder() +
        "\nend\n"
        "subsection Material\n  set Shear modulus = 1\n"
        "  set Lame lambda = 1.5\nend\n"
        "subsection Boundary conditions\n"
        "  set Fixed boundary ids =\n  set Load region =\n"
        "  set Load = 0, 0, 0\n"
        "  set Rollers = 3: x; 4: y; 5: z\nend\n"
        "subsection Surface loads\n"
        "  set Pressure boundary ids = 1\n"
        "  set Pressure = 0.3\n"
        "  set Pressure time function = t\nend\n"
        "subsection Time\n  set Mode = quasi-static\n"
        "  set Time step = 0.1\n  set End time = 1\nend\n" +
        solver_entries();
      ok = run_case("thick cylinder under an internal follower pressure",
                    cylinder,
                    {},
                    true,
                    ran_direct_solver) &&
           ok;
      ok =
        resident_pressure_checks("thick cylinder under a pressure", cylinder) &&
        ok;
      ok =
        Utilities::MPI::min(
          bitwise_repeatable("thick cylinder under a pressure", cylinder) ? 1 :
                                                                            0,
          MPI_COMM_WORLD) == 1 &&
        ok;
      // The pressure on the bar's top face, clamped at X = 0 with a level
      // of local refinement there: hanging nodes on the loaded faces.
      ok = run_case("follower pressure on a bar with hanging nodes",
                    "subsection Geometry\n  set Bar size = 4, 1, 1\n"
                    "  set Subdivisions = 6, 2, 2\n"
                    "  set Cell type = hexahedra\n"
                    "  set Local refinement steps = 1\nend\n"
                    "subsection Boundary conditions\n"
                    "  set Fixed boundary ids = 0\n  set Load region =\n"
                    "  set Load = 0, 0, 0\nend\n"
                    "subsection Surface loads\n"
                    "  set Pressure boundary ids = 5\n"
                    "  set Pressure = 0.05\n"
                    "  set Pressure time function = t\nend\n"
                    "subsection Time\n  set Mode = quasi-static\n"
                    "  set Time step = 0.1\n  set End time = 1\nend\n" +
                      solver_entries(),
                    {},
                    true,
                    ran_direct_solver) &&
           ok;
      // Dynamic steps: the loads at the midpoint configuration and time,
      // scaled by dt/2 as the element forces.
      const std::string dynamic_bar =
        bar + "  set Cell type = hexahedra\nend\n" +
        "subsection Boundary conditions\n  set Fixed boundary ids = 0\n"
        "  set Load region =\n  set Load = 0, 0, 0\nend\n";
      ok = run_case("dynamic bar under a dead traction",
                    dynamic_bar +
                      "subsection Surface loads\n"
                      "  set Traction boundary ids = 1\n"
                      "  set Traction = 0.1, 0, -0.05\nend\n" +
                      solver_entries()) &&
           ok;
      ok = run_case("dynamic bar under a dead traction and a pressure",
                    dynamic_bar +
                      "subsection Surface loads\n"
                      "  set Traction boundary ids = 1\n"
                      "  set Traction = 0.1, 0, -0.05\n"
                      "  set Pressure boundary ids = 5\n"
                      "  set Pressure = 0.05\n"
                      "  set Pressure time function = sin(pi*t)\nend\n" +
                      solver_entries(),
                    {},
                    true,
                    ran_direct_solver) &&
           ok;
      if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0)
        std::cout << (ok ? "PASSED" : "FAILED") << std::endl;
      return ok ? 0 : 1;
    }
  catch (const std::exception &exc)
    {
      std::cerr << "FAILED with an exception: " << exc.what() << std::endl;
      return 1;
    }
}
