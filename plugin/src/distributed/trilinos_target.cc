// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/lac/trilinos_index_access.h>

#include <gpu_assembly/distributed/distributed_assembler.h>

#include <algorithm>
#include <memory>
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



    ExchangePlan::MatrixPosition
    TrilinosTarget::matrix_position(
      const dealii::TrilinosWrappers::SparseMatrix &matrix)
    {
      const Epetra_CrsMatrix &epetra = matrix.trilinos_matrix();
      const double *const     first  = first_value(epetra);
      // The plan asks for the entries of a row one after another: the row
      // is looked up once, its (global column, position) pairs sorted, and
      // each column found by bisection, instead of hashing every column
      // into Epetra's column map and scanning the row for it.
      struct Row
      {
        dealii::types::global_dof_index row;
        std::vector<std::pair<dealii::types::global_dof_index, std::size_t>>
          columns;
      };
      auto cache = std::make_shared<Row>();
      cache->row = dealii::numbers::invalid_dof_index;
      return
        [&epetra, first, cache](const dealii::types::global_dof_index row,
                                const dealii::types::global_dof_index column) {
          Row &current = *cache;
          if (row != current.row)
            {
              current.row = row;
              current.columns.clear();
              const int local_row =
                epetra.RowMap().LID(static_cast<int_type>(row));
              if (local_row >= 0)
                {
                  int       n_entries = 0;
                  double   *values    = nullptr;
                  int      *indices   = nullptr;
                  const int ierr      = epetra.ExtractMyRowView(local_row,
                                                           n_entries,
                                                           values,
                                                           indices);
                  AssertThrow(ierr == 0,
                              dealii::LACExceptions::ExcTrilinosError(ierr));
                  const std::size_t offset = values - first;
                  for (int k = 0; k < n_entries; ++k)
                    current.columns.emplace_back(
                      static_cast<dealii::types::global_dof_index>(
                        epetra.ColMap().GID(indices[k])),
                      offset + k);
                  std::sort(current.columns.begin(), current.columns.end());
                }
            }
          const auto found =
            std::lower_bound(current.columns.begin(),
                             current.columns.end(),
                             std::make_pair(column, std::size_t(0)));
          AssertThrow(
            found != current.columns.end() && found->first == column,
            dealii::ExcMessage(
              "the entry (" + std::to_string(row) + ", " +
              std::to_string(column) +
              ") of the assembly is not in the Trilinos matrix's "
              "sparsity pattern; make the pattern with "
              "DistributedDoFHandlerAdapter::make_sparsity_pattern()."));
          return found->second;
        };
    }



    ExchangePlan::VectorPosition
    TrilinosTarget::vector_position(
      const dealii::TrilinosWrappers::MPI::Vector &vector)
    {
      const Epetra_BlockMap &map = vector.trilinos_vector().Map();
      return [&map](const dealii::types::global_dof_index row) {
        const int local = map.LID(static_cast<int_type>(row));
        AssertThrow(local >= 0,
                    dealii::ExcMessage("row " + std::to_string(row) +
                                       " is not an owned entry of the "
                                       "right-hand side vector."));
        return static_cast<std::size_t>(local);
      };
    }
  } // namespace internal



  template class DistributedAssembler<2, double>;
  template class DistributedAssembler<3, double>;
} // namespace GPUAssembly
