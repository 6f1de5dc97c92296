#include <deal.II/base/parallel.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/sparsity_tools.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/packing.h>
#include <gpu_assembly/engine/shared_nz_plan.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

namespace GPUAssembly
{
  namespace
  {
    // Compressed lists: list i is entries[offsets[i], offsets[i+1]).
    struct Csr
    {
      std::vector<std::size_t> offsets;
      std::vector<index_type>  entries;
    };

    Csr
    node_to_elements(const MeshArrays &arrays)
    {
      const unsigned int n_en = arrays.layout.n_nodes;
      Csr                result;
      result.offsets.assign(arrays.n_nodes + 1, 0);
      for (const index_type node : arrays.connectivity)
        ++result.offsets[node + 1];
      std::partial_sum(result.offsets.begin(),
                       result.offsets.end(),
                       result.offsets.begin());
      result.entries.resize(result.offsets.back());
      std::vector<std::size_t> fill(result.offsets.begin(),
                                    result.offsets.end() - 1);
      for (unsigned int e = 0; e < arrays.n_elements; ++e)
        for (unsigned int a = 0; a < n_en; ++a)
          result.entries[fill[arrays.connectivity
                                [static_cast<std::size_t>(e) * n_en + a]]++] =
            e;
      return result;
    }

    // Nodes sharing an element with each node (itself included), sorted.
    Csr
    node_neighbors(const MeshArrays &arrays, const Csr &elements_of)
    {
      const unsigned int n_en = arrays.layout.n_nodes;
      Csr                result;
      result.offsets.assign(arrays.n_nodes + 1, 0);
      std::vector<index_type> row;
      for (unsigned int n = 0; n < arrays.n_nodes; ++n)
        {
          row.clear();
          for (std::size_t i = elements_of.offsets[n];
               i < elements_of.offsets[n + 1];
               ++i)
            {
              const std::size_t e = elements_of.entries[i];
              row.insert(row.end(),
                         arrays.connectivity.begin() + e * n_en,
                         arrays.connectivity.begin() + (e + 1) * n_en);
            }
          std::sort(row.begin(), row.end());
          row.erase(std::unique(row.begin(), row.end()), row.end());
          result.entries.insert(result.entries.end(), row.begin(), row.end());
          result.offsets[n + 1] = result.entries.size();
        }
      return result;
    }

    std::size_t
    union_size(const std::vector<index_type> &a,
               const std::vector<index_type> &b)
    {
      std::size_t i = 0, j = 0, n = 0;
      while (i < a.size() && j < b.size())
        {
          if (a[i] < b[j])
            ++i;
          else if (b[j] < a[i])
            ++j;
          else
            ++i, ++j;
          ++n;
        }
      return n + (a.size() - i) + (b.size() - j);
    }

    std::vector<index_type>
    set_union(const std::vector<index_type> &a,
              const std::vector<index_type> &b)
    {
      std::vector<index_type> result;
      result.reserve(a.size() + b.size());
      std::set_union(a.begin(),
                     a.end(),
                     b.begin(),
                     b.end(),
                     std::back_inserter(result));
      return result;
    }

    // Sorted elements and halo nodes of a set of nodes.
    void
    elements_and_halo(const MeshArrays              &arrays,
                      const Csr                     &elements_of,
                      const std::vector<index_type> &nodes,
                      std::vector<index_type>       &elements,
                      std::vector<index_type>       &halo)
    {
      const unsigned int n_en = arrays.layout.n_nodes;
      elements.clear();
      for (const index_type n : nodes)
        elements.insert(elements.end(),
                        elements_of.entries.begin() + elements_of.offsets[n],
                        elements_of.entries.begin() +
                          elements_of.offsets[n + 1]);
      std::sort(elements.begin(), elements.end());
      elements.erase(std::unique(elements.begin(), elements.end()),
                     elements.end());
      halo.clear();
      for (const index_type e : elements)
        halo.insert(halo.end(),
                    arrays.connectivity.begin() +
                      static_cast<std::size_t>(e) * n_en,
                    arrays.connectivity.begin() +
                      static_cast<std::size_t>(e + 1) * n_en);
      std::sort(halo.begin(), halo.end());
      halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
    }

