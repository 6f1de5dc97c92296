// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_element_dirichlet_condensation_h
#define gpu_assembly_element_dirichlet_condensation_h

#include <gpu_assembly/base/config.h>

#include <cstdint>

namespace GPUAssembly
{
  namespace internal
  {
    /// Position of the lowest set bit of @p m != 0.
    GPU_ASSEMBLY_HOST_DEVICE inline unsigned int
    lowest_bit(const std::uint64_t m)
    {
#ifdef __CUDA_ARCH__
      return __ffsll(static_cast<long long>(m)) - 1;
#else
      return __builtin_ctzll(m);
#endif
    }

    // The condensation of condense_dirichlet(), with whether local DoF d is
    // constrained given by is_constrained(d), and
    // for_each_constrained(f) calling f(d) for every constrained d in
    // increasing order. Only the rows and columns of constrained DoFs are
    // visited, not all n_dofs^2 entries. The loops stay rolled: few
    // elements are condensed, and unrolled for a linear tetrahedron (12 x
    // 12 entries) they cost the element kernels 30 to 50 more registers,
    // and spills where registers are capped.
    template <typename Number,
              class Output,
              class IsConstrained,
              class ForEachConstrained>
    GPU_ASSEMBLY_HOST_DEVICE void
    condense_element(const unsigned int        n_dofs,
                     const index_type         *location,
                     const unsigned int        location_stride,
                     const Number             *inhomogeneities,
                     const bool                use_inhomogeneities_for_rhs,
                     const Output             &output,
                     const IsConstrained      &is_constrained,
                     const ForEachConstrained &for_each_constrained)
    {
      const auto abs = [](const Number x) {
        return x < Number(0) ? -x : x;
      };

      Number average_diagonal = 0;
      GPU_ASSEMBLY_NO_UNROLL
      for (unsigned int i = 0; i < n_dofs; ++i)
        average_diagonal += abs(output.matrix_entry(i, i));
      average_diagonal /= Number(n_dofs);
      if (average_diagonal == Number(0))
        {
          // FullMatrix::l1_norm(): the largest absolute column sum.
          Number l1_norm = 0;
          GPU_ASSEMBLY_NO_UNROLL
          for (unsigned int j = 0; j < n_dofs; ++j)
            {
              Number column_sum = 0;
              GPU_ASSEMBLY_NO_UNROLL
              for (unsigned int i = 0; i < n_dofs; ++i)
                column_sum += abs(output.matrix_entry(i, j));
              l1_norm = column_sum > l1_norm ? column_sum : l1_norm;
            }
          average_diagonal = l1_norm / Number(n_dofs);
          if (average_diagonal == Number(0))
            average_diagonal = Number(1);
        }

      // Right-hand side first: it needs the columns before they are zeroed.
      for_each_constrained([&](const unsigned int i) {
        const Number diagonal = output.matrix_entry(i, i);
        output.vector_entry(i) =
          use_inhomogeneities_for_rhs ?
            (diagonal != Number(0) ? diagonal : average_diagonal) *
              inhomogeneities[location[i * location_stride]] :
            Number(0);
      });
      // A free row loses A_ij g_j column after column, so that each g_j
      // is read once; every row still subtracts in the order of j.
      for_each_constrained([&](const unsigned int j) {
        const Number g = inhomogeneities[location[j * location_stride]];
        if (g == Number(0))
          return;
        GPU_ASSEMBLY_NO_UNROLL
        for (unsigned int i = 0; i < n_dofs; ++i)
          if (!is_constrained(i))
            output.vector_entry(i) -= output.matrix_entry(i, j) * g;
      });

      // Rows and columns of constrained DoFs: zero but the diagonal.
      for_each_constrained([&](const unsigned int c) {
        GPU_ASSEMBLY_NO_UNROLL
        for (unsigned int k = 0; k < n_dofs; ++k)
          if (k != c)
            {
              output.matrix_entry(c, k) = Number(0);
              output.matrix_entry(k, c) = Number(0);
            }
        const Number diagonal = abs(output.matrix_entry(c, c));
        output.matrix_entry(c, c) =
          diagonal != Number(0) ? diagonal : average_diagonal;
      });
    }
  } // namespace internal



  /**
   * Apply Dirichlet constraints to one element's data in place, so that a
   * plain sum of the condensed element data over the mesh is exactly what
   * AffineConstraints<double>::distribute_local_to_global(A^e, F^e, dofs,
   * A, F, use_inhomogeneities_for_rhs) assembles:
   *
   * - a free row i loses the columns of constrained DoFs j and, for
   *   inhomogeneous ones, F_i -= A_ij g_j;
   * - a constrained row and column are zeroed except the diagonal, which
   *   becomes |A_ii|, or, where A_ii = 0, the element's mean absolute
   *   diagonal (the l1 norm / n, or 1, if that is zero too): deal.II's
   *   choice, which keeps the global matrix invertible and well scaled;
   * - F_i of a constrained DoF becomes 0, or A_ii g_i (with the same
   *   substitute for a zero A_ii) when @p use_inhomogeneities_for_rhs.
   *
   * Doing this per element, before the reduction, keeps every assembly
   * method a pure sum and lets the GPU methods reuse it unchanged.
   *
   * @p location is L(e, .) for this element (entry d at location[d *
   * location_stride]); @p dof_is_constrained and @p inhomogeneities are
   * indexed by global DoF. Returns whether the element had any constrained
   * DoF.
   */
  template <typename Number, class Output>
  GPU_ASSEMBLY_HOST_DEVICE bool
  condense_dirichlet(const unsigned int   n_dofs,
                     const index_type    *location,
                     const unsigned int   location_stride,
                     const unsigned char *dof_is_constrained,
                     const Number        *inhomogeneities,
                     const bool           use_inhomogeneities_for_rhs,
                     const Output        &output)
  {
    const auto constrained = [&](const unsigned int d) {
      return dof_is_constrained[location[d * location_stride]] != 0;
    };
    // Up to 64 DoFs, whether each is constrained is read once, all reads
    // at the same time, into a mask. Read inside the loops, on a GPU, each
    // flag would cost two dependent memory accesses for every entry,
    // several hundred for a constrained linear tetrahedron, and SharedNZ's
    // whole block would wait for that thread.
    if (n_dofs <= 64)
      {
        std::uint64_t mask = 0;
        for (unsigned int d = 0; d < n_dofs; ++d)
          mask |= std::uint64_t(constrained(d)) << d;
        if (mask == 0)
          return false;
        internal::condense_element(
          n_dofs,
          location,
          location_stride,
          inhomogeneities,
          use_inhomogeneities_for_rhs,
          output,
          [mask](const unsigned int d) {
            return ((mask >> d) & 1) != 0;
          },
          [mask](const auto &f) {
            for (std::uint64_t m = mask; m != 0; m &= m - 1)
              f(internal::lowest_bit(m));
          });
        return true;
      }
    bool any_constrained = false;
    for (unsigned int d = 0; d < n_dofs && !any_constrained; ++d)
      any_constrained = constrained(d);
    if (!any_constrained)
      return false;
    internal::condense_element(n_dofs,
                               location,
                               location_stride,
                               inhomogeneities,
                               use_inhomogeneities_for_rhs,
                               output,
                               constrained,
                               [&](const auto &f) {
                                 for (unsigned int d = 0; d < n_dofs; ++d)
                                   if (constrained(d))
                                     f(d);
                               });
    return true;
  }
} // namespace GPUAssembly

#endif
