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
      const unsigned int t = blockIdx.x * internal::block_size + threadIdx.x;
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
      {
        if (GPUAssembly::n_cuda_devices() == 0)
          throw_message(
            "The explicit integrator's surface loads on the device need a "
            "CUDA device, and none was found.");
        const auto to_int = [](const std::vector<unsigned int> &v) {
          return std::vector<int>(v.begin(), v.end());
        };
        const auto to_number = [](const std::vector<double> &v) {
          return std::vector<Number>(v.begin(), v.end());
        };
        // One entry at least: a DeviceVector of none has no address.
        const auto at_least_one = [](auto v) {
          if (v.empty())
            v.resize(1);
          return v;
        };
        targets.copy_from_host(to_int(gather.targets));
        traction.copy_from_host(to_number(gather.traction));
        offsets.copy_from_host(to_int(gather.offsets));
        sources.copy_from_host(at_least_one(to_int(gather.sources)));
        weights.copy_from_host(at_least_one(to_number(gather.weights)));
        face_force.reinit(
          std::max<std::size_t>(1,
                                std::size_t(data.n_pressure_faces) *
                                  data.n_cell_dofs));
        if (data.has_pressure())
          {
            components.copy_from_host(to_int(data.dof_components));
            cell_dofs.copy_from_host(to_int(data.cell_dofs));
            shape_values.copy_from_host(to_number(data.shape_values));
            shape_gradients.copy_from_host(to_number(data.shape_gradients));
            area_vectors.copy_from_host(to_number(data.area_vectors));
          }
        table.reinit(2 * std::size_t(capacity));
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
      prepare(const unsigned int first_step,
              const unsigned int n_steps) override
      {
        if (n_steps > capacity)
          throw_message("The surface loads' step forces were made for " +
                        std::to_string(capacity) + " steps per launch, and " +
                        std::to_string(n_steps) + " are launched.");
        // A copy from pageable memory on the legacy stream waits for the
        // steps launched before, which read the table.
        std::vector<Number> values(2 * std::size_t(capacity), Number(0));
        for (unsigned int k = 0; k < n_steps; ++k)
          {
            StepLoads    loads;
            const double t = double(first_step + k) * time_step;
            schedule(t, loads);
            values[2 * k]     = Number(loads.traction_amplitude);
            values[2 * k + 1] = Number(loads.pressure);
          }
        table.copy_from_host(values);
      }

      void
      enqueue(CUstream_st       *stream,
              const unsigned int k,
              const Number      *u,
              Number            *forces) override
      {
        if (data.has_pressure())
          {
            const unsigned int n_threads =
              data.n_pressure_faces * data.n_cell_dofs;
            internal::pressure_face_kernel<Number>
              <<<internal::n_blocks(n_threads),
                 internal::block_size,
                 0,
                 stream>>>(data.n_pressure_faces,
                           data.n_cell_dofs,
                           data.n_face_q_points,
                           components.data(),
                           cell_dofs.data(),
                           shape_values.data(),
                           shape_gradients.data(),
                           area_vectors.data(),
                           u,
                           Number(1),
                           face_force.data(),
                           nullptr);
            GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
          }
        const unsigned int n_targets = gather.targets.size();
        if (n_targets == 0)
          return;
        surface_step_force_kernel<<<internal::n_blocks(n_targets),
                                    internal::block_size,
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
      GPUAssembly::DeviceVector<int>    components, cell_dofs;
      GPUAssembly::DeviceVector<Number> shape_values, shape_gradients,
        area_vectors;
      // The traction amplitude and the pressure of the prepared steps.
      GPUAssembly::DeviceVector<Number> table;
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
