// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_resident_pressure_device_h
#define hyperelastic_resident_pressure_device_h

// The follower pressure of the resident backend on the rank's GPU: the
// device backend's face kernel (surface_load_kernels.cuh) for the forces
// and the load stiffness of the rank's faces, then fixed-order sums into
// the residual and the matrix values on the device. Host code includes
// this header; resident_pressure_device.cu holds the kernels.

#include <cstddef>
#include <memory>
#include <vector>

#include "surface_loads.h"

namespace Hyperelastic
{
  /**
   * Sums in a fixed order: sum t, added to entry targets[t] of its
   * destination, is the values at sources[k] for k in [offsets[t],
   * offsets[t+1]) added one after another from 0 in this order.
   */
  struct OrderedSums
  {
    std::vector<int> targets;
    std::vector<int> offsets{0};
    std::vector<int> sources;
  };



  /**
   * The pressure entries of a rank's faces (SurfaceLoadData::force_* and
   * stiffness_*) on the device, with the resident backend's host
   * arithmetic: entry value force_scale * weight * force for force entry
   * k, at place k, and -stiffness_scale * weight * dforce_i/du_j for
   * stiffness entry k, at place n_force_entries + k; the values received
   * from other ranks follow them. The faces' forces and load stiffness
   * come from DevicePressureFaces, the host's face arithmetic
   * (pressure_face_column()), compiled here without fused multiply-adds
   * as the host's is; the weights, the scales and the sums take the host
   * path's arithmetic and order. So the values equal the host path's to
   * round-off, and every run's are the same bit for bit.
   */
  class DevicePressureEntries
  {
  public:
    /**
     * @p faces: the rank's faces, their cell_dofs indexing the values that
     * compute() reads; referenced, not copied. @p sent: the places of the
     * entries sent to other ranks, the messages one after another.
     * @p forces and @p stiffness: the rank's own sums into the residual
     * (owned rows) and the matrix values (positions), over the entries and
     * the @p n_received values received after them.
     */
    DevicePressureEntries(const SurfaceLoadData  &faces,
                          const std::vector<int> &sent,
                          const OrderedSums      &forces,
                          const OrderedSums      &stiffness,
                          const std::size_t       n_received);

    ~DevicePressureEntries();

    /**
     * The entries at the configuration values @p u (device memory, as
     * faces.cell_dofs index them) and the pressure @p pressure, scaled by
     * @p force_scale and @p stiffness_scale; the entries sent to other
     * ranks into @p sent_values (downloaded, in the order of @p sent).
     */
    void
    compute(const double        *u,
            const double         pressure,
            const double         force_scale,
            const double         stiffness_scale,
            std::vector<double> &sent_values);

    /**
     * Adds the sums of the entries of the last compute() and the values
     * @p received from other ranks (host memory, n_received) to
     * @p residual and @p matrix_values (device memory).
     */
    void
    add(const std::vector<double> &received,
        double                    *residual,
        double                    *matrix_values);

  private:
    struct Implementation;
    std::unique_ptr<Implementation> implementation;
  };
} // namespace Hyperelastic

#endif
