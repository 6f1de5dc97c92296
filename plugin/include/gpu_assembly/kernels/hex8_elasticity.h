// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_kernels_hex8_elasticity_h
#define gpu_assembly_kernels_hex8_elasticity_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/engine/element_stage_traits.h>

#include <string>
#include <vector>

/**
 * @file
 * Linear elasticity on trilinear hexahedra (8 nodes, 3 DoFs per node, 2x2x2
 * Gauss points) with a constitutive matrix per element, computed the way of
 * Sanfui and Sharma ("GPU acceleration of local matrix generation in FEA by
 * utilizing sparsity pattern"): a thread per entry of the 24 x 24 element
 * matrix, the strain-displacement matrix B never formed. Column 3a+c of B
 * holds the three derivatives of phi_a in the Voigt rows shapeMap[c][k], so
 *
 *   K_(a,c),(b,c') = sum_q JxW_q sum_l (sum_k g_ak C[map(c,k)][map(c',l)])
 *                                       g_bl,
 *
 * four dot products of length 3 per entry and Gauss point instead of the
 * seven of length 6 of B^T (C B); for an isotropic C, most of the block
 * C[map(c,k)][map(c',l)] is zero and shape_map_isotropic_entry() skips it.
 * The functions here are written once for the host and the device: the
 * CUDA kernels of hex8_elasticity.cuh and the host reference call the same
 * entry functions with the same tables.
 *
 * Voigt order: xx, yy, zz, yz, xz, xy, engineering shear strains. Local DoF
 * d = 3 a + c, nodes in deal.II's lexicographic FE_Q(1) order, reference
 * cell [0,1]^3, Gauss points lexicographic with x fastest (QGauss<3>(2)).
 */

namespace GPUAssembly
{
  namespace Hex8
  {
    constexpr unsigned int n_nodes      = 8;
    constexpr unsigned int n_components = 3;
    constexpr unsigned int n_dofs       = 24;
    constexpr unsigned int n_q_points   = 8;
    constexpr unsigned int n_voigt      = 6;
    /// Entries of the full element matrix.
    constexpr unsigned int n_matrix_entries = n_dofs * n_dofs;
    /// Entries of its packed upper triangle.
    constexpr unsigned int n_symmetric_entries = n_dofs * (n_dofs + 1) / 2;
    /// Values of S(e) that DoFHandlerAdapter writes for a hexahedron (JxW
    /// and 8 x 3 gradients per Gauss point); a per-element material
    /// (append_element_material) follows them.
    constexpr unsigned int n_geometry_values =
      n_q_points * (1 + n_nodes * n_components);
    /// Position of Young's modulus in S(e); Poisson's ratio follows.
    constexpr unsigned int material_offset = n_geometry_values;

    /**
     * The seed's shapeMap table: the Voigt row of B that holds
     * d phi_a / d x_k in the column of component c (of any node a).
     */
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline unsigned int
    shape_map(const unsigned int c, const unsigned int k)
    {
      // Diagonal strains sit in rows 0..2; the shear row of the pair {c, k}
      // is 3 for {1,2}, 4 for {0,2} and 5 for {0,1}, i.e. 6 - c - k.
      return c == k ? k : 6 - c - k;
    }

    /// Reference coordinate of Gauss point i (0 or 1) of the 2-point rule
    /// on [0, 1].
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    gauss_coordinate(const unsigned int i)
    {
      // 0.5 -+ 0.5 / sqrt(3), written out so that host and device agree.
      constexpr double offset = 0.28867513459481288225457439025098;
      return Number(i == 0 ? 0.5 - offset : 0.5 + offset);
    }

    /// phi_a at Gauss point q.
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    reference_value(const unsigned int a, const unsigned int q)
    {
      Number value = 1;
      for (unsigned int d = 0; d < 3; ++d)
        {
          const Number xi = gauss_coordinate<Number>((q >> d) & 1);
          value *= ((a >> d) & 1) ? xi : Number(1) - xi;
        }
      return value;
    }

