#include <deal.II/base/parallel.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/sparsity_tools.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/packing.h>
#include <gpu_assembly/engine/shared_nz_layout.h>
#include <gpu_assembly/engine/shared_nz_plan.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>

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

    // Elements of every node, in increasing order.
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

    // Whether each element touches a constrained DoF.
    std::vector<unsigned char>
    constrained_elements(const MeshArrays &arrays)
    {
      const unsigned int         n_ed = arrays.layout.n_dofs;
      std::vector<unsigned char> result(arrays.n_elements, 0);
      dealii::parallel::apply_to_subranges(
        0u,
        arrays.n_elements,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int e = begin; e < end; ++e)
            for (unsigned int d = 0; d < n_ed; ++d)
              if (arrays.dof_is_constrained
                    [arrays.location[static_cast<std::size_t>(e) * n_ed + d]])
                result[e] = 1;
        },
        4096);
      return result;
    }

    // Nodes sharing an element with each node (itself included), sorted.
    Csr
    node_neighbors(const MeshArrays &arrays, const Csr &elements_of)
    {
      const unsigned int n_en = arrays.layout.n_nodes;
      const unsigned int n    = arrays.n_nodes;
      // Rows are independent: fill fixed-size chunks in parallel, then
      // concatenate in node order.
      constexpr unsigned int                chunk    = 4096;
      const unsigned int                    n_chunks = (n + chunk - 1) / chunk;
      std::vector<std::vector<index_type>>  rows(n_chunks);
      std::vector<std::vector<std::size_t>> lengths(n_chunks);
      dealii::parallel::apply_to_subranges(
        0u,
        n_chunks,
        [&](const unsigned int begin, const unsigned int end) {
          std::vector<index_type> row;
          for (unsigned int c = begin; c < end; ++c)
            for (unsigned int node = c * chunk;
                 node < std::min(n, (c + 1) * chunk);
                 ++node)
              {
                row.clear();
                for (std::size_t i = elements_of.offsets[node];
                     i < elements_of.offsets[node + 1];
                     ++i)
                  {
                    const std::size_t e = elements_of.entries[i];
                    row.insert(row.end(),
                               arrays.connectivity.begin() + e * n_en,
                               arrays.connectivity.begin() + (e + 1) * n_en);
                  }
                std::sort(row.begin(), row.end());
                row.erase(std::unique(row.begin(), row.end()), row.end());
                rows[c].insert(rows[c].end(), row.begin(), row.end());
                lengths[c].push_back(row.size());
              }
        },
        1);
      Csr result;
      result.offsets.assign(n + 1, 0);
      for (unsigned int c = 0; c < n_chunks; ++c)
        for (std::size_t i = 0; i < lengths[c].size(); ++i)
          result.offsets[c * chunk + i + 1] =
            result.offsets[c * chunk + i] + lengths[c][i];
      result.entries.resize(result.offsets.back());
      dealii::parallel::apply_to_subranges(
        0u,
        n_chunks,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int c = begin; c < end; ++c)
            std::copy(rows[c].begin(),
                      rows[c].end(),
                      result.entries.begin() + result.offsets[c * chunk]);
        },
        1);
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

    // What a node adds to a part: its slots (bounded as in
    // partition_nodes()) and its node-pair lists. Both add up over a part.
    struct NodeWeights
    {
      std::vector<std::size_t> slots;
      std::vector<std::size_t> lists;
    };

    // Whether a part of this many halo nodes, slots, lists and elements
    // fits.
    using Fits =
      std::function<bool(std::size_t, std::size_t, std::size_t, std::size_t)>;

    // The chapter's greedy algorithm: every node starts as its own part;
    // in turn, each part joins the adjacent part whose union touches the
    // fewest elements, if the union fits; repeat until nothing joins. A part
    // joins at most once per sweep so that parts grow evenly. Candidates are
    // all parts adjacent to any member (counted through the elements the
    // part touches), tried from the smallest union on until one fits.
    std::vector<unsigned int>
    greedy_union_partition(const MeshArrays  &arrays,
                           const Csr         &elements_of,
                           const NodeWeights &weights,
                           const Fits        &fits)
    {
      const unsigned int                   n_nodes = arrays.n_nodes;
      const unsigned int                   n_en    = arrays.layout.n_nodes;
      std::vector<unsigned int>            part_of(n_nodes);
      std::vector<std::vector<index_type>> members(n_nodes), elements(n_nodes),
        halo(n_nodes);
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
                  ranked.emplace_back(elements[p].size() + elements[q].size() -
                                        shared[q],
                                      q);
                  shared[q]       = 0;
                  last_element[q] = -1;
                }
              std::sort(ranked.begin(), ranked.end());

              bool         any_fits = false;
              unsigned int best     = std::numeric_limits<unsigned int>::max();
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
              for (auto *list : {&members[gone], &elements[gone], &halo[gone]})
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
    // third and all of the limit (with node pairs, 274 elements per part
    // on average against up to 924 at 1.5 M tetrahedra).
    std::vector<unsigned int>
    greedy_growth_partition(const MeshArrays  &arrays,
                            const Csr         &elements_of,
                            const Csr         &neighbors,
                            const NodeWeights &weights,
                            const Fits        &fits)
    {
      constexpr unsigned int    none = std::numeric_limits<unsigned int>::max();
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
          const auto add = [&](const unsigned int n, const std::size_t halo) {
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



    // METIS k-way on the node graph, with more parts until all fit.    // METIS
    // k-way on the node graph, with more parts until all fit.
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

      unsigned int              n_parts = std::max<std::size_t>(1, first_guess);
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
                                                  std::min(n_slots, n_elements),
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
              (node_pairs ?
                 "node pairs than 16-bit sources number" :
                 "than its " + std::to_string(threads_per_block) + " threads") +
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
  } // namespace



  std::vector<unsigned int>
  partition_nodes(const MeshArrays     &arrays,
                  const NodePartitioner partitioner,
                  const unsigned int    n_fields,
                  const std::size_t     number_size,
                  const std::size_t     shared_memory_limit,
                  const unsigned int    threads_per_block,
                  const bool            node_pairs)
  {
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



  std::size_t
  SharedNZPlan::shared_bytes(const unsigned int k,
                             const std::size_t  number_size) const
  {
    const std::size_t n_k = element_offsets[k + 1] - element_offsets[k];
    const std::size_t rows =
      SharedNZLayout::row_buffer_bytes(parameters.threads_per_block,
                                       n_components,
                                       number_size);
    if (parameters.node_pairs)
      return rows + SharedNZLayout::node_pair_bytes(n_k,
                                                    n_k - n_free_elements[k],
                                                    n_supplemental,
                                                    n_dofs_per_element,
                                                    number_size);
    const std::size_t slot =
      SharedNZLayout::slot_size(n_components, n_dofs_per_element);
    return rows +
           ((halo_offsets[k + 1] - halo_offsets[k]) * std::size_t(n_fields) +
            slot + std::size_t(n_slots[k]) * slot) *
             number_size;
  }



  std::size_t
  SharedNZPlan::memory_consumption() const
  {
    return (owned_offsets.size() + owned_nodes.size() + halo_offsets.size() +
            halo_nodes.size() + element_offsets.size() + elements.size() +
            block_connectivity.size() + n_slots.size() +
            n_free_elements.size() + n_diagonal_lists.size() +
            block_location.size() + targets.size()) *
             sizeof(index_type) +
           (block_slots.size() + sources.size()) * sizeof(std::uint16_t) +
           block_supplemental.size() * sizeof(double) +
           block_has_constraints.size() +
           (slice_offsets.size() + target_offsets.size() +
            supplemental_offsets.size()) *
             sizeof(std::size_t);
  }



  void
  SharedNZPlan::reinit(const MeshArrays  &arrays,
                       const Parameters  &new_parameters,
                       const unsigned int new_n_fields,
                       const std::size_t  number_size,
                       const std::size_t  shared_memory_limit)
  {
    parameters           = new_parameters.resolved(arrays.layout.n_nodes);
    const unsigned int T = parameters.threads_per_block;
    AssertThrow(T >= 32 && T <= 1024 && T % 32 == 0,
                dealii::ExcMessage("SharedNZ: threads per block must be a "
                                   "multiple of 32 between 32 and 1024."));
    n_nodes_per_element = arrays.layout.n_nodes;
    n_dofs_per_element  = arrays.layout.n_dofs;
    n_components        = arrays.layout.n_components;
    n_supplemental      = arrays.n_supplemental;
    n_nonzeros          = arrays.n_nonzeros();
    n_dofs              = arrays.n_dofs;
    n_fields            = new_n_fields;
    AssertThrow(n_nonzeros <
                  static_cast<std::size_t>(std::numeric_limits<int>::max()),
                ExcUnsupportedInput("SharedNZ: too many nonzeros for 32-bit "
                                    "target indices."));
    AssertThrow(!parameters.node_pairs || n_dofs_per_element <= 64,
                ExcUnsupportedInput(
                  "SharedNZ: node pairs keep which DoFs of an element are "
                  "constrained in 64 bits, and this element has " +
                  std::to_string(n_dofs_per_element) +
                  " DoFs; use SharedNZ without node pairs or GlobalNZ."));
    // The node-pair staging reads the inhomogeneity of every DoF of an
    // element with constraints (SharedNZLayout::stage_constraints()).
    AssertThrow(arrays.dof_is_constrained.size() == arrays.n_dofs &&
                  arrays.inhomogeneities.size() == arrays.n_dofs,
                ExcUnsupportedInput(
                  "SharedNZ: the mesh arrays need a constraint flag and an "
                  "inhomogeneity for each of their " +
                  std::to_string(arrays.n_dofs) + " DoFs, and have " +
                  std::to_string(arrays.dof_is_constrained.size()) + " and " +
                  std::to_string(arrays.inhomogeneities.size()) + "."));
    const unsigned int n_en = n_nodes_per_element;
    const unsigned int n_ed = n_dofs_per_element;
    const unsigned int n_c  = n_components;

    const Csr elements_of = node_to_elements(arrays);
    const Csr neighbors   = node_neighbors(arrays, elements_of);
    const std::vector<unsigned char> constrained = constrained_elements(arrays);
    const std::vector<unsigned int>  part_of     = partition(arrays,
                                                        elements_of,
                                                        neighbors,
                                                        constrained,
                                                        parameters.partitioner,
                                                        n_fields,
                                                        number_size,
                                                        shared_memory_limit,
                                                        T,
                                                        parameters.node_pairs);

    // Parts renumbered densely in the order of their first node.
    std::vector<unsigned int> block_of_part(
      arrays.n_nodes,
      std::numeric_limits<unsigned int>::max());
    owned_offsets.assign(1, 0);
    std::vector<unsigned int> block_of_node(arrays.n_nodes);
    std::vector<index_type>   count;
    for (unsigned int n = 0; n < arrays.n_nodes; ++n)
      {
        unsigned int &block = block_of_part[part_of[n]];
        if (block == std::numeric_limits<unsigned int>::max())
          {
            block = count.size();
            count.push_back(0);
          }
        block_of_node[n] = block;
        ++count[block];
      }
    n_blocks = count.size();
    owned_offsets.resize(n_blocks + 1);
    for (unsigned int k = 0; k < n_blocks; ++k)
      owned_offsets[k + 1] = owned_offsets[k] + count[k];
    owned_nodes.resize(arrays.n_nodes);
    {
      std::vector<index_type> fill(owned_offsets.begin(),
                                   owned_offsets.end() - 1);
      for (unsigned int n = 0; n < arrays.n_nodes; ++n)
        owned_nodes[fill[block_of_node[n]]++] = n;
    }

    // An element's nodes may be taken in any order where S(e) holds the
    // gradients of its nodes and every node's shape value at the single
    // quadrature point is the same number (linear simplices with the
    // midpoint rule, as in 3D; in 2D the three values at the centroid
    // differ in the last bit). The plan then puts the nodes whose rows the
    // block keeps first, so that elements with as many kept nodes need the
    // same node pairs, and a warp of them skips the same ones (kernels skip
    // the pairs of discarded rows: output_may_discard_rows); unordered, the
    // elements of a warp keep different nodes and together need almost
    // every pair.
    // Node pairs compute no element ahead of the reduction.
    const bool node_pairs = parameters.node_pairs;
    const bool reorder_nodes =
      parameters.reorder_nodes && !node_pairs &&
      arrays.supplemental_format ==
        SupplementalDataFormat::quadrature_gradients &&
      arrays.layout.n_q_points == 1 && n_en <= 32 &&
      n_supplemental == 1 + n_en * arrays.dim &&
      std::all_of(arrays.layout.shape_values.begin(),
                  arrays.layout.shape_values.end(),
                  [&](const double value) {
                    return value == arrays.layout.shape_values[0];
                  });
    const unsigned int dim = arrays.dim;

    // Blocks are independent: build them in parallel, then concatenate.
    struct Block
    {
      std::vector<index_type>    halo, elements, connectivity, location;
      std::vector<std::uint16_t> slots;
      index_type                 n_slots    = 0;
      index_type                 n_free     = 0;
      index_type                 n_diagonal = 0;
      std::vector<double>        supplemental;
      std::vector<unsigned char> has_constraints;
      std::vector<std::uint16_t> sources;
      std::vector<std::size_t>   slice_ends, target_slice_ends;
      std::vector<index_type>    targets;
    };
    std::vector<Block> blocks(n_blocks);
    dealii::parallel::apply_to_subranges(
      0u,
      n_blocks,
      [&](const unsigned int begin, const unsigned int end) {
        std::vector<index_type>                        owned;
        std::vector<std::pair<index_type, index_type>> sorted;
        // One element's contribution to the lists of one owned node.
        struct Contribution
        {
          index_type    column_node; // -1: the owned node itself
          index_type    j;           // element position in E_k
          std::uint16_t entry;
          std::uint8_t  a, b; // local positions of row and column node
          bool
          operator<(const Contribution &other) const
          {
            return column_node < other.column_node ||
                   (column_node == other.column_node && j < other.j);
          }
        };
        std::vector<Contribution> contributions;
        std::vector<unsigned int> original;
        // Diagonal lists (0) and the others (1), with their targets.
        IndexLists              lists[2];
        std::vector<index_type> list_targets[2];
        // Per list, its sources of elements without constraints (first in
        // a list, as in E_k): pack_lists_aligned() lines up the rest.
        std::vector<unsigned int> list_free[2], first_run;
        IndexLists                ended;
        std::vector<index_type>   packed;
        AlignedRows               shapes;
        for (unsigned int k = begin; k < end; ++k)
          {
            Block &b = blocks[k];
            owned.assign(owned_nodes.begin() + owned_offsets[k],
                         owned_nodes.begin() + owned_offsets[k + 1]);
            elements_and_halo(arrays, elements_of, owned, b.elements, b.halo);
            // Element number -> position in E_k after the reordering
            // below, found by binary search in E_k's sorted copy.
            sorted.clear();
            for (const index_type e : b.elements)
              sorted.emplace_back(e, 0);
            // Elements with constraints last, so that the warps of the
            // others skip the condensation instead of waiting for it; the
            // others grouped by which of their nodes the part owns, so that
            // the threads of a warp skip the same rows (kernels may skip
            // the rows a block discards: output_may_discard_rows) and write
            // neighbouring slots.
            const auto owns = [&](const std::size_t e, const unsigned int a) {
              return block_of_node[arrays.connectivity[e * n_en + a]] == k;
            };
            const auto order = [&](const index_type e) {
              unsigned int owned = 0;
              for (unsigned int a = 0; a < n_en && a < 32; ++a)
                if (owns(e, a))
                  owned |= 1u << a;
              // Reordered, the owned nodes come first: only their number
              // tells elements apart.
              if (reorder_nodes && !constrained[e])
                owned = (1u << __builtin_popcount(owned)) - 1;
              return std::make_pair(constrained[e] != 0, owned);
            };
            std::stable_sort(b.elements.begin(),
                             b.elements.end(),
                             [&](const index_type e1, const index_type e2) {
                               return order(e1) < order(e2);
                             });
            const std::size_t n_k = b.elements.size();
            for (std::size_t j = 0; j < n_k; ++j)
              std::lower_bound(sorted.begin(),
                               sorted.end(),
                               std::make_pair(b.elements[j], index_type(0)))
                ->second = j;
            b.connectivity.resize(n_en * n_k);
            b.slots.assign(n_en * n_k, SharedNZLayout::no_slot);
            b.location.resize(n_ed * n_k);
            b.supplemental.assign(
              node_pairs ? SharedNZLayout::staged_size(n_k, n_supplemental) :
                           n_supplemental * n_k,
              0.);
            b.has_constraints.assign(n_k, 0);
            // Local node a of the j-th element of E_k is the element's node
            // original[j * n_en + a]: the owned nodes first, where nodes may
            // be reordered.
            original.resize(n_en * n_k);
            for (std::size_t j = 0; j < n_k; ++j)
              {
                const std::size_t e     = b.elements[j];
                unsigned int     *order = original.data() + j * n_en;
                std::iota(order, order + n_en, 0u);
                if (reorder_nodes && !constrained[e])
                  std::stable_partition(order,
                                        order + n_en,
                                        [&](const unsigned int a) {
                                          return owns(e, a);
                                        });
                for (unsigned int a = 0; a < n_en; ++a)
                  b.connectivity[a * n_k + j] =
                    std::lower_bound(b.halo.begin(),
                                     b.halo.end(),
                                     arrays.connectivity[e * n_en + order[a]]) -
                    b.halo.begin();
                // S(e) of the reordered element: JxW, then the gradients of
                // its nodes in their new order; element by element for node
                // pairs (SharedNZLayout::node_pair_regions()), column by
                // column where a thread computes an element.
                for (unsigned int i = 0; i < n_supplemental; ++i)
                  b.supplemental[node_pairs ? j * n_supplemental + i :
                                              i * n_k + j] =
                    arrays.supplemental[e * n_supplemental +
                                        (i == 0 || !reorder_nodes ?
                                           i :
                                           1 + order[(i - 1) / dim] * dim +
                                             (i - 1) % dim)];
                for (unsigned int d = 0; d < n_ed; ++d)
                  {
                    const index_type dof =
                      arrays
                        .location[e * n_ed + order[d / n_c] * n_c + d % n_c];
                    b.location[d * n_k + j] = dof;
                    if (arrays.dof_is_constrained[dof])
                      b.has_constraints[j] = 1;
                  }
              }
            // With node pairs no element has slots: the reduction computes
            // them all, those without constraints first in E_k.
            if (node_pairs)
              b.n_free = std::count(b.has_constraints.begin(),
                                    b.has_constraints.end(),
                                    0);
            // Slots node by node, then element by element, so that the
            // threads of a warp write neighbouring words.
            const auto node_of = [&](const std::size_t  j,
                                     const unsigned int a) {
              return arrays
                .connectivity[b.elements[j] * n_en + original[j * n_en + a]];
            };
            index_type slot = 0;
            for (unsigned int a = 0; a < n_en; ++a)
              for (std::size_t j = 0; j < n_k; ++j)
                if (!node_pairs &&
                    (b.has_constraints[j] || block_of_node[node_of(j, a)] == k))
                  b.slots[a * n_k + j] = slot++;
            b.n_slots = slot;

            // Node-pair lists of each owned node: sources in element order,
            // targets from the first source's element.
            for (unsigned int d = 0; d < 2; ++d)
              {
                lists[d].clear();
                list_targets[d].clear();
                list_free[d].clear();
              }
            for (const index_type n : owned)
              {
                contributions.clear();
                for (std::size_t i = elements_of.offsets[n];
                     i < elements_of.offsets[n + 1];
                     ++i)
                  {
                    const std::size_t e = elements_of.entries[i];
                    const index_type  j =
                      std::lower_bound(sorted.begin(),
                                       sorted.end(),
                                       std::make_pair(index_type(e),
                                                      index_type(0)))
                        ->second;
                    unsigned int a = 0;
                    while (node_of(j, a) != n)
                      ++a;
                    const unsigned int s = b.slots[a * n_k + j];
                    for (unsigned int c = 0; c < n_en; ++c)
                      {
                        const index_type m = node_of(j, c);
                        // Sources in the block's node order, targets
                        // through the element's own.
                        contributions.push_back(
                          {m == n ? -1 : m,
                           j,
                           node_pairs ?
                             SharedNZLayout::encode_node_pair(j,
                                                              a,
                                                              c,
                                                              n_en,
                                                              m == n) :
                             SharedNZLayout::encode_source(s, c, n_en, m == n),
                           static_cast<std::uint8_t>(original[j * n_en + a]),
                           static_cast<std::uint8_t>(original[j * n_en + c])});
                      }
                  }
                std::sort(contributions.begin(), contributions.end());
                for (std::size_t i = 0; i < contributions.size();)
                  {
                    const Contribution &first    = contributions[i];
                    const unsigned int  diagonal = first.column_node < 0;
                    IndexLists         &into     = lists[1 - diagonal];
                    unsigned int        n_free   = 0;
                    for (; i < contributions.size() &&
                           contributions[i].column_node == first.column_node;
                         ++i)
                      {
                        into.entries.push_back(contributions[i].entry);
                        n_free += !node_pairs || contributions[i].j < b.n_free;
                      }
                    into.offsets.push_back(into.entries.size());
                    list_free[1 - diagonal].push_back(n_free);
                    const std::size_t e = b.elements[first.j];
                    const std::size_t row =
                      (e * n_ed + first.a * n_c) * n_ed + first.b * n_c;
                    for (unsigned int c1 = 0; c1 < n_c; ++c1)
                      for (unsigned int c2 = 0; c2 < n_c; ++c2)
                        list_targets[1 - diagonal].push_back(
                          arrays.nonzero_map[row + c1 * n_ed + c2]);
                    if (diagonal)
                      for (unsigned int c1 = 0; c1 < n_c; ++c1)
                        list_targets[0].push_back(
                          arrays.location[e * n_ed + first.a * n_c + c1]);
                  }
              }

            // Diagonal lists first, each ended by a closing entry that the
            // packing replaces with its row's (shapes.close below).
            b.n_diagonal = lists[0].n_lists();
            ended.clear();
            first_run.clear();
            for (unsigned int d = 0; d < 2; ++d)
              for (unsigned int i = 0; i < lists[d].n_lists(); ++i)
                {
                  ended.entries.insert(ended.entries.end(),
                                       lists[d].entries.begin() +
                                         lists[d].offsets[i],
                                       lists[d].entries.begin() +
                                         lists[d].offsets[i + 1]);
                  ended.entries.push_back(SharedNZLayout::end_flag);
                  ended.offsets.push_back(ended.entries.size());
                  first_run.push_back(list_free[d][i]);
                }
            // Rows of 32 lists that a warp closes together, the diagonal
            // lists leading theirs and the long ones halved
            // (SharedNZLayout::RowClose); with node pairs in list order, so
            // that a row node's lists close side by side and store to
            // neighbouring nonzeros.
            shapes = AlignedRows();
            shapes.leading.assign(ended.n_lists(), 0);
            std::fill_n(shapes.leading.begin(), b.n_diagonal, 1);
            shapes.max_leading   = SharedNZLayout::max_row_diagonal;
            shapes.halve_leading = parameters.halve_diagonal_lists;
            shapes.close         = [](const unsigned int n_lists,
                              const unsigned int n_diagonal,
                              const unsigned int n_halved) {
              return index_type(SharedNZLayout::encode_row_close(n_lists,
                                                                 n_diagonal,
                                                                 n_halved));
            };
            packed.clear();
            b.slice_ends.clear();
            pack_lists_aligned(ended,
                               first_run,
                               T,
                               SharedNZLayout::row_width,
                               packed,
                               b.slice_ends,
                               SharedNZLayout::chunk,
                               node_pairs && parameters.lists_in_column_order,
                               &shapes);
            // The targets row by row, as the warps reach them
            // (SharedNZLayout::block_target(), rhs_target()).
            const auto list_target = [&](const unsigned int l) {
              return l < static_cast<unsigned int>(b.n_diagonal) ?
                       list_targets[0].data() + l * (n_c * n_c + n_c) :
                       list_targets[1].data() + (l - b.n_diagonal) * n_c * n_c;
            };
            b.targets.clear();
            b.target_slice_ends.clear();
            for (std::size_t r = 0; r + 1 < shapes.offsets.size(); ++r)
              {
                while (b.target_slice_ends.size() < shapes.slice[r])
                  b.target_slice_ends.push_back(b.targets.size());
                const unsigned int *row =
                  shapes.lists.data() + shapes.offsets[r];
                const unsigned int n_row =
                  shapes.offsets[r + 1] - shapes.offsets[r];
                for (unsigned int c1 = 0; c1 < n_c; ++c1)
                  for (unsigned int i = 0; i < n_row; ++i)
                    for (unsigned int c2 = 0; c2 < n_c; ++c2)
                      b.targets.push_back(list_target(row[i])[c1 * n_c + c2]);
                for (unsigned int i = 0; i < shapes.n_leading[r]; ++i)
                  for (unsigned int c1 = 0; c1 < n_c; ++c1)
                    b.targets.push_back(list_target(row[i])[n_c * n_c + c1]);
              }
            while (b.target_slice_ends.size() < T / SharedNZLayout::row_width)
              b.target_slice_ends.push_back(b.targets.size());
            b.sources.assign(packed.begin(), packed.end());
          }
      },
      16);

    // Concatenate in block order.
    const auto concatenate = [&](auto member, auto &result, auto &offsets) {
      offsets.assign(n_blocks + 1, 0);
      for (unsigned int k = 0; k < n_blocks; ++k)
        offsets[k + 1] = offsets[k] + (blocks[k].*member).size();
      result.resize(offsets.back());
      dealii::parallel::apply_to_subranges(
        0u,
        n_blocks,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int k = begin; k < end; ++k)
            std::copy((blocks[k].*member).begin(),
                      (blocks[k].*member).end(),
                      result.begin() + offsets[k]);
        },
        64);
    };
    std::vector<std::size_t> scratch_offsets;
    concatenate(&Block::halo, halo_nodes, halo_offsets);
    concatenate(&Block::elements, elements, element_offsets);
    concatenate(&Block::connectivity, block_connectivity, scratch_offsets);
    concatenate(&Block::slots, block_slots, scratch_offsets);
    concatenate(&Block::location, block_location, scratch_offsets);
    concatenate(&Block::supplemental, block_supplemental, supplemental_offsets);
    concatenate(&Block::has_constraints,
                block_has_constraints,
                scratch_offsets);
    // Sources and targets warp by warp: each block's own ends of its
    // warps' shares, shifted to where the block begins.
    const unsigned int W                 = T / 32;
    const auto         concatenate_warps = [&](auto                      member,
                                       auto                      ends,
                                       auto                     &result,
                                       std::vector<std::size_t> &offsets) {
      std::vector<std::size_t> block_offsets;
      concatenate(member, result, block_offsets);
      offsets.assign(std::size_t(n_blocks) * W + 1, 0);
      for (unsigned int k = 0; k < n_blocks; ++k)
        for (unsigned int w = 0; w < W; ++w)
          offsets[std::size_t(k) * W + w + 1] =
            block_offsets[k] + (blocks[k].*ends)[w];
    };
    concatenate_warps(&Block::sources,
                      &Block::slice_ends,
                      sources,
                      slice_offsets);
    concatenate_warps(&Block::targets,
                      &Block::target_slice_ends,
                      targets,
                      target_offsets);
    n_slots.resize(n_blocks);
    n_free_elements.resize(n_blocks);
    n_diagonal_lists.resize(n_blocks);
    max_shared_bytes = 0;
    for (unsigned int k = 0; k < n_blocks; ++k)
      {
        n_slots[k]          = blocks[k].n_slots;
        n_free_elements[k]  = blocks[k].n_free;
        n_diagonal_lists[k] = blocks[k].n_diagonal;
        max_shared_bytes =
          std::max(max_shared_bytes, shared_bytes(k, number_size));
      }
    recomputation_factor = double(elements.size()) / arrays.n_elements;
  }
} // namespace GPUAssembly
