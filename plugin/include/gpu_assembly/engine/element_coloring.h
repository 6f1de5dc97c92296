// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_element_coloring_h
#define gpu_assembly_engine_element_coloring_h

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <vector>

namespace GPUAssembly
{
  /**
   * Colour the elements so that no two elements of one colour share a node.
   * Elements of one colour then write disjoint rows of the matrix and the
   * vector, so they can be assembled concurrently without atomics.
   *
   * First fit over the elements in their order (cell order), with the
   * colours already taken at each node as a bitset: every element gets the
   * smallest colour none of its nodes has. That costs O(elements x nodes per
   * element x colours / 64) time, one thread, and the colouring depends on
   * the mesh alone, not on the number of threads. The number of colours is
   * not capped; it is at most one more than the largest number of other
   * elements that one element shares a node with. Colours are numbered by first
   * use, so the first ones tend to be the largest. Each colour's elements are
   * sorted in increasing order.
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
