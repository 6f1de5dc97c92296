// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_pattern_cases_h
#define gpu_assembly_tests_pattern_cases_h

// The meshes on which the pattern and K built by sorting (on the host and
// on the device) are compared with the adapter's row-by-row host build:
// hanging nodes, periodicity with hanging nodes, chained user lines,
// tetrahedra with Dirichlet lines, and the benchmark's cube with a refined
// octant; each with and without keep_constrained_dofs.

#include <deal.II/grid/grid_generator.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/adapter/mesh_arrays.h>

#include <string>
#include <vector>

#include "constraint_problems.h"
#include "tests.h"

namespace Testing
{
  /// The subdivided unit cube with its octant at the origin refined once,
  /// FE_Q(1)^3, hanging-node and zero Dirichlet constraints
  /// (assembly_benchmark --hanging-nodes).
  inline void
  setup_refined_octant(TestProblem<3> &problem, const unsigned int n)
  {
    problem.simplex      = false;
    problem.degree       = 1;
    problem.n_components = 3;
    GridGenerator::subdivided_hyper_cube(problem.tria, n);
    for (const auto &cell : problem.tria.active_cell_iterators())
      {
        const Point<3> c = cell->center();
        if (c[0] < 0.5 && c[1] < 0.5 && c[2] < 0.5)
          cell->set_refine_flag();
      }
    problem.tria.execute_coarsening_and_refinement();
    problem.fe         = std::make_unique<FESystem<3>>(FE_Q<3>(1), 3);
    problem.mapping    = std::make_unique<MappingQ<3>>(1);
    problem.quadrature = std::make_unique<QGauss<3>>(2);
    distribute_problem_dofs(problem, true);
    problem.constraints.clear();
    DoFTools::make_hanging_node_constraints(problem.dof_handler,
                                            problem.constraints);
    VectorTools::interpolate_boundary_values(*problem.mapping,
                                             problem.dof_handler,
                                             0,
                                             Functions::ZeroFunction<3>(3),
                                             problem.constraints);
    problem.constraints.close();
  }

  /**
   * Call @p visit(name, problem) for every problem of the comparison, a
   * TestProblem<2> or TestProblem<3>; @p large adds the refined octant of
   * 16^3 cells, whose keys fill many thread blocks.
   */
  template <typename Visit>
  void
  for_each_pattern_case(const bool large, const Visit &visit)
  {
    const auto constrained = [&](auto                  dim_tag,
                                 const ConstrainedCase c,
                                 const unsigned int    degree,
                                 const unsigned int    n_components) {
      constexpr int    dim = decltype(dim_tag)::value;
      TestProblem<dim> problem;
      setup_constrained_problem(problem, c, degree, n_components);
      visit(std::to_string(dim) + "D " + to_string(c) + ", " +
              problem.fe->get_name(),
            problem);
    };
    using Two   = std::integral_constant<int, 2>;
    using Three = std::integral_constant<int, 3>;
    constrained(Three(), ConstrainedCase::refined_ball, 1, 3);
    constrained(Two(), ConstrainedCase::refined_ball_inhomogeneous, 2, 1);
    constrained(Three(), ConstrainedCase::periodic_cube, 1, 3);
    constrained(Two(), ConstrainedCase::periodic_cube, 2, 2);
    constrained(Two(), ConstrainedCase::chained, 1, 2);
    constrained(Three(), ConstrainedCase::chained, 2, 1);
    for (const unsigned int degree : {1u, 2u})
      {
        TestProblem<3> problem;
        setup_problem(problem,
                      true,
                      degree,
                      3,
                      ConstraintKind::inhomogeneous,
                      true,
                      3);
        visit("3D tetrahedra, Dirichlet lines, " + problem.fe->get_name(),
              problem);
      }
    {
      TestProblem<2> problem;
      setup_problem(problem, true, 1, 1, ConstraintKind::none, true, 6);
      visit("2D triangles without constraints, " + problem.fe->get_name(),
            problem);
    }
    {
      TestProblem<3> problem;
      setup_refined_octant(problem, large ? 16 : 4);
      visit("3D cube with a refined octant, " + problem.fe->get_name(),
            problem);
    }
  }

  /**
   * Call @p visit(data, what) with the adapter's AdditionalData for
   * keep_constrained_dofs true and false, and @p name with the choice.
   */
  template <int dim, typename Visit>
  void
  for_each_keep_constrained_dofs(const std::string &name, const Visit &visit)
  {
    for (const bool keep : {true, false})
      {
        typename GPUAssembly::DoFHandlerAdapter<dim>::AdditionalData data;
        data.keep_constrained_dofs = keep;
        visit(data,
              name + (keep ? ", keep_constrained_dofs" :
                             ", constrained DoFs dropped"));
      }
  }

  /// The index of the first entry where @p a and @p b differ (their
  /// common length where one is a prefix of the other), or -1.
  template <typename T>
  long long
  first_difference(const std::vector<T> &a, const std::vector<T> &b)
  {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i)
      if (a[i] != b[i])
        return static_cast<long long>(i);
    return a.size() == b.size() ? -1 : static_cast<long long>(n);
  }

  /// One check that the array @p name of @p built equals that of
  /// @p reference (@p whose: "the host build's"), entry for entry, naming
  /// the first difference; returns whether it does.
  template <typename T>
  bool
  check_same_array(Checks               &checks,
                   const std::string    &what,
                   const std::vector<T> &built,
                   const std::vector<T> &reference,
                   const std::string    &name,
                   const std::string    &whose)
  {
    const long long i = first_difference(built, reference);
    checks.check(i < 0,
                 what + ": " + name + " (" + std::to_string(reference.size()) +
                   " entries) equals " + whose +
                   (i < 0 ?
                      std::string() :
                      " (first difference at " + std::to_string(i) +
                        ", sizes " + std::to_string(built.size()) + " and " +
                        std::to_string(reference.size()) + ")"));
    return i < 0;
  }

  /// One check per array: @p built's pattern and K equal @p reference's,
  /// entry for entry.
  inline void
  check_same_pattern(Checks                        &checks,
                     const std::string             &what,
                     const GPUAssembly::MeshArrays &reference,
                     const GPUAssembly::MeshArrays &built)
  {
    const std::string whose = "the host build's";
    check_same_array(checks,
                     what,
                     built.row_offsets,
                     reference.row_offsets,
                     "row_offsets",
                     whose);
    check_same_array(checks,
                     what,
                     built.column_indices,
                     reference.column_indices,
                     "column_indices",
                     whose);
    check_same_array(checks,
                     what,
                     built.nonzero_map,
                     reference.nonzero_map,
                     "nonzero_map K",
                     whose);
  }
} // namespace Testing

#endif
