// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_element_element_stage_h
#define gpu_assembly_element_element_stage_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/element/dirichlet_condensation.h>
#include <gpu_assembly/element/element_views.h>

#include <cstdint>

namespace GPUAssembly
{
  /**
   * What every element of a mesh shares when an element kernel runs on it:
   * sizes, reference shape data and the constraints, as raw pointers, so
   * that it can be passed by value to a CUDA kernel.
   */
  template <typename Number>
  struct ElementStageData
  {
    unsigned int n_nodes;
    unsigned int n_q_points;
    unsigned int n_dofs;
    unsigned int n_fields;
    bool         edge_matrix_format;
    /// With edge_matrix_format: S(e) is the packed R^{-1} of a QR
    /// decomposition (SupplementalDataFormat::compressed_edge_matrix).
    bool                 compressed_edge_matrix;
    const Number        *shape_values;
    const Number        *quadrature_weights;
    const unsigned char *dof_is_constrained;
    const Number        *inhomogeneities;
    bool                 use_inhomogeneities_for_rhs;
  };



  /**
   * What compute_element() may assume at compile time about the elements it
   * runs on (element_specialization() says which applies to a mesh).
   */
  enum class ElementSpecialization
  {
    /// Any element: sizes and the format of S(e) are read at run time.
    general,
    /// Linear simplices with one quadrature point, S(e) in edge-matrix
    /// format.
    simplex_edge_matrix,
    /// Linear simplices with one quadrature point, S(e) the quadrature
    /// gradients.
    simplex_gradients
  };



  /**
   * The specialization of compute_element() that fits the elements
   * described by @p data.
   */
  template <int dim, typename Number>
  ElementSpecialization
  element_specialization(const ElementStageData<Number> &data)
  {
    if (data.n_nodes != dim + 1 || data.n_q_points != 1)
      return ElementSpecialization::general;
    return data.edge_matrix_format ?
             ElementSpecialization::simplex_edge_matrix :
             ElementSpecialization::simplex_gradients;
  }



  /**
   * The sizes of the elements described by an ElementStageData as the
   * element kernels of @p specialization see them: compile-time constants
   * for linear simplices, those of the data otherwise. GPU kernels that
   * lay out per-element arrays use them too, so that their index
   * arithmetic folds to constants with the kernel's.
   */
  template <int dim, ElementSpecialization specialization>
  struct SpecializedSizes
  {
    static constexpr bool linear_simplex =
      specialization != ElementSpecialization::general;

    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE static unsigned int
    n_nodes(const ElementStageData<Number> &data)
    {
      return linear_simplex ? dim + 1 : data.n_nodes;
    }

    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE static unsigned int
    n_q_points(const ElementStageData<Number> &data)
    {
      return linear_simplex ? 1 : data.n_q_points;
    }

    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE static unsigned int
    n_dofs(const ElementStageData<Number> &data,
           const unsigned int              n_components)
    {
      return linear_simplex ? (dim + 1) * n_components : data.n_dofs;
    }
  };



  /**
   * Call @p f with the element view of one element: S(e) read with
   * @p stride in the format @p data says (inverse edge matrix or quadrature
   * gradients; a @p specialization other than general fixes it at compile
   * time), its nodes' data through @p node_indices (may be null for kernels
   * that read none). With @p gradients_in_registers the quadrature
   * gradients of a linear simplex are read into registers first: a whole
   * element reads each gradient once per node pair, and a compiler that
   * cannot tell the output from S(e) must reload it after every store. One
   * node pair needs only a few, read where they are.
   */
  template <int                   dim,
            ElementSpecialization specialization,
            bool                  gradients_in_registers,
            typename Number,
            class Function>
  GPU_ASSEMBLY_HOST_DEVICE inline void
  with_element_view(const ElementStageData<Number> &data,
                    const Number                   *supplemental,
                    const unsigned int              stride,
                    const Number                   *nodal_data,
                    const int                      *node_indices,
                    const Function                 &f)
  {
    using Specialization          = ElementSpecialization;
    using Sizes                   = SpecializedSizes<dim, specialization>;
    constexpr bool linear_simplex = Sizes::linear_simplex;
    const auto     edge_matrix    = [&]() {
      EdgeMatrixElement<dim, Number> element{supplemental,
                                             stride,
                                             Sizes::n_nodes(data),
                                             Sizes::n_q_points(data),
                                             data.shape_values,
                                             data.quadrature_weights,
                                             nodal_data,
                                             data.n_fields};
      element.node_indices = node_indices;
      element.node_stride  = stride;
      element.compressed   = data.compressed_edge_matrix;
      f(element);
    };
    const auto gradients = [&]() {
      const Number *values        = supplemental;
      unsigned int  values_stride = stride;
      Number        simplex_values[1 + (dim + 1) * dim];
      if constexpr (linear_simplex && gradients_in_registers)
        {
          GPU_ASSEMBLY_UNROLL
          for (unsigned int i = 0; i < 1 + (dim + 1) * dim; ++i)
            simplex_values[i] = supplemental[i * stride];
          values        = simplex_values;
          values_stride = 1;
        }
      QuadratureGradientElement<dim, Number> element{values,
                                                     values_stride,
                                                     Sizes::n_nodes(data),
                                                     Sizes::n_q_points(data),
                                                     data.shape_values,
                                                     nodal_data,
                                                     data.n_fields};
      element.node_indices = node_indices;
      element.node_stride  = stride;
      f(element);
    };
    if constexpr (specialization == Specialization::simplex_edge_matrix)
      edge_matrix();
    else if constexpr (specialization == Specialization::simplex_gradients)
      gradients();
    else if (data.edge_matrix_format)
      edge_matrix();
    else
      gradients();
  }



