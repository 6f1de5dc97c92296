// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_host_constraint_stage_h
#define gpu_assembly_engine_host_constraint_stage_h

#include <deal.II/base/parallel.h>

#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/constraints/plan.h>

#include <vector>

namespace GPUAssembly
{
  /**
   * The host execution of a ConstraintPlan, with the arithmetic of the
   * device's (constraints/kernels.cuh): the plan's elements are recomputed
   * raw into a column-major element-data buffer, then every target sums its
   * weighted list in order and is stored or added to. Run it after a
   * method's own assembly of the same element data. Results do not depend
   * on the number of threads.
   */
  template <typename Number>
  class HostConstraintStage
  {
  public:
    /// Build the plan of @p arrays.
    explicit HostConstraintStage(const MeshArrays &arrays)
    {
      plan.reinit(arrays);
      supplemental.assign(plan.supplemental.begin(), plan.supplemental.end());
      weights.assign(plan.weights.begin(), plan.weights.end());
    }

    const ConstraintPlan &
    get_plan() const
    {
      return plan;
    }

    /**
     * Add the plan's contributions to @p values (the matrix's value array)
     * and @p rhs. @p data and @p nodal_data are those the method's own
     * assembly used.
     */
    template <int dim, class Kernel>
    void
    apply(const Kernel                   &kernel,
          const ElementStageData<Number> &data,
          const Number                   *nodal_data,
          Number                         *values,
          Number                         *rhs) const
    {
      if (plan.empty())
        return;
      const unsigned int n_c  = plan.elements.size();
      const unsigned int n_ed = plan.n_dofs_per_element;
      element_data.resize(plan.element_data_size());
      dealii::parallel::apply_to_subranges(
        0u,
        n_c,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int c = begin; c < end; ++c)
            {
              const ElementOutput<Number> output{
                element_data.data() + c,
                element_data.data() +
                  static_cast<std::size_t>(n_ed) * n_ed * n_c + c,
                n_ed,
                n_c};
              compute_element<dim>(kernel,
                                   data,
                                   supplemental.data() + c,
                                   nodal_data,
                                   plan.connectivity.data() + c,
                                   n_c,
                                   output,
                                   false,
                                   nullptr);
            }
        },
        64);

      const unsigned int n_targets = plan.targets.size();
      dealii::parallel::apply_to_subranges(
        0u,
        n_targets,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int t = begin; t < end; ++t)
            {
              Number sum = 0;
              for (index_type k = plan.source_offsets[t];
                   k < plan.source_offsets[t + 1];
                   ++k)
                sum += weights[k] * element_data[plan.sources[k]];
              Number &target = t < plan.n_matrix_targets ?
                                 values[plan.targets[t]] :
                                 rhs[plan.targets[t]];
              target         = plan.overwrite[t] != 0 ? sum : target + sum;
            }
        },
        256);
    }

  private:
    ConstraintPlan              plan;
    std::vector<Number>         supplemental;
    std::vector<Number>         weights;
    mutable std::vector<Number> element_data;
  };
} // namespace GPUAssembly

#endif
