#ifndef gpu_assembly_engine_shared_nz_host_h
#define gpu_assembly_engine_shared_nz_host_h

#include <deal.II/base/parallel.h>

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/engine/shared_nz_plan.h>
#include <gpu_assembly/host/assembly_options.h>
#include <gpu_assembly/host/host_element_stage.h>

#include <vector>

namespace GPUAssembly
{
  /**
   * SharedNZ executed on the host exactly as the device kernel executes it,
   * block by block: halo nodal data and element data in a per-block
   * "shared" buffer laid out as on the device, then the packed reduction
   * lists summed lane by lane straight into the value array. It validates a
   * plan without a GPU and is the method's host version.
   */
  template <int dim, typename Number, class Kernel>
  void
  shared_nz_on_host(const SharedNZPlan        &plan,
                    const MeshArrays          &arrays,
                    const Kernel              &kernel,
                    const AssemblyOptions     &options,
                    const std::vector<Number> &nodal_data,
                    std::vector<Number>       &values,
                    std::vector<Number>       &rhs)
  {
    const unsigned int             n_ed = plan.n_dofs_per_element;
    const unsigned int             n_f  = plan.n_fields;
    const unsigned int             T    = plan.parameters.threads_per_block;
    const std::vector<Number>      supplemental(plan.block_supplemental.begin(),
                                           plan.block_supplemental.end());
    const HostElementStage<Number> stage(arrays, n_f, options);
    const ElementStageData<Number> &data = stage.data();
    values.assign(plan.n_nonzeros, Number(0));
    rhs.assign(plan.n_dofs, Number(0));

    dealii::parallel::apply_to_subranges(
      0u,
      plan.n_blocks,
      [&](const unsigned int begin, const unsigned int end) {
        std::vector<Number> shared;
        for (unsigned int k = begin; k < end; ++k)
          {
            const std::size_t n_halo =
              plan.halo_offsets[k + 1] - plan.halo_offsets[k];
            const std::size_t  base = plan.element_offsets[k];
            const unsigned int n_k  = plan.element_offsets[k + 1] - base;
            shared.assign(n_halo * n_f + std::size_t(n_k) * plan.n_entries,
                          Number(0));
            for (std::size_t i = 0; i < n_halo * n_f; ++i)
              shared[i] =
                nodal_data[plan.halo_nodes[plan.halo_offsets[k] + i / n_f] *
                             n_f +
                           i % n_f];
            Number *const element_data = shared.data() + n_halo * n_f;

            for (unsigned int j = 0; j < n_k; ++j)
              {
                const Number *S =
                  supplemental.data() + base * plan.n_supplemental + j;
                const index_type *nodes = plan.block_connectivity.data() +
                                          base * plan.n_nodes_per_element + j;
                const ElementOutput<Number> output{
                  element_data + j,
                  element_data + std::size_t(n_ed) * n_ed * n_k + j,
                  n_ed,
                  n_k};
                compute_element<dim>(kernel,
                                     data,
                                     S,
                                     shared.data(),
                                     nodes,
                                     n_k,
                                     output,
                                     plan.block_has_constraints[base + j] != 0,
                                     plan.block_location.data() + base * n_ed +
                                       j);
              }

            const index_type *array =
              plan.reduction_array.data() + plan.reduction_offsets[k];
            const std::size_t n_columns =
              (plan.reduction_offsets[k + 1] - plan.reduction_offsets[k]) / T;
            for (unsigned int lane = 0; lane < T; ++lane)
              {
                Number sum = 0;
                for (std::size_t c = 0; c < n_columns; ++c)
                  {
                    const index_type i = array[c * T + lane];
                    if (i > 0)
                      sum += shared[i - 1];
                    else if (i < 0)
                      {
                        const std::size_t target = -i - 1;
                        if (target < plan.n_nonzeros)
                          values[target] = sum;
                        else
                          rhs[target - plan.n_nonzeros] = sum;
                        sum = 0;
                      }
                  }
              }
          }
      },
      4);
  }
} // namespace GPUAssembly

#endif
