// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_chebyshev_h
#define gpu_assembly_lac_chebyshev_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/preconditioned_cg.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

/**
 * @file
 * The pieces of a Chebyshev-accelerated Jacobi preconditioner with the
 * semantics of deal.II's PreconditionChebyshev (deal.II 9.4) around its
 * point Jacobi DiagonalMatrix: the parameters, the eigenvalue estimate of
 * D^-1 A from the coefficients of a few CG steps (Lanczos), the Chebyshev
 * recurrence's scalars, and the per-index bodies of its vector updates
 * (GPU_ASSEMBLY_HOST_DEVICE, for the loops of index_loops.h); and
 * ChebyshevJacobi, the operator that strings them together for any matrix
 * and vector types that PreconditionedCG takes.
 *
 * Applied to r, the preconditioner gives z = p(D^-1 A) D^-1 r with p a
 * fixed polynomial of degree - 1, so z = P r with P symmetric and (for an
 * SPD A and a range that holds the spectrum's top) positive definite: CG
 * stays valid with it.
 *
 * No deal.II or CUDA headers here: both compilers read this header.
 */

namespace GPUAssembly
{
  /**
   * The parameters of ChebyshevJacobi, named as the members of deal.II's
   * PreconditionChebyshev::AdditionalData. The defaults suit CG on
   * elasticity rather than multigrid smoothing (deal.II's defaults are
   * degree 1 and no smoothing range): a polynomial of degree 5 over
   * [lambda_max / 20, lambda_max] of D^-1 A cuts CG's iterations about
   * four-fold at 4 SpMVs per application, so that a solve takes about as
   * many SpMVs as with Jacobi but a quarter of the reductions (each a
   * synchronization, distributed an MPI_Allreduce); the low end of the
   * spectrum, which falls with the mesh size, is left to CG.
   */
  struct ChebyshevParameters
  {
    /**
     * Degree of the Chebyshev polynomial: an application costs degree - 1
     * matrix-vector products; 1 is a scaled Jacobi step. At least 1.
     */
    unsigned int degree = 5;

    /**
     * The polynomial acts on [lambda_max / smoothing_range, lambda_max].
     * Where not larger than 1, on [min(0.9 lambda_max, lambda_min),
     * lambda_max] with lambda_min of the estimate, as deal.II does.
     */
    double smoothing_range = 20;

    /**
     * CG iterations (with the point Jacobi preconditioner, from x = 0 on a
     * fixed oscillating right-hand side) whose Lanczos matrix gives the
     * eigenvalue estimate; its largest eigenvalue times 1.2 is lambda_max.
     * Zero: no estimate, max_eigenvalue is lambda_max. Else at least 3.
     */
    unsigned int eig_cg_n_iterations = 8;

    /**
     * The estimate's CG stops before eig_cg_n_iterations where ||r|| falls
     * to this (absolute). deal.II 9.4's Lanczos estimate uses 1e-10,
     * whatever its AdditionalData::eig_cg_residual says; so does the
     * default here.
     */
    double eig_cg_residual = 1e-10;

    /// lambda_max where eig_cg_n_iterations is zero.
    double max_eigenvalue = 1;

    /// Throws with a message naming the parameter that is out of range.
    void
    check() const
    {
      if (degree < 1)
        internal::throw_error(
          "ChebyshevParameters: degree must be at least 1.");
      if (!std::isfinite(smoothing_range))
        internal::throw_error(
          "ChebyshevParameters: smoothing_range must be finite.");
      if (eig_cg_n_iterations > 0 && eig_cg_n_iterations < 3)
        internal::throw_error(
          "ChebyshevParameters: eig_cg_n_iterations must be 0 (use "
          "max_eigenvalue) or at least 3, not " +
          std::to_string(eig_cg_n_iterations) + ".");
      if (eig_cg_n_iterations == 0 &&
          !(max_eigenvalue > 0 && std::isfinite(max_eigenvalue)))
        internal::throw_error(
          "ChebyshevParameters: max_eigenvalue must be positive and finite "
          "where eig_cg_n_iterations is 0.");
      if (!(eig_cg_residual >= 0))
        internal::throw_error(
          "ChebyshevParameters: eig_cg_residual must not be negative.");
    }
  };



