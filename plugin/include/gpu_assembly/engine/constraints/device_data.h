// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_constraints_device_data_h
#define gpu_assembly_engine_constraints_device_data_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/assembly_launch.h>
#include <gpu_assembly/engine/constraints/plan.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cstddef>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * The ConstraintPlan on the device: its arrays uploaded once and the
     * element-data buffer of its elements. launch() is defined in
     * constraints/kernels.cuh.
     */
    template <typename Number>
    class ConstraintDeviceData
    {
    public:
      /// Keep and upload @p new_plan, a ConstraintPlan built for the mesh
      /// arrays that the method's plan reads (nothing if no constraint
      /// line has entries).
      void
      reinit(ConstraintPlan &&new_plan);

      bool
      empty() const
      {
        return plan.empty();
      }

      /**
       * Enqueue on the stream of @p call the element kernel of the plan's
       * elements and the weighted sums into its values and right-hand
       * side. Runs after the method's own kernels on the same stream.
       */
      template <int dim, class Kernel>
      void
      launch(const Kernel                   &kernel,
             const ElementStageData<Number> &data,
             const AssemblyLaunch<Number>   &call) const;

      const ConstraintPlan &
      get_plan() const
      {
        return plan;
      }

      std::size_t
      memory_consumption() const;

    private:
      ConstraintPlan               plan;
      DeviceVector<int>            connectivity;
      DeviceVector<Number>         supplemental;
      DeviceVector<int>            targets;
      DeviceVector<unsigned char>  overwrite;
      DeviceVector<int>            source_offsets;
      DeviceVector<int>            sources;
      DeviceVector<Number>         weights;
      mutable DeviceVector<Number> element_data;
    };
  } // namespace internal
} // namespace GPUAssembly

#endif
