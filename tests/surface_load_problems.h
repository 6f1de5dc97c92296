// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_surface_load_problems_h
#define gpu_assembly_tests_surface_load_problems_h

// The problems of the hyperelastic app's surface-load tests, host and GPU:
// a block on rollers under a dead traction, a plane-strain cylinder under
// an internal follower pressure, with their analytic (or independently
// computed) solutions, solved through an IntegratorBackend.

#include <deal.II/base/timer.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/tria.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>

#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <sstream>
#include <vector>

#include "integrator_backend.h"
#include "solid_common.h"
#include "surface_load_setup.h"

namespace Testing
{
  using namespace dealii;
  using namespace Hyperelastic;

  constexpr double mu     = 1.;
  constexpr double lambda = 1.5;

  /// Estimated order of convergence from the last three residuals above
  /// @p floor: log(r_k+1 / r_k) / log(r_k / r_k-1).
  inline double
  convergence_order(const std::vector<double> &residuals, const double floor)
  {
    std::vector<double> r;
    for (const double value : residuals)
      if (value > floor)
        r.push_back(value);
    if (r.size() < 3)
      return 0;
    const std::size_t k = r.size() - 2;
    return std::log(r[k + 1] / r[k]) / std::log(r[k] / r[k - 1]);
  }

  /// A backend for BackendData: make_host_backend or a device one.
  using BackendFactory =
    std::function<std::unique_ptr<IntegratorBackend>(const BackendData &)>;

  /**
   * A problem on one process with the direct solver: rollers on the
   * boundary faces that lie in the planes X_c = value of @p roller_planes
   * (the normal component c held; by default the coordinate planes through
   * the origin), hanging nodes constrained, surface loads set by
   * set_surface_loads().
   */
  class Problem
  {
  public:
    Problem(Triangulation<3>                                   &triangulation,
            const std::vector<std::pair<unsigned int, double>> &roller_planes =
              {{0, 0.}, {1, 0.}, {2, 0.}})
      : discretization(
          make_discretization(triangulation.all_reference_cells_are_simplex()))
      , dof_handler(triangulation)
    {
      dof_handler.distribute_dofs(*discretization.fe);
      DoFTools::make_hanging_node_constraints(dof_handler, constraints);
      std::vector<types::global_dof_index> dofs(
        discretization.fe->n_dofs_per_face());
      for (const auto &cell : dof_handler.active_cell_iterators())
        for (const unsigned int f : cell->face_indices())
          if (cell->at_boundary(f))
            for (const auto &[c, value] : roller_planes)
              {
                bool in_plane = true;
                for (const unsigned int v : cell->face(f)->vertex_indices())
                  in_plane = in_plane && std::abs(cell->face(f)->vertex(v)[c] -
                                                  value) < 1e-12;
                if (!in_plane)
                  continue;
                cell->face(f)->get_dof_indices(dofs);
                for (unsigned int i = 0; i < dofs.size(); ++i)
                  if (discretization.fe->face_system_to_component_index(i)
                          .first == c &&
                      !constraints.is_constrained(dofs[i]))
                    constraints.add_line(dofs[i]);
              }
      constraints.close();
      adapter.reinit(*discretization.mapping,
                     dof_handler,
                     *discretization.quadrature,
                     constraints);
      const GPUAssembly::MeshArrays &a = adapter.get_arrays();
      data.arrays                      = &a;
      data.mu                          = mu;
      data.lambda                      = lambda;
      data.lumped_mass.assign(a.n_dofs, 1.);
      data.load_pattern.assign(a.n_dofs, 0.);
      data.linear_solver.solver = LinearSolver::direct;
      for (unsigned int row = 0; row < a.n_dofs; ++row)
        data.diagonal_index.push_back(
          std::lower_bound(a.column_indices.begin() + a.row_offsets[row],
                           a.column_indices.begin() + a.row_offsets[row + 1],
                           int(row)) -
          a.column_indices.begin());
      solver.newton_tolerance      = 1e-12;
      solver.max_newton_iterations = 30;
      solver.divergence_limit      = 1e3;
      solver.cg_tolerance          = 1e-12;
      solver.max_cg_iterations     = 1000;
    }

    /// The surface loads: @p traction on @p traction_faces, a pressure on
    /// @p pressure_faces.
    void
    set_surface_loads(const BoundaryFaces &traction_faces,
                      const Tensor<1, 3>  &traction,
                      const BoundaryFaces &pressure_faces,
                      const bool           load_stiffness = true)
    {
      data.surface_loads = make_surface_load_data(*discretization.mapping,
                                                  dof_handler,
                                                  constraints,
                                                  adapter.get_arrays(),
                                                  traction_faces,
                                                  traction,
                                                  pressure_faces);
      data.surface_loads.load_stiffness = load_stiffness;
    }

