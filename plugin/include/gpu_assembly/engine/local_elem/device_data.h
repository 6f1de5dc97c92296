// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_local_elem_device_data_h
#define gpu_assembly_engine_local_elem_device_data_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/assembly_launch.h>
#include <gpu_assembly/engine/local_elem/plan.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cstddef>
#include <vector>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * LocalElem on the device: the element arrays column-major in the plan's
     * element order (LocalElemPlan) and the element-data scratch buffer.
     * launch() is defined in local_elem/kernels.cuh.
     */
    template <typename Number>
    class LocalElemDeviceData
    {
    public:
      /**
       * Order the elements of @p arrays (by colours of a mesh colouring if
       * @p colored, for launches without atomics: LocalElemPlan) and upload
       * their arrays in that order.
       */
      void
      reinit(const MeshArrays                &arrays,
             const bool                       colored,
             const LocalElemPlan::Parameters &parameters);

      /**
       * Zero the values and the right-hand side of @p call and enqueue the
       * element kernels on its stream: one with atomics, or one launch per
       * colour.
       */
      template <int dim, class Kernel>
      void
      launch(const Kernel                   &kernel,
             const ElementStageData<Number> &data,
             const AssemblyLaunch<Number>   &call) const;

      const LocalElemPlan &
      get_plan() const
      {
        return plan;
      }

      /// Number of colours (0 for the atomic launch).
      unsigned int
      n_colors() const
      {
        return plan.n_colors();
      }

      /// The element data of the last launch(), column-major by element.
      const DeviceVector<Number> &
      get_element_data() const
      {
        return element_data;
      }

      /// Device memory of the element arrays and element data, bytes.
      std::size_t
      memory_consumption() const;

    private:
      LocalElemPlan::Parameters    parameters;
      bool                         colored    = false;
      unsigned int                 n_elements = 0;
      LocalElemPlan                plan;
      DeviceVector<int>            connectivity;
      DeviceVector<Number>         supplemental;
      DeviceVector<int>            location;
      DeviceVector<int>            nonzero_map;
      DeviceVector<unsigned char>  has_constraints;
      mutable DeviceVector<Number> element_data;
    };
  } // namespace internal
} // namespace GPUAssembly

#endif
