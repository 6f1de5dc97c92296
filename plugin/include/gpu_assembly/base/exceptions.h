// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_exceptions_h
#define gpu_assembly_base_exceptions_h

#include <deal.II/base/exceptions.h>

#include <string>

namespace GPUAssembly
{
  /**
   * A CUDA runtime call failed. Carries the call as written, where it was
   * made and CUDA's own description of the error.
   */
  DeclException4(ExcCudaError,
                 std::string,
                 std::string,
                 int,
                 std::string,
                 << "The CUDA call\n    " << arg1 << "\nat " << arg2 << ':'
                 << arg3 << " failed with " << arg4);

  /**
   * A cuSPARSE call failed.
   */
  DeclException4(ExcCusparseError,
                 std::string,
                 std::string,
                 int,
                 std::string,
                 << "The cuSPARSE call\n    " << arg1 << "\nat " << arg2 << ':'
                 << arg3 << " failed with " << arg4);

  /**
   * A device allocation failed: the message says how much was asked for and
   * how much the device had free, so the user can pick a smaller problem,
   * single precision or another method.
   */
  DeclException4(ExcDeviceMemory,
                 std::size_t,
                 std::size_t,
                 std::size_t,
                 std::string,
                 << "Not enough device memory: " << arg1 / (1024. * 1024.)
                 << " MiB were requested, " << arg2 / (1024. * 1024.)
                 << " MiB of " << arg3 / (1024. * 1024.) << " MiB are free ("
                 << arg4 << ").");

  /**
   * The input (mesh, finite element, constraints) uses something the plugin
   * does not support. The message says what and where.
   */
  DeclException1(ExcUnsupportedInput,
                 std::string,
                 << "Unsupported input: " << arg1);

  /**
   * A mesh file could not be read. The message names the file and the line.
   */
  DeclException3(ExcMeshFile,
                 std::string,
                 unsigned int,
                 std::string,
                 << "Error in mesh file '" << arg1 << "'"
                 << (arg2 > 0 ? ", line " + std::to_string(arg2) : "") << ": "
                 << arg3);
} // namespace GPUAssembly

#endif
