// SPDX-License-Identifier: LGPL-2.1-or-later
// The device branches of the loops that run the bodies of step_updates.h.

#include <gpu_assembly/lac/index_loops.cuh>

#include "step_updates.h"

GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(Hyperelastic::StepUpdates::Predict)
GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(Hyperelastic::StepUpdates::Midpoint)
GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(Hyperelastic::StepUpdates::Residual)
GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(
  Hyperelastic::StepUpdates::AddMassToDiagonal)
GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(Hyperelastic::StepUpdates::ZeroEntries)
GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(Hyperelastic::StepUpdates::Distribute)
GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(Hyperelastic::StepUpdates::Add)
GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(Hyperelastic::StepUpdates::AddScaled)
GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(Hyperelastic::StepUpdates::Copy)
GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX(Hyperelastic::StepUpdates::FinishStep)
