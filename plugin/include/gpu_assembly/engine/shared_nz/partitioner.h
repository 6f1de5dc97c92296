// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_shared_nz_partitioner_h
#define gpu_assembly_engine_shared_nz_partitioner_h

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <cstddef>
#include <vector>

namespace GPUAssembly
{
  /**
   * How SharedNZ partitions the nodes.
   */
  enum class NodePartitioner
  {
    /// greedy_growth with node pairs, else greedy_union: the one that
    /// makes fewer elements computed twice in each layout.
    automatic,
    /// The greedy union partitioner of Sec. 16.3.2 of the GPU Gems chapter.
    greedy_union,
    /// Parts grown node by node, each taking the neighbouring node that
    /// adds the fewest elements until the next would not fit: fuller parts
    /// than the greedy union's, whose parts only join whole.
    greedy_growth,
    /// METIS (k-way on the node graph), with more parts until every part
    /// fits in shared memory.
    metis
  };



  /**
   * Partition the nodes so that each part's data fit in
   * @p shared_memory_limit bytes: a part P needs
   *   (|Nbar(P)| * n_fields + (n_slots(P) + 1) * slot_size) * number_size,
   * with Nbar(P) the nodes of the elements touching P and n_slots(P) the
   * element rows P keeps (SharedNZLayout): one slot per element of each node
   * of P, and n_nodes - 1 more for each element with a constrained DoF
   * (bounded so that the sizes of parts add up), slot_size =
   * SharedNZLayout::slot_size(n_components, n_dofs), and one slot's worth
   * for the sink of the rows a block discards. The slots must also be few
   * enough for the 16-bit reduction entries, and the elements touching P no
   * more than @p threads_per_block, so that each thread computes one
   * element. With @p node_pairs (SharedNZPlan::Parameters::node_pairs) no
   * element has slots and there is no halo in shared memory: every element
   * touching P adds its S(e) (n_supplemental numbers), one with a
   * constrained DoF its Dirichlet data (n_dofs numbers and a 64-bit mask,
   * counted once for each node of P it has), and its node pairs must fit
   * the 16-bit sources (SharedNZLayout::node_pair_bytes()). Returns the
   * part of every node. Throws ExcUnsupportedInput if a single node does
   * not fit.
   */
  std::vector<unsigned int>
  partition_nodes(const MeshArrays     &arrays,
                  const NodePartitioner partitioner,
                  const unsigned int    n_fields,
                  const std::size_t     number_size,
                  const std::size_t     shared_memory_limit,
                  const unsigned int    threads_per_block,
                  const bool            node_pairs = false);



} // namespace GPUAssembly

#endif