    /// d phi_a / d xi_k at Gauss point q.
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    reference_gradient(const unsigned int a,
                       const unsigned int q,
                       const unsigned int k)
    {
      Number value = ((a >> k) & 1) ? Number(1) : Number(-1);
      for (unsigned int d = 0; d < 3; ++d)
        if (d != k)
          {
            const Number xi = gauss_coordinate<Number>((q >> d) & 1);
            value *= ((a >> d) & 1) ? xi : Number(1) - xi;
          }
      return value;
    }

    /**
     * Jacobian of the trilinear map at Gauss point q from the nodal
     * coordinates x(a, d); writes the physical shape gradients through
     * gradient(a, k) (a callable returning a reference) and returns JxW
     * (det J times the weight 1/8). Floating-point operations: 144 for J,
     * 35 for det J and its inverse, 144 for the gradients, 1 for JxW.
     */
    template <typename Number, class Coordinates, class Gradients>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    compute_geometry(const Coordinates &x,
                     const unsigned int q,
                     const Gradients   &gradient)
    {
      Number J[3][3] = {};
      for (unsigned int a = 0; a < n_nodes; ++a)
        for (unsigned int k = 0; k < 3; ++k)
          {
            const Number dphi = reference_gradient<Number>(a, q, k);
            for (unsigned int d = 0; d < 3; ++d)
              J[d][k] += x(a, d) * dphi;
          }
      const Number c00 = J[1][1] * J[2][2] - J[1][2] * J[2][1];
      const Number c01 = J[1][2] * J[2][0] - J[1][0] * J[2][2];
      const Number c02 = J[1][0] * J[2][1] - J[1][1] * J[2][0];
      const Number det = J[0][0] * c00 + J[0][1] * c01 + J[0][2] * c02;
      const Number inv = Number(1) / det;
      // Inverse of J: row k, column d, as cofactors over det.
      const Number Jinv[3][3] = {
        {c00 * inv,
         (J[0][2] * J[2][1] - J[0][1] * J[2][2]) * inv,
         (J[0][1] * J[1][2] - J[0][2] * J[1][1]) * inv},
        {c01 * inv,
         (J[0][0] * J[2][2] - J[0][2] * J[2][0]) * inv,
         (J[0][2] * J[1][0] - J[0][0] * J[1][2]) * inv},
        {c02 * inv,
         (J[0][1] * J[2][0] - J[0][0] * J[2][1]) * inv,
         (J[0][0] * J[1][1] - J[0][1] * J[1][0]) * inv}};
      for (unsigned int a = 0; a < n_nodes; ++a)
        {
          Number dphi[3];
          for (unsigned int k = 0; k < 3; ++k)
            dphi[k] = reference_gradient<Number>(a, q, k);
          // grad phi = J^{-T} grad_xi phi.
          for (unsigned int d = 0; d < 3; ++d)
            gradient(a, d) = dphi[0] * Jinv[0][d] + dphi[1] * Jinv[1][d] +
                             dphi[2] * Jinv[2][d];
        }
      return det * Number(0.125);
    }

    /// Lame's lambda of Young's modulus @p E and Poisson's ratio @p nu.
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    lame_lambda(const Number E, const Number nu)
    {
      return E * nu / ((Number(1) + nu) * (Number(1) - Number(2) * nu));
    }

    /// The shear modulus mu of @p E and @p nu.
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    lame_mu(const Number E, const Number nu)
    {
      return E / (Number(2) * (Number(1) + nu));
    }

    /**
     * Entry (m, n) of the isotropic 6 x 6 constitutive matrix in Voigt
     * notation with engineering shear strains.
     */
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    constitutive_entry(const Number       lambda,
                       const Number       mu,
                       const unsigned int m,
                       const unsigned int n)
    {
      if (m < 3 && n < 3)
        return m == n ? lambda + Number(2) * mu : lambda;
      return m == n ? mu : Number(0);
    }

