// SPDX-License-Identifier: LGPL-2.1-or-later
#include "node_graph.h"

#include <deal.II/base/parallel.h>

#include <gpu_assembly/base/exceptions.h>

#include <algorithm>
#include <numeric>

namespace GPUAssembly
{
  namespace internal
  {
    namespace SharedNZ
    {
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
