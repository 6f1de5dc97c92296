// SPDX-License-Identifier: LGPL-2.1-or-later
// Every unsupported input is refused with an exception that says what is
// wrong: mixed cell types, unsupported elements, DoFHandlers without DoFs,
// constraints that are not closed, inverted elements
// (naming the cell), kernels for the wrong number of components. A failed
// reinit() leaves a previously built adapter unchanged.

#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_dgq.h>
#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>

#include <deal.II/lac/affine_constraints.h>

#include <deal.II/hp/fe_collection.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <cmath>

#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

// Build an adapter for @p dof_handler with a Q1 (or P1) mapping and a Gauss
// rule matching the cell type.
template <int dim>
void
build_adapter(const DoFHandler<dim>           &dof_handler,
              const AffineConstraints<double> &constraints,
              DoFHandlerAdapter<dim>          &adapter)
{
  const bool simplex =
    dof_handler.get_triangulation().get_reference_cells()[0].is_simplex();
  if (simplex)
    adapter.reinit(MappingFE<dim>(FE_SimplexP<dim>(1)),
                   dof_handler,
                   QGaussSimplex<dim>(2),
                   constraints,
                   typename DoFHandlerAdapter<dim>::AdditionalData());
  else
    adapter.reinit(MappingQ<dim>(1),
                   dof_handler,
                   QGauss<dim>(2),
                   constraints,
                   typename DoFHandlerAdapter<dim>::AdditionalData());
}



template <int dim>
void
build_adapter(const DoFHandler<dim> &dof_handler)
{
  AffineConstraints<double> constraints;
  constraints.close();
  DoFHandlerAdapter<dim> adapter;
  build_adapter(dof_handler, constraints, adapter);
}



// An adapter of @p dof_handler with @p mapping and @p quadrature and no
// constraints.
template <int dim>
void
build_adapter(const Mapping<dim>    &mapping,
              const DoFHandler<dim> &dof_handler,
              const Quadrature<dim> &quadrature)
{
  AffineConstraints<double> constraints;
  constraints.close();
  const DoFHandlerAdapter<dim> adapter(mapping,
                                       dof_handler,
                                       quadrature,
                                       constraints);
}



// Checks that build_adapter(@p arguments...) is refused with a message
// holding @p expected.
template <typename... Arguments>
void
check_refused(Testing::Checks   &checks,
              const std::string &expected,
              const std::string &description,
              Arguments &&...arguments)
{
  checks.check_throws<ExcUnsupportedInput>(
    [&]() {
      build_adapter(arguments...);
    },
    expected,
    description);
}



// Moves the interior vertex (2/3, 2/3) of a 3x3 mesh of the unit square
// beyond the opposite corner region of the top-right cell: that cell (8)
// folds over, its three other neighbours only stretch.
void
fold_top_right_cell(Triangulation<2> &tria)
{
  for (const auto &cell : tria.active_cell_iterators())
    for (const unsigned int v : cell->vertex_indices())
      if (cell->vertex(v).distance(Point<2>(2. / 3, 2. / 3)) < 1e-12)
        cell->vertex(v) = Point<2>(0.95, 0.95);
}



void
test_hanging_nodes(Testing::Checks &checks)
{
  Triangulation<2> tria;
  GridGenerator::hyper_cube(tria);
  tria.refine_global(1);
  tria.begin_active()->set_refine_flag();
  tria.execute_coarsening_and_refinement();
  DoFHandler<2> dof_handler(tria);
  dof_handler.distribute_dofs(FE_Q<2>(1));
  checks.check(tria.has_hanging_nodes(),
               "the locally refined mesh has hanging nodes");
  // Accepted with its hanging-node constraints; without them (as here) the
  // adapter cannot know, like deal.II's own assembly.
  AffineConstraints<double> constraints;
  DoFTools::make_hanging_node_constraints(dof_handler, constraints);
  constraints.close();
  DoFHandlerAdapter<2> adapter;
  build_adapter(dof_handler, constraints, adapter);
  checks.check(adapter.get_arrays().n_constraint_lines() ==
                   constraints.n_constraints() &&
                 constraints.n_constraints() > 0,
               "a locally refined mesh is accepted with its " +
                 std::to_string(constraints.n_constraints()) +
                 " hanging-node lines");
}