    // The chapter's greedy algorithm: every node starts as its own part;
    // each node in turn joins its part with the adjacent part whose union
    // needs the fewest elements, if the union fits; repeat until nothing
    // joins. A part joins at most once per sweep so that parts grow evenly.
    std::vector<unsigned int>
    greedy_union_partition(
      const MeshArrays                                    &arrays,
      const Csr                                           &elements_of,
      const std::function<bool(std::size_t, std::size_t)> &fits)
    {
      const unsigned int        n_nodes   = arrays.n_nodes;
      const Csr                 neighbors = node_neighbors(arrays, elements_of);
      std::vector<unsigned int> part_of(n_nodes);
      std::vector<std::vector<index_type>> members(n_nodes), elements(n_nodes),
        halo(n_nodes);
      for (unsigned int n = 0; n < n_nodes; ++n)
        {
          part_of[n] = n;
          members[n] = {static_cast<index_type>(n)};
          elements_and_halo(arrays,
                            elements_of,
                            members[n],
                            elements[n],
                            halo[n]);
        }

      std::vector<unsigned int> joined(n_nodes, 0);
      for (unsigned int sweep = 1;; ++sweep)
        {
          bool any_joined = false;
          for (unsigned int n = 0; n < n_nodes; ++n)
            {
              const unsigned int p = part_of[n];
              if (joined[p] == sweep)
                continue;
              unsigned int best      = std::numeric_limits<unsigned int>::max();
              std::size_t  best_size = std::numeric_limits<std::size_t>::max();
              for (std::size_t i = neighbors.offsets[n];
                   i < neighbors.offsets[n + 1];
                   ++i)
                {
                  const unsigned int q = part_of[neighbors.entries[i]];
                  if (q == p || joined[q] == sweep)
                    continue;
                  const std::size_t size = union_size(elements[p], elements[q]);
                  if (size < best_size || (size == best_size && q < best))
                    {
                      best      = q;
                      best_size = size;
                    }
                }
              if (best == std::numeric_limits<unsigned int>::max() ||
                  !fits(best_size, union_size(halo[p], halo[best])))
                continue;

              elements[p] = set_union(elements[p], elements[best]);
              halo[p]     = set_union(halo[p], halo[best]);
              for (const index_type m : members[best])
                part_of[m] = p;
              members[p].insert(members[p].end(),
                                members[best].begin(),
                                members[best].end());
              for (auto *list : {&members[best], &elements[best], &halo[best]})
                std::vector<index_type>().swap(*list);
              joined[p] = joined[best] = sweep;
              any_joined               = true;
            }
          if (!any_joined)
            break;
        }
      return part_of;
    }

    // METIS k-way on the node graph, with more parts until all fit.
    std::vector<unsigned int>
    metis_partition(const MeshArrays &arrays,
                    const Csr        &elements_of,
                    const std::function<bool(std::size_t, std::size_t)> &fits,
                    const std::size_t single_part_elements)
    {
      const Csr neighbors = node_neighbors(arrays, elements_of);
      dealii::DynamicSparsityPattern               dsp(arrays.n_nodes);
      std::vector<dealii::types::global_dof_index> row;
      for (unsigned int n = 0; n < arrays.n_nodes; ++n)
        {
          row.assign(neighbors.entries.begin() + neighbors.offsets[n],
                     neighbors.entries.begin() + neighbors.offsets[n + 1]);
          dsp.add_entries(n, row.begin(), row.end(), true);
        }
      dealii::SparsityPattern graph;
      graph.copy_from(dsp);

      unsigned int n_parts =
        std::max<std::size_t>(1,
                              2 * arrays.n_elements /
                                std::max<std::size_t>(1, single_part_elements));
      std::vector<unsigned int> part_of;
      std::vector<index_type>   nodes, elements, halo;
      for (unsigned int attempt = 0; attempt < 30; ++attempt)
        {
          n_parts = std::min(n_parts, arrays.n_nodes);
          // deal.II writes into the vector without resizing it.
          part_of.assign(arrays.n_nodes, 0);
          dealii::SparsityTools::partition(
            graph,
            n_parts,
            part_of,
            dealii::SparsityTools::Partitioner::metis);
          std::vector<std::vector<index_type>> members(n_parts);
          for (unsigned int n = 0; n < arrays.n_nodes; ++n)
            members[part_of[n]].push_back(n);
          bool all_fit = true;
          for (const auto &part : members)
            {
              elements_and_halo(arrays, elements_of, part, elements, halo);
              all_fit &= fits(elements.size(), halo.size());
            }
          if (all_fit)
            return part_of;
          AssertThrow(n_parts < arrays.n_nodes,
                      ExcUnsupportedInput("SharedNZ: METIS found no "
                                          "partition that fits."));
          n_parts = n_parts + n_parts / 2 + 1;
        }
      AssertThrow(false,
                  ExcUnsupportedInput("SharedNZ: METIS found no partition "
                                      "that fits in 30 attempts."));
      return part_of;
    }
  } // namespace



