#include <deal.II/base/parallel.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/global_nz_plan.h>
#include <gpu_assembly/engine/packing.h>
#include <gpu_assembly/kernels/element_views.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

namespace GPUAssembly
{
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
  } // namespace



  std::vector<index_type>
  morton_element_order(const MeshArrays &arrays)
  {
    const unsigned int  dim     = arrays.dim;
    const unsigned int  n_nodes = arrays.layout.n_nodes;
    std::vector<double> lower(dim, std::numeric_limits<double>::max());
    std::vector<double> upper(dim, std::numeric_limits<double>::lowest());
    for (unsigned int n = 0; n < arrays.n_nodes; ++n)
      for (unsigned int k = 0; k < dim; ++k)
        {
          lower[k] = std::min(lower[k], arrays.nodal_coordinates[n * dim + k]);
          upper[k] = std::max(upper[k], arrays.nodal_coordinates[n * dim + k]);
        }

    const double bits = dim == 3 ? 2097151. : 4294967295.;
    std::vector<std::pair<std::uint64_t, index_type>> keys(arrays.n_elements);
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      {
        std::uint64_t code = 0;
        for (unsigned int k = 0; k < dim; ++k)
          {
            double centroid = 0;
            for (unsigned int a = 0; a < n_nodes; ++a)
              centroid +=
                arrays.nodal_coordinates
                  [arrays.connectivity[static_cast<std::size_t>(e) * n_nodes +
                                       a] *
                     dim +
                   k];
            centroid /= n_nodes;
            const double extent = upper[k] - lower[k];
            const auto   scaled = static_cast<std::uint64_t>(
              extent > 0 ? (centroid - lower[k]) / extent * bits : 0.);
            code |= (dim == 3 ? spread_bits_3(scaled) : spread_bits_2(scaled))
                    << k;
          }
        keys[e] = {code, static_cast<index_type>(e)};
      }
    std::sort(keys.begin(), keys.end());
    std::vector<index_type> order(arrays.n_elements);
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      order[e] = keys[e].second;
    return order;
  }



  std::vector<index_type>
  row_element_order(const MeshArrays &arrays)
  {
    const unsigned int n_nodes = arrays.layout.n_nodes;
    std::vector<std::pair<index_type, index_type>> keys(arrays.n_elements);
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      {
        const auto first =
          arrays.connectivity.begin() + static_cast<std::size_t>(e) * n_nodes;
        keys[e] = {*std::min_element(first, first + n_nodes),
                   static_cast<index_type>(e)};
      }
    std::sort(keys.begin(), keys.end());
    std::vector<index_type> order(arrays.n_elements);
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      order[e] = keys[e].second;
    return order;
  }



  std::size_t
  GlobalNZPlan::memory_consumption() const
  {
    return (block_element.size() + cluster_node_offsets.size() +
            cluster_nodes.size() + block_connectivity.size() +
            block_location.size() + reduction_target_begin.size() +
            reduction_array.size()) *
             sizeof(index_type) +
           block_supplemental.size() * sizeof(double) +
           block_has_constraints.size() +
           reduction_offsets.size() * sizeof(std::size_t);
  }



  void
  GlobalNZPlan::reinit(const MeshArrays  &arrays,
                       const Parameters  &new_parameters,
                       const unsigned int n_fields,
                       const std::size_t  number_size,
                       const std::size_t  shared_memory_limit)
  {
    parameters           = new_parameters;
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
    n_nonzeros          = arrays.n_nonzeros();
    n_dofs              = arrays.n_dofs;
    n_element_blocks    = (arrays.n_elements + B - 1) / B;
    AssertThrow(element_data_size() < static_cast<std::size_t>(
                                        std::numeric_limits<index_type>::max()),
                ExcUnsupportedInput(
                  "GlobalNZ: " + std::to_string(element_data_size()) +
                  " element data values exceed what 32-bit reduction "
                  "indices can address; use SharedNZ or a smaller mesh."));

    AssertThrow(n_nonzeros + n_dofs < static_cast<std::size_t>(
                                        std::numeric_limits<index_type>::max()),
                ExcUnsupportedInput("GlobalNZ: too many nonzeros for 32-bit "
                                    "target indices."));
    const unsigned int n_en = n_nodes_per_element;
    const unsigned int n_ed = n_dofs_per_element;

    // Element clusters.
    const std::vector<index_type> order =
      parameters.element_order == ElementOrder::morton ?
        morton_element_order(arrays) :
        row_element_order(arrays);
    block_element.assign(static_cast<std::size_t>(n_element_blocks) * B, -1);
    std::copy(order.begin(), order.end(), block_element.begin());

    block_connectivity.assign(static_cast<std::size_t>(n_element_blocks) *
                                n_en * B,
                              0);
    block_supplemental.assign(static_cast<std::size_t>(n_element_blocks) *
                                n_supplemental * B,
                              0.);
    block_location.assign(static_cast<std::size_t>(n_element_blocks) * n_ed * B,
                          0);
    block_has_constraints.assign(static_cast<std::size_t>(n_element_blocks) * B,
                                 0);
    cluster_node_offsets.assign(n_element_blocks + 1, 0);
    cluster_nodes.clear();
    max_cluster_nodes = 0;

    std::vector<index_type> nodes;
    for (unsigned int k = 0; k < n_element_blocks; ++k)
      {
        nodes.clear();
        for (unsigned int t = 0; t < B; ++t)
          if (const index_type e = block_element[k * B + t]; e >= 0)
            nodes.insert(nodes.end(),
                         arrays.connectivity.begin() +
                           static_cast<std::size_t>(e) * n_en,
                         arrays.connectivity.begin() +
                           static_cast<std::size_t>(e + 1) * n_en);
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        cluster_nodes.insert(cluster_nodes.end(), nodes.begin(), nodes.end());
        cluster_node_offsets[k + 1] = cluster_nodes.size();
        max_cluster_nodes =
          std::max<unsigned int>(max_cluster_nodes, nodes.size());

        for (unsigned int t = 0; t < B; ++t)
          {
            const index_type e = block_element[k * B + t];
            if (e < 0)
              continue;
            const std::size_t element = e;
            for (unsigned int a = 0; a < n_en; ++a)
              block_connectivity[(static_cast<std::size_t>(k) * n_en + a) * B +
                                 t] =
                std::lower_bound(nodes.begin(),
                                 nodes.end(),
                                 arrays.connectivity[element * n_en + a]) -
                nodes.begin();
            for (unsigned int i = 0; i < n_supplemental; ++i)
              block_supplemental
                [(static_cast<std::size_t>(k) * n_supplemental + i) * B + t] =
                  arrays.supplemental[element * n_supplemental + i];
            for (unsigned int d = 0; d < n_ed; ++d)
              {
                const index_type dof = arrays.location[element * n_ed + d];
                block_location[(static_cast<std::size_t>(k) * n_ed + d) * B +
                               t]    = dof;
                if (arrays.dof_is_constrained[dof])
                  block_has_constraints[k * B + t] = 1;
              }
          }
      }
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

    // Reduction lists of every target, in CSR form: count, fill, then sort
    // each list. The passes run in parallel over the clusters; sorting the
    // (short) lists makes their order, and so every sum, independent of the
    // threads' schedule.
    const std::size_t       n_targets = n_nonzeros + n_dofs;
    std::vector<index_type> list_counts(n_targets + 1, 0);
    const auto              for_each_contribution = [&](const auto &action) {
      dealii::parallel::apply_to_subranges(
        0u,
        n_element_blocks,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int k = begin; k < end; ++k)
            for (unsigned int t = 0; t < B; ++t)
              {
                const index_type e = block_element[k * B + t];
                if (e < 0)
                  continue;
                const index_type *const K =
                  arrays.nonzero_map.data() +
                  static_cast<std::size_t>(e) * n_ed * n_ed;
                for (unsigned int i = 0; i < n_ed * n_ed; ++i)
                  if (K[i] != invalid_index)
                    action(static_cast<std::size_t>(K[i]),
                           element_data_index(
                             k,
                             t,
                             parameters.symmetric ?
                                            SymmetricElementOutput<double>::packed_index(
                                 n_ed,
                                 i / n_ed,
                                 i % n_ed) :
                                            i));
                const index_type *const L =
                  arrays.location.data() + static_cast<std::size_t>(e) * n_ed;
                for (unsigned int d = 0; d < n_ed; ++d)
                  action(n_nonzeros + L[d],
                         element_data_index(k, t, n_matrix_entries + d));
              }
        },
        16);
    };
    for_each_contribution([&](const std::size_t target, const std::size_t) {
      __atomic_fetch_add(&list_counts[target + 1], 1, __ATOMIC_RELAXED);
    });
    std::vector<std::size_t> list_offsets(n_targets + 1, 0);
    for (std::size_t p = 0; p < n_targets; ++p)
      list_offsets[p + 1] = list_offsets[p] + list_counts[p + 1];
    std::vector<index_type>().swap(list_counts);
    std::vector<index_type> sources(list_offsets.back());
    std::vector<index_type> fill(n_targets, 0);
    for_each_contribution(
      [&](const std::size_t target, const std::size_t source) {
        const index_type slot =
          __atomic_fetch_add(&fill[target], 1, __ATOMIC_RELAXED);
        sources[list_offsets[target] + slot] =
          static_cast<index_type>(source + 1);
      });
    std::vector<index_type>().swap(fill);
    dealii::parallel::apply_to_subranges(
      std::size_t(0),
      n_targets,
      [&](const std::size_t begin, const std::size_t end) {
        for (std::size_t p = begin; p < end; ++p)
          std::sort(sources.begin() + list_offsets[p],
                    sources.begin() + list_offsets[p + 1]);
      },
      4096);

    // Reduction blocks: runs of at most R targets, split where the matrix
    // values end and the right-hand side begins.
    reduction_target_begin.clear();
    for (std::size_t p = 0; p < n_nonzeros; p += R)
      reduction_target_begin.push_back(p);
    for (std::size_t p = n_nonzeros; p < n_targets; p += R)
      reduction_target_begin.push_back(p);
    reduction_target_begin.push_back(n_targets);

    const unsigned int n_blocks = n_reduction_blocks();
    // Blocks pack independently: size every block's packing in parallel,
    // then pack in parallel straight into place.
    const auto block_lists = [&](const unsigned int r, IndexLists &lists) {
      lists.clear();
      const std::size_t first = reduction_target_begin[r];
      const std::size_t last  = reduction_target_begin[r + 1];
      for (std::size_t p = first; p < last; ++p)
        {
          lists.entries.insert(lists.entries.end(),
                               sources.begin() + list_offsets[p],
                               sources.begin() + list_offsets[p + 1]);
          lists.entries.push_back(-static_cast<index_type>(p - first + 1));
          lists.offsets.push_back(lists.entries.size());
        }
    };
    reduction_offsets.assign(n_blocks + 1, 0);
    dealii::parallel::apply_to_subranges(
      0u,
      n_blocks,
      [&](const unsigned int begin, const unsigned int end) {
        IndexLists lists;
        for (unsigned int r = begin; r < end; ++r)
          {
            block_lists(r, lists);
            reduction_offsets[r + 1] =
              static_cast<std::size_t>(lpt_n_columns(lists, T)) * T;
          }
      },
      16);
    std::partial_sum(reduction_offsets.begin(),
                     reduction_offsets.end(),
                     reduction_offsets.begin());
    reduction_array.assign(reduction_offsets.back(), 0);
    dealii::parallel::apply_to_subranges(
      0u,
      n_blocks,
      [&](const unsigned int begin, const unsigned int end) {
        IndexLists lists;
        for (unsigned int r = begin; r < end; ++r)
          {
            block_lists(r, lists);
            pack_lists_lpt(lists,
                           T,
                           reduction_array.data() + reduction_offsets[r]);
          }
      },
      16);
  }
} // namespace GPUAssembly
