// SPDX-License-Identifier: LGPL-2.1-or-later
// The explicit integrator's surface loads on the host. Compiled with
// -ffp-contract=off (CMakeLists.txt), as the device kernels are with
// -fmad=false: the host forces round as the device's.

#include "explicit_surface_loads.h"

#include <deal.II/base/parallel.h>

#include <vector>

#include "integrator_backend.h"

namespace Hyperelastic
{
  namespace
  {
    class HostSurfaceStepForces : public GPUAssembly::TLED::StepForces<double>
    {
    public:
      HostSurfaceStepForces(const SurfaceLoadData     &data,
                            const unsigned int         node_stride,
                            const SurfaceLoadSchedule &schedule,
                            const double               time_step)
        : data(data)
        , gather(surface_step_gather(data, node_stride))
        , schedule(schedule)
        , time_step(time_step)
        , face_force(std::size_t(data.n_pressure_faces) * data.n_cell_dofs)
      {}

      std::vector<unsigned int>
      nodes() const override
      {
        return gather.nodes();
      }

      void
      compute(const unsigned int step, const double *u, double *forces) override
      {
        StepLoads    loads;
        const double t = step * time_step;
        schedule(t, loads);
        const unsigned int n = data.n_cell_dofs;
        // Each face writes its own forces: any number of threads gives the
        // same numbers.
        dealii::parallel::apply_to_subranges(
          0u,
          data.n_pressure_faces,
          [&](const unsigned int begin, const unsigned int end) {
            for (unsigned int f = begin; f < end; ++f)
              pressure_face_forces(data,
                                   f,
                                   u,
                                   1.,
                                   face_force.data() + std::size_t(f) * n,
                                   nullptr);
          },
          64);
        for (unsigned int k = 0; k < gather.targets.size(); ++k)
          forces[gather.targets[k]] =
            surface_step_force(k,
                               gather.traction.data(),
                               gather.offsets.data(),
                               gather.sources.data(),
                               gather.weights.data(),
                               face_force.data(),
                               loads.traction_amplitude,
                               loads.pressure);
      }

      // The host's forces serve the HostStepper only.
      void
      prepare(CUstream_st *, const unsigned int, const unsigned int) override
      {
        refuse_device();
      }

      void
      enqueue(CUstream_st *,
              const unsigned int,
              const double *,
              double *) override
      {
        refuse_device();
      }

    private:
      static void
      refuse_device()
      {
        throw_message("host_surface_step_forces() serves the host stepper; "
                      "the device stepper takes "
                      "device_surface_step_forces().");
      }

      const SurfaceLoadData     data;
      const SurfaceStepGather   gather;
      const SurfaceLoadSchedule schedule;
      const double              time_step;
      std::vector<double>       face_force;
    };
  } // namespace



  std::shared_ptr<GPUAssembly::TLED::StepForces<double>>
  host_surface_step_forces(const SurfaceLoadData     &data,
                           const unsigned int         node_stride,
                           const SurfaceLoadSchedule &schedule,
                           const double               time_step)
  {
    return std::make_shared<HostSurfaceStepForces>(data,
                                                   node_stride,
                                                   schedule,
                                                   time_step);
  }
} // namespace Hyperelastic