    /**
     * Row and column of entry @p i of an element matrix stored row-major
     * (24 x 24) or, if @p symmetric, as the row-major packed upper triangle
     * (the order of SymmetricElementOutput).
     */
    GPU_ASSEMBLY_HOST_DEVICE inline void
    entry_position(const unsigned int i,
                   const bool         symmetric,
                   unsigned int      &row,
                   unsigned int      &column)
    {
      if (!symmetric)
        {
          row    = i / n_dofs;
          column = i % n_dofs;
          return;
        }
      unsigned int first = 0;
      row                = 0;
      while (first + (n_dofs - row) <= i)
        {
          first += n_dofs - row;
          ++row;
        }
      column = row + (i - first);
    }

    /**
     * Row and column of the entry that thread slot @p i of a full element
     * matrix computes. In storage order (row-major) unless
     * @p by_component_pair: then first the 192 entries whose DoFs have the
     * same component (3 a + c, 3 b + c), then the 384 others, each group
     * in storage order, so that a warp of the device kernel takes one kind.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline void
    entry_position_by_component_pair(const unsigned int i,
                                     const bool         by_component_pair,
                                     unsigned int      &row,
                                     unsigned int      &column)
    {
      constexpr unsigned int n_same = n_nodes * n_nodes * 3;
      if (!by_component_pair)
        {
          row    = i / n_dofs;
          column = i % n_dofs;
        }
      else if (i < n_same)
        {
          // Row 3 a + c holds the same-component entries of the 8 nodes b.
          const unsigned int a = i / 24, r = i % 24, b = r / 3, c = r % 3;
          row    = 3 * a + c;
          column = 3 * b + c;
        }
      else
        {
          // Row 3 a + c: node b, then one of the two other components.
          const unsigned int j = i - n_same, a = j / 48, r = j % 48;
          const unsigned int c = r / 16, b = (r % 16) / 2;
          row    = 3 * a + c;
          column = 3 * b + (c + 1 + r % 2) % 3;
        }
    }

    /**
     * Entry (row, column) of the element matrix with the seed's shapeMap
     * strategy. @p view provides constitutive_block(c, c2, Cs), the 3 x 3
     * block C[map(c, k)][map(c2, l)] of the constitutive matrix that the
     * shapeMap table selects, and gradient_pair(p, a, g) and
     * scaled_gradient_pair(p, a, g), the physical gradients of node a at the
     * Gauss points 2p and 2p+1 (g[3 i + k] at q = 2p + i; the scaled ones
     * times JxW(q)). Per Gauss point the seed's four dot products of length
     * 3: the non-zeros of column "row" of B against the three columns of
     * Cs, then the result against the non-zeros of column "column",
     * accumulated into the sum (21 floating-point operations; the seed
     * counts 4 x 5 = 20). The weight JxW is folded into the column node's
     * gradients once per element. Gauss points come in pairs so that the
     * device reads a node's six values as three 16-byte words.
     */
    template <typename Number, class View>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    shape_map_entry(const View        &view,
                    const unsigned int row,
                    const unsigned int column)
    {
      const unsigned int a = row / 3, c = row % 3;
      const unsigned int b = column / 3, c2 = column % 3;
      Number             Cs[3][3];
      view.constitutive_block(c, c2, Cs);
      Number sum = 0;
      for (unsigned int p = 0; p < n_q_points / 2; ++p)
        {
          Number ga[6], gb[6];
          view.gradient_pair(p, a, ga);
          view.scaled_gradient_pair(p, b, gb);
          for (unsigned int i = 0; i < 2; ++i)
            for (unsigned int l = 0; l < 3; ++l)
              sum += (ga[3 * i] * Cs[0][l] + ga[3 * i + 1] * Cs[1][l] +
                      ga[3 * i + 2] * Cs[2][l]) *
                     gb[3 * i + l];
        }
      return sum;
    }