  std::vector<unsigned int>
  partition_nodes(const MeshArrays     &arrays,
                  const NodePartitioner partitioner,
                  const unsigned int    n_fields,
                  const std::size_t     number_size,
                  const std::size_t     shared_memory_limit)
  {
    const std::size_t n_ed      = arrays.layout.n_dofs;
    const std::size_t n_entries = n_ed * n_ed + n_ed;
    const auto        fits      = [&](const std::size_t n_elements,
                          const std::size_t n_halo) {
      return (n_elements * n_entries + n_halo * n_fields) * number_size <=
             shared_memory_limit;
    };
    const Csr elements_of = node_to_elements(arrays);

    // A node whose own elements do not fit makes SharedNZ impossible.
    std::vector<index_type> elements, halo;
    std::size_t             largest = 0;
    for (unsigned int n = 0; n < arrays.n_nodes; ++n)
      {
        elements_and_halo(arrays,
                          elements_of,
                          {static_cast<index_type>(n)},
                          elements,
                          halo);
        largest = std::max(largest, elements.size());
        AssertThrow(
          fits(elements.size(), halo.size()),
          ExcUnsupportedInput(
            "SharedNZ: node " + std::to_string(n) + " belongs to " +
            std::to_string(elements.size()) +
            " elements, whose element data (" +
            std::to_string(elements.size() * n_entries * number_size) +
            " bytes) do not fit in the " + std::to_string(shared_memory_limit) +
            " bytes of shared memory per block; use GlobalNZ."));
      }

    if (partitioner == NodePartitioner::greedy_union)
      return greedy_union_partition(arrays, elements_of, fits);
    return metis_partition(arrays,
                           elements_of,
                           fits,
                           shared_memory_limit / (n_entries * number_size + 1));
  }



  std::size_t
  SharedNZPlan::memory_consumption() const
  {
    return (halo_offsets.size() + halo_nodes.size() + element_offsets.size() +
            elements.size() + block_connectivity.size() +
            block_location.size() + reduction_array.size()) *
             sizeof(index_type) +
           block_supplemental.size() * sizeof(double) +
           block_has_constraints.size() +
           reduction_offsets.size() * sizeof(std::size_t);
  }