void
test_mixed_cell_types(Testing::Checks &checks)
{
  // A unit square (deal.II's lexicographic vertex order) and a triangle
  // sharing its right edge.
  const std::vector<Point<2>> vertices = {{0., 0.},
                                          {1., 0.},
                                          {0., 1.},
                                          {1., 1.},
                                          {2., 0.}};
  std::vector<CellData<2>>    cells;
  cells.emplace_back(4);
  cells.back().vertices = {0, 1, 2, 3};
  cells.emplace_back(3);
  cells.back().vertices = {1, 4, 3};
  Triangulation<2> tria;
  tria.create_triangulation(vertices, cells, SubCellData());
  checks.check(tria.n_active_cells() == 2 &&
                 tria.get_reference_cells().size() == 2,
               "the mixed mesh has a quadrilateral and a triangle");

  DoFHandler<2>             dof_handler(tria);
  const hp::FECollection<2> fe_collection(FE_Q<2>(1), FE_SimplexP<2>(1));
  for (const auto &cell : dof_handler.active_cell_iterators())
    cell->set_active_fe_index(cell->reference_cell().is_simplex() ? 1 : 0);
  dof_handler.distribute_dofs(fe_collection);
  checks.check(dof_handler.n_dofs() == 5,
               "the mixed mesh has 5 DoFs with Q1/P1 elements");

  check_refused(checks,
                "mixes 2 cell types",
                "a mesh of triangles and quadrilaterals is refused: mixes",
                MappingFE<2>(FE_SimplexP<2>(1)),
                dof_handler,
                QGaussSimplex<2>(2));

  // The same hp DoFHandler idea on a mesh of one cell type.
  Triangulation<2> quads;
  GridGenerator::subdivided_hyper_cube(quads, 2);
  DoFHandler<2> hp_dof_handler(quads);
  hp_dof_handler.begin_active()->set_active_fe_index(1);
  hp_dof_handler.distribute_dofs(hp::FECollection<2>(FE_Q<2>(1), FE_Q<2>(2)));
  check_refused(checks,
                "several finite elements (hp)",
                "an hp DoFHandler is refused",
                hp_dof_handler);
}



void
test_unsupported_elements(Testing::Checks &checks)
{
  Triangulation<2> tria;
  GridGenerator::subdivided_hyper_cube(tria, 2);

  const auto refused = [&](const FiniteElement<2> &fe,
                           const std::string      &expected) {
    DoFHandler<2> dof_handler(tria);
    dof_handler.distribute_dofs(fe);
    check_refused(checks,
                  expected,
                  fe.get_name() + " is refused: " + expected,
                  dof_handler);
  };
  refused(FE_Q<2>(3), "degree 3");
  refused(FESystem<2>(FE_Q<2>(3), 2), "degree 3");
  refused(FE_DGQ<2>(1), "FE_Q or FE_SimplexP");
  refused(FESystem<2>(FE_DGQ<2>(1), 2), "FE_Q or FE_SimplexP");
  refused(FESystem<2>(FE_Q<2>(1), 1, FE_Q<2>(2), 1), "different base elements");

  // The element must match the cells.
  Triangulation<2> triangles;
  GridGenerator::subdivided_hyper_cube_with_simplices(triangles, 2);
  DoFHandler<2> dof_handler(triangles);
  dof_handler.distribute_dofs(FE_SimplexP<2>(1));
  check_refused(checks,
                "lies outside the reference cell",
                "FE_SimplexP with a hypercube quadrature rule is refused",
                MappingFE<2>(FE_SimplexP<2>(1)),
                dof_handler,
                QGauss<2>(2));

  // ... and a simplex rule on hypercubes, whose points all lie in the unit
  // square but whose weights sum to 1/2.
  DoFHandler<2> q1(tria);
  q1.distribute_dofs(FE_Q<2>(1));
  check_refused(checks,
                "quadrature weights sum to 0.5",
                "FE_Q with a simplex quadrature rule is refused",
                MappingQ<2>(1),
                q1,
                QGaussSimplex<2>(2));

  // distribute_dofs() was never called.
  DoFHandler<2> empty(tria);
  check_refused(checks,
                "distribute_dofs",
                "a DoFHandler without DoFs is refused: call distribute_dofs()",
                empty);
}



