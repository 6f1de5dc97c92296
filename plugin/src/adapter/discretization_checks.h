// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_adapter_discretization_checks_h
#define gpu_assembly_src_adapter_discretization_checks_h

// What the serial and the distributed adapter share (not installed): the
// checks of a discretization and the reading of the constraints.

#include <deal.II/base/quadrature.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/lac/affine_constraints.h>

#include <gpu_assembly/adapter/mesh_arrays.h>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * Refuse with ExcUnsupportedInput, naming what was found, a DoFHandler
     * without DoFs or with several elements (hp), a finite element other
     * than FE_Q or FE_SimplexP of degree 1 or 2 (alone or as an FESystem of
     * copies of one), an element for another cell type than the
     * triangulation's, and a quadrature rule for another reference cell.
     */
    template <int dim>
    void
    check_discretization(const dealii::DoFHandler<dim> &dof_handler,
                         const dealii::Quadrature<dim> &quadrature);

    /**
     * Fill the constraint data of @p arrays (n_dofs set) from the closed
     * @p constraints, whose DoF indices are those of the arrays; refuses
     * constraints that are not closed, DoFs out of range and non-finite
     * weights.
     */
    void
    read_constraints(const dealii::AffineConstraints<double> &constraints,
                     MeshArrays                              &arrays);
  } // namespace internal
} // namespace GPUAssembly

#endif
