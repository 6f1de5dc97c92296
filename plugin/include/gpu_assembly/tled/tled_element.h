// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tled_tled_element_h
#define gpu_assembly_tled_tled_element_h

#include <gpu_assembly/base/config.h>

#include <cstddef>

/**
 * @file
 * The arithmetic of Total Lagrangian Explicit Dynamics (TLED) for one
 * element, shared by the host stepper and the CUDA kernels so that both do
 * the same operations in the same order. Host code that calls it is
 * compiled with -ffp-contract=off and device code with -fmad=false, and the
 * logarithm is computed here from additions, multiplications and one
 * division (all correctly rounded on both sides), so that host and device
 * give bitwise equal forces in double precision.
 */

namespace GPUAssembly
{
  namespace TLED
  {
    /**
     * ln x for x > 0 from correctly rounded operations only: x = m 2^e with
     * m in [1/sqrt 2, sqrt 2] (by exact scalings), then
     * ln m = 2 atanh(s), s = (m - 1)/(m + 1), |s| < 0.172, summed as an odd
     * series to the precision of Number (within 2 ulp). x <= 0 gives NaN.
     * std::log and CUDA's log may differ in the last bit; this one is the
     * same on both sides.
     */
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    portable_log(const Number x)
    {
      if (!(x > Number(0)))
        return (x - x) / (x - x); // NaN, also for x = NaN
      // Outside [1e-37, 3e38] (no element gets there alive): +-inf, which
      // also keeps the scaling loops below finite.
      if (x > Number(3.0e38))
        return Number(1) / (x - x);
      if (x < Number(1e-37))
        return Number(-1) / (x - x);
      constexpr Number sqrt2   = Number(1.41421356237309504880);
      constexpr Number sqrt1_2 = Number(0.70710678118654752440);
      Number           m       = x;
      int              e       = 0;
      while (m > sqrt2)
        {
          m = m * Number(0.5);
          ++e;
        }
      while (m < sqrt1_2)
        {
          m = m * Number(2);
          --e;
        }
      const Number s  = (m - Number(1)) / (m + Number(1));
      const Number s2 = s * s;
      // Horner for 1 + s2/3 + s2^2/5 + ... : 11 terms in double
      // (s2^11/23 < 2^-53), 6 in float.
      constexpr int n_terms = sizeof(Number) == 8 ? 11 : 6;
      Number        p       = Number(1) / Number(2 * n_terms - 1);
      for (int k = n_terms - 2; k >= 0; --k)
        p = p * s2 + Number(1) / Number(2 * k + 1);
      const Number log_m = Number(2) * s * p;
      if (e == 0)
        return log_m;
      // ln 2 = ln2_hi + ln2_lo, ln2_hi with few bits so that e ln2_hi is
      // exact.
      constexpr Number ln2_hi = Number(0.693145751953125);
      constexpr Number ln2_lo = Number(1.42860682030941723212e-6);
      return Number(e) * ln2_hi + (Number(e) * ln2_lo + log_m);
    }



