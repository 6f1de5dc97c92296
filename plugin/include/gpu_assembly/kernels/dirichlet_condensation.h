#ifndef gpu_assembly_kernels_dirichlet_condensation_h
#define gpu_assembly_kernels_dirichlet_condensation_h

#include <gpu_assembly/base/config.h>

namespace GPUAssembly
{
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
    bool any_constrained = false;
    for (unsigned int d = 0; d < n_dofs && !any_constrained; ++d)
      any_constrained = dof_is_constrained[location[d * location_stride]];
    if (!any_constrained)
      return false;

    const auto abs = [](const Number x) {
      return x < Number(0) ? -x : x;
    };

    Number average_diagonal = 0;
    for (unsigned int i = 0; i < n_dofs; ++i)
      average_diagonal += abs(output.matrix_entry(i, i));
    average_diagonal /= Number(n_dofs);
    if (average_diagonal == Number(0))
      {
        // FullMatrix::l1_norm(): the largest absolute column sum.
        Number l1_norm = 0;
        for (unsigned int j = 0; j < n_dofs; ++j)
          {
            Number column_sum = 0;
            for (unsigned int i = 0; i < n_dofs; ++i)
              column_sum += abs(output.matrix_entry(i, j));
            l1_norm = column_sum > l1_norm ? column_sum : l1_norm;
          }
        average_diagonal = l1_norm / Number(n_dofs);
        if (average_diagonal == Number(0))
          average_diagonal = Number(1);
      }

    // Right-hand side first: it needs the columns before they are zeroed.
    for (unsigned int i = 0; i < n_dofs; ++i)
      {
        const index_type row = location[i * location_stride];
        if (dof_is_constrained[row])
          {
            const Number diagonal = output.matrix_entry(i, i);
            output.vector_entry(i) =
              use_inhomogeneities_for_rhs ?
                (diagonal != Number(0) ? diagonal : average_diagonal) *
                  inhomogeneities[row] :
                Number(0);
          }
        else
          {
            Number value = output.vector_entry(i);
            for (unsigned int j = 0; j < n_dofs; ++j)
              {
                const index_type col = location[j * location_stride];
                if (dof_is_constrained[col] &&
                    inhomogeneities[col] != Number(0))
                  value -= output.matrix_entry(i, j) * inhomogeneities[col];
              }
            output.vector_entry(i) = value;
          }
      }

    for (unsigned int i = 0; i < n_dofs; ++i)
      {
        const bool row_constrained =
          dof_is_constrained[location[i * location_stride]];
        for (unsigned int j = 0; j < n_dofs; ++j)
          {
            if (i == j)
              {
                if (row_constrained)
                  {
                    const Number diagonal = abs(output.matrix_entry(i, i));
                    output.matrix_entry(i, i) =
                      diagonal != Number(0) ? diagonal : average_diagonal;
                  }
              }
            else if (row_constrained ||
                     dof_is_constrained[location[j * location_stride]])
              output.matrix_entry(i, j) = Number(0);
          }
      }
    return true;
  }
} // namespace GPUAssembly

#endif
