// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/parallel.h>

#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/engine/element_coloring.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/local_elem/plan.h>

#include <algorithm>

namespace GPUAssembly
{
  void
  LocalElemPlan::reinit(const MeshArrays &arrays, const bool colored)
  {
    SetupTimes::Scope             scope("LocalElem plan");
    const std::vector<index_type> morton = morton_element_order(arrays);
    element_order.clear();
    color_offsets.clear();
    if (!colored)
      {
        element_order = morton;
        return;
      }
    std::vector<unsigned int> rank(arrays.n_elements);
    for (unsigned int s = 0; s < morton.size(); ++s)
      rank[morton[s]] = s;
    // Each colour in Z-order; the colours are sorted in parallel, each by
    // one thread, so the order does not depend on the threads.
    std::vector<std::vector<unsigned int>> colors = color_elements(arrays);
    dealii::parallel::apply_to_subranges(
      std::size_t(0),
      colors.size(),
      [&](const std::size_t begin, const std::size_t end) {
        for (std::size_t c = begin; c < end; ++c)
          std::sort(colors[c].begin(),
                    colors[c].end(),
                    [&](const unsigned int a, const unsigned int b) {
                      return rank[a] < rank[b];
                    });
      },
      1);
    color_offsets.push_back(0);
    for (const auto &color : colors)
      {
        element_order.insert(element_order.end(), color.begin(), color.end());
        color_offsets.push_back(element_order.size());
      }
  }
} // namespace GPUAssembly
