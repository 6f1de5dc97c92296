// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/global_nz/device_data.h>

#include <limits>

#include "../upload.h"

namespace GPUAssembly
{
  namespace internal
  {
    template <typename Number>
    void
    GlobalNZDeviceData<Number>::reinit(
      const MeshArrays               &new_arrays,
      const GlobalNZPlan::Parameters &parameters,
      const unsigned int              n_fields,
      const std::size_t               shared_memory_limit)
    {
      arrays                  = &new_arrays;
      arrays_checked_by       = nullptr;
      any_constrained_element = new_arrays.n_constrained_elements() > 0;

      plan.reinit(new_arrays,
                  parameters,
                  n_fields,
                  sizeof(Number),
                  shared_memory_limit);
      AssertThrow(plan.reduction_array.size() <
                    static_cast<std::size_t>(std::numeric_limits<int>::max()),
                  ExcUnsupportedInput("GlobalNZ: the reduction array is "
                                      "too long for 32-bit offsets."));
      block_element.copy_from_host(plan.block_element);
      cluster_node_offsets.copy_from_host(plan.cluster_node_offsets);
      cluster_nodes.copy_from_host(plan.cluster_nodes);
      block_connectivity.copy_from_host(plan.block_connectivity);
      block_supplemental.copy_from_host(
        convert<Number>(plan.block_supplemental));
      block_location.copy_from_host(plan.block_location);
      block_has_constraints.copy_from_host(plan.block_has_constraints);
      reduction_target_begin.copy_from_host(plan.reduction_target_begin);
      reduction_slice_offsets.copy_from_host(
        as_int(plan.reduction_slice_offsets));
      reduction_array.copy_from_host(plan.reduction_array);
      upper_position.copy_from_host(plan.upper_position);
      reduction_block_order.copy_from_host(plan.reduction_block_order);
      mirror_position.copy_from_host(plan.mirror_position);
      element_data.reinit(plan.element_data_size());
    }



    template <typename Number>
    std::size_t
    GlobalNZDeviceData<Number>::memory_consumption() const
    {
      return block_element.memory_consumption() +
             cluster_node_offsets.memory_consumption() +
             cluster_nodes.memory_consumption() +
             block_connectivity.memory_consumption() +
             block_supplemental.memory_consumption() +
             block_location.memory_consumption() +
             block_has_constraints.memory_consumption() +
             reduction_target_begin.memory_consumption() +
             reduction_slice_offsets.memory_consumption() +
             reduction_array.memory_consumption() +
             upper_position.memory_consumption() +
             reduction_block_order.memory_consumption() +
             mirror_position.memory_consumption() +
             element_data.memory_consumption();
    }



    template class GlobalNZDeviceData<float>;
    template class GlobalNZDeviceData<double>;
  } // namespace internal
} // namespace GPUAssembly
