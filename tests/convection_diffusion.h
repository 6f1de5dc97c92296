// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_convection_diffusion_h
#define gpu_assembly_tests_convection_diffusion_h

// A non-symmetric system for the distributed Krylov solvers: upwind finite
// differences of -div grad u + c . grad u on an n x n grid of the unit
// square (Dirichlet boundary), each row scaled by a factor of its own so
// that the diagonal varies and Jacobi matters; the rows split into
// contiguous blocks over the ranks. The same matrix as a
// DistributedDeviceMatrix (host or device storage) and as a Trilinos
// matrix for deal.II's solvers.

#include <deal.II/base/index_set.h>
#include <deal.II/base/mpi.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>
#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/resident_array.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace Testing
{
  struct ConvectionDiffusion
  {
    /// @p peclet: the convection per cell, c h, in both directions.
    ConvectionDiffusion(const unsigned int n,
                        const double       peclet,
                        const MPI_Comm     communicator)
      : n(n)
      , peclet(peclet)
      , communicator(communicator)
      , owned(n * n)
    {
      const unsigned int n_ranks =
        dealii::Utilities::MPI::n_mpi_processes(communicator);
      const unsigned int rank =
        dealii::Utilities::MPI::this_mpi_process(communicator);
      const unsigned int size = n * n;
      owned.add_range(std::size_t(size) * rank / n_ranks,
                      std::size_t(size) * (rank + 1) / n_ranks);
      owned.compress();
      pattern.reinit(size, size, owned);
      for (const auto row : owned)
        for (const auto &[column, value] : row_entries(row))
          {
            (void)value;
            pattern.add(row, column);
          }
      trilinos.reinit(owned, owned, pattern, communicator);
      for (const auto row : owned)
        for (const auto &[column, value] : row_entries(row))
          trilinos.set(row, column, value);
      trilinos.compress(dealii::VectorOperation::insert);
    }

    /// The entries of @p row, columns increasing.
    std::vector<std::pair<unsigned int, double>>
    row_entries(const unsigned int row) const
    {
      const unsigned int i = row % n, j = row / n;
      const double       scale = 1. + 0.5 * std::sin(0.7 * row);
      std::vector<std::pair<unsigned int, double>> entries;
      if (j > 0)
        entries.emplace_back(row - n, -scale * (1 + peclet));
      if (i > 0)
        entries.emplace_back(row - 1, -scale * (1 + peclet));
      entries.emplace_back(row, scale * (4 + 2 * peclet));
      if (i + 1 < n)
        entries.emplace_back(row + 1, -scale);
      if (j + 1 < n)
        entries.emplace_back(row + n, -scale);
      return entries;
    }

    /// The matrix in @p A with the storage of @p data.
    template <typename Number>
    void
    make_resident(GPUAssembly::DistributedDeviceMatrix<Number> &A,
                  const typename GPUAssembly::DistributedDeviceMatrix<
                    Number>::AdditionalData &data) const
    {
      A.reinit(pattern, owned, communicator, data);
      std::vector<Number> values(A.n_nonzeros());
      for (const auto row : owned)
        for (const auto &[column, value] : row_entries(row))
          values[A.position(row, column)] = static_cast<Number>(value);
      if (A.stores_on_device())
        GPUAssembly::internal::DeviceMemory::copy_to_device(A.values_data(),
                                                            values.data(),
                                                            values.size() *
                                                              sizeof(Number));
      else
        std::copy(values.begin(), values.end(), A.values_data());
    }

    /**
     * The matrix in @p A and the right-hand side of fill_rhs() in @p b,
     * both with the storage of @p data.
     */
    template <typename Number>
    void
    make_resident_system(GPUAssembly::DistributedDeviceMatrix<Number> &A,
                         GPUAssembly::DistributedDeviceVector<Number> &b,
                         const typename GPUAssembly::DistributedDeviceMatrix<
                           Number>::AdditionalData &data) const
    {
      make_resident(A, data);
      dealii::TrilinosWrappers::MPI::Vector rhs;
      fill_rhs(rhs);
      b.reinit(A.get_partitioner(), data);
      b.copy_locally_owned_from(rhs);
    }

    /// A right-hand side, a smooth function of the global index.
    void
    fill_rhs(dealii::TrilinosWrappers::MPI::Vector &b) const
    {
      b.reinit(owned, communicator);
      for (const auto row : owned)
        b[row] = std::sin(0.37 * row + 0.1) + 0.2;
      b.compress(dealii::VectorOperation::insert);
    }

    const unsigned int                     n;
    const double                           peclet;
    const MPI_Comm                         communicator;
    dealii::IndexSet                       owned;
    dealii::DynamicSparsityPattern         pattern;
    dealii::TrilinosWrappers::SparseMatrix trilinos;
  };
} // namespace Testing

#endif
