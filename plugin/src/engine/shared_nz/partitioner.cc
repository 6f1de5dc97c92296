// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/parallel.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/sparsity_tools.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/shared_nz/layout.h>
#include <gpu_assembly/engine/shared_nz/partitioner.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>

#include "node_graph.h"

namespace GPUAssembly
{
  namespace internal
  {
    namespace SharedNZ
    {
      namespace
      {
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

        void
        merge_into(std::vector<index_type>       &a,
                   const std::vector<index_type> &b,
                   std::vector<index_type>       &scratch)
        {
          scratch.clear();
          std::set_union(a.begin(),
                         a.end(),
                         b.begin(),
                         b.end(),
                         std::back_inserter(scratch));
          a.swap(scratch);
        }



        // What a node adds to a part: its slots (bounded as in
        // partition_nodes()) and its node-pair lists. Both add up over a part.
        struct NodeWeights
        {
          std::vector<std::size_t> slots;
          std::vector<std::size_t> lists;
        };

        // Whether a part of this many halo nodes, slots, lists and elements
        // fits.
        using Fits = std::function<
          bool(std::size_t, std::size_t, std::size_t, std::size_t)>;

        // The chapter's greedy algorithm: every node starts as its own part;
        // in turn, each part joins the adjacent part whose union touches the
        // fewest elements, if the union fits; repeat until nothing joins. A
        // part joins at most once per sweep so that parts grow evenly.
        // Candidates are all parts adjacent to any member (counted through the
        // elements the part touches), tried from the smallest union on until
        // one fits.
        std::vector<unsigned int>
        greedy_union_partition(const MeshArrays  &arrays,
                               const Csr         &elements_of,
                               const NodeWeights &weights,
                               const Fits        &fits)
        {
          const unsigned int                   n_nodes = arrays.n_nodes;
          const unsigned int                   n_en    = arrays.layout.n_nodes;
          std::vector<unsigned int>            part_of(n_nodes);
          std::vector<std::vector<index_type>> members(n_nodes),
            elements(n_nodes), halo(n_nodes);
          std::vector<std::size_t> slots(weights.slots), lists(weights.lists);
          dealii::parallel::apply_to_subranges(
            0u,
            n_nodes,
            [&](const unsigned int begin, const unsigned int end) {
              for (unsigned int n = begin; n < end; ++n)
                {
                  part_of[n] = n;
                  members[n] = {static_cast<index_type>(n)};
                  elements_and_halo(arrays,
                                    elements_of,
                                    members[n],
                                    elements[n],
                                    halo[n]);
                }
            },
            1024);

          // A part that fits with none of its neighbours never will: parts only
          // grow. It is not looked at again.
          std::vector<unsigned char> closed(n_nodes, 0);
          std::vector<unsigned int>  joined(n_nodes, 0);
          std::vector<unsigned int>  shared(n_nodes, 0);
          std::vector<index_type>    last_element(n_nodes, -1);
          std::vector<unsigned int>  candidates;
          std::vector<std::pair<std::size_t, unsigned int>> ranked;
          std::vector<index_type>                           scratch;
          for (unsigned int sweep = 1;; ++sweep)
            {
              bool any_joined = false;
              for (unsigned int p = 0; p < n_nodes; ++p)
                {
                  if (part_of[p] != p || closed[p] || joined[p] == sweep)
                    continue;
                  // Elements each adjacent part shares with p.
                  candidates.clear();
                  for (const index_type e : elements[p])
                    for (unsigned int a = 0; a < n_en; ++a)
                      {
                        const unsigned int q =
                          part_of[arrays.connectivity
                                    [static_cast<std::size_t>(e) * n_en + a]];
                        if (q == p || last_element[q] == e)
                          continue;
                        if (shared[q] == 0)
                          candidates.push_back(q);
                        last_element[q] = e;
                        ++shared[q];
                      }
                  ranked.clear();
                  for (const unsigned int q : candidates)
                    {
                      ranked.emplace_back(elements[p].size() +
                                            elements[q].size() - shared[q],
                                          q);
                      shared[q]       = 0;
                      last_element[q] = -1;
                    }
                  std::sort(ranked.begin(), ranked.end());

                  bool         any_fits = false;
                  unsigned int best = std::numeric_limits<unsigned int>::max();
                  for (const auto &[size, q] : ranked)
                    {
                      if (!fits(union_size(halo[p], halo[q]),
                                slots[p] + slots[q],
                                lists[p] + lists[q],
                                size))
                        continue;
                      any_fits = true;
                      if (joined[q] != sweep)
                        {
                          best = q;
                          break;
                        }
                    }
                  if (!any_fits)
                    closed[p] = 1;
                  if (best == std::numeric_limits<unsigned int>::max())
                    continue;

                  // The union keeps the smaller name, so that a part is always
                  // named after its first node.
                  const unsigned int keep = std::min(p, best);
                  const unsigned int gone = std::max(p, best);
                  merge_into(elements[keep], elements[gone], scratch);
                  merge_into(halo[keep], halo[gone], scratch);
                  for (const index_type m : members[gone])
                    part_of[m] = keep;
                  members[keep].insert(members[keep].end(),
                                       members[gone].begin(),
                                       members[gone].end());
                  slots[keep] += slots[gone];
                  lists[keep] += lists[gone];
                  for (auto *list :
                       {&members[gone], &elements[gone], &halo[gone]})
                    std::vector<index_type>().swap(*list);
                  joined[keep] = joined[gone] = sweep;
                  any_joined                  = true;
                }
              if (!any_joined)
                break;
            }
          return part_of;
        }

