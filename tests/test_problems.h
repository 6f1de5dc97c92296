// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_test_problems_h
#define gpu_assembly_tests_test_problems_h

#include <deal.II/base/function.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_renumbering.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/tria.h>

#include <deal.II/lac/affine_constraints.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>

#include <memory>
#include <sstream>
#include <string>

/**
 * Small but non-trivial discretizations shared by the tests: distorted
 * (non-affine) meshes of the unit square or cube, every supported element,
 * and Dirichlet constraints on part of the boundary.
 */
namespace Testing
{
  using namespace dealii;

  enum class ConstraintKind
  {
    none,
    homogeneous,
    inhomogeneous
  };

  inline std::string
  to_string(const ConstraintKind kind)
  {
    return kind == ConstraintKind::none        ? "no constraints" :
           kind == ConstraintKind::homogeneous ? "homogeneous Dirichlet" :
                                                 "inhomogeneous Dirichlet";
  }

  /// A boundary value that is not constant, so inhomogeneities differ.
  template <int dim>
  class BoundaryValues : public Function<dim>
  {
  public:
    explicit BoundaryValues(const unsigned int n_components)
      : Function<dim>(n_components)
    {}

    double
    value(const Point<dim> &p, const unsigned int component) const override
    {
      return 0.25 + p[0] - 0.5 * p[1] + 0.1 * component + p.square();
    }
  };

  template <int dim>
  struct TestProblem
  {
    bool         simplex;
    unsigned int degree;
    unsigned int n_components;

    Triangulation<dim>                  tria;
    std::unique_ptr<FiniteElement<dim>> fe;
    std::unique_ptr<Mapping<dim>>       mapping;
    std::unique_ptr<Quadrature<dim>>    quadrature;
    DoFHandler<dim>                     dof_handler;
    AffineConstraints<double>           constraints;

    std::string
    name() const
    {
      std::ostringstream out;
      out << dim << "D " << fe->get_name();
      return out.str();
    }
  };

  /// Distribute the DoFs of the problem's element on its mesh, renumbered
  /// if @p renumber (see setup_problem()).
  template <int dim>
  void
  distribute_problem_dofs(TestProblem<dim> &problem, const bool renumber)
  {
    problem.dof_handler.reinit(problem.tria);
    problem.dof_handler.distribute_dofs(*problem.fe);
    if (renumber)
      {
        DoFRenumbering::Cuthill_McKee(problem.dof_handler);
        if (problem.fe->n_components() > 1)
          DoFRenumbering::component_wise(problem.dof_handler);
      }
  }

  /**
   * Build the problem. @p renumber applies Cuthill-McKee (and, for vector
   * elements, component-wise numbering) so that DoF numbers are not the
   * order of first appearance; the adapter must not depend on that order.
   */
  template <int dim>
  void
  setup_problem(TestProblem<dim>    &problem,
                const bool           simplex,
                const unsigned int   degree,
                const unsigned int   n_components,
                const ConstraintKind constraint_kind,
                const bool           renumber     = false,
                const unsigned int   subdivisions = 3)
  {
    problem.simplex      = simplex;
    problem.degree       = degree;
    problem.n_components = n_components;

    if (simplex)
      GridGenerator::subdivided_hyper_cube_with_simplices(problem.tria,
                                                          subdivisions);
    else
      GridGenerator::subdivided_hyper_cube(problem.tria, subdivisions);
    // Interior vertices move, so hypercube cells become non-affine.
    GridTools::distort_random(0.25, problem.tria, true, 1234);
    for (const auto &cell : problem.tria.active_cell_iterators())
      for (const auto &face : cell->face_iterators())
        if (face->at_boundary() && face->center()[0] < 1e-12)
          face->set_boundary_id(1);

    std::unique_ptr<FiniteElement<dim>> base;
    if (simplex)
      {
        base            = std::make_unique<FE_SimplexP<dim>>(degree);
        problem.mapping = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
        problem.quadrature = std::make_unique<QGaussSimplex<dim>>(degree + 1);
      }
    else
      {
        base               = std::make_unique<FE_Q<dim>>(degree);
        problem.mapping    = std::make_unique<MappingQ<dim>>(1);
        problem.quadrature = std::make_unique<QGauss<dim>>(degree + 1);
      }
    if (n_components == 1)
      problem.fe = std::move(base);
    else
      problem.fe = std::make_unique<FESystem<dim>>(*base, n_components);

    distribute_problem_dofs(problem, renumber);

    problem.constraints.clear();
    if (constraint_kind == ConstraintKind::homogeneous)
      VectorTools::interpolate_boundary_values(*problem.mapping,
                                               problem.dof_handler,
                                               1,
                                               Functions::ZeroFunction<dim>(
                                                 n_components),
                                               problem.constraints);
    else if (constraint_kind == ConstraintKind::inhomogeneous)
      VectorTools::interpolate_boundary_values(*problem.mapping,
                                               problem.dof_handler,
                                               1,
                                               BoundaryValues<dim>(
                                                 n_components),
                                               problem.constraints);
    problem.constraints.close();
  }

  /// The adapter of @p problem (its mapping, DoFHandler, quadrature and
  /// constraints) with @p data.
  template <int dim>
  GPUAssembly::DoFHandlerAdapter<dim>
  make_adapter(
    const TestProblem<dim>                                             &problem,
    const typename GPUAssembly::DoFHandlerAdapter<dim>::AdditionalData &data =
      {})
  {
    return GPUAssembly::DoFHandlerAdapter<dim>(*problem.mapping,
                                               problem.dof_handler,
                                               *problem.quadrature,
                                               problem.constraints,
                                               data);
  }
} // namespace Testing

#endif
