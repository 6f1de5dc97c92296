// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_adapter_dof_handler_adapter_h
#define gpu_assembly_adapter_dof_handler_adapter_h

#include <deal.II/base/quadrature.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/mapping.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/mesh_arrays.h>

namespace GPUAssembly
{
  /**
   * Pulls a deal.II discretization (DoFHandler, Mapping, Quadrature and
   * AffineConstraints) into the flat MeshArrays that the host and GPU
   * assembly methods read, and moves results back into deal.II objects.
   *
   * Supported: a serial Triangulation of one cell type, also locally
   * refined (hanging nodes); FE_Q or FE_SimplexP of degree 1 or 2, alone or
   * as an FESystem of copies of one such element; any closed
   * AffineConstraints: Dirichlet lines (homogeneous or not), hanging-node
   * and periodicity constraints, user lines, mixed. Every method then
   * assembles what AffineConstraints::distribute_local_to_global() would, on
   * the pattern of DoFTools::make_sparsity_pattern() with the same
   * constraints. Anything else raises ExcUnsupportedInput naming what was
   * found, and inverted or degenerate elements raise it naming the cell.
   */
  template <int dim>
  class DoFHandlerAdapter
  {
  public:
    struct AdditionalData
    {
      SupplementalDataFormat supplemental_format =
        SupplementalDataFormat::quadrature_gradients;
      /// As DoFTools::make_sparsity_pattern's argument of the same name.
      bool keep_constrained_dofs = true;
    };

    DoFHandlerAdapter() = default;

    DoFHandlerAdapter(const dealii::Mapping<dim>              &mapping,
                      const dealii::DoFHandler<dim>           &dof_handler,
                      const dealii::Quadrature<dim>           &quadrature,
                      const dealii::AffineConstraints<double> &constraints,
                      const AdditionalData &additional_data = AdditionalData());

    /**
     * Build all arrays. The DoFHandler's numbering and the constraints are
     * read now; later changes to them need another reinit().
     */
    void
    reinit(const dealii::Mapping<dim>              &mapping,
           const dealii::DoFHandler<dim>           &dof_handler,
           const dealii::Quadrature<dim>           &quadrature,
           const dealii::AffineConstraints<double> &constraints,
           const AdditionalData &additional_data = AdditionalData());

    const MeshArrays &
    get_arrays() const
    {
      return arrays;
    }

    /**
     * Copy the CSR pattern into a deal.II SparsityPattern (which stores the
     * diagonal first in each row; the set of entries is the same).
     */
    void
    make_sparsity_pattern(dealii::SparsityPattern &sparsity_pattern) const;

    /**
     * Copy CSR values (in the order of MeshArrays::column_indices) into
     * @p matrix, whose pattern must contain every entry of ours.
     */
    template <typename Number>
    void
    copy_to_sparse_matrix(const std::vector<Number>    &values,
                          dealii::SparseMatrix<double> &matrix) const;

    /**
     * Nodal values of a DoF vector: result[n * n_components + c] is the
     * value of DoF node_dofs(n, c). This is how fields such as displacement
     * enter the nodal data C(n).
     */
    template <typename Number>
    void
    gather_nodal_values(const dealii::Vector<double> &dof_values,
                        std::vector<Number>          &nodal_values) const;

    /**
     * The inverse of gather_nodal_values(): write nodal values into a DoF
     * vector for DataOut and postprocessing.
     */
    template <typename Number>
    void
    scatter_nodal_values(const std::vector<Number> &nodal_values,
                         dealii::Vector<double>    &dof_values) const;

  private:
    MeshArrays arrays;
  };
} // namespace GPUAssembly

#endif