        // Parts grown node by node: a part takes, of the nodes next to it, the
        // one that brings the fewest elements it does not touch yet, until the
        // next would not fit; the next part starts next to it. Parts end full,
        // where the greedy union's parts, which only join whole, end between a
        // third and all of the limit.
        std::vector<unsigned int>
        greedy_growth_partition(const MeshArrays  &arrays,
                                const Csr         &elements_of,
                                const Csr         &neighbors,
                                const NodeWeights &weights,
                                const Fits        &fits)
        {
          constexpr unsigned int none =
            std::numeric_limits<unsigned int>::max();
          const unsigned int        n_nodes = arrays.n_nodes;
          const unsigned int        n_en    = arrays.layout.n_nodes;
          std::vector<unsigned int> part_of(n_nodes, none);
          // Stamps of the current part: which elements it touches, which nodes
          // are in its halo, and how many of each node's elements are new.
          std::vector<unsigned int> element_stamp(arrays.n_elements, none);
          std::vector<unsigned int> halo_stamp(n_nodes, none);
          std::vector<unsigned int> candidate_stamp(n_nodes, none);
          std::vector<unsigned int> new_elements(n_nodes, 0);
          // Candidates by (new elements, node), stale entries skipped.
          using Candidate = std::pair<unsigned int, unsigned int>;
          std::priority_queue<Candidate,
                              std::vector<Candidate>,
                              std::greater<Candidate>>
                       candidates;
          unsigned int next_unassigned = 0, seed = none;
          for (unsigned int part = 0;; ++part)
            {
              if (seed == none)
                {
                  while (next_unassigned < n_nodes &&
                         part_of[next_unassigned] != none)
                    ++next_unassigned;
                  if (next_unassigned == n_nodes)
                    break;
                  seed = next_unassigned;
                }
              candidates             = decltype(candidates)();
              std::size_t n_elements = 0, n_halo = 0, n_slots = 0, n_lists = 0;
              const auto  consider = [&](const unsigned int m) {
                if (part_of[m] != none)
                  return;
                if (candidate_stamp[m] != part)
                  {
                    candidate_stamp[m] = part;
                    unsigned int count = 0;
                    for (std::size_t i = elements_of.offsets[m];
                         i < elements_of.offsets[m + 1];
                         ++i)
                      count += element_stamp[elements_of.entries[i]] != part;
                    new_elements[m] = count;
                  }
                candidates.emplace(new_elements[m], m);
              };
              // What adding node n would make of the part.
              const auto grown = [&](const unsigned int n, std::size_t &halo) {
                halo = n_halo;
                for (std::size_t i = neighbors.offsets[n];
                     i < neighbors.offsets[n + 1];
                     ++i)
                  halo += halo_stamp[neighbors.entries[i]] != part;
                return fits(halo,
                            n_slots + weights.slots[n],
                            n_lists + weights.lists[n],
                            n_elements + new_elements[n]);
              };
              const auto add = [&](const unsigned int n,
                                   const std::size_t  halo) {
                part_of[n] = part;
                n_halo     = halo;
                n_slots += weights.slots[n];
                n_lists += weights.lists[n];
                for (std::size_t i = neighbors.offsets[n];
                     i < neighbors.offsets[n + 1];
                     ++i)
                  halo_stamp[neighbors.entries[i]] = part;
                for (std::size_t i = elements_of.offsets[n];
                     i < elements_of.offsets[n + 1];
                     ++i)
                  {
                    const std::size_t e = elements_of.entries[i];
                    if (element_stamp[e] == part)
                      continue;
                    element_stamp[e] = part;
                    ++n_elements;
                    // The element is no longer new to its other nodes.
                    for (unsigned int a = 0; a < n_en; ++a)
                      {
                        const index_type m = arrays.connectivity[e * n_en + a];
                        if (candidate_stamp[m] == part && part_of[m] == none)
                          --new_elements[m];
                      }
                  }
                for (std::size_t i = neighbors.offsets[n];
                     i < neighbors.offsets[n + 1];
                     ++i)
                  consider(neighbors.entries[i]);
              };
              // The seed fits alone (partition() checked every node).
              new_elements[seed] =
                elements_of.offsets[seed + 1] - elements_of.offsets[seed];
              candidate_stamp[seed] = part;
              std::size_t halo      = 0;
              grown(seed, halo);
              add(seed, halo);
              seed = none;
              while (!candidates.empty())
                {
                  const auto [count, n] = candidates.top();
                  candidates.pop();
                  if (part_of[n] != none || count != new_elements[n])
                    continue;
                  if (!grown(n, halo))
                    {
                      // Full: the next part starts here.
                      seed = n;
                      break;
                    }
                  add(n, halo);
                }
            }
          return part_of;
        }



