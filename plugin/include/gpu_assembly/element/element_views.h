// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_element_element_views_h
#define gpu_assembly_element_element_views_h

#include <gpu_assembly/base/config.h>

#include <cstddef>
#include <type_traits>
#include <utility>

/**
 * @file
 * What an element kernel sees of one element, and where it writes its
 * element matrix and vector. The views carry a stride so that the same
 * kernel reads an element-major host array (stride 1) or a column-major
 * device array whose entries for neighbouring elements are adjacent
 * (stride = number of elements), which is what makes GPU reads coalesce.
 * Host and device code share these types; they include no other header.
 */

namespace GPUAssembly
{
  /**
   * Element view for SupplementalDataFormat::quadrature_gradients: JxW and
   * the reference-configuration shape gradients are read from S(e).
   */
  template <int dim, typename Number>
  struct QuadratureGradientElement
  {
    /// S(e); entry i is at supplemental[i * stride].
    const Number *supplemental;
    unsigned int  stride;
    unsigned int  n_nodes;
    unsigned int  n_q_points;
    /// Reference shape values phi_a(xhat_q) at q * n_nodes + a.
    const Number *shape_values;
    /// Nodal data of this element's nodes: field f of node a at
    /// a * n_nodal_fields + f. May be null for kernels that need none.
    const Number *nodal_data;
    unsigned int  n_nodal_fields;

    GPU_ASSEMBLY_HOST_DEVICE Number
    JxW(const unsigned int q) const
    {
      return supplemental[(q * (1 + n_nodes * dim)) * stride];
    }

    GPU_ASSEMBLY_HOST_DEVICE Number
    shape_grad(const unsigned int a,
               const unsigned int q,
               const unsigned int k) const
    {
      return supplemental[(q * (1 + n_nodes * dim) + 1 + a * dim + k) * stride];
    }

    GPU_ASSEMBLY_HOST_DEVICE Number
    shape_value(const unsigned int a, const unsigned int q) const
    {
      return shape_values[q * n_nodes + a];
    }

    /// Where node a's data sits in nodal_data: node_indices[a * node_stride]
    /// (block-local node numbers of a GPU method), or a itself if null.
    const index_type *node_indices = nullptr;
    unsigned int      node_stride  = 1;

    GPU_ASSEMBLY_HOST_DEVICE Number
    nodal_value(const unsigned int a, const unsigned int f) const
    {
      const unsigned int node =
        node_indices != nullptr ? node_indices[a * node_stride] : a;
      return nodal_data[node * n_nodal_fields + f];
    }
  };



  /**
   * Element view for SupplementalDataFormat::inverse_edge_matrix (linear
   * simplices): S(e) = [D^{-1} row-major, det D]. Gradients are rows of
   * D^{-1} (node 0: minus their sum), and JxW(q) = det D * w_q with the
   * reference weights, so S(e) stays dim^2 + 1 numbers for any quadrature.
   */
  template <int dim, typename Number>
  struct EdgeMatrixElement
  {
    const Number *supplemental;
    unsigned int  stride;
    unsigned int  n_nodes;
    unsigned int  n_q_points;
    const Number *shape_values;
    /// Reference quadrature weights.
    const Number *quadrature_weights;
    const Number *nodal_data;
    unsigned int  n_nodal_fields;

    /// S(e) is the packed upper triangle of R^{-1}
    /// (SupplementalDataFormat::compressed_edge_matrix).
    bool compressed = false;

    GPU_ASSEMBLY_HOST_DEVICE Number
    JxW(const unsigned int q) const
    {
      if (!compressed)
        return supplemental[(dim * dim) * stride] * quadrature_weights[q];
      Number diagonal_product = 1;
      for (unsigned int i = 0; i < dim; ++i)
        diagonal_product *= supplemental[packed_index(i, i) * stride];
      return quadrature_weights[q] / diagonal_product;
    }

    GPU_ASSEMBLY_HOST_DEVICE Number
    shape_grad(const unsigned int a,
               const unsigned int /*q*/,
               const unsigned int k) const
    {
      if (a > 0)
        return inverse_entry(a - 1, k);
      Number sum = 0;
      for (unsigned int b = 0; b < dim; ++b)
        sum += inverse_entry(b, k);
      return -sum;
    }

    /// Position of (i, k), k >= i, in a row-by-row packed upper triangle.
    GPU_ASSEMBLY_HOST_DEVICE static unsigned int
    packed_index(const unsigned int i, const unsigned int k)
    {
      return i * dim - (i * (i - 1)) / 2 + k - i;
    }

