// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_global_nz_device_data_h
#define gpu_assembly_engine_global_nz_device_data_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/assembly_launch.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cstddef>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * GlobalNZ on the device: the plan, its arrays uploaded once, and the
     * element-data buffer between the element and the reduction kernel.
     * launch() is defined in global_nz/kernels.cuh.
     */
    template <typename Number>
    class GlobalNZDeviceData
    {
    public:
      /**
       * Build the plan for @p arrays (which must outlive this object) with
       * @p parameters and upload it; the reduction arrays (and with them
       * S(e) in the block layout) are built where
       * parameters.reduction_construction says, on the device straight
       * into the arrays below, in batches of reduction blocks whose scratch
       * takes at most @p reduction_scratch_bytes (0: an eighth of the free
       * device memory; tests choose less, for many batches).
       */
      void
      reinit(const MeshArrays               &arrays,
             const GlobalNZPlan::Parameters &parameters,
             const unsigned int              n_fields,
             const std::size_t               shared_memory_limit,
             const std::size_t               reduction_scratch_bytes = 0);

      /**
       * Enqueue the element and the reduction kernel on the stream of
       * @p call: assemble into its values and right-hand side. A
       * kernel with an element stage of its own (ElementStageTraits) that
       * asks for it computes the element data instead of the element
       * kernel.
       */
      template <int dim, class Kernel>
      void
      launch(const Kernel                   &kernel,
             const ElementStageData<Number> &data,
             const AssemblyLaunch<Number>   &call) const;

      const GlobalNZPlan &
      get_plan() const
      {
        return plan;
      }

      /**
       * Copy the reduction arrays on the device into those of @p host_plan
       * (reduction_slice_offsets, reduction_source_base, reduction_array):
       * for checks and checksums of a plan whose reduction arrays the
       * device built (GlobalNZPlan::reduction_arrays_on_device).
       */
      void
      copy_reduction_arrays_to(GlobalNZPlan &host_plan) const;

      /// S(e) in the plan's block layout on the device, for checks.
      const DeviceVector<Number> &
      get_block_supplemental() const
      {
        return block_supplemental;
      }

      /// The element data of the last launch(), in the plan's layout.
      const DeviceVector<Number> &
      get_element_data() const
      {
        return element_data;
      }

      /// Device memory of the plan's arrays and the element data, bytes.
      std::size_t
      memory_consumption() const;

    private:
      const MeshArrays *arrays = nullptr;
      GlobalNZPlan      plan;
      /// The check of a kernel's own element stage that the arrays passed
      /// (ElementStageTraits::check_global_nz_arrays()), if any.
      mutable void (*arrays_checked_by)(const MeshArrays &) = nullptr;
      /// Whether any element touches a constrained DoF.
      bool any_constrained_element = false;

      DeviceVector<int>                block_element;
      DeviceVector<int>                cluster_node_offsets;
      DeviceVector<int>                cluster_nodes;
      DeviceVector<int>                block_connectivity;
      DeviceVector<Number>             block_supplemental;
      DeviceVector<int>                block_location;
      DeviceVector<unsigned char>      block_has_constraints;
      DeviceVector<int>                reduction_target_begin;
      DeviceVector<unsigned long long> reduction_slice_offsets;
      DeviceVector<unsigned long long> reduction_source_base;
      DeviceVector<int>                reduction_array;
      DeviceVector<int>                upper_position;
      DeviceVector<int>                reduction_block_order;
      DeviceVector<int>                mirror_position;
      mutable DeviceVector<Number>     element_data;
    };
  } // namespace internal
} // namespace GPUAssembly

#endif
