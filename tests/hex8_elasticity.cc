// SPDX-License-Identifier: LGPL-2.1-or-later
// The host version of the hex8 element kernels (Sanfui-Sharma's shapeMap
// strategy and their standard implementation, hex8_elasticity.h) gives
// deal.II's FEValues element matrices on distorted hexahedra with a
// material per element; assembled through the host reference and through a
// GlobalNZ plan executed on the host it gives deal.II's matrix with
// inhomogeneous Dirichlet constraints; bad input is refused clearly.

#include <deal.II/base/quadrature_lib.h>

#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/manifold_lib.h>

#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/hex8_elasticity.h>

#include <algorithm>

#include "global_nz_host.h"
#include "hex8_reference.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

constexpr const auto &body_force = Testing::hex8_body_force;
using Testing::hex8_kernel;

void
test_local_matrices(Testing::Checks &checks)
{
  const Testing::Hex8Problem     hex8(Testing::ConstraintKind::none, 4);
  const Testing::TestProblem<3> &problem = hex8.problem;
  const MeshArrays              &arrays  = hex8.arrays;
  const std::vector<double>     &E = hex8.E, &nu = hex8.nu;
  // Throws (and fails the test) if the mesh is not one the hex8 kernels
  // take.
  verify_hex8_arrays(arrays);

  std::vector<double> reference_matrices, reference_vectors;
  Testing::fevalues_hex8_matrices(problem,
                                  arrays,
                                  E,
                                  nu,
                                  body_force,
                                  reference_matrices,
                                  reference_vectors);

  // Non-affine: the Jacobian varies over some element.
  double jacobian_variation = 0;
  for (unsigned int e = 0; e < arrays.n_elements; ++e)
    {
      const double *S = arrays.supplemental.data() + e * arrays.n_supplemental;
      for (unsigned int q = 1; q < 8; ++q)
        jacobian_variation =
          std::max(jacobian_variation, std::abs(S[q * 25] - S[0]) / S[0]);
    }
  checks.check(jacobian_variation > 0.05,
               "the mesh is non-affine (JxW varies by " +
                 Testing::scientific(jacobian_variation) +
                 " within an element)");

  double shape_map = 0, isotropic = 0, standard = 0;
  bool   rows_bitwise = true;
  for (unsigned int e = 0; e < arrays.n_elements; ++e)
    {
      Hex8::ElementData<double> data;
      data.reinit(
        [&](const unsigned int a, const unsigned int d) {
          return arrays
            .nodal_coordinates[arrays.connectivity[e * 8 + a] * 3 + d];
        },
        E[e],
        nu[e]);
      const double lambda = Hex8::lame_lambda(E[e], nu[e]),
                   mu     = Hex8::lame_mu(E[e], nu[e]);
      std::vector<double> matrix_a(576), matrix_b(576), matrix_c(576),
        vector(24);
      for (unsigned int i = 0; i < 24; ++i)
        {
          vector[i] = Hex8::body_force_entry<double>(data, i, body_force);
          for (unsigned int j = 0; j < 24; ++j)
            {
              matrix_a[i * 24 + j] = Hex8::shape_map_entry<double>(data, i, j);
              matrix_b[i * 24 + j] = Hex8::standard_entry<double>(data, i, j);
              matrix_c[i * 24 + j] =
                Hex8::shape_map_isotropic_entry<double>(data, i, j, lambda, mu);
            }
        }
      // The row form's three entries at once: bitwise the per-entry ones.
      for (unsigned int a = 0; a < 8; ++a)
        for (unsigned int c = 0; c < 3; ++c)
          for (unsigned int b = 0; b < 8; ++b)
            {
              double values[3];
              Hex8::shape_map_isotropic_entries<double>(data,
                                                        a,
                                                        c,
                                                        b,
                                                        lambda,
                                                        mu,
                                                        values);
              for (unsigned int c2 = 0; c2 < 3; ++c2)
                rows_bitwise =
                  rows_bitwise &&
                  values[c2] == matrix_c[(3 * a + c) * 24 + 3 * b + c2];
            }
      const double *Kref = reference_matrices.data() + e * 576;
      const double *Fref = reference_vectors.data() + e * 24;
      shape_map          = std::max(shape_map,
                           Testing::element_difference(matrix_a.data(),
                                                       vector.data(),
                                                       Kref,
                                                       Fref));
      isotropic          = std::max(isotropic,
                           Testing::element_difference(matrix_c.data(),
                                                       vector.data(),
                                                       Kref,
                                                       Fref));
      standard           = std::max(standard,
                          Testing::element_difference(matrix_b.data(),
                                                      vector.data(),
                                                      Kref,
                                                      Fref));
    }
  checks.check(shape_map < 1e-13,
               "host shapeMap element matrices = FEValues' (max relative "
               "difference " +
                 Testing::scientific(shape_map) + ")");
  checks.check(rows_bitwise,
               "shape_map_isotropic_entries (three entries of a row at "
               "once) = shape_map_isotropic_entry bitwise");
  checks.check(isotropic < 1e-13,
               "host shapeMap element matrices with the isotropic C's zeros "
               "skipped = FEValues' (max relative difference " +
                 Testing::scientific(isotropic) + ")");
  checks.check(standard < 1e-13,
               "host standard-implementation element matrices = FEValues' "
               "(max relative difference " +
                 Testing::scientific(standard) + ")");

  // The shapeMap table is the seed's: column 0 of B holds d/dx in row 0,
  // d/dy in row 5 and d/dz in row 4.
  checks.check(Hex8::shape_map(0, 0) == 0 && Hex8::shape_map(0, 1) == 5 &&
                 Hex8::shape_map(0, 2) == 4 && Hex8::shape_map(1, 2) == 3 &&
                 Hex8::shape_map(2, 2) == 2,
               "shapeMap table as in the seed's Fig. 2");
  unsigned int row, column, i = 0;
  bool         packed = true;
  for (unsigned int r = 0; r < 24; ++r)
    for (unsigned int c = r; c < 24; ++c, ++i)
      {
        Hex8::entry_position(i, true, row, column);
        packed = packed && row == r && column == c &&
                 SymmetricElementOutput<double>::packed_index(24, r, c) == i;
      }
  checks.check(packed && i == Hex8::n_symmetric_entries,
               "entry_position() inverts the packed upper-triangle index");

  // The device's thread order of a full matrix: a permutation, the 192
  // same-component entries first.
  std::vector<unsigned int> hits(576, 0);
  bool                      grouped = true;
  for (unsigned int j = 0; j < 576; ++j)
    {
      Hex8::entry_position_by_component_pair(j, true, row, column);
      ++hits[row * 24 + column];
      grouped = grouped && (j < 192) == (row % 3 == column % 3);
    }
  checks.check(grouped && std::count(hits.begin(), hits.end(), 1u) == 576,
               "entry_position_by_component_pair() is a permutation with the "
               "same-component entries first");
}



