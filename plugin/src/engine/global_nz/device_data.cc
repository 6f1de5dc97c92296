// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/engine/global_nz/device_data.h>
#include <gpu_assembly/engine/global_nz/reduction_lists.h>

#include <future>

#include "../../base/device_task.h"
#include "../upload.h"

namespace GPUAssembly
{
  namespace internal
  {
    namespace
    {
      // The reduction arrays of @p plan, through @p staging.
      void
      upload_reduction_arrays(StagedUpload                     &staging,
                              const GlobalNZPlan               &plan,
                              DeviceVector<unsigned long long> &slice_offsets,
                              DeviceVector<unsigned long long> &source_base,
                              DeviceVector<int>                &array)
      {
        upload(staging, slice_offsets, as_uint64(plan.reduction_slice_offsets));
        upload(staging, source_base, as_uint64(plan.reduction_source_base));
        upload(staging, array, plan.reduction_array);
      }



      // What the device build reads of the mesh arrays, uploaded while the
      // host plan is made: the CSR pattern, the connectivity, the
      // constrained DoFs, and S(e) for the block layout.
      template <typename Number>
      struct MeshInputs
      {
        DeviceVector<int>           row_offsets;
        DeviceVector<int>           column_indices;
        DeviceVector<int>           connectivity;
        DeviceVector<unsigned char> dof_is_constrained;
        DeviceVector<Number>        supplemental;
      };

      template <typename Number>
      MeshInputs<Number>
      upload_mesh_inputs(const MeshArrays &arrays)
      {
        SetupTimes::Scope  time("GlobalNZ plan (device): mesh inputs");
        MeshInputs<Number> in;
        StagedUpload       staging((arrays.row_offsets.size() +
                              arrays.column_indices.size() +
                              arrays.connectivity.size()) *
                               sizeof(int) +
                             arrays.dof_is_constrained.size() +
                             arrays.supplemental.size() * sizeof(Number));
        upload(staging, in.row_offsets, arrays.row_offsets);
        upload(staging, in.column_indices, arrays.column_indices);
        upload(staging, in.connectivity, arrays.connectivity);
        upload(staging,
               in.dof_is_constrained,
               std::vector<unsigned char>(arrays.dof_is_constrained.begin(),
                                          arrays.dof_is_constrained.end()));
        upload(staging, in.supplemental, convert<Number>(arrays.supplemental));
        staging.finish();
        return in;
      }



      // The reduction arrays of @p plan built on the device into @p
      // slice_offsets, @p source_base and @p reduction_array, from the
      // plan's arrays there (@p target_begin, @p upper_position,
      // @p block_location), the mesh inputs @p mesh and what @p source
      // adds, uploaded here and freed on return.
      template <typename Number>
      void
      build_on_device(const GlobalNZPlan               &plan,
                      const MeshArrays                 &arrays,
                      const ReductionListSource        &source,
                      const MeshInputs<Number>         &mesh,
                      const DeviceVector<int>          &target_begin,
                      const DeviceVector<int>          &upper_position,
                      const DeviceVector<int>          &block_location,
                      DeviceVector<unsigned long long> &slice_offsets,
                      DeviceVector<unsigned long long> &source_base,
                      DeviceVector<int>                &reduction_array,
                      SetupTimes::Steps                &steps,
                      const std::size_t                 scratch_bytes)
      {
        steps.next("reduction list inputs (device)");
        DeviceVector<int> node_of_dof, component_of_dof, node_elements, slot_of;
        DeviceVector<unsigned long long> node_element_offsets;
        {
          StagedUpload staging(
            (source.node_of_dof.size() + source.component_of_dof.size() +
             source.node_elements.size() + source.slot_of.size()) *
              sizeof(int) +
            source.node_element_offsets.size() * sizeof(std::size_t));
          upload(staging, node_of_dof, source.node_of_dof);
          upload(staging, component_of_dof, source.component_of_dof);
          upload(staging, node_elements, source.node_elements);
          upload(staging, slot_of, source.slot_of);
          upload(staging,
                 node_element_offsets,
                 as_uint64(source.node_element_offsets));
          staging.finish();
        }
        ReductionListInput in =
          host_reduction_list_input(plan, arrays, source, false);
        in.target_begin       = target_begin.data();
        in.row_offsets        = mesh.row_offsets.data();
        in.column_indices     = mesh.column_indices.data();
        in.upper_position     = upper_position.data();
        in.target_of_position = nullptr;
        in.node_of_dof        = node_of_dof.data();
        in.component_of_dof   = component_of_dof.data();
        in.node_element_offsets =
          reinterpret_cast<const std::size_t *>(node_element_offsets.data());
        in.node_elements              = node_elements.data();
        in.connectivity               = mesh.connectivity.data();
        in.slot_of                    = slot_of.data();
        in.block_location             = block_location.data();
        in.pattern.dof_is_constrained = mesh.dof_is_constrained.data();
        build_reduction_arrays_on_device(in,
                                         plan.n_nonzeros,
                                         plan.n_reduction_blocks(),
                                         plan.parameters.targets_per_block,
                                         source.max_list_length,
                                         slice_offsets,
                                         source_base,
                                         reduction_array,
                                         steps,
                                         scratch_bytes);
      }
    } // namespace



