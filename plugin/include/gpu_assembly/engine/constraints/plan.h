// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_constraints_plan_h
#define gpu_assembly_engine_constraints_plan_h

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <cstddef>
#include <vector>

namespace GPUAssembly
{
  /**
   * How the contributions of elements that touch a constraint line with
   * entries (hanging nodes, periodicity, user lines) reach the DoFs those
   * lines depend on. Every assembly method uses it in the same way.
   *
   * The methods condense every constrained DoF of an element as if its line
   * had no entries (condense_dirichlet()): free rows and columns, the
   * inhomogeneity terms of free rows and deal.II's diagonal of constrained
   * rows are then in place. What
   * AffineConstraints::distribute_local_to_global() adds beyond that is linear
   * in the raw element data: for a constrained DoF i with line x_i = sum_k w_k
   * x_{p_k} + g_i,
   *
   * - A(p, q) += w_p A^e_ij for a free j (q = L(e, j)), and symmetrically
   *   for columns; A(p, q) += w_p w_q A^e_ij where both are constrained;
   * - F(p) += w_p (F^e_i - sum_k A^e_ik g_k) over the element's
   *   inhomogeneously constrained DoFs k.
   *
   * So the plan is a list, for every target (a nonzero of the pattern, then
   * a right-hand-side entry), of weighted element-data entries, summed in a
   * fixed order after the method has run: the result is bitwise
   * reproducible, and the constraint-free path is unchanged. A target that
   * no element of the method writes (a coupling that exists only through
   * constraints) is overwritten with its sum, all others are added to.
   *
   * The elements concerned are recomputed raw, without condensation, into
   * an element-data buffer of the plan's own: entry i of the plan's element
   * c (A^e row-major, then F^e) at i * elements.size() + c.
   */
  struct ConstraintPlan
  {
    unsigned int n_nodes_per_element = 0;
    unsigned int n_dofs_per_element  = 0;
    unsigned int n_supplemental      = 0;

    /// The elements that touch a constraint line with entries, increasing.
    std::vector<index_type> elements;
    /// E(e, a) of element c at a * elements.size() + c (column-major, so
    /// that a thread per element reads it coalesced).
    std::vector<index_type> connectivity;
    /// S(e) of element c at i * elements.size() + c.
    std::vector<double> supplemental;

    /// Targets: nonzero indices for the first n_matrix_targets, then DoF
    /// indices of the right-hand side; increasing within each part.
    std::vector<index_type> targets;
    std::size_t             n_matrix_targets = 0;
    /// 1 where the sum is stored (no element of the method writes the
    /// target), 0 where it is added to what the method wrote.
    std::vector<unsigned char> overwrite;
    /// Target t sums weights[k] * element_data[sources[k]] for k in
    /// [source_offsets[t], source_offsets[t + 1]), in increasing k.
    std::vector<index_type> source_offsets;
    std::vector<index_type> sources;
    std::vector<double>     weights;

    /// Build the plan for @p arrays; empty if no line has entries.
    void
    reinit(const MeshArrays &arrays);

    bool
    empty() const
    {
      return targets.empty();
    }

    std::size_t
    n_element_entries() const
    {
      return static_cast<std::size_t>(n_dofs_per_element) *
             (n_dofs_per_element + 1);
    }

    std::size_t
    element_data_size() const
    {
      return n_element_entries() * elements.size();
    }

    std::size_t
    memory_consumption() const;
  };
} // namespace GPUAssembly

#endif
