// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/parallel.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/resident_operations.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "nccl_communicator.h"

namespace GPUAssembly
{
  template <typename Number>
  template <int dim>
  void
  DistributedDeviceMatrix<Number>::reinit(const DoFHandlerAdapter<dim> &adapter,
                                          const AdditionalData         &data)
  {
    SetupTimes::Steps              steps("DistributedDeviceMatrix");
    dealii::DynamicSparsityPattern pattern;
    steps.next("sparsity pattern");
    adapter.make_sparsity_pattern(pattern);
    steps.next("CSR arrays");
    reinit(pattern,
           adapter.locally_owned_dofs(),
           adapter.get_communicator(),
           data);
  }



  template <typename Number>
  void
  DistributedDeviceMatrix<Number>::reinit(
    const dealii::DynamicSparsityPattern &pattern,
    const dealii::IndexSet               &owned,
    const MPI_Comm                        communicator,
    const AdditionalData                 &data)
  {
    using dealii::types::global_dof_index;
    AssertThrow(!data.use_device || n_cuda_devices() > 0,
                ExcUnsupportedInput(
                  "DistributedDeviceMatrix: use_device is set, but this rank "
                  "finds no CUDA device; keep the matrix in host memory "
                  "(use_device = false)."));
    AssertThrow(pattern.n_rows() == owned.size() &&
                  pattern.n_cols() == owned.size(),
                dealii::ExcMessage(
                  "DistributedDeviceMatrix::reinit(): the sparsity pattern "
                  "has " +
                  std::to_string(pattern.n_rows()) + " x " +
                  std::to_string(pattern.n_cols()) +
                  " entries, the locally owned rows are an index set of " +
                  std::to_string(owned.size()) + " DoFs."));
    AssertThrow(owned.is_contiguous(),
                dealii::ExcMessage(
                  "DistributedDeviceMatrix::reinit(): the locally owned "
                  "rows are not one contiguous range of indices, which "
                  "the partitioner of its columns and vectors needs."));
    additional_data = data;
    halo_path       = internal::choose_halo_path(data.use_device,
                                           data.halo_path,
                                           communicator,
                                           nccl);

    // The rows are read in parallel over fixed blocks, each block's results
    // in a place of its own, so that the arrays do not depend on the
    // threads. IndexSet compresses itself on first use: done here, before
    // threads read it.
    owned.compress();
    pattern.row_index_set().compress();
    const std::size_t      n_rows = owned.n_elements();
    const global_dof_index first_owned =
      n_rows > 0 ? owned.nth_index_in_set(0) : 0;
    // The owned rows are one range: a column is owned if its distance from
    // the first owned row is below their number (unsigned arithmetic).
    const auto is_owned = [first_owned, n_rows](const global_dof_index i) {
      return static_cast<std::size_t>(i - first_owned) < n_rows;
    };
    constexpr std::size_t block_size = 1024;
    const std::size_t     n_blocks   = (n_rows + block_size - 1) / block_size;
    const auto            for_blocks = [&](const auto &body) {
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        n_blocks,
        [&](const std::size_t begin, const std::size_t end) {
          for (std::size_t block = begin; block < end; ++block)
            body(block,
                 block * block_size,
                 std::min(n_rows, (block + 1) * block_size));
        },
        1);
    };
    // body(i, row, column) for the entries of owned rows begin <= i < end,
    // in the pattern's order (rows, then columns, increasing). One iterator
    // walks the block: DynamicSparsityPattern::end(row) looks up the next
    // row in the row set, too slow to ask for at every entry.
    const auto pattern_end = pattern.end();
    const auto for_entries =
      [&](const std::size_t begin, const std::size_t end, const auto &body) {
        if (begin == end)
          return;
        const global_dof_index last = first_owned + (end - 1);
        for (auto entry = pattern.begin(first_owned + begin);
             entry != pattern_end && entry->row() <= last;
             ++entry)
          body(entry->row() - first_owned, entry->row(), entry->column());
      };

