// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/parallel.h>
#include <deal.II/base/thread_management.h>

#ifdef DEAL_II_WITH_TBB
#  include <tbb/parallel_sort.h>
#endif

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/element/element_views.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/global_nz/reduction_lists.h>
#include <gpu_assembly/engine/packing.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <numeric>

#include "../../base/first_touch.h"
#include "../shared_nz/node_graph.h"

namespace GPUAssembly
{
  namespace internal
  {
    namespace
    {
      /// S(e) of the element in slot (@p k, @p t) of @p plan into the
      /// plan's block_supplemental, from @p arrays.
      void
      copy_block_supplemental(GlobalNZPlan      &plan,
                              const MeshArrays  &arrays,
                              const unsigned int k,
                              const unsigned int t)
      {
        const unsigned int B = plan.parameters.elements_per_block;
        const unsigned int n = plan.n_supplemental;
        const std::size_t  e = plan.block_element[k * B + t];
        for (unsigned int i = 0; i < n; ++i)
          plan
            .block_supplemental[(static_cast<std::size_t>(k) * n + i) * B + t] =
            arrays.supplemental[e * n + i];
      }
    } // namespace
  }   // namespace internal



  namespace
  {
    // Spreads the low 21 bits of x so that two zero bits separate them.
    std::uint64_t
    spread_bits_3(std::uint64_t x)
    {
      x &= 0x1fffff;
      x = (x | x << 32) & 0x1f00000000ffffULL;
      x = (x | x << 16) & 0x1f0000ff0000ffULL;
      x = (x | x << 8) & 0x100f00f00f00f00fULL;
      x = (x | x << 4) & 0x10c30c30c30c30c3ULL;
      x = (x | x << 2) & 0x1249249249249249ULL;
      return x;
    }

    // Spreads the low 32 bits of x so that one zero bit separates them.
    std::uint64_t
    spread_bits_2(std::uint64_t x)
    {
      x &= 0xffffffffULL;
      x = (x | x << 16) & 0x0000ffff0000ffffULL;
      x = (x | x << 8) & 0x00ff00ff00ff00ffULL;
      x = (x | x << 4) & 0x0f0f0f0f0f0f0f0fULL;
      x = (x | x << 2) & 0x3333333333333333ULL;
      x = (x | x << 1) & 0x5555555555555555ULL;
      return x;
    }

    // Z-order keys of points in the bounding box of a mesh's nodes.
    class MortonKey
    {
    public:
      // The bounds of ranges of nodes are found in parallel and merged:
      // minima and maxima do not depend on the order of the merge.
      explicit MortonKey(const MeshArrays &arrays)
        : dim(arrays.dim)
        , lower(dim, std::numeric_limits<double>::max())
        , upper(dim, std::numeric_limits<double>::lowest())
      {
        std::mutex mutex;
        dealii::parallel::apply_to_subranges(
          0u,
          arrays.n_nodes,
          [&](const unsigned int begin, const unsigned int end) {
            std::vector<double> l(lower), u(upper);
            for (unsigned int n = begin; n < end; ++n)
              for (unsigned int k = 0; k < dim; ++k)
                {
                  l[k] = std::min(l[k], arrays.nodal_coordinates[n * dim + k]);
                  u[k] = std::max(u[k], arrays.nodal_coordinates[n * dim + k]);
                }
            const std::lock_guard<std::mutex> lock(mutex);
            for (unsigned int k = 0; k < dim; ++k)
              {
                lower[k] = std::min(lower[k], l[k]);
                upper[k] = std::max(upper[k], u[k]);
              }
          },
          1 << 14);
      }

      /// The key of the point whose coordinate k is coordinate(k).
      template <class Coordinate>
      std::uint64_t
      operator()(const Coordinate &coordinate) const
      {
        const double  bits = dim == 3 ? 2097151. : 4294967295.;
        std::uint64_t code = 0;
        for (unsigned int k = 0; k < dim; ++k)
          {
            const double extent = upper[k] - lower[k];
            const auto   scaled = static_cast<std::uint64_t>(
              extent > 0 ? (coordinate(k) - lower[k]) / extent * bits : 0.);
            code |= (dim == 3 ? spread_bits_3(scaled) : spread_bits_2(scaled))
                    << k;
          }
        return code;
      }

