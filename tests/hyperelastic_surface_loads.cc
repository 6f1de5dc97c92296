// SPDX-License-Identifier: LGPL-2.1-or-later
// The hyperelastic app's surface loads on the host path, against analytic
// solutions: a block under a uniform dead traction on rollers takes the
// homogeneous finite-strain neo-Hookean state on any mesh (graded,
// distorted, locally refined, tetrahedral); a thick-walled cylinder in plane
// strain under an internal follower pressure converges to the radial solution
// of a 1D shooting method; Newton converges quadratically with the
// pressure's load stiffness and only linearly without it; and the app
// refuses entries that cannot work, naming them.

#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

#include "boundary_output.h"
#include "hyperelastic_test_utilities.h"
#include "surface_load_problems.h"
#include "tests.h"

namespace
{
  using namespace Testing;

  std::string
  residual_list(const std::vector<double> &residuals)
  {
    std::string text;
    for (const double r : residuals)
      text += (text.empty() ? "" : " ") + scientific(r);
    return text;
  }
} // namespace



int
main()
{
  Checks checks;

  // (a) A uniform dead traction T e_x on the face x = 1 of the unit block
  // on rollers at x = 0, y = 0, z = 0: the homogeneous state
  // x = (l1 X, l2 Y, l2 Z), which linear hexahedra hold exactly on any
  // mesh, so the nodes reach it to round-off.
  {
    const double T              = 0.4;
    const auto [l1, l2]         = uniaxial_stretches(T);
    const auto check_block_mesh = [&](Triangulation<3>  &triangulation,
                                      const std::string &mesh) {
      Problem problem(triangulation);
      problem.set_surface_loads(problem.faces_where([](const Point<3> &X) {
        return std::abs(X[0] - 1.) < 1e-12;
      }),
                                Tensor<1, 3>({T, 0., 0.}),
                                {});
      const auto reports = problem.solve(1., 0., 2);
      double     error   = 0;
      for (const auto &[X, x] : problem.positions())
        error = std::max({error,
                          std::abs(x[0] - l1 * X[0]),
                          std::abs(x[1] - l2 * X[1]),
                          std::abs(x[2] - l2 * X[2])});
      // The boundary file: its fields named as the docs say.
      const std::string   boundary_file = "surface_loads_block_boundary.vtu";
      std::vector<double> u, p;
      problem.backend->get_state(u, p);
      write_boundary_vtu(*problem.discretization.mapping,
                         problem.dof_handler,
                         Vector<double>(u.begin(), u.end()),
                         mu,
                         lambda,
                         boundary_file);
      std::ifstream     file(boundary_file);
      const std::string text((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
      checks.check(text.find("Name=\"first_Piola_traction\"") !=
                       std::string::npos &&
                     text.find("Name=\"Cauchy_stress\"") != std::string::npos,
                   "the boundary VTU of the " + mesh +
                     " mesh has the fields first_Piola_traction and "
                     "Cauchy_stress");
      double total_force = 0;
      for (const double f : problem.data.surface_loads.traction_pattern)
        total_force += f;
      checks.check(reports.back().status == StepStatus::converged &&
                     error < 1e-10 && std::abs(total_force - T) < 1e-13,
                   "uniaxial dead traction T = " + scientific(T) + " on the " +
                     mesh +
                     " mesh: largest nodal distance to the "
                     "homogeneous state (l1 = " +
                     std::to_string(l1) + ", l2 = " + std::to_string(l2) +
                     ") " + scientific(error) +
                     " < 1e-10, and the consistent nodal forces sum to T "
                     "times the face's area (" +
                     scientific(total_force) + ")");
    };

    Triangulation<3> graded;
    GridGenerator::subdivided_hyper_rectangle(graded,
                                              {{0.1, 0.3, 0.6},
                                               {0.2, 0.8},
                                               {0.7, 0.3}},
                                              Point<3>(),
                                              Point<3>(1., 1., 1.));
    check_block_mesh(graded, "graded");

    Triangulation<3> distorted;
    GridGenerator::subdivided_hyper_cube(distorted, 3);
    GridTools::distort_random(0.25, distorted, true, 1);
    check_block_mesh(distorted, "distorted");

    // Hanging nodes on the loaded face and on two roller faces.
    Triangulation<3> refined;
    GridGenerator::subdivided_hyper_cube(refined, 2);
    for (const auto &cell : refined.active_cell_iterators())
      if (cell->center()[0] > 0.5 && cell->center()[1] < 0.5)
        cell->set_refine_flag();
    refined.execute_coarsening_and_refinement();
    check_block_mesh(refined, "locally refined");

    // Linear tetrahedra: triangular faces, their 3-point rule.
    Triangulation<3> tetrahedra;
    GridGenerator::subdivided_hyper_rectangle_with_simplices(tetrahedra,
                                                             {2, 3, 2},
                                                             Point<3>(),
                                                             Point<3>(1.,
                                                                      1.,
                                                                      1.));
    check_block_mesh(tetrahedra, "tetrahedral");
  }

  // (b) The cylinder's radii converge to those of the radial solution at
  // second order in the mesh size.
  {
    const double         p      = 0.4;
    const CylinderResult coarse = run_cylinder(2, p, 4, true);
    const CylinderResult fine   = run_cylinder(3, p, 4, true);
    const double         ratio  = coarse.error_inner / fine.error_inner;
    checks.check(
      fine.reports.back().status == StepStatus::converged &&
        fine.error_inner < 5e-3 * fine.u_inner &&
        fine.error_outer < 5e-3 * fine.u_inner && ratio > 3.,
      "cylinder 1 <= R <= 2 under follower pressure " + scientific(p) +
        ": inner radius error " + scientific(coarse.error_inner) + " -> " +
        scientific(fine.error_inner) + " (ratio " + std::to_string(ratio) +
        " > 3, second order), outer radius error " +
        scientific(fine.error_outer) +
        ", both < 0.5 % of the inner displacement " + scientific(fine.u_inner));

    // (c) One load step: quadratic convergence with the load stiffness,
    // linear without it. The order comes from the residuals above 1e-7 of
    // the first: below, the direct solve's round-off (times the tangent)
    // dominates and hides it.
    const CylinderResult with    = run_cylinder(2, p, 1, true);
    const CylinderResult without = run_cylinder(2, p, 1, false, 60);
    const auto          &r_with  = with.reports.back().residuals;
    const auto          &r_wo    = without.reports.back().residuals;
    const double order_with = convergence_order(r_with, 1e-7 * r_with.front());
    const double order_without = convergence_order(r_wo, 1e-7 * r_wo.front());
    checks.check(with.reports.back().status == StepStatus::converged &&
                   order_with > 1.7,
                 "with the load stiffness Newton converges quadratically: "
                 "residuals " +
                   residual_list(r_with) + ", order " +
                   std::to_string(order_with) + " > 1.7");
    checks.check(without.reports.back().status == StepStatus::converged &&
                   order_without < 1.3 && r_wo.size() > r_with.size(),
                 "without it only linearly: residuals " + residual_list(r_wo) +
                   ", order " + std::to_string(order_without) +
                   " < 1.3, more iterations");

    // Dynamic steps evaluate the pressure at the midpoint, its force and
    // load stiffness scaled as the element's (dt/2, dt/4): Newton stays
    // quadratic. A long step, so that the unit lumped mass' m/dt does not
    // dominate the tangent and Newton takes enough iterations to show it.
    const CylinderResult dynamic =
      run_cylinder(2, p, 1, true, 30, make_host_backend, 4.);
    const auto  &r_dynamic = dynamic.reports.back().residuals;
    const double order_dynamic =
      convergence_order(r_dynamic, 1e-7 * r_dynamic.front());
    checks.check(dynamic.reports.back().status == StepStatus::converged &&
                   order_dynamic > 1.7,
                 "a dynamic step (dt = 4) with the pressure converges "
                 "quadratically: residuals " +
                   residual_list(r_dynamic) + ", order " +
                   std::to_string(order_dynamic) + " > 1.7");
  }

  // The app refuses what cannot work, naming the entries.
  {
    const std::string bar =
      prm_subsection("Geometry",
                     {"Bar size = 2, 1, 1", "Subdivisions = 2, 1, 1"}) +
      prm_subsection("Execution", {"Device = host"}) +
      prm_subsection("Boundary conditions",
                     {"Load region = ", "Load = 0, 0, 0"}) +
      prm_subsection("Time", {"Mode = quasi-static"});
    std::ostringstream log;
    checks.check_throws<ExceptionBase>(
      [&]() {
        run_hyperelastic(bar + prm_subsection("Surface loads",
                                              {"Traction region = 5, 5, 5, "
                                               "6, 6, 6",
                                               "Traction = 1, 0, 0"}),
                         0,
                         log);
      },
      "'Surface loads/Traction region' = 'a box' select no boundary face",
      "a traction region that selects no face is refused, naming the entry");
    // CG with a pressure; BiCGStab, which only the resident backend on
    // MPI ranks offers, on one process.
    for (const auto &[solver, expected, what] :
         {std::array<std::string, 3>{
            "cg-jacobi",
            "'Solver/Linear solver' = cg-jacobi solves symmetric systems only",
            "CG with a follower pressure is refused, naming the entries"},
          std::array<std::string, 3>{
            "bicgstab-jacobi",
            "'Solver/Linear solver' = bicgstab-jacobi is offered by the "
            "resident backend on MPI ranks only",
            "BiCGStab on one process is refused, naming the entries"}})
      checks.check_throws<ExceptionBase>(
        [&]() {
          run_hyperelastic(bar +
                             prm_subsection("Surface loads",
                                            {"Pressure region = 2, 0, 0, 2, "
                                             "1, 1",
                                             "Pressure = 0.1"}) +
                             prm_subsection("Solver",
                                            {"Linear solver = " + solver}),
                           0,
                           log);
        },
        expected,
        what);

    // auto resolves to the direct solver with a pressure, and the
    // pressure on the free end then moves it.
    auto solid =
      run_hyperelastic(bar + prm_subsection("Surface loads",
                                            {"Pressure region = 2, 0, 0, 2, "
                                             "1, 1",
                                             "Pressure = 0.1"}),
                       1,
                       log);
    double end_displacement = 0;
    for (const auto &node : solid->gather_nodal_state(0))
      if (std::abs(node.position[0] - 2.) < 1e-12)
        end_displacement += node.u[0];
    checks.check(solid->linear_solver() == LinearSolver::direct &&
                   end_displacement < 0.,
                 "'Linear solver' = auto with a pressure runs the direct "
                 "solver, and the pressure on the free end pushes it in -x "
                 "(summed x-displacement " +
                   scientific(end_displacement) + ")");
  }

  return checks.exit_code();
}