    /**
     * Entry (row, column) with the shapeMap strategy where the constitutive
     * matrix is isotropic: of the 3 x 3 block C[map(c, k)][map(c2, l)] that
     * shapeMap selects, only (c, c2) = lambda and (c2, c) = mu are non-zero
     * for c != c2, and only the diagonal (lambda + 2 mu at c, mu elsewhere)
     * for c == c2, so
     *
     *   K = sum_q lambda g_ac s_bc2 + mu g_ac2 s_bc                (c != c2)
     *   K = sum_q (lambda + mu) g_ac s_bc + mu grad phi_a . s_b    (c == c2)
     *
     * with s = JxW grad phi. The thread of an entry reads four gradient
     * components per Gauss point (six for c == c2) instead of six, which
     * is what bounds the device kernel: the bytes each thread loads from
     * shared memory. @p view provides component_pair(p, a, k, v) and
     * scaled_component_pair(p, a, k, v), component k of the gradient of
     * node a at the Gauss points 2p and 2p+1 (the scaled one times JxW).
     * Floating-point operations: 4 per Gauss point and 3 more for c != c2,
     * 6 per Gauss point and 6 more for c == c2.
     */
    template <typename Number, class View>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    shape_map_isotropic_entry(const View        &view,
                              const unsigned int a,
                              const unsigned int c,
                              const unsigned int b,
                              const unsigned int c2,
                              const Number       lambda,
                              const Number       mu)
    {
      if (c != c2)
        {
          Number s1 = 0, s2 = 0;
          for (unsigned int p = 0; p < n_q_points / 2; ++p)
            {
              Number ga_c[2], ga_c2[2], sb_c[2], sb_c2[2];
              view.component_pair(p, a, c, ga_c);
              view.component_pair(p, a, c2, ga_c2);
              view.scaled_component_pair(p, b, c, sb_c);
              view.scaled_component_pair(p, b, c2, sb_c2);
              for (unsigned int i = 0; i < 2; ++i)
                {
                  s1 += ga_c[i] * sb_c2[i];
                  s2 += ga_c2[i] * sb_c[i];
                }
            }
          return lambda * s1 + mu * s2;
        }
      // One sum per component, so that the component c is picked once at
      // the end rather than per Gauss point.
      Number s[3] = {0, 0, 0};
      for (unsigned int p = 0; p < n_q_points / 2; ++p)
        for (unsigned int k = 0; k < 3; ++k)
          {
            Number ga[2], sb[2];
            view.component_pair(p, a, k, ga);
            view.scaled_component_pair(p, b, k, sb);
            for (unsigned int i = 0; i < 2; ++i)
              s[k] += ga[i] * sb[i];
          }
      const Number s_c = c == 0 ? s[0] : (c == 1 ? s[1] : s[2]);
      return mu * (s[0] + s[1] + s[2]) + (lambda + mu) * s_c;
    }

