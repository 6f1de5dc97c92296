// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_distributed_adapter_h
#define gpu_assembly_distributed_distributed_adapter_h

#include <deal.II/base/index_set.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/mapping.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/adapter/mesh_arrays.h>

#include <vector>

namespace GPUAssembly
{
  /**
   * The adapter of an MPI-distributed discretization: a
   * parallel::distributed::Triangulation (p4est) or a
   * parallel::fullydistributed::Triangulation, its DoFHandler and the
   * AffineConstraints made on the locally relevant DoFs and closed (as in
   * deal.II's step-40; hanging nodes included).
   *
   * Each MPI rank reads its locally owned cells into MeshArrays of its own,
   * numbered locally: the rank's DoFs are those of its cells and those the
   * constraint lines of these DoFs refer to (local_dofs()), and local DoF i
   * is the i-th of them in increasing global order
   * (local_dofs().nth_index_in_set(i), also get_local_to_global()[i]). The
   * arrays are those DoFHandlerAdapter would build for a serial mesh made of
   * the rank's cells with these DoFs and constraints, so that HostAssembler
   * and DeviceAssembler, with any method, assemble on them unchanged what
   * the rank's cells contribute through
   * AffineConstraints::distribute_local_to_global(), before deal.II's
   * compress(VectorOperation::add). DistributedAssembler adds these
   * contributions up across the ranks (ExchangePlan).
   *
   * Refused with ExcUnsupportedInput: a serial Triangulation (use
   * DoFHandlerAdapter), parallel::shared::Triangulation, constraints that
   * are not closed or do not store the lines of the locally relevant DoFs,
   * and everything DoFHandlerAdapter refuses. The supplemental data format
   * compressed_edge_matrix is not offered here.
   */
  template <int dim>
  class DistributedDoFHandlerAdapter
  {
  public:
    using AdditionalData = typename DoFHandlerAdapter<dim>::AdditionalData;

    DistributedDoFHandlerAdapter() = default;

    DistributedDoFHandlerAdapter(
      const dealii::Mapping<dim>              &mapping,
      const dealii::DoFHandler<dim>           &dof_handler,
      const dealii::Quadrature<dim>           &quadrature,
      const dealii::AffineConstraints<double> &constraints,
      const AdditionalData &additional_data = AdditionalData());

    /**
     * Build the rank's arrays. Collective: every rank of the
     * triangulation's communicator must call it. The DoF numbering and the
     * constraints are read now; later changes need another reinit().
     */
    void
    reinit(const dealii::Mapping<dim>              &mapping,
           const dealii::DoFHandler<dim>           &dof_handler,
           const dealii::Quadrature<dim>           &quadrature,
           const dealii::AffineConstraints<double> &constraints,
           const AdditionalData &additional_data = AdditionalData());

    /// The rank's arrays, in the local numbering.
    const MeshArrays &
    get_arrays() const
    {
      return arrays;
    }

    /// Global index of every local DoF (increasing).
    const std::vector<dealii::types::global_dof_index> &
    get_local_to_global() const
    {
      return local_to_global;
    }

    /// The rank's DoFs (those of get_arrays()), as an IndexSet of the
    /// global DoFs.
    const dealii::IndexSet &
    local_dofs() const
    {
      return local_dof_set;
    }

    const dealii::IndexSet &
    locally_owned_dofs() const
    {
      return owned_dofs;
    }

    const dealii::IndexSet &
    locally_relevant_dofs() const
    {
      return relevant_dofs;
    }

    MPI_Comm
    get_communicator() const
    {
      return communicator;
    }

    /**
     * The rank's rows of the global sparsity pattern: the local pattern in
     * global numbering, rows sent to their owners with
     * SparsityTools::distribute_sparsity_pattern(). Collective. It holds
     * what DoFTools::make_sparsity_pattern() and distribute_sparsity_pattern()
     * give in step-40 (for the same constraints and keep_constrained_dofs);
     * a TrilinosWrappers::SparseMatrix reinit()ed with it
     * (locally_owned_dofs() as rows and columns) takes the assembly.
     */
    void
    make_sparsity_pattern(dealii::DynamicSparsityPattern &dsp) const;

    /**
     * Nodal values of a ghosted distributed DoF vector (its locally relevant
     * entries readable, e.g. a TrilinosWrappers::MPI::Vector made with
     * locally_relevant_dofs() as ghosts): result[n * n_components + c] is
     * the value of the DoF of component c at local node n.
     */
    template <typename VectorType, typename Number>
    void
    gather_nodal_values(const VectorType    &dof_values,
                        std::vector<Number> &nodal_values) const;

  private:
    MPI_Comm                                     communicator = MPI_COMM_SELF;
    MeshArrays                                   arrays;
    std::vector<dealii::types::global_dof_index> local_to_global;
    dealii::IndexSet                             local_dof_set;
    dealii::IndexSet                             owned_dofs;
    dealii::IndexSet                             relevant_dofs;
  };



  template <int dim>
  template <typename VectorType, typename Number>
  void
  DistributedDoFHandlerAdapter<dim>::gather_nodal_values(
    const VectorType    &dof_values,
    std::vector<Number> &nodal_values) const
  {
    AssertThrow(dof_values.size() == owned_dofs.size(),
                dealii::ExcDimensionMismatch(dof_values.size(),
                                             owned_dofs.size()));
    nodal_values.resize(arrays.node_dofs.size());
    for (std::size_t i = 0; i < arrays.node_dofs.size(); ++i)
      nodal_values[i] =
        static_cast<Number>(dof_values(local_to_global[arrays.node_dofs[i]]));
  }
} // namespace GPUAssembly

#endif
