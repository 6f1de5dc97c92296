// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_kernels_element_kernels_h
#define gpu_assembly_kernels_element_kernels_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/element/element_views.h>

/**
 * @file
 * Bundled element kernels. A kernel declares n_components (per node),
 * is_symmetric (whether A^e is symmetric, which allows GlobalNZ to store
 * only its upper triangle) and may declare reads_nodal_data = false (it
 * needs S(e) alone, kernel_reads_nodal_data). Each is a functor called once per
 * element, on the host by the reference assembly and on the device by every GPU
 * method, with an element view (element_views.h) and an ElementOutput. A kernel
 * must write every entry of A^e and F^e (the output is not zeroed for it),
 * except the rows an output discards (output_may_discard_rows).
 *
 * Local DoF d = a * n_components + c couples node a and component c.
 *
 * The loops are marked for unrolling: where compute_element() makes the
 * sizes compile-time constants (linear simplices), the whole element is
 * then computed from registers with constant output offsets; with sizes
 * known only at run time the mark has no effect.
 */

namespace GPUAssembly
{
  /**
   * -div(k grad u) = f with constant k and f: A_ab = int k grad phi_a .
   * grad phi_b, F_a = int f phi_a.
   */
  template <int dim, typename Number>
  struct LaplaceKernel
  {
    static constexpr unsigned int n_components = 1;
    /// A^e is symmetric: the upper triangle may be stored alone.
    static constexpr bool is_symmetric = true;
    /// Only S(e) is read: GPU methods need not fetch nodal data.
    static constexpr bool reads_nodal_data = false;

    /// SharedNZ may compute A^e node pair by node pair
    /// (kernel_has_node_pair_form).
    static constexpr bool node_pair_form = true;

    Number diffusion = 1;
    Number source    = 1;

    template <class Element, class Output>
    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const Element &element, const Output &output) const
    {
      GPU_ASSEMBLY_UNROLL
      for (unsigned int a = 0; a < element.n_nodes; ++a)
        {
          // Rows the output discards are not computed
          // (output_may_discard_rows).
          if constexpr (output_may_discard_rows<Output>::value)
            if (!output.keeps_rows(a))
              continue;
          output.vector_entry(a) = vector_entry(element, a);
          GPU_ASSEMBLY_UNROLL
          for (unsigned int b = 0; b < element.n_nodes; ++b)
            output.matrix_entry(a, b) = matrix_entry(element, a, b);
        }
    }

    template <class Element>
    GPU_ASSEMBLY_HOST_DEVICE void
    add_node_pair(const Element     &element,
                  const unsigned int a,
                  const unsigned int b,
                  Number (&matrix)[1][1]) const
    {
      matrix[0][0] += matrix_entry(element, a, b);
    }

    template <class Element>
    GPU_ASSEMBLY_HOST_DEVICE void
    add_node_vector(const Element     &element,
                    const unsigned int a,
                    Number (&vector)[1]) const
    {
      vector[0] += vector_entry(element, a);
    }

  private:
    template <class Element>
    GPU_ASSEMBLY_HOST_DEVICE Number
    matrix_entry(const Element     &element,
                 const unsigned int a,
                 const unsigned int b) const
    {
      Number sum = 0;
      GPU_ASSEMBLY_UNROLL
      for (unsigned int q = 0; q < element.n_q_points; ++q)
        {
          Number dot = 0;
          GPU_ASSEMBLY_UNROLL
          for (unsigned int k = 0; k < dim; ++k)
            dot += element.shape_grad(a, q, k) * element.shape_grad(b, q, k);
          sum += diffusion * dot * element.JxW(q);
        }
      return sum;
    }

