// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_global_nz_host_h
#define gpu_assembly_tests_global_nz_host_h

#include <deal.II/base/parallel.h>

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/host/element_stage.h>
#include <gpu_assembly/engine/host_assembler.h>

#include <string>
#include <vector>

namespace GPUAssembly
{
  /**
   * GlobalNZ executed on the host, block by block and lane by lane exactly as
   * the two device kernels execute it: the element stage reads the cluster's
   * nodes into a "shared" buffer and writes element data through the
   * plan's indices, the reduction stage walks the LPT-packed reduction
   * arrays with Algorithm 2. It validates a plan without a GPU (CI runs it)
   * and is the seed's host version of the method. Results equal the device's
   * up to the order of floating-point additions within a target, which is
   * the same: the two are bitwise identical where the compiler contracts
   * the same operations.
   */
  template <int dim, typename Number, class Kernel>
  void
  global_nz_on_host(const GlobalNZPlan        &plan,
                    const MeshArrays          &arrays,
                    const Kernel              &kernel,
                    const AssemblyOptions     &options,
                    const std::vector<Number> &nodal_data,
                    const unsigned int         n_fields,
                    std::vector<Number>       &element_data,
                    std::vector<Number>       &values,
                    std::vector<Number>       &rhs)
  {
    AssertThrow(!plan.parameters.symmetric ||
                  is_symmetric_kernel<Kernel>::value,
                dealii::ExcMessage(
                  "The GlobalNZ plan stores symmetric element data, but the "
                  "element kernel does not declare is_symmetric = true."));
    AssertThrow(plan.entry_group == 1 ||
                  (!plan.parameters.symmetric &&
                   plan.entry_group == Kernel::n_components),
                dealii::ExcMessage(
                  "The GlobalNZ plan groups the element data by " +
                  std::to_string(plan.entry_group) +
                  " entries, but the element kernel has " +
                  std::to_string(Kernel::n_components) + " components."));
    AssertThrow(!plan.reduction_arrays_on_device,
                dealii::ExcMessage(
                  "The GlobalNZ plan's reduction arrays were built on the "
                  "device; executing it on the host needs a plan of "
                  "GlobalNZPlan::reinit()."));
    const unsigned int             B    = plan.parameters.elements_per_block;
    const unsigned int             n_ed = plan.n_dofs_per_element;
    const std::vector<Number>      supplemental(plan.block_supplemental.begin(),
                                           plan.block_supplemental.end());
    const HostElementStage<Number> stage(arrays, n_fields, options);
    const ElementStageData<Number> &data = stage.data();
    element_data.assign(plan.element_data_size(), Number(0));
    values.assign(plan.n_nonzeros, Number(0));
    rhs.assign(plan.n_dofs, Number(0));

    // Kernel 1: a block per element cluster, a thread per element.
    dealii::parallel::apply_to_subranges(
      0u,
      plan.n_element_blocks,
      [&](const unsigned int begin, const unsigned int end) {
        std::vector<Number> shared;
        for (unsigned int k = begin; k < end; ++k)
          {
            const index_type first = plan.cluster_node_offsets[k];
            const index_type last  = plan.cluster_node_offsets[k + 1];
            shared.resize((last - first) * n_fields);
            for (index_type i = first; i < last; ++i)
              for (unsigned int f = 0; f < n_fields; ++f)
                shared[(i - first) * n_fields + f] =
                  nodal_data[plan.cluster_nodes[i] * n_fields + f];

            for (unsigned int t = 0; t < B; ++t)
              {
                if (plan.block_element[k * B + t] < 0)
                  continue;
                const std::size_t   slot = static_cast<std::size_t>(k) * B + t;
                const Number *const S =
                  supplemental.data() +
                  static_cast<std::size_t>(k) * plan.n_supplemental * B + t;
                const index_type *const nodes =
                  plan.block_connectivity.data() +
                  static_cast<std::size_t>(k) * plan.n_nodes_per_element * B +
                  t;
                const auto run = [&](const auto &output) {
                  compute_element<dim>(kernel,
                                       data,
                                       S,
                                       shared.data(),
                                       nodes,
                                       B,
                                       output,
                                       plan.block_has_constraints[slot] != 0,
                                       plan.block_location.data() +
                                         static_cast<std::size_t>(k) * n_ed *
                                           B +
                                         t);
                };
                Number *const matrix =
                  element_data.data() + plan.element_data_index(k, t, 0);
                Number *const vector =
                  element_data.data() +
                  plan.element_data_index(k, t, plan.n_matrix_entries);
                if (plan.parameters.symmetric)
                  run(SymmetricElementOutput<Number>{matrix, vector, n_ed, B});
                else
                  run(ElementOutput<Number, Kernel::n_components>{
                    matrix,
                    vector,
                    n_ed,
                    B,
                    plan.entry_group > 1});
              }
          }
      },
      8);

    // Kernel 2: Algorithm 2 over each reduction block's packed lists.
    const unsigned int T = plan.parameters.reduction_threads;
    dealii::parallel::apply_to_subranges(
      0u,
      plan.n_reduction_blocks(),
      [&](const unsigned int begin, const unsigned int end) {
        std::vector<Number> shared;
        for (unsigned int b = begin; b < end; ++b)
          {
            const unsigned int r     = plan.reduction_block_order.empty() ?
                                         b :
                                         plan.reduction_block_order[b];
            const std::size_t  first = plan.reduction_target_begin[r];
            const std::size_t  n_targets =
              plan.reduction_target_begin[r + 1] - first;
            shared.assign(n_targets, Number(0));
            for (unsigned int lane = 0; lane < T; ++lane)
              {
                const std::size_t slice =
                  static_cast<std::size_t>(r) * (T / 32) + lane / 32;
                const index_type *const array =
                  plan.reduction_array.data() +
                  plan.reduction_slice_offsets[slice];
                const std::size_t n_columns =
                  (plan.reduction_slice_offsets[slice + 1] -
                   plan.reduction_slice_offsets[slice]) /
                  32;
                Number sum = 0;
                for (std::size_t j = 0; j < n_columns; ++j)
                  {
                    const index_type i = array[j * 32 + lane % 32];
                    if (i > 0)
                      sum +=
                        element_data[plan.reduction_source_base[r] + i - 1];
                    else if (i < 0)
                      {
                        shared[-i - 1] = sum;
                        sum            = 0;
                      }
                  }
              }
            if (first >= plan.n_value_targets)
              std::copy(shared.begin(),
                        shared.end(),
                        rhs.data() + (first - plan.n_value_targets));
            else if (plan.parameters.symmetric)
              for (std::size_t i = 0; i < n_targets; ++i)
                {
                  values[plan.upper_position[first + i]] = shared[i];
                  if (const index_type m = plan.mirror_position[first + i];
                      m >= 0)
                    values[m] = shared[i];
                }
            else
              std::copy(shared.begin(), shared.end(), values.data() + first);
          }
      },
      8);
  }
} // namespace GPUAssembly

#endif