    // Ghost columns: those of owned rows that other ranks own.
    std::vector<std::vector<global_dof_index>> block_ghosts(n_blocks);
    host_row_offsets.assign(n_rows + 1, 0);
    for_blocks([&](const std::size_t block,
                   const std::size_t begin,
                   const std::size_t end) {
      std::vector<global_dof_index> &ghosts = block_ghosts[block];
      for_entries(begin,
                  end,
                  [&](const std::size_t i,
                      const global_dof_index,
                      const global_dof_index column) {
                    if (!is_owned(column))
                      ghosts.push_back(column);
                    ++host_row_offsets[i + 1];
                  });
      std::sort(ghosts.begin(), ghosts.end());
      ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
    });
    std::size_t n_entries = 0;
    for (std::size_t i = 0; i < n_rows; ++i)
      n_entries += host_row_offsets[i + 1];
    AssertThrow(n_entries < static_cast<std::size_t>(INT_MAX),
                dealii::ExcMessage(
                  "DistributedDeviceMatrix: a rank's rows hold " +
                  std::to_string(n_entries) +
                  " nonzeros, more than its 32-bit CSR indices count; use "
                  "more ranks."));
    for (std::size_t i = 0; i < n_rows; ++i)
      host_row_offsets[i + 1] += host_row_offsets[i];
    // All ghost columns, increasing: the partitioner numbers ghost j of
    // them n_owned + j.
    std::vector<global_dof_index> all_ghosts;
    for (const auto &block : block_ghosts)
      all_ghosts.insert(all_ghosts.end(), block.begin(), block.end());
    std::vector<std::vector<global_dof_index>>().swap(block_ghosts);
    std::sort(all_ghosts.begin(), all_ghosts.end());
    all_ghosts.erase(std::unique(all_ghosts.begin(), all_ghosts.end()),
                     all_ghosts.end());
    dealii::IndexSet ghosts(owned.size());
    ghosts.add_indices(all_ghosts.begin(), all_ghosts.end());
    ghosts.compress();
    partitioner =
      std::make_shared<dealii::Utilities::MPI::Partitioner>(owned,
                                                            ghosts,
                                                            communicator);

    host_columns.resize(n_entries);
    std::vector<int>          diagonal(n_rows, -1);
    std::vector<std::uint8_t> has_ghost_column(n_rows, 0);
    const unsigned int        n_owned = partitioner->locally_owned_size();
    Assert(n_owned == n_rows, dealii::ExcInternalError());
    for_blocks(
      [&](const std::size_t, const std::size_t begin, const std::size_t end) {
        int k = begin < end ? host_row_offsets[begin] : 0;
        for_entries(begin,
                    end,
                    [&](const std::size_t      i,
                        const global_dof_index row,
                        const global_dof_index column) {
                      if (column == row)
                        diagonal[i] = k;
                      if (is_owned(column))
                        host_columns[k] =
                          static_cast<int>(column - first_owned);
                      else
                        {
                          has_ghost_column[i] = 1;
                          host_columns[k]     = static_cast<int>(
                            n_owned + (std::lower_bound(all_ghosts.begin(),
                                                        all_ghosts.end(),
                                                        column) -
                                       all_ghosts.begin()));
                        }
                      ++k;
                    });
      });
    // Checked in row order, so that the row named is the first at fault.
    for (std::size_t i = 0; i < n_rows; ++i)
      AssertThrow(diagonal[i] >= 0,
                  dealii::ExcMessage(
                    "DistributedDeviceMatrix: row " +
                    std::to_string(first_owned + i) +
                    " of the sparsity pattern has no diagonal entry, which "
                    "the Jacobi preconditioner needs."));
    std::vector<int> interior, boundary;
    for (std::size_t i = 0; i < n_rows; ++i)
      (has_ghost_column[i] ? boundary : interior).push_back(i);

