// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_preconditioned_cg_h
#define gpu_assembly_lac_preconditioned_cg_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/base/cuda_check.h>

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

// isfinite(), fabs() and sqrt() unqualified, as device code calls them.
#include <math.h>

/**
 * @file
 * Preconditioned conjugate gradients, written once for every matrix,
 * vector and preconditioner type: the vector recurrences as per-index
 * bodies (CGStartStep, CGUpdateStep, CGDirectionStep for a point
 * preconditioner; CGResidualStartStep, CGResidualUpdateStep,
 * CGFirstDirectionStep around a vector operator's z = P r), the scalar
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

    /// Throws where a tolerance is negative or not finite.
    void
    check() const
    {
      if (!(relative_tolerance >= 0 && std::isfinite(relative_tolerance) &&
            absolute_tolerance >= 0 && std::isfinite(absolute_tolerance)))
        internal::throw_error(
          "CGControl: the tolerances must be finite and not negative.");
    }
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
   * inverse_diagonal[i] = 1 / A_ii for row i of a CSR matrix (columns
   * sorted or not), 0 where the diagonal is 0 or absent, as the point
   * Jacobi preconditioner takes it (for_each_index()).
   */
  template <typename Number>
  struct CSRInverseDiagonal
  {
    const int    *row_offsets;
    const int    *columns;
    const Number *values;
    Number       *inverse_diagonal;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i) const
    {
      Number d = 0;
      for (int k = row_offsets[i]; k < row_offsets[i + 1]; ++k)
        if (columns[k] == static_cast<int>(i))
          d = values[k];
      inverse_diagonal[i] = d != Number(0) ? Number(1) / d : Number(0);
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
   * CG start at index i with x_0 = 0 for a vector preconditioner, whose
   * z = P r is an operation of its own after this loop: r = b, x = 0;
   * adds r.r to sums[0].
   */
  template <typename Number>
  struct CGResidualStartStep
  {
    const Number *b;
    Number       *x, *r;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i, double (&sums)[1]) const
    {
      const Number ri = b[i];
      x[i]            = 0;
      r[i]            = ri;
      sums[0] += double(ri) * double(ri);
    }
  };

  /**
   * x += alpha p, r -= alpha q at index i for a vector preconditioner;
   * adds r.r of the new r to sums[0]. @p alpha rounded to Number.
   */
  template <typename Number>
  struct CGResidualUpdateStep
  {
    Number        alpha;
    const Number *p, *q;
    Number       *x, *r;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i, double (&sums)[1]) const
    {
      x[i] += alpha * p[i];
      const Number ri = r[i] - alpha * q[i];
      r[i]            = ri;
      sums[0] += double(ri) * double(ri);
    }
  };

  /// p = z at index i after the start's z = P r; adds r.z to sums[0].
  template <typename Number>
  struct CGFirstDirectionStep
  {
    const Number *r, *z;
    Number       *p;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i, double (&sums)[1]) const
    {
      const Number zi = z[i];
      p[i]            = zi;
      sums[0] += double(r[i]) * double(zi);
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



  /// The CG coefficients of a solve, for eigenvalue estimates (Lanczos).
  struct CGCoefficients
  {
    /// The step length of every iteration.
    std::vector<double> alpha;
    /// The direction coefficient computed after every iteration but the
    /// last.
    std::vector<double> beta;
  };



  namespace internal
  {
    /// Whether P is a vector operator for V (P.vmult(z, r)), not a point
    /// preconditioner.
    template <typename P, typename V, typename = void>
    struct IsVectorPreconditioner : std::false_type
    {};

    template <typename P, typename V>
    struct IsVectorPreconditioner<
      P,
      V,
      std::void_t<
        decltype(std::declval<const P &>().vmult(std::declval<V &>(),
                                                 std::declval<const V &>()))>>
      : std::true_type
    {};

    /// The entry type of a vector type with data().
    template <typename V>
    using CGNumber = std::remove_const_t<
      std::remove_pointer_t<decltype(std::declval<V &>().data())>>;
  } // namespace internal



  /**
   * Preconditioned CG with the iteration on the host, generic over the
   * matrix, vector and preconditioner types. With x, b, r, z, p, q of
   * type @p VectorType and A of type @p MatrixType, it needs (found by
   * argument-dependent lookup):
   *
   * - A.vmult(q, p) and p.dot(q) (a global sum, in double);
   * - cg_reinit(A, v): give v the layout of A's rows unless it has it;
   * - cg_for_each(v, body): body(i) for v's owned indices, where v stores
   *   its entries (host or device);
   * - cg_sum(v, body, sums): body(i, sums) for them, @p sums the global
   *   sums (sum_over_indices() and a reduction over the processes).
   *
   * The preconditioner is either a point preconditioner (as PointJacobi:
   * z_i = P(i, r_i), fused into the loops of CGStartStep and CGUpdateStep,
   * which also give r.z) or a vector operator (P.vmult(z, r), as
   * ChebyshevJacobi; its z follows the update loop, and r.z is a sum of its
   * own). The loops and the scalar recurrence (CGScalars) are the same
   * otherwise; DeviceJacobiCG runs the point case's loops in one CUDA
   * graph.
   *
   * Work vectors are kept for the next solve.
   */
  template <typename MatrixType,
            typename VectorType,
            typename PreconditionerType>
  class PreconditionedCG
  {
  public:
    using Number = internal::CGNumber<VectorType>;

    /// Whether the preconditioner is a vector operator.
    static constexpr bool vector_preconditioner =
      internal::IsVectorPreconditioner<PreconditionerType, VectorType>::value;

    /**
     * Solve A x = b from x = 0. With @p coefficients, the step lengths and
     * direction coefficients of the iterations are appended there.
     */
    CGResult
    solve(const MatrixType         &A,
          VectorType               &x,
          const VectorType         &b,
          const PreconditionerType &preconditioner,
          const CGControl          &control,
          CGCoefficients           *coefficients = nullptr)
    {
      for (VectorType *v : {&x, &r, &z, &p, &q})
        cg_reinit(A, *v);
      double state[CGScalars::size];
      double r_z = 0, r_r = 0;
      start(preconditioner, b, x, r_z, r_r);
      bool go_on = CGScalars::start(state, r_z, r_r, control);
      while (go_on)
        {
          A.vmult(q, p);
          double alpha = 0;
          if (!CGScalars::step_length(state, p.dot(q), alpha))
            {
              CGScalars::set_breakdown(state);
              break;
            }
          if (coefficients != nullptr)
            coefficients->alpha.push_back(alpha);
          update(alpha, preconditioner, x, r_z, r_r);
          const double beta = CGScalars::direction_coefficient(state, r_z);
          go_on =
            CGScalars::end_iteration(state, r_z, r_r, control.max_iterations);
          if (!go_on)
            break;
          if (coefficients != nullptr)
            coefficients->beta.push_back(beta);
          CGScalars::next_iteration(state);
          cg_for_each(p,
                      CGDirectionStep<Number>{static_cast<Number>(beta),
                                              z.data(),
                                              p.data()});
        }
      return CGScalars::result(state);
    }

  private:
    // r = b, x = 0, z = P r, p = z; the sums r.z and r.r.
    void
    start(const PreconditionerType &preconditioner,
          const VectorType         &b,
          VectorType               &x,
          double                   &r_z,
          double                   &r_r)
    {
      if constexpr (vector_preconditioner)
        {
          double sums[1];
          cg_sum(r,
                 CGResidualStartStep<Number>{b.data(), x.data(), r.data()},
                 sums);
          r_r = sums[0];
          preconditioner.vmult(z, r);
          cg_sum(r,
                 CGFirstDirectionStep<Number>{r.data(), z.data(), p.data()},
                 sums);
          r_z = sums[0];
        }
      else
        {
          double sums[2];
          cg_sum(r,
                 CGStartStep<Number, PreconditionerType>{b.data(),
                                                         preconditioner,
                                                         x.data(),
                                                         r.data(),
                                                         z.data(),
                                                         p.data()},
                 sums);
          r_z = sums[0];
          r_r = sums[1];
        }
    }

    // x += alpha p, r -= alpha q, z = P r; the sums r.z and r.r.
    void
    update(const double              alpha,
           const PreconditionerType &preconditioner,
           VectorType               &x,
           double                   &r_z,
           double                   &r_r)
    {
      if constexpr (vector_preconditioner)
        {
          double sums[1];
          cg_sum(r,
                 CGResidualUpdateStep<Number>{static_cast<Number>(alpha),
                                              p.data(),
                                              q.data(),
                                              x.data(),
                                              r.data()},
                 sums);
          r_r = sums[0];
          preconditioner.vmult(z, r);
          r_z = r.dot(z);
        }
      else
        {
          double sums[2];
          cg_sum(r,
                 CGUpdateStep<Number, PreconditionerType>{static_cast<Number>(
                                                            alpha),
                                                          p.data(),
                                                          q.data(),
                                                          preconditioner,
                                                          x.data(),
                                                          r.data(),
                                                          z.data()},
                 sums);
          r_z = sums[0];
          r_r = sums[1];
        }
    }

    VectorType r, z, p, q;
  };
} // namespace GPUAssembly

#endif
