// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_device_csr_matrix_h
#define gpu_assembly_lac_device_csr_matrix_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/lac/device_vector.h>

#include <vector>

// Only a declaration: this header is also compiled by nvcc, which never
// sees deal.II's headers.
namespace dealii
{
  template <typename number>
  class SparseMatrix;
}

namespace GPUAssembly
{
  /**
   * A sparse matrix in CSR format on the device, with the pattern of
   * MeshArrays (columns sorted in each row), values assembled in place by
   * the GPU methods, and y = A x through cuSPARSE. The cuSPARSE handle,
   * descriptors and SpMV work buffer are created once and reused, so that
   * vmult() allocates nothing after its first call.
   *
   * Instantiated for float and double.
   */
  template <typename Number>
  class DeviceCSRMatrix
  {
  public:
    DeviceCSRMatrix() = default;
    ~DeviceCSRMatrix();
    DeviceCSRMatrix(const DeviceCSRMatrix &) = delete;
    DeviceCSRMatrix &
    operator=(const DeviceCSRMatrix &) = delete;

    /// Upload the pattern of @p arrays; values are set to zero.
    void
    reinit(const MeshArrays &arrays);

    unsigned int
    m() const
    {
      return n_rows;
    }

    std::size_t
    n_nonzeros() const
    {
      return values.size();
    }

    DeviceVector<Number> &
    get_values()
    {
      return values;
    }

    const DeviceVector<Number> &
    get_values() const
    {
      return values;
    }

    /// Row offsets of the pattern on the device (m() + 1 entries).
    const DeviceVector<int> &
    get_row_offsets() const
    {
      return row_offsets;
    }

    /// Column indices of the pattern on the device, sorted in each row.
    const DeviceVector<int> &
    get_column_indices() const
    {
      return column_indices;
    }

    /// dst = A src, through cusparseSpMV.
    void
    vmult(DeviceVector<Number> &dst, const DeviceVector<Number> &src) const;

    /**
     * Copy the values into a deal.II matrix whose pattern holds ours (for
     * instance one from DoFHandlerAdapter::make_sparsity_pattern()).
     */
    void
    copy_to(dealii::SparseMatrix<double> &matrix) const;

    std::size_t
    memory_consumption() const
    {
      return row_offsets.memory_consumption() +
             column_indices.memory_consumption() + values.memory_consumption();
    }

  private:
    void
    release_cusparse() noexcept;

    unsigned int         n_rows = 0;
    std::vector<int>     host_row_offsets;
    std::vector<int>     host_column_indices;
    DeviceVector<int>    row_offsets;
    DeviceVector<int>    column_indices;
    DeviceVector<Number> values;

    // cuSPARSE objects, opaque here so that host code needs no CUDA header.
    mutable void                       *handle            = nullptr;
    mutable void                       *matrix_descriptor = nullptr;
    mutable DeviceVector<unsigned char> spmv_buffer;
  };
} // namespace GPUAssembly

#endif