    /**
     * The three entries (3 a + c, 3 b + c2), c2 = 0, 1, 2, of
     * shape_map_isotropic_entry() at once, into @p values[c2]: each sum is
     * accumulated in the same order, so the values are bitwise the same,
     * but each gradient component of node b is read once for the three
     * entries instead of once per entry, and the sums of Gauss point pair
     * p need only that pair's values at a time. What a device thread of
     * the row form runs.
     */
    template <typename Number, class View>
    GPU_ASSEMBLY_HOST_DEVICE inline void
    shape_map_isotropic_entries(const View        &view,
                                const unsigned int a,
                                const unsigned int c,
                                const unsigned int b,
                                const Number       lambda,
                                const Number       mu,
                                Number (&values)[3])
    {
      // same[k]: sum_q g_ak s_bk, for the entry c2 = c; s1[c2] and s2[c2]:
      // sum_q g_ac s_bc2 and sum_q g_ac2 s_bc, for the two others.
      Number same[3] = {0, 0, 0}, s1[3] = {0, 0, 0}, s2[3] = {0, 0, 0};
      for (unsigned int p = 0; p < n_q_points / 2; ++p)
        {
          Number ga[3][2], sb[3][2];
          for (unsigned int k = 0; k < 3; ++k)
            {
              view.component_pair(p, a, k, ga[k]);
              view.scaled_component_pair(p, b, k, sb[k]);
            }
          for (unsigned int c2 = 0; c2 < 3; ++c2)
            if (c2 == c)
              for (unsigned int k = 0; k < 3; ++k)
                for (unsigned int i = 0; i < 2; ++i)
                  same[k] += ga[k][i] * sb[k][i];
            else
              for (unsigned int i = 0; i < 2; ++i)
                {
                  s1[c2] += ga[c][i] * sb[c2][i];
                  s2[c2] += ga[c2][i] * sb[c][i];
                }
        }
      for (unsigned int c2 = 0; c2 < 3; ++c2)
        values[c2] = c2 == c ? mu * (same[0] + same[1] + same[2]) +
                                 (lambda + mu) * same[c] :
                               lambda * s1[c2] + mu * s2[c2];
    }

    /**
     * The same for entry (@p row, @p column) = (3 a + c, 3 b + c2). The
     * form above takes nodes and components apart so that a device thread
     * whose component is a compile-time constant indexes the gradients it
     * holds in registers with constants.
     */
    template <typename Number, class View>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    shape_map_isotropic_entry(const View        &view,
                              const unsigned int row,
                              const unsigned int column,
                              const Number       lambda,
                              const Number       mu)
    {
      return shape_map_isotropic_entry<Number>(view,
                                               row / 3,
                                               row % 3,
                                               column / 3,
                                               column % 3,
                                               lambda,
                                               mu);
    }

    /**
     * The seed's standard implementation of the same entry: @p view
     * provides B(q, m, j) (the formed 6 x 24 matrix B at Gauss point q),
     * JxW(q) and C(m, n); per Gauss point six dot products of length 6
     * (column "row" of B against the columns of C) and one of length 6,
     * then the weight: 79 floating-point operations (the seed counts 77).
     */
    template <typename Number, class View>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    standard_entry(const View        &view,
                   const unsigned int row,
                   const unsigned int column)
    {
      Number sum = 0;
      // Four Gauss points per iteration: fewer leave the device kernel
      // slower.
#if defined(__CUDA_ARCH__)
#  pragma unroll 4
#endif
      for (unsigned int q = 0; q < n_q_points; ++q)
        {
          Number value = 0;
          for (unsigned int n = 0; n < n_voigt; ++n)
            {
              Number t = 0;
              for (unsigned int m = 0; m < n_voigt; ++m)
                t += view.B(q, m, row) * view.C(m, n);
              value += t * view.B(q, n, column);
            }
          sum += value * view.JxW(q);
        }
      return sum;
    }

    /**
     * Entry (row m, column j) of B at Gauss point q from the gradients:
     * what the standard implementation stores (zeros included).
     */
    template <typename Number, class View>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    b_matrix_entry(const View        &view,
                   const unsigned int q,
                   const unsigned int m,
                   const unsigned int j)
    {
      const unsigned int a = j / 3, c = j % 3;
      for (unsigned int k = 0; k < 3; ++k)
        if (shape_map(c, k) == m)
          return view.gradient(q, a, k);
      return Number(0);
    }

