// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_kernels_neo_hookean_h
#define gpu_assembly_kernels_neo_hookean_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/element/element_views.h>

#include <cmath>

namespace GPUAssembly
{
  /**
   * Compressible neo-Hookean solid of the GPU Gems chapter (Sec. 16.4.1),
   * W = mu/2 (F^T F - I) : I + lambda/2 ln^2 J - mu ln J, with
   * P = mu F + (lambda ln J - mu) F^{-T} and the tangent of its eq. (7),
   *   dP_iK/dF_jL = mu delta_ij delta_KL + lambda F^{-T}_iK F^{-T}_jL
   *                 - (lambda ln J - mu) F^{-T}_iL F^{-T}_jK.
   *
   * Nodal data: the displacement (dim values per node), so F = I + grad u
   * with gradients in the reference configuration; or, with
   * nodal_data_are_positions, the current positions phi, so
   * F = sum_a phi_a (x) grad N_a. The second form is the one that stays
   * correct when S(e) is rotated (QR-compressed, chapter Sec. 16.4.2.1):
   * it gives F Q for a rotation Q of the reference element, and W, the
   * forces and the tangent are invariant under it for this isotropic
   * material. In single precision the displacement form is more accurate.
   * Writes A^e_(a,i),(b,j) = stiffness_scale int dP_iK/dF_jL phi_a,K phi_b,L,
   *   F^e_(a,i)       = force_scale (int P_iK phi_a,K - int b_i phi_a),
   * i.e. the tangent and the internal minus external forces, scaled as a
   * time integrator needs (dt/2 for the midpoint rule of eq. (4)-(6)). At
   * u = 0 the tangent is linear elasticity with the same mu and lambda.
   *
   * The tangent is accumulated over quadrature points, so with
   * upper-triangle storage only the upper triangle is added to.
   *
   * An inverted element (J <= 0) makes ln J undefined: the kernel then
   * writes NaN, which the caller must check for (a kernel on the device
   * cannot throw).
   */
  template <int dim, typename Number>
  struct NeoHookeanKernel
  {
    static constexpr unsigned int n_components = dim;
    static constexpr bool         is_symmetric = true;

    Number mu                       = 1;
    Number lambda                   = 1;
    Number body_force[dim]          = {};
    Number stiffness_scale          = 1;
    Number force_scale              = 1;
    bool   nodal_data_are_positions = false;

    template <class Element, class Output>
    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const Element &element, const Output &output) const
    {
      if (element.n_nodes == dim + 1 && element.n_q_points == 1)
        linear_simplex(element, output);
      else
        any_element(element, output);
    }

  private:
    // Linear simplices with one quadrature point: F and the gradients are
    // constant, so each entry is written once, from registers. The general
    // form below zeroes the element data and adds to it per quadrature
    // point, which on the GPU means three global memory accesses per entry
    // instead of one. The arithmetic is the same, term by term, so both
    // forms give the same numbers.
    template <class Element, class Output>
    GPU_ASSEMBLY_HOST_DEVICE void
    linear_simplex(const Element &element, const Output &output) const
    {
      constexpr unsigned int n_nodes = dim + 1;
      Number                 g[n_nodes][dim];
      GPU_ASSEMBLY_UNROLL
      for (unsigned int a = 0; a < n_nodes; ++a)
        GPU_ASSEMBLY_UNROLL
      for (unsigned int K = 0; K < dim; ++K)
        g[a][K] = element.shape_grad(a, 0, K);

      Number F[dim][dim];
      deformation_gradient(
        element,
        n_nodes,
        [&](const unsigned int a, const unsigned int K) {
          return g[a][K];
        },
        F);

      Number       F_inv_T[dim][dim];
      const Number J     = invert_transpose(F, F_inv_T);
      const Number log_J = J > Number(0) ? Number(std::log(J)) : Number(NAN);
      const Number JxW   = element.JxW(0);

      // A[a] = F^{-T} grad phi_a
      Number A[n_nodes][dim];
      GPU_ASSEMBLY_UNROLL
      for (unsigned int a = 0; a < n_nodes; ++a)
        matrix_vector(F_inv_T, g[a], A[a]);


      GPU_ASSEMBLY_UNROLL
      for (unsigned int a = 0; a < n_nodes; ++a)
        {
          // Rows the output discards are not computed
          // (output_may_discard_rows).
          if constexpr (output_may_discard_rows<Output>::value)
            if (!output.keeps_rows(a))
              continue;
          const Number phi_a = element.shape_value(a, 0);
          GPU_ASSEMBLY_UNROLL
          for (unsigned int i = 0; i < dim; ++i)
            {
              output.vector_entry(a * dim + i) =
                Number(0) + force_entry(F, g[a], A[a], log_J, phi_a, JxW, i);
            }
        }


      GPU_ASSEMBLY_UNROLL
      for (unsigned int a = 0; a < n_nodes; ++a)
        GPU_ASSEMBLY_UNROLL
      for (unsigned int b = 0; b < n_nodes; ++b)
        {
          if (Output::stores_upper_triangle_only && b < a)
            continue;
          if constexpr (output_may_discard_rows<Output>::value)
            if (!output.keeps_rows(a))
              continue;
          Number dot = 0;
          GPU_ASSEMBLY_UNROLL
          for (unsigned int K = 0; K < dim; ++K)
            dot += g[a][K] * g[b][K];
          GPU_ASSEMBLY_UNROLL
          for (unsigned int i = 0; i < dim; ++i)
            GPU_ASSEMBLY_UNROLL
          for (unsigned int j = 0; j < dim; ++j)
            if (!Output::stores_upper_triangle_only ||
                a * dim + i <= b * dim + j)
              output.matrix_entry(a * dim + i, b * dim + j) =
                Number(0) + tangent_entry(dot, A[a], A[b], log_J, JxW, i, j);
        }
    }

