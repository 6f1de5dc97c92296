// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_nccl_check_h
#define gpu_assembly_base_nccl_check_h

/**
 * @file
 * Checked calls into NCCL that stay active in release builds, as
 * cuda_check.h's for the CUDA runtime. Plain functions taking the status as
 * an int, so that device code includes this header without deal.II's and
 * host code without NCCL's.
 */

#include <string>

#ifndef __CUDACC__
#  include <deal.II/base/exceptions.h>

namespace GPUAssembly
{
  /**
   * An NCCL call failed: the call as written, where it was made and NCCL's
   * description (ncclGetErrorString()).
   */
  DeclException4(ExcNcclError,
                 std::string,
                 std::string,
                 int,
                 std::string,
                 << "The NCCL call\n    " << arg1 << "\nat " << arg2 << ':'
                 << arg3 << " failed with " << arg4);
} // namespace GPUAssembly
#endif

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * Throw ExcNcclError if @p status (an ncclResult_t) is not ncclSuccess.
     */
    void
    check_nccl_status(const int         status,
                      const char *const call,
                      const char *const file,
                      const int         line);

    /**
     * Report a failed NCCL call on std::cerr without throwing: for
     * clean-up, which must not throw while another exception may be
     * unwinding the stack.
     */
    void
    check_nccl_status_nothrow(const int         status,
                              const char *const call,
                              const char *const file,
                              const int         line) noexcept;

    /**
     * NCCL's description of an ncclResult_t (ncclGetErrorString()), with
     * the number.
     */
    std::string
    nccl_error_string(const int status);
  } // namespace internal
} // namespace GPUAssembly

/**
 * Evaluate an NCCL call and throw a GPUAssembly::ExcNcclError naming the
 * call, the source location and ncclGetErrorString() if it failed.
 */
#define GPU_ASSEMBLY_CHECK_NCCL(call)                                \
  ::GPUAssembly::internal::check_nccl_status(static_cast<int>(call), \
                                             #call,                  \
                                             __FILE__,               \
                                             __LINE__)

/**
 * As GPU_ASSEMBLY_CHECK_NCCL, for clean-up: reports and never throws.
 */
#define GPU_ASSEMBLY_CHECK_NCCL_NOTHROW(call)                                \
  ::GPUAssembly::internal::check_nccl_status_nothrow(static_cast<int>(call), \
                                                     #call,                  \
                                                     __FILE__,               \
                                                     __LINE__)

#endif