    /**
     * Entry d = 3 a + c of the element vector for the constant body force
     * @p f: f_c sum_q phi_a(x_q) JxW_q.
     */
    template <typename Number, class View>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    body_force_entry(const View &view, const unsigned int d, const Number *f)
    {
      Number sum = 0;
      for (unsigned int q = 0; q < n_q_points; ++q)
        sum += reference_value<Number>(d / 3, q) * view.JxW(q);
      // A select rather than f[d % 3]: indexing the kernel's parameter
      // with a thread-dependent index copies it to local memory.
      const unsigned int c = d % 3;
      return (c == 0 ? f[0] : (c == 1 ? f[1] : f[2])) * sum;
    }

    /**
     * Geometry and material of one element in local arrays, with the view
     * interface the entry functions read: the host version of what a
     * thread block of the device kernels holds in shared memory.
     */
    template <typename Number>
    struct ElementData
    {
      Number gradients[n_q_points][n_nodes][3];
      Number scaled[n_q_points][n_nodes][3];
      Number weights[n_q_points];
      Number constitutive[n_voigt][n_voigt];

      /// Fill from the nodal coordinates x(a, d), E and nu.
      template <class Coordinates>
      GPU_ASSEMBLY_HOST_DEVICE void
      reinit(const Coordinates &x, const Number E, const Number nu)
      {
        for (unsigned int q = 0; q < n_q_points; ++q)
          weights[q] =
            compute_geometry<Number>(x,
                                     q,
                                     [&](const unsigned int a,
                                         const unsigned int k) -> Number & {
                                       return gradients[q][a][k];
                                     });
        for (unsigned int q = 0; q < n_q_points; ++q)
          for (unsigned int a = 0; a < n_nodes; ++a)
            for (unsigned int k = 0; k < 3; ++k)
              scaled[q][a][k] = gradients[q][a][k] * weights[q];
        const Number lambda = lame_lambda(E, nu), mu = lame_mu(E, nu);
        for (unsigned int m = 0; m < n_voigt; ++m)
          for (unsigned int n = 0; n < n_voigt; ++n)
            constitutive[m][n] = constitutive_entry(lambda, mu, m, n);
      }

      GPU_ASSEMBLY_HOST_DEVICE Number
      gradient(const unsigned int q,
               const unsigned int a,
               const unsigned int k) const
      {
        return gradients[q][a][k];
      }

      GPU_ASSEMBLY_HOST_DEVICE Number
      scaled_gradient(const unsigned int q,
                      const unsigned int a,
                      const unsigned int k) const
      {
        return scaled[q][a][k];
      }

      GPU_ASSEMBLY_HOST_DEVICE void
      gradient_pair(const unsigned int p, const unsigned int a, Number *g) const
      {
        for (unsigned int i = 0; i < 2; ++i)
          for (unsigned int k = 0; k < 3; ++k)
            g[3 * i + k] = gradients[2 * p + i][a][k];
      }

      GPU_ASSEMBLY_HOST_DEVICE void
      scaled_gradient_pair(const unsigned int p,
                           const unsigned int a,
                           Number            *g) const
      {
        for (unsigned int i = 0; i < 2; ++i)
          for (unsigned int k = 0; k < 3; ++k)
            g[3 * i + k] = scaled[2 * p + i][a][k];
      }

      GPU_ASSEMBLY_HOST_DEVICE void
      component_pair(const unsigned int p,
                     const unsigned int a,
                     const unsigned int k,
                     Number            *v) const
      {
        v[0] = gradients[2 * p][a][k];
        v[1] = gradients[2 * p + 1][a][k];
      }

      GPU_ASSEMBLY_HOST_DEVICE void
      scaled_component_pair(const unsigned int p,
                            const unsigned int a,
                            const unsigned int k,
                            Number            *v) const
      {
        v[0] = scaled[2 * p][a][k];
        v[1] = scaled[2 * p + 1][a][k];
      }

      GPU_ASSEMBLY_HOST_DEVICE Number
      JxW(const unsigned int q) const
      {
        return weights[q];
      }

      GPU_ASSEMBLY_HOST_DEVICE Number
      C(const unsigned int m, const unsigned int n) const
      {
        return constitutive[m][n];
      }

