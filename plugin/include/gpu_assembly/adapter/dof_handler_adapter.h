// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_adapter_dof_handler_adapter_h
#define gpu_assembly_adapter_dof_handler_adapter_h

#include <deal.II/base/index_set.h>
#include <deal.II/base/quadrature.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/mapping.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <vector>

namespace GPUAssembly
{
  /**
   * Where DoFHandlerAdapter builds the CSR pattern and the nonzero map
   * K(e, d1, d2), the largest of its arrays. Both builds give the same
   * arrays, entry for entry.
   */
  enum class PatternConstruction
  {
    /**
     * On a serial triangulation, on the GPU where a CUDA device is present
     * and has the memory the build needs, else on the host. On a
     * distributed triangulation on the host: each rank's device is the one
     * the program makes current (select_device_by_node_rank()), which may
     * come after the adapter.
     */
    automatic,
    /// Row by row on the host's threads.
    host,
    /// On the current CUDA device, by sorting the (row, column) pairs of
    /// every element; throws where there is no device or too little of
    /// its memory. A distributed program selects each rank's device first.
    device
  };

  /**
   * Pulls a deal.II discretization (DoFHandler, Mapping, Quadrature and
   * AffineConstraints) into the flat MeshArrays that the host and GPU
   * assembly methods read, and moves results back into deal.II objects.
   *
   * The triangulation may be a serial Triangulation, a
   * parallel::distributed::Triangulation (p4est) or a
   * parallel::fullydistributed::Triangulation, as for deal.II's DoFTools
   * functions. Each process reads the cells it owns (all cells of a serial
   * triangulation) into MeshArrays numbered locally: its DoFs are those of
   * its cells and those the constraint lines of these DoFs refer to
   * (local_dofs()), and local DoF i is the i-th of them in increasing
   * global order (get_local_to_global()[i]). On a serial triangulation every
   * DoF is local and the local numbering is deal.II's; nothing calls MPI.
   * On a distributed one, the arrays are those a serial mesh made of the
   * rank's cells with these DoFs and constraints would give, so that
   * HostAssembler and DeviceAssembler assemble on them unchanged what the
   * rank's cells contribute through
   * AffineConstraints::distribute_local_to_global(), before deal.II's
   * compress(VectorOperation::add); DistributedAssembler adds these
   * contributions up across the ranks.
   *
   * Supported: triangulations of one cell type, also locally refined
   * (hanging nodes); FE_Q or FE_SimplexP of degree 1 or 2, alone or as an
   * FESystem of copies of one such element; any closed AffineConstraints:
   * Dirichlet lines (homogeneous or not), hanging-node and periodicity
   * constraints, user lines, mixed. On a distributed triangulation the
   * constraints must store the lines of the locally relevant DoFs (made
   * with constraints.reinit(locally_relevant_dofs) as in deal.II's
   * step-40). Every method then assembles what
   * AffineConstraints::distribute_local_to_global() would, on the pattern
   * of DoFTools::make_sparsity_pattern() with the same constraints.
   * Anything else (a parallel::shared::Triangulation among it) raises
   * ExcUnsupportedInput naming what was found, and inverted or degenerate
   * elements raise it naming the cell.
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
      /**
       * Where the pattern and K are built. The GPU build takes temporary
       * device memory of about 16 bytes per element coupling (n_elements
       * times the square of the element's DoFs), freed before reinit()
       * returns; the host build is the one for machines without a GPU.
       * The default is the host build: on a 16-core host the GPU build
       * saves about 0.05 s of 3 s of set-up at 0.5 M hexahedra with hanging
       * nodes, and it is checked against the host build on the meshes of
       * its own test only.
       */
      PatternConstruction pattern_construction = PatternConstruction::host;
    };

    DoFHandlerAdapter() = default;

    DoFHandlerAdapter(const dealii::Mapping<dim>              &mapping,
                      const dealii::DoFHandler<dim>           &dof_handler,
                      const dealii::Quadrature<dim>           &quadrature,
                      const dealii::AffineConstraints<double> &constraints,
                      const AdditionalData &additional_data = AdditionalData());

    /**
     * Build all arrays. On a distributed triangulation this is collective:
     * every rank of its communicator must call it. The DoFHandler's
     * numbering and the constraints are read now; later changes to them
     * need another reinit().
     */
    void
    reinit(const dealii::Mapping<dim>              &mapping,
           const dealii::DoFHandler<dim>           &dof_handler,
           const dealii::Quadrature<dim>           &quadrature,
           const dealii::AffineConstraints<double> &constraints,
           const AdditionalData &additional_data = AdditionalData());

    /// The arrays of the process's cells, in the local numbering.
    const MeshArrays &
    get_arrays() const
    {
      return arrays;
    }

    /// Where the last reinit() built the pattern and K: host or device.
    PatternConstruction
    pattern_built_on() const
    {
      return pattern_construction;
    }

    /// Whether the triangulation is distributed over MPI ranks.
    bool
    is_distributed() const
    {
      return distributed;
    }

    /// Global index of every local DoF (increasing).
    const std::vector<dealii::types::global_dof_index> &
    get_local_to_global() const
    {
      return local_to_global;
    }

    /// The process's DoFs (those of get_arrays()), as an IndexSet of the
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

    /// The triangulation's communicator (MPI_COMM_SELF when serial).
    MPI_Comm
    get_communicator() const
    {
      return communicator;
    }

    /**
     * The process's rows of the global sparsity pattern: the local pattern
     * in global numbering, on a distributed triangulation with the rows
     * sent to their owners by SparsityTools::distribute_sparsity_pattern()
     * (collective then). It holds what DoFTools::make_sparsity_pattern()
     * (and distribute_sparsity_pattern(), as in step-40) give for the same
     * constraints and keep_constrained_dofs; a
     * TrilinosWrappers::SparseMatrix reinit()ed with it
     * (locally_owned_dofs() as rows and columns) takes the assembly.
     */
    void
    make_sparsity_pattern(dealii::DynamicSparsityPattern &dsp) const;

    /**
     * Serial triangulations: the CSR pattern as a deal.II SparsityPattern
     * (which stores the diagonal first in each row; the set of entries is
     * the same).
     */
    void
    make_sparsity_pattern(dealii::SparsityPattern &sparsity_pattern) const;

    /**
     * Serial triangulations: copy CSR values (in the order of
     * MeshArrays::column_indices) into @p matrix, whose pattern must
     * contain every entry of ours.
     */
    template <typename Number>
    void
    copy_to_sparse_matrix(const std::vector<Number>    &values,
                          dealii::SparseMatrix<double> &matrix) const;

    /**
     * Nodal values of a DoF vector: result[n * n_components + c] is the
     * value of the DoF of component c at local node n (node_dofs(n, c)).
     * This is how fields such as displacement enter the nodal data C(n).
     * @p dof_values is a dealii::Vector or, on a distributed triangulation,
     * a ghosted distributed vector whose locally relevant entries are
     * readable (e.g. a TrilinosWrappers::MPI::Vector made with
     * locally_relevant_dofs() as ghosts).
     */
    template <typename VectorType, typename Number>
    void
    gather_nodal_values(const VectorType    &dof_values,
                        std::vector<Number> &nodal_values) const;

    /**
     * Serial triangulations: the inverse of gather_nodal_values(), writing
     * nodal values into a DoF vector for DataOut and postprocessing.
     */
    template <typename Number>
    void
    scatter_nodal_values(const std::vector<Number> &nodal_values,
                         dealii::Vector<double>    &dof_values) const;

  private:
    bool                distributed          = false;
    PatternConstruction pattern_construction = PatternConstruction::host;
    MPI_Comm            communicator         = MPI_COMM_SELF;
    MeshArrays          arrays;
    std::vector<dealii::types::global_dof_index> local_to_global;
    dealii::IndexSet                             local_dof_set;
    dealii::IndexSet                             owned_dofs;
    dealii::IndexSet                             relevant_dofs;
  };



  template <int dim>
  template <typename VectorType, typename Number>
  void
  DoFHandlerAdapter<dim>::gather_nodal_values(
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
