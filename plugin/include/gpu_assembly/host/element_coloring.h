// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_host_element_coloring_h
#define gpu_assembly_host_element_coloring_h

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <vector>

namespace GPUAssembly
{
  /**
   * Colour the elements so that no two elements of one colour share a node
   * (deal.II's GraphColoring::make_graph_coloring with the element's nodes
   * as conflict indices). Elements of one colour then write disjoint rows of
   * the matrix and the vector, so they can be assembled concurrently without
   * atomics, and the result does not depend on the number of threads.
   */
  std::vector<std::vector<unsigned int>>
  color_elements(const MeshArrays &arrays);

  /**
   * Whether @p colors is a valid colouring of all elements of @p arrays:
   * every element appears exactly once and no two elements of one colour
   * share a node.
   */
  bool
  is_valid_coloring(const MeshArrays                             &arrays,
                    const std::vector<std::vector<unsigned int>> &colors);
} // namespace GPUAssembly

#endif