      GPU_ASSEMBLY_HOST_DEVICE void
      constitutive_block(const unsigned int c,
                         const unsigned int c2,
                         Number (&Cs)[3][3]) const
      {
        for (unsigned int k = 0; k < 3; ++k)
          for (unsigned int l = 0; l < 3; ++l)
            Cs[k][l] = constitutive[shape_map(c, k)][shape_map(c2, l)];
      }

      /// B formed on the fly (the host's standard implementation).
      GPU_ASSEMBLY_HOST_DEVICE Number
      B(const unsigned int q, const unsigned int m, const unsigned int j) const
      {
        return b_matrix_entry<Number>(*this, q, m, j);
      }
    };
  } // namespace Hex8



  /**
   * How the element data of hex8 linear elasticity (Hex8ElasticityKernel)
   * are computed on the device by GlobalNZ.
   */
  enum class ElementStrategy
  {
    /// The engine's element stage: a thread per element runs the kernel's
    /// operator() (every method and kernel).
    thread_per_element,
    /// Sanfui-Sharma's shapeMap: a thread block per group of elements, B
    /// never formed, each entry from shapeMap-reduced dot products with
    /// the zeros of the isotropic C's blocks skipped too
    /// (Hex8::shape_map_isotropic_entry). A thread takes the entries of one
    /// row in turn, so that the gradients it reads stay in registers for
    /// the next entries: a quarter of the loads from shared memory of
    /// shape_map_per_entry, which they bound.
    shape_map,
    /// The same entries with a thread per entry, as the seed lays them out.
    shape_map_per_entry,
    /// Sanfui-Sharma's "standard implementation": a thread per entry with
    /// B formed in shared memory and full dot products.
    standard
  };

  /// "thread-per-element", "shapeMap", "shapeMap-per-entry" or "standard".
  std::string
  to_string(const ElementStrategy strategy);

  /// Inverse of to_string(); throws for an unknown name.
  ElementStrategy
  parse_element_strategy(const std::string &name);



  /**
   * How GlobalNZ computes the element data of a Hex8ElasticityKernel: the
   * engine's thread per element, or a block per group of elements with a
   * thread per entry (Sanfui-Sharma's shapeMap strategy or their standard
   * implementation), the kernel's own element stage (ElementStageTraits).
   * The block strategies need method global_nz, trilinear hexahedra with
   * QGauss<3>(2) and MappingQ(1) (verify_hex8_arrays(), which the first
   * assemble() after a reinit() runs), and the nodal coordinates as nodal
   * data (n_nodal_fields = 3). SharedNZ
   * keeps the thread per element: a hex8 element's 600 values (4.7 KiB in
   * double) would let a block hold so few elements that most would be
   * computed again by the blocks of each of their nodes.
   */
  struct Hex8BlockStrategy
  {
    ElementStrategy element_strategy = ElementStrategy::thread_per_element;
    /// Elements per thread block of the block strategies: 1, 2, 4 or 8,
    /// dividing GlobalNZ's elements per block.
    unsigned int elements_per_block = 8;

    /// Whether a block strategy is chosen.
    bool
    uses_blocks() const
    {
      return element_strategy != ElementStrategy::thread_per_element;
    }
  };



  /**
   * Append Young's modulus and Poisson's ratio of every element to its
   * supplemental data (at Hex8::material_offset), for
   * Hex8ElasticityKernel::per_element_material. Throws if @p arrays are not
   * hexahedral S(e) without a material yet, if the sizes differ from the
   * number of elements, or for E <= 0 or nu outside (-1, 0.5).
   */
  void
  append_element_material(MeshArrays                &arrays,
                          const std::vector<double> &youngs_modulus,
                          const std::vector<double> &poissons_ratio);