void
test_constraints(Testing::Checks &checks)
{
  Triangulation<2> tria;
  GridGenerator::subdivided_hyper_cube(tria, 2);
  DoFHandler<2> dof_handler(tria);
  dof_handler.distribute_dofs(FE_Q<2>(1));

  AffineConstraints<double> constraints;
  constraints.add_line(0);
  constraints.add_entry(0, 1, 0.5);
  DoFHandlerAdapter<2> adapter;
  check_refused(checks,
                "not closed",
                "constraints before close() are refused: not closed",
                dof_handler,
                constraints,
                adapter);

  AffineConstraints<double> out_of_range;
  out_of_range.add_line(dof_handler.n_dofs() + 3);
  out_of_range.close();
  check_refused(checks,
                "refer to DoF " + std::to_string(dof_handler.n_dofs() + 3),
                "a constraint on a DoF the DoFHandler does not have is refused",
                dof_handler,
                out_of_range,
                adapter);
}



// The active cells on which the Jacobian determinant is not positive at
// some Gauss point, computed with deal.II's FEValues.
template <int dim>
std::vector<unsigned int>
inverted_cells(const Triangulation<dim> &tria)
{
  const bool simplex = tria.get_reference_cells()[0].is_simplex();
  std::unique_ptr<Mapping<dim>>       mapping;
  std::unique_ptr<FiniteElement<dim>> fe;
  std::unique_ptr<Quadrature<dim>>    quadrature;
  if (simplex)
    {
      mapping    = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
      fe         = std::make_unique<FE_SimplexP<dim>>(1);
      quadrature = std::make_unique<QGaussSimplex<dim>>(2);
    }
  else
    {
      mapping    = std::make_unique<MappingQ<dim>>(1);
      fe         = std::make_unique<FE_Q<dim>>(1);
      quadrature = std::make_unique<QGauss<dim>>(2);
    }
  FEValues<dim> fe_values(*mapping, *fe, *quadrature, update_jacobians);
  std::vector<unsigned int> result;
  for (const auto &cell : tria.active_cell_iterators())
    {
      fe_values.reinit(cell);
      bool inverted = false;
      for (unsigned int q = 0; q < quadrature->size(); ++q)
        inverted |= !(fe_values.jacobian(q).determinant() > 0.);
      if (inverted)
        result.push_back(cell->active_cell_index());
    }
  return result;
}



template <int dim>
void
check_inverted(Triangulation<dim> &tria,
               const std::string  &description,
               Testing::Checks    &checks)
{
  const std::vector<unsigned int> inverted = inverted_cells(tria);
  checks.check(!inverted.empty(),
               description + ": the mesh has inverted cells");
  if (inverted.empty())
    return;
  const auto        cell    = std::next(tria.begin_active(), inverted[0]);
  const std::string cell_id = "cell " + cell->id().to_string() +
                              " (active cell index " +
                              std::to_string(inverted[0]) + ")";

  DoFHandler<dim> dof_handler(tria);
  if (tria.get_reference_cells()[0].is_simplex())
    dof_handler.distribute_dofs(FE_SimplexP<dim>(1));
  else
    dof_handler.distribute_dofs(FE_Q<dim>(1));
  check_refused(checks,
                "inverted or degenerate",
                description + " is refused: inverted or degenerate",
                dof_handler);
  check_refused(checks,
                "element " + std::to_string(inverted[0]) + ", " + cell_id,
                description + ": the message names the first inverted " +
                  cell_id,
                dof_handler);
}



