// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_explicit_surface_loads_h
#define hyperelastic_explicit_surface_loads_h

// The surface loads of the explicit integrator: the TLED steppers' step
// forces g_n(u_n) = a(t_n) f_traction + p(t_n) f_pressure(u_n), the dead
// traction's consistent nodal forces scaled by its time function and the
// follower pressure on the current surface, on the host and the device.

#include <gpu_assembly/tled/tled_stepper.h>

#include <functional>
#include <memory>

#include "integrator_backend.h"
#include "surface_loads.h"

namespace Hyperelastic
{
  /// Sets the traction amplitude and the pressure of its StepLoads at a
  /// time (SurfaceLoadAmplitudes of 'Surface loads').
  using SurfaceLoadSchedule = std::function<void(double, StepLoads &)>;

  /**
   * The step forces of @p data (make_vertex_surface_load_data(), with the
   * stepper model's node stride @p node_stride) with the amplitudes of
   * @p schedule at t_n = n @p time_step, for the HostStepper. The pressure
   * faces' forces are recomputed at every step on the current surface
   * (pressure_face_forces() at unit pressure), then gathered per state
   * entry in the fixed order of surface_step_gather(): the forces are the
   * same in every run, and those of device_surface_step_forces().
   */
  std::shared_ptr<GPUAssembly::TLED::StepForces<double>>
  host_surface_step_forces(const SurfaceLoadData     &data,
                           const unsigned int         node_stride,
                           const SurfaceLoadSchedule &schedule,
                           const double               time_step);

  /**
   * The same for the DeviceStepper, which launches at most
   * @p steps_per_launch steps after one StepForces::prepare(): a kernel
   * over the pressure faces' columns, then one over the targets of the
   * gather, each target summing its shares in the fixed order (no
   * atomics). The time functions' values of a batch of steps reach the
   * device in prepare(). Throws without a CUDA device.
   */
  template <typename Number>
  std::shared_ptr<GPUAssembly::TLED::StepForces<Number>>
  device_surface_step_forces(const SurfaceLoadData     &data,
                             const unsigned int         node_stride,
                             const SurfaceLoadSchedule &schedule,
                             const double               time_step,
                             const unsigned int         steps_per_launch);
} // namespace Hyperelastic

#endif
