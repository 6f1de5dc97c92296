// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/lac/index_loops.cuh>
#include <gpu_assembly/lac/index_loops.h>

#include "inverse_diagonal.h"

namespace AppSolvers
{
  namespace
  {
    // Row i's diagonal entry by binary search in its sorted columns.
    template <typename Number>
    struct InvertDiagonal
    {
      const int    *row_offsets;
      const int    *columns;
      const Number *values;
      Number       *inverse_diagonal;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        int first = row_offsets[i], last = row_offsets[i + 1];
        while (first < last)
          {
            const int middle = first + (last - first) / 2;
            if (columns[middle] < static_cast<int>(i))
              first = middle + 1;
            else
              last = middle;
          }
        const bool found =
          first < row_offsets[i + 1] && columns[first] == static_cast<int>(i);
        const Number d      = found ? values[first] : Number(0);
        inverse_diagonal[i] = d != Number(0) ? Number(1) / d : Number(1);
      }
    };
  } // namespace



  template <typename Number>
  void
  compute_inverse_diagonal(const GPUAssembly::DeviceCSRMatrix<Number> &A,
                           GPUAssembly::DeviceVector<Number> &inverse_diagonal)
  {
    inverse_diagonal.reinit(A.m(), true);
    GPUAssembly::for_each_index(
      true,
      A.m(),
      InvertDiagonal<Number>{A.get_row_offsets().data(),
                             A.get_column_indices().data(),
                             A.get_values().data(),
                             inverse_diagonal.data()});
  }

  template void
  compute_inverse_diagonal(const GPUAssembly::DeviceCSRMatrix<double> &,
                           GPUAssembly::DeviceVector<double> &);
  template void
  compute_inverse_diagonal(const GPUAssembly::DeviceCSRMatrix<float> &,
                           GPUAssembly::DeviceVector<float> &);
} // namespace AppSolvers