void
test_inverted_elements(Testing::Checks &checks)
{
  {
    Triangulation<2> tria;
    GridGenerator::subdivided_hyper_cube(tria, 3);
    checks.check(inverted_cells(tria).empty(),
                 "the undistorted 2D mesh has no inverted cells");
    fold_top_right_cell(tria);
    const std::vector<unsigned int> inverted = inverted_cells(tria);
    checks.check(inverted.size() == 1 && inverted[0] == 8,
                 "moving a vertex inverts exactly one quadrilateral (8)");
    check_inverted(tria, "2D mesh with a folded quadrilateral", checks);
  }
  {
    // 3D tetrahedra: push the centre vertex through the top face.
    Triangulation<3> tria;
    GridGenerator::subdivided_hyper_cube_with_simplices(tria, 2);
    checks.check(inverted_cells(tria).empty(),
                 "the undistorted 3D simplex mesh has no inverted cells");
    bool moved = false;
    for (const auto &cell : tria.active_cell_iterators())
      for (const unsigned int v : cell->vertex_indices())
        if (cell->vertex(v).distance(Point<3>(0.5, 0.5, 0.5)) < 1e-12)
          {
            cell->vertex(v) = Point<3>(0.5, 0.5, 1.3);
            moved           = true;
          }
    checks.check(moved, "the 3D simplex mesh has a vertex at the centre");
    check_inverted(tria,
                   "3D tetrahedral mesh with a vertex pushed out",
                   checks);
  }
}



void
test_kernel_components(Testing::Checks &checks)
{
  Testing::TestProblem<2> vector_problem;
  Testing::setup_problem(vector_problem,
                         false,
                         1,
                         2,
                         Testing::ConstraintKind::homogeneous);
  const DoFHandlerAdapter<2> vector_adapter =
    Testing::make_adapter(vector_problem);
  const HostAssembler<2, double> vector_assembler(vector_adapter.get_arrays());
  std::vector<double>            values, rhs;
  checks.check_throws<ExcUnsupportedInput>(
    [&]() {
      vector_assembler.assemble(LaplaceKernel<2, double>(), values, rhs);
    },
    "components",
    "the scalar Laplace kernel on a 2-component element is refused");

  Testing::TestProblem<2> scalar_problem;
  Testing::setup_problem(scalar_problem,
                         true,
                         2,
                         1,
                         Testing::ConstraintKind::none);
  const DoFHandlerAdapter<2> scalar_adapter =
    Testing::make_adapter(scalar_problem);
  const HostAssembler<2, double> scalar_assembler(scalar_adapter.get_arrays());
  checks.check_throws<ExcUnsupportedInput>(
    [&]() {
      scalar_assembler.assemble(LinearElasticityKernel<2, double>(),
                                values,
                                rhs);
    },
    "components",
    "the elasticity kernel on a scalar element is refused");
}



bool
operator==(const ElementLayout &a, const ElementLayout &b)
{
  return a.is_simplex == b.is_simplex && a.degree == b.degree &&
         a.n_nodes == b.n_nodes && a.n_components == b.n_components &&
         a.n_dofs == b.n_dofs && a.n_q_points == b.n_q_points &&
         a.quadrature_weights == b.quadrature_weights &&
         a.shape_values == b.shape_values;
}



bool
operator==(const MeshArrays &a, const MeshArrays &b)
{
  return a.dim == b.dim && a.n_elements == b.n_elements &&
         a.n_nodes == b.n_nodes && a.n_dofs == b.n_dofs &&
         a.layout == b.layout && a.connectivity == b.connectivity &&
         a.location == b.location &&
         a.supplemental_format == b.supplemental_format &&
         a.n_supplemental == b.n_supplemental &&
         a.supplemental == b.supplemental &&
         a.nodal_coordinates == b.nodal_coordinates &&
         a.node_dofs == b.node_dofs && a.row_offsets == b.row_offsets &&
         a.column_indices == b.column_indices &&
         a.nonzero_map == b.nonzero_map &&
         a.dof_is_constrained == b.dof_is_constrained &&
         a.inhomogeneities == b.inhomogeneities &&
         a.constraint_line_dofs == b.constraint_line_dofs &&
         a.constraint_entry_offsets == b.constraint_entry_offsets &&
         a.constraint_entry_dofs == b.constraint_entry_dofs &&
         a.constraint_entry_weights == b.constraint_entry_weights &&
         a.keep_constrained_dofs == b.keep_constrained_dofs;
}



