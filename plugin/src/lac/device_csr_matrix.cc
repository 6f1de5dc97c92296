// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/lac/sparse_matrix.h>

#include <gpu_assembly/lac/device_csr_matrix.h>

namespace GPUAssembly
{
  template <typename Number>
  void
  DeviceCSRMatrix<Number>::copy_to(dealii::SparseMatrix<double> &matrix) const
  {
    AssertThrow(matrix.m() == n_rows && matrix.n() == n_rows,
                dealii::ExcDimensionMismatch(matrix.m(), n_rows));
    const std::vector<Number> host_values = values.to_host();
    matrix                                = 0.;
    for (unsigned int row = 0; row < n_rows; ++row)
      for (int k = host_row_offsets[row]; k < host_row_offsets[row + 1]; ++k)
        matrix.set(row, host_column_indices[k], host_values[k]);
  }



  template void
  DeviceCSRMatrix<float>::copy_to(dealii::SparseMatrix<double> &) const;
  template void
  DeviceCSRMatrix<double>::copy_to(dealii::SparseMatrix<double> &) const;
} // namespace GPUAssembly