  /**
   * The smallest and the largest eigenvalue of the symmetric tridiagonal
   * matrix with @p diagonal and @p off_diagonal (entry (j, j + 1) is
   * off_diagonal[j]; one entry fewer than the diagonal, or as many, the
   * last ignored), by bisection on Sturm sequences to full precision.
   * Returns false for an empty matrix.
   */
  inline bool
  tridiagonal_eigenvalue_range(const std::vector<double> &diagonal,
                               const std::vector<double> &off_diagonal,
                               double                    &min_eigenvalue,
                               double                    &max_eigenvalue)
  {
    const std::size_t n = diagonal.size();
    if (n == 0)
      return false;
    const auto off = [&](const std::size_t j) {
      return j + 1 < n ? off_diagonal[j] : 0.;
    };
    // Gershgorin's interval holds the spectrum.
    double lower = diagonal[0], upper = diagonal[0];
    for (std::size_t j = 0; j < n; ++j)
      {
        const double radius =
          std::abs(off(j)) + (j > 0 ? std::abs(off(j - 1)) : 0.);
        lower = std::min(lower, diagonal[j] - radius);
        upper = std::max(upper, diagonal[j] + radius);
      }
    const double scale = std::max(std::abs(lower), std::abs(upper));
    const double tiny  = 1e-300 + 1e-30 * scale;
    // Eigenvalues smaller than x: the negative pivots of T - x I.
    const auto count_below = [&](const double x) {
      std::size_t count = 0;
      double      pivot = 1;
      for (std::size_t j = 0; j < n; ++j)
        {
          const double coupling = j > 0 ? off(j - 1) : 0.;
          pivot = diagonal[j] - x - (j > 0 ? coupling * coupling / pivot : 0.);
          if (pivot == 0)
            pivot = -tiny;
          if (pivot < 0)
            ++count;
        }
      return count;
    };
    // The k-th smallest eigenvalue (k from 0): the smallest x with more
    // than k eigenvalues below or at it.
    const auto eigenvalue = [&](const std::size_t k) {
      double a = lower - tiny, b = upper + tiny;
      for (unsigned int step = 0; step < 200; ++step)
        {
          const double middle = 0.5 * (a + b);
          if (middle <= a || middle >= b)
            break;
          if (count_below(middle) > k)
            b = middle;
          else
            a = middle;
        }
      return 0.5 * (a + b);
    };
    min_eigenvalue = eigenvalue(0);
    max_eigenvalue = eigenvalue(n - 1);
    return true;
  }



  /**
   * The eigenvalue range of the Lanczos matrix that deal.II's SolverCG
   * builds from the step lengths @p alpha (one per iteration) and the
   * direction coefficients @p beta (beta[k] the one computed after
   * iteration k + 1, beta_{k+2} in deal.II's count) of a preconditioned CG
   * solve: after n iterations the n - 1 by n - 1 matrix with diagonal
   * 1 / alpha_k + beta_k / alpha_{k-1} and off-diagonal
   * sqrt(beta_{k+1}) / alpha_k. The absolute values of the eigenvalues, as
   * deal.II reports them. False where fewer than two iterations ran.
   */
  inline bool
  lanczos_eigenvalue_range(const std::vector<double> &alpha,
                           const std::vector<double> &beta,
                           double                    &min_eigenvalue,
                           double                    &max_eigenvalue)
  {
    if (alpha.size() < 2 || beta.size() + 1 < alpha.size())
      return false;
    const std::size_t   n = alpha.size() - 1;
    std::vector<double> diagonal(n), off_diagonal(n);
    for (std::size_t k = 0; k < n; ++k)
      {
        diagonal[k] = 1. / alpha[k] + (k > 0 ? beta[k - 1] / alpha[k - 1] : 0.);
        off_diagonal[k] = std::sqrt(beta[k]) / alpha[k];
      }
    double lowest = 0, highest = 0;
    tridiagonal_eigenvalue_range(diagonal, off_diagonal, lowest, highest);
    min_eigenvalue = std::min(std::abs(lowest), std::abs(highest));
    max_eigenvalue = std::max(std::abs(lowest), std::abs(highest));
    return true;
  }