// deal.II's global matrix with inhomogeneous constraints against the host
// reference and a GlobalNZ plan run on the host, both with the kernel.
void
test_assembly(Testing::Checks &checks, const bool symmetric)
{
  const Testing::Hex8Problem hex8(Testing::ConstraintKind::inhomogeneous, 4);
  const Testing::TestProblem<3> &problem = hex8.problem;
  const DoFHandlerAdapter<3>    &adapter = hex8.adapter;
  const MeshArrays              &arrays  = hex8.arrays;
  const std::vector<double>     &E = hex8.E, &nu = hex8.nu;

  std::vector<double> matrices, vectors;
  Testing::fevalues_hex8_matrices(problem,
                                  arrays,
                                  E,
                                  nu,
                                  body_force,
                                  matrices,
                                  vectors);
  SparsityPattern sparsity;
  adapter.make_sparsity_pattern(sparsity);
  SparseMatrix<double> reference(sparsity), plugin(sparsity);
  Vector<double>       reference_rhs(arrays.n_dofs);
  for (const auto &cell : problem.dof_handler.active_cell_iterators())
    {
      const unsigned int                   e = cell->active_cell_index();
      FullMatrix<double>                   K(24, 24);
      Vector<double>                       F(24);
      std::vector<types::global_dof_index> dofs(24);
      for (unsigned int i = 0; i < 24; ++i)
        {
          dofs[i] = arrays.location[e * 24 + i];
          F(i)    = vectors[e * 24 + i];
          for (unsigned int j = 0; j < 24; ++j)
            K(i, j) = matrices[e * 576 + i * 24 + j];
        }
      problem.constraints.distribute_local_to_global(K,
                                                     F,
                                                     dofs,
                                                     reference,
                                                     reference_rhs);
    }

  std::vector<double>            nodal(arrays.nodal_coordinates);
  std::vector<double>            values, rhs;
  const HostAssembler<3, double> host(arrays);
  host.assemble(hex8_kernel(), values, rhs, AssemblyOptions(), nodal, 3);
  adapter.copy_to_sparse_matrix(values, plugin);
  double difference = 0, size = 0;
  for (auto it = reference.begin(); it != reference.end(); ++it)
    {
      difference =
        std::max(difference,
                 std::abs(it->value() - plugin(it->row(), it->column())));
      size = std::max(size, std::abs(it->value()));
    }
  std::vector<double> reference_rhs_vector(reference_rhs.begin(),
                                           reference_rhs.end());
  const double        rhs_difference =
    Testing::max_relative_difference(rhs, reference_rhs_vector);
  checks.check(difference / size < 1e-13 && rhs_difference < 1e-13,
               "host assembly with Hex8ElasticityKernel = deal.II's "
               "(inhomogeneous Dirichlet; matrix " +
                 Testing::scientific(difference / size) + ", rhs " +
                 Testing::scientific(rhs_difference) + ")");

  GlobalNZPlan::Parameters parameters;
  parameters.symmetric          = symmetric;
  parameters.elements_per_block = 32;
  GlobalNZPlan plan;
  plan.reinit(arrays, parameters, 3, sizeof(double), 48 * 1024);
  std::vector<double> element_data, plan_values, plan_rhs;
  global_nz_on_host<3, double>(plan,
                               arrays,
                               hex8_kernel(),
                               AssemblyOptions(),
                               nodal,
                               3,
                               element_data,
                               plan_values,
                               plan_rhs);
  checks.check(Testing::max_relative_difference(plan_values, values) < 1e-13 &&
                 Testing::max_relative_difference(plan_rhs, rhs) < 1e-13,
               std::string("GlobalNZ plan executed on the host") +
                 (symmetric ? " (symmetric element data)" : "") +
                 " = host reference");
}



