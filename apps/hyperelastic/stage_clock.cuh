// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_stage_clock_cuh
#define hyperelastic_stage_clock_cuh

// The device's own clock over the stages of the steps run whole on the
// device: inside one graph launch the host's timers see only the whole
// step, so the step's kernels stamp the device's global timer between the
// stages and charge the time to them.

#include <gpu_assembly/lac/device_vector.h>

#include <vector>

#include "integrator_backend.h"

namespace Hyperelastic
{
  namespace internal
  {
    // The clock's slots: the last stamp, then nanoseconds per stage,
    // accumulated over the steps.
    namespace clock_slot
    {
      constexpr unsigned int last     = 0;
      constexpr unsigned int assembly = 1;
      constexpr unsigned int solve    = 2;
      constexpr unsigned int update   = 3;
      constexpr unsigned int size     = 4;
    } // namespace clock_slot

    __device__ inline unsigned long long
    global_clock()
    {
      unsigned long long t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      return t;
    }

    // Charge the time since the last stamp to @p stage (or to nothing, for
    // the step's first stamp) and stamp now.
    __device__ inline void
    stamp(unsigned long long *clock, const unsigned int stage)
    {
      const unsigned long long now = global_clock();
      if (stage != clock_slot::last)
        clock[stage] += now - clock[clock_slot::last];
      clock[clock_slot::last] = now;
    }

    static __global__ void
    stamp_kernel(unsigned long long *clock, const unsigned int stage)
    {
      stamp(clock, stage);
    }

    /**
     * The clock's device memory and its reading on the host.
     */
    class StageClock
    {
    public:
      StageClock()
        : clock(clock_slot::size)
      {}

      /// Where the kernels stamp.
      unsigned long long *
      data()
      {
        return clock.data();
      }

      /// Seconds per stage since the last reset().
      DeviceStageTimes
      read() const
      {
        const std::vector<unsigned long long> ns = clock.to_host();
        DeviceStageTimes                      times;
        times.assembly = 1e-9 * ns[clock_slot::assembly];
        times.solve    = 1e-9 * ns[clock_slot::solve];
        times.update   = 1e-9 * ns[clock_slot::update];
        return times;
      }

      void
      reset()
      {
        clock.set_zero();
      }

    private:
      GPUAssembly::DeviceVector<unsigned long long> clock;
    };
  } // namespace internal
} // namespace Hyperelastic

#endif