    template <typename Number>
    void
    GlobalNZDeviceData<Number>::reinit(
      const MeshArrays               &new_arrays,
      const GlobalNZPlan::Parameters &parameters,
      const unsigned int              n_fields,
      const std::size_t               shared_memory_limit,
      const std::size_t               reduction_scratch_bytes)
    {
      arrays                  = &new_arrays;
      arrays_checked_by       = nullptr;
      any_constrained_element = new_arrays.n_constrained_elements() > 0;

      // The reduction arrays on the device: the host plan then leaves them
      // and S(e) in the block layout out, and hands over what their build
      // needs. The mesh arrays the build reads are uploaded meanwhile, on
      // a thread of its own.
      const bool on_device =
        parameters.reduction_construction != ReductionConstruction::host;
      std::future<MeshInputs<Number>> mesh_inputs;
      if (on_device)
        mesh_inputs = run_on_device_thread([&new_arrays]() {
          return upload_mesh_inputs<Number>(new_arrays);
        });
      ReductionListSource source;
      plan.reinit(new_arrays,
                  parameters,
                  n_fields,
                  sizeof(Number),
                  shared_memory_limit,
                  on_device ? &source : nullptr);
      // One staging object for all arrays: their transfers overlap.
      {
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
        upload_reduction_arrays(staging,
                                plan,
                                reduction_slice_offsets,
                                reduction_source_base,
                                reduction_array);
        upload(staging, upper_position, plan.upper_position);
        upload(staging, reduction_block_order, plan.reduction_block_order);
        upload(staging, mirror_position, plan.mirror_position);
        staging.finish();
      }
      if (on_device)
        {
          SetupTimes::Steps steps("GlobalNZ plan (device)");
          try
            {
              steps.next("mesh inputs (wait)");
              const MeshInputs<Number> mesh = mesh_inputs.get();
              steps.next("block supplemental (device)");
              block_supplemental.reinit(std::size_t(plan.n_element_blocks) *
                                          plan.n_supplemental *
                                          plan.parameters.elements_per_block,
                                        /*omit_zeroing_entries=*/true);
              gather_block_supplemental(block_element.data(),
                                        mesh.supplemental.data(),
                                        plan.n_element_blocks,
                                        plan.parameters.elements_per_block,
                                        plan.n_supplemental,
                                        block_supplemental.data());
              build_on_device(plan,
                              new_arrays,
                              source,
                              mesh,
                              reduction_target_begin,
                              upper_position,
                              block_location,
                              reduction_slice_offsets,
                              reduction_source_base,
                              reduction_array,
                              steps,
                              reduction_scratch_bytes);
              plan.reduction_arrays_on_device = true;
              plan.n_reduction_entries        = reduction_array.size();
            }
          catch (const ExcDeviceMemory &)
            {
              if (parameters.reduction_construction ==
                  ReductionConstruction::device)
                throw;
              // Too little device memory for the build's inputs and
              // scratch: the host build needs none of it.
              block_supplemental.reinit(0);
              reduction_slice_offsets.reinit(0);
              reduction_source_base.reinit(0);
              reduction_array.reinit(0);
              fill_block_supplemental(plan, new_arrays);
              build_reduction_arrays_on_host(plan, new_arrays, source, steps);
              steps.next("reduction array upload");
              StagedUpload staging(plan.memory_consumption());
              upload(staging,
                     block_supplemental,
                     convert<Number>(plan.block_supplemental));
              upload_reduction_arrays(staging,
                                      plan,
                                      reduction_slice_offsets,
                                      reduction_source_base,
                                      reduction_array);
              staging.finish();
            }
        }
      element_data.reinit(plan.element_data_size());
    }



    template <typename Number>
    void
    GlobalNZDeviceData<Number>::copy_reduction_arrays_to(
      GlobalNZPlan &host_plan) const
    {
      std::vector<unsigned long long> slice_offsets, source_base;
      reduction_slice_offsets.copy_to_host(slice_offsets);
      reduction_source_base.copy_to_host(source_base);
      reduction_array.copy_to_host(host_plan.reduction_array);
      host_plan.reduction_slice_offsets.assign(slice_offsets.begin(),
                                               slice_offsets.end());
      host_plan.reduction_source_base.assign(source_base.begin(),
                                             source_base.end());
      host_plan.n_reduction_entries        = host_plan.reduction_array.size();
      host_plan.reduction_arrays_on_device = false;
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
