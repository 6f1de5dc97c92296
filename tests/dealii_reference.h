// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_dealii_reference_h
#define gpu_assembly_tests_dealii_reference_h

// deal.II's own assembly of the bundled forms (FEValues loop +
// AffineConstraints::distribute_local_to_global), the reference the
// plugin's assembly is compared with, and the plugin's kernels of the same
// forms with the same coefficients.

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/kernels/element_kernels.h>

#include <string>
#include <vector>

#include "test_problems.h"

using namespace dealii;
using namespace GPUAssembly;

enum class Form
{
  laplace,
  mass,
  elasticity
};

inline std::string
to_string(const Form form)
{
  return form == Form::laplace ? "Laplace" :
         form == Form::mass    ? "mass" :
                                 "elasticity";
}

constexpr double diffusion = 1.7;
constexpr double source    = 0.8;
constexpr double density   = 2.5;
constexpr double lambda    = 3.;
constexpr double mu        = 1.25;
constexpr double force[3]  = {1., -2., 0.5};

// The element matrix and right-hand side of @p form with the coefficients
// above on the cell @p fe_values is set to.
template <int dim>
void
cell_integrals(const FEValues<dim> &fe_values,
               const Form           form,
               FullMatrix<double>  &cell_matrix,
               Vector<double>      &cell_rhs)
{
  const FiniteElement<dim> &fe = fe_values.get_fe();
  const unsigned int        n  = fe.n_dofs_per_cell();
  cell_matrix                  = 0;
  cell_rhs                     = 0;
  for (const unsigned int q : fe_values.quadrature_point_indices())
    for (unsigned int i = 0; i < n; ++i)
      {
        const unsigned int ci = fe.system_to_component_index(i).first;
        const double       f  = form == Form::laplace ? source : force[ci];
        cell_rhs(i) +=
          f * fe_values.shape_value_component(i, q, ci) * fe_values.JxW(q);
        for (unsigned int j = 0; j < n; ++j)
          {
            const unsigned int cj    = fe.system_to_component_index(j).first;
            double             value = 0;
            if (form == Form::laplace)
              value = diffusion * fe_values.shape_grad(i, q) *
                      fe_values.shape_grad(j, q);
            else if (form == Form::mass)
              value = (ci == cj ?
                         density * fe_values.shape_value_component(i, q, ci) *
                           fe_values.shape_value_component(j, q, cj) :
                         0.);
            else
              {
                const Tensor<1, dim> gi =
                  fe_values.shape_grad_component(i, q, ci);
                const Tensor<1, dim> gj =
                  fe_values.shape_grad_component(j, q, cj);
                value = gi[ci] * gj[cj] * lambda + gi[cj] * gj[ci] * mu +
                        (ci == cj ? gi * gj * mu : 0.);
              }
            cell_matrix(i, j) += value * fe_values.JxW(q);
          }
      }
}



// Relative differences of the plugin's matrix and right-hand side from
// deal.II's (the right-hand side's absolute difference where deal.II's is
// zero).
struct Errors
{
  double matrix;
  double rhs;
};

// The plugin's @p values are copied into deal.II's @p sparsity_pattern, the
// reference's, so the difference is taken entry by entry.
template <int dim, typename Number>
Errors
errors_against(const DoFHandlerAdapter<dim> &adapter,
               const SparsityPattern        &sparsity_pattern,
               const SparseMatrix<double>   &reference,
               const Vector<double>         &reference_rhs,
               const std::vector<Number>    &values,
               const std::vector<Number>    &rhs)
{
  SparseMatrix<double> ours(sparsity_pattern);
  adapter.copy_to_sparse_matrix(values, ours);
  ours.add(-1., reference);
  Vector<double> rhs_difference(rhs.begin(), rhs.end());
  rhs_difference -= reference_rhs;
  return {ours.frobenius_norm() / reference.frobenius_norm(),
          reference_rhs.l2_norm() > 0 ?
            rhs_difference.l2_norm() / reference_rhs.l2_norm() :
            rhs_difference.l2_norm()};
}



// deal.II's assembly of the same forms, written the deal.II way (step-8
// for elasticity) and independent of the plugin's arrays.
template <int dim>
void
assemble_with_dealii(const Testing::TestProblem<dim> &problem,
                     const Form                       form,
                     const bool                       keep_constrained_dofs,
                     SparsityPattern                 &sparsity_pattern,
                     SparseMatrix<double>            &matrix,
                     Vector<double>                  &rhs,
                     const bool use_inhomogeneities_for_rhs = false)
{
  const auto            &fe = *problem.fe;
  DynamicSparsityPattern dsp(problem.dof_handler.n_dofs());
  DoFTools::make_sparsity_pattern(problem.dof_handler,
                                  dsp,
                                  problem.constraints,
                                  keep_constrained_dofs);
  sparsity_pattern.copy_from(dsp);
  matrix.reinit(sparsity_pattern);
  rhs.reinit(problem.dof_handler.n_dofs());

  FEValues<dim>                        fe_values(*problem.mapping,
                          fe,
                          *problem.quadrature,
                          update_values | update_gradients | update_JxW_values);
  const unsigned int                   n = fe.n_dofs_per_cell();
  FullMatrix<double>                   cell_matrix(n, n);
  Vector<double>                       cell_rhs(n);
  std::vector<types::global_dof_index> dofs(n);

  for (const auto &cell : problem.dof_handler.active_cell_iterators())
    {
      fe_values.reinit(cell);
      cell_integrals(fe_values, form, cell_matrix, cell_rhs);
      cell->get_dof_indices(dofs);
      problem.constraints.distribute_local_to_global(
        cell_matrix,
        cell_rhs,
        dofs,
        matrix,
        rhs,
        use_inhomogeneities_for_rhs);
    }
}



// Calls f(kernel) with the plugin's kernel of a form and the coefficients
// above.
template <int dim, typename Number, class Function>
void
with_kernel(const Form form, const unsigned int n_components, const Function &f)
{
  if (form == Form::laplace)
    {
      LaplaceKernel<dim, Number> kernel;
      kernel.diffusion = diffusion;
      kernel.source    = source;
      f(kernel);
    }
  else if (form == Form::elasticity)
    {
      LinearElasticityKernel<dim, Number> kernel;
      kernel.lambda = lambda;
      kernel.mu     = mu;
      for (unsigned int d = 0; d < dim; ++d)
        kernel.body_force[d] = force[d];
      f(kernel);
    }
  else if (n_components == 1)
    {
      MassKernel<dim, 1, Number> kernel;
      kernel.density       = density;
      kernel.body_force[0] = force[0];
      f(kernel);
    }
  else
    {
      MassKernel<dim, dim, Number> kernel;
      kernel.density = density;
      for (unsigned int d = 0; d < dim; ++d)
        kernel.body_force[d] = force[d];
      f(kernel);
    }
}



#endif
