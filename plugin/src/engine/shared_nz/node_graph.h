// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_engine_shared_nz_node_graph_h
#define gpu_assembly_src_engine_shared_nz_node_graph_h

// The node and element graph of a mesh that SharedNZ's partitioners and
// its plan both walk, and GlobalNZ's plan in part (not installed).

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/engine/shared_nz/partitioner.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace GPUAssembly
{
  namespace internal
  {
    namespace SharedNZ
    {
      // Compressed lists: list i is entries[offsets[i], offsets[i+1]).
      struct Csr
      {
        std::vector<std::size_t> offsets;
        std::vector<index_type>  entries;
      };

      // Elements of every node, in increasing order, built in parallel.
      Csr
      node_to_elements(const MeshArrays &arrays);

      // Whether each element has a DoF flagged in @p dof_flags (one per
      // DoF), in parallel.
      std::vector<unsigned char>
      elements_touching(const MeshArrays                &arrays,
                        const std::vector<std::uint8_t> &dof_flags);

      // Whether each element touches a constrained DoF.
      std::vector<unsigned char>
      constrained_elements(const MeshArrays &arrays);

      // Nodes sharing an element with each node (itself included), sorted.
      Csr
      node_neighbors(const MeshArrays &arrays, const Csr &elements_of);

      // Sorted elements and halo nodes of a set of nodes.
      void
      elements_and_halo(const MeshArrays              &arrays,
                        const Csr                     &elements_of,
                        const std::vector<index_type> &nodes,
                        std::vector<index_type>       &elements,
                        std::vector<index_type>       &halo);

      // partition_nodes() on the graph already built.
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
                const bool                        node_pairs);
    } // namespace SharedNZ
  }   // namespace internal
} // namespace GPUAssembly

#endif