  void
  SharedNZPlan::reinit(const MeshArrays  &arrays,
                       const Parameters  &new_parameters,
                       const unsigned int new_n_fields,
                       const std::size_t  number_size,
                       const std::size_t  shared_memory_limit)
  {
    parameters           = new_parameters;
    const unsigned int T = parameters.threads_per_block;
    AssertThrow(T >= 32 && T <= 1024 && T % 32 == 0,
                dealii::ExcMessage("SharedNZ: threads per block must be a "
                                   "multiple of 32 between 32 and 1024."));
    n_nodes_per_element = arrays.layout.n_nodes;
    n_dofs_per_element  = arrays.layout.n_dofs;
    n_supplemental      = arrays.n_supplemental;
    n_entries  = n_dofs_per_element * n_dofs_per_element + n_dofs_per_element;
    n_nonzeros = arrays.n_nonzeros();
    n_dofs     = arrays.n_dofs;
    n_fields   = new_n_fields;
    const unsigned int n_en = n_nodes_per_element;
    const unsigned int n_ed = n_dofs_per_element;
    const unsigned int n_c  = arrays.layout.n_components;

    const std::vector<unsigned int> part_of =
      partition_nodes(arrays,
                      parameters.partitioner,
                      n_fields,
                      number_size,
                      shared_memory_limit);

    // Parts renumbered densely in the order of their first node.
    std::vector<unsigned int> block_of_part(
      arrays.n_nodes,
      std::numeric_limits<unsigned int>::max());
    std::vector<std::vector<index_type>> members;
    for (unsigned int n = 0; n < arrays.n_nodes; ++n)
      {
        unsigned int &block = block_of_part[part_of[n]];
        if (block == std::numeric_limits<unsigned int>::max())
          {
            block = members.size();
            members.emplace_back();
          }
        members[block].push_back(n);
      }
    n_blocks = members.size();
    std::vector<unsigned int> block_of_node(arrays.n_nodes);
    for (unsigned int k = 0; k < n_blocks; ++k)
      for (const index_type n : members[k])
        block_of_node[n] = k;

    const Csr elements_of = node_to_elements(arrays);

    // Blocks are independent: build them in parallel, then concatenate.
    struct Block
    {
      std::vector<index_type>    halo, elements, connectivity, location;
      std::vector<double>        supplemental;
      std::vector<unsigned char> has_constraints;
      std::vector<index_type>    packed;
    };
    std::vector<Block> blocks(n_blocks);
    dealii::parallel::apply_to_subranges(
      0u,
      n_blocks,
      [&](const unsigned int begin, const unsigned int end) {
        std::vector<std::pair<index_type, index_type>> contributions;
        IndexLists                                     lists;
        for (unsigned int k = begin; k < end; ++k)
          {
            Block &b = blocks[k];
            elements_and_halo(arrays,
                              elements_of,
                              members[k],
                              b.elements,
                              b.halo);
            const std::size_t n_k = b.elements.size();
            b.connectivity.resize(n_en * n_k);
            b.location.resize(n_ed * n_k);
            b.supplemental.resize(n_supplemental * n_k);
            b.has_constraints.assign(n_k, 0);
            const std::size_t nodal_size = b.halo.size() * n_fields;
            contributions.clear();
            for (std::size_t j = 0; j < n_k; ++j)
              {
                const std::size_t e = b.elements[j];
                for (unsigned int a = 0; a < n_en; ++a)
                  b.connectivity[a * n_k + j] =
                    std::lower_bound(b.halo.begin(),
                                     b.halo.end(),
                                     arrays.connectivity[e * n_en + a]) -
                    b.halo.begin();
                for (unsigned int i = 0; i < n_supplemental; ++i)
                  b.supplemental[i * n_k + j] =
                    arrays.supplemental[e * n_supplemental + i];
                for (unsigned int d = 0; d < n_ed; ++d)
                  {
                    const index_type dof    = arrays.location[e * n_ed + d];
                    b.location[d * n_k + j] = dof;
                    if (arrays.dof_is_constrained[dof])
                      b.has_constraints[j] = 1;
                  }
                // Only rows of this part's nodes are assembled here.
                for (unsigned int d1 = 0; d1 < n_ed; ++d1)
                  {
                    const index_type node =
                      arrays.connectivity[e * n_en + d1 / n_c];
                    if (block_of_node[node] != k)
                      continue;
                    for (unsigned int d2 = 0; d2 < n_ed; ++d2)
                      {
                        const index_type target =
                          arrays.nonzero_map[(e * n_ed + d1) * n_ed + d2];
                        if (target != invalid_index)
                          contributions.emplace_back(target,
                                                     nodal_size +
                                                       (d1 * n_ed + d2) * n_k +
                                                       j + 1);
                      }
                    contributions.emplace_back(
                      n_nonzeros + arrays.location[e * n_ed + d1],
                      nodal_size + (n_ed * n_ed + d1) * n_k + j + 1);
                  }
              }
            // Group by target; the stable sort keeps the element order
            // within a target, so sums are taken in a fixed order.
            std::stable_sort(contributions.begin(),
                             contributions.end(),
                             [](const auto &x, const auto &y) {
                               return x.first < y.first;
                             });
            lists.clear();
            for (std::size_t i = 0; i < contributions.size();)
              {
                const index_type target = contributions[i].first;
                for (; i < contributions.size() &&
                       contributions[i].first == target;
                     ++i)
                  lists.entries.push_back(contributions[i].second);
                lists.entries.push_back(-(target + 1));
                lists.offsets.push_back(lists.entries.size());
              }
            pack_lists_lpt(lists, T, b.packed);
          }
      },
      16);

    halo_offsets.assign(n_blocks + 1, 0);
    element_offsets.assign(n_blocks + 1, 0);
    reduction_offsets.assign(n_blocks + 1, 0);
    halo_nodes.clear();
    elements.clear();
    block_connectivity.clear();
    block_location.clear();
    block_supplemental.clear();
    block_has_constraints.clear();
    reduction_array.clear();
    max_shared_bytes = 0;
    for (unsigned int k = 0; k < n_blocks; ++k)
      {
        const Block &b = blocks[k];
        halo_nodes.insert(halo_nodes.end(), b.halo.begin(), b.halo.end());
        elements.insert(elements.end(), b.elements.begin(), b.elements.end());
        block_connectivity.insert(block_connectivity.end(),
                                  b.connectivity.begin(),
                                  b.connectivity.end());
        block_location.insert(block_location.end(),
                              b.location.begin(),
                              b.location.end());
        block_supplemental.insert(block_supplemental.end(),
                                  b.supplemental.begin(),
                                  b.supplemental.end());
        block_has_constraints.insert(block_has_constraints.end(),
                                     b.has_constraints.begin(),
                                     b.has_constraints.end());
        reduction_array.insert(reduction_array.end(),
                               b.packed.begin(),
                               b.packed.end());
        halo_offsets[k + 1]      = halo_nodes.size();
        element_offsets[k + 1]   = elements.size();
        reduction_offsets[k + 1] = reduction_array.size();
        max_shared_bytes =
          std::max(max_shared_bytes,
                   (b.halo.size() * n_fields + b.elements.size() * n_entries) *
                     number_size);
      }
    recomputation_factor = double(elements.size()) / arrays.n_elements;
  }
} // namespace GPUAssembly
