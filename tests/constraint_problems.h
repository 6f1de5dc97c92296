// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_constraint_problems_h
#define gpu_assembly_tests_constraint_problems_h

// Discretizations with constraints that have entries, as deal.II programs
// make them: an adaptively refined ball with hanging nodes (step-6, step-8),
// a periodic cube, and user lines chained to hanging nodes and Dirichlet
// values.

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>

#include "test_problems.h"

namespace Testing
{
  enum class ConstrainedCase
  {
    /// Locally refined ball, hanging nodes + homogeneous Dirichlet on the
    /// whole boundary (step-6).
    refined_ball,
    /// Locally refined ball, hanging nodes + inhomogeneous Dirichlet on the
    /// half x < 0 of the boundary.
    refined_ball_inhomogeneous,
    /// Cube periodic in x (and hanging nodes from a local refinement),
    /// inhomogeneous Dirichlet at y = 0.
    periodic_cube,
    /// refined_ball_inhomogeneous plus user lines, one chained to another
    /// and to hanging and Dirichlet DoFs, with inhomogeneities.
    chained
  };

  inline std::string
  to_string(const ConstrainedCase c)
  {
    switch (c)
      {
        case ConstrainedCase::refined_ball:
          return "refined ball (hanging nodes, homogeneous Dirichlet)";
        case ConstrainedCase::refined_ball_inhomogeneous:
          return "refined ball (hanging nodes, inhomogeneous Dirichlet)";
        case ConstrainedCase::periodic_cube:
          return "periodic cube (periodicity, hanging nodes, inhomogeneous "
                 "Dirichlet)";
        case ConstrainedCase::chained:
          return "refined ball with chained user lines";
      }
    return "";
  }

  // Refine the cells near a point twice, as an error estimator would near a
  // singularity: hanging nodes of two levels.
  template <int dim>
  void
  refine_near(Triangulation<dim> &tria, const Point<dim> &center)
  {
    for (unsigned int step = 0; step < 2; ++step)
      {
        for (const auto &cell : tria.active_cell_iterators())
          if (cell->center().distance(center) < 0.45 / (step + 1))
            cell->set_refine_flag();
        tria.execute_coarsening_and_refinement();
      }
  }



  template <int dim>
  void
  setup_constrained_problem(TestProblem<dim>     &problem,
                            const ConstrainedCase constrained_case,
                            const unsigned int    degree,
                            const unsigned int    n_components,
                            const unsigned int    extra_refinements = 0,
                            const bool            renumber          = true)
  {
    problem.simplex      = false;
    problem.degree       = degree;
    problem.n_components = n_components;

    Point<dim> center;
    for (unsigned int d = 0; d < dim; ++d)
      center[d] = 0.3 - 0.1 * d;
    const bool periodic = constrained_case == ConstrainedCase::periodic_cube;
    if (periodic)
      {
        GridGenerator::hyper_cube(problem.tria, 0., 1., true);
        problem.tria.refine_global((dim == 2 ? 2 : 1) + extra_refinements);
        // Interior vertices only, so that periodic faces still match.
        GridTools::distort_random(0.2, problem.tria, true, 4321);
        refine_near(problem.tria, center);
      }
    else
      {
        GridGenerator::hyper_ball(problem.tria);
        problem.tria.refine_global(1 + extra_refinements);
        refine_near(problem.tria, center);
        for (const auto &cell : problem.tria.active_cell_iterators())
          for (const auto &face : cell->face_iterators())
            if (face->at_boundary())
              face->set_boundary_id(constrained_case ==
                                          ConstrainedCase::refined_ball ||
                                        face->center()[0] < 0. ?
                                      1 :
                                      0);
      }

    const FE_Q<dim> base(degree);
    if (n_components == 1)
      problem.fe = std::make_unique<FE_Q<dim>>(degree);
    else
      problem.fe = std::make_unique<FESystem<dim>>(base, n_components);
    problem.mapping    = std::make_unique<MappingQ<dim>>(1);
    problem.quadrature = std::make_unique<QGauss<dim>>(degree + 1);
    distribute_problem_dofs(problem, renumber);

    AffineConstraints<double> &constraints = problem.constraints;
    constraints.clear();
    DoFTools::make_hanging_node_constraints(problem.dof_handler, constraints);
    if (periodic)
      DoFTools::make_periodicity_constraints(problem.dof_handler,
                                             0,
                                             1,
                                             0,
                                             constraints);
    const types::boundary_id dirichlet_id = periodic ? 2 : 1;
    if (constrained_case == ConstrainedCase::refined_ball)
      VectorTools::interpolate_boundary_values(*problem.mapping,
                                               problem.dof_handler,
                                               dirichlet_id,
                                               Functions::ZeroFunction<dim>(
                                                 n_components),
                                               constraints);
    else
      VectorTools::interpolate_boundary_values(*problem.mapping,
                                               problem.dof_handler,
                                               dirichlet_id,
                                               BoundaryValues<dim>(
                                                 n_components),
                                               constraints);

    if (constrained_case == ConstrainedCase::chained)
      {
        // Free DoFs picked spread over the numbering: a depends on b (so
        // close() resolves the chain), on a hanging-node DoF's masters and
        // on a Dirichlet DoF, each line with an inhomogeneity.
        std::vector<types::global_dof_index> free;
        for (types::global_dof_index i = 0; i < problem.dof_handler.n_dofs();
             ++i)
          if (!constraints.is_constrained(i))
            free.push_back(i);
        const auto pick = [&](const double fraction) {
          return free[static_cast<std::size_t>(fraction * (free.size() - 1))];
        };
        types::global_dof_index hanging   = numbers::invalid_dof_index,
                                dirichlet = numbers::invalid_dof_index;
        for (const auto &line : constraints.get_lines())
          if (!line.entries.empty() && hanging == numbers::invalid_dof_index)
            hanging = line.index;
          else if (line.entries.empty() &&
                   dirichlet == numbers::invalid_dof_index)
            dirichlet = line.index;
        const auto a = pick(0.2), b = pick(0.5), c = pick(0.7), d = pick(0.9);
        constraints.add_line(a);
        constraints.add_entry(a, b, 0.5);
        constraints.add_entry(a, c, -0.25);
        constraints.add_entry(a, hanging, 0.75);
        constraints.add_entry(a, dirichlet, 1.5);
        constraints.set_inhomogeneity(a, 0.3);
        constraints.add_line(b);
        constraints.add_entry(b, d, 2.);
        constraints.add_entry(b, c, 0.125);
        constraints.set_inhomogeneity(b, -0.2);
      }
    constraints.close();
  }
} // namespace Testing

#endif
