// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_device_kernels_cuh
#define hyperelastic_device_kernels_cuh

// The element-wise kernels of the device backend: the Newton and time
// updates of the midpoint rule around the plugin's assembly and Jacobi-CG,
// and the Newton loop's tests for steps that run whole on the device.

#include <gpu_assembly/lac/block_sum.cuh>
#include <gpu_assembly/lac/device_solver.h>

#include <cuda_runtime.h>

#include "device_step_report.h"
#include "stage_clock.cuh"

namespace Hyperelastic
{
  namespace internal
  {
    constexpr int dim        = 3;
    constexpr int block_size = 256;

    inline unsigned int
    n_blocks(const std::size_t n)
    {
      return static_cast<unsigned int>((n + block_size - 1) / block_size);
    }

    // Nodal data of the element kernel: the midpoint displacement
    // (u + u_k)/2 (dynamic) or u (quasi-static), plus X if the kernel reads
    // positions. Gathers from DoF order into node-major order.
    template <typename Number>
    __global__ void
    gather_nodal_data(const Number      *u,
                      const Number      *u_old,
                      const int         *node_dofs,
                      const Number      *reference_positions,
                      const unsigned int n_values,
                      const bool         midpoint,
                      Number            *nodal_data)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i >= n_values)
        return;
      const int dof   = node_dofs[i];
      Number    value = midpoint ? Number(0.5) * (u[dof] + u_old[dof]) : u[dof];
      if (reference_positions != nullptr)
        value += reference_positions[i];
      nodal_data[i] = value;
    }

    // The rest of an assembly in one pass over the DoFs: the residual of
    // eq. (4), r = p_k - m (u - u_k)/dt - dt/2 f(u_mid), where the assembled
    // vector holds dt/2 (f_int - f_body) and the nodal load enters f with a
    // minus sign (quasi-static, dt = 0: r = f_ext - f_int); m/dt added to
    // the diagonal of the tangent (the lumped mass term of eq. (6)) and its
    // inverse stored for the Jacobi preconditioner; and the block sums of
    // r.r for the residual norm. One kernel instead of three, for small
    // meshes' sake, where launches and drains outweigh the arithmetic. The
    // load factor changes every step and is read from device memory, so
    // that a step's graph need not be rebuilt for it.
    template <typename Number>
    __global__ void
    residual_kernel(const Number        *assembled,
                    const Number        *u,
                    const Number        *u_old,
                    const Number        *p_old,
                    const Number        *mass,
                    const Number        *load_pattern,
                    const unsigned char *constrained,
                    const int           *diagonal_index,
                    const unsigned int   n,
                    const Number         dt,
                    const Number        *load_factor_pointer,
                    Number              *r,
                    Number              *values,
                    Number              *inverse_diagonal,
                    double              *partial)
    {
      const Number load_factor = *load_factor_pointer;
      double       rr[1]       = {0.};
      for (unsigned int i = blockIdx.x * block_size + threadIdx.x; i < n;
           i += gridDim.x * block_size)
        {
          Number value = load_factor * load_pattern[i] - assembled[i];
          if (dt > Number(0))
            value += p_old[i] - mass[i] * (u[i] - u_old[i]) / dt;
          value = constrained[i] ? Number(0) : value;
          r[i]  = value;
          rr[0] += double(value) * double(value);

          Number diagonal = values[diagonal_index[i]];
          if (dt > Number(0))
            {
              diagonal += mass[i] / dt;
              values[diagonal_index[i]] = diagonal;
            }
          inverse_diagonal[i] = Number(1) / diagonal;
        }

      GPUAssembly::block_sum<block_size>(rr);
      if (threadIdx.x == 0)
        partial[blockIdx.x] = rr[0];
    }



    // First Newton iterate u = u_k + dt p_k / m.
    template <typename Number>
    __global__ void
    predict_kernel(const Number      *u_old,
                   const Number      *p_old,
                   const Number      *mass,
                   const unsigned int n,
                   const Number       dt,
                   Number            *u)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i < n)
        u[i] = u_old[i] + dt * p_old[i] / mass[i];
    }

    // Eq. (5) written with eq. (4): p_{k+1} = 2 m (u - u_k)/dt - p_k; then
    // the new step's old state. Given a step report (run_step()), only if
    // the step converged, so that a failed step leaves the last good state.
    template <typename Number>
    __global__ void
    finish_kernel(const Number      *u,
                  const Number      *mass,
                  const unsigned int n,
                  const Number       dt,
                  const double      *report,
                  Number            *u_old,
                  Number            *p_old)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i >= n || (report != nullptr &&
                     report[report_slot::status] != step_code::converged))
        return;
      if (dt > Number(0))
        p_old[i] = Number(2) * mass[i] * (u[i] - u_old[i]) / dt - p_old[i];
      u_old[i] = u[i];
    }



    // A step's start: the report reset, the clock's first stamp.
    static __global__ void
    step_begin_kernel(double *report, unsigned long long *clock)
    {
      report[report_slot::status]    = step_code::running;
      report[report_slot::iteration] = 0;
      report[report_slot::cg]        = 0;
      stamp(clock, clock_slot::last);
    }

    // After an assembly: the residual norm from the residual kernel's block
    // sums, added in the order DeviceReduction::finish() adds them, so that
    // the norm is bitwise the one the host-driven loop sees; then the
    // tests of run_newton_loop(), in its order, and whether the
    // loop goes on.
    static __global__ void
    newton_test_kernel(const double                    *partial,
                       const unsigned int               n_partials,
                       const double                     tolerance,
                       const unsigned int               max_iterations,
                       const double                     divergence_limit,
                       const cudaGraphConditionalHandle loop,
                       double                          *report,
                       unsigned long long              *clock)
    {
      double value[1];
      GPUAssembly::sum_partials<block_size>(partial, n_partials, value);
      if (threadIdx.x != 0)
        return;
      stamp(clock, clock_slot::assembly);
      int status = static_cast<int>(report[report_slot::status]);
      if (status == step_code::running)
        {
          const unsigned int it =
            static_cast<unsigned int>(report[report_slot::iteration]);
          const double residual               = sqrt(value[0]);
          report[report_slot::residuals + it] = residual;
          const double first                  = report[report_slot::residuals];
          if (!isfinite(residual))
            status = step_code::not_finite;
          else if (residual <= tolerance)
            status = step_code::converged;
          else if (it == max_iterations ||
                   residual > divergence_limit * fmax(first, tolerance))
            status = step_code::diverged;
          report[report_slot::status] = status;
        }
      cudaGraphSetConditional(loop, status == step_code::running ? 1u : 0u);
    }

    // After a CG solve: u += delta; and, given a step report (run_step()),
    // the CG's iterations and the breakdown test, the next residual being
    // the next iteration's. The host-driven loop (solve_and_update()) passes
    // no report: it reads the CG's result itself.
    template <typename Number>
    __global__ void
    newton_update_kernel(const Number       *delta,
                         const unsigned int  n,
                         const double       *cg_result,
                         Number             *u,
                         double             *report,
                         unsigned long long *clock)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i == 0 && report != nullptr)
        {
          using CG = GPUAssembly::DeviceJacobiCG<Number>;
          stamp(clock, clock_slot::solve);
          report[report_slot::cg] += cg_result[CG::result_iterations];
          report[report_slot::iteration] += 1;
          if (!isfinite(sqrt(cg_result[CG::result_final_rr])))
            report[report_slot::status] = step_code::cg_breakdown;
        }
      if (i < n)
        u[i] += delta[i];
    }
  } // namespace internal
} // namespace Hyperelastic

#endif