    template <class Element, class Output>
    GPU_ASSEMBLY_HOST_DEVICE void
    any_element(const Element &element, const Output &output) const
    {
      const unsigned int n_nodes = element.n_nodes;
      for (unsigned int i = 0; i < n_nodes * dim; ++i)
        {
          output.vector_entry(i) = 0;
          for (unsigned int j = 0; j < n_nodes * dim; ++j)
            output.matrix_entry(i, j) = 0;
        }

      for (unsigned int q = 0; q < element.n_q_points; ++q)
        {
          Number F[dim][dim];
          deformation_gradient(
            element,
            n_nodes,
            [&](const unsigned int a, const unsigned int K) {
              return element.shape_grad(a, q, K);
            },
            F);

          Number       F_inv_T[dim][dim];
          const Number J = invert_transpose(F, F_inv_T);
          const Number log_J =
            J > Number(0) ? Number(std::log(J)) : Number(NAN);
          const Number JxW = element.JxW(q);

          for (unsigned int a = 0; a < n_nodes; ++a)
            {
              Number ga[dim], A[dim];
              for (unsigned int K = 0; K < dim; ++K)
                ga[K] = element.shape_grad(a, q, K);
              matrix_vector(F_inv_T, ga, A);
              const Number phi_a = element.shape_value(a, q);
              for (unsigned int i = 0; i < dim; ++i)
                output.vector_entry(a * dim + i) +=
                  force_entry(F, ga, A, log_J, phi_a, JxW, i);

              for (unsigned int b = 0; b < n_nodes; ++b)
                {
                  Number gb[dim], B[dim];
                  for (unsigned int L = 0; L < dim; ++L)
                    gb[L] = element.shape_grad(b, q, L);
                  matrix_vector(F_inv_T, gb, B);
                  Number dot = 0;
                  for (unsigned int K = 0; K < dim; ++K)
                    dot += ga[K] * gb[K];
                  for (unsigned int i = 0; i < dim; ++i)
                    for (unsigned int j = 0; j < dim; ++j)
                      // Accumulating: with upper-triangle storage (i, j)
                      // and (j, i) share a value, which must be added once.
                      if (!Output::stores_upper_triangle_only ||
                          a * dim + i <= b * dim + j)
                        output.matrix_entry(a * dim + i, b * dim + j) +=
                          tangent_entry(dot, A, B, log_J, JxW, i, j);
                }
            }
        }
    }

    // force_scale (P grad phi_a - b phi_a)_i JxW, with A_a = F^{-T} grad
    // phi_a and P = mu F + (lambda ln J - mu) F^{-T}.
    GPU_ASSEMBLY_HOST_DEVICE Number
    force_entry(const Number (&F)[dim][dim],
                const Number (&grad_a)[dim],
                const Number (&A_a)[dim],
                const Number       log_J,
                const Number       phi_a,
                const Number       JxW,
                const unsigned int i) const
    {
      Number P_ga = 0;
      GPU_ASSEMBLY_UNROLL
      for (unsigned int K = 0; K < dim; ++K)
        P_ga += mu * F[i][K] * grad_a[K];
      P_ga += (lambda * log_J - mu) * A_a[i];
      return force_scale * (P_ga - body_force[i] * phi_a) * JxW;
    }

