// SPDX-License-Identifier: LGPL-2.1-or-later
// The loops of resident_updates.h: each one functor, run by a CUDA kernel
// or by a loop on the CPU, so that both paths share their arithmetic.

#include <gpu_assembly/base/cuda_check.h>

#include <cuda_runtime.h>

#include <algorithm>

#include "resident_updates.h"

namespace Hyperelastic
{
  namespace ResidentUpdates
  {
    namespace
    {
      constexpr unsigned int block_size = 256;

      template <class Operation>
      __global__ void
      for_each_kernel(const Operation operation, const std::size_t n)
      {
        for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x;
             i < n;
             i += std::size_t(gridDim.x) * block_size)
          operation(i);
      }

      template <class Operation>
      void
      for_each(const bool on_device, const std::size_t n, const Operation &op)
      {
        if (n == 0)
          return;
        if (on_device)
          {
            const std::size_t blocks =
              std::min<std::size_t>((n + block_size - 1) / block_size, 65535);
            for_each_kernel<<<static_cast<unsigned int>(blocks), block_size>>>(
              op,
              n);
            GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
          }
        else
          for (std::size_t i = 0; i < n; ++i)
            op(i);
      }

      struct Predict
      {
        double        dt;
        const double *x_old, *p_old, *mass;
        double       *x;
        __host__ __device__ void
        operator()(const std::size_t i) const
        {
          x[i] = dt > 0 ? x_old[i] + dt * p_old[i] / mass[i] : x_old[i];
        }
      };

      struct Midpoint
      {
        bool          midpoint;
        const double *x, *x_old;
        double       *mid;
        __host__ __device__ void
        operator()(const std::size_t i) const
        {
          mid[i] = midpoint ? 0.5 * (x[i] + x_old[i]) : x[i];
        }
      };

      struct Residual
      {
        double        dt, load_factor;
        const double *load, *f, *mass, *x, *x_old, *p_old;
        double       *r;
        __host__ __device__ void
        operator()(const std::size_t i) const
        {
          double value = load_factor * load[i] - f[i];
          if (dt > 0)
            value += p_old[i] - mass[i] * (x[i] - x_old[i]) / dt;
          r[i] = value;
        }
      };

      struct AddMass
      {
        double        dt;
        const double *mass;
        const int    *positions;
        double       *values;
        __host__ __device__ void
        operator()(const std::size_t i) const
        {
          values[positions[i]] += mass[i] / dt;
        }
      };

      struct ZeroEntries
      {
        const int *indices;
        double    *x;
        __host__ __device__ void
        operator()(const std::size_t i) const
        {
          x[indices[i]] = 0;
        }
      };

      struct Distribute
      {
        const int    *dofs, *offsets, *entries;
        const double *weights, *inhomogeneities;
        double       *x;
        __host__ __device__ void
        operator()(const std::size_t k) const
        {
          double value = 0;
          for (int j = offsets[k]; j < offsets[k + 1]; ++j)
            value += weights[j] * x[entries[j]];
          x[dofs[k]] = value + inhomogeneities[k];
        }
      };

      struct Add
      {
        const double *delta;
        double       *x;
        __host__ __device__ void
        operator()(const std::size_t i) const
        {
          x[i] += delta[i];
        }
      };

      struct Finish
      {
        double        dt;
        const double *x, *mass;
        double       *x_old, *p_old;
        __host__ __device__ void
        operator()(const std::size_t i) const
        {
          if (dt > 0)
            p_old[i] = 2. * mass[i] * (x[i] - x_old[i]) / dt - p_old[i];
          x_old[i] = x[i];
        }
      };
    } // namespace



    void
    predict(const bool        on_device,
            const std::size_t n,
            const double      dt,
            const double     *x_old,
            const double     *p_old,
            const double     *mass,
            double           *x)
    {
      for_each(on_device, n, Predict{dt, x_old, p_old, mass, x});
    }



    void
    midpoint(const bool        on_device,
             const std::size_t n,
             const bool        midpoint,
             const double     *x,
             const double     *x_old,
             double           *mid)
    {
      for_each(on_device, n, Midpoint{midpoint, x, x_old, mid});
    }



    void
    residual(const bool        on_device,
             const std::size_t n,
             const double      dt,
             const double      load_factor,
             const double     *load,
             const double     *f,
             const double     *mass,
             const double     *x,
             const double     *x_old,
             const double     *p_old,
             double           *r)
    {
      for_each(on_device,
               n,
               Residual{dt, load_factor, load, f, mass, x, x_old, p_old, r});
    }



    void
    add_mass_to_diagonal(const bool        on_device,
                         const std::size_t n,
                         const double      dt,
                         const double     *mass,
                         const int        *diagonal_positions,
                         double           *values)
    {
      for_each(on_device, n, AddMass{dt, mass, diagonal_positions, values});
    }



    void
    zero_entries(const bool        on_device,
                 const std::size_t n,
                 const int        *indices,
                 double           *x)
    {
      for_each(on_device, n, ZeroEntries{indices, x});
    }



    void
    distribute(const bool        on_device,
               const std::size_t n_lines,
               const int        *dofs,
               const int        *offsets,
               const int        *entries,
               const double     *weights,
               const double     *inhomogeneities,
               double           *x)
    {
      for_each(on_device,
               n_lines,
               Distribute{dofs, offsets, entries, weights, inhomogeneities, x});
    }



    void
    add(const bool        on_device,
        const std::size_t n,
        const double     *delta,
        double           *x)
    {
      for_each(on_device, n, Add{delta, x});
    }



    void
    copy(const bool        on_device,
         const std::size_t n,
         const double     *src,
         double           *dst)
    {
      if (n == 0)
        return;
      if (on_device)
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaMemcpy(dst, src, n * sizeof(double), cudaMemcpyDeviceToDevice));
      else
        std::copy(src, src + n, dst);
    }



    void
    finish_step(const bool        on_device,
                const std::size_t n,
                const double      dt,
                const double     *x,
                const double     *mass,
                double           *x_old,
                double           *p_old)
    {
      for_each(on_device, n, Finish{dt, x, mass, x_old, p_old});
    }
  } // namespace ResidentUpdates
} // namespace Hyperelastic