    /**
     * Internal forces of one element of the compressible neo-Hookean solid
     * W = mu/2 (tr C - 3) - mu ln J + lambda/2 ln^2 J (the material of
     * NeoHookeanKernel) at one integration point, in the Total Lagrangian
     * form of TLED:
     *   F = I + sum_a u_a (x) b_a,  C = F^T F,
     *   S = mu I + (lambda ln J - mu) C^{-1},
     *   f_a = V F S b_a,
     * with b_a the reference shape-function gradients (for the hexahedron
     * their volume average, Flanagan and Belytschko's uniform-strain
     * gradients) and V the reference volume. For the hexahedron
     * (n_nodes = 8) the hourglass forces of Flanagan and Belytschko in the
     * Total Lagrangian form of Joldes, Wittek and Miller are added:
     *   gamma_a^alpha = h_a^alpha - sum_K c_K^alpha b_aK,
     *   f_a += k sum_alpha gamma_a^alpha sum_b gamma_b^alpha u_b,
     * with h^alpha the four hourglass base vectors, c_K^alpha = h^alpha . X_K
     * (X_K: the K-th reference coordinates of the nodes) and k the element's
     * hourglass stiffness. gamma^alpha is orthogonal to every linear field,
     * so uniform strains produce no hourglass force.
     *
     * u[a][i], b[a][K], c[alpha][K], f[a][i]. An inverted element (J <= 0)
     * gives NaN forces.
     */
    template <int n_nodes, typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline void
    element_forces(const Number (&u)[n_nodes][3],
                   const Number (&b)[n_nodes][3],
                   const Number volume,
                   const Number (&c)[4][3],
                   const Number hourglass_stiffness,
                   const Number mu,
                   const Number lambda,
                   Number (&f)[n_nodes][3])
    {
      Number F[3][3];
      GPU_ASSEMBLY_UNROLL
      for (int i = 0; i < 3; ++i)
        GPU_ASSEMBLY_UNROLL
      for (int K = 0; K < 3; ++K)
        {
          Number sum = u[0][i] * b[0][K];
          GPU_ASSEMBLY_UNROLL
          for (int a = 1; a < n_nodes; ++a)
            sum = sum + u[a][i] * b[a][K];
          F[i][K] = (i == K ? Number(1) : Number(0)) + sum;
        }

      // C = F^T F (symmetric), its cofactors and det C = J^2.
      Number C[3][3];
      GPU_ASSEMBLY_UNROLL
      for (int K = 0; K < 3; ++K)
        GPU_ASSEMBLY_UNROLL
      for (int L = K; L < 3; ++L)
        {
          C[K][L] = F[0][K] * F[0][L] + F[1][K] * F[1][L] + F[2][K] * F[2][L];
          C[L][K] = C[K][L];
        }
      const Number J = F[0][0] * (F[1][1] * F[2][2] - F[1][2] * F[2][1]) -
                       F[0][1] * (F[1][0] * F[2][2] - F[1][2] * F[2][0]) +
                       F[0][2] * (F[1][0] * F[2][1] - F[1][1] * F[2][0]);
      Number Ci[3][3];
      Ci[0][0] = C[1][1] * C[2][2] - C[1][2] * C[1][2];
      Ci[0][1] = C[0][2] * C[1][2] - C[0][1] * C[2][2];
      Ci[0][2] = C[0][1] * C[1][2] - C[0][2] * C[1][1];
      Ci[1][1] = C[0][0] * C[2][2] - C[0][2] * C[0][2];
      Ci[1][2] = C[0][1] * C[0][2] - C[0][0] * C[1][2];
      Ci[2][2] = C[0][0] * C[1][1] - C[0][1] * C[0][1];
      // det C from the cofactors: (J^2 from J would differ in rounding,
      // and C^{-1} C = I to rounding needs C's own determinant).
      const Number det_C =
        C[0][0] * Ci[0][0] + C[0][1] * Ci[0][1] + C[0][2] * Ci[0][2];
      const Number log_J = portable_log(J);
      // S = mu I + (lambda ln J - mu) C^{-1}: the factor divides by det C
      // once.
      const Number factor = (lambda * log_J - mu) / det_C;
      Number       S[3][3];
      S[0][0] = mu + factor * Ci[0][0];
      S[1][1] = mu + factor * Ci[1][1];
      S[2][2] = mu + factor * Ci[2][2];
      S[0][1] = S[1][0] = factor * Ci[0][1];
      S[0][2] = S[2][0] = factor * Ci[0][2];
      S[1][2] = S[2][1] = factor * Ci[1][2];

      // V P = V F S, then f_a = (V P) b_a.
      Number P[3][3];
      GPU_ASSEMBLY_UNROLL
      for (int i = 0; i < 3; ++i)
        GPU_ASSEMBLY_UNROLL
      for (int K = 0; K < 3; ++K)
        P[i][K] =
          volume * (F[i][0] * S[0][K] + F[i][1] * S[1][K] + F[i][2] * S[2][K]);
      GPU_ASSEMBLY_UNROLL
      for (int a = 0; a < n_nodes; ++a)
        GPU_ASSEMBLY_UNROLL
      for (int i = 0; i < 3; ++i)
        f[a][i] = P[i][0] * b[a][0] + P[i][1] * b[a][1] + P[i][2] * b[a][2];

      if constexpr (n_nodes == 8)
        {
          // h^alpha in deal.II's vertex order v = x + 2 y + 4 z (x, y, z in
          // {0, 1}): products of the signs s_d = 2 d - 1. gamma_a is
          // rebuilt where it is needed rather than kept for all nodes: 32
          // numbers fewer in registers.
          const auto gamma = [&](const int a, Number(&g)[4]) {
            const int sx = (a & 1) ? 1 : -1, sy = (a & 2) ? 1 : -1,
                      sz   = (a & 4) ? 1 : -1;
            const int h[4] = {sy * sz, sx * sz, sx * sy, sx * sy * sz};
            GPU_ASSEMBLY_UNROLL
            for (int alpha = 0; alpha < 4; ++alpha)
              g[alpha] = Number(h[alpha]) -
                         (c[alpha][0] * b[a][0] + c[alpha][1] * b[a][1] +
                          c[alpha][2] * b[a][2]);
          };
          Number q[4][3];
          {
            Number g[4];
            gamma(0, g);
            GPU_ASSEMBLY_UNROLL
            for (int alpha = 0; alpha < 4; ++alpha)
              GPU_ASSEMBLY_UNROLL
            for (int i = 0; i < 3; ++i)
              q[alpha][i] = g[alpha] * u[0][i];
          }
          GPU_ASSEMBLY_UNROLL
          for (int a = 1; a < 8; ++a)
            {
              Number g[4];
              gamma(a, g);
              GPU_ASSEMBLY_UNROLL
              for (int alpha = 0; alpha < 4; ++alpha)
                GPU_ASSEMBLY_UNROLL
              for (int i = 0; i < 3; ++i)
                q[alpha][i] = q[alpha][i] + g[alpha] * u[a][i];
            }
          GPU_ASSEMBLY_UNROLL
          for (int alpha = 0; alpha < 4; ++alpha)
            GPU_ASSEMBLY_UNROLL
          for (int i = 0; i < 3; ++i)
            q[alpha][i] = hourglass_stiffness * q[alpha][i];
          GPU_ASSEMBLY_UNROLL
          for (int a = 0; a < 8; ++a)
            {
              Number g[4];
              gamma(a, g);
              GPU_ASSEMBLY_UNROLL
              for (int i = 0; i < 3; ++i)
                f[a][i] = f[a][i] + (g[0] * q[0][i] + g[1] * q[1][i] +
                                     g[2] * q[2][i] + g[3] * q[3][i]);
            }
        }
      else
        {
          (void)c;
          (void)hourglass_stiffness;
        }
    }



