// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_assembly_launch_h
#define gpu_assembly_engine_assembly_launch_h

#include <cstddef>

// cudaStream_t without the CUDA headers, for host code.
struct CUstream_st;

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * What DeviceAssembler::assemble() hands to the launch() of its method
     * and of the constraint stage: the nodal data they read, the matrix's
     * value array and the right-hand side they write, and the stream they
     * enqueue their kernels on.
     */
    template <typename Number>
    struct AssemblyLaunch
    {
      const Number *nodal_data;
      Number       *values;
      std::size_t   n_values;
      Number       *rhs;
      std::size_t   n_rhs;
      CUstream_st  *stream;
    };
  } // namespace internal
} // namespace GPUAssembly

#endif