  /**
   * with_element_view() of S(e) alone, read with @p stride where a block
   * staged it: SharedNZ's node pairs, whose kernels read no nodal data.
   */
  template <int                   dim,
            ElementSpecialization specialization,
            typename Number,
            class Function>
  GPU_ASSEMBLY_HOST_DEVICE inline void
  with_staged_element_view(const ElementStageData<Number> &data,
                           const Number                   *supplemental,
                           const unsigned int              stride,
                           const Function                 &f)
  {
    with_element_view<dim, specialization, false>(data,
                                                  supplemental,
                                                  stride,
                                                  static_cast<const Number *>(
                                                    nullptr),
                                                  nullptr,
                                                  f);
  }



  /**
   * Run @p kernel on one element and apply the Dirichlet condensation if
   * the element touches a constrained DoF. The element's supplemental data
   * S(e), its node indices into @p nodal_data and its location L(e, .) are
   * read with the same @p stride (1 for element-major host arrays, the
   * number of elements of a block for the column-major device layouts).
   * Every assembly method, host and device, computes element data through
   * this one function.
   *
   * With a @p specialization other than general the caller guarantees
   * what the data say at run time (element_specialization()). The compiler
   * then sees the sizes as constants and drops the general paths of the
   * view and of the kernel, whose registers and stack would otherwise be
   * reserved for every element of a GPU kernel (for the neo-Hookean kernel:
   * 128 registers and a 272-byte stack). Quadrature gradients are then
   * read into registers once (with_element_view()).
   */
  template <
    int dim,
    typename Number,
    class Kernel,
    class Output,
    ElementSpecialization specialization = ElementSpecialization::general>
  GPU_ASSEMBLY_HOST_DEVICE inline void
  compute_element(const Kernel                   &kernel,
                  const ElementStageData<Number> &data,
                  const Number                   *supplemental,
                  const Number                   *nodal_data,
                  const int                      *node_indices,
                  const unsigned int              stride,
                  const Output                   &output,
                  const bool                      has_constraints,
                  const int                      *location)
  {
    using Sizes = SpecializedSizes<dim, specialization>;
    with_element_view<dim, specialization, true>(data,
                                                 supplemental,
                                                 stride,
                                                 nodal_data,
                                                 node_indices,
                                                 [&](const auto &element) {
                                                   kernel(element, output);
                                                 });
    if (has_constraints)
      condense_dirichlet(Sizes::n_dofs(data, Kernel::n_components),
                         location,
                         stride,
                         data.dof_is_constrained,
                         data.inhomogeneities,
                         data.use_inhomogeneities_for_rhs,
                         output);
  }