  /**
   * Check that @p arrays suit the hex8 block kernels: trilinear hexahedra
   * with 3 components, the 2x2x2 Gauss rule (lexicographic, as QGauss<3>(2)
   * orders it), and supplemental data that the trilinear map of the nodal
   * coordinates reproduces (so the Mapping was MappingQ(1) or equivalent
   * and the node order is the one assumed). Throws ExcMessage naming the
   * first mismatch.
   */
  void
  verify_hex8_arrays(const MeshArrays &arrays);



  /**
   * Linear elasticity on trilinear hexahedra with Young's modulus and
   * Poisson's ratio either uniform (the members) or per element, read from
   * S(e) at Hex8::material_offset (append_element_material()). The nodal
   * data must be the nodal coordinates (3 fields per node): the kernel
   * computes the Jacobians from them, as the seed does, and uses the
   * supplemental data only for the material.
   *
   * operator() is the host (and thread-per-element) version of the
   * shapeMap computation; with a block strategy (block_strategy),
   * DeviceAssembler's GlobalNZ runs the block kernels of
   * hex8_elasticity.cuh instead, through ElementStageTraits.
   */
  template <typename Number>
  struct Hex8ElasticityKernel
  {
    static constexpr unsigned int n_components = 3;
    static constexpr bool         is_symmetric = true;

    Number youngs_modulus = 1;
    Number poissons_ratio = 0.3;
    /// Read E and nu of each element from S(e) instead of the members.
    bool   per_element_material = false;
    Number body_force[3]{};
    /// How GlobalNZ computes the element data on the device; the host and
    /// the other methods run operator() whatever it says.
    Hex8BlockStrategy block_strategy;

    /// E and nu of the element whose S(e) is @p supplemental (stride
    /// @p stride).
    GPU_ASSEMBLY_HOST_DEVICE void
    material(const Number      *supplemental,
             const unsigned int stride,
             Number            &E,
             Number            &nu) const
    {
      E  = per_element_material ? supplemental[Hex8::material_offset * stride] :
                                  youngs_modulus;
      nu = per_element_material ?
             supplemental[(Hex8::material_offset + 1) * stride] :
             poissons_ratio;
    }

    template <class Element, class Output>
    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const Element &element, const Output &output) const
    {
      Number E, nu;
      material(element.supplemental, element.stride, E, nu);
      Hex8::ElementData<Number> data;
      data.reinit(
        [&](const unsigned int a, const unsigned int d) {
          return element.nodal_value(a, d);
        },
        E,
        nu);
      for (unsigned int i = 0; i < Hex8::n_dofs; ++i)
        {
          output.vector_entry(i) =
            Hex8::body_force_entry<Number>(data, i, body_force);
          for (unsigned int j = Output::stores_upper_triangle_only ? i : 0;
               j < Hex8::n_dofs;
               ++j)
            output.matrix_entry(i, j) =
              Hex8::shape_map_entry<Number>(data, i, j);
        }
    }
  };



  /**
   * The hex8 block kernels as GlobalNZ's element stage of a
   * Hex8ElasticityKernel whose block_strategy asks for them.
   * launch_global_nz_stage() is defined in hex8_elasticity.cuh.
   */
  template <typename Number>
  struct ElementStageTraits<Hex8ElasticityKernel<Number>>
  {
    /// Hex8 kernels never see simplices.
    static constexpr bool simplex_forms       = false;
    static constexpr bool has_global_nz_stage = true;

    static bool
    uses_global_nz_stage(const Hex8ElasticityKernel<Number> &kernel)
    {
      return kernel.block_strategy.uses_blocks();
    }

    static void
    check_global_nz_arrays(const MeshArrays &arrays)
    {
      verify_hex8_arrays(arrays);
    }

    static void
    launch_global_nz_stage(const Hex8ElasticityKernel<Number>   &kernel,
                           const ElementStageData<Number>       &data,
                           const GlobalNZStageArguments<Number> &arguments,
                           CUstream_st                          *stream);
  };
} // namespace GPUAssembly

#endif