    /// The boundary faces whose vertices all satisfy @p on_face.
    BoundaryFaces
    faces_where(const std::function<bool(const Point<3> &)> &on_face) const
    {
      BoundaryFaces faces;
      for (const auto &cell : dof_handler.active_cell_iterators())
        for (const unsigned int f : cell->face_indices())
          if (cell->at_boundary(f))
            {
              bool all = true;
              for (const unsigned int v : cell->face(f)->vertex_indices())
                all = all && on_face(cell->face(f)->vertex(v));
              if (all)
                faces.emplace_back(cell, f);
            }
      return faces;
    }

    /**
     * Load steps from zero to @p traction_amplitude and @p pressure in
     * @p n_steps equal increments (quasi-static, or time steps of @p dt
     * with the unit lumped mass) on the backend @p make_backend makes; the
     * Newton reports of the steps.
     */
    std::vector<StepReport>
    solve(const double          traction_amplitude,
          const double          pressure,
          const unsigned int    n_steps,
          const BackendFactory &make_backend = make_host_backend,
          const double          dt           = 0)
    {
      backend                   = make_backend(data);
      const unsigned int n_dofs = adapter.get_arrays().n_dofs;
      backend->set_state(std::vector<double>(n_dofs, 0.),
                         std::vector<double>(n_dofs, 0.));
      std::ostringstream quiet;
      ConditionalOStream pcout(quiet, false);
      TimerOutput timer(pcout, TimerOutput::never, TimerOutput::wall_times);
      const auto  step_loads = [&](const unsigned int s) {
        StepLoads loads;
        loads.dt                 = dt;
        loads.traction_amplitude = traction_amplitude * s / n_steps;
        loads.pressure           = pressure * s / n_steps;
        return loads;
      };
      // The device direct solver's analysis, at the first step's loads.
      backend->setup_linear_solver(step_loads(1));
      std::vector<StepReport> reports;
      for (unsigned int s = 1; s <= n_steps; ++s)
        {
          const StepLoads loads = step_loads(s);
          reports.push_back(run_newton_loop(*backend, loads, solver, timer));
          if (reports.back().status != StepStatus::converged)
            break;
          backend->finish_step(loads);
        }
      return reports;
    }

    /// The current position of every node: (X, x).
    std::vector<std::pair<Point<3>, Point<3>>>
    positions() const
    {
      std::vector<double> u, p;
      backend->get_state(u, p);
      const GPUAssembly::MeshArrays             &a = adapter.get_arrays();
      std::vector<std::pair<Point<3>, Point<3>>> result;
      for (unsigned int n = 0; n < a.n_nodes; ++n)
        {
          Point<3> X, x;
          for (unsigned int c = 0; c < 3; ++c)
            {
              X[c] = a.nodal_coordinates[n * 3 + c];
              x[c] = X[c] + u[a.node_dofs[n * 3 + c]];
            }
          result.emplace_back(X, x);
        }
      return result;
    }

    Discretization                     discretization;
    DoFHandler<3>                      dof_handler;
    AffineConstraints<double>          constraints;
    GPUAssembly::DoFHandlerAdapter<3>  adapter;
    BackendData                        data;
    Parameters::Solver                 solver;
    std::unique_ptr<IntegratorBackend> backend;
  };



  // First Piola stress of the neo-Hookean model (the kernel's P = mu F +
  // (lambda ln J - mu) F^-T) for principal stretches: the component along
  // the stretch l of the pair (l, the product of the other two, J).
  inline double
  principal_piola(const double l, const double J)
  {
    return mu * l + (lambda * std::log(J) - mu) / l;
  }

  /**
   * Homogeneous uniaxial traction T on rollers: stretches (l1, l2, l2)
   * with P_11 = T, P_22 = P_33 = 0. Subtracting the two equations
   * (times l1 and l2) gives l2^2 = l1^2 - T l1 / mu, which leaves one
   * equation in l1, solved by bisection to round-off.
   */
  inline std::pair<double, double>
  uniaxial_stretches(const double T)
  {
    const auto l2 = [&](const double l1) {
      return std::sqrt(l1 * l1 - T * l1 / mu);
    };
    const auto g = [&](const double l1) {
      return principal_piola(l1, l1 * l2(l1) * l2(l1)) - T;
    };
    double low = std::max(1., T / mu) + 1e-14, high = 10.;
    for (unsigned int it = 0; it < 200; ++it)
      {
        const double mid          = 0.5 * (low + high);
        (g(mid) > 0 ? high : low) = mid;
      }
    const double l1 = 0.5 * (low + high);
    return {l1, l2(l1)};
  }



