// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_preconditioned_bicgstab_h
#define gpu_assembly_lac_preconditioned_bicgstab_h

#include <gpu_assembly/lac/preconditioned_cg.h>

#include <cmath>
#include <cstddef>

// isfinite() unqualified, as device code calls it.
#include <math.h>

/**
 * @file
 * BiCGStab (van der Vorst) with a right point preconditioner, for
 * non-symmetric matrices, written once for every matrix, vector and point
 * preconditioner type on the building blocks of PreconditionedCG
 * (preconditioned_cg.h): the same customization points (cg_reinit(),
 * cg_for_each(), cg_sum(), A.vmult(), v.dot()), the same control and
 * result (CGControl, CGResult), sums in double in a fixed order, and the
 * vector recurrences as per-index bodies that run on the host or the
 * device as the vectors store their entries.
 *
 * It is the iteration of deal.II's SolverBicgstab with x_0 = 0 and a right
 * preconditioner P (y = P p, z = P s, x += alpha y + omega z): stop when
 * the unpreconditioned residual ||r|| <= max(relative_tolerance ||b||,
 * absolute_tolerance), tested on the half step s as well. Where a scalar
 * of the recurrence (r0.r, r0.v, t.t or omega) is zero or not finite (a
 * breakdown), the solve stops with a final residual that is not finite;
 * deal.II restarts there instead.
 *
 * No deal.II or CUDA headers here: both compilers read this header.
 */

