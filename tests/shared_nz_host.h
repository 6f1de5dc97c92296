// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_shared_nz_host_h
#define gpu_assembly_tests_shared_nz_host_h

#include <deal.II/base/parallel.h>

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/engine/assembly_options.h>
#include <gpu_assembly/engine/host/element_stage.h>
#include <gpu_assembly/engine/shared_nz/layout.h>
#include <gpu_assembly/engine/shared_nz/plan.h>

#include <algorithm>
#include <vector>

namespace GPUAssembly
{
  /**
   * SharedNZ executed on the host exactly as the device kernel executes it,
   * block by block: halo nodal data, the sink and the kept rows of
   * element data in a per-block "shared" buffer laid out as on the device,
   * then the packed reduction stream walked lane by lane straight into the
   * value array. It validates a plan without a GPU and is the method's host
   * version. A plan with node pairs stages S(e) of its elements and the
   * Dirichlet data of those with constraints, and computes their node pairs
   * in the reduction, as the device does; it needs a kernel with a
   * node-pair form that reads no nodal data.
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
    constexpr unsigned int         n_c  = Kernel::n_components;
    const unsigned int             n_en = plan.n_nodes_per_element;
    const unsigned int             n_ed = plan.n_dofs_per_element;
    const unsigned int             n_f  = plan.n_fields;
    const unsigned int             T    = plan.parameters.threads_per_block;
    const std::vector<Number>      supplemental(plan.block_supplemental.begin(),
                                           plan.block_supplemental.end());
    const HostElementStage<Number> stage(arrays, n_f, options);
    const ElementStageData<Number> &data = stage.data();
    constexpr bool has_node_pairs = SharedNZLayout::runs_node_pairs<Kernel>;
    AssertThrow(!plan.parameters.node_pairs || has_node_pairs,
                dealii::ExcMessage(SharedNZLayout::node_pairs_refused));
    values.assign(plan.n_nonzeros, Number(0));
    rhs.assign(plan.n_dofs, Number(0));

    dealii::parallel::apply_to_subranges(
      0u,
      plan.n_blocks,
      [&](const unsigned int begin, const unsigned int end) {
        std::vector<std::uint64_t> shared;
        for (unsigned int k = begin; k < end; ++k)
          {
            const std::size_t n_halo =
              plan.halo_offsets[k + 1] - plan.halo_offsets[k];
            const std::size_t  base   = plan.element_offsets[k];
            const unsigned int n_k    = plan.element_offsets[k + 1] - base;
            const unsigned int n_free = plan.n_free_elements[k];
            // 64-bit words, aligned as the device's shared memory.
            shared.assign((plan.shared_bytes(k, sizeof(Number)) + 7) / 8, 0);
            // The device's row buffer comes first; a host lane stores its
            // rows by itself.
            unsigned char *const bytes =
              reinterpret_cast<unsigned char *>(shared.data()) +
              SharedNZLayout::row_buffer_bytes(T, n_c, sizeof(Number));
            Number *const numbers = reinterpret_cast<Number *>(bytes);
            const auto    walk = [&](const auto &load, const auto &add_pair) {
              for (unsigned int lane = 0; lane < T; ++lane)
                {
                  const std::size_t slice =
                    std::size_t(k) * (T / 32) + lane / 32;
                  constexpr unsigned int chunk = SharedNZLayout::chunk;
                  const unsigned int n_chunks = (plan.slice_offsets[slice + 1] -
                                                 plan.slice_offsets[slice]) /
                                                (32 * chunk);
                  // With compact targets the lane reads the compact
                  // records alone, as the device does.
                  const bool        compact = plan.parameters.compact_targets;
                  const index_type *targets =
                    compact ? plan.compact_targets.data() +
                                plan.compact_target_offsets[slice] :
                                 plan.targets.data() + plan.target_offsets[slice];
                  const auto walk_with = [&](const auto &row_form) {
                    SharedNZLayout::walk_lane<Number, n_c>(
                      plan.sources.data() + plan.slice_offsets[slice] +
                        lane % 32 * chunk,
                      n_chunks,
                      32 * chunk,
                      lane % 32,
                      n_en,
                      n_ed,
                      load,
                      [&](const Number(&sum)[n_c][n_c],
                          const SharedNZLayout::RowClose row,
                          const unsigned int             l,
                          const unsigned int             first) {
                        SharedNZLayout::store_lane_block<n_c>(
                          sum,
                          row,
                          l,
                          [&](const unsigned int c1,
                              const unsigned int c2,
                              const unsigned int slot) {
                            return compact ?
                                        SharedNZLayout::compact_block_target(
                                       targets + first,
                                       c1,
                                       c2,
                                       slot,
                                       row,
                                       n_c) :
                                        targets[first +
                                             SharedNZLayout::block_target(c1,
                                                                          c2,
                                                                          slot,
                                                                          row,
                                                                          n_c)];
                          },
                          [&](const index_type target,
                              const Number     value,
                              const bool       add) {
                            values[target] =
                              add ? values[target] + value : value;
                          });
                      },
                      [&](const unsigned int i,
                          const Number       sum,
                          const bool         add) {
                        rhs[targets[i]] = add ? rhs[targets[i]] + sum : sum;
                      },
                      SharedNZLayout::HalvesAddedWhenStored(),
                      nullptr,
                      add_pair,
                      row_form);
                  };
                  if (compact)
                    walk_with(SharedNZLayout::CompactTargets{targets});
                  else
                    walk_with(SharedNZLayout::FullTargets());
                }
            };

            if (plan.parameters.node_pairs)
              {
                if constexpr (has_node_pairs)
                  {
                    const SharedNZLayout::NodePairRegions<Number> regions =
                      SharedNZLayout::node_pair_regions<Number>(
                        bytes,
                        n_k,
                        n_free,
                        plan.n_supplemental,
                        n_ed);
                    // The plan's layout of a block's S(e) is the shared
                    // one.
                    std::copy_n(supplemental.begin() +
                                  plan.supplemental_offsets[k],
                                n_k * plan.n_supplemental,
                                regions.staged);
                    for (unsigned int c = 0; c < n_k - n_free; ++c)
                      SharedNZLayout::stage_constraints<
                        dim,
                        ElementSpecialization::general,
                        n_c>(data,
                             plan.block_location.data() + base * n_ed + n_free +
                               c,
                             n_k,
                             c,
                             n_k - n_free,
                             regions);
                    walk(
                      [](const unsigned int) {
                        return Number(0);
                      },
                      SharedNZLayout::staged_node_pairs<
                        dim,
                        ElementSpecialization::general,
                        true>(kernel,
                              data,
                              regions,
                              n_k,
                              n_free,
                              n_en,
                              plan.n_supplemental));
                  }
                continue;
              }

            for (std::size_t i = 0; i < n_halo * n_f; ++i)
              numbers[i] =
                nodal_data[plan.halo_nodes[plan.halo_offsets[k] + i / n_f] *
                             n_f +
                           i % n_f];
            Number *const sink = numbers + n_halo * n_f;
            Number *const element_data =
              sink + SharedNZLayout::slot_size(n_c, n_ed);
            for (unsigned int j = 0; j < n_k; ++j)
              {
                const SharedNZLayout::OwnedRowsOutput<Number, n_c> output{
                  element_data,
                  sink,
                  plan.block_slots.data() + base * n_en + j,
                  n_k,
                  n_ed};
                compute_element<dim>(
                  kernel,
                  data,
                  supplemental.data() + base * plan.n_supplemental + j,
                  numbers,
                  plan.block_connectivity.data() + base * n_en + j,
                  n_k,
                  output,
                  plan.block_has_constraints[base + j] != 0,
                  plan.block_location.data() + base * n_ed + j);
              }
            walk(
              [&](const unsigned int i) {
                return element_data[i];
              },
              SharedNZLayout::NoNodePairs());
          }
      },
      4);
  }
} // namespace GPUAssembly

#endif
