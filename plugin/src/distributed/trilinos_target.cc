// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/lac/trilinos_index_access.h>

#include <gpu_assembly/distributed/distributed_assembler.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <Epetra_CrsMatrix.h>
#include <Epetra_Map.h>

namespace GPUAssembly
{
  namespace internal
  {
    namespace
    {
      using int_type = dealii::TrilinosWrappers::types::int_type;

      // deal.II's trilinos_matrix() is const; the values are written
      // through the same object, which the caller holds non-const.
      Epetra_CrsMatrix &
      epetra_matrix(const dealii::TrilinosWrappers::SparseMatrix &matrix)
      {
        return const_cast<Epetra_CrsMatrix &>(matrix.trilinos_matrix());
      }

      // The first value of the rank's rows; the rows follow each other in
      // one array once Epetra has optimized the storage.
      double *
      first_value(const Epetra_CrsMatrix &matrix)
      {
        AssertThrow(matrix.Filled() && matrix.StorageOptimized(),
                    dealii::ExcMessage(
                      "the Trilinos matrix is not filled with optimized "
                      "storage; reinit() it with a sparsity pattern (and "
                      "compress() it after any insertion) before the "
                      "distributed assembly."));
        if (matrix.NumMyRows() == 0)
          return nullptr;
        int       n_entries = 0;
        double   *values    = nullptr;
        int      *indices   = nullptr;
        const int ierr = matrix.ExtractMyRowView(0, n_entries, values, indices);
        AssertThrow(ierr == 0, dealii::LACExceptions::ExcTrilinosError(ierr));
        return values;
      }
    } // namespace



    std::size_t
    TrilinosTarget::n_values(
      const dealii::TrilinosWrappers::SparseMatrix &matrix)
    {
      return matrix.trilinos_matrix().NumMyNonzeros();
    }



    double *
    TrilinosTarget::values(dealii::TrilinosWrappers::SparseMatrix &matrix)
    {
      return first_value(epetra_matrix(matrix));
    }



    ExchangePlan::MatrixRowPositions
    TrilinosTarget::matrix_positions(
      const dealii::TrilinosWrappers::SparseMatrix &matrix)
    {
      const Epetra_CrsMatrix &epetra = matrix.trilinos_matrix();
      const double *const     first  = first_value(epetra);
      // A row is looked up once, its (global column, position) pairs
      // sorted, and the requested columns (increasing) found by one walk
      // along them, instead of hashing every column into Epetra's column
      // map and scanning the row for it. Epetra's maps and row views are
      // only read: rows may be asked for from several threads at once.
      return [&epetra, first](const dealii::types::global_dof_index  row,
                              const dealii::types::global_dof_index *columns,
                              const std::size_t                      n_columns,
                              std::size_t *positions) {
        using Entry = std::pair<dealii::types::global_dof_index, std::size_t>;
        thread_local std::vector<Entry> entries;
        entries.clear();
        const int local_row = epetra.RowMap().LID(static_cast<int_type>(row));
        if (local_row >= 0)
          {
            int       n_entries = 0;
            double   *values    = nullptr;
            int      *indices   = nullptr;
            const int ierr =
              epetra.ExtractMyRowView(local_row, n_entries, values, indices);
            AssertThrow(ierr == 0,
                        dealii::LACExceptions::ExcTrilinosError(ierr));
            const std::size_t offset = values - first;
            for (int k = 0; k < n_entries; ++k)
              entries.emplace_back(static_cast<dealii::types::global_dof_index>(
                                     epetra.ColMap().GID(indices[k])),
                                   offset + k);
            if (!std::is_sorted(entries.begin(), entries.end()))
              std::sort(entries.begin(), entries.end());
          }
        auto entry = entries.begin();
        for (std::size_t j = 0; j < n_columns; ++j)
          {
            Assert(j == 0 || columns[j - 1] < columns[j],
                   dealii::ExcInternalError());
            while (entry != entries.end() && entry->first < columns[j])
              ++entry;
            AssertThrow(entry != entries.end() && entry->first == columns[j],
                        dealii::ExcMessage(
                          "the entry (" + std::to_string(row) + ", " +
                          std::to_string(columns[j]) +
                          ") of the assembly is not in the Trilinos matrix's "
                          "sparsity pattern; make the pattern with "
                          "DoFHandlerAdapter::make_sparsity_pattern()."));
            positions[j] = entry->second;
          }
      };
    }



    ExchangePlan::VectorPositions
    TrilinosTarget::vector_positions(
      const dealii::TrilinosWrappers::MPI::Vector &vector)
    {
      const Epetra_BlockMap &map = vector.trilinos_vector().Map();
      return [&map](const dealii::types::global_dof_index *rows,
                    const std::size_t                      n_rows,
                    std::size_t                           *positions) {
        for (std::size_t j = 0; j < n_rows; ++j)
          {
            const int local = map.LID(static_cast<int_type>(rows[j]));
            AssertThrow(local >= 0,
                        dealii::ExcMessage("row " + std::to_string(rows[j]) +
                                           " is not an owned entry of the "
                                           "right-hand side vector."));
            positions[j] = static_cast<std::size_t>(local);
          }
      };
    }
  } // namespace internal



  template class DistributedAssembler<2, double>;
  template class DistributedAssembler<3, double>;
} // namespace GPUAssembly