        // METIS k-way on the node graph, with more parts until all fit.
        std::vector<unsigned int>
        metis_partition(const MeshArrays  &arrays,
                        const Csr         &elements_of,
                        const Csr         &neighbors,
                        const NodeWeights &weights,
                        const Fits        &fits,
                        const std::size_t  first_guess)
        {
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

          unsigned int n_parts = std::max<std::size_t>(1, first_guess);
          std::vector<unsigned int> part_of;
          std::vector<index_type>   elements, halo;
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
                  std::size_t slots = 0, lists = 0;
                  for (const index_type n : part)
                    {
                      slots += weights.slots[n];
                      lists += weights.lists[n];
                    }
                  all_fit &= fits(halo.size(), slots, lists, elements.size());
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

        // Bytes of shared memory of a part (SharedNZLayout).
        std::size_t
        part_bytes(const MeshArrays  &arrays,
                   const unsigned int n_fields,
                   const std::size_t  number_size,
                   const std::size_t  n_halo,
                   const std::size_t  n_slots)
        {
          const std::size_t slot =
            SharedNZLayout::slot_size(arrays.layout.n_components,
                                      arrays.layout.n_dofs);
          return (n_halo * n_fields + slot + n_slots * slot) * number_size;
        }

      } // namespace



      // Elements per part are limited to the threads of a block, so that
      // each thread computes one element and none waits for a second round.
      // With node pairs no element is computed ahead of the reduction: a part
      // holds S(e) of its elements and the Dirichlet data of those with
      // constraints (SharedNZLayout::node_pair_regions()), whose number the
      // slots count (bounded as in partition_nodes()).
      std::vector<unsigned int>
      partition(const MeshArrays                 &arrays,
                const Csr                        &elements_of,
                const Csr                        &neighbors,
                const std::vector<unsigned char> &constrained,
                const NodePartitioner             partitioner,
                const unsigned int                n_fields,
                const std::size_t                 number_size,
                const std::size_t                 shared_memory_limit,
                const unsigned int                threads_per_block,
                const bool                        node_pairs)
      {
        const unsigned int n_en = arrays.layout.n_nodes;
        const unsigned int n_ed = arrays.layout.n_dofs;
        // S(e) of the elements of a part, each once (node pairs).
        const std::size_t staged     = node_pairs ? arrays.n_supplemental : 0;
        const std::size_t pair_index = node_pairs ? n_en * n_en : 0;
        const auto        bytes      = [&](const std::size_t n_halo,
                               const std::size_t n_slots,
                               const std::size_t n_elements) {
          return SharedNZLayout::row_buffer_bytes(threads_per_block,
                                                  arrays.layout.n_components,
                                                  number_size) +
                 (node_pairs ?
                                SharedNZLayout::node_pair_bytes(n_elements,
                                                    std::min(n_slots,
                                                             n_elements),
                                                    staged,
                                                    n_ed,
                                                    number_size) :
                                part_bytes(arrays, n_fields, number_size, n_halo, n_slots));
        };
        const Fits fits = [&](const std::size_t n_halo,
                              const std::size_t n_slots,
                              const std::size_t n_lists,
                              const std::size_t n_elements) {
          return bytes(n_halo, n_slots, n_elements) <= shared_memory_limit &&
                 (node_pairs ? n_elements * pair_index : n_slots * n_en) <=
                   SharedNZLayout::max_source_index + 1 &&
                 n_lists <= SharedNZLayout::max_lists &&
                 (node_pairs || n_elements <= threads_per_block);
        };

        NodeWeights weights;
        weights.slots.resize(arrays.n_nodes);
        weights.lists.resize(arrays.n_nodes);
        for (unsigned int n = 0; n < arrays.n_nodes; ++n)
          {
            std::size_t slots = 0;
            for (std::size_t i = elements_of.offsets[n];
                 i < elements_of.offsets[n + 1];
                 ++i)
              slots += constrained[elements_of.entries[i]] ?
                         (node_pairs ? 1 : n_en) :
                         (node_pairs ? 0 : 1);
            weights.slots[n] = slots;
            weights.lists[n] = neighbors.offsets[n + 1] - neighbors.offsets[n];
          }

        // A node that does not fit alone makes SharedNZ impossible.
        std::vector<index_type> elements, halo;
        for (unsigned int n = 0; n < arrays.n_nodes; ++n)
          {
            const std::size_t n_halo =
              neighbors.offsets[n + 1] - neighbors.offsets[n];
            AssertThrow(
              fits(n_halo,
                   weights.slots[n],
                   weights.lists[n],
                   elements_of.offsets[n + 1] - elements_of.offsets[n]),
              ExcUnsupportedInput(
                "SharedNZ: node " + std::to_string(n) + " belongs to " +
                std::to_string(elements_of.offsets[n + 1] -
                               elements_of.offsets[n]) +
                (node_pairs ? " elements, whose S(e) and Dirichlet data (" :
                              " elements, whose rows of element data (") +
                std::to_string(
                  bytes(n_halo,
                        weights.slots[n],
                        elements_of.offsets[n + 1] - elements_of.offsets[n])) +
                " bytes) do not fit in the " +
                std::to_string(shared_memory_limit) +
                " bytes of shared memory per block, or are more " +
                (node_pairs ? "node pairs than 16-bit sources number" :
                              "than its " + std::to_string(threads_per_block) +
                                " threads") +
                "; give a block more shared memory (fewer "
                "SharedNZPlan::Parameters::blocks_per_multiprocessor, or "
                "shared_memory_per_block), or use " +
                (node_pairs ? "SharedNZ without node pairs or " : "") +
                "GlobalNZ."));
          }

        const NodePartitioner chosen =
          partitioner != NodePartitioner::automatic ? partitioner :
          node_pairs ? NodePartitioner::greedy_growth :
                       NodePartitioner::greedy_union;
        if (chosen == NodePartitioner::greedy_union)
          return greedy_union_partition(arrays, elements_of, weights, fits);
        if (chosen == NodePartitioner::greedy_growth)
          return greedy_growth_partition(arrays,
                                         elements_of,
                                         neighbors,
                                         weights,
                                         fits);
        const std::size_t total_slots = std::accumulate(weights.slots.begin(),
                                                        weights.slots.end(),
                                                        std::size_t(0));
        // Slots per part, or with node pairs elements per part.
        const std::size_t per_part = std::max<std::size_t>(
          1,
          shared_memory_limit /
            ((node_pairs ? staged : arrays.layout.n_components * (n_ed + 1)) *
             number_size));
        const std::size_t total =
          node_pairs ? std::size_t(arrays.n_elements) : total_slots;
        return metis_partition(arrays,
                               elements_of,
                               neighbors,
                               weights,
                               fits,
                               2 * total / per_part);
      }
    } // namespace SharedNZ
  }   // namespace internal



  std::vector<unsigned int>
  partition_nodes(const MeshArrays     &arrays,
                  const NodePartitioner partitioner,
                  const unsigned int    n_fields,
                  const std::size_t     number_size,
                  const std::size_t     shared_memory_limit,
                  const unsigned int    threads_per_block,
                  const bool            node_pairs)
  {
    using namespace internal::SharedNZ;
    const Csr elements_of = node_to_elements(arrays);
    return partition(arrays,
                     elements_of,
                     node_neighbors(arrays, elements_of),
                     constrained_elements(arrays),
                     partitioner,
                     n_fields,
                     number_size,
                     shared_memory_limit,
                     threads_per_block,
                     node_pairs);
  }
} // namespace GPUAssembly