  /**
   * SharedNZ's node-pair form (kernel_has_node_pair_form): add to @p matrix
   * the block of row node @p a and column node @p b of an element's A^e,
   * and for @p diagonal (a == b, whose list also sums F^e) node a's rows of
   * F^e to @p vector. With @p accumulate, add the element's share in the
   * kernel's own summed form instead (kernel_accumulates_node_pairs), which
   * its finish_node_pairs() turns into the sum of the blocks. S(e) is read
   * where the block staged it, with @p stride; the kernel reads no nodal
   * data (the plan requires it). For an element with a constrained DoF,
   * add_condensed_node_pair().
   */
  template <
    int dim,
    typename Number,
    class Kernel,
    ElementSpecialization specialization = ElementSpecialization::general,
    bool                  accumulate     = false>
  GPU_ASSEMBLY_HOST_DEVICE inline void
  add_node_pair(const Kernel                   &kernel,
                const ElementStageData<Number> &data,
                const Number                   *supplemental,
                const unsigned int              stride,
                const unsigned int              a,
                const unsigned int              b,
                const bool                      diagonal,
                Number (&matrix)[Kernel::n_components][Kernel::n_components],
                Number (&vector)[Kernel::n_components])
  {
    with_staged_element_view<dim, specialization>(
      data,
      supplemental,
      stride,
      [&](const auto &element) {
        if constexpr (accumulate)
          kernel.accumulate_node_pair(element, a, b, matrix);
        else
          kernel.add_node_pair(element, a, b, matrix);
        if (diagonal)
          kernel.add_node_vector(element, a, vector);
      });
  }



  /**
   * The Dirichlet data of one element that its node pairs need: bit d of
   * @p mask says whether local DoF d is constrained (at most 64 DoFs), and
   * inhomogeneities[d * stride] is its g_d (read for constrained DoFs only).
   */
  template <typename Number>
  struct NodePairConstraints
  {
    std::uint64_t mask;
    const Number *inhomogeneities;
    unsigned int  stride;

    GPU_ASSEMBLY_HOST_DEVICE bool
    constrained(const unsigned int d) const
    {
      return ((mask >> d) & 1) != 0;
    }

    GPU_ASSEMBLY_HOST_DEVICE Number
    g(const unsigned int d) const
    {
      return inhomogeneities[d * stride];
    }
  };



