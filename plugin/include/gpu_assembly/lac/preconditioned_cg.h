// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_preconditioned_cg_h
#define gpu_assembly_lac_preconditioned_cg_h

#include <gpu_assembly/base/config.h>

#include <cmath>
#include <cstddef>

/**
 * @file
 * Preconditioned conjugate gradients, written once for every matrix,
 * vector and preconditioner type: the vector recurrences as per-index
 * bodies (CGStartStep, CGUpdateStep, CGDirectionStep), the scalar
 * recurrence and the stopping test as functions on an array of doubles
 * (namespace CGScalars), both GPU_ASSEMBLY_HOST_DEVICE, and the iteration
 * that strings them together on the host (PreconditionedCG). A solver
 * whose iteration runs on the device without the host (DeviceJacobiCG's
 * CUDA graph) strings the same bodies and scalar functions together in its
 * kernels, so both give the same iterates, bit for bit, on the same data.
 *
 * It is the iteration of deal.II's SolverCG with x_0 = 0: stop when
 * ||r|| <= max(relative_tolerance ||r_0||, absolute_tolerance) (the
 * unpreconditioned residual, r_0 = b), and go on where p.Ap < 0 (an
 * indefinite matrix, on which CG mostly converges all the same); where
 * p.Ap is zero or not finite (a breakdown) the solve stops with a final
 * residual that is not finite, which callers read as CG having failed.
 * Sums are accumulated in double, for float vectors too, so that a
 * single-precision solve does not lose its stopping test to rounding.
 *
 * No deal.II or CUDA headers here: both compilers read this header.
 */

namespace GPUAssembly
{
  /// When a CG solve stops.
  struct CGControl
  {
    double       relative_tolerance = 1e-6;
    double       absolute_tolerance = 0;
    unsigned int max_iterations     = 1000;
  };

  /// How a CG solve went. Does not throw where it did not converge.
  struct CGResult
  {
    unsigned int iterations       = 0;
    double       initial_residual = 0;
    double       final_residual   = 0;
    bool         converged        = false;
  };



  /**
   * The Jacobi preconditioner at one index: z_i = d_i r_i with d the
   * inverse of the matrix diagonal (host or device pointer). A point
   * preconditioner is what CGStartStep and CGUpdateStep apply inside their
   * loops.
   */
  template <typename Number>
  struct PointJacobi
  {
    const Number *inverse_diagonal;

    GPU_ASSEMBLY_HOST_DEVICE Number
    operator()(const std::size_t i, const Number r_i) const
    {
      return inverse_diagonal[i] * r_i;
    }
  };



