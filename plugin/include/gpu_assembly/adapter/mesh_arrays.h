// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_adapter_mesh_arrays_h
#define gpu_assembly_adapter_mesh_arrays_h

#include <gpu_assembly/base/config.h>

#include <cstdint>
#include <vector>

namespace GPUAssembly
{
  /**
   * How the supplemental data S(e) of an element is stored.
   */
  enum class SupplementalDataFormat
  {
    /**
     * For every quadrature point q, in this order: JxW(q), then the
     * gradients of the element's (scalar) shape functions in the reference
     * configuration, node-major: grad phi_a(x_q)[k] at
     * q * (1 + n_nodes * dim) + 1 + a * dim + k. Works for every supported
     * element.
     */
    quadrature_gradients,
    /**
     * Linear simplices only: the inverse of the reference edge matrix
     * D = [x_1 - x_0, ..., x_dim - x_0] row-major (dim * dim values), then
     * det D. This is the compact form of the GPU Gems chapter (Sec. 16.4):
     * gradients are rows of D^{-1}, so S(e) holds dim^2 + 1 numbers
     * whatever the quadrature.
     */
    inverse_edge_matrix,
    /**
     * Linear simplices only: R^{-1} of the orientation-preserving QR
     * decomposition D = Q R (R with a positive diagonal), its upper
     * triangle row by row: dim (dim + 1) / 2 numbers (6 in 3D), the
     * chapter's compression of Sec. 16.4.2.1. The gradients it gives are
     * those of the element rotated by Q^T, so only kernels that are
     * invariant under a rotation of the reference element may use it (an
     * isotropic material written with F = sum phi_a (x) grad N_a, e.g.
     * NeoHookeanKernel with nodal_data_are_positions). det D is the
     * inverse of the product of the diagonal.
     */
    compressed_edge_matrix
  };

  /**
   * Element-type data shared by all elements: sizes, and the values of the
   * scalar base shape functions at the reference quadrature points (they do
   * not depend on the element for Lagrange elements).
   */
  struct ElementLayout
  {
    /// Simplex (triangle, tetrahedron) or hypercube (quadrilateral,
    /// hexahedron) cells. A flag rather than deal.II's ReferenceCell so
    /// that nvcc, which never sees deal.II's headers, can read this struct.
    bool         is_simplex = false;
    unsigned int degree     = 0;
    /// e_n: nodes (support points of the scalar base element) per element.
    unsigned int n_nodes = 0;
    /// n_f: vector components per node (1 for scalar problems).
    unsigned int n_components = 0;
    /// Local degrees of freedom per element, n_nodes * n_components.
    unsigned int n_dofs     = 0;
    unsigned int n_q_points = 0;
    /// Reference-cell quadrature weights.
    std::vector<double> quadrature_weights;
    /// phi_a(xhat_q) at q * n_nodes + a.
    std::vector<double> shape_values;
  };

  /**
   * The flat host arrays that every assembly method reads: connectivity E,
   * locations L, supplemental data S and coordinates C in the GPU Gems
   * chapter's notation (doc/design.md describes them). They are built once
   * per mesh and DoF numbering by DoFHandlerAdapter and are constant
   * afterwards.
   *
   * Local numbering: local degree of freedom d of an element is
   * d = a * n_components + c for node a and component c, whatever the order
   * of deal.II's FESystem, so that element kernels can be written once.
   */
  struct MeshArrays
  {
    unsigned int dim        = 0;
    unsigned int n_elements = 0;
    unsigned int n_nodes    = 0;
    unsigned int n_dofs     = 0;

    ElementLayout layout;

    /// E(e, a) at e * layout.n_nodes + a: global node number.
    std::vector<index_type> connectivity;

    /// L(e, d) at e * layout.n_dofs + d: global DoF index (deal.II's).
    std::vector<index_type> location;

    SupplementalDataFormat supplemental_format =
      SupplementalDataFormat::quadrature_gradients;
    /// Number of values of S(e).
    unsigned int n_supplemental = 0;
    /// S(e) at e * n_supplemental + i.
    std::vector<double> supplemental;

    /// C(n): reference coordinates of node n at n * dim + k.
    std::vector<double> nodal_coordinates;

    /// DoF of component c at node n, at n * layout.n_components + c.
    std::vector<index_type> node_dofs;

    /// CSR sparsity pattern, columns sorted within each row.
    std::vector<index_type> row_offsets;
    std::vector<index_type> column_indices;

    /**
     * K(e, d1, d2) at (e * n_dofs + d1) * n_dofs + d2: position of
     * (L(e, d1), L(e, d2)) in column_indices, or invalid_index where the
     * constraints drop the contribution and the pattern has no slot for it.
     */
    std::vector<index_type> nonzero_map;

    /// 1 for constrained DoFs (any line of the AffineConstraints), 0
    /// otherwise.
    std::vector<std::uint8_t> dof_is_constrained;
    /// Inhomogeneity g_i of each constrained DoF (0 for free DoFs).
    std::vector<double> inhomogeneities;

    /**
     * The constraint lines with entries (hanging nodes, periodicity, user
     * lines), closed: x_i = sum_k w_k x_{j_k} + g_i with every j_k
     * unconstrained. Line l constrains DoF constraint_line_dofs[l]
     * (increasing); its entries are constraint_entry_dofs[k] and
     * constraint_entry_weights[k] for k in [constraint_entry_offsets[l],
     * constraint_entry_offsets[l + 1]), in the order of the
     * AffineConstraints. Lines without entries (x_i = g_i) are not listed:
     * dof_is_constrained and inhomogeneities describe them fully.
     */
    std::vector<index_type> constraint_line_dofs;
    std::vector<index_type> constraint_entry_offsets;
    std::vector<index_type> constraint_entry_dofs;
    std::vector<double>     constraint_entry_weights;
    /// Whether the pattern keeps the couplings of constrained DoFs, as in
    /// DoFTools::make_sparsity_pattern(..., keep_constrained_dofs).
    bool keep_constrained_dofs = true;

    std::size_t
    n_nonzeros() const
    {
      return column_indices.size();
    }

    /**
     * Number of elements that touch at least one constrained DoF.
     */
    unsigned int
    n_constrained_elements() const;

    /**
     * Number of constraint lines with entries.
     */
    unsigned int
    n_constraint_lines() const
    {
      return constraint_line_dofs.size();
    }

    /**
     * Memory held by the arrays, in bytes.
     */
    std::size_t
    memory_consumption() const;
  };
} // namespace GPUAssembly

#endif
