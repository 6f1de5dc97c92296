// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_local_elem_kernels_cuh
#define gpu_assembly_engine_local_elem_kernels_cuh

// LocalElem's device kernel and its launch (LocalElemDeviceData::launch()),
// for .cu files: device_assembler.templates.cuh includes it.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/kernel_launch.cuh>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/element_specialization.cuh>
#include <gpu_assembly/engine/local_elem/device_data.h>

#include <cuda_runtime.h>

#include <cstddef>

namespace GPUAssembly
{
  namespace internal
  {
    // LocalElem: a thread per element computes its element data into a
    // column-major scratch array (coalesced), then adds each entry to the
    // matrix through the nonzero map, atomically or, for one colour of a
    // colouring, plainly.
    template <int dim,
              typename Number,
              class Kernel,
              bool                  use_atomics,
              ElementSpecialization specialization>
    __global__ void
    local_elem_kernel(const Kernel                   kernel,
                      const ElementStageData<Number> data,
                      const unsigned int             first_element,
                      const unsigned int             n_elements_launch,
                      const unsigned int             n_elements,
                      const int                     *connectivity,
                      const Number                  *supplemental,
                      const int                     *location,
                      const int                     *nonzero_map,
                      const unsigned char           *has_constraints,
                      const Number                  *nodal_data,
                      Number                        *element_data,
                      Number                        *values,
                      Number                        *rhs)
    {
      const unsigned int local = blockIdx.x * blockDim.x + threadIdx.x;
      if (local >= n_elements_launch)
        return;
      const unsigned int e = first_element + local;

      const unsigned int n_ed =
        SpecializedSizes<dim, specialization>::n_dofs(data,
                                                      Kernel::n_components);
      using Output = ElementOutput<Number>;
      const Output output{element_data + e,
                          element_data +
                            static_cast<std::size_t>(n_ed) * n_ed * n_elements +
                            e,
                          n_ed,
                          n_elements};
      compute_element<dim, Number, Kernel, Output, specialization>(
        kernel,
        data,
        supplemental + e,
        nodal_data,
        connectivity + e,
        n_elements,
        output,
        has_constraints[e] != 0,
        location + e);

      for (unsigned int i = 0; i < n_ed * n_ed; ++i)
        {
          const int target =
            nonzero_map[static_cast<std::size_t>(i) * n_elements + e];
          if (target < 0)
            continue;
          const Number value =
            element_data[static_cast<std::size_t>(i) * n_elements + e];
          if constexpr (use_atomics)
            atomicAdd(values + target, value);
          else
            values[target] += value;
        }
      for (unsigned int d = 0; d < n_ed; ++d)
        {
          const int row =
            location[static_cast<std::size_t>(d) * n_elements + e];
          const Number value =
            element_data[(static_cast<std::size_t>(n_ed) * n_ed + d) *
                           n_elements +
                         e];
          if constexpr (use_atomics)
            atomicAdd(rhs + row, value);
          else
            rhs[row] += value;
        }
    }
  } // namespace internal



  namespace internal
  {
    template <typename Number>
    template <int dim, class Kernel>
    void
    LocalElemDeviceData<Number>::launch(
      const Kernel                   &kernel,
      const ElementStageData<Number> &data,
      const AssemblyLaunch<Number>   &call) const
    {
      // LocalElem methods add into the matrix, which must start from zero.
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemsetAsync(call.values,
                                              0,
                                              call.n_values * sizeof(Number),
                                              call.stream));
      GPU_ASSEMBLY_CHECK_CUDA(
        cudaMemsetAsync(call.rhs, 0, call.n_rhs * sizeof(Number), call.stream));
      const auto launch = [&](const unsigned int first,
                              const unsigned int count,
                              const auto         kernel_function) {
        launch_kernel_over("local_elem_kernel",
                           kernel_function,
                           count,
                           parameters.block_size,
                           call.stream,
                           kernel,
                           data,
                           first,
                           count,
                           n_elements,
                           connectivity.data(),
                           supplemental.data(),
                           location.data(),
                           nonzero_map.data(),
                           has_constraints.data(),
                           call.nodal_data,
                           element_data.data(),
                           call.values,
                           call.rhs);
      };
      with_element_specialization<dim, Kernel>(
        data,
        [&](const auto specialization) {
          constexpr ElementSpecialization s = decltype(specialization)::value;
          if (!colored)
            launch(0,
                   n_elements,
                   local_elem_kernel<dim, Number, Kernel, true, s>);
          else
            for (unsigned int c = 0; c < plan.n_colors(); ++c)
              launch(plan.color_offsets[c],
                     plan.color_offsets[c + 1] - plan.color_offsets[c],
                     local_elem_kernel<dim, Number, Kernel, false, s>);
        });
    }
  } // namespace internal
} // namespace GPUAssembly

#endif
