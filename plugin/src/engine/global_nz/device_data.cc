// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/global_nz/device_data.h>

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
      // One staging object for all arrays: their transfers overlap.
      StagedUpload staging(plan.memory_consumption());
      upload(staging, block_element, plan.block_element);
      upload(staging, cluster_node_offsets, plan.cluster_node_offsets);
      upload(staging, cluster_nodes, plan.cluster_nodes);
      upload(staging, block_connectivity, plan.block_connectivity);
      upload(staging,
             block_supplemental,
             convert<Number>(plan.block_supplemental));
      upload(staging, block_location, plan.block_location);
      upload(staging, block_has_constraints, plan.block_has_constraints);
      upload(staging, reduction_target_begin, plan.reduction_target_begin);
      upload(staging,
             reduction_slice_offsets,
             as_uint64(plan.reduction_slice_offsets));
      upload(staging,
             reduction_source_base,
             as_uint64(plan.reduction_source_base));
      upload(staging, reduction_array, plan.reduction_array);
      upload(staging, upper_position, plan.upper_position);
      upload(staging, reduction_block_order, plan.reduction_block_order);
      upload(staging, mirror_position, plan.mirror_position);
      staging.finish();
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
             reduction_source_base.memory_consumption() +
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