  /**
   * The scalars of a Chebyshev application, as deal.II's
   * PreconditionChebyshev computes them from an eigenvalue estimate:
   * the interval [theta - delta, theta + delta] the polynomial acts on and
   * the two factors of each of its steps.
   */
  struct ChebyshevSchedule
  {
    /// The estimate: the Lanczos matrix's smallest eigenvalue, and its
    /// largest times 1.2 (or max_eigenvalue where no estimate is made).
    double min_eigenvalue = 1;
    double max_eigenvalue = 1;
    /// CG iterations the estimate took.
    unsigned int cg_iterations = 0;
    double       theta         = 1;
    double       delta         = 0;
    /// factor1[k] and factor2[k] of step k (step 0: 0 and 1 / theta).
    std::vector<double> factor1, factor2;

    /**
     * The schedule for @p parameters and the estimate: where
     * @p have_estimate is false (fewer than two CG iterations), the range
     * [1, 1] as deal.II takes it; else [min_eigenvalue,
     * 1.2 max_eigenvalue]. Where eig_cg_n_iterations is 0, max_eigenvalue
     * of the parameters.
     */
    static ChebyshevSchedule
    make(const ChebyshevParameters &parameters,
         const bool                 have_estimate,
         const double               lanczos_min_eigenvalue,
         const double               lanczos_max_eigenvalue)
    {
      parameters.check();
      ChebyshevSchedule s;
      if (parameters.eig_cg_n_iterations == 0)
        {
          s.max_eigenvalue = parameters.max_eigenvalue;
          s.min_eigenvalue =
            parameters.max_eigenvalue / parameters.smoothing_range;
        }
      else if (have_estimate)
        {
          s.min_eigenvalue = lanczos_min_eigenvalue;
          // CG has not converged in a few steps: its largest Ritz value
          // lies below the largest eigenvalue.
          s.max_eigenvalue = 1.2 * lanczos_max_eigenvalue;
        }
      const double alpha = parameters.smoothing_range > 1. ?
                             s.max_eigenvalue / parameters.smoothing_range :
                             std::min(0.9 * s.max_eigenvalue, s.min_eigenvalue);
      s.delta            = (s.max_eigenvalue - alpha) * 0.5;
      s.theta            = (s.max_eigenvalue + alpha) * 0.5;
      s.factor1.push_back(0.);
      s.factor2.push_back(1. / s.theta);
      if (parameters.degree < 2 || std::abs(s.delta) < 1e-40)
        return s;
      double rhok = s.delta / s.theta, sigma = s.theta / s.delta;
      for (unsigned int k = 0; k + 1 < parameters.degree; ++k)
        {
          const double rhokp = 1. / (2. * sigma - rhok);
          s.factor1.push_back(rhokp * rhok);
          s.factor2.push_back(2. * rhokp / s.delta);
          rhok = rhokp;
        }
      return s;
    }

    /// Steps of an application (matrix-vector products + 1).
    unsigned int
    n_steps() const
    {
      return static_cast<unsigned int>(factor2.size());
    }
  };



