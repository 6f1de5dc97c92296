#ifndef gpu_assembly_kernels_element_stage_h
#define gpu_assembly_kernels_element_stage_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/kernels/dirichlet_condensation.h>
#include <gpu_assembly/kernels/element_views.h>

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
   * F^e to @p vector. S(e) is read where the block staged it, with
   * @p stride; the kernel reads no nodal data (the plan requires it).
   * Elements with a constrained DoF are never computed this way: the
   * condensation needs the whole element.
   */
  template <
    int dim,
    typename Number,
    class Kernel,
    ElementSpecialization specialization = ElementSpecialization::general>
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
    with_element_view<dim, specialization, false>(
      data,
      supplemental,
      stride,
      static_cast<const Number *>(nullptr),
      nullptr,
      [&](const auto &element) {
        kernel.add_node_pair(element, a, b, matrix);
        if (diagonal)
          kernel.add_node_vector(element, a, vector);
      });
  }
} // namespace GPUAssembly

#endif