namespace GPUAssembly
{
  /**
   * BiCGStab start at index i with x_0 = 0: r = r0 = p = b, y = P p,
   * x = 0; adds r.r (also r0.r) to sums[0].
   */
  template <typename Number, typename PointPreconditioner>
  struct BiCGStabStartStep
  {
    const Number       *b;
    PointPreconditioner preconditioner;
    Number             *x, *r, *r0, *p, *y;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i, double (&sums)[1]) const
    {
      const Number bi = b[i];
      x[i]            = 0;
      r[i]            = bi;
      r0[i]           = bi;
      p[i]            = bi;
      y[i]            = preconditioner(i, bi);
      sums[0] += double(bi) * double(bi);
    }
  };

  /**
   * The half step at index i: s = r - alpha v (into r), z = P s; adds s.s
   * to sums[0]. @p alpha rounded to Number.
   */
  template <typename Number, typename PointPreconditioner>
  struct BiCGStabHalfStep
  {
    Number              alpha;
    const Number       *v;
    PointPreconditioner preconditioner;
    Number             *r, *z;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i, double (&sums)[1]) const
    {
      const Number si = r[i] - alpha * v[i];
      r[i]            = si;
      z[i]            = preconditioner(i, si);
      sums[0] += double(si) * double(si);
    }
  };

  /// t.s into sums[0] and t.t into sums[1] at index i.
  template <typename Number>
  struct BiCGStabStabilizerSums
  {
    const Number *t, *s;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i, double (&sums)[2]) const
    {
      const double ti = t[i];
      sums[0] += ti * double(s[i]);
      sums[1] += ti * ti;
    }
  };

  /**
   * The full step at index i: x += alpha y + omega z, r = s - omega t
   * (s in r); adds r.r to sums[0] and r0.r to sums[1]. @p alpha and
   * @p omega rounded to Number.
   */
  template <typename Number>
  struct BiCGStabUpdateStep
  {
    Number        alpha, omega;
    const Number *y, *z, *t, *r0;
    Number       *x, *r;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i, double (&sums)[2]) const
    {
      x[i] += alpha * y[i] + omega * z[i];
      const Number ri = r[i] - omega * t[i];
      r[i]            = ri;
      sums[0] += double(ri) * double(ri);
      sums[1] += double(r0[i]) * double(ri);
    }
  };

  /// x += alpha y at index i: the end of a solve that converged on the
  /// half step. @p alpha rounded to Number.
  template <typename Number>
  struct BiCGStabHalfUpdate
  {
    Number        alpha;
    const Number *y;
    Number       *x;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i) const
    {
      x[i] += alpha * y[i];
    }
  };

  /**
   * The next direction at index i: p = r + beta (p - omega v), y = P p.
   * @p beta and @p omega rounded to Number.
   */
  template <typename Number, typename PointPreconditioner>
  struct BiCGStabDirectionStep
  {
    Number              beta, omega;
    const Number       *r, *v;
    PointPreconditioner preconditioner;
    Number             *p, *y;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i) const
    {
      const Number pi = r[i] + beta * (p[i] - omega * v[i]);
      p[i]            = pi;
      y[i]            = preconditioner(i, pi);
    }
  };



  /**
   * BiCGStab with a right point preconditioner (as PointJacobi), the
   * iteration on the host, generic over the matrix, vector and
   * preconditioner types; it needs of them what PreconditionedCG needs.
   * Each iteration makes two matrix-vector products and four reductions
   * (r0.v; s.s; t.s with t.t; r.r with r0.r), each bitwise reproducible
   * where the vectors' sums are. Work vectors are kept for the next solve.
   */
  template <typename MatrixType,
            typename VectorType,
            typename PreconditionerType>
  class PreconditionedBiCGStab
  {
  public:
    using Number = internal::CGNumber<VectorType>;

    /// Solve A x = b from x = 0.
    CGResult
    solve(const MatrixType         &A,
          VectorType               &x,
          const VectorType         &b,
          const PreconditionerType &preconditioner,
          const CGControl          &control)
    {
      control.check();
      for (VectorType *vector : {&x, &r, &r0, &p, &y, &v, &z, &t})
        cg_reinit(A, *vector);
      double sum[1], sums[2];
      cg_sum(r,
             BiCGStabStartStep<Number, PreconditionerType>{b.data(),
                                                           preconditioner,
                                                           x.data(),
                                                           r.data(),
                                                           r0.data(),
                                                           p.data(),
                                                           y.data()},
             sum);
      // The scalars as CGScalars keeps them: rz holds rho = r0.r.
      double state[CGScalars::size];
      bool   go_on = CGScalars::start(state, sum[0], sum[0], control);
      while (go_on)
        {
          A.vmult(v, y);
          const double r0_v  = r0.dot(v);
          const double alpha = state[CGScalars::rz] / r0_v;
          if (!usable(r0_v) || !usable(state[CGScalars::rz]))
            {
              CGScalars::set_breakdown(state);
              break;
            }
          cg_sum(r,
                 BiCGStabHalfStep<Number, PreconditionerType>{
                   static_cast<Number>(alpha),
                   v.data(),
                   preconditioner,
                   r.data(),
                   z.data()},
                 sum);
          if (converged(state, sum[0]))
            {
              cg_for_each(x,
                          BiCGStabHalfUpdate<Number>{static_cast<Number>(alpha),
                                                     y.data(),
                                                     x.data()});
              CGScalars::end_iteration(state,
                                       state[CGScalars::rz],
                                       sum[0],
                                       control.max_iterations);
              break;
            }

          A.vmult(t, z);
          cg_sum(t, BiCGStabStabilizerSums<Number>{t.data(), r.data()}, sums);
          const double omega = sums[0] / sums[1];
          if (!usable(sums[1]) || !usable(omega))
            {
              CGScalars::set_breakdown(state);
              break;
            }
          cg_sum(r,
                 BiCGStabUpdateStep<Number>{static_cast<Number>(alpha),
                                            static_cast<Number>(omega),
                                            y.data(),
                                            z.data(),
                                            t.data(),
                                            r0.data(),
                                            x.data(),
                                            r.data()},
                 sums);
          const double beta = sums[1] / state[CGScalars::rz] * (alpha / omega);
          go_on             = CGScalars::end_iteration(state,
                                           sums[1],
                                           sums[0],
                                           control.max_iterations);
          if (!go_on)
            break;
          CGScalars::next_iteration(state);
          cg_for_each(p,
                      BiCGStabDirectionStep<Number, PreconditionerType>{
                        static_cast<Number>(beta),
                        static_cast<Number>(omega),
                        r.data(),
                        v.data(),
                        preconditioner,
                        p.data(),
                        y.data()});
        }
      return CGScalars::result(state);
    }

  private:
    // A scalar the recurrence divides by: neither zero nor infinite.
    static bool
    usable(const double value)
    {
      return value != 0 && std::isfinite(value);
    }

    // Whether the half step's s.s meets the tolerance.
    static bool
    converged(const double *state, const double s_s)
    {
      const double residual = std::sqrt(s_s);
      return std::isfinite(residual) && residual <= state[CGScalars::tolerance];
    }

    VectorType r, r0, p, y, v, z, t;
  };
} // namespace GPUAssembly

#endif
