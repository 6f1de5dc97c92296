// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/local_elem/plan.h>
#include <gpu_assembly/host/element_coloring.h>

#include <algorithm>

namespace GPUAssembly
{
  void
  LocalElemPlan::reinit(const MeshArrays &arrays, const bool colored)
  {
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
    color_offsets.push_back(0);
    for (auto color : color_elements(arrays))
      {
        std::sort(color.begin(),
                  color.end(),
                  [&](const unsigned int a, const unsigned int b) {
                    return rank[a] < rank[b];
                  });
        element_order.insert(element_order.end(), color.begin(), color.end());
        color_offsets.push_back(element_order.size());
      }
  }
} // namespace GPUAssembly