    // stiffness_scale dP_iK/dF_jL phi_a,K phi_b,L JxW (eq. 7), with
    // dot = grad phi_a . grad phi_b and A_a = F^{-T} grad phi_a.
    GPU_ASSEMBLY_HOST_DEVICE Number
    tangent_entry(const Number dot,
                  const Number (&A_a)[dim],
                  const Number (&A_b)[dim],
                  const Number       log_J,
                  const Number       JxW,
                  const unsigned int i,
                  const unsigned int j) const
    {
      return stiffness_scale *
             ((i == j ? mu * dot : Number(0)) + lambda * A_a[i] * A_b[j] -
              (lambda * log_J - mu) * A_b[i] * A_a[j]) *
             JxW;
    }

    // F = I + sum_a u_a (x) grad phi_a (nodal data are displacements), or
    // sum_a phi_a (x) grad phi_a (positions); grad phi_a = gradient(a, .).
    template <class Element, class Gradient>
    GPU_ASSEMBLY_HOST_DEVICE void
    deformation_gradient(const Element     &element,
                         const unsigned int n_nodes,
                         const Gradient    &gradient,
                         Number (&F)[dim][dim]) const
    {
      GPU_ASSEMBLY_UNROLL
      for (unsigned int i = 0; i < dim; ++i)
        GPU_ASSEMBLY_UNROLL
      for (unsigned int K = 0; K < dim; ++K)
        F[i][K] = (i == K && !nodal_data_are_positions ? Number(1) : Number(0));
      GPU_ASSEMBLY_UNROLL
      for (unsigned int a = 0; a < n_nodes; ++a)
        GPU_ASSEMBLY_UNROLL
      for (unsigned int i = 0; i < dim; ++i)
        {
          const Number u = element.nodal_value(a, i);
          GPU_ASSEMBLY_UNROLL
          for (unsigned int K = 0; K < dim; ++K)
            F[i][K] += u * gradient(a, K);
        }
    }

    // F^{-T} of a dim x dim matrix; returns det F.
    GPU_ASSEMBLY_HOST_DEVICE static Number
    invert_transpose(const Number (&F)[dim][dim], Number (&F_inv_T)[dim][dim])
    {
      if constexpr (dim == 2)
        {
          const Number det = F[0][0] * F[1][1] - F[0][1] * F[1][0];
          F_inv_T[0][0]    = F[1][1] / det;
          F_inv_T[0][1]    = -F[1][0] / det;
          F_inv_T[1][0]    = -F[0][1] / det;
          F_inv_T[1][1]    = F[0][0] / det;
          return det;
        }
      else
        {
          // Cofactors: F^{-T} = cof(F) / det F.
          Number cof[3][3];
          cof[0][0] = F[1][1] * F[2][2] - F[1][2] * F[2][1];
          cof[0][1] = F[1][2] * F[2][0] - F[1][0] * F[2][2];
          cof[0][2] = F[1][0] * F[2][1] - F[1][1] * F[2][0];
          cof[1][0] = F[0][2] * F[2][1] - F[0][1] * F[2][2];
          cof[1][1] = F[0][0] * F[2][2] - F[0][2] * F[2][0];
          cof[1][2] = F[0][1] * F[2][0] - F[0][0] * F[2][1];
          cof[2][0] = F[0][1] * F[1][2] - F[0][2] * F[1][1];
          cof[2][1] = F[0][2] * F[1][0] - F[0][0] * F[1][2];
          cof[2][2] = F[0][0] * F[1][1] - F[0][1] * F[1][0];
          const Number det =
            F[0][0] * cof[0][0] + F[0][1] * cof[0][1] + F[0][2] * cof[0][2];
          GPU_ASSEMBLY_UNROLL
          for (unsigned int i = 0; i < 3; ++i)
            GPU_ASSEMBLY_UNROLL
          for (unsigned int j = 0; j < 3; ++j)
            F_inv_T[i][j] = cof[i][j] / det;
          return det;
        }
    }

    GPU_ASSEMBLY_HOST_DEVICE static void
    matrix_vector(const Number (&M)[dim][dim],
                  const Number (&x)[dim],
                  Number (&y)[dim])
    {
      GPU_ASSEMBLY_UNROLL
      for (unsigned int i = 0; i < dim; ++i)
        {
          y[i] = 0;
          GPU_ASSEMBLY_UNROLL
          for (unsigned int k = 0; k < dim; ++k)
            y[i] += M[i][k] * x[k];
        }
    }
  };
} // namespace GPUAssembly

#endif
