// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_constraints_kernels_cuh
#define gpu_assembly_engine_constraints_kernels_cuh

// The ConstraintPlan's device kernels and their launch
// (ConstraintDeviceData::launch()), for .cu files:
// device_assembler.templates.cuh includes it.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/kernel_launch.cuh>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/constraints/device_data.h>

#include <cuda_runtime.h>

#include <cstddef>

namespace GPUAssembly
{
  namespace internal
  {
    // A thread per element of the plan computes its raw element data
    // (no condensation), column-major so that the stores are coalesced.
    // Only the general form of compute_element(): the plan's elements are
    // a fraction of the mesh, and the specialized forms would triple the
    // kernel's compile time for little.
    template <int dim, typename Number, class Kernel>
    __global__ void
    constraint_element_kernel(const Kernel                   kernel,
                              const ElementStageData<Number> data,
                              const unsigned int             n_elements,
                              const int *__restrict__ connectivity,
                              const Number *__restrict__ supplemental,
                              const Number *__restrict__ nodal_data,
                              Number *__restrict__ element_data)
    {
      const unsigned int c = blockIdx.x * blockDim.x + threadIdx.x;
      if (c >= n_elements)
        return;
      const unsigned int          n_ed = data.n_dofs;
      const ElementOutput<Number> output{
        element_data + c,
        element_data + static_cast<std::size_t>(n_ed) * n_ed * n_elements + c,
        n_ed,
        n_elements};
      compute_element<dim, Number, Kernel>(kernel,
                                           data,
                                           supplemental + c,
                                           nodal_data,
                                           connectivity + c,
                                           n_elements,
                                           output,
                                           false,
                                           nullptr);
    }



    // A thread per target sums its weighted list in the plan's order, so
    // the result is the same on every run.
    template <typename Number>
    __global__ void
    constraint_sum_kernel(const unsigned int n_targets,
                          const unsigned int n_matrix_targets,
                          const int *__restrict__ targets,
                          const unsigned char *__restrict__ overwrite,
                          const int *__restrict__ source_offsets,
                          const int *__restrict__ sources,
                          const Number *__restrict__ weights,
                          const Number *__restrict__ element_data,
                          Number *__restrict__ values,
                          Number *__restrict__ rhs)
    {
      const unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
      if (t >= n_targets)
        return;
      Number    sum = 0;
      const int end = source_offsets[t + 1];
      for (int k = source_offsets[t]; k < end; ++k)
        sum += weights[k] * element_data[sources[k]];
      Number &target =
        t < n_matrix_targets ? values[targets[t]] : rhs[targets[t]];
      target = overwrite[t] != 0 ? sum : target + sum;
    }



    template <typename Number>
    template <int dim, class Kernel>
    void
    ConstraintDeviceData<Number>::launch(
      const Kernel                   &kernel,
      const ElementStageData<Number> &data,
      const AssemblyLaunch<Number>   &call) const
    {
      if (plan.empty())
        return;
      constexpr unsigned int block      = 128;
      const unsigned int     n_elements = plan.elements.size();
      launch_kernel_over("constraint_element_kernel",
                         constraint_element_kernel<dim, Number, Kernel>,
                         n_elements,
                         block,
                         call.stream,
                         kernel,
                         data,
                         n_elements,
                         connectivity.data(),
                         supplemental.data(),
                         call.nodal_data,
                         element_data.data());
      const unsigned int n_targets = plan.targets.size();
      launch_kernel_over("constraint_sum_kernel",
                         constraint_sum_kernel<Number>,
                         n_targets,
                         block,
                         call.stream,
                         n_targets,
                         plan.n_matrix_targets,
                         targets.data(),
                         overwrite.data(),
                         source_offsets.data(),
                         sources.data(),
                         weights.data(),
                         element_data.data(),
                         call.values,
                         call.rhs);
    }
  } // namespace internal
} // namespace GPUAssembly

#endif
