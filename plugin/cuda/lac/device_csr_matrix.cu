// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/device_csr_matrix.h>

#include <cuda_runtime.h>
#include <cusparse.h>

#include <string>
#include <type_traits>

namespace GPUAssembly
{
  namespace
  {
    template <typename Number>
    constexpr cudaDataType
    cuda_data_type()
    {
      return std::is_same_v<Number, double> ? CUDA_R_64F : CUDA_R_32F;
    }

    // An owned dense-vector descriptor for one SpMV call.
    struct DenseVectorDescriptor
    {
      cusparseDnVecDescr_t descriptor = nullptr;

      template <typename Number>
      DenseVectorDescriptor(const std::size_t size, Number *data)
      {
        GPU_ASSEMBLY_CHECK_CUSPARSE(cusparseCreateDnVec(
          &descriptor,
          size,
          const_cast<void *>(static_cast<const void *>(data)),
          cuda_data_type<std::remove_const_t<Number>>()));
      }

      ~DenseVectorDescriptor()
      {
        if (descriptor != nullptr)
          GPU_ASSEMBLY_CHECK_CUSPARSE_NOTHROW(cusparseDestroyDnVec(descriptor));
      }
    };
  } // namespace



  template <typename Number>
  DeviceCSRMatrix<Number>::~DeviceCSRMatrix()
  {
    release_cusparse();
  }



  template <typename Number>
  void
  DeviceCSRMatrix<Number>::release_cusparse() noexcept
  {
    if (matrix_descriptor != nullptr)
      GPU_ASSEMBLY_CHECK_CUSPARSE_NOTHROW(cusparseDestroySpMat(
        static_cast<cusparseSpMatDescr_t>(matrix_descriptor)));
    if (handle != nullptr)
      GPU_ASSEMBLY_CHECK_CUSPARSE_NOTHROW(
        cusparseDestroy(static_cast<cusparseHandle_t>(handle)));
    matrix_descriptor = nullptr;
    handle            = nullptr;
  }



  template <typename Number>
  void
  DeviceCSRMatrix<Number>::reinit(const MeshArrays &arrays)
  {
    release_cusparse();
    n_rows              = arrays.n_dofs;
    host_row_offsets    = arrays.row_offsets;
    host_column_indices = arrays.column_indices;
    row_offsets.copy_from_host(host_row_offsets);
    column_indices.copy_from_host(host_column_indices);
    values.reinit(host_column_indices.size());

    cusparseHandle_t cusparse_handle;
    GPU_ASSEMBLY_CHECK_CUSPARSE(cusparseCreate(&cusparse_handle));
    handle = cusparse_handle;
    cusparseSpMatDescr_t descriptor;
    GPU_ASSEMBLY_CHECK_CUSPARSE(cusparseCreateCsr(&descriptor,
                                                  n_rows,
                                                  n_rows,
                                                  values.size(),
                                                  row_offsets.data(),
                                                  column_indices.data(),
                                                  values.data(),
                                                  CUSPARSE_INDEX_32I,
                                                  CUSPARSE_INDEX_32I,
                                                  CUSPARSE_INDEX_BASE_ZERO,
                                                  cuda_data_type<Number>()));
    matrix_descriptor = descriptor;
  }



  template <typename Number>
  void
  DeviceCSRMatrix<Number>::vmult(DeviceVector<Number>       &dst,
                                 const DeviceVector<Number> &src) const
  {
    if (handle == nullptr)
      internal::throw_error("DeviceCSRMatrix::vmult() called before reinit().");
    if (src.size() != n_rows || dst.size() != n_rows)
      internal::throw_error(
        "DeviceCSRMatrix::vmult(): vectors of sizes " +
        std::to_string(dst.size()) + " and " + std::to_string(src.size()) +
        " do not match the matrix size " + std::to_string(n_rows) + ".");
    const DenseVectorDescriptor x(src.size(), src.data());
    const DenseVectorDescriptor y(dst.size(), dst.data());
    const Number                alpha = 1, beta = 0;
    const auto cusparse_handle = static_cast<cusparseHandle_t>(handle);
    const auto descriptor =
      static_cast<cusparseSpMatDescr_t>(matrix_descriptor);

    std::size_t buffer_size = 0;
    GPU_ASSEMBLY_CHECK_CUSPARSE(
      cusparseSpMV_bufferSize(cusparse_handle,
                              CUSPARSE_OPERATION_NON_TRANSPOSE,
                              &alpha,
                              descriptor,
                              x.descriptor,
                              &beta,
                              y.descriptor,
                              cuda_data_type<Number>(),
                              CUSPARSE_SPMV_CSR_ALG1,
                              &buffer_size));
    if (buffer_size > spmv_buffer.size())
      spmv_buffer.reinit(buffer_size);
    GPU_ASSEMBLY_CHECK_CUSPARSE(cusparseSpMV(cusparse_handle,
                                             CUSPARSE_OPERATION_NON_TRANSPOSE,
                                             &alpha,
                                             descriptor,
                                             x.descriptor,
                                             &beta,
                                             y.descriptor,
                                             cuda_data_type<Number>(),
                                             CUSPARSE_SPMV_CSR_ALG1,
                                             spmv_buffer.data()));
  }



  template class DeviceCSRMatrix<float>;
  template class DeviceCSRMatrix<double>;
} // namespace GPUAssembly
