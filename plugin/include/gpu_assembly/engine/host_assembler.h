// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_host_assembler_h
#define gpu_assembly_engine_host_assembler_h

#include <deal.II/base/exceptions.h>
#include <deal.II/base/parallel.h>

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/assembly_options.h>
#include <gpu_assembly/engine/element_coloring.h>
#include <gpu_assembly/engine/host/constraint_stage.h>
#include <gpu_assembly/engine/host/element_stage.h>

#include <vector>

namespace GPUAssembly
{
  /**
   * Reference assembly on the host through the flat MeshArrays: the
   * direct stiffness method (Algorithm 1 of the GPU Gems chapter) with the
   * element kernels the GPU methods call, multithreaded over a colouring
   * of the elements. It is the reference that every GPU method is
   * validated against and the path that runs where no GPU is present.
   *
   * Results are bitwise reproducible: each matrix and vector entry receives
   * its element contributions in the same order whatever the number of
   * threads.
   */
  template <int dim, typename Number>
  class HostAssembler
  {
  public:
    /**
     * Prepare the assembly of @p arrays, which must outlive this object.
     * Colours the elements once; every assemble() call reuses it.
     */
    explicit HostAssembler(const MeshArrays &arrays);

    /**
     * Assemble the matrix values (in the order of arrays.column_indices)
     * and the right-hand side with @p kernel. @p nodal_data holds
     * @p n_nodal_fields values per node (node-major) that the kernel reads
     * through Element::nodal_value(); linear kernels need none.
     */
    template <class Kernel>
    void
    assemble(const Kernel              &kernel,
             std::vector<Number>       &matrix_values,
             std::vector<Number>       &rhs,
             const AssemblyOptions     &options        = AssemblyOptions(),
             const std::vector<Number> &nodal_data     = {},
             const unsigned int         n_nodal_fields = 0) const;

    unsigned int
    n_colors() const
    {
      return colors.size();
    }

  private:
    template <class Kernel>
    void
    assemble_range(const Kernel                   &kernel,
                   const ElementStageData<Number> &data,
                   const unsigned int              color,
                   const unsigned int              begin,
                   const unsigned int              end,
                   std::vector<Number>            &matrix_values,
                   std::vector<Number>            &rhs,
                   const std::vector<Number>      &nodal_data) const;

    const MeshArrays                      *arrays;
    std::vector<std::vector<unsigned int>> colors;
    // S(e) converted to Number once, so that single-precision
    // assembly reads single-precision input as the GPU does.
    std::vector<Number> supplemental;
    // Distributes the element data of elements that touch constraint lines
    // with entries, after the colour-by-colour sum.
    HostConstraintStage<Number> constraint_stage;
  };



  template <int dim, typename Number>
  HostAssembler<dim, Number>::HostAssembler(const MeshArrays &arrays)
    : arrays(&arrays)
    , colors(color_elements(arrays))
    , supplemental(arrays.supplemental.begin(), arrays.supplemental.end())
    , constraint_stage(arrays)
  {
    AssertThrow(arrays.dim == dim,
                dealii::ExcMessage("HostAssembler<" + std::to_string(dim) +
                                   "> was given mesh arrays of dimension " +
                                   std::to_string(arrays.dim) + "."));
  }



  template <int dim, typename Number>
  template <class Kernel>
  void
  HostAssembler<dim, Number>::assemble(const Kernel              &kernel,
                                       std::vector<Number>       &matrix_values,
                                       std::vector<Number>       &rhs,
                                       const AssemblyOptions     &options,
                                       const std::vector<Number> &nodal_data,
                                       const unsigned int n_nodal_fields) const
  {
    const ElementLayout &layout = arrays->layout;
    AssertThrow(Kernel::n_components == layout.n_components,
                ExcUnsupportedInput(
                  "the element kernel works on " +
                  std::to_string(Kernel::n_components) +
                  " components per node, the finite element has " +
                  std::to_string(layout.n_components) + "."));
    AssertThrow(nodal_data.size() ==
                  static_cast<std::size_t>(arrays->n_nodes) * n_nodal_fields,
                dealii::ExcDimensionMismatch(
                  nodal_data.size(),
                  static_cast<std::size_t>(arrays->n_nodes) * n_nodal_fields));

    matrix_values.assign(arrays->n_nonzeros(), Number(0));
    rhs.assign(arrays->n_dofs, Number(0));

    const HostElementStage<Number>  stage(*arrays, n_nodal_fields, options);
    const ElementStageData<Number> &data = stage.data();
    for (unsigned int c = 0; c < colors.size(); ++c)
      dealii::parallel::apply_to_subranges(
        0u,
        static_cast<unsigned int>(colors[c].size()),
        [&](const unsigned int begin, const unsigned int end) {
          assemble_range(kernel,
                         data,
                         c,
                         begin,
                         end,
                         matrix_values,
                         rhs,
                         nodal_data);
        },
        64);
    constraint_stage.template apply<dim>(kernel,
                                         data,
                                         nodal_data.data(),
                                         matrix_values.data(),
                                         rhs.data());
  }



  template <int dim, typename Number>
  template <class Kernel>
  void
  HostAssembler<dim, Number>::assemble_range(
    const Kernel                   &kernel,
    const ElementStageData<Number> &data,
    const unsigned int              color,
    const unsigned int              begin,
    const unsigned int              end,
    std::vector<Number>            &matrix_values,
    std::vector<Number>            &rhs,
    const std::vector<Number>      &nodal_data) const
  {
    const unsigned int n_en = arrays->layout.n_nodes;
    const unsigned int n_ed = arrays->layout.n_dofs;

    std::vector<Number>         local_matrix(n_ed * n_ed);
    std::vector<Number>         local_vector(n_ed);
    const ElementOutput<Number> output{local_matrix.data(),
                                       local_vector.data(),
                                       n_ed,
                                       1};

    for (unsigned int i = begin; i < end; ++i)
      {
        const std::size_t       e = colors[color][i];
        const index_type *const L = arrays->location.data() + e * n_ed;
        // The condensation checks itself whether the element touches a
        // constrained DoF.
        compute_element<dim>(kernel,
                             data,
                             supplemental.data() + e * arrays->n_supplemental,
                             nodal_data.data(),
                             arrays->connectivity.data() + e * n_en,
                             1,
                             output,
                             true,
                             L);

        const index_type *const K =
          arrays->nonzero_map.data() + e * n_ed * n_ed;
        for (unsigned int d = 0; d < n_ed * n_ed; ++d)
          if (K[d] != invalid_index)
            matrix_values[K[d]] += local_matrix[d];
        for (unsigned int d = 0; d < n_ed; ++d)
          rhs[L[d]] += local_vector[d];
      }
  }
} // namespace GPUAssembly

#endif
