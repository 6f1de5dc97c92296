// SPDX-License-Identifier: LGPL-2.1-or-later
#include "node_graph.h"

#include <deal.II/base/parallel.h>

#include <gpu_assembly/base/exceptions.h>

#include <algorithm>
#include <atomic>
#include <numeric>

namespace GPUAssembly
{
  namespace internal
  {
    namespace SharedNZ
    {
      // Elements of every node, in increasing order. Counted and placed in
      // parallel over the elements (the counts and places by atomic
      // increments, so elements land in a node's list in any order), then
      // each list sorted: the lists of a serial counting sort, whatever the
      // threads.
      Csr
      node_to_elements(const MeshArrays &arrays)
      {
        const unsigned int                    n_en = arrays.layout.n_nodes;
        std::vector<std::atomic<std::size_t>> count(arrays.n_nodes);
        dealii::parallel::apply_to_subranges(
          0u,
          arrays.n_elements,
          [&](const unsigned int begin, const unsigned int end) {
            for (std::size_t e = begin; e < end; ++e)
              for (unsigned int a = 0; a < n_en; ++a)
                count[arrays.connectivity[e * n_en + a]]
                  .fetch_add(1, std::memory_order_relaxed);
          },
          4096);
        Csr result;
        result.offsets.resize(arrays.n_nodes + 1);
        result.offsets[0] = 0;
        for (unsigned int n = 0; n < arrays.n_nodes; ++n)
          {
            result.offsets[n + 1] = result.offsets[n] + count[n];
            // From here on, the next free place in the list of n.
            count[n] = result.offsets[n];
          }
        result.entries.resize(result.offsets.back());
        dealii::parallel::apply_to_subranges(
          0u,
          arrays.n_elements,
          [&](const unsigned int begin, const unsigned int end) {
            for (std::size_t e = begin; e < end; ++e)
              for (unsigned int a = 0; a < n_en; ++a)
                result.entries[count[arrays.connectivity[e * n_en + a]]
                                 .fetch_add(1, std::memory_order_relaxed)] = e;
          },
          4096);
        dealii::parallel::apply_to_subranges(
          0u,
          arrays.n_nodes,
          [&](const unsigned int begin, const unsigned int end) {
            for (unsigned int n = begin; n < end; ++n)
              std::sort(result.entries.begin() + result.offsets[n],
                        result.entries.begin() + result.offsets[n + 1]);
          },
          4096);
        return result;
      }

      std::vector<unsigned char>
      elements_touching(const MeshArrays                &arrays,
                        const std::vector<std::uint8_t> &dof_flags)
      {
        const unsigned int         n_ed = arrays.layout.n_dofs;
        std::vector<unsigned char> result(arrays.n_elements, 0);
        dealii::parallel::apply_to_subranges(
          0u,
          arrays.n_elements,
          [&](const unsigned int begin, const unsigned int end) {
            for (unsigned int e = begin; e < end; ++e)
              for (unsigned int d = 0; d < n_ed; ++d)
                if (dof_flags
                      [arrays.location[static_cast<std::size_t>(e) * n_ed + d]])
                  result[e] = 1;
          },
          4096);
        return result;
      }



      std::vector<unsigned char>
      constrained_elements(const MeshArrays &arrays)
      {
        return elements_touching(arrays, arrays.dof_is_constrained);
      }



      // Nodes sharing an element with each node (itself included), sorted.
      Csr
      node_neighbors(const MeshArrays &arrays, const Csr &elements_of)
      {
        const unsigned int n_en = arrays.layout.n_nodes;
        const unsigned int n    = arrays.n_nodes;
        // Rows are independent: fill fixed-size chunks in parallel, then
        // concatenate in node order.
        constexpr unsigned int               chunk    = 4096;
        const unsigned int                   n_chunks = (n + chunk - 1) / chunk;
        std::vector<std::vector<index_type>> rows(n_chunks);
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
    } // namespace SharedNZ
  }   // namespace internal
} // namespace GPUAssembly
