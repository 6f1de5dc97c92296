// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_adapter_discretization_checks_h
#define gpu_assembly_src_adapter_discretization_checks_h

// The checks of a discretization that the serial and the distributed
// adapter share (not installed).

#include <deal.II/base/quadrature.h>

#include <deal.II/dofs/dof_handler.h>

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
  } // namespace internal
} // namespace GPUAssembly

#endif
