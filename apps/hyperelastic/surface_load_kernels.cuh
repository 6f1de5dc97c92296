// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_surface_load_kernels_cuh
#define hyperelastic_surface_load_kernels_cuh

// The surface loads on the device: the pressure's per-face forces and load
// stiffness, one thread per column of a face (pressure_face_column(), the
// host's arithmetic), then fixed-order gathers into the assembled vector
// and the matrix values, so that the sums are bitwise the same in every run
// without atomics.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cuda_runtime.h>

#include <vector>

#include "device_kernels.cuh"
#include "integrator_backend.h"
#include "surface_loads.h"

// The kernels are static: the files that include this header are compiled
// with different contraction flags (-fmad), and each must launch its own
// build of them, not whichever one the linker keeps.
namespace Hyperelastic
{
  namespace internal
  {
    template <typename Number>
    static __global__ void
    pressure_face_kernel(const unsigned int n_faces,
                         const unsigned int n,
                         const unsigned int n_q,
                         const int         *components,
                         const int         *cell_dofs,
                         const Number      *shape_values,
                         const Number      *shape_gradients,
                         const Number      *area_vectors,
                         const Number      *u,
                         const Number       pressure,
                         Number            *face_force,
                         Number            *face_stiffness)
    {
      const unsigned int index = blockIdx.x * block_size + threadIdx.x;
      if (index >= n_faces * n)
        return;
      const unsigned int f = index / n, j = index % n;
      const std::size_t  fq = std::size_t(f) * n_q;
      pressure_face_column(n,
                           n_q,
                           components,
                           cell_dofs + std::size_t(f) * n,
                           shape_values + fq * n,
                           shape_gradients + fq * n * 3,
                           area_vectors + fq * 3,
                           u,
                           pressure,
                           j,
                           face_force[index],
                           face_stiffness == nullptr ?
                             nullptr :
                             face_stiffness + std::size_t(f) * n * n);
    }

    /// @p v as the device's int indices.
    inline std::vector<int>
    as_ints(const std::vector<unsigned int> &v)
    {
      return std::vector<int>(v.begin(), v.end());
    }

    /// @p v in the device's number type.
    template <typename Number>
    std::vector<Number>
    as_numbers(const std::vector<double> &v)
    {
      return std::vector<Number>(v.begin(), v.end());
    }



    /**
     * The pressure faces of a SurfaceLoadData on the device, and the
     * launch of pressure_face_kernel() over them.
     */
    template <typename Number>
    class DevicePressureFaces
    {
    public:
      /// The arrays of @p data's pressure faces (none without them).
      explicit DevicePressureFaces(const SurfaceLoadData &data)
        : data(data)
      {
        if (!data.has_pressure())
          return;
        components.copy_from_host(as_ints(data.dof_components));
        cell_dofs.copy_from_host(as_ints(data.cell_dofs));
        shape_values.copy_from_host(as_numbers<Number>(data.shape_values));
        shape_gradients.copy_from_host(
          as_numbers<Number>(data.shape_gradients));
        area_vectors.copy_from_host(as_numbers<Number>(data.area_vectors));
      }

      /// Enqueue on @p stream the per-face forces (and load stiffness,
      /// where @p face_stiffness is not null) at @p u and @p pressure.
      void
      enqueue(const Number *u,
              const Number  pressure,
              Number       *face_force,
              Number       *face_stiffness,
              cudaStream_t  stream) const
      {
        const unsigned int n_threads = data.n_pressure_faces * data.n_cell_dofs;
        pressure_face_kernel<Number>
          <<<n_blocks(n_threads), block_size, 0, stream>>>(
            data.n_pressure_faces,
            data.n_cell_dofs,
            data.n_face_q_points,
            components.data(),
            cell_dofs.data(),
            shape_values.data(),
            shape_gradients.data(),
            area_vectors.data(),
            u,
            pressure,
            face_force,
            face_stiffness);
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      }

      std::size_t
      memory_consumption() const
      {
        return (shape_values.size() + shape_gradients.size() +
                area_vectors.size()) *
                 sizeof(Number) +
               (components.size() + cell_dofs.size()) * sizeof(int);
      }

    private:
      const SurfaceLoadData            &data;
      GPUAssembly::DeviceVector<int>    components, cell_dofs;
      GPUAssembly::DeviceVector<Number> shape_values, shape_gradients,
        area_vectors;
    };



    // out[targets[t]] -= scale * sum_k weights[k] * buffer[sources[k]],
    // the k of target t in their fixed order.
    template <typename Number>
    static __global__ void
    subtract_gathered(const unsigned int n_targets,
                      const int         *targets,
                      const int         *offsets,
                      const int         *sources,
                      const Number      *weights,
                      const Number      *buffer,
                      const Number       scale,
                      Number            *out)
    {
      const unsigned int t = blockIdx.x * block_size + threadIdx.x;
      if (t >= n_targets)
        return;
      out[targets[t]] -=
        scale * gathered_sum(t, offsets, sources, weights, buffer);
    }

