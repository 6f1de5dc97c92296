// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_cuda_check_h
#define gpu_assembly_base_cuda_check_h

#include <cstddef>
#include <string>

/**
 * @file
 * Checked calls into the CUDA runtime and cuSPARSE that stay active in
 * release builds (deal.II's own AssertCuda disappears with NDEBUG). The
 * header declares plain functions taking the status as an int, so that
 * host code can include it without CUDA headers and device code without
 * deal.II headers.
 */

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * Throw ExcCudaError if @p status (a cudaError_t) is not cudaSuccess.
     */
    void
    check_cuda_status(const int         status,
                      const char *const call,
                      const char *const file,
                      const int         line);

    /**
     * Throw ExcCusparseError if @p status (a cusparseStatus_t) is not
     * CUSPARSE_STATUS_SUCCESS.
     */
    void
    check_cusparse_status(const int         status,
                          const char *const call,
                          const char *const file,
                          const int         line);

    /**
     * Report a failed CUDA call on std::cerr without throwing: for
     * destructors, which must not throw while another exception may be
     * unwinding the stack.
     */
    void
    check_cuda_status_nothrow(const int         status,
                              const char *const call,
                              const char *const file,
                              const int         line) noexcept;

    /**
     * As check_cuda_status_nothrow(), for a cusparseStatus_t.
     */
    void
    check_cusparse_status_nothrow(const int         status,
                                  const char *const call,
                                  const char *const file,
                                  const int         line) noexcept;

    /**
     * Throw dealii::ExcMessage(@p message): lets device-side files report
     * misuse without including deal.II.
     */
    [[noreturn]] void
    throw_error(const std::string &message);

    /**
     * Throw ExcDeviceMemory: an allocation of @p requested bytes failed
     * with @p free of @p total bytes free on the device; @p cuda_message is
     * CUDA's description of the error.
     */
    [[noreturn]] void
    throw_device_memory_error(const std::size_t  requested,
                              const std::size_t  free,
                              const std::size_t  total,
                              const std::string &cuda_message);

    /**
     * Name and description of a cudaError_t, e.g.
     * "cudaErrorMemoryAllocation: out of memory".
     */
    std::string
    cuda_error_string(const int status);

    /**
     * Name and description of a cusparseStatus_t.
     */
    std::string
    cusparse_error_string(const int status);
  } // namespace internal
} // namespace GPUAssembly

/**
 * Evaluate a CUDA runtime call and throw a GPUAssembly::ExcCudaError naming
 * the call, the source location and CUDA's description if it failed.
 */
#define GPU_ASSEMBLY_CHECK_CUDA(call)                                \
  ::GPUAssembly::internal::check_cuda_status(static_cast<int>(call), \
                                             #call,                  \
                                             __FILE__,               \
                                             __LINE__)

/**
 * As GPU_ASSEMBLY_CHECK_CUDA, for destructors: reports and never throws.
 */
#define GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(call)                                \
  ::GPUAssembly::internal::check_cuda_status_nothrow(static_cast<int>(call), \
                                                     #call,                  \
                                                     __FILE__,               \
                                                     __LINE__)

/**
 * Evaluate a cuSPARSE call and throw a GPUAssembly::ExcCusparseError if it
 * failed.
 */
#define GPU_ASSEMBLY_CHECK_CUSPARSE(call)                                \
  ::GPUAssembly::internal::check_cusparse_status(static_cast<int>(call), \
                                                 #call,                  \
                                                 __FILE__,               \
                                                 __LINE__)

/**
 * As GPU_ASSEMBLY_CHECK_CUSPARSE, for destructors: reports and never throws.
 */
#define GPU_ASSEMBLY_CHECK_CUSPARSE_NOTHROW(call)                          \
  ::GPUAssembly::internal::check_cusparse_status_nothrow(static_cast<int>( \
                                                           call),          \
                                                         #call,            \
                                                         __FILE__,         \
                                                         __LINE__)

#endif
