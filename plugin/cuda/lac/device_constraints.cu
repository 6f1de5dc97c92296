// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/kernel_launch.cuh>
#include <gpu_assembly/lac/device_constraints.h>

#include <cuda_runtime.h>

#include <string>

namespace GPUAssembly
{
  namespace
  {
    // Closed constraints: no line reads a constrained entry, so a thread
    // per line writes what no other thread reads.
    template <typename Number>
    __global__ void
    distribute_kernel(const unsigned int n_lines,
                      const int *__restrict__ dofs,
                      const int *__restrict__ entry_offsets,
                      const int *__restrict__ entry_dofs,
                      const Number *__restrict__ weights,
                      const Number *__restrict__ inhomogeneities,
                      Number *x)
    {
      const unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
      if (k < n_lines)
        x[dofs[k]] = internal::constrained_value(k,
                                                 entry_offsets,
                                                 entry_dofs,
                                                 weights,
                                                 inhomogeneities,
                                                 x);
    }



    template <typename Number>
    __global__ void
    set_zero_kernel(const unsigned int n_lines,
                    const int *__restrict__ dofs,
                    Number *x)
    {
      const unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
      if (k < n_lines)
        x[dofs[k]] = Number(0);
    }

    constexpr unsigned int block_size = 256;
  } // namespace



  template <typename Number>
  DeviceConstraints<Number>::DeviceConstraints(const MeshArrays &arrays)
  {
    reinit(arrays);
  }



  template <typename Number>
  void
  DeviceConstraints<Number>::reinit(const MeshArrays &arrays)
  {
    const ConstraintLines lines(arrays);
    n_lines = lines.size();
    n_dofs  = arrays.n_dofs;
    dofs.copy_from_host(lines.dofs);
    entry_offsets.copy_from_host(lines.entry_offsets);
    entry_dofs.copy_from_host(lines.entry_dofs);
    weights.copy_from_host(
      std::vector<Number>(lines.weights.begin(), lines.weights.end()));
    inhomogeneities.copy_from_host(
      std::vector<Number>(lines.inhomogeneities.begin(),
                          lines.inhomogeneities.end()));
  }



  template <typename Number>
  void
  DeviceConstraints<Number>::distribute(DeviceVector<Number> &x,
                                        CUstream_st *const    stream) const
  {
    if (x.size() != n_dofs)
      internal::throw_error("DeviceConstraints::distribute(): the vector has " +
                            std::to_string(x.size()) +
                            " entries, the constraints are for " +
                            std::to_string(n_dofs) + " DoFs.");
    if (n_lines == 0)
      return;
    internal::launch_kernel_over("distribute_kernel",
                                 distribute_kernel<Number>,
                                 n_lines,
                                 block_size,
                                 stream,
                                 n_lines,
                                 dofs.data(),
                                 entry_offsets.data(),
                                 entry_dofs.data(),
                                 weights.data(),
                                 inhomogeneities.data(),
                                 x.data());
  }



  template <typename Number>
  void
  DeviceConstraints<Number>::set_zero(DeviceVector<Number> &x,
                                      CUstream_st *const    stream) const
  {
    if (x.size() != n_dofs)
      internal::throw_error("DeviceConstraints::set_zero(): the vector has " +
                            std::to_string(x.size()) +
                            " entries, the constraints are for " +
                            std::to_string(n_dofs) + " DoFs.");
    if (n_lines == 0)
      return;
    internal::launch_kernel_over("set_zero_kernel",
                                 set_zero_kernel<Number>,
                                 n_lines,
                                 block_size,
                                 stream,
                                 n_lines,
                                 dofs.data(),
                                 x.data());
  }



  template <typename Number>
  std::size_t
  DeviceConstraints<Number>::memory_consumption() const
  {
    return dofs.memory_consumption() + entry_offsets.memory_consumption() +
           entry_dofs.memory_consumption() + weights.memory_consumption() +
           inhomogeneities.memory_consumption();
  }



  template class DeviceConstraints<float>;
  template class DeviceConstraints<double>;
} // namespace GPUAssembly