    // out[i] -= scale * pattern[i]; u_eval[i] = (u[i] + u_old[i]) / 2.
    template <typename Number>
    static __global__ void
    subtract_scaled(const unsigned int n,
                    const Number      *pattern,
                    const Number       scale,
                    Number            *out)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i < n)
        out[i] -= scale * pattern[i];
    }

    template <typename Number>
    static __global__ void
    midpoint_values(const unsigned int n,
                    const Number      *u,
                    const Number      *u_old,
                    Number            *u_mid)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i < n)
        u_mid[i] = Number(0.5) * (u[i] + u_old[i]);
    }



    /**
     * SurfaceLoadData on the device, and its application to an assembly:
     * the dead traction and the pressure forces subtracted from the
     * assembled f_int (the residual kernel then takes f_ext - f_int), the
     * load stiffness from the tangent's values.
     */
    template <typename Number>
    class DeviceSurfaceLoads
    {
    public:
      /// @p n_dofs: the length of the vectors.
      DeviceSurfaceLoads(const SurfaceLoadData &data, const unsigned int n_dofs)
        : data(data)
        , n_dofs(n_dofs)
        , pressure_faces(data)
      {
        if (data.has_traction())
          traction_pattern.copy_from_host(
            as_numbers<Number>(data.traction_pattern));
        if (!data.has_pressure())
          return;
        const std::size_t n = data.n_cell_dofs;
        face_force.reinit(data.n_pressure_faces * n);
        u_mid.reinit(n_dofs);
        if (data.load_stiffness)
          face_stiffness.reinit(data.n_pressure_faces * n * n);
        const auto upload = [&](const SurfaceLoadGather &gather,
                                Gather                  &device) {
          device.n_targets = gather.targets.size();
          device.targets.copy_from_host(as_ints(gather.targets));
          device.offsets.copy_from_host(as_ints(gather.offsets));
          device.sources.copy_from_host(as_ints(gather.sources));
          device.weights.copy_from_host(as_numbers<Number>(gather.weights));
        };
        upload(pressure_force_gather(data), force_gather);
        if (data.load_stiffness)
          upload(pressure_stiffness_gather(data), stiffness_gather);
      }

      /**
       * Enqueue on @p stream: the surface forces at the displacement @p u
       * (the midpoint with @p u_old in dynamic runs) subtracted from
       * @p assembled, their load stiffness from @p values, scaled as the
       * element kernel's f and K are.
       */
      void
      enqueue(const StepLoads &loads,
              const Number    *u,
              const Number    *u_old,
              Number          *assembled,
              Number          *values,
              cudaStream_t     stream)
      {
        const bool   dynamic     = loads.dt > 0;
        const double force_scale = dynamic ? loads.dt / 2 : 1.;
        if (data.has_traction())
          {
            subtract_scaled<<<n_blocks(n_dofs), block_size, 0, stream>>>(
              n_dofs,
              traction_pattern.data(),
              Number(force_scale * loads.traction_amplitude),
              assembled);
            GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
          }
        if (!data.has_pressure())
          return;
        const Number *u_pressure = u;
        if (dynamic)
          {
            midpoint_values<<<n_blocks(n_dofs), block_size, 0, stream>>>(
              n_dofs,
              u,
              u_old,
              u_mid.data());
            GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
            u_pressure = u_mid.data();
          }
        pressure_faces.enqueue(u_pressure,
                               Number(loads.pressure),
                               face_force.data(),
                               data.load_stiffness ? face_stiffness.data() :
                                                     nullptr,
                               stream);
        subtract(force_gather,
                 face_force,
                 Number(force_scale),
                 assembled,
                 stream);
        if (data.load_stiffness)
          subtract(stiffness_gather,
                   face_stiffness,
                   Number(dynamic ? loads.dt / 4 : 1.),
                   values,
                   stream);
      }

      std::size_t
      memory_consumption() const
      {
        return pressure_faces.memory_consumption() +
               (traction_pattern.size() + face_force.size() +
                face_stiffness.size() + u_mid.size() +
                force_gather.weights.size() + stiffness_gather.weights.size()) *
                 sizeof(Number) +
               (force_gather.sources.size() + stiffness_gather.sources.size() +
                force_gather.offsets.size() + stiffness_gather.offsets.size() +
                force_gather.targets.size() + stiffness_gather.targets.size()) *
                 sizeof(int);
      }

    private:
      struct Gather
      {
        unsigned int                      n_targets = 0;
        GPUAssembly::DeviceVector<int>    targets, offsets, sources;
        GPUAssembly::DeviceVector<Number> weights;
      };

      void
      subtract(const Gather                            &gather,
               const GPUAssembly::DeviceVector<Number> &buffer,
               const Number                             scale,
               Number                                  *out,
               cudaStream_t                             stream) const
      {
        if (gather.n_targets == 0)
          return;
        subtract_gathered<<<n_blocks(gather.n_targets),
                            block_size,
                            0,
                            stream>>>(gather.n_targets,
                                      gather.targets.data(),
                                      gather.offsets.data(),
                                      gather.sources.data(),
                                      gather.weights.data(),
                                      buffer.data(),
                                      scale,
                                      out);
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      }

      const SurfaceLoadData            &data;
      const unsigned int                n_dofs;
      DevicePressureFaces<Number>       pressure_faces;
      GPUAssembly::DeviceVector<Number> traction_pattern;
      GPUAssembly::DeviceVector<Number> face_force, face_stiffness, u_mid;
      Gather                            force_gather, stiffness_gather;
    };
  } // namespace internal
} // namespace Hyperelastic

#endif