  /**
   * Plane-strain cylinder A <= R <= B under internal pressure p on the
   * current surface: r(R) from the radial equilibrium dP_RR/dR + (P_RR -
   * P_TT)/R = 0 with the stretches (r', r/R, 1), P_RR(A) = -p r(A)/A (the
   * follower load, p cof(F) N) and P_RR(B) = 0, by shooting on r(A) with
   * RK4. Returns r(A) and r(B).
   */
  inline std::pair<double, double>
  cylinder_radii(const double A, const double B, const double p)
  {
    // The radial stretch whose P_RR is P at hoop stretch lt (Newton; P_RR
    // grows with the radial stretch).
    const auto radial_stretch = [&](const double P, const double lt) {
      double lr = 1.;
      for (unsigned int it = 0; it < 100; ++it)
        {
          const double J = lr * lt;
          const double f = principal_piola(lr, J) - P;
          const double df =
            mu + (lambda - (lambda * std::log(J) - mu)) / (lr * lr);
          const double step = f / df;
          lr -= step;
          if (std::abs(step) < 1e-15 * lr)
            break;
        }
      return lr;
    };
    const auto rhs = [&](const double R, const std::array<double, 2> &y) {
      const double lt = y[0] / R;
      const double lr = radial_stretch(y[1], lt);
      return std::array<double, 2>{lr,
                                   (principal_piola(lt, lr * lt) - y[1]) / R};
    };
    const unsigned int n_steps = 4000;
    const auto         shoot   = [&](const double rA) {
      std::array<double, 2> y = {rA, -p * rA / A};
      const double          h = (B - A) / n_steps;
      for (unsigned int s = 0; s < n_steps; ++s)
        {
          const double R  = A + s * h;
          const auto   k1 = rhs(R, y);
          const auto   k2 =
            rhs(R + h / 2, {y[0] + h / 2 * k1[0], y[1] + h / 2 * k1[1]});
          const auto k3 =
            rhs(R + h / 2, {y[0] + h / 2 * k2[0], y[1] + h / 2 * k2[1]});
          const auto k4 = rhs(R + h, {y[0] + h * k3[0], y[1] + h * k3[1]});
          for (unsigned int i = 0; i < 2; ++i)
            y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
        }
      return y;
    };
    // P_RR(B) grows with r(A): bisection on r(A).
    double low = A, high = 3 * A;
    for (unsigned int it = 0; it < 60; ++it)
      {
        const double mid                 = 0.5 * (low + high);
        (shoot(mid)[1] > 0 ? high : low) = mid;
      }
    const double rA = 0.5 * (low + high);
    return {rA, shoot(rA)[0]};
  }



  /// Quarter of the ring 1 <= R <= 2 in the plane, refined @p n_refinements
  /// times on its circles, extruded to one layer of thickness 0.2.
  inline void
  make_quarter_cylinder(Triangulation<3>  &triangulation,
                        const unsigned int n_refinements)
  {
    Triangulation<2> ring;
    GridGenerator::quarter_hyper_shell(ring, Point<2>(), 1., 2., 0, false);
    ring.refine_global(n_refinements);
    Triangulation<2> flat;
    GridGenerator::flatten_triangulation(ring, flat);
    GridGenerator::extrude_triangulation(flat, 2, 0.2, triangulation);
  }

  struct CylinderResult
  {
    double                  error_inner = 0, error_outer = 0;
    double                  u_inner = 0;
    std::vector<StepReport> reports;
    /// The nodes' reference and current positions.
    std::vector<std::pair<Point<3>, Point<3>>> positions;
  };

  inline CylinderResult
  run_cylinder(const unsigned int    n_refinements,
               const double          p,
               const unsigned int    n_steps,
               const bool            load_stiffness,
               const unsigned int    max_iterations = 30,
               const BackendFactory &make_backend   = make_host_backend,
               const double          dt             = 0)
  {
    Triangulation<3> triangulation;
    make_quarter_cylinder(triangulation, n_refinements);
    // Plane strain: u_z held on both faces of the layer.
    Problem    problem(triangulation, {{0, 0.}, {1, 0.}, {2, 0.}, {2, 0.2}});
    const auto radius = [](const Point<3> &x) {
      return std::hypot(x[0], x[1]);
    };
    problem.set_surface_loads({},
                              Tensor<1, 3>(),
                              problem.faces_where([&](const Point<3> &X) {
                                return std::abs(radius(X) - 1.) < 1e-10;
                              }),
                              load_stiffness);
    problem.solver.max_newton_iterations = max_iterations;
    CylinderResult result;
    result.reports = problem.solve(0., p, n_steps, make_backend, dt);
    if (result.reports.back().status != StepStatus::converged)
      return result;
    result.positions    = problem.positions();
    const auto [rA, rB] = cylinder_radii(1., 2., p);
    result.u_inner      = rA - 1.;
    for (const auto &[X, x] : result.positions)
      {
        if (std::abs(radius(X) - 1.) < 1e-10)
          result.error_inner =
            std::max(result.error_inner, std::abs(radius(x) - rA));
        if (std::abs(radius(X) - 2.) < 1e-10)
          result.error_outer =
            std::max(result.error_outer, std::abs(radius(x) - rB));
      }
    return result;
  }



} // namespace Testing

#endif
