// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_distributed_device_matrix_h
#define gpu_assembly_distributed_distributed_device_matrix_h

#include <deal.II/base/index_set.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/partitioner.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/resident_array.h>

#include <memory>
#include <vector>

namespace GPUAssembly
{
  /**
   * The rank's locally owned rows of a distributed sparse matrix, in CSR
   * on the device (use_device) or in host memory (the same loops on the
   * CPU). Columns are numbered as in get_partitioner(): the owned DoFs,
   * then, as ghosts, the columns of owned rows that other ranks own, so
   * that a DistributedDeviceVector with this partitioner is the operand of
   * vmult(). Columns are in increasing global order within each row.
   *
   * DistributedAssembler writes the values in place (its overloads for
   * this class); nothing of it passes through the host on the device path.
   *
   * Instantiated for float and double.
   */
  template <typename Number>
  class DistributedDeviceMatrix
  {
  public:
    using AdditionalData =
      typename DistributedDeviceVector<Number>::AdditionalData;

    DistributedDeviceMatrix()                                = default;
    DistributedDeviceMatrix(const DistributedDeviceMatrix &) = delete;
    DistributedDeviceMatrix &
    operator=(const DistributedDeviceMatrix &) = delete;

    /**
     * The pattern of DoFHandlerAdapter::make_sparsity_pattern()
     * (the rank's rows of the global pattern) and its partitioner; values
     * zero. Collective.
     */
    template <int dim>
    void
    reinit(const DoFHandlerAdapter<dim> &adapter,
           const AdditionalData         &additional_data = AdditionalData());

    /**
     * The same from a pattern of any origin: @p pattern holds (at least) the
     * rows of @p locally_owned_rows, in global numbering. Collective.
     */
    void
    reinit(const dealii::DynamicSparsityPattern &pattern,
           const dealii::IndexSet               &locally_owned_rows,
           const MPI_Comm                        communicator,
           const AdditionalData &additional_data = AdditionalData());

    const std::shared_ptr<const dealii::Utilities::MPI::Partitioner> &
    get_partitioner() const
    {
      return partitioner;
    }

    const AdditionalData &
    get_additional_data() const
    {
      return additional_data;
    }

    bool
    stores_on_device() const
    {
      return additional_data.use_device;
    }

    /// The path of the halo of vmult() and of DistributedAssembler's
    /// interface rows, chosen by reinit() from AdditionalData::halo_path.
    HaloPath
    get_halo_path() const
    {
      return halo_path;
    }

    /// Rows of this rank (its locally owned DoFs).
    unsigned int
    m() const
    {
      return host_row_offsets.empty() ? 0 : host_row_offsets.size() - 1;
    }

    std::size_t
    n_nonzeros() const
    {
      return host_columns.size();
    }

    /// Row offsets (m() + 1), on the host.
    const std::vector<int> &
    get_row_offsets() const
    {
      return host_row_offsets;
    }

    /// Column of every nonzero in the partitioner's local numbering, on
    /// the host.
    const std::vector<int> &
    get_column_indices() const
    {
      return host_columns;
    }

    /// The values, device or host pointer as stores_on_device() says.
    Number *
    values_data()
    {
      return values.data();
    }

    const Number *
    values_data() const
    {
      return values.data();
    }

    /// The row offsets and the columns (as get_row_offsets() and
    /// get_column_indices()) where stores_on_device() says, for loops over
    /// the rows.
    const int *
    row_offsets_data() const
    {
      return row_offsets.data();
    }

    const int *
    column_indices_data() const
    {
      return columns.data();
    }

    /// The values copied to the host, in the order of the CSR arrays.
    void
    copy_values_to_host(std::vector<Number> &host_values) const;

    /**
     * Position of entry (@p row, @p column), global indices, in the values;
     * @p row must be owned and the entry in the pattern (else
     * ExcMessage naming the entry).
     */
    std::size_t
    position(const dealii::types::global_dof_index row,
             const dealii::types::global_dof_index column) const;

    /**
     * Positions of the entries (@p row, @p columns[j]), j < @p n_columns,
     * in the values, written to @p positions[j]: as position() for each, in
     * one walk along the row, so @p columns must increase. Safe to call
     * from several threads at once.
     */
    void
    row_positions(const dealii::types::global_dof_index  row,
                  const dealii::types::global_dof_index *columns,
                  const std::size_t                      n_columns,
                  std::size_t                           *positions) const;

    /// Zero the values.
    void
    set_zero();

    /**
     * dst = A src: src's ghosts are updated (collective), and the rows
     * whose columns are all owned are multiplied while the halo travels.
     * @p dst and @p src must have get_partitioner()'s layout and this
     * matrix's storage; dst's ghosts are not touched.
     */
    void
    vmult(DistributedDeviceVector<Number>       &dst,
          const DistributedDeviceVector<Number> &src) const;

    /// 1 / diagonal entry of every owned row (0 for a zero diagonal).
    void
    compute_inverse_diagonal(DistributedDeviceVector<Number> &result) const;

    /**
     * Write the values into @p matrix, reinit()ed with a pattern that holds
     * this one and the locally owned rows as rows (for checks and for
     * Trilinos' preconditioners). Collective.
     */
    void
    copy_to(dealii::TrilinosWrappers::SparseMatrix &matrix) const;

    std::size_t
    memory_consumption() const
    {
      return row_offsets.memory_consumption() + columns.memory_consumption() +
             values.memory_consumption() + interior_rows.memory_consumption() +
             boundary_rows.memory_consumption() +
             diagonal_positions.memory_consumption();
    }

  private:
    std::shared_ptr<const dealii::Utilities::MPI::Partitioner> partitioner;
    AdditionalData                                             additional_data;
    HaloPath              halo_path = HaloPath::host_memory;
    std::vector<int>      host_row_offsets;
    std::vector<int>      host_columns;
    ResidentArray<int>    row_offsets;
    ResidentArray<int>    columns;
    ResidentArray<Number> values;
    // Rows with owned columns alone, multiplied while the halo travels, and
    // the rows with ghost columns, multiplied after it.
    ResidentArray<int> interior_rows;
    ResidentArray<int> boundary_rows;
    ResidentArray<int> diagonal_positions;

    // The NCCL communicator of the matrix's (nccl path only), kept so that
    // the vectors and exchanges made for the matrix share it.
    std::shared_ptr<const internal::NcclCommunicator> nccl;
  };
} // namespace GPUAssembly

#endif
