// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/engine/constraints/device_data.h>

#include "../upload.h"

namespace GPUAssembly
{
  namespace internal
  {
    template <typename Number>
    void
    ConstraintDeviceData<Number>::reinit(const MeshArrays &arrays)
    {
      *this = ConstraintDeviceData();
      plan.reinit(arrays);
      if (plan.empty())
        return;
      connectivity.copy_from_host(plan.connectivity);
      supplemental.copy_from_host(convert<Number>(plan.supplemental));
      targets.copy_from_host(plan.targets);
      overwrite.copy_from_host(plan.overwrite);
      source_offsets.copy_from_host(plan.source_offsets);
      sources.copy_from_host(plan.sources);
      weights.copy_from_host(convert<Number>(plan.weights));
      element_data.reinit(plan.element_data_size());
    }



    template <typename Number>
    std::size_t
    ConstraintDeviceData<Number>::memory_consumption() const
    {
      return connectivity.memory_consumption() +
             supplemental.memory_consumption() + targets.memory_consumption() +
             overwrite.memory_consumption() +
             source_offsets.memory_consumption() +
             sources.memory_consumption() + weights.memory_consumption() +
             element_data.memory_consumption();
    }



    template class ConstraintDeviceData<float>;
    template class ConstraintDeviceData<double>;
  } // namespace internal
} // namespace GPUAssembly