// A failed reinit() throws before anything of the adapter changes, however
// far it got.
void
test_no_half_built_state(Testing::Checks &checks)
{
  Testing::TestProblem<2> problem;
  Testing::setup_problem(problem,
                         false,
                         2,
                         1,
                         Testing::ConstraintKind::inhomogeneous);
  DoFHandlerAdapter<2> adapter = Testing::make_adapter(problem);
  const MeshArrays     before  = adapter.get_arrays();
  checks.check(before.n_elements == 9 && before.n_dofs == 49 &&
                 before.n_nonzeros() > 0,
               "the first adapter is built (9 elements, 49 DoFs)");

  // Refused element.
  DoFHandler<2> cubic(problem.tria);
  cubic.distribute_dofs(FE_Q<2>(3));
  AffineConstraints<double> no_constraints;
  no_constraints.close();
  check_refused(checks,
                "degree 3",
                "reinit() with FE_Q(3) throws",
                cubic,
                no_constraints,
                adapter);
  checks.check(adapter.get_arrays() == before,
               "after the failed reinit() with FE_Q(3) the arrays are "
               "unchanged");

  // Refused constraints: found after the layout has been built.
  AffineConstraints<double> unclosed;
  unclosed.add_line(3);
  unclosed.add_entry(3, 4, 1.);
  check_refused(checks,
                "not closed",
                "reinit() with constraints that are not closed throws",
                problem.dof_handler,
                unclosed,
                adapter);
  checks.check(adapter.get_arrays() == before,
               "after the failed reinit() with constraints that are not closed "
               "the arrays are unchanged");

  // Inverted element: found in the middle of the element loop.
  Triangulation<2> tria;
  GridGenerator::subdivided_hyper_cube(tria, 3);
  fold_top_right_cell(tria);
  DoFHandler<2> inverted(tria);
  inverted.distribute_dofs(FE_Q<2>(1));
  check_refused(checks,
                "inverted",
                "reinit() on a mesh with an inverted element throws",
                inverted,
                no_constraints,
                adapter);
  checks.check(adapter.get_arrays() == before,
               "after the failed reinit() on an inverted mesh the arrays are "
               "unchanged");

  // And the adapter still works: a good reinit() replaces the arrays.
  build_adapter(problem.dof_handler, no_constraints, adapter);
  checks.check(adapter.get_arrays().n_dofs == 49 &&
                 adapter.get_arrays().n_constrained_elements() == 0,
               "a later successful reinit() replaces the arrays");
}



// Without a GPU, asking for device assembly says so instead of failing
// somewhere inside CUDA. (On a GPU machine there is nothing to check here.)
void
test_no_device(Testing::Checks &checks)
{
  if (GPUAssembly::n_cuda_devices() > 0)
    return;
  Testing::TestProblem<2> problem;
  Testing::setup_problem(problem, false, 1, 1, Testing::ConstraintKind::none);
  const GPUAssembly::DoFHandlerAdapter<2> adapter =
    Testing::make_adapter(problem);
  checks.check_throws<dealii::ExceptionBase>(
    [&] {
      GPUAssembly::DeviceAssembler<2, double> assembler;
      assembler.reinit(adapter.get_arrays(), {});
    },
    "needs a CUDA device and none was found",
    "DeviceAssembler::reinit() without a GPU says that none was found");
}



int
main()
{
  Testing::Checks checks;
  test_no_device(checks);
  test_hanging_nodes(checks);
  test_mixed_cell_types(checks);
  test_unsupported_elements(checks);
  test_constraints(checks);
  test_inverted_elements(checks);
  test_kernel_components(checks);
  test_no_half_built_state(checks);
  return checks.exit_code();
}
