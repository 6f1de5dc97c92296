// SPDX-License-Identifier: LGPL-2.1-or-later
// The explicit integrator's surface loads on the device. Compiled with
// -fmad=false (CMakeLists.txt): the forces round as the host's.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "explicit_surface_loads.h"
#include "integrator_backend.h"
#include "surface_load_kernels.cuh"

namespace Hyperelastic
{
  namespace
  {
    // The surface-load kernels' helpers (surface_load_kernels.cuh).
    using namespace internal;

    /// forces[targets[t]] = surface_step_force(t, ...) with the traction
    /// amplitude amplitudes[0] and the pressure amplitudes[1].
    template <typename Number>
    __global__ void
    surface_step_force_kernel(const unsigned int n_targets,
                              const int         *targets,
                              const Number      *traction,
                              const int         *offsets,
                              const int         *sources,
                              const Number      *weights,
                              const Number      *face_force,
                              const Number      *amplitudes,
                              Number            *forces)
    {
      const unsigned int t = blockIdx.x * block_size + threadIdx.x;
      if (t >= n_targets)
        return;
      forces[targets[t]] = surface_step_force(t,
                                              traction,
                                              offsets,
                                              sources,
                                              weights,
                                              face_force,
                                              amplitudes[0],
                                              amplitudes[1]);
    }



    template <typename Number>
    class DeviceSurfaceStepForces : public GPUAssembly::TLED::StepForces<Number>
    {
    public:
      DeviceSurfaceStepForces(const SurfaceLoadData     &data,
                              const unsigned int         node_stride,
                              const SurfaceLoadSchedule &schedule,
                              const double               time_step,
                              const unsigned int         steps_per_launch)
        : data(data)
        , gather(surface_step_gather(data, node_stride))
        , schedule(schedule)
        , time_step(time_step)
        , capacity(steps_per_launch)
        , pressure_faces(this->data)
      {
        // One entry at least: a DeviceVector of none has no address.
        const auto at_least_one = [](auto v) {
          if (v.empty())
            v.resize(1);
          return v;
        };
        targets.copy_from_host(as_ints(gather.targets));
        traction.copy_from_host(as_numbers<Number>(gather.traction));
        offsets.copy_from_host(as_ints(gather.offsets));
        sources.copy_from_host(at_least_one(as_ints(gather.sources)));
        weights.copy_from_host(
          at_least_one(as_numbers<Number>(gather.weights)));
        face_force.reinit(
          std::max<std::size_t>(1,
                                std::size_t(data.n_pressure_faces) *
                                  data.n_cell_dofs));
        table.reinit(2 * std::size_t(capacity));
        values.assign(2 * std::size_t(capacity), Number(0));
      }

      std::vector<unsigned int>
      nodes() const override
      {
        return gather.nodes();
      }

      void
      compute(const unsigned int, const Number *, Number *) override
      {
        throw_message(
          "device_surface_step_forces() serves the device stepper; the "
          "host stepper takes host_surface_step_forces().");
      }

      void
      prepare(CUstream_st       *stream,
              const unsigned int first_step,
              const unsigned int n_steps) override
      {
        if (n_steps > capacity)
          throw_message("The surface loads' step forces were made for " +
                        std::to_string(capacity) + " steps per launch, and " +
                        std::to_string(n_steps) + " are launched.");
        for (unsigned int k = 0; k < n_steps; ++k)
          {
            StepLoads    loads;
            const double t = double(first_step + k) * time_step;
            schedule(t, loads);
            values[2 * k]     = Number(loads.traction_amplitude);
            values[2 * k + 1] = Number(loads.pressure);
          }
        // In stream order: the steps launched before read the table until
        // they end. From pageable memory the call returns once the values
        // are staged, so 'values' may change at the next prepare().
        GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpyAsync(table.data(),
                                                values.data(),
                                                2 * sizeof(Number) * n_steps,
                                                cudaMemcpyHostToDevice,
                                                stream));
      }

      void
      enqueue(CUstream_st       *stream,
              const unsigned int k,
              const Number      *u,
              Number            *forces) override
      {
        if (data.has_pressure())
          pressure_faces.enqueue(u,
                                 Number(1),
                                 face_force.data(),
                                 nullptr,
                                 stream);
        const unsigned int n_targets = gather.targets.size();
        if (n_targets == 0)
          return;
        surface_step_force_kernel<<<n_blocks(n_targets),
                                    block_size,
                                    0,
                                    stream>>>(n_targets,
                                              targets.data(),
                                              traction.data(),
                                              offsets.data(),
                                              sources.data(),
                                              weights.data(),
                                              face_force.data(),
                                              table.data() + 2 * k,
                                              forces);
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      }

    private:
      const SurfaceLoadData             data;
      const SurfaceStepGather           gather;
      const SurfaceLoadSchedule         schedule;
      const double                      time_step;
      const unsigned int                capacity;
      GPUAssembly::DeviceVector<int>    targets, offsets, sources;
      GPUAssembly::DeviceVector<Number> traction, weights, face_force;
      DevicePressureFaces<Number>       pressure_faces;
      // The traction amplitude and the pressure of the prepared steps, and
      // their host copy.
      GPUAssembly::DeviceVector<Number> table;
      std::vector<Number>               values;
    };
  } // namespace



  template <typename Number>
  std::shared_ptr<GPUAssembly::TLED::StepForces<Number>>
  device_surface_step_forces(const SurfaceLoadData     &data,
                             const unsigned int         node_stride,
                             const SurfaceLoadSchedule &schedule,
                             const double               time_step,
                             const unsigned int         steps_per_launch)
  {
    if (GPUAssembly::n_cuda_devices() == 0)
      throw_message("The explicit integrator's surface loads on the device "
                    "need a CUDA device, and none was found.");
    return std::make_shared<DeviceSurfaceStepForces<Number>>(data,
                                                             node_stride,
                                                             schedule,
                                                             time_step,
                                                             steps_per_launch);
  }

  template std::shared_ptr<GPUAssembly::TLED::StepForces<double>>
  device_surface_step_forces(const SurfaceLoadData &,
                             const unsigned int,
                             const SurfaceLoadSchedule &,
                             const double,
                             const unsigned int);
  template std::shared_ptr<GPUAssembly::TLED::StepForces<float>>
  device_surface_step_forces(const SurfaceLoadData &,
                             const unsigned int,
                             const SurfaceLoadSchedule &,
                             const double,
                             const unsigned int);
} // namespace Hyperelastic
