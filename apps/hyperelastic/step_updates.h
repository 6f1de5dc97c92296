// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_step_updates_h
#define hyperelastic_step_updates_h

// The per-entry updates of the midpoint rule around the assembly and the
// Jacobi-CG: the predictor, the residual and the step's end, the Newton
// update and the constraints' distribution, as bodies for the plugin's
// GPUAssembly::for_each_index(). The resident backend runs them on the
// rank's owned entries on the host or the device (step_updates.cu
// instantiates the device branches), the Trilinos and host backends on the
// host, so that every backend shares their arithmetic. No deal.II here:
// nvcc compiles this header.

#include <gpu_assembly/base/config.h>

#include <cstddef>

namespace Hyperelastic
{
  namespace StepUpdates
  {
    /// x = x_old + dt p_old / mass (dt > 0), else x = x_old.
    struct Predict
    {
      double        dt;
      const double *x_old, *p_old, *mass;
      double       *x;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        x[i] = dt > 0 ? x_old[i] + dt * p_old[i] / mass[i] : x_old[i];
      }
    };

    /// mid = (x + x_old) / 2 (midpoint), else mid = x.
    struct Midpoint
    {
      bool          midpoint;
      const double *x, *x_old;
      double       *mid;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        mid[i] = midpoint ? 0.5 * (x[i] + x_old[i]) : x[i];
      }
    };

    /**
     * r = load_factor load - f, plus p_old - mass (x - x_old) / dt where
     * dt > 0 (the residual of the midpoint rule, the assembled vector f
     * holding dt/2 (f_int - f_body)).
     */
    struct Residual
    {
      double        dt, load_factor;
      const double *load, *f, *mass, *x, *x_old, *p_old;
      double       *r;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        double value = load_factor * load[i] - f[i];
        if (dt > 0)
          value += p_old[i] - mass[i] * (x[i] - x_old[i]) / dt;
        r[i] = value;
      }
    };

    /// values[positions[i]] += mass[i] / dt.
    struct AddMassToDiagonal
    {
      double        dt;
      const double *mass;
      const int    *positions;
      double       *values;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        values[positions[i]] += mass[i] / dt;
      }
    };

    /// x[indices[i]] = 0.
    struct ZeroEntries
    {
      const int *indices;
      double    *x;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        x[indices[i]] = 0;
      }
    };

    /**
     * AffineConstraints::distribute() for line k: x[dofs[k]] = sum of
     * weights[j] x[entries[j]] over j in [offsets[k], offsets[k+1]) plus
     * inhomogeneities[k]. The constraints are closed, so the lines read no
     * constrained entry and run in any order.
     */
    struct Distribute
    {
      const int    *dofs, *offsets, *entries;
      const double *weights, *inhomogeneities;
      double       *x;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t k) const
      {
        double value = 0;
        for (int j = offsets[k]; j < offsets[k + 1]; ++j)
          value += weights[j] * x[entries[j]];
        x[dofs[k]] = value + inhomogeneities[k];
      }
    };

    /// x += delta.
    struct Add
    {
      const double *delta;
      double       *x;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        x[i] += delta[i];
      }
    };

    /// x += factor y.
    struct AddScaled
    {
      double        factor;
      const double *y;
      double       *x;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        x[i] += factor * y[i];
      }
    };

    /// dst = src.
    struct Copy
    {
      const double *src;
      double       *dst;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        dst[i] = src[i];
      }
    };

    /**
     * The step's end: p_old = 2 mass (x - x_old) / dt - p_old (dt > 0),
     * then x_old = x.
     */
    struct FinishStep
    {
      double        dt;
      const double *x, *mass;
      double       *x_old, *p_old;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        if (dt > 0)
          p_old[i] = 2. * mass[i] * (x[i] - x_old[i]) / dt - p_old[i];
        x_old[i] = x[i];
      }
    };
  } // namespace StepUpdates
} // namespace Hyperelastic

#endif
