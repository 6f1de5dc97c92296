// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_local_elem_plan_h
#define gpu_assembly_engine_local_elem_plan_h

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <vector>

namespace GPUAssembly
{
  /**
   * The order in which LocalElem's threads take the elements: Morton order
   * for the atomic launch (neighbours in a warp share nodes, which the cache
   * rewards), or for the coloured launches colour by colour of a mesh
   * colouring (color_elements(): first fit, no two elements of a colour
   * share a node), each colour in Morton order.
   */
  struct LocalElemPlan
  {
    /**
     * LocalElem's choice: a tuning value for benchmarks, whose default is
     * what every assembly should use.
     */
    struct Parameters
    {
      /// Threads per block of the LocalElem kernels.
      unsigned int block_size = 128;
    };

    /// Element of each thread, colour after colour.
    std::vector<index_type> element_order;
    /// Colour c is element_order[color_offsets[c], color_offsets[c + 1]);
    /// empty for the atomic launch.
    std::vector<unsigned int> color_offsets;

    void
    reinit(const MeshArrays &arrays, const bool colored);

    /// Number of colours (0 for the atomic launch).
    unsigned int
    n_colors() const
    {
      return color_offsets.empty() ? 0 : color_offsets.size() - 1;
    }
  };
} // namespace GPUAssembly

#endif
