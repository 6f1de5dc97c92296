// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_wave_node_partitioner_h
#define gpu_assembly_wave_node_partitioner_h

#include <string>
#include <vector>

namespace GPUAssembly
{
  namespace Wave
  {
    struct WaveMesh;

    /**
     * The partitioners of Pogo's Sec. 3.1.
     */
    enum class PartitionerType
    {
      /// Klöckner et al.'s greedy partitioner: blocks grown breadth-first
      /// from a seed node until full.
      greedy,
      /// Pogo's "aligned" advancing-front partitioner: blocks start as
      /// lengths of the outer boundary and advance row by row into the
      /// domain, with a test advance that joins and splits blocks first.
      aligned
    };

    PartitionerType
    parse_partitioner_type(const std::string &name);

    std::string
    to_string(const PartitionerType type);

    /**
     * Limits a block of nodes must respect to run as one GPU thread block.
     */
    struct BlockLimits
    {
      /// Threads (and so nodes) per GPU block, a multiple of 32. Pogo: 512.
      unsigned int max_block_size = 512;
      /// Nodes of other blocks that one block may read (its halo), which
      /// with the block's own nodes must fit into shared memory.
      unsigned int max_halo_nodes = 512;
    };

    /**
     * A partition of the nodes into blocks: the nodes of block b are
     * nodes[block_offsets[b] .. block_offsets[b + 1]).
     */
    struct NodeBlocks
    {
      BlockLimits               limits;
      std::vector<unsigned int> block_offsets = {0};
      std::vector<unsigned int> nodes;

      unsigned int
      n_blocks() const
      {
        return block_offsets.size() - 1;
      }

      unsigned int
      block_size(const unsigned int b) const
      {
        return block_offsets[b + 1] - block_offsets[b];
      }

      /**
       * Pogo's block efficiency eta = n_nodes / (n_blocks * block size).
       */
      double
      efficiency() const;

      /// The largest halo over all blocks (nodes of other blocks linked to
      /// the block's nodes).
      unsigned int
      max_halo(const std::vector<unsigned int> &graph_offsets,
               const std::vector<unsigned int> &graph_neighbours) const;
    };

    /**
     * Greedy partitioner: breadth-first growth from the lowest-numbered
     * unassigned node next to the previous block.
     */
    NodeBlocks
    partition_greedy(const std::vector<unsigned int> &graph_offsets,
                     const std::vector<unsigned int> &graph_neighbours,
                     const BlockLimits               &limits);

    /**
     * Pogo's aligned partitioner (Sec. 3.1, steps 1-10, with the constants
     * scaled to the block size as the paper suggests: boundary length
     * B = sqrt(2 n), test advance R = 1.25 n / B rows, S_l = 0.6 R B,
     * S_u = 1.55 R B). Trapped blocks are deactivated and children that
     * are not contiguous are split, as the paper describes for internal
     * boundaries. Nodes the fronts never reach (parts of the mesh not
     * connected to the outer boundary) are partitioned greedily.
     */
    NodeBlocks
    partition_aligned(const WaveMesh                  &mesh,
                      const std::vector<unsigned int> &graph_offsets,
                      const std::vector<unsigned int> &graph_neighbours,
                      const BlockLimits               &limits);

    /**
     * Split every block whose size or halo exceeds @p blocks.limits into
     * two, by advancing from its two ends until the fronts meet (the
     * split of Sec. 3.1 step 5b), until all blocks comply. Pogo does the
     * same for blocks that fail its memory arrangement (Sec. 3.2).
     */
    void
    enforce_block_limits(const std::vector<unsigned int> &graph_offsets,
                         const std::vector<unsigned int> &graph_neighbours,
                         NodeBlocks                      &blocks);

    /**
     * Throws unless every node 0 .. n_nodes - 1 is in exactly one block and
     * every block respects the limits.
     */
    void
    check_partition(const unsigned int               n_nodes,
                    const std::vector<unsigned int> &graph_offsets,
                    const std::vector<unsigned int> &graph_neighbours,
                    const NodeBlocks                &blocks);

    /**
     * Partition with @p type, then enforce the limits and check the
     * result.
     */
    NodeBlocks
    partition_nodes(const PartitionerType            type,
                    const WaveMesh                  &mesh,
                    const std::vector<unsigned int> &graph_offsets,
                    const std::vector<unsigned int> &graph_neighbours,
                    const BlockLimits               &limits);
  } // namespace Wave
} // namespace GPUAssembly

#endif
