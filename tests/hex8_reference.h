// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_hex8_reference_h
#define gpu_assembly_tests_hex8_reference_h

#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/fe_values_extractors.h>

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/kernels/hex8_elasticity.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "test_problems.h"

/**
 * deal.II's own element matrices of hex8 linear elasticity with a material
 * per element, for the tests of the hex8 element kernels.
 */
namespace Testing
{
  /// E and nu per element, varied so that a kernel that mixes up elements
  /// or reads the wrong material fails.
  inline void
  hex8_materials(const unsigned int   n_elements,
                 std::vector<double> &youngs_modulus,
                 std::vector<double> &poissons_ratio)
  {
    youngs_modulus.resize(n_elements);
    poissons_ratio.resize(n_elements);
    for (unsigned int e = 0; e < n_elements; ++e)
      {
        youngs_modulus[e] = 1. + 0.37 * ((e * 7919) % 11);
        poissons_ratio[e] = 0.05 + 0.04 * ((e * 104729) % 10);
      }
  }

  /// The body force of the hex8 tests.
  inline constexpr double hex8_body_force[3] = {0.5, -1., 2.};

  /// The hex8 kernel with a material per element and hex8_body_force.
  inline GPUAssembly::Hex8ElasticityKernel<double>
  hex8_kernel()
  {
    GPUAssembly::Hex8ElasticityKernel<double> kernel;
    kernel.per_element_material = true;
    for (unsigned int d = 0; d < 3; ++d)
      kernel.body_force[d] = hex8_body_force[d];
    return kernel;
  }

  /// Trilinear elasticity on @p subdivisions^3 distorted, renumbered
  /// hexahedra with @p kind constraints: its adapter, and its arrays with
  /// the materials of hex8_materials() appended.
  struct Hex8Problem
  {
    TestProblem<3>                    problem;
    GPUAssembly::DoFHandlerAdapter<3> adapter;
    GPUAssembly::MeshArrays           arrays;
    std::vector<double>               E, nu;

    Hex8Problem(const ConstraintKind kind, const unsigned int subdivisions)
    {
      setup_problem(problem, false, 1, 3, kind, true, subdivisions);
      adapter.reinit(*problem.mapping,
                     problem.dof_handler,
                     *problem.quadrature,
                     problem.constraints);
      arrays = adapter.get_arrays();
      hex8_materials(arrays.n_elements, E, nu);
      GPUAssembly::append_element_material(arrays, E, nu);
    }
  };

  /**
   * Element matrices (row-major 24 x 24 at e * 576) and vectors (at e * 24)
   * computed with FEValues in the plugin's local numbering d = 3 a + c:
   * K_ij = int lambda div phi_i div phi_j + 2 mu eps(phi_i) : eps(phi_j),
   * F_i = int f . phi_i. The map from deal.II's local DoFs to d goes
   * through the global DoFs of L(e, .), which also checks that element e
   * of the arrays is active cell e.
   */
  inline void
  fevalues_hex8_matrices(const TestProblem<3>          &problem,
                         const GPUAssembly::MeshArrays &arrays,
                         const std::vector<double>     &youngs_modulus,
                         const std::vector<double>     &poissons_ratio,
                         const double                  *body_force,
                         std::vector<double>           &matrices,
                         std::vector<double>           &vectors)
  {
    using namespace dealii;
    const FiniteElement<3>              &fe = *problem.fe;
    FEValues<3>                          fe_values(*problem.mapping,
                          fe,
                          *problem.quadrature,
                          update_values | update_gradients | update_JxW_values);
    const FEValuesExtractors::Vector     u(0);
    std::vector<types::global_dof_index> dofs(24);
    matrices.assign(static_cast<std::size_t>(arrays.n_elements) * 576, 0.);
    vectors.assign(static_cast<std::size_t>(arrays.n_elements) * 24, 0.);
    for (const auto &cell : problem.dof_handler.active_cell_iterators())
      {
        const unsigned int e = cell->active_cell_index();
        cell->get_dof_indices(dofs);
        unsigned int local[24];
        for (unsigned int i = 0; i < 24; ++i)
          {
            const auto *L  = arrays.location.data() + std::size_t(e) * 24;
            const auto  it = std::find(L, L + 24, int(dofs[i]));
            if (it == L + 24)
              throw std::runtime_error("element order of the arrays differs "
                                       "from the active cell order");
            local[i] = it - L;
          }
        const double lambda =
          GPUAssembly::Hex8::lame_lambda(youngs_modulus[e], poissons_ratio[e]);
        const double mu =
          GPUAssembly::Hex8::lame_mu(youngs_modulus[e], poissons_ratio[e]);
        fe_values.reinit(cell);
        for (const unsigned int q : fe_values.quadrature_point_indices())
          for (unsigned int i = 0; i < 24; ++i)
            {
              const unsigned int ci = fe.system_to_component_index(i).first;
              vectors[std::size_t(e) * 24 + local[i]] +=
                body_force[ci] * fe_values.shape_value_component(i, q, ci) *
                fe_values.JxW(q);
              for (unsigned int j = 0; j < 24; ++j)
                matrices[std::size_t(e) * 576 + local[i] * 24 + local[j]] +=
                  (lambda * fe_values[u].divergence(i, q) *
                     fe_values[u].divergence(j, q) +
                   2. * mu *
                     scalar_product(fe_values[u].symmetric_gradient(i, q),
                                    fe_values[u].symmetric_gradient(j, q))) *
                  fe_values.JxW(q);
            }
      }
  }

  /// The larger of max |a - b| / max |b| over element e's 576 matrix
  /// values and over its 24 vector values.
  inline double
  element_difference(const double *a_matrix,
                     const double *a_vector,
                     const double *b_matrix,
                     const double *b_vector)
  {
    const auto relative = [](const double *a, const double *b, unsigned n) {
      double difference = 0, size = 0;
      for (unsigned int i = 0; i < n; ++i)
        {
          difference = std::max(difference, std::abs(a[i] - b[i]));
          size       = std::max(size, std::abs(b[i]));
        }
      return size > 0 ? difference / size : difference;
    };
    return std::max(relative(a_matrix, b_matrix, 576),
                    relative(a_vector, b_vector, 24));
  }
} // namespace Testing

#endif
