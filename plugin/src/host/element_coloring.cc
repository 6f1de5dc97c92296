// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/graph_coloring.h>

#include <gpu_assembly/host/element_coloring.h>

#include <algorithm>
#include <numeric>

namespace GPUAssembly
{
  std::vector<std::vector<unsigned int>>
  color_elements(const MeshArrays &arrays)
  {
    AssertDimension(arrays.connectivity.size(),
                    std::size_t(arrays.n_elements) * arrays.layout.n_nodes);
    std::vector<unsigned int> elements(arrays.n_elements);
    std::iota(elements.begin(), elements.end(), 0u);
    if (elements.empty())
      return {};

    using Iterator               = std::vector<unsigned int>::const_iterator;
    const unsigned int n_nodes   = arrays.layout.n_nodes;
    const auto         conflicts = [&](const Iterator &it) {
      const index_type *const E =
        arrays.connectivity.data() + static_cast<std::size_t>(*it) * n_nodes;
      return std::vector<dealii::types::global_dof_index>(E, E + n_nodes);
    };
    const std::vector<std::vector<Iterator>> colored =
      dealii::GraphColoring::make_graph_coloring(elements.cbegin(),
                                                 elements.cend(),
                                                 conflicts);

    std::vector<std::vector<unsigned int>> colors(colored.size());
    for (unsigned int c = 0; c < colored.size(); ++c)
      {
        colors[c].reserve(colored[c].size());
        for (const Iterator &it : colored[c])
          colors[c].push_back(*it);
        // Sorted colours make the assembly order, and so every rounding,
        // independent of how GraphColoring orders its output.
        std::sort(colors[c].begin(), colors[c].end());
      }
    return colors;
  }



  bool
  is_valid_coloring(const MeshArrays                             &arrays,
                    const std::vector<std::vector<unsigned int>> &colors)
  {
    AssertDimension(arrays.connectivity.size(),
                    std::size_t(arrays.n_elements) * arrays.layout.n_nodes);
    std::vector<unsigned int> seen(arrays.n_elements, 0);
    std::vector<int>          node_color(arrays.n_nodes, -1);
    const unsigned int        n_nodes = arrays.layout.n_nodes;
    for (unsigned int c = 0; c < colors.size(); ++c)
      for (const unsigned int e : colors[c])
        {
          if (e >= arrays.n_elements || seen[e]++ > 0)
            return false;
          for (unsigned int a = 0; a < n_nodes; ++a)
            {
              const index_type node =
                arrays.connectivity[static_cast<std::size_t>(e) * n_nodes + a];
              AssertIndexRange(node, arrays.n_nodes);
              if (node_color[node] == static_cast<int>(c))
                return false;
              node_color[node] = c;
            }
        }
    return std::all_of(seen.begin(), seen.end(), [](const unsigned int n) {
      return n == 1;
    });
  }
} // namespace GPUAssembly