  /**
   * add_node_pair() for an element with constrained DoFs: the node pair's
   * share of condense_dirichlet(), so that the sum over an element's node
   * pairs is what the element condensed as a whole adds, number for number:
   *
   * - an entry of a constrained row or column is dropped, but a constrained
   *   diagonal entry, which becomes |A_ii|;
   * - a free row of F^e loses A_ij g_j for each constrained column j, in
   *   increasing j, as condense_element() subtracts them; this needs the
   *   blocks of row node a and every column node with a nonzero g, and
   *   only the diagonal pair of a sums F^e;
   * - a constrained row of F^e becomes A_ii g_i, or 0 without
   *   use_inhomogeneities_for_rhs.
   *
   * Where A_ii = 0 the element's mean absolute diagonal stands in for it,
   * and where that is zero too the l1 norm / n_dofs, or 1: these need more
   * of the element's blocks, computed then and only then, since for the
   * bundled kernels a zero diagonal entry marks a degenerate element.
   */
  template <
    int dim,
    typename Number,
    class Kernel,
    ElementSpecialization specialization = ElementSpecialization::general>
  GPU_ASSEMBLY_HOST_DEVICE inline void
  add_condensed_node_pair(
    const Kernel                      &kernel,
    const ElementStageData<Number>    &data,
    const Number                      *supplemental,
    const unsigned int                 stride,
    const unsigned int                 a,
    const unsigned int                 b,
    const bool                         diagonal,
    const NodePairConstraints<Number> &constraints,
    Number (&matrix)[Kernel::n_components][Kernel::n_components],
    Number (&vector)[Kernel::n_components])
  {
    constexpr unsigned int nc = Kernel::n_components;
    const unsigned int     n_en =
      SpecializedSizes<dim, specialization>::n_nodes(data);
    const unsigned int n_ed = n_en * nc;
    const auto         abs  = [](const Number x) {
      return x < Number(0) ? -x : x;
    };
    with_staged_element_view<dim, specialization>(
      data,
      supplemental,
      stride,
      [&](const auto &element) {
        const auto block_of = [&](const unsigned int row_node,
                                  const unsigned int column_node,
                                  Number(&block)[nc][nc]) {
          GPU_ASSEMBLY_UNROLL
          for (unsigned int c1 = 0; c1 < nc; ++c1)
            GPU_ASSEMBLY_UNROLL
          for (unsigned int c2 = 0; c2 < nc; ++c2)
            block[c1][c2] = 0;
          kernel.add_node_pair(element, row_node, column_node, block);
        };

        Number block[nc][nc];
        block_of(a, b, block);
        // condense_element()'s substitute for a zero diagonal entry, its
        // sums taken in the same order, computed once and only where this
        // pair has a zero constrained diagonal entry. Called inside the
        // loops over the components, it would keep them from being
        // unrolled, and the walk's sums would go to local memory.
        bool zero_diagonal = false;
        if (a == b)
          GPU_ASSEMBLY_UNROLL
        for (unsigned int c = 0; c < nc; ++c)
          zero_diagonal |=
            constraints.constrained(a * nc + c) && block[c][c] == Number(0);
        Number average = 0;
        if (zero_diagonal)
          {
            Number other[nc][nc];
            GPU_ASSEMBLY_NO_UNROLL
            for (unsigned int r = 0; r < n_en; ++r)
              {
                block_of(r, r, other);
                GPU_ASSEMBLY_UNROLL
                for (unsigned int c = 0; c < nc; ++c)
                  average += abs(other[c][c]);
              }
            average /= Number(n_ed);
            if (average == Number(0))
              {
                Number l1_norm = 0;
                GPU_ASSEMBLY_NO_UNROLL
                for (unsigned int column = 0; column < n_en; ++column)
                  {
                    Number column_sum[nc];
                    GPU_ASSEMBLY_UNROLL
                    for (unsigned int c2 = 0; c2 < nc; ++c2)
                      column_sum[c2] = 0;
                    GPU_ASSEMBLY_NO_UNROLL
                    for (unsigned int r = 0; r < n_en; ++r)
                      {
                        block_of(r, column, other);
                        GPU_ASSEMBLY_UNROLL
                        for (unsigned int c1 = 0; c1 < nc; ++c1)
                          GPU_ASSEMBLY_UNROLL
                        for (unsigned int c2 = 0; c2 < nc; ++c2)
                          column_sum[c2] += abs(other[c1][c2]);
                      }
                    GPU_ASSEMBLY_UNROLL
                    for (unsigned int c2 = 0; c2 < nc; ++c2)
                      l1_norm =
                        column_sum[c2] > l1_norm ? column_sum[c2] : l1_norm;
                  }
                average = l1_norm / Number(n_ed);
                if (average == Number(0))
                  average = Number(1);
              }
          }

        GPU_ASSEMBLY_UNROLL
        for (unsigned int c1 = 0; c1 < nc; ++c1)
          GPU_ASSEMBLY_UNROLL
        for (unsigned int c2 = 0; c2 < nc; ++c2)
          {
            const unsigned int i = a * nc + c1, j = b * nc + c2;
            if (!constraints.constrained(i) && !constraints.constrained(j))
              matrix[c1][c2] += block[c1][c2];
            else if (i == j)
              {
                const Number entry = abs(block[c1][c2]);
                matrix[c1][c2] += entry != Number(0) ? entry : average;
              }
          }
        if (!diagonal)
          return;

        Number rhs[nc];
        GPU_ASSEMBLY_UNROLL
        for (unsigned int c1 = 0; c1 < nc; ++c1)
          rhs[c1] = 0;
        kernel.add_node_vector(element, a, rhs);
        GPU_ASSEMBLY_UNROLL
        for (unsigned int c1 = 0; c1 < nc; ++c1)
          if (constraints.constrained(a * nc + c1))
            rhs[c1] = data.use_inhomogeneities_for_rhs ?
                        (block[c1][c1] != Number(0) ? block[c1][c1] : average) *
                          constraints.g(a * nc + c1) :
                        Number(0);
        GPU_ASSEMBLY_NO_UNROLL
        for (unsigned int column = 0; column < n_en; ++column)
          {
            bool any = false;
            GPU_ASSEMBLY_UNROLL
            for (unsigned int c2 = 0; c2 < nc; ++c2)
              any |= constraints.constrained(column * nc + c2) &&
                     constraints.g(column * nc + c2) != Number(0);
            if (!any)
              continue;
            Number column_block[nc][nc];
            block_of(a, column, column_block);
            GPU_ASSEMBLY_UNROLL
            for (unsigned int c2 = 0; c2 < nc; ++c2)
              {
                const unsigned int j = column * nc + c2;
                const Number       g =
                  constraints.constrained(j) ? constraints.g(j) : Number(0);
                if (g == Number(0))
                  continue;
                GPU_ASSEMBLY_UNROLL
                for (unsigned int c1 = 0; c1 < nc; ++c1)
                  if (!constraints.constrained(a * nc + c1))
                    rhs[c1] -= column_block[c1][c2] * g;
              }
          }
        GPU_ASSEMBLY_UNROLL
        for (unsigned int c1 = 0; c1 < nc; ++c1)
          vector[c1] += rhs[c1];
      });
  }
} // namespace GPUAssembly

#endif