    GPU_ASSEMBLY_HOST_DEVICE Number
    inverse_entry(const unsigned int i, const unsigned int k) const
    {
      if (!compressed)
        return supplemental[(i * dim + k) * stride];
      return k < i ? Number(0) : supplemental[packed_index(i, k) * stride];
    }

    GPU_ASSEMBLY_HOST_DEVICE Number
    shape_value(const unsigned int a, const unsigned int q) const
    {
      return shape_values[q * n_nodes + a];
    }

    /// Where node a's data sits in nodal_data: node_indices[a * node_stride]
    /// (block-local node numbers of a GPU method), or a itself if null.
    const index_type *node_indices = nullptr;
    unsigned int      node_stride  = 1;

    GPU_ASSEMBLY_HOST_DEVICE Number
    nodal_value(const unsigned int a, const unsigned int f) const
    {
      const unsigned int node =
        node_indices != nullptr ? node_indices[a * node_stride] : a;
      return nodal_data[node * n_nodal_fields + f];
    }
  };



  /**
   * Where an element kernel writes A^e (dense, row-major in the local DoF
   * numbering d = a * n_components + c) and F^e: entry e of either at e *
   * stride, an entry of all elements side by side, or, if grouped, at
   * (e / group) * stride * group + e % group. GlobalNZ's full element data
   * are grouped by group = n_components where the plan says so
   * (GlobalNZPlan::entry_group): the entries of the components of one
   * column node, which the reduction sums for neighbouring nonzeros of a
   * row at the same time, then lie next to each other in one sector
   * instead of a stride apart.
   */
  /**
   * Where entry @p e of an element lies among the element data of @p stride
   * elements stored side by side in groups of @p group consecutive entries
   * of one element, counted from the element's first entry (at group times
   * its index among the @p stride). The one statement of GlobalNZ's
   * element-data layout: GlobalNZPlan::element_data_index() and
   * ElementOutput both use it.
   */
  GPU_ASSEMBLY_HOST_DEVICE constexpr inline std::size_t
  grouped_entry_position(const unsigned int e,
                         const unsigned int stride,
                         const unsigned int group)
  {
    return static_cast<std::size_t>(e / group) * stride * group + e % group;
  }



  template <typename Number, unsigned int group = 1>
  struct ElementOutput
  {
    /// Every (i, j) has storage of its own. Kernels that accumulate with
    /// += must skip the lower triangle where this is true.
    static constexpr bool stores_upper_triangle_only = false;

    Number      *matrix;
    Number      *vector;
    unsigned int n_dofs;
    unsigned int stride;
    bool         grouped = false;

    GPU_ASSEMBLY_HOST_DEVICE static std::size_t
    position(const unsigned int e,
             const unsigned int stride,
             const bool         grouped)
    {
      // group a constant in each branch, so that e / group is no division.
      return group > 1 && grouped ? grouped_entry_position(e, stride, group) :
                                    grouped_entry_position(e, stride, 1);
    }

    GPU_ASSEMBLY_HOST_DEVICE Number &
    matrix_entry(const unsigned int i, const unsigned int j) const
    {
      return matrix[position(i * n_dofs + j, stride, grouped)];
    }

    GPU_ASSEMBLY_HOST_DEVICE Number &
    vector_entry(const unsigned int i) const
    {
      return vector[position(i, stride, grouped)];
    }
  };



  /**
   * Whether @p Output may discard rows of A^e and F^e. Such an output has
   * keeps_rows(a), true where it keeps the rows of local node a (SharedNZ
   * keeps only the rows of its part's nodes:
   * SharedNZLayout::OwnedRowsOutput); a kernel may skip computing the rows
   * it does not keep, and need not write them. Outputs that say nothing
   * keep every row.
   */
  template <class Output, class = void>
  struct output_may_discard_rows : std::false_type
  {};

  template <class Output>
  struct output_may_discard_rows<
    Output,
    std::void_t<decltype(std::declval<const Output &>().keeps_rows(0u))>>
    : std::true_type
  {};



  /**
   * Whether @p Kernel declares a symmetric element matrix
   * (static constexpr bool is_symmetric = true); false if it says nothing.
   */
  template <class Kernel, class = void>
  struct is_symmetric_kernel : std::false_type
  {};

