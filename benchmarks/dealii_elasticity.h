// SPDX-License-Identifier: LGPL-2.1-or-later
// deal.II's own assembly of 3D linear elasticity, the peer of the plugin's
// in the benchmarks: step-8's bilinear form, FEValues, and
// AffineConstraints::distribute_local_to_global() into a deal.II or Trilinos
// matrix, over the cells this process owns, on the threads deal.II's
// MultithreadInfo allows (step-9's WorkStream).
#ifndef gpu_assembly_benchmarks_dealii_elasticity_h
#define gpu_assembly_benchmarks_dealii_elasticity_h

#include <deal.II/base/tensor.h>
#include <deal.II/base/work_stream.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping.h>

#include <deal.II/grid/filtered_iterator.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/vector.h>

#include <vector>

namespace Benchmarking
{
  using namespace dealii;

  /**
   * @p matrix and @p rhs (zeroed first) = the system of
   * lambda div u div v + 2 mu eps(u) : eps(v) = f . v over the locally
   * owned cells, with constraints applied; compress()ed, so that
   * distributed matrices and vectors are complete when it returns.
   */
  template <int dim, typename MatrixType, typename VectorType>
  void
  assemble_elasticity(const Mapping<dim>              &mapping,
                      const DoFHandler<dim>           &dof_handler,
                      const Quadrature<dim>           &quadrature,
                      const AffineConstraints<double> &constraints,
                      const double                     lambda,
                      const double                     mu,
                      const Tensor<1, dim>            &body_force,
                      MatrixType                      &matrix,
                      VectorType                      &rhs)
  {
    struct Scratch
    {
      FEValues<dim> fe_values;
      Scratch(const Mapping<dim>       &mapping,
              const FiniteElement<dim> &fe,
              const Quadrature<dim>    &quadrature)
        : fe_values(mapping,
                    fe,
                    quadrature,
                    update_values | update_gradients | update_JxW_values)
      {}
      Scratch(const Scratch &other)
        : fe_values(other.fe_values.get_mapping(),
                    other.fe_values.get_fe(),
                    other.fe_values.get_quadrature(),
                    other.fe_values.get_update_flags())
      {}
    };
    struct Copy
    {
      FullMatrix<double>                   cell_matrix;
      Vector<double>                       cell_rhs;
      std::vector<types::global_dof_index> dofs;
    };
    const FiniteElement<dim> &fe = dof_handler.get_fe();
    const unsigned int        n  = fe.n_dofs_per_cell();
    matrix                       = 0;
    rhs                          = 0;
    using CellFilter =
      FilteredIterator<typename DoFHandler<dim>::active_cell_iterator>;
    WorkStream::run(
      CellFilter(IteratorFilters::LocallyOwnedCell(),
                 dof_handler.begin_active()),
      CellFilter(IteratorFilters::LocallyOwnedCell(), dof_handler.end()),
      [&](const auto &cell, Scratch &scratch, Copy &copy) {
        FEValues<dim> &fe_values = scratch.fe_values;
        fe_values.reinit(cell);
        copy.cell_matrix = 0;
        copy.cell_rhs    = 0;
        for (const unsigned int q : fe_values.quadrature_point_indices())
          for (unsigned int i = 0; i < n; ++i)
            {
              const unsigned int   ci = fe.system_to_component_index(i).first;
              const Tensor<1, dim> gi =
                fe_values.shape_grad_component(i, q, ci);
              copy.cell_rhs(i) += body_force[ci] *
                                  fe_values.shape_value_component(i, q, ci) *
                                  fe_values.JxW(q);
              for (unsigned int j = 0; j < n; ++j)
                {
                  const unsigned int cj = fe.system_to_component_index(j).first;
                  const Tensor<1, dim> gj =
                    fe_values.shape_grad_component(j, q, cj);
                  copy.cell_matrix(i, j) +=
                    (gi[ci] * gj[cj] * lambda + gi[cj] * gj[ci] * mu +
                     (ci == cj ? gi * gj * mu : 0.)) *
                    fe_values.JxW(q);
                }
            }
        copy.dofs.resize(n);
        cell->get_dof_indices(copy.dofs);
      },
      [&](const Copy &copy) {
        constraints.distribute_local_to_global(copy.cell_matrix,
                                               copy.cell_rhs,
                                               copy.dofs,
                                               matrix,
                                               rhs);
      },
      Scratch(mapping, fe, quadrature),
      Copy{FullMatrix<double>(n, n), Vector<double>(n), {}});
    matrix.compress(VectorOperation::add);
    rhs.compress(VectorOperation::add);
  }
} // namespace Benchmarking

#endif
