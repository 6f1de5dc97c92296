// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_device_step_report_h
#define hyperelastic_device_step_report_h

// The report of a time step run whole on the device (one graph launch):
// doubles in device memory that the step's kernels write and the host reads
// once per step.

#include "integrator_backend.h"

namespace Hyperelastic
{
  namespace internal
  {
    namespace report_slot
    {
      constexpr unsigned int status    = 0; // StepCode
      constexpr unsigned int iteration = 1; // index of the next residual
      constexpr unsigned int cg        = 2; // CG iterations of the step
      constexpr unsigned int residuals = 3; // one per Newton iteration + 1
    }                                       // namespace report_slot

    // StepStatus, plus "still iterating".
    namespace step_code
    {
      constexpr int running      = -1;
      constexpr int converged    = static_cast<int>(StepStatus::converged);
      constexpr int not_finite   = static_cast<int>(StepStatus::not_finite);
      constexpr int diverged     = static_cast<int>(StepStatus::diverged);
      constexpr int cg_breakdown = static_cast<int>(StepStatus::cg_breakdown);
    } // namespace step_code
  }   // namespace internal
} // namespace Hyperelastic

#endif
