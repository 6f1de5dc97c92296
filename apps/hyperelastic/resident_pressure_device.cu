// SPDX-License-Identifier: LGPL-2.1-or-later
// The resident backend's pressure entries on the device
// (resident_pressure_device.h). Compiled without fused multiply-adds, as
// the host's face arithmetic (surface_loads.cc) is.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/distributed/resident_operations.h>
#include <gpu_assembly/lac/device_vector.h>
#include <gpu_assembly/lac/index_loops.h>

#include <cuda_runtime.h>

#include <string>

#include "resident_pressure_device.h"
#include "surface_load_kernels.cuh"

namespace Hyperelastic
{
  namespace
  {
    // The surface-load kernels' helpers (surface_load_kernels.cuh).
    using namespace Hyperelastic::internal;

    // values[e] = scale * weights[e] * buffer[sources[e]], the products in
    // the host path's order.
    __global__ void
    weighted_entries(const unsigned int n,
                     const double       scale,
                     const double      *weights,
                     const int         *sources,
                     const double      *buffer,
                     double            *values)
    {
      const unsigned int e = blockIdx.x * block_size + threadIdx.x;
      if (e < n)
        values[e] = scale * weights[e] * buffer[sources[e]];
    }

    // OrderedSums: one thread per sum, its values in their order.
    __global__ void
    add_ordered_sums(const unsigned int n,
                     const int         *targets,
                     const int         *offsets,
                     const int         *sources,
                     const double      *values,
                     double            *out)
    {
      const unsigned int t = blockIdx.x * block_size + threadIdx.x;
      if (t >= n)
        return;
      double sum = 0;
      for (int k = offsets[t]; k < offsets[t + 1]; ++k)
        sum += values[sources[k]];
      out[targets[t]] += sum;
    }
  } // namespace



  struct DevicePressureEntries::Implementation
  {
    struct Sums
    {
      unsigned int                   n = 0;
      GPUAssembly::DeviceVector<int> targets, offsets, sources;

      void
      reinit(const OrderedSums &sums)
      {
        n = sums.targets.size();
        targets.copy_from_host(sums.targets);
        offsets.copy_from_host(sums.offsets);
        sources.copy_from_host(sums.sources);
      }

      void
      add(const double *values, double *out) const
      {
        if (n == 0)
          return;
        add_ordered_sums<<<n_blocks(n), block_size>>>(n,
                                                      targets.data(),
                                                      offsets.data(),
                                                      sources.data(),
                                                      values,
                                                      out);
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      }
    };

    Implementation(const SurfaceLoadData  &faces,
                   const std::vector<int> &sent,
                   const OrderedSums      &forces,
                   const OrderedSums      &stiffness,
                   const std::size_t       n_received)
      : faces(faces)
      , pressure_faces(faces)
      , n_force_entries(faces.force_local.size())
      , n_stiffness_entries(
          faces.load_stiffness ? faces.stiffness_local_i.size() : 0)
    {
      const std::size_t n = faces.n_cell_dofs;
      face_force.reinit(std::size_t(faces.n_pressure_faces) * n);
      force_weights.copy_from_host(faces.force_weights);
      force_sources.copy_from_host(as_ints(pressure_force_sources(faces)));
      if (n_stiffness_entries > 0)
        {
          face_stiffness.reinit(std::size_t(faces.n_pressure_faces) * n * n);
          stiffness_weights.copy_from_host(faces.stiffness_weights);
          stiffness_sources.copy_from_host(
            as_ints(pressure_stiffness_sources(faces)));
        }
      values.reinit(n_force_entries + n_stiffness_entries + n_received);
      sent_places.copy_from_host(sent);
      sent_values.reinit(sent.size());
      force_sums.reinit(forces);
      stiffness_sums.reinit(stiffness);
    }

    const SurfaceLoadData            &faces;
    DevicePressureFaces<double>       pressure_faces;
    const std::size_t                 n_force_entries;
    const std::size_t                 n_stiffness_entries;
    GPUAssembly::DeviceVector<double> face_force, face_stiffness;
    GPUAssembly::DeviceVector<double> force_weights, stiffness_weights;
    GPUAssembly::DeviceVector<int>    force_sources, stiffness_sources;
    /// The entries, then the received values.
    GPUAssembly::DeviceVector<double> values;
    GPUAssembly::DeviceVector<int>    sent_places;
    GPUAssembly::DeviceVector<double> sent_values;
    Sums                              force_sums, stiffness_sums;
  };



  DevicePressureEntries::DevicePressureEntries(const SurfaceLoadData  &faces,
                                               const std::vector<int> &sent,
                                               const OrderedSums      &forces,
                                               const OrderedSums &stiffness,
                                               const std::size_t  n_received)
    : implementation(std::make_unique<Implementation>(faces,
                                                      sent,
                                                      forces,
                                                      stiffness,
                                                      n_received))
  {}



  DevicePressureEntries::~DevicePressureEntries() = default;



  void
  DevicePressureEntries::compute(const double        *u,
                                 const double         pressure,
                                 const double         force_scale,
                                 const double         stiffness_scale,
                                 std::vector<double> &sent_values)
  {
    Implementation &d = *implementation;
    if (d.faces.n_pressure_faces > 0)
      d.pressure_faces.enqueue(u,
                               pressure,
                               d.face_force.data(),
                               d.n_stiffness_entries > 0 ?
                                 d.face_stiffness.data() :
                                 nullptr,
                               0);
    const auto weigh = [&](const std::size_t                        n,
                           const double                             scale,
                           const GPUAssembly::DeviceVector<double> &weights,
                           const GPUAssembly::DeviceVector<int>    &sources,
                           const GPUAssembly::DeviceVector<double> &buffer,
                           double                                  *out) {
      if (n == 0)
        return;
      weighted_entries<<<n_blocks(n), block_size>>>(n,
                                                    scale,
                                                    weights.data(),
                                                    sources.data(),
                                                    buffer.data(),
                                                    out);
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
    };
    weigh(d.n_force_entries,
          force_scale,
          d.force_weights,
          d.force_sources,
          d.face_force,
          d.values.data());
    weigh(d.n_stiffness_entries,
          -stiffness_scale,
          d.stiffness_weights,
          d.stiffness_sources,
          d.face_stiffness,
          d.values.data() + d.n_force_entries);
    GPUAssembly::for_each_index(
      true,
      d.sent_places.size(),
      GPUAssembly::ResidentOperations::Gather<double>{d.values.data(),
                                                      d.sent_places.data(),
                                                      d.sent_values.data()});
    // Synchronous on the default stream: waits for the kernels above.
    d.sent_values.copy_to_host(sent_values);
  }



  void
  DevicePressureEntries::add(const std::vector<double> &received,
                             double                    *residual,
                             double                    *matrix_values)
  {
    Implementation   &d       = *implementation;
    const std::size_t entries = d.n_force_entries + d.n_stiffness_entries;
    if (entries + received.size() != d.values.size())
      throw_message("The pressure entries received from other ranks are " +
                    std::to_string(received.size()) + ", the set-up expects " +
                    std::to_string(d.values.size() - entries) + ".");
    if (!received.empty())
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(d.values.data() + entries,
                                         received.data(),
                                         received.size() * sizeof(double),
                                         cudaMemcpyHostToDevice));
    d.force_sums.add(d.values.data(), residual);
    d.stiffness_sums.add(d.values.data(), matrix_values);
  }
} // namespace Hyperelastic