  /**
   * CG start at index i with x_0 = 0: r = b, z = P r, p = z, x = 0; adds
   * r.z and r.r to sums[0] and sums[1].
   */
  template <typename Number, typename PointPreconditioner>
  struct CGStartStep
  {
    const Number       *b;
    PointPreconditioner preconditioner;
    Number             *x, *r, *z, *p;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i, double (&sums)[2]) const
    {
      const Number ri = b[i];
      const Number zi = preconditioner(i, ri);
      x[i]            = 0;
      r[i]            = ri;
      z[i]            = zi;
      p[i]            = zi;
      sums[0] += double(ri) * double(zi);
      sums[1] += double(ri) * double(ri);
    }
  };

  /**
   * x += alpha p, r -= alpha q, z = P r at index i; adds r.z and r.r of
   * the new r to sums[0] and sums[1]. @p alpha is the step length rounded
   * to Number, once for all indices.
   */
  template <typename Number, typename PointPreconditioner>
  struct CGUpdateStep
  {
    Number              alpha;
    const Number       *p, *q;
    PointPreconditioner preconditioner;
    Number             *x, *r, *z;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i, double (&sums)[2]) const
    {
      x[i] += alpha * p[i];
      const Number ri = r[i] - alpha * q[i];
      const Number zi = preconditioner(i, ri);
      r[i]            = ri;
      z[i]            = zi;
      sums[0] += double(ri) * double(zi);
      sums[1] += double(ri) * double(ri);
    }
  };

  /// p = z + beta p at index i; @p beta rounded to Number.
  template <typename Number>
  struct CGDirectionStep
  {
    Number        beta;
    const Number *z;
    Number       *p;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i) const
    {
      p[i] = z[i] + beta * p[i];
    }
  };



  /**
   * The scalars of a CG solve, an array of CGScalars::size doubles (in
   * device memory where the iteration runs on the device), and the
   * recurrence on them.
   */
  namespace CGScalars
  {
    /// The first four are the result (CGScalars::result()).
    constexpr unsigned int iterations = 0;
    /// r_0 . r_0
    constexpr unsigned int initial_rr = 1;
    /// r . r of the current iterate
    constexpr unsigned int rr = 2;
    /// 1 if converged, else 0
    constexpr unsigned int converged = 3;
    /// r . z of the current iterate
    constexpr unsigned int rz = 4;
    /// on ||r||
    constexpr unsigned int tolerance = 5;
    /// r . z of the next iterate, until next_iteration() makes it current
    constexpr unsigned int next_rz = 6;
    /// 1: another iteration
    constexpr unsigned int go_on = 7;
    /// 1: p.Ap was zero or not finite
    constexpr unsigned int breakdown = 8;
    constexpr unsigned int size      = 9;

    /**
     * The stopping decision for the iterate after @p n_iterations
     * iterations with r.r = @p r_r: ||r|| <= tolerance, in double. Returns
     * whether to go on.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline bool
    decide(double            *state,
           const double       r_r,
           const unsigned int n_iterations,
           const unsigned int max_iterations)
    {
      const double residual = sqrt(r_r);
      const bool   finite   = isfinite(residual);
      const bool   done     = finite && residual <= state[tolerance];
      const bool   more     = finite && !done && n_iterations < max_iterations;
      state[rr]             = r_r;
      state[iterations]     = n_iterations;
      state[converged]      = done ? 1. : 0.;
      state[go_on]          = more ? 1. : 0.;
      return more;
    }

    /// The start's sums r.z and r.r; returns whether to iterate at all.
    GPU_ASSEMBLY_HOST_DEVICE inline bool
    start(double          *state,
          const double     r_z,
          const double     r_r,
          const CGControl &control)
    {
      state[rz]         = r_z;
      state[next_rz]    = r_z;
      state[initial_rr] = r_r;
      state[breakdown]  = 0;
      state[tolerance]  = fmax(control.relative_tolerance * sqrt(r_r),
                              control.absolute_tolerance);
      return decide(state, r_r, 0, control.max_iterations);
    }

    /// Makes the r.z of the last iteration current.
    GPU_ASSEMBLY_HOST_DEVICE inline void
    next_iteration(double *state)
    {
      state[rz] = state[next_rz];
    }

    /**
     * The step length r.z / p.Ap into @p alpha; false on a breakdown (p.Ap
     * zero or not finite), where the solve must stop (breakdown()).
     */
    GPU_ASSEMBLY_HOST_DEVICE inline bool
    step_length(const double *state, const double p_Ap, double &alpha)
    {
      if (p_Ap == 0 || !isfinite(p_Ap))
        return false;
      alpha = state[rz] / p_Ap;
      return true;
    }

    /// Ends the solve after a breakdown: the final residual is NaN.
    GPU_ASSEMBLY_HOST_DEVICE inline void
    set_breakdown(double *state)
    {
      state[breakdown] = 1;
      state[rr]        = NAN;
      state[converged] = 0;
      state[go_on]     = 0;
    }

    /// beta = (r.z)_new / (r.z)_old.
    GPU_ASSEMBLY_HOST_DEVICE inline double
    direction_coefficient(const double *state, const double new_rz)
    {
      return new_rz / state[rz];
    }

    /**
     * After an update with the new sums r.z and r.r: counts the iteration
     * and decides whether to go on.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline bool
    end_iteration(double            *state,
                  const double       new_rz,
                  const double       r_r,
                  const unsigned int max_iterations)
    {
      state[next_rz] = new_rz;
      return decide(state,
                    r_r,
                    static_cast<unsigned int>(state[iterations]) + 1,
                    max_iterations);
    }

    inline CGResult
    result(const double *state)
    {
      CGResult result;
      result.iterations       = static_cast<unsigned int>(state[iterations]);
      result.initial_residual = std::sqrt(state[initial_rr]);
      result.final_residual   = std::sqrt(state[rr]);
      result.converged        = state[converged] != 0;
      return result;
    }
  } // namespace CGScalars



  /**
   * Preconditioned CG with the iteration on the host, generic over the
   * matrix, vector and preconditioner types. With x, b, r, z, p, q of
   * type @p VectorType, A of type @p MatrixType and P of type
   * @p PreconditionerType, it needs (found by argument-dependent lookup):
   *
   * - A.vmult(q, p) and p.dot(q) (a global sum, in double);
   * - cg_reinit(A, v): give v the layout of A's rows unless it has it;
   * - cg_start(P, b, x, r, z, p, sums): the loop of CGStartStep, sums the
   *   global r.z and r.r;
   * - cg_update(alpha, P, p, q, x, r, z, sums): the loop of CGUpdateStep;
   * - cg_direction(beta, z, p): the loop of CGDirectionStep.
   *
   * DistributedJacobiCG is this CG on the resident distributed matrix and
   * vectors with PointJacobi. Work vectors are kept for the next solve.
   */
  template <typename MatrixType,
            typename VectorType,
            typename PreconditionerType>
  class PreconditionedCG
  {
  public:
    /// Solve A x = b from x = 0.
    CGResult
    solve(const MatrixType         &A,
          VectorType               &x,
          const VectorType         &b,
          const PreconditionerType &preconditioner,
          const CGControl          &control)
    {
      for (VectorType *v : {&x, &r, &z, &p, &q})
        cg_reinit(A, *v);
      double state[CGScalars::size];
      double sums[2];
      cg_start(preconditioner, b, x, r, z, p, sums);
      bool go_on = CGScalars::start(state, sums[0], sums[1], control);
      while (go_on)
        {
          A.vmult(q, p);
          double alpha = 0;
          if (!CGScalars::step_length(state, p.dot(q), alpha))
            {
              CGScalars::set_breakdown(state);
              break;
            }
          cg_update(alpha, preconditioner, p, q, x, r, z, sums);
          const double beta = CGScalars::direction_coefficient(state, sums[0]);
          go_on             = CGScalars::end_iteration(state,
                                           sums[0],
                                           sums[1],
                                           control.max_iterations);
          if (!go_on)
            break;
          CGScalars::next_iteration(state);
          cg_direction(beta, z, p);
        }
      return CGScalars::result(state);
    }

  private:
    VectorType r, z, p, q;
  };
} // namespace GPUAssembly

#endif