  template <class Kernel>
  struct is_symmetric_kernel<Kernel,
                             std::void_t<decltype(Kernel::is_symmetric)>>
    : std::bool_constant<Kernel::is_symmetric>
  {};



  /**
   * Whether @p Kernel reads nodal data (element.nodal_value()): true unless
   * it declares static constexpr bool reads_nodal_data = false. The GPU
   * methods then skip fetching the nodal data of a block's elements into
   * shared memory, which for a kernel that needs only S(e) (linear
   * elasticity, Laplace, mass) is a wait for memory with nothing to show
   * for it. A kernel that declares false and reads nodal data anyway reads
   * undefined values.
   */
  template <class Kernel, class = void>
  struct kernel_reads_nodal_data : std::true_type
  {};

  template <class Kernel>
  struct kernel_reads_nodal_data<
    Kernel,
    std::void_t<decltype(Kernel::reads_nodal_data)>>
    : std::bool_constant<Kernel::reads_nodal_data>
  {};



  /**
   * Whether @p Kernel has a node-pair form (static constexpr bool
   * node_pair_form = true): members add_node_pair(element, a, b, matrix),
   * which adds the n_components x n_components block of A^e of row node a
   * and column node b to @p matrix, and add_node_vector(element, a,
   * vector), which adds node a's rows of F^e. SharedNZ can then compute
   * element data inside its reduction, from S(e) alone
   * (SharedNZPlan::Parameters::node_pairs), so that a block keeps S(e) in
   * shared memory instead of rows of element data. Both members must give
   * what operator() writes: the tests compare the two forms.
   */
  template <class Kernel, class = void>
  struct kernel_has_node_pair_form : std::false_type
  {};

  template <class Kernel>
  struct kernel_has_node_pair_form<
    Kernel,
    std::void_t<decltype(Kernel::node_pair_form)>>
    : std::bool_constant<Kernel::node_pair_form>
  {};



  /**
   * Whether @p Kernel's node-pair form also sums a node pair's blocks over
   * elements in a form of its own (static constexpr bool
   * node_pairs_accumulate = true): members accumulate_node_pair(element,
   * a, b, sum), which adds element's share to @p sum, and
   * finish_node_pairs(sum), which turns the sum of any number of elements
   * into the sum of their blocks, in place. Linear elasticity sums
   * JxW grad phi_a (x) grad phi_b, 9 FMAs an element, and forms lambda M +
   * mu M^T + mu tr(M) I once per node pair instead of once per element:
   * SharedNZ's node pairs spend most of their instructions on that
   * arithmetic.
   */
  template <class Kernel, class = void>
  struct kernel_accumulates_node_pairs : std::false_type
  {};

  template <class Kernel>
  struct kernel_accumulates_node_pairs<
    Kernel,
    std::void_t<decltype(Kernel::node_pairs_accumulate)>>
    : std::bool_constant<Kernel::node_pairs_accumulate>
  {};



  /**
   * Where a symmetric element kernel writes A^e when only the upper
   * triangle is stored (n (n + 1) / 2 instead of n^2 values: 78 instead of
   * 144 for a linear tetrahedron in 3D elasticity). Entries (i, j) and
   * (j, i) are the same storage, so a kernel that writes the full matrix
   * writes each off-diagonal value twice, and reads see the symmetric
   * value; this is only correct for kernels whose A^e is symmetric.
   */
  template <typename Number>
  struct SymmetricElementOutput
  {
    static constexpr bool stores_upper_triangle_only = true;

    Number      *matrix;
    Number      *vector;
    unsigned int n_dofs;
    unsigned int stride;

    /// Position of (i, j), i <= j, in the row-major packed upper triangle.
    GPU_ASSEMBLY_HOST_DEVICE static unsigned int
    packed_index(const unsigned int n,
                 const unsigned int i,
                 const unsigned int j)
    {
      const unsigned int lo = i < j ? i : j;
      const unsigned int hi = i < j ? j : i;
      return lo * (2 * n - lo + 1) / 2 + (hi - lo);
    }

    GPU_ASSEMBLY_HOST_DEVICE Number &
    matrix_entry(const unsigned int i, const unsigned int j) const
    {
      return matrix[packed_index(n_dofs, i, j) * stride];
    }

    GPU_ASSEMBLY_HOST_DEVICE Number &
    vector_entry(const unsigned int i) const
    {
      return vector[i * stride];
    }
  };
} // namespace GPUAssembly

#endif