  /**
   * Step @p step of a Chebyshev application at index i, the vector update
   * of deal.II's PreconditionChebyshev with a point Jacobi diagonal
   * (its VectorUpdater), with t = A x^k computed before:
   *
   * - step 0: x[i] = f2 d[i] r[i];
   * - step 1: t[i] = (1 + f1) x[i] + f2 d[i] (r[i] - t[i]), x^{k+1} in t;
   * - later: x_old[i] = (1 + f1) x[i] - f1 x_old[i] + f2 d[i] (r[i] - t[i]),
   *   x^{k+1} in x_old.
   *
   * The factors are rounded to Number as deal.II rounds them, so that the
   * same eigenvalue bounds give deal.II's vector to round-off.
   */
  template <typename Number>
  struct ChebyshevStep
  {
    const Number *r;
    const Number *inverse_diagonal;
    unsigned int  step;
    Number        factor1;
    Number        factor1_plus_1;
    Number        factor2;
    Number       *x;
    Number       *x_old;
    Number       *t;

    /// The step's factors as deal.II rounds them.
    static ChebyshevStep
    make(const Number      *r,
         const Number      *inverse_diagonal,
         const unsigned int step,
         const double       factor1,
         const double       factor2,
         Number            *x,
         Number            *x_old,
         Number            *t)
    {
      const Number f1 = static_cast<Number>(factor1);
      return {r,
              inverse_diagonal,
              step,
              f1,
              static_cast<Number>(1. + double(f1)),
              static_cast<Number>(factor2),
              x,
              x_old,
              t};
    }

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i) const
    {
      if (step == 0)
        x[i] = factor2 * inverse_diagonal[i] * r[i];
      else if (step == 1)
        t[i] =
          factor1_plus_1 * x[i] + factor2 * inverse_diagonal[i] * (r[i] - t[i]);
      else
        x_old[i] = factor1_plus_1 * x[i] - factor1 * x_old[i] +
                   factor2 * inverse_diagonal[i] * (r[i] - t[i]);
    }
  };



  /**
   * The start vector of the eigenvalue estimate at index i, deal.II's for
   * its distributed vectors (and, on one process, for its serial ones):
   * (g mod 11) - mean, g = first_index + i the global index, the mean over
   * all n global entries. Oscillating, so that the top of the spectrum is
   * excited.
   */
  template <typename Number>
  struct ChebyshevStartVector
  {
    unsigned long long first_index;
    Number             mean;
    Number            *v;

    /// The mean of (g mod 11) over 0 <= g < n, exactly, as Number.
    static Number
    mean_value(const unsigned long long n)
    {
      if (n == 0)
        return 0;
      const unsigned long long full = n / 11, rest = n % 11;
      const unsigned long long sum = full * 55 + rest * (rest - 1) / 2;
      return static_cast<Number>(static_cast<Number>(sum) /
                                 static_cast<Number>(n));
    }

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i) const
    {
      v[i] = static_cast<Number>((first_index + i) % 11) - mean;
    }
  };



  /**
   * The Chebyshev-accelerated Jacobi preconditioner, deal.II's
   * PreconditionChebyshev<MatrixType, VectorType, DiagonalMatrix> with the
   * eigenvalue estimate by Lanczos, for any matrix and vector types that
   * PreconditionedCG takes; a vector operator (vmult()), so
   * PreconditionedCG<MatrixType, VectorType, ChebyshevJacobi<...>> is CG
   * with it. Besides PreconditionedCG's operations it needs (argument-
   * dependent lookup):
   *
   * - cg_inverse_diagonal(A, d): d = 1 / diagonal of A (0 where it is 0);
   * - cg_global_range(v, first, n): the global index of v's first owned
   *   entry and v's global size (the start vector of the estimate is a
   *   function of the global index, so that it does not depend on the
   *   number of processes).
   *
   * Everything runs where the vectors store their entries; an application
   * costs degree - 1 matrix-vector products and degree vector updates, no
   * reductions. Sums (in the estimate only) are those of PreconditionedCG.
   */
  template <typename MatrixType, typename VectorType>
  class ChebyshevJacobi
  {
  public:
    using Number = internal::CGNumber<VectorType>;

    /**
     * Set up for the current values of @p A (after every assembly): its
     * inverse diagonal, the eigenvalue estimate (eig_cg_n_iterations CG
     * steps on A) and the schedule. @p A must outlive the use.
     */
    void
    initialize(const MatrixType          &A,
               const ChebyshevParameters &parameters = ChebyshevParameters())
    {
      parameters.check();
      matrix = &A;
      for (VectorType *v : {&inverse_diagonal, &work_1, &work_2})
        cg_reinit(A, *v);
      cg_inverse_diagonal(A, inverse_diagonal);
      bool     have_estimate = false;
      double   lowest = 0, highest = 0;
      CGResult estimate;
      if (parameters.eig_cg_n_iterations > 0)
        {
          unsigned long long first = 0, n = 0;
          cg_global_range(work_1, first, n);
          cg_for_each(work_1,
                      ChebyshevStartVector<Number>{
                        first,
                        ChebyshevStartVector<Number>::mean_value(n),
                        work_1.data()});
          CGControl control;
          control.relative_tolerance = 0;
          control.absolute_tolerance = parameters.eig_cg_residual;
          control.max_iterations     = parameters.eig_cg_n_iterations;
          CGCoefficients coefficients;
          estimate =
            estimate_cg.solve(A,
                              work_2,
                              work_1,
                              PointJacobi<Number>{inverse_diagonal.data()},
                              control,
                              &coefficients);
          have_estimate = lanczos_eigenvalue_range(coefficients.alpha,
                                                   coefficients.beta,
                                                   lowest,
                                                   highest);
        }
      schedule =
        ChebyshevSchedule::make(parameters, have_estimate, lowest, highest);
      schedule.cg_iterations = estimate.iterations;
    }

    /// z = P r. @p z must have the layout of the matrix's rows.
    void
    vmult(VectorType &z, const VectorType &r) const
    {
      if (matrix == nullptr)
        internal::throw_error(
          "ChebyshevJacobi::vmult(): initialize() the preconditioner first.");
      // deal.II's update writes x^{k+1} into t at step 1 and into x_old
      // later, and renames the vectors; naming them so that the last
      // x^{k+1} lands in z saves a copy.
      const unsigned int n_steps  = schedule.n_steps();
      unsigned int       label[3] = {0, 1, 2}; // x, x_old, t
      for (unsigned int k = 1; k < n_steps; ++k)
        {
          const unsigned int x = label[0], x_old = label[1], t = label[2];
          if (k == 1)
            label[0] = t, label[1] = x, label[2] = x_old;
          else
            label[0] = x_old, label[1] = x;
        }
      VectorType *by_label[3];
      by_label[label[0]] = &z;
      by_label[label[1]] = &work_1;
      by_label[label[2]] = &work_2;
      VectorType *x = by_label[0], *x_old = by_label[1], *t = by_label[2];
      for (unsigned int k = 0; k < n_steps; ++k)
        {
          if (k > 0)
            matrix->vmult(*t, *x);
          cg_for_each(z,
                      ChebyshevStep<Number>::make(r.data(),
                                                  inverse_diagonal.data(),
                                                  k,
                                                  schedule.factor1[k],
                                                  schedule.factor2[k],
                                                  x->data(),
                                                  x_old->data(),
                                                  t->data()));
          if (k == 1)
            std::swap(x, t), std::swap(x_old, t);
          else if (k > 1)
            std::swap(x, x_old);
        }
    }

    /// The eigenvalue estimate and the factors in use.
    const ChebyshevSchedule &
    get_schedule() const
    {
      return schedule;
    }

  private:
    const MatrixType  *matrix = nullptr;
    VectorType         inverse_diagonal;
    mutable VectorType work_1, work_2;
    ChebyshevSchedule  schedule;
    PreconditionedCG<MatrixType, VectorType, PointJacobi<Number>> estimate_cg;
  };
} // namespace GPUAssembly

#endif
