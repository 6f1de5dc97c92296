// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_shared_nz_plan_h
#define gpu_assembly_engine_shared_nz_plan_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/engine/shared_nz/partitioner.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace GPUAssembly
{
  /**
   * The precomputed structures of SharedNZ (Sec. 16.3.2): a thread block per
   * node part P_k fetches the halo nodal data Nbar_k into shared memory,
   * computes every element E_k touching P_k with a thread per element, and
   * keeps in shared memory the rows of the element data that P_k's rows
   * need (SharedNZLayout); then it assembles all nonzeros and
   * right-hand-side entries of P_k's rows straight into the value arrays.
   * Element data never leave the chip; elements on part boundaries are
   * computed by each part they touch, but each of their rows is kept by
   * one part only. With Parameters::node_pairs the block keeps S(e)
   * instead, and the reduction computes each element's node-pair blocks
   * where it sums them.
   *
   * The reduction is organised by node pairs: a list sums, for an owned node
   * n and a node m sharing an element with n, the n_c x n_c blocks of the
   * elements of the edge (n, m), and stores them to the n_c^2 nonzeros of
   * (n, m) (and, for m = n, the n_c right-hand-side rows of n). A list's
   * sources are 16-bit shared-memory offsets, one per element rather than
   * one per nonzero, so the lists cost about 2 bytes per element and node
   * pair; the targets, one 32-bit index per nonzero, are stored list by list.
   */
  struct SharedNZPlan
  {
    /**
     * The plan's input, SharedNZ's choices: the reduction's form, and
     * tuning values for benchmarks, whose defaults are chosen automatically
     * and are what every assembly should use.
     */
    struct Parameters
    {
      NodePartitioner partitioner = NodePartitioner::automatic;
      /// Threads per block; 0: automatic (resolved()).
      unsigned int threads_per_block = 0;
      /// Shared memory a block may use, in bytes; 0: the device's shared
      /// memory per multiprocessor shared by blocks_per_multiprocessor
      /// blocks. Less lets several blocks share a multiprocessor, at the
      /// price of smaller parts and more recomputed elements.
      std::size_t shared_memory_per_block = 0;
      /// Blocks that share a multiprocessor where shared_memory_per_block
      /// is 0; 0: automatic (resolved()). Two overlap one block's element
      /// phase with the other's reduction.
      unsigned int blocks_per_multiprocessor = 0;

      /**
       * Compute the element data inside the reduction, node pair by node
       * pair, from S(e) staged in shared memory (kernel_has_node_pair_form;
       * the kernel must read no nodal data). A block then keeps S(e) of
       * each of its elements (13 numbers for a linear tetrahedron in 3D)
       * instead of the rows its nodes need (about 1.7 rows of 39): parts
       * hold several times as many elements, fewer elements are staged by
       * more than one block, and no element is computed ahead of the
       * reduction. Elements with a constrained DoF add their Dirichlet data
       * (which DoFs are constrained, and their inhomogeneities), and each
       * node pair applies its share of the condensation
       * (add_condensed_node_pair()). It pays where S(e) is small against
       * the rows a block keeps, as for linear simplices; a trilinear
       * hexahedron's S(e) at 8 points is 200 numbers, and its parts would
       * hold fewer elements. Elements of more than 64 DoFs are refused.
       * assemble() with a kernel that has no node-pair form throws.
       */
      bool node_pairs = false;

      /**
       * With node_pairs: the device reads the reduction's targets in their
       * compact form (compact_targets below; SharedNZLayout's compact
       * records), a few words per row of 32 lists instead of a 32-bit index
       * per nonzero, and finds each nonzero from its run. Sums and stores
       * are those of the full form, so the values are bitwise the same;
       * only what the reduction reads changes (on tetrahedra of linear
       * elasticity under 1 byte per nonzero instead of 4; the full targets
       * are not uploaded). Refused without node_pairs.
       */
      bool compact_targets = false;

      /**
       * These parameters with the automatic (0) threads_per_block and
       * blocks_per_multiprocessor resolved for elements of
       * @p n_nodes_per_element nodes: four blocks of 128 threads per
       * multiprocessor with node_pairs on elements of at most 4 nodes
       * (linear simplices, bilinear quadrilaterals), whose S(e) is small,
       * else two of 256. With node pairs the smaller parts stage more
       * elements twice, but a block's four warps share out its lists
       * better; the S(e) of an element of more nodes is larger, and a
       * node's elements might not fit a quarter of the shared memory.
       */
      Parameters
      resolved(const unsigned int n_nodes_per_element) const
      {
        Parameters result   = *this;
        const bool quarters = node_pairs && n_nodes_per_element <= 4;
        if (result.threads_per_block == 0)
          result.threads_per_block = quarters ? 128 : 256;
        if (result.blocks_per_multiprocessor == 0)
          result.blocks_per_multiprocessor = quarters ? 4 : 2;
        return result;
      }
    };

    Parameters parameters;

    unsigned int n_blocks            = 0;
    unsigned int n_nodes_per_element = 0;
    unsigned int n_dofs_per_element  = 0;
    unsigned int n_components        = 0;
    unsigned int n_supplemental      = 0;
    std::size_t  n_nonzeros          = 0;
    unsigned int n_dofs              = 0;
    unsigned int n_fields            = 0;

    /// P_k: owned_nodes[owned_offsets[k] ...] (global node numbers, sorted).
    std::vector<index_type> owned_offsets;
    std::vector<index_type> owned_nodes;
    /// Nbar_k: halo_nodes[halo_offsets[k] ...] (global node numbers).
    std::vector<index_type> halo_offsets;
    std::vector<index_type> halo_nodes;
    /// E_k: elements[element_offsets[k] ...] (global element numbers; those
    /// with a constrained DoF last, so that the warps of the others skip the
    /// condensation).
    std::vector<index_type> element_offsets;
    std::vector<index_type> elements;
    /// Block-local node (index into Nbar_k) of node a of the j-th element
    /// of block k: element_offsets[k] * n_nodes + a * n_k + j. Local node a
    /// is the element's own node a, or where the order of an element's
    /// nodes is free (linear simplices with one quadrature point) the a-th
    /// in an order with the part's nodes first; S(e) and L(e, .)
    /// below follow the same order.
    std::vector<index_type> block_connectivity;
    /// Slot (SharedNZLayout) of node a of the j-th element of block k, same
    /// layout as block_connectivity; SharedNZLayout::no_slot if none.
    std::vector<std::uint16_t> block_slots;
    /// Slots of block k (none with Parameters::node_pairs).
    std::vector<index_type> n_slots;
    /// Elements of block k without a constrained DoF, first in E_k, with
    /// Parameters::node_pairs (else 0).
    std::vector<index_type> n_free_elements;
    /// S(e), same layout with n_supplemental rows, block k's from
    /// supplemental_offsets[k]; with Parameters::node_pairs element by
    /// element instead (entry i of the j-th element at j * n_supplemental +
    /// i), as the block keeps it in shared memory, and padded to
    /// SharedNZLayout::staged_size() numbers, so that every block's starts
    /// 16-byte aligned in both precisions.
    std::vector<std::size_t> supplemental_offsets;
    std::vector<double>      block_supplemental;
    /// L(e, d), same layout with n_dofs rows (for the condensation).
    std::vector<index_type>    block_location;
    std::vector<unsigned char> block_has_constraints;

    /// Block k's reduction stream (SharedNZLayout's entries): its lists in
    /// rows of 32 that a warp walks in lockstep, the rows dealt to the warps
    /// by LPT (pack_lists_aligned()): the lanes of a row close their lists
    /// at the same step, and with node pairs reach their elements with
    /// constraints at the same step, instead of each kind of entry holding
    /// up the warp at a different step; every lane of the warp has the
    /// row's closing entry (SharedNZLayout::RowClose), and the warp stores
    /// the row together. With node pairs, lists of equal second runs keep
    /// their order (pack_lists_aligned()'s keep_list_order), so that a row
    /// node's lists close side by side and store to neighbouring nonzeros.
    /// Warp w of block k reads
    /// sources[slice_offsets[k * W + w], slice_offsets[k * W + w + 1]) with
    /// W = threads_per_block / 32, in chunks of SharedNZLayout::chunk
    /// entries: entry j of its lane l at ((j / chunk) * 32 + l) * chunk + j
    /// % chunk. The diagonal lists (m = n) lead their rows, the long ones
    /// halved (SharedNZLayout::RowClose).
    std::vector<std::size_t>   slice_offsets;
    std::vector<std::uint16_t> sources;
    /// Diagonal lists of block k (its owned nodes that have elements).
    std::vector<index_type> n_diagonal_lists;
    /// Targets of the rows warp w of block k walks, from
    /// target_offsets[k * W + w] on, row after row in the order the warp
    /// reaches them, each laid out as SharedNZLayout::block_target() and
    /// rhs_target() say: nonzero indices (-1 where the pattern has no
    /// nonzero), then the DoFs of the diagonal lists' nodes.
    std::vector<std::size_t> target_offsets;
    std::vector<index_type>  targets;
    /// With Parameters::compact_targets, the same rows as compact records
    /// (SharedNZLayout::append_compact_row()), warp w of block k's from
    /// compact_target_offsets[k * W + w] on; else empty.
    std::vector<std::size_t> compact_target_offsets;
    std::vector<index_type>  compact_targets;

    /// Largest shared memory a block needs, in bytes.
    std::size_t max_shared_bytes = 0;
    /// Element computations (or, with node pairs, stagings of S(e)) per
    /// element of the mesh (>= 1: boundary elements of parts are computed
    /// more than once).
    double recomputation_factor = 0;

    /// Shared memory of block k, in bytes.
    std::size_t
    shared_bytes(const unsigned int k, const std::size_t number_size) const;

    void
    reinit(const MeshArrays  &arrays,
           const Parameters  &parameters,
           const unsigned int n_fields,
           const std::size_t  number_size,
           const std::size_t  shared_memory_limit);

    std::size_t
    memory_consumption() const;

  private:
    /// Throws for parameters or mesh arrays the plan cannot hold.
    void
    check_input(const MeshArrays &arrays) const;

    /// Renumbers the parts of @p part_of densely in the order of their
    /// first node into n_blocks, owned_offsets and owned_nodes; returns
    /// the block of every node.
    std::vector<unsigned int>
    number_blocks(const std::vector<unsigned int> &part_of);
  };
} // namespace GPUAssembly

#endif
