// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/engine/constraints/device_data.h>

#include <utility>

#include "../upload.h"

namespace GPUAssembly
{
  namespace internal
  {
    template <typename Number>
    void
    ConstraintDeviceData<Number>::reinit(ConstraintPlan &&new_plan)
    {
      *this = ConstraintDeviceData();
      plan  = std::move(new_plan);
      if (plan.empty())
        return;
      // One staging object for all arrays: their transfers overlap.
      StagedUpload staging(plan.memory_consumption());
      upload(staging, connectivity, plan.connectivity);
      upload(staging, supplemental, convert<Number>(plan.supplemental));
      upload(staging, targets, plan.targets);
      upload(staging, overwrite, plan.overwrite);
      upload(staging, source_offsets, plan.source_offsets);
      upload(staging, sources, plan.sources);
      upload(staging, weights, convert<Number>(plan.weights));
      staging.finish();
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