    template <class Element>
    GPU_ASSEMBLY_HOST_DEVICE Number
    vector_entry(const Element &element, const unsigned int a) const
    {
      Number rhs = 0;
      GPU_ASSEMBLY_UNROLL
      for (unsigned int q = 0; q < element.n_q_points; ++q)
        rhs += source * element.shape_value(a, q) * element.JxW(q);
      return rhs;
    }
  };



  /**
   * Consistent mass matrix rho int phi_a phi_b for each of n_components
   * components (block diagonal in the components), and a constant body
   * force: F_(a,c) = int f_c phi_a.
   */
  template <int dim, int n_components_, typename Number>
  struct MassKernel
  {
    static constexpr unsigned int n_components     = n_components_;
    static constexpr bool         is_symmetric     = true;
    static constexpr bool         reads_nodal_data = false;

    Number density = 1;
    Number body_force[n_components_]{};

    template <class Element, class Output>
    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const Element &element, const Output &output) const
    {
      GPU_ASSEMBLY_UNROLL
      for (unsigned int a = 0; a < element.n_nodes; ++a)
        {
          if constexpr (output_may_discard_rows<Output>::value)
            if (!output.keeps_rows(a))
              continue;
          Number phi_integral = 0;
          GPU_ASSEMBLY_UNROLL
          for (unsigned int q = 0; q < element.n_q_points; ++q)
            phi_integral += element.shape_value(a, q) * element.JxW(q);
          GPU_ASSEMBLY_UNROLL
          for (unsigned int c = 0; c < n_components; ++c)
            output.vector_entry(a * n_components + c) =
              body_force[c] * phi_integral;

          GPU_ASSEMBLY_UNROLL
          for (unsigned int b = 0; b < element.n_nodes; ++b)
            {
              Number sum = 0;
              GPU_ASSEMBLY_UNROLL
              for (unsigned int q = 0; q < element.n_q_points; ++q)
                sum += element.shape_value(a, q) * element.shape_value(b, q) *
                       element.JxW(q);
              sum *= density;
              GPU_ASSEMBLY_UNROLL
              for (unsigned int c = 0; c < n_components; ++c)
                GPU_ASSEMBLY_UNROLL
              for (unsigned int c2 = 0; c2 < n_components; ++c2)
                output.matrix_entry(a * n_components + c,
                                    b * n_components + c2) =
                  (c == c2 ? sum : Number(0));
            }
        }
    }
  };



  /**
   * Isotropic linear elasticity (deal.II step-8's bilinear form):
   * A_(a,i),(b,j) = int lambda d_i phi_a d_j phi_b + mu d_j phi_a d_i phi_b
   *                 + delta_ij mu grad phi_a . grad phi_b,
   * with a constant body force F_(a,i) = int f_i phi_a.
   */
  template <int dim, typename Number>
  struct LinearElasticityKernel
  {
    static constexpr unsigned int n_components     = dim;
    static constexpr bool         is_symmetric     = true;
    static constexpr bool         reads_nodal_data = false;

    /// SharedNZ may compute A^e node pair by node pair
    /// (kernel_has_node_pair_form).
    static constexpr bool node_pair_form = true;

    Number lambda = 1;
    Number mu     = 1;
    Number body_force[dim]{};

    /**
     * The dim x dim block of A^e of row node a and column node b, b >= a,
     * integrated in registers so that each entry is written exactly once.
     * Off-diagonal entries add no zero and the first point's terms are the
     * sum, not added to a zero: two additions per entry fewer. operator()
     * and add_node_pair() both take their numbers from here, so the two
     * forms cannot drift apart.
     */
    template <class Element>
    GPU_ASSEMBLY_HOST_DEVICE void
    pair_block(const Element     &element,
               const unsigned int a,
               const unsigned int b,
               Number (&block)[dim][dim]) const
    {
      GPU_ASSEMBLY_UNROLL
      for (unsigned int q = 0; q < element.n_q_points; ++q)
        {
          const Number JxW = element.JxW(q);
          Number       ga[dim], gb[dim];
          Number       dot = 0;
          GPU_ASSEMBLY_UNROLL
          for (unsigned int k = 0; k < dim; ++k)
            {
              ga[k] = element.shape_grad(a, q, k);
              gb[k] = element.shape_grad(b, q, k);
              dot += ga[k] * gb[k];
            }
          GPU_ASSEMBLY_UNROLL
          for (unsigned int i = 0; i < dim; ++i)
            GPU_ASSEMBLY_UNROLL
          for (unsigned int j = 0; j < dim; ++j)
            {
              Number term = lambda * ga[i] * gb[j] + mu * ga[j] * gb[i];
              if (i == j)
                term += mu * dot;
              term *= JxW;
              block[i][j] = q == 0 ? term : block[i][j] + term;
            }
        }
    }

    /// Adds the block of row node a and column node b of A^e to @p matrix:
    /// that of pair_block() for the ordered pair, transposed where a > b,
    /// as operator() writes it.
    template <class Element>
    GPU_ASSEMBLY_HOST_DEVICE void
    add_node_pair(const Element     &element,
                  const unsigned int a,
                  const unsigned int b,
                  Number (&matrix)[dim][dim]) const
    {
      Number block[dim][dim];
      pair_block(element, a < b ? a : b, a < b ? b : a, block);
      // A select, not a branch: the threads of a warp hold pairs of both
      // orders.
      GPU_ASSEMBLY_UNROLL
      for (unsigned int i = 0; i < dim; ++i)
        GPU_ASSEMBLY_UNROLL
      for (unsigned int j = 0; j < dim; ++j)
        matrix[i][j] += a <= b ? block[i][j] : block[j][i];
    }

    /// Node pairs are summed as M = sum_e int grad phi_a (x) grad phi_b
    /// (kernel_accumulates_node_pairs).
    static constexpr bool node_pairs_accumulate = true;

    /// Adds int grad phi_a (x) grad phi_b of @p element to @p sum: the
    /// block of (a, b) is lambda M + mu M^T + mu tr(M) I for M this
    /// integral, as for a sum of elements' (finish_node_pairs()).
    template <class Element>
    GPU_ASSEMBLY_HOST_DEVICE void
    accumulate_node_pair(const Element     &element,
                         const unsigned int a,
                         const unsigned int b,
                         Number (&sum)[dim][dim]) const
    {
      GPU_ASSEMBLY_UNROLL
      for (unsigned int q = 0; q < element.n_q_points; ++q)
        {
          const Number JxW = element.JxW(q);
          Number       gb[dim];
          GPU_ASSEMBLY_UNROLL
          for (unsigned int j = 0; j < dim; ++j)
            gb[j] = element.shape_grad(b, q, j);
          GPU_ASSEMBLY_UNROLL
          for (unsigned int i = 0; i < dim; ++i)
            {
              const Number ga = JxW * element.shape_grad(a, q, i);
              GPU_ASSEMBLY_UNROLL
              for (unsigned int j = 0; j < dim; ++j)
                sum[i][j] += ga * gb[j];
            }
        }
    }

    /// Turns accumulate_node_pair()'s sum M into the sum of the blocks,
    /// lambda M + mu M^T + mu tr(M) I, in place.
    GPU_ASSEMBLY_HOST_DEVICE void
    finish_node_pairs(Number (&sum)[dim][dim]) const
    {
      Number trace = 0;
      GPU_ASSEMBLY_UNROLL
      for (unsigned int k = 0; k < dim; ++k)
        trace += sum[k][k];
      Number block[dim][dim];
      GPU_ASSEMBLY_UNROLL
      for (unsigned int i = 0; i < dim; ++i)
        GPU_ASSEMBLY_UNROLL
      for (unsigned int j = 0; j < dim; ++j)
        block[i][j] = lambda * sum[i][j] + mu * sum[j][i] +
                      (i == j ? mu * trace : Number(0));
      GPU_ASSEMBLY_UNROLL
      for (unsigned int i = 0; i < dim; ++i)
        GPU_ASSEMBLY_UNROLL
      for (unsigned int j = 0; j < dim; ++j)
        sum[i][j] = block[i][j];
    }

    /// Adds node a's rows of F^e to @p vector.
    template <class Element>
    GPU_ASSEMBLY_HOST_DEVICE void
    add_node_vector(const Element     &element,
                    const unsigned int a,
                    Number (&vector)[dim]) const
    {
      Number phi_integral = 0;
      GPU_ASSEMBLY_UNROLL
      for (unsigned int q = 0; q < element.n_q_points; ++q)
        phi_integral += element.shape_value(a, q) * element.JxW(q);
      GPU_ASSEMBLY_UNROLL
      for (unsigned int i = 0; i < dim; ++i)
        vector[i] += body_force[i] * phi_integral;
    }

    template <class Element, class Output>
    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const Element &element, const Output &output) const
    {
      // Rows the output discards are neither computed nor written
      // (output_may_discard_rows): SharedNZ keeps about 1.7 of a
      // tetrahedron's 4 row nodes, and each store it saves is a
      // shared-memory access.
      const auto keeps = [&output](const unsigned int a) {
        if constexpr (output_may_discard_rows<Output>::value)
          return output.keeps_rows(a);
        else
          return true;
      };
      GPU_ASSEMBLY_UNROLL
      for (unsigned int a = 0; a < element.n_nodes; ++a)
        {
          Number phi_integral = 0;
          GPU_ASSEMBLY_UNROLL
          for (unsigned int q = 0; q < element.n_q_points; ++q)
            phi_integral += element.shape_value(a, q) * element.JxW(q);
          if (keeps(a))
            {
              GPU_ASSEMBLY_UNROLL
              for (unsigned int i = 0; i < dim; ++i)
                output.vector_entry(a * dim + i) = body_force[i] * phi_integral;
            }

          // A^e is symmetric: the block of (b, a) is the transpose of
          // that of (a, b), so each pair b >= a is integrated once and
          // written twice. This halves the arithmetic, which is what
          // SharedNZ, computing each element about 2.4 times, pays for;
          // it also makes A^e exactly symmetric.
          GPU_ASSEMBLY_UNROLL
          for (unsigned int b = a; b < element.n_nodes; ++b)
            {
              if (!keeps(a) && !keeps(b))
                continue;
              Number block[dim][dim];
              pair_block(element, a, b, block);
              // Row by row in both blocks, the transposed one too:
              // GlobalNZ's grouped element data keep the entries of a row
              // and column node side by side, and writing them one after
              // the other lets the GPU's L2 combine them into whole
              // sectors.
              if (keeps(a))
                {
                  GPU_ASSEMBLY_UNROLL
                  for (unsigned int i = 0; i < dim; ++i)
                    GPU_ASSEMBLY_UNROLL
                  for (unsigned int j = 0; j < dim; ++j)
                    output.matrix_entry(a * dim + i, b * dim + j) = block[i][j];
                }
              if (b != a && keeps(b))
                {
                  GPU_ASSEMBLY_UNROLL
                  for (unsigned int j = 0; j < dim; ++j)
                    GPU_ASSEMBLY_UNROLL
                  for (unsigned int i = 0; i < dim; ++i)
                    output.matrix_entry(b * dim + j, a * dim + i) = block[i][j];
                }
            }
        }
    }
  };
} // namespace GPUAssembly

#endif