    private:
      unsigned int        dim;
      std::vector<double> lower, upper;
    };



    // The targets of symmetric element data: one per pair of transposed
    // nonzeros, numbered in row order of its upper member (a nonzero below
    // the diagonal whose transpose exists is summed from there). Rows are
    // taken in fixed chunks: each chunk lists its targets in parallel, and
    // the lists are numbered and concatenated in chunk order, so the
    // numbering is that of a serial sweep over the rows whatever the
    // threads.
    template <class PositionOf>
    void
    build_symmetric_targets(const MeshArrays        &arrays,
                            const PositionOf        &position_of,
                            std::vector<index_type> &target_of_position,
                            std::vector<index_type> &upper_position,
                            std::vector<index_type> &mirror_position)
    {
      constexpr unsigned int chunk    = 4096;
      const unsigned int     n_rows   = arrays.n_dofs;
      const unsigned int     n_chunks = (n_rows + chunk - 1) / chunk;
      // (position, position of the transpose or -1) of each chunk's targets.
      std::vector<std::vector<std::pair<index_type, index_type>>> targets(
        n_chunks);
      dealii::parallel::apply_to_subranges(
        0u,
        n_chunks,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int c = begin; c < end; ++c)
            for (unsigned int row = c * chunk;
                 row < std::min(n_rows, (c + 1) * chunk);
                 ++row)
              for (index_type p = arrays.row_offsets[row];
                   p < arrays.row_offsets[row + 1];
                   ++p)
                {
                  const index_type column = arrays.column_indices[p];
                  const index_type mirror =
                    column == static_cast<index_type>(row) ?
                      -1 :
                      position_of(column, row);
                  // Below the diagonal with a transpose: summed from there.
                  if (column < static_cast<index_type>(row) && mirror >= 0)
                    continue;
                  targets[c].emplace_back(p, mirror);
                }
        },
        1);
      std::vector<std::size_t> chunk_start(n_chunks + 1, 0);
      for (unsigned int c = 0; c < n_chunks; ++c)
        chunk_start[c + 1] = chunk_start[c] + targets[c].size();
      upper_position.resize(chunk_start.back());
      mirror_position.resize(chunk_start.back());
      dealii::parallel::apply_to_subranges(
        0u,
        n_chunks,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int c = begin; c < end; ++c)
            {
              std::size_t target = chunk_start[c];
              for (const auto &[p, mirror] : targets[c])
                {
                  target_of_position[p]   = target;
                  upper_position[target]  = p;
                  mirror_position[target] = mirror;
                  ++target;
                }
              std::vector<std::pair<index_type, index_type>>().swap(targets[c]);
            }
        },
        1);
    }
  } // namespace



  std::vector<index_type>
  morton_element_order(const MeshArrays &arrays)
  {
    const unsigned int dim     = arrays.dim;
    const unsigned int n_nodes = arrays.layout.n_nodes;
    const MortonKey    morton(arrays);
    std::vector<std::pair<std::uint64_t, index_type>> keys(arrays.n_elements);
    dealii::parallel::apply_to_subranges(
      0u,
      arrays.n_elements,
      [&](const unsigned int begin, const unsigned int end) {
        for (unsigned int e = begin; e < end; ++e)
          keys[e] = {
            morton([&](const unsigned int k) {
              double centroid = 0;
              for (unsigned int a = 0; a < n_nodes; ++a)
                centroid +=
                  arrays.nodal_coordinates
                    [arrays.connectivity[static_cast<std::size_t>(e) * n_nodes +
                                         a] *
                       dim +
                     k];
              return centroid / n_nodes;
            }),
            static_cast<index_type>(e)};
      },
      4096);
    // The pairs are distinct (the element number breaks ties), so any
    // correct sort, a parallel one too, gives the same order.
#ifdef DEAL_II_WITH_TBB
    tbb::parallel_sort(keys.begin(), keys.end());
#else
    std::sort(keys.begin(), keys.end());
#endif
    std::vector<index_type> order(arrays.n_elements);
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      order[e] = keys[e].second;
    return order;
  }



  namespace
  {
    // row_element_order() with the elements of every node at hand.
    std::vector<index_type>
    row_element_order(const MeshArrays              &arrays,
                      const internal::SharedNZ::Csr &node_elements)
    {
      // The elements of smallest node k are those of k's (increasing)
      // list whose smallest node is k: taken node by node, they give the
      // order of sorting (smallest node, element) pairs. Ranges of nodes
      // count their elements, then place them, in parallel.
      const unsigned int n_nodes          = arrays.layout.n_nodes;
      const auto         smallest_node_is = [&](const std::size_t e,
                                        const index_type  node) {
        const auto first = arrays.connectivity.begin() + e * n_nodes;
        return *std::min_element(first, first + n_nodes) == node;
      };
      std::vector<std::size_t> start(arrays.n_nodes + 1, 0);
      const auto               for_each_node = [&](const auto &action) {
        dealii::parallel::apply_to_subranges(
          0u,
          arrays.n_nodes,
          [&](const unsigned int begin, const unsigned int end) {
            for (unsigned int node = begin; node < end; ++node)
              for (std::size_t i = node_elements.offsets[node];
                   i < node_elements.offsets[node + 1];
                   ++i)
                if (const index_type e = node_elements.entries[i];
                    smallest_node_is(e, node))
                  action(node, e);
          },
          4096);
      };
      for_each_node([&](const unsigned int node, const index_type) {
        ++start[node + 1];
      });
      std::partial_sum(start.begin(), start.end(), start.begin());
      std::vector<index_type> order(arrays.n_elements);
      for_each_node([&](const unsigned int node, const index_type e) {
        order[start[node]++] = e;
      });
      return order;
    }
  } // namespace



  std::vector<index_type>
  row_element_order(const MeshArrays &arrays)
  {
    return row_element_order(arrays,
                             internal::SharedNZ::node_to_elements(arrays));
  }



  std::size_t
  GlobalNZPlan::memory_consumption() const
  {
    return (block_element.size() + cluster_node_offsets.size() +
            cluster_nodes.size() + block_connectivity.size() +
            block_location.size() + reduction_target_begin.size() +
            reduction_array.size() + upper_position.size() +
            mirror_position.size() + reduction_block_order.size()) *
             sizeof(index_type) +
           block_supplemental.size() * sizeof(double) +
           block_has_constraints.size() +
           (reduction_slice_offsets.size() + reduction_source_base.size()) *
             sizeof(std::size_t);
  }



  void
  GlobalNZPlan::reinit(const MeshArrays              &arrays,
                       const Parameters              &new_parameters,
                       const unsigned int             n_fields,
                       const std::size_t              number_size,
                       const std::size_t              shared_memory_limit,
                       internal::ReductionListSource *device_lists)
  {
    SetupTimes::Steps steps("GlobalNZ plan");
    parameters = new_parameters;
    if (parameters.reduction_order == ReductionOrder::automatic)
      {
        const std::size_t n_matrix =
          parameters.symmetric ?
            arrays.layout.n_dofs * (arrays.layout.n_dofs + 1) / 2 :
            arrays.layout.n_dofs * arrays.layout.n_dofs;
        const double element_data_bytes = double(arrays.n_elements) *
                                          (n_matrix + arrays.layout.n_dofs) *
                                          number_size;
        parameters.reduction_order = element_data_bytes > 1.5e9 ?
                                       ReductionOrder::morton :
                                       ReductionOrder::rows;
      }
    if (parameters.targets_per_block == 0)
      parameters.targets_per_block =
        parameters.reduction_order == ReductionOrder::morton ?
          (parameters.symmetric ? 256 : 384) :
          512;
    const unsigned int B = parameters.elements_per_block;
    const unsigned int T = parameters.reduction_threads;
    const unsigned int R = parameters.targets_per_block;
    AssertThrow(B >= 32 && B <= 1024 && B % 32 == 0 && T >= 32 && T <= 1024 &&
                  T % 32 == 0 && R > 0,
                dealii::ExcMessage(
                  "GlobalNZ: elements per block and reduction threads must "
                  "be multiples of 32 between 32 and 1024, and targets per "
                  "block positive."));
    AssertThrow(static_cast<std::size_t>(R) * number_size <=
                  shared_memory_limit,
                ExcUnsupportedInput(
                  "GlobalNZ: " + std::to_string(R) +
                  " targets per reduction block do not fit in the device's " +
                  std::to_string(shared_memory_limit) +
                  " bytes of shared memory per block."));

    n_nodes_per_element = arrays.layout.n_nodes;
    n_dofs_per_element  = arrays.layout.n_dofs;
    n_supplemental      = arrays.n_supplemental;
    n_matrix_entries    = parameters.symmetric ?
                            n_dofs_per_element * (n_dofs_per_element + 1) / 2 :
                            n_dofs_per_element * n_dofs_per_element;
    n_entries           = n_matrix_entries + n_dofs_per_element;
    // Grouping pays where the element data outgrow the L2 cache, the same
    // regime as the Z-order; on small meshes its cost to the element kernel
    // outweighs what it saves the reduction.
    entry_group      = !parameters.symmetric &&
                      parameters.reduction_order == ReductionOrder::morton ?
                         arrays.layout.n_components :
                         1;
    n_nonzeros       = arrays.n_nonzeros();
    n_dofs           = arrays.n_dofs;
    n_element_blocks = (arrays.n_elements + B - 1) / B;
    AssertThrow(n_nonzeros + n_dofs < static_cast<std::size_t>(
                                        std::numeric_limits<index_type>::max()),
                ExcUnsupportedInput("GlobalNZ: too many nonzeros for 32-bit "
                                    "target indices."));
    const unsigned int n_en = n_nodes_per_element;
    const unsigned int n_ed = n_dofs_per_element;

    // The elements of every node, in increasing order: the row order of
    // the elements and the reduction lists walk them.
    steps.next("node elements");
    internal::SharedNZ::Csr node_elements =
      internal::SharedNZ::node_to_elements(arrays);

    // Element clusters, and the slot of each element.
    steps.next("element order");
    const std::vector<index_type> order =
      parameters.element_order == ElementOrder::morton ?
        morton_element_order(arrays) :
        row_element_order(arrays, node_elements);
    internal::assign_first_touched_in_parallel(
      block_element,
      static_cast<std::size_t>(n_element_blocks) * B,
      -1);
    std::vector<index_type> slot_of(arrays.n_elements);
    dealii::parallel::apply_to_subranges(
      0u,
      arrays.n_elements,
      [&](const unsigned int begin, const unsigned int end) {
        for (unsigned int s = begin; s < end; ++s)
          {
            block_element[s]  = order[s];
            slot_of[order[s]] = s;
          }
      },
      4096);

    // The block element arrays are sized by tasks while the clusters are
    // found: sizing zero-fills an array on one thread (after the first touch
    // of its pages in parallel), and so the four overlap each other and the
    // parallel work.
    // The tasks are waited for before the arrays are filled, and, also on
    // an exception, before this function returns.
    dealii::Threads::TaskGroup<void> size_block_arrays;
    size_block_arrays += dealii::Threads::new_task([&]() {
      internal::assign_first_touched_in_parallel(
        block_connectivity,
        static_cast<std::size_t>(n_element_blocks) * n_en * B);
    });
    // S(e) in the block layout is most of the plan's bytes: a build on the
    // device gathers it there from the mesh arrays' copy instead.
    const bool supplemental_here = device_lists == nullptr;
    block_supplemental.clear();
    if (supplemental_here)
      size_block_arrays += dealii::Threads::new_task([&]() {
        internal::assign_first_touched_in_parallel(
          block_supplemental,
          static_cast<std::size_t>(n_element_blocks) * n_supplemental * B);
      });
    size_block_arrays += dealii::Threads::new_task([&]() {
      internal::assign_first_touched_in_parallel(
        block_location,
        static_cast<std::size_t>(n_element_blocks) * n_ed * B);
    });
    size_block_arrays += dealii::Threads::new_task([&]() {
      block_has_constraints.assign(static_cast<std::size_t>(n_element_blocks) *
                                     B,
                                   0);
    });

    steps.next("clusters");
    // N_k of every cluster, found once in parallel, then concatenated in
    // parallel while the block element matrices are filled.
    std::vector<std::vector<index_type>> cluster(n_element_blocks);
    cluster_node_offsets.assign(n_element_blocks + 1, 0);
    dealii::parallel::apply_to_subranges(
      0u,
      n_element_blocks,
      [&](const unsigned int begin, const unsigned int end) {
        for (unsigned int k = begin; k < end; ++k)
          {
            std::vector<index_type> &nodes = cluster[k];
            for (unsigned int t = 0; t < B; ++t)
              if (const index_type e = block_element[k * B + t]; e >= 0)
                nodes.insert(nodes.end(),
                             arrays.connectivity.begin() +
                               static_cast<std::size_t>(e) * n_en,
                             arrays.connectivity.begin() +
                               static_cast<std::size_t>(e + 1) * n_en);
            std::sort(nodes.begin(), nodes.end());
            nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
            cluster_node_offsets[k + 1] = nodes.size();
          }
      },
      64);
    max_cluster_nodes = *std::max_element(cluster_node_offsets.begin(),
                                          cluster_node_offsets.end());
    std::partial_sum(cluster_node_offsets.begin(),
                     cluster_node_offsets.end(),
                     cluster_node_offsets.begin());
    AssertThrow(static_cast<std::size_t>(max_cluster_nodes) * n_fields *
                    number_size <=
                  shared_memory_limit,
                ExcUnsupportedInput(
                  "GlobalNZ: the nodal data of a cluster of " +
                  std::to_string(B) + " elements (" +
                  std::to_string(max_cluster_nodes) +
                  " nodes) does not fit "
                  "in the device's shared memory; use fewer elements per "
                  "block."));
    cluster_nodes.resize(cluster_node_offsets.back());
    steps.next("block array sizing (wait)");
    size_block_arrays.join_all();
    steps.next("block arrays");
    dealii::parallel::apply_to_subranges(
      0u,
      n_element_blocks,
      [&](const unsigned int begin, const unsigned int end) {
        for (unsigned int k = begin; k < end; ++k)
          {
            const std::vector<index_type> nodes = std::move(cluster[k]);
            std::copy(nodes.begin(),
                      nodes.end(),
                      cluster_nodes.begin() + cluster_node_offsets[k]);
            for (unsigned int t = 0; t < B; ++t)
              {
                const index_type e = block_element[k * B + t];
                if (e < 0)
                  continue;
                const std::size_t element = e;
                for (unsigned int a = 0; a < n_en; ++a)
                  block_connectivity[(static_cast<std::size_t>(k) * n_en + a) *
                                       B +
                                     t] =
                    std::lower_bound(nodes.begin(),
                                     nodes.end(),
                                     arrays.connectivity[element * n_en + a]) -
                    nodes.begin();
                if (supplemental_here)
                  internal::copy_block_supplemental(*this, arrays, k, t);
                for (unsigned int d = 0; d < n_ed; ++d)
                  {
                    const index_type dof = arrays.location[element * n_ed + d];
                    block_location[(static_cast<std::size_t>(k) * n_ed + d) *
                                     B +
                                   t]    = dof;
                    if (arrays.dof_is_constrained[dof])
                      block_has_constraints[k * B + t] = 1;
                  }
              }
          }
      },
      64);

    // Symmetric element data: one matrix target per pair of transposed
    // nonzeros, numbered in row order of its upper member.
    // target_of_position[p] is the target nonzero p is summed into from its
    // own row, or -1 where its transpose's row sums it.
    steps.next("symmetric targets");
    std::vector<index_type> target_of_position;
    upper_position.clear();
    mirror_position.clear();
    if (parameters.symmetric)
      {
        const auto position_of = [&](const index_type row,
                                     const index_type column) -> index_type {
          const auto begin =
            arrays.column_indices.begin() + arrays.row_offsets[row];
          const auto end =
            arrays.column_indices.begin() + arrays.row_offsets[row + 1];
          const auto it = std::lower_bound(begin, end, column);
          return it != end && *it == column ?
                   static_cast<index_type>(it - arrays.column_indices.begin()) :
                   -1;
        };
        std::atomic<bool> rows_sorted(true);
        dealii::parallel::apply_to_subranges(
          0u,
          n_dofs,
          [&](const unsigned int begin, const unsigned int end) {
            for (unsigned int row = begin; row < end; ++row)
              if (!std::is_sorted(arrays.column_indices.begin() +
                                    arrays.row_offsets[row],
                                  arrays.column_indices.begin() +
                                    arrays.row_offsets[row + 1]))
                rows_sorted.store(false, std::memory_order_relaxed);
          },
          4096);
        AssertThrow(rows_sorted.load(),
                    ExcUnsupportedInput(
                      "GlobalNZ: symmetric element data need the column "
                      "indices of each row sorted."));
        internal::assign_first_touched_in_parallel(target_of_position,
                                                   n_nonzeros,
                                                   -1);
        build_symmetric_targets(arrays,
                                position_of,
                                target_of_position,
                                upper_position,
                                mirror_position);
        n_value_targets = upper_position.size();
      }
    else
      n_value_targets = n_nonzeros;

    // The row of matrix target t: that of its nonzero (with symmetric data,
    // of the pair's upper member).
    const auto row_of_target = [&](const std::size_t t) {
      const index_type p =
        parameters.symmetric ? upper_position[t] : static_cast<index_type>(t);
      return static_cast<index_type>(
        std::upper_bound(arrays.row_offsets.begin(),
                         arrays.row_offsets.end(),
                         p) -
        arrays.row_offsets.begin() - 1);
    };

    // Reduction blocks: runs of at most R targets of the combined index
    // space (matrix targets, then right-hand-side entries), split where
    // the matrix targets end and the right-hand side begins.
    steps.next("reduction blocks");
    const std::size_t n_targets = n_value_targets + n_dofs;
    reduction_target_begin.clear();
    for (std::size_t p = 0; p < n_value_targets; p += R)
      reduction_target_begin.push_back(p);
    for (std::size_t p = n_value_targets; p < n_targets; p += R)
      reduction_target_begin.push_back(p);
    reduction_target_begin.push_back(n_targets);
    const unsigned int n_blocks = n_reduction_blocks();

    // The node of each DoF and its component there. A DoF belongs to one
    // node: nodes write their DoFs' entries in parallel.
    internal::ReductionListSource source;
    const unsigned int            n_c = arrays.layout.n_components;
    source.node_of_dof.assign(n_dofs, invalid_index);
    source.component_of_dof.resize(n_dofs);
    dealii::parallel::apply_to_subranges(
      0u,
      arrays.n_nodes,
      [&](const unsigned int begin, const unsigned int end) {
        for (unsigned int n = begin; n < end; ++n)
          for (unsigned int c = 0; c < n_c; ++c)
            {
              const index_type dof =
                arrays.node_dofs[static_cast<std::size_t>(n) * n_c + c];
              source.node_of_dof[dof]      = n;
              source.component_of_dof[dof] = c;
            }
      },
      4096);

    steps.next("block order");
    reduction_block_order.clear();
    if (parameters.reduction_order == ReductionOrder::morton)
      {
        // Each block by the node of its first row (matrix targets: the row
        // of the first target's nonzero; right-hand side: its DoF).
        const MortonKey                                   morton(arrays);
        std::vector<std::pair<std::uint64_t, index_type>> keys(n_blocks);
        dealii::parallel::apply_to_subranges(
          0u,
          n_blocks,
          [&](const unsigned int begin, const unsigned int end) {
            for (unsigned int r = begin; r < end; ++r)
              {
                const std::size_t first = reduction_target_begin[r];
                const index_type  row =
                  first >= n_value_targets ?
                     static_cast<index_type>(first - n_value_targets) :
                     row_of_target(first);
                // A row on no node sorts with the first node.
                const index_type node =
                  std::max<index_type>(source.node_of_dof[row], 0);
                keys[r] = {
                  morton([&](const unsigned int k) {
                    return arrays.nodal_coordinates
                      [static_cast<std::size_t>(node) * arrays.dim + k];
                  }),
                  static_cast<index_type>(r)};
              }
          },
          4096);
        // Distinct pairs (the block number breaks ties): any correct
        // sort gives the same order.
#ifdef DEAL_II_WITH_TBB
        tbb::parallel_sort(keys.begin(), keys.end());
#else
        std::sort(keys.begin(), keys.end());
#endif
        reduction_block_order.resize(n_blocks);
        for (unsigned int b = 0; b < n_blocks; ++b)
          reduction_block_order[b] = keys[b].second;
      }

    source.slot_of              = std::move(slot_of);
    source.node_element_offsets = std::move(node_elements.offsets);
    source.node_elements        = std::move(node_elements.entries);
    source.target_of_position   = std::move(target_of_position);
    for (unsigned int n = 0; n < arrays.n_nodes; ++n)
      source.max_list_length =
        std::max<unsigned int>(source.max_list_length,
                               source.node_element_offsets[n + 1] -
                                 source.node_element_offsets[n]);
    // A list holds a source per element of its row's node, and its target.
    ++source.max_list_length;
    AssertThrow(source.max_list_length <=
                  std::numeric_limits<internal::ReductionListLength>::max(),
                ExcUnsupportedInput(
                  "GlobalNZ: a node of the mesh belongs to " +
                  std::to_string(source.max_list_length - 1) +
                  " elements, more than a reduction list can hold."));
    reduction_slice_offsets.clear();
    reduction_source_base.clear();
    reduction_array.clear();
    n_reduction_entries        = 0;
    reduction_arrays_on_device = false;
    if (device_lists != nullptr)
      *device_lists = std::move(source);
    else
      internal::build_reduction_arrays_on_host(*this, arrays, source, steps);
  }



  namespace internal
  {
    void
    fill_block_supplemental(GlobalNZPlan &plan, const MeshArrays &arrays)
    {
      const unsigned int B = plan.parameters.elements_per_block;
      assign_first_touched_in_parallel(plan.block_supplemental,
                                       static_cast<std::size_t>(
                                         plan.n_element_blocks) *
                                         plan.n_supplemental * B);
      dealii::parallel::apply_to_subranges(
        0u,
        plan.n_element_blocks,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int k = begin; k < end; ++k)
            for (unsigned int t = 0; t < B; ++t)
              if (plan.block_element[k * B + t] >= 0)
                copy_block_supplemental(plan, arrays, k, t);
        },
        64);
    }



    ReductionListInput
    host_reduction_list_input(const GlobalNZPlan        &plan,
                              const MeshArrays          &arrays,
                              const ReductionListSource &source,
                              const bool                 use_nonzero_map)
    {
      ReductionListInput in;
      in.n_value_targets      = plan.n_value_targets;
      in.n_dofs               = plan.n_dofs;
      in.n_element_nodes      = plan.n_nodes_per_element;
      in.n_element_dofs       = plan.n_dofs_per_element;
      in.n_components         = arrays.layout.n_components;
      in.elements_per_block   = plan.parameters.elements_per_block;
      in.n_entries            = plan.n_entries;
      in.n_matrix_entries     = plan.n_matrix_entries;
      in.entry_group          = plan.entry_group;
      in.n_lanes              = plan.parameters.reduction_threads;
      in.symmetric            = plan.parameters.symmetric;
      in.target_begin         = plan.reduction_target_begin.data();
      in.row_offsets          = arrays.row_offsets.data();
      in.column_indices       = arrays.column_indices.data();
      in.upper_position       = plan.upper_position.data();
      in.target_of_position   = source.target_of_position.data();
      in.node_of_dof          = source.node_of_dof.data();
      in.component_of_dof     = source.component_of_dof.data();
      in.node_element_offsets = source.node_element_offsets.data();
      in.node_elements        = source.node_elements.data();
      in.connectivity         = arrays.connectivity.data();
      in.slot_of              = source.slot_of.data();
      in.block_location       = plan.block_location.data();
      in.nonzero_map = use_nonzero_map ? arrays.nonzero_map.data() : nullptr;
      in.pattern.keep_constrained_dofs = arrays.keep_constrained_dofs;
      in.pattern.dof_is_constrained    = arrays.dof_is_constrained.data();
      return in;
    }



    void
    check_reduction_source_span(const unsigned int r,
                                const std::size_t  low,
                                const std::size_t  high)
    {
      AssertThrow(
        high - low < max_reduction_source_span,
        ExcUnsupportedInput(
          "GlobalNZ: reduction block " + std::to_string(r) +
          " reads element data " + std::to_string(low) + " to " +
          std::to_string(high) +
          ", more than its 32-bit entries can span; number the elements so "
          "that those sharing a node are near each other (ElementOrder::rows "
          "does)."));
    }



    void
    build_reduction_arrays_on_host(GlobalNZPlan              &plan,
                                   const MeshArrays          &arrays,
                                   const ReductionListSource &source,
                                   SetupTimes::Steps         &steps)
    {
      // Each block's contributions are found once and stored, then counted,
      // packed and written from there into a buffer of the block's own;
      // the buffers are concatenated in block order. Finding them is the
      // costly part, which the device's two passes pay twice to keep no
      // buffers.
      steps.next("reduction lists");
      const ReductionListInput in =
        host_reduction_list_input(plan, arrays, source, true);
      const unsigned int n_blocks = plan.n_reduction_blocks();
      const unsigned int T        = plan.parameters.reduction_threads;
      const unsigned int W        = T / reduction_slice_width;
      const unsigned int R        = plan.parameters.targets_per_block;
      const std::size_t  words =
        reduction_scratch_words(R, T, source.max_list_length);
      plan.reduction_slice_offsets.assign(std::size_t(n_blocks) * W + 1, 0);
      plan.reduction_source_base.assign(n_blocks, 0);
      std::vector<std::size_t>             block_start(n_blocks + 1, 0);
      std::vector<std::vector<index_type>> packed(n_blocks);
      // The first block whose sources span too far, if any, and its span.
      std::mutex   mutex;
      unsigned int wide_block = n_blocks;
      std::size_t  wide_low = 0, wide_high = 0;
      dealii::parallel::apply_to_subranges(
        0u,
        n_blocks,
        [&](const unsigned int begin, const unsigned int end) {
          std::vector<std::uint64_t>         memory(words);
          std::vector<ReductionContribution> contributions;
          std::vector<index_type>            lists;
          const ReductionBlockScratch        scratch =
            make_reduction_scratch(memory.data(), R, T, source.max_list_length);
          const auto collect = [&](const std::size_t p,
                                   const std::size_t element_data) {
            contributions.push_back({p, element_data});
          };
          for (unsigned int r = begin; r < end; ++r)
            {
              contributions.clear();
              for_each_reduction_contribution(in, r, collect);
              const StoredContributions stored{contributions.data(),
                                               contributions.size()};
              std::size_t               low = 0, high = 0;
              const std::size_t         size =
                reduction_block_layout(in,
                                       r,
                                       stored,
                                       scratch,
                                       plan.reduction_slice_offsets.data() +
                                         std::size_t(r) * W + 1,
                                       low,
                                       high,
                                       nullptr);
              block_start[r + 1]            = size;
              plan.reduction_source_base[r] = low;
              if (high - low >= max_reduction_source_span)
                {
                  const std::lock_guard<std::mutex> lock(mutex);
                  if (r < wide_block)
                    {
                      wide_block = r;
                      wide_low   = low;
                      wide_high  = high;
                    }
                  continue;
                }
              lists.resize(scratch.list_offsets[in.target_begin[r + 1] -
                                                in.target_begin[r]]);
              packed[r].resize(size);
              write_reduction_block(in,
                                    r,
                                    stored,
                                    low,
                                    scratch,
                                    lists.data(),
                                    packed[r].data());
            }
        },
        16);
      if (wide_block < n_blocks)
        check_reduction_source_span(wide_block, wide_low, wide_high);

      steps.next("reduction array");
      std::partial_sum(block_start.begin(),
                       block_start.end(),
                       block_start.begin());
      plan.n_reduction_entries = block_start.back();
      assign_first_touched_in_parallel(plan.reduction_array,
                                       block_start.back());
      dealii::parallel::apply_to_subranges(
        0u,
        n_blocks,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int r = begin; r < end; ++r)
            {
              for (unsigned int w = 0; w < W; ++w)
                plan.reduction_slice_offsets[std::size_t(r) * W + w + 1] +=
                  block_start[r];
              std::copy(packed[r].begin(),
                        packed[r].end(),
                        plan.reduction_array.begin() + block_start[r]);
              std::vector<index_type>().swap(packed[r]);
            }
        },
        64);
    }
  } // namespace internal
} // namespace GPUAssembly
