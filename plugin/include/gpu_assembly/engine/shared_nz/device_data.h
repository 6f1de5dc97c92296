// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_shared_nz_device_data_h
#define gpu_assembly_engine_shared_nz_device_data_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/assembly_launch.h>
#include <gpu_assembly/engine/shared_nz/plan.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cstddef>
#include <cstdint>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * SharedNZ on the device: the plan and its arrays uploaded once; element
     * data never leave the chip. launch() is defined in
     * shared_nz/kernels.cuh.
     */
    template <typename Number>
    class SharedNZDeviceData
    {
    public:
      /**
       * Build the plan for @p arrays with @p parameters, sizing the parts
       * to the shared memory of @p device, and upload it.
       */
      void
      reinit(const MeshArrays               &arrays,
             const SharedNZPlan::Parameters &parameters,
             const unsigned int              n_fields,
             const DeviceInfo               &device);

      /**
       * Enqueue the block kernel on the stream of @p call: assemble
       * straight into its values and right-hand side.
       */
      template <int dim, class Kernel>
      void
      launch(const Kernel                   &kernel,
             const ElementStageData<Number> &data,
             const AssemblyLaunch<Number>   &call) const;

      const SharedNZPlan &
      get_plan() const
      {
        return plan;
      }

      /// Device memory of the plan's arrays, bytes.
      std::size_t
      memory_consumption() const;

    private:
      SharedNZPlan plan;

      DeviceVector<int>           halo_offsets;
      DeviceVector<int>           halo_nodes;
      DeviceVector<int>           element_offsets;
      DeviceVector<int>           connectivity;
      DeviceVector<std::uint16_t> slots;
      DeviceVector<Number>        supplemental;
      DeviceVector<int>           supplemental_offsets;
      DeviceVector<int>           location;
      DeviceVector<unsigned char> has_constraints;
      DeviceVector<int>           n_free_elements;
      DeviceVector<int>           slice_offsets;
      DeviceVector<std::uint16_t> sources;
      DeviceVector<int>           target_offsets;
      DeviceVector<int>           targets;
    };
  } // namespace internal
} // namespace GPUAssembly

#endif