    /**
     * The smooth ramp r(s) = s^3 (10 - 15 s + 6 s^2) for s = t / T in
     * [0, 1], 1 after: zero velocity and acceleration at both ends, so that
     * a ramped load or displacement starts and stops without a jolt. T <= 0
     * gives 1 at once. Computed in double on host and device alike.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline double
    smooth_ramp(const double t, const double ramp_time)
    {
      if (!(ramp_time > 0.) || t >= ramp_time)
        return 1.;
      if (t <= 0.)
        return 0.;
      const double s = t / ramp_time;
      return s * s * s * (10. + s * (-15. + 6. * s));
    }



    /**
     * The external force on component @p k of a node in step n (the
     * stepper's layout): @p ramp r(t_n) times external[k] where @p flag has
     * bit 3 (a node with an external force), plus step_force[k], g_n of the
     * StepForces, where it has bit 4; 0 for a node with neither.
     */
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    external_force(const unsigned int flag,
                   const Number       ramp,
                   const Number      *external,
                   const Number      *step_force,
                   const std::size_t  k)
    {
      Number f = (flag & 8) ? ramp * external[k] : Number(0);
      if (flag & 16)
        f = f + step_force[k];
      return f;
    }



    /**
     * One node component's central-difference update with mass-proportional
     * damping D: with M (u_{n+1} - 2 u_n + u_{n-1}) / dt^2
     *   + D M (u_{n+1} - u_{n-1}) / (2 dt) = f_ext - f_int,
     *   u_{n+1} = a (f_ext - f_int) + b u_n + c u_{n-1},
     * a = 1 / (M (1/dt^2 + D/(2 dt))), b = 2/(1 + D dt/2),
     * c = (D dt/2 - 1)/(1 + D dt/2).
     */
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    central_difference(const Number a,
                       const Number b,
                       const Number c,
                       const Number external_force,
                       const Number internal_force,
                       const Number u_current,
                       const Number u_previous)
    {
      return a * (external_force - internal_force) + b * u_current +
             c * u_previous;
    }
  } // namespace TLED
} // namespace GPUAssembly

#endif