void
test_errors(Testing::Checks &checks)
{
  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         false,
                         1,
                         3,
                         Testing::ConstraintKind::none,
                         false,
                         2);
  {
    const DoFHandlerAdapter<3> adapter(*problem.mapping,
                                       problem.dof_handler,
                                       QGauss<3>(3),
                                       problem.constraints);
    checks.check_throws<ExceptionBase>(
      [&] {
        verify_hex8_arrays(adapter.get_arrays());
      },
      "use QGauss<3>(2)",
      "verify_hex8_arrays refuses a 3x3x3 Gauss rule");
  }
  {
    MeshArrays          arrays = Testing::make_adapter(problem).get_arrays();
    std::vector<double> E(arrays.n_elements, 1.), nu(arrays.n_elements, 0.3);
    checks.check_throws<ExceptionBase>(
      [&] {
        append_element_material(arrays, std::vector<double>(3, 1.), nu);
      },
      "3 Young's moduli",
      "append_element_material refuses a wrong number of values");
    nu[1] = 0.5;
    checks.check_throws<ExceptionBase>(
      [&] {
        append_element_material(arrays, E, nu);
      },
      "-1 < nu < 0.5",
      "append_element_material refuses nu = 0.5");
    nu[1] = 0.3;
    append_element_material(arrays, E, nu);
    checks.check_throws<ExceptionBase>(
      [&] {
        append_element_material(arrays, E, nu);
      },
      "can be appended once",
      "append_element_material refuses a second material");
  }
  {
    // A curved manifold with a quadratic mapping: the trilinear map of the
    // vertices is not the geometry the supplemental data describes.
    Triangulation<3> tria;
    GridGenerator::hyper_ball(tria);
    DoFHandler<3> dof_handler(tria);
    FESystem<3>   fe(FE_Q<3>(1), 3);
    dof_handler.distribute_dofs(fe);
    AffineConstraints<double> constraints;
    constraints.close();
    const DoFHandlerAdapter<3> adapter(MappingQ<3>(2),
                                       dof_handler,
                                       QGauss<3>(2),
                                       constraints);
    checks.check_throws<ExceptionBase>(
      [&] {
        verify_hex8_arrays(adapter.get_arrays());
      },
      "MappingQ(1)",
      "verify_hex8_arrays refuses a curved MappingQ(2) geometry");
  }
  {
    Testing::TestProblem<3> tets;
    Testing::setup_problem(tets,
                           true,
                           1,
                           3,
                           Testing::ConstraintKind::none,
                           false,
                           2);
    const DoFHandlerAdapter<3> adapter = Testing::make_adapter(tets);
    checks.check_throws<ExceptionBase>(
      [&] {
        verify_hex8_arrays(adapter.get_arrays());
      },
      "needs trilinear hexahedra",
      "verify_hex8_arrays refuses tetrahedra");
  }
  checks.check(parse_element_strategy("shapeMap") ==
                   ElementStrategy::shape_map &&
                 parse_element_strategy("shapeMap-per-entry") ==
                   ElementStrategy::shape_map_per_entry &&
                 parse_element_strategy(to_string(ElementStrategy::standard)) ==
                   ElementStrategy::standard,
               "element strategy names round-trip");
  checks.check_throws<ExceptionBase>(
    [&] {
      parse_element_strategy("shapemap");
    },
    "choose thread-per-element, shapeMap, shapeMap-per-entry or standard",
    "an unknown element strategy is refused");
}



int
main()
{
  Testing::Checks checks;
  test_local_matrices(checks);
  test_assembly(checks, false);
  test_assembly(checks, true);
  test_errors(checks);
  return checks.exit_code();
}