    const bool device = data.use_device;
    row_offsets.reinit(device, host_row_offsets);
    columns.reinit(device, host_columns);
    values.reinit(device, host_columns.size());
    interior_rows.reinit(device, interior);
    boundary_rows.reinit(device, boundary);
    diagonal_positions.reinit(device, diagonal);
  }



  template <typename Number>
  void
  DistributedDeviceMatrix<Number>::copy_values_to_host(
    std::vector<Number> &host_values) const
  {
    values.copy_to_host(host_values);
  }



  template <typename Number>
  std::size_t
  DistributedDeviceMatrix<Number>::position(
    const dealii::types::global_dof_index row,
    const dealii::types::global_dof_index column) const
  {
    Assert(partitioner, dealii::ExcNotInitialized());
    const auto not_found = [&]() {
      return dealii::ExcMessage(
        "the entry (" + std::to_string(row) + ", " + std::to_string(column) +
        ") is not in the rows and sparsity pattern of this rank's "
        "DistributedDeviceMatrix; reinit() it from the adapter (or a "
        "pattern that holds the assembly's entries).");
    };
    AssertThrow(partitioner->in_local_range(row), not_found());
    AssertThrow(partitioner->in_local_range(column) ||
                  partitioner->is_ghost_entry(column),
                not_found());
    const unsigned int local_row    = partitioner->global_to_local(row);
    const int          local_column = partitioner->global_to_local(column);
    // Columns are in increasing global order, not local: search the row.
    const auto begin = host_columns.begin() + host_row_offsets[local_row];
    const auto end   = host_columns.begin() + host_row_offsets[local_row + 1];
    const auto found = std::find(begin, end, local_column);
    AssertThrow(found != end, not_found());
    return found - host_columns.begin();
  }



  template <typename Number>
  void
  DistributedDeviceMatrix<Number>::row_positions(
    const dealii::types::global_dof_index  row,
    const dealii::types::global_dof_index *columns,
    const std::size_t                      n_columns,
    std::size_t                           *positions) const
  {
    Assert(partitioner, dealii::ExcNotInitialized());
    const auto not_found = [&](const dealii::types::global_dof_index column) {
      return dealii::ExcMessage(
        "the entry (" + std::to_string(row) + ", " + std::to_string(column) +
        ") is not in the rows and sparsity pattern of this rank's "
        "DistributedDeviceMatrix; reinit() it from the adapter (or a "
        "pattern that holds the assembly's entries).");
    };
    if (n_columns == 0)
      return;
    AssertThrow(partitioner->in_local_range(row), not_found(columns[0]));
    const unsigned int local_row = partitioner->global_to_local(row);
    // The row's columns and the requested ones both increase in global
    // order: one walk along the row finds them all.
    // Owned columns are numbered from the first owned index, without the
    // partitioner's look-ups (most columns are owned).
    const auto [first_owned, end_owned] = partitioner->local_range();
    int       k                         = host_row_offsets[local_row];
    const int end                       = host_row_offsets[local_row + 1];
    for (std::size_t j = 0; j < n_columns; ++j)
      {
        const dealii::types::global_dof_index column = columns[j];
        Assert(j == 0 || columns[j - 1] < column, dealii::ExcInternalError());
        int local_column;
        if (column >= first_owned && column < end_owned)
          local_column = static_cast<int>(column - first_owned);
        else
          {
            AssertThrow(partitioner->is_ghost_entry(column), not_found(column));
            local_column = partitioner->global_to_local(column);
          }
        while (k < end && host_columns[k] != local_column)
          ++k;
        AssertThrow(k < end, not_found(column));
        positions[j] = k++;
      }
  }



  template <typename Number>
  void
  DistributedDeviceMatrix<Number>::set_zero()
  {
    values.set_zero();
  }



  template <typename Number>
  void
  DistributedDeviceMatrix<Number>::vmult(
    DistributedDeviceVector<Number>       &dst,
    const DistributedDeviceVector<Number> &src) const
  {
    const auto compatible = [this](const DistributedDeviceVector<Number> &v) {
      return v.get_partitioner() &&
             (v.get_partitioner() == partitioner ||
              v.get_partitioner()->is_compatible(*partitioner)) &&
             v.stores_on_device() == stores_on_device();
    };
    AssertThrow(compatible(dst) && compatible(src),
                dealii::ExcMessage(
                  "DistributedDeviceMatrix::vmult(): a vector does not have "
                  "the matrix's layout (reinit() it with get_partitioner()) "
                  "or storage (host or device)."));
    AssertThrow(&dst != &src,
                dealii::ExcMessage("DistributedDeviceMatrix::vmult() needs "
                                   "distinct source and destination."));
    const auto multiply = [&](const ResidentArray<int> &rows) {
      for_each_row(stores_on_device(),
                   rows.size(),
                   ResidentOperations::RowProducts<Number>{row_offsets.data(),
                                                           columns.data(),
                                                           values.data(),
                                                           rows.data(),
                                                           src.data(),
                                                           dst.data()});
    };
    src.update_ghost_values_start();
    multiply(interior_rows);
    src.update_ghost_values_finish();
    multiply(boundary_rows);
  }



  template <typename Number>
  void
  DistributedDeviceMatrix<Number>::compute_inverse_diagonal(
    DistributedDeviceVector<Number> &result) const
  {
    AssertThrow(result.get_partitioner() &&
                  result.get_partitioner()->locally_owned_size() == m() &&
                  result.stores_on_device() == stores_on_device(),
                dealii::ExcMessage(
                  "compute_inverse_diagonal(): the vector does not have the "
                  "matrix's layout or storage."));
    for_each_index(
      stores_on_device(),
      m(),
      ResidentOperations::InverseDiagonal<Number>{values.data(),
                                                  diagonal_positions.data(),
                                                  result.data()});
  }



  template <typename Number>
  void
  DistributedDeviceMatrix<Number>::copy_to(
    dealii::TrilinosWrappers::SparseMatrix &matrix) const
  {
    AssertThrow(partitioner && matrix.locally_owned_range_indices() ==
                                 partitioner->locally_owned_range(),
                dealii::ExcMessage(
                  "DistributedDeviceMatrix::copy_to(): the Trilinos matrix's "
                  "rows are not this matrix's locally owned rows."));
    std::vector<Number> host_values;
    values.copy_to_host(host_values);
    matrix = 0.;
    std::vector<dealii::types::global_dof_index> row_columns;
    std::vector<double>                          row_values;
    for (unsigned int i = 0; i < m(); ++i)
      {
        row_columns.clear();
        row_values.clear();
        for (int k = host_row_offsets[i]; k < host_row_offsets[i + 1]; ++k)
          {
            row_columns.push_back(
              partitioner->local_to_global(host_columns[k]));
            row_values.push_back(host_values[k]);
          }
        matrix.set(partitioner->local_to_global(i),
                   row_columns.size(),
                   row_columns.data(),
                   row_values.data(),
                   false);
      }
    matrix.compress(dealii::VectorOperation::insert);
  }



  template class DistributedDeviceMatrix<float>;
  template class DistributedDeviceMatrix<double>;
  template void
  DistributedDeviceMatrix<float>::reinit(const DoFHandlerAdapter<2> &,
                                         const AdditionalData &);
  template void
  DistributedDeviceMatrix<float>::reinit(const DoFHandlerAdapter<3> &,
                                         const AdditionalData &);
  template void
  DistributedDeviceMatrix<double>::reinit(const DoFHandlerAdapter<2> &,
                                          const AdditionalData &);
  template void
  DistributedDeviceMatrix<double>::reinit(const DoFHandlerAdapter<3> &,
                                          const AdditionalData &);
} // namespace GPUAssembly
