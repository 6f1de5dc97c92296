// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_shared_nz_layout_h
#define gpu_assembly_engine_shared_nz_layout_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/element/element_stage.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace GPUAssembly
{
  /**
   * The on-chip layout of SharedNZ, shared by the plan, the device kernel and
   * its host version so that the three cannot drift apart.
   *
   * A block keeps in shared memory only the rows of the element data that
   * its own nodes' rows need: for every element j touching the part and
   * every local node a of j owned by the part, a slot holds the n_c rows of
   * node a (n_c * n_dofs matrix values and n_c vector values). Elements that
   * touch a constrained DoF get a slot for every node, because the Dirichlet
   * condensation reads the whole element matrix. Slot s, component c,
   * column j (j < n_dofs: matrix, j = n_dofs: vector) is at
   *   s * slot_size(n_c, n_dofs) + c * (n_dofs + 1) + j
   * of the element-data region. Slots lie one after the other so that a
   * thread reaches every entry of a slot at a constant offset from the
   * slot's start: for a linear simplex, whose sizes are constants, the
   * stores of the element kernel and the loads of the reduction then need
   * no address arithmetic. Slot sizes are odd, so that the threads of a
   * warp, each writing the same entry of consecutive slots, meet every
   * shared-memory bank once.
   *
   * A block's shared memory holds, in this order: the row buffer
   * (row_buffer_bytes()), the halo nodal data (n_fields per halo node),
   * the sink of one slot, then the slots. With
   * node pairs (SharedNZPlan::Parameters::node_pairs) it holds no slots
   * and no halo (node_pair_regions()).
   */
  namespace SharedNZLayout
  {
    /// No slot: the block does not keep this row of the element.
    constexpr std::uint16_t no_slot = 0xffff;

    /**
     * Reduction-stream entries (16 bits): 0 is padding; below end_flag a
     * source, encoded as 1 + (index << 1 | diagonal) with index = s * n_nodes
     * + b for the block of column node b in slot s, and diagonal set where
     * the list also sums the right-hand side; end_flag and above close a
     * row of lists, every lane of the warp at the same step (RowClose).
     */
    constexpr std::uint16_t end_flag = 0x8000;

    /// Largest index a source entry can hold: 1 + (max_source_index << 1 | 1)
    /// stays below end_flag.
    constexpr unsigned int max_source_index = (end_flag - 3) / 2;

    /// Lists a block can number.
    constexpr unsigned int max_lists = end_flag;

    /// A source in a slot.
    GPU_ASSEMBLY_HOST_DEVICE inline std::uint16_t
    encode_source(const unsigned int slot,
                  const unsigned int column_node,
                  const unsigned int n_nodes,
                  const bool         diagonal)
    {
      return static_cast<std::uint16_t>(
        1 + ((slot * n_nodes + column_node) << 1 | (diagonal ? 1 : 0)));
    }

    /**
     * A source that the reduction computes (SharedNZPlan::Parameters::
     * node_pairs): the block of row node a and column node b of the j-th
     * element of the block, from its S(e) staged in shared memory; its
     * index is (j * n_nodes + a) * n_nodes + b.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline std::uint16_t
    encode_node_pair(const unsigned int j,
                     const unsigned int a,
                     const unsigned int b,
                     const unsigned int n_nodes,
                     const bool         diagonal)
    {
      return static_cast<std::uint16_t>(
        1 + (((j * n_nodes + a) * n_nodes + b) << 1 | (diagonal ? 1 : 0)));
    }

    /// The element (position in E_k), row node and column node of a node
    /// pair's index.
    struct NodePair
    {
      unsigned int element, row_node, column_node;
    };

    GPU_ASSEMBLY_HOST_DEVICE inline NodePair
    decode_node_pair(const unsigned int index, const unsigned int n_nodes)
    {
      const unsigned int row = index / n_nodes;
      return {row / n_nodes,
              row - row / n_nodes * n_nodes,
              index - row * n_nodes};
    }

    /**
     * Bytes at the start of a block's shared memory in which each warp
     * turns the sums of the row it closes into whole runs of stores
     * (walk_lane(); row_width * n_components numbers per warp, in 16-byte
     * multiples): the layouts below begin after it.
     */
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline std::size_t
    row_buffer_bytes(const std::size_t threads_per_block,
                     const std::size_t n_components,
                     const std::size_t number_size)
    {
      return (threads_per_block * n_components * number_size + 15) / 16 * 16;
    }

    /**
     * Where a block that computes node pairs keeps its data: S(e) of its
     * n_elements elements element by element (entry i of the j-th at j *
     * n_supplemental + i: a node pair finds its element's numbers at fixed
     * offsets from one address, where with a stride of n_elements each
     * took an address computation of its own), then
     * for the n_elements - n_free with a constrained DoF, last in E_k, the
     * inhomogeneities of their DoFs (g_d of the c-th at d * n_constrained +
     * c; read for constrained DoFs only), then, 8-byte aligned, which of
     * their DoFs are constrained (a 64-bit mask each). Each element thus
     * costs S(e), and one with constraints n_dofs numbers and 8 bytes more,
     * where its slots cost n_nodes rows of the element data.
     */
    template <typename Number>
    struct NodePairRegions
    {
      Number        *staged;
      Number        *inhomogeneities;
      std::uint64_t *masks;
    };

    /// Numbers of a block's staged S(e), rounded up to a multiple of 4 (16
    /// bytes in float, 32 in double), so that it is copied 16 bytes at a
    /// time in both precisions (the plan stores each block's S(e) so padded
    /// and aligned).
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline std::size_t
    staged_size(const std::size_t n_elements, const std::size_t n_supplemental)
    {
      return (n_elements * n_supplemental + 3) / 4 * 4;
    }

    /// Bytes of the regions before the masks.
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline std::size_t
    node_pair_masks_offset(const std::size_t n_elements,
                           const std::size_t n_constrained,
                           const std::size_t n_supplemental,
                           const std::size_t n_dofs,
                           const std::size_t number_size)
    {
      return ((staged_size(n_elements, n_supplemental) +
               n_constrained * n_dofs) *
                number_size +
              7) /
             8 * 8;
    }

    /// Shared memory of a block that computes node pairs, in bytes.
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline std::size_t
    node_pair_bytes(const std::size_t n_elements,
                    const std::size_t n_constrained,
                    const std::size_t n_supplemental,
                    const std::size_t n_dofs,
                    const std::size_t number_size)
    {
      return node_pair_masks_offset(n_elements,
                                    n_constrained,
                                    n_supplemental,
                                    n_dofs,
                                    number_size) +
             n_constrained * sizeof(std::uint64_t);
    }

    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline NodePairRegions<Number>
    node_pair_regions(unsigned char     *shared,
                      const unsigned int n_elements,
                      const unsigned int n_free,
                      const unsigned int n_supplemental,
                      const unsigned int n_dofs)
    {
      Number *const staged = reinterpret_cast<Number *>(shared);
      return {staged,
              staged + staged_size(n_elements, n_supplemental),
              reinterpret_cast<std::uint64_t *>(
                shared + node_pair_masks_offset(n_elements,
                                                n_elements - n_free,
                                                n_supplemental,
                                                n_dofs,
                                                sizeof(Number)))};
    }

    /**
     * Stage the constraint data of the c-th of a block's @p n_constrained
     * elements with a constrained DoF, whose L(e, d) is location[d *
     * location_stride]: its mask and the inhomogeneities of its
     * constrained DoFs, as the device kernel and its host version both do.
     * Every L(e, d) is read before any flag, so that a GPU thread has them
     * all in flight at once, and each DoF's inhomogeneity with its flag
     * (that of a free DoF is stored but never read): the block's barrier
     * waits for two round trips to memory instead of three. MeshArrays
     * holds an inhomogeneity for every DoF.
     */
    template <int                   dim,
              ElementSpecialization specialization,
              unsigned int          n_components,
              typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline void
    stage_constraints(const ElementStageData<Number> &data,
                      const index_type               *location,
                      const unsigned int              location_stride,
                      const unsigned int              c,
                      const unsigned int              n_constrained,
                      const NodePairRegions<Number>  &regions)
    {
      const unsigned int n_dofs =
        SpecializedSizes<dim, specialization>::n_dofs(data, n_components);
      std::uint64_t mask = 0;
      GPU_ASSEMBLY_UNROLL
      for (unsigned int d = 0; d < n_dofs; ++d)
        {
          const index_type dof = location[d * location_stride];
          regions.inhomogeneities[d * n_constrained + c] =
            data.inhomogeneities[dof];
          if (data.dof_is_constrained[dof] != 0)
            mask |= std::uint64_t(1) << d;
        }
      regions.masks[c] = mask;
    }

    /// Whether SharedNZ can compute @p Kernel node pair by node pair: it has
    /// a node-pair form and reads no nodal data (a block stages S(e) alone).
    template <class Kernel>
    constexpr bool runs_node_pairs = kernel_has_node_pair_form<Kernel>::value &&
                                     !kernel_reads_nodal_data<Kernel>::value;

    /// What the device assembly and its host version say when a plan with
    /// node pairs meets a kernel that cannot run them.
    constexpr const char *node_pairs_refused =
      "SharedNZ: the plan computes node pairs "
      "(SharedNZPlan::Parameters::node_pairs), but the kernel has no "
      "node-pair form (kernel_has_node_pair_form) or reads nodal data. "
      "Rebuild the plan without node pairs for this kernel.";

    /// walk_lane() without node pairs.
    struct NoNodePairs
    {};

    /**
     * walk_lane()'s node pairs of a block whose data lie in @p regions
     * (node_pair_regions()): the device kernel and its host version add
     * them through this one functor.
     */
    template <int dim,
              typename Number,
              class Kernel,
              ElementSpecialization specialization>
    struct StagedNodePairs
    {
      static constexpr unsigned int n_c = Kernel::n_components;

      const Kernel                   &kernel;
      const ElementStageData<Number> &data;
      // Three pointers, not a NodePairRegions: held as one struct member,
      // nvcc 13.0 lost that they point to shared memory and read S(e) as
      // local memory at address 0 (compute-sanitizer: invalid __local__
      // reads), where three plain pointers compile to shared loads.
      const Number        *staged;
      const Number        *inhomogeneities;
      const std::uint64_t *masks;
      unsigned int         n_elements;
      unsigned int         n_free;
      unsigned int         n_nodes;
      unsigned int         n_supplemental;

      static constexpr bool accumulates =
        kernel_accumulates_node_pairs<Kernel>::value;

      // The sums of a list stay in the kernel's accumulated form
      // (kernel_accumulates_node_pairs) up to its first element with
      // constraints, whose condensed blocks need the blocks' form. The
      // plan puts those elements last in a list.
      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const unsigned int index,
                 const bool         diagonal,
                 Number (&sum)[n_c][n_c],
                 Number (&vector)[n_c],
                 bool &blocks) const
      {
        const NodePair pair         = decode_node_pair(index, n_nodes);
        const Number  *supplemental = staged + pair.element * n_supplemental;
        if (pair.element < n_free)
          {
            const auto add = [&](const auto accumulate) {
              add_node_pair<dim,
                            Number,
                            Kernel,
                            specialization,
                            decltype(accumulate)::value>(kernel,
                                                         data,
                                                         supplemental,
                                                         1,
                                                         pair.row_node,
                                                         pair.column_node,
                                                         diagonal,
                                                         sum,
                                                         vector);
            };
            if constexpr (accumulates)
              if (!blocks)
                {
                  add(std::true_type());
                  return;
                }
            add(std::false_type());
          }
        else
          {
            finish(sum, blocks);
            blocks               = true;
            const unsigned int c = pair.element - n_free;
            add_condensed_node_pair<dim, Number, Kernel, specialization>(
              kernel,
              data,
              supplemental,
              1,
              pair.row_node,
              pair.column_node,
              diagonal,
              NodePairConstraints<Number>{masks[c],
                                          inhomogeneities + c,
                                          n_elements - n_free},
              sum,
              vector);
          }
      }

      /// Turns sums still in the kernel's accumulated form into the sum of
      /// blocks; @p blocks says whether they already are.
      GPU_ASSEMBLY_HOST_DEVICE void
      finish(Number (&sum)[n_c][n_c], const bool blocks) const
      {
        if constexpr (accumulates)
          if (!blocks)
            kernel.finish_node_pairs(sum);
      }

      /// Completes a list's sums before they are stored, and starts the
      /// next list in the accumulated form.
      GPU_ASSEMBLY_HOST_DEVICE void
      close(Number (&sum)[n_c][n_c], bool &blocks) const
      {
        finish(sum, blocks);
        blocks = false;
      }
    };

    /// StagedNodePairs where @p enabled, else NoNodePairs: a kernel without
    /// a node-pair form never instantiates the former.
    template <int                   dim,
              ElementSpecialization specialization,
              bool                  enabled,
              typename Number,
              class Kernel>
    GPU_ASSEMBLY_HOST_DEVICE inline auto
    staged_node_pairs(const Kernel                   &kernel,
                      const ElementStageData<Number> &data,
                      const NodePairRegions<Number>  &regions,
                      const unsigned int              n_elements,
                      const unsigned int              n_free,
                      const unsigned int              n_nodes,
                      const unsigned int              n_supplemental)
    {
      if constexpr (enabled)
        return StagedNodePairs<dim, Number, Kernel, specialization>{
          kernel,
          data,
          regions.staged,
          regions.inhomogeneities,
          regions.masks,
          n_elements,
          n_free,
          n_nodes,
          n_supplemental};
      else
        return NoNodePairs();
    }

    /// Numbers of one slot: n_c rows of n_dofs + 1, rounded up to an odd
    /// count.
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline unsigned int
    slot_size(const unsigned int n_components, const unsigned int n_dofs)
    {
      return (n_components * (n_dofs + 1)) | 1u;
    }

    /**
     * x / d for x, d < 2^16 by a multiplication with @p magic =
     * division_magic(d) (exact there, since x * d < 2^32): a slot from a
     * source without a division in the reduction's inner loop (d is the
     * nodes of an element). The magic number of d = 1, 2^32, has no 32-bit
     * form: it is 0, and divide() returns x for it, so that the division
     * is exact for every d.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline unsigned int
    division_magic(const unsigned int d)
    {
      return d == 1 ? 0u : 0xffffffffu / d + 1;
    }

    GPU_ASSEMBLY_HOST_DEVICE inline unsigned int
    divide(const unsigned int x, const unsigned int magic)
    {
#ifdef __CUDA_ARCH__
      const unsigned int quotient = __umulhi(x, magic);
#else
      const auto quotient = static_cast<unsigned int>(
        (static_cast<unsigned long long>(x) * magic) >> 32);
#endif
      return magic == 0 ? x : quotient;
    }

    /**
     * The element-kernel output of SharedNZ: entry (i, j) of an element goes
     * to its slot if the block keeps row i, else to a sink that all threads
     * share and that is never read. Kernels may write an entry several
     * times and read it back (+=), but must not read entries of other rows
     * to compute one (a row the block discards holds whatever any thread
     * wrote there last): the bundled kernels and the Dirichlet condensation
     * of elements with slots for every node satisfy this. The choice
     * between slot and sink is a select, not a branch, so that the threads
     * of a warp do not diverge on every entry.
     */
    template <typename Number,
              unsigned int n_components,
              unsigned int n_packed_nodes = 0>
    struct OwnedRowsOutput
    {
      static constexpr bool stores_upper_triangle_only = false;

      Number *element_data;
      /// slot_size(n_components, n_dofs) numbers.
      Number *sink;
      /// Slot of node a at slots[a * slot_stride]; unused where the slots
      /// are packed.
      const std::uint16_t *slots;
      unsigned int         slot_stride;
      /// DoFs of an element; with packed slots n_packed_nodes * n_components
      /// at compile time instead.
      unsigned int n_dofs;
      /// With n_packed_nodes > 0 (at most 4): the slot of node a in bits
      /// 16 a to 16 a + 15, read from memory once per element. A kernel
      /// whose entries are not all at compile-time constant positions (the
      /// condensation's loops) would otherwise find the slots in local
      /// memory.
      std::uint64_t packed_slots = 0;

      GPU_ASSEMBLY_HOST_DEVICE static std::uint64_t
      pack_slots(const std::uint16_t *slots, const unsigned int slot_stride)
      {
        static_assert(n_packed_nodes <= 4, "at most four 16-bit slots");
        std::uint64_t packed = 0;
        for (unsigned int a = 0; a < n_packed_nodes; ++a)
          packed |= std::uint64_t(slots[a * slot_stride]) << (16 * a);
        return packed;
      }

      GPU_ASSEMBLY_HOST_DEVICE std::uint16_t
                               slot(const unsigned int a) const
      {
        if constexpr (n_packed_nodes > 0)
          return static_cast<std::uint16_t>(packed_slots >> (16 * a));
        else
          return slots[a * slot_stride];
      }

      GPU_ASSEMBLY_HOST_DEVICE unsigned int
      dofs() const
      {
        return n_packed_nodes > 0 ? n_packed_nodes * n_components : n_dofs;
      }

      /// Whether the block keeps the rows of node a
      /// (output_may_discard_rows).
      GPU_ASSEMBLY_HOST_DEVICE bool
      keeps_rows(const unsigned int a) const
      {
        return slot(a) != no_slot;
      }

      GPU_ASSEMBLY_HOST_DEVICE Number &
      entry(const unsigned int i, const unsigned int j) const
      {
        const unsigned int  a = i / n_components;
        const std::uint16_t s = slot(a);
        Number *const       rows =
          s != no_slot ? element_data + s * slot_size(n_components, dofs()) :
                               sink;
        return rows[(i - a * n_components) * (dofs() + 1) + j];
      }

      GPU_ASSEMBLY_HOST_DEVICE Number &
      matrix_entry(const unsigned int i, const unsigned int j) const
      {
        return entry(i, j);
      }

      GPU_ASSEMBLY_HOST_DEVICE Number &
      vector_entry(const unsigned int i) const
      {
        return entry(i, dofs());
      }
    };



    /// Entries of a reduction lane read at once: the plan stores a lane's
    /// entries chunk by chunk (pack_lists_sliced()), so that a thread reads
    /// 8 with one 16-byte load.
    constexpr unsigned int chunk = 8;

    /**
     * A chunk of a lane's entries as a thread holds it: entry u in bits
     * 16 (u % 4) of @p low (u < 4) or @p high. Two words in registers,
     * where an array of 8 entries indexed in the walk's rolled loop would
     * live in local memory.
     */
    struct Chunk
    {
      std::uint64_t low = 0, high = 0;

      GPU_ASSEMBLY_HOST_DEVICE unsigned int
      entry(const unsigned int u) const
      {
        return static_cast<unsigned int>(
          (u < 4 ? low >> (16 * u) : high >> (16 * (u - 4))) & 0xffff);
      }
    };

    /// The chunk at @p entries (16-byte aligned).
    GPU_ASSEMBLY_HOST_DEVICE inline Chunk
    load_chunk(const std::uint16_t *entries)
    {
#ifdef __CUDA_ARCH__
      const uint4 words = __ldg(reinterpret_cast<const uint4 *>(entries));
      return {words.x | std::uint64_t(words.y) << 32,
              words.z | std::uint64_t(words.w) << 32};
#else
      Chunk chunk;
      std::memcpy(&chunk.low, entries, 8);
      std::memcpy(&chunk.high, entries + 4, 8);
      return chunk;
#endif
    }

    /// Lists in a row of a block's reduction stream: the lanes of a warp
    /// (pack_lists_aligned()).
    constexpr unsigned int row_width = 32;

    /**
     * The shape of a row of lists that the lanes of a warp close at the
     * same step. The row's lists take slots 0, ..., n_lists - 1; the first
     * n_diagonal are diagonal (m = n) and also store the right-hand side,
     * and of those the first n_halved are halved: summed by two lanes, the
     * first half of the list's sources in the lane of its slot, the second
     * in lane n_diagonal + slot (row_lane()), and the two sums added at the
     * close. A diagonal list sums all of a node's elements, several times
     * as many as a list of an edge, and the other lanes of its row would
     * wait for it. Every lane of the warp, those after the row's last list
     * included, has the row's closing entry, end_flag | n_halved << 10 |
     * (n_lists - 1) << 5 | n_diagonal, so that the warp can store the row
     * together; rows hold at most 31 diagonal lists.
     */
    struct RowClose
    {
      unsigned int n_lists, n_diagonal, n_halved;
    };

    /// Diagonal lists a row can hold.
    constexpr unsigned int max_row_diagonal = row_width - 1;

    GPU_ASSEMBLY_HOST_DEVICE constexpr inline std::uint16_t
    encode_row_close(const unsigned int n_lists,
                     const unsigned int n_diagonal,
                     const unsigned int n_halved = 0)
    {
      return static_cast<std::uint16_t>(end_flag | n_halved << 10 |
                                        (n_lists - 1) << 5 | n_diagonal);
    }

    GPU_ASSEMBLY_HOST_DEVICE constexpr inline RowClose
    decode_row_close(const unsigned int entry)
    {
      return {((entry >> 5) & (row_width - 1)) + 1,
              entry & (row_width - 1),
              (entry >> 10) & (row_width - 1)};
    }

    /// What lane @p l of a warp does at a row's close: store the list in
    /// @p slot (none where slot >= the row's n_lists), or, with
    /// @p second_half, add the second half of the list in @p slot to it.
    struct RowLane
    {
      unsigned int slot;
      bool         second_half;
    };

    GPU_ASSEMBLY_HOST_DEVICE constexpr inline RowLane
    row_lane(const unsigned int l, const RowClose row)
    {
      return l < row.n_diagonal ? RowLane{l, false} :
             l < row.n_diagonal + row.n_halved ?
                                  RowLane{l - row.n_diagonal, true} :
                                  RowLane{l - row.n_halved, false};
    }

    /**
     * Where a row's targets lie, from the row's first target on: the n_c
     * x n_c block of the list in slot l, entry (c1, c2), at
     * block_target(c1, c2, l), that is row c1 of every list's block, slot
     * after slot, before row c1 + 1; then the right-hand-side DoF c1 of
     * the diagonal list in slot l at rhs_target(c1, l). With a row node's lists
     * in column order, as the plan keeps them, neighbouring lanes' blocks are
     * neighbouring nonzeros of the same matrix rows: the warp stores each
     * c1 as whole runs of the value array, with one coalesced load of
     * their targets, where a lane storing its own block wrote 8 bytes to
     * each of 25 sectors per instruction and read its targets one sector
     * each.
     */
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline unsigned int
    block_target(const unsigned int c1,
                 const unsigned int c2,
                 const unsigned int l,
                 const RowClose     row,
                 const unsigned int n_c)
    {
      return c1 * n_c * row.n_lists + n_c * l + c2;
    }

    GPU_ASSEMBLY_HOST_DEVICE constexpr inline unsigned int
    rhs_target(const unsigned int c1,
               const unsigned int l,
               const RowClose     row,
               const unsigned int n_c)
    {
      return n_c * n_c * row.n_lists + n_c * l + c1;
    }

    /// Targets of a row.
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline unsigned int
    row_targets(const RowClose row, const unsigned int n_c)
    {
      return n_c * n_c * row.n_lists + n_c * row.n_diagonal;
    }

    /**
     * Compact targets (SharedNZPlan::Parameters::compact_targets): a row's
     * targets as one record instead of one index per nonzero. Row c1 of the
     * lists' blocks (block_target(): position p = n_c l + c2 of n_c n_lists)
     * holds the nonzeros of a row node's neighbouring columns, which split
     * into few runs of consecutive indices in one of two orders: p itself
     * where the DoFs of a node are numbered together (column node after
     * column node), or q = n_lists c2 + l where they are numbered component
     * by component (the columns of one component of neighbouring nodes
     * adjacent); each record takes the order of fewer runs
     * (compact_position()). A record keeps, from its first entry on,
     *   - its length in entries (where the next row's record begins),
     *   - its order (0: p, 1: q),
     *   - the right-hand-side DoFs of the diagonal lists, n_c l + c1 for
     *     list l (compact_rhs_target()),
     *   - for each c1, n_c 32-bit words whose bit b of word i is set where
     *     ordered position 32 i + b of row c1 begins a run,
     *   - each run's base, c1 after c1: ordered position q of a run with
     *     base b goes to nonzero b + q, none where b is no_target_run (the
     *     pattern has no nonzero there).
     * A lane finds the run of its position by counting the set bits before
     * it, so a warp reads a handful of words per row where the full form
     * reads 4 bytes per nonzero.
     */
    constexpr index_type no_target_run = -2147483647 - 1;

    /// Entries of a compact record before its run bases.
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline unsigned int
    compact_header(const RowClose row, const unsigned int n_c)
    {
      return 2 + n_c * row.n_diagonal + n_c * n_c;
    }

    /// Right-hand-side DoF c1 of the diagonal list in slot l of a compact
    /// record.
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline unsigned int
    compact_rhs_target(const unsigned int c1,
                       const unsigned int l,
                       const unsigned int n_c)
    {
      return 2 + n_c * l + c1;
    }

    /// Word i of row c1's run starts in a compact record.
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline unsigned int
    compact_run_word(const unsigned int c1,
                     const unsigned int i,
                     const RowClose     row,
                     const unsigned int n_c)
    {
      return 2 + n_c * row.n_diagonal + c1 * n_c + i;
    }

    /// Ordered position of position @p p (n_c l + c2) of a row of
    /// @p n_lists lists in a record of order @p order.
    GPU_ASSEMBLY_HOST_DEVICE constexpr inline unsigned int
    compact_position(const unsigned int p,
                     const unsigned int order,
                     const unsigned int n_lists,
                     const unsigned int n_c)
    {
      return order == 0 ? p : (p % n_c) * n_lists + p / n_c;
    }

    GPU_ASSEMBLY_HOST_DEVICE inline unsigned int
    count_bits(const std::uint32_t word)
    {
#ifdef __CUDA_ARCH__
      return __popc(word);
#else
      return __builtin_popcount(word);
#endif
    }

    /**
     * Run (0-based, over all rows c1 of the record) of ordered position @p q
     * of row c1, given the record's run-start words @p words (word i of row
     * c1 at words[c1 * n_c + i]) and the runs of the rows before c1,
     * @p runs_before. Every word is read at an index known where n_c and c1
     * are (a selection, not words[q / 32]), so that a device thread keeps
     * them in registers rather than in local memory.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline unsigned int
    compact_run(const std::uint32_t *words,
                const unsigned int   runs_before,
                const unsigned int   c1,
                const unsigned int   q,
                const unsigned int   n_c)
    {
      const unsigned int i   = q / 32;
      unsigned int       run = runs_before;
      GPU_ASSEMBLY_UNROLL
      for (unsigned int w = 0; w < n_c; ++w)
        {
          const std::uint32_t word = words[c1 * n_c + w];
          run += count_bits(w < i  ? word :
                            w == i ? word & (0xffffffffu >> (31 - q % 32)) :
                                     0u);
        }
      return run - 1;
    }

    /// The nonzero of ordered position @p q with run base @p base; -1 for
    /// none.
    GPU_ASSEMBLY_HOST_DEVICE inline index_type
    compact_target(const index_type base, const unsigned int q)
    {
      return base == no_target_run ? index_type(-1) :
                                     base + static_cast<index_type>(q);
    }

    /**
     * Target of entry (c1, c2) of the list in slot @p l of the compact
     * record at @p record: what a thread on its own reads (the device warp
     * reads a row's words once, in its store).
     */
    GPU_ASSEMBLY_HOST_DEVICE inline index_type
    compact_block_target(const index_type  *record,
                         const unsigned int c1,
                         const unsigned int c2,
                         const unsigned int l,
                         const RowClose     row,
                         const unsigned int n_c)
    {
      const unsigned int q = compact_position(block_target(0, c2, l, row, n_c),
                                              record[1],
                                              row.n_lists,
                                              n_c);
      const std::uint32_t *words =
        reinterpret_cast<const std::uint32_t *>(record) +
        compact_run_word(0, 0, row, n_c);
      unsigned int runs_before = 0;
      for (unsigned int w = 0; w < c1 * n_c; ++w)
        runs_before += count_bits(words[w]);
      const unsigned int run = compact_run(words, runs_before, c1, q, n_c);
      return compact_target(record[compact_header(row, n_c) + run], q);
    }

    /**
     * The targets of a device lane @p l in the compact record at @p record:
     * target[c1][i] of position p = l + 32 i of row c1 (the entries the
     * lane stores, block_target()), -1 past the row's n_c n_lists positions
     * or where the pattern has no nonzero. The order and the run-start
     * words are read once for all (the same for every lane of the warp),
     * then one base per position; @p load(address) reads an entry.
     */
    template <unsigned int n_c, class Load>
    GPU_ASSEMBLY_HOST_DEVICE inline void
    compact_lane_targets(const index_type  *record,
                         const RowClose     row,
                         const unsigned int l,
                         const Load        &load,
                         index_type (&target)[n_c][n_c])
    {
      const unsigned int width = n_c * row.n_lists;
      const unsigned int order = load(record + 1);
      std::uint32_t      words[n_c * n_c];
      GPU_ASSEMBLY_UNROLL
      for (unsigned int w = 0; w < n_c * n_c; ++w)
        words[w] = static_cast<std::uint32_t>(
          load(record + compact_run_word(0, 0, row, n_c) + w));
      const index_type *const bases = record + compact_header(row, n_c);
      unsigned int            run   = 0;
      GPU_ASSEMBLY_UNROLL
      for (unsigned int c1 = 0; c1 < n_c; ++c1)
        {
          GPU_ASSEMBLY_UNROLL
          for (unsigned int i = 0; i < n_c; ++i)
            {
              const unsigned int p = l + 32 * i;
              const unsigned int q =
                compact_position(p, order, row.n_lists, n_c);
              target[c1][i] =
                p < width ?
                  compact_target(load(bases +
                                      compact_run(words, run, c1, q, n_c)),
                                 q) :
                  -1;
            }
          GPU_ASSEMBLY_UNROLL
          for (unsigned int i = 0; i < n_c; ++i)
            run += count_bits(words[c1 * n_c + i]);
        }
    }

    /**
     * Appends to @p record the compact form of a row of @p n_lists lists,
     * the first @p n_diagonal diagonal, whose full targets (block_target(),
     * rhs_target()) are @p full, in the order of fewer runs.
     */
    template <typename Vector>
    inline void
    append_compact_row(const index_type  *full,
                       const unsigned int n_lists,
                       const unsigned int n_diagonal,
                       const unsigned int n_c,
                       Vector            &record)
    {
      const RowClose     row{n_lists, n_diagonal, 0};
      const unsigned int width = n_c * n_lists;
      // Target of ordered position q of row c1 in @p order.
      const auto target = [&](const unsigned int c1,
                              const unsigned int q,
                              const unsigned int order) {
        const unsigned int p =
          order == 0 ? q : (q % n_lists) * n_c + q / n_lists;
        return full[block_target(c1, 0, 0, row, n_c) + p];
      };
      const auto starts_run = [&](const unsigned int c1,
                                  const unsigned int q,
                                  const unsigned int order) {
        if (q == 0)
          return true;
        const index_type t      = target(c1, q, order),
                         before = target(c1, q - 1, order);
        return !((t < 0 && before < 0) ||
                 (t >= 0 && before >= 0 && t == before + 1));
      };
      unsigned int runs[2] = {0, 0};
      for (unsigned int order = 0; order < 2; ++order)
        for (unsigned int c1 = 0; c1 < n_c; ++c1)
          for (unsigned int q = 0; q < width; ++q)
            runs[order] += starts_run(c1, q, order);
      const unsigned int order = runs[1] < runs[0] ? 1 : 0;

      const std::size_t start = record.size();
      record.push_back(0);
      record.push_back(static_cast<index_type>(order));
      for (unsigned int i = 0; i < n_c * n_diagonal; ++i)
        record.push_back(full[rhs_target(0, 0, row, n_c) + i]);
      const std::size_t words = record.size();
      record.resize(words + n_c * n_c, 0);
      for (unsigned int c1 = 0; c1 < n_c; ++c1)
        {
          std::uint32_t word[32] = {};
          for (unsigned int q = 0; q < width; ++q)
            if (starts_run(c1, q, order))
              {
                const index_type t = target(c1, q, order);
                word[q / 32] |= std::uint32_t(1) << (q % 32);
                record.push_back(t < 0 ? no_target_run :
                                         t - static_cast<index_type>(q));
              }
          for (unsigned int i = 0; i < n_c; ++i)
            record[words + c1 * n_c + i] = static_cast<index_type>(word[i]);
        }
      record[start] = static_cast<index_type>(record.size() - start);
    }

    /**
     * Where walk_lane() finds a row's right-hand-side targets and the next
     * row: the full form, one index per target (row_targets()).
     */
    struct FullTargets
    {
      GPU_ASSEMBLY_HOST_DEVICE unsigned int
      rhs(const unsigned int first,
          const unsigned int c1,
          const unsigned int l,
          const RowClose     row,
          const unsigned int n_c) const
      {
        return first + rhs_target(c1, l, row, n_c);
      }

      GPU_ASSEMBLY_HOST_DEVICE unsigned int
      next(const unsigned int first,
           const RowClose     row,
           const unsigned int n_c) const
      {
        return first + row_targets(row, n_c);
      }
    };

    /// The same for compact records (append_compact_row()) at @p targets.
    struct CompactTargets
    {
      const index_type *targets;

      GPU_ASSEMBLY_HOST_DEVICE unsigned int
      rhs(const unsigned int first,
          const unsigned int c1,
          const unsigned int l,
          const RowClose,
          const unsigned int n_c) const
      {
        return first + compact_rhs_target(c1, l, n_c);
      }

      GPU_ASSEMBLY_HOST_DEVICE unsigned int
      next(const unsigned int first, const RowClose, const unsigned int) const
      {
#ifdef __CUDA_ARCH__
        return first + __ldg(targets + first);
#else
        return first + targets[first];
#endif
      }
    };

    /**
     * Walks one lane, number @p l of its warp, of a block's packed
     * reduction stream: for each source, adds the n_c x n_c node-pair
     * block (and, for a diagonal list, the n_c vector entries) to
     * registers; at a row's closing entry (RowClose), which every lane of
     * the warp reaches at the same step, hands the sums to
     * @p store_row(sum, row, l, first) with the row's first target
     * @p first (from 0 on, row after row), which stores the lane's block
     * where block_target() says for its slot (row_lane(); a device warp
     * does so together), and stores a diagonal list's right-hand side
     * through @p store_rhs(index, value, add) (index: rhs_target()). The
     * halves of a halved list (RowClose) are added by
     * @p combine_halves(sum, rhs, row, l), which returns true where it
     * has added each second half to its first (a device warp, by
     * shuffles); where it returns false, the lane of a second half stores
     * its block and right-hand side with add set, to be added to the
     * first half's, stored before (a host thread walks the lanes in
     * order). The lane's
     * @p n_chunks chunks lie @p stride entries apart from @p lane on; each
     * is loaded while the one before it is walked, so that its load
     * overlaps the work instead of stalling the thread. Sums are taken in
     * list order. @p first_chunk, if given, is the lane's first chunk,
     * read before it is needed (the device kernel loads it while S(e) is
     * staged). With node pairs every source is one (encode_node_pair()),
     * which @p add_pair(index, diagonal, sum, rhs, blocks) adds to the
     * sums, and add_pair.close(sum, blocks) completes them before they are
     * stored: a kernel may sum a list's pairs in a form of its own
     * (kernel_accumulates_node_pairs), and @p blocks says when they have
     * become the sum of blocks instead. Without node pairs, sources are
     * read from slots. @p row_targets_form says where a row's
     * right-hand-side targets lie and where the next row's begin
     * (FullTargets, CompactTargets).
     */
    template <typename Number,
              unsigned int n_components,
              class Load,
              class StoreRow,
              class StoreRhs,
              class CombineHalves,
              class AddPair = NoNodePairs,
              class RowForm = FullTargets>
    GPU_ASSEMBLY_HOST_DEVICE inline void
    walk_lane(const std::uint16_t *lane,
              const unsigned int   n_chunks,
              const unsigned int   stride,
              const unsigned int   l,
              const unsigned int   n_nodes,
              const unsigned int   n_dofs,
              const Load          &load,
              const StoreRow      &store_row,
              const StoreRhs      &store_rhs,
              const CombineHalves &combine_halves,
              const Chunk         *first_chunk      = nullptr,
              const AddPair       &add_pair         = AddPair(),
              const RowForm       &row_targets_form = RowForm())
    {
      constexpr unsigned int nc    = n_components;
      const unsigned int     row   = n_dofs + 1;
      const unsigned int     size  = slot_size(nc, n_dofs);
      const unsigned int     magic = division_magic(n_nodes);
      Number                 sum[nc][nc], rhs[nc];
      bool                   blocks = false;
      unsigned int           first  = 0;
      for (unsigned int c1 = 0; c1 < nc; ++c1)
        {
          rhs[c1] = 0;
          for (unsigned int c2 = 0; c2 < nc; ++c2)
            sum[c1][c2] = 0;
        }
      Chunk current = n_chunks == 0          ? Chunk() :
                      first_chunk != nullptr ? *first_chunk :
                                               load_chunk(lane);
      for (unsigned int c = 0; c < n_chunks; ++c)
        {
          const Chunk next =
            c + 1 < n_chunks ? load_chunk(lane + (c + 1) * stride) : Chunk();
          for (unsigned int u = 0; u < chunk; ++u)
            {
              const unsigned int e = current.entry(u);
              if (e == 0)
                continue;
              if (e < end_flag)
                {
                  const unsigned int index = (e - 1) >> 1;
                  if constexpr (!std::is_same_v<AddPair, NoNodePairs>)
                    add_pair(index, ((e - 1) & 1) != 0, sum, rhs, blocks);
                  else
                    {
                      const unsigned int slot  = divide(index, magic);
                      const unsigned int first = slot * size;
                      const unsigned int block =
                        first + (index - slot * n_nodes) * nc;
                      for (unsigned int c1 = 0; c1 < nc; ++c1)
                        for (unsigned int c2 = 0; c2 < nc; ++c2)
                          sum[c1][c2] += load(block + c1 * row + c2);
                      if ((e - 1) & 1)
                        for (unsigned int c1 = 0; c1 < nc; ++c1)
                          rhs[c1] += load(first + c1 * row + n_dofs);
                    }
                  continue;
                }
              if constexpr (!std::is_same_v<AddPair, NoNodePairs>)
                add_pair.close(sum, blocks);
              const RowClose shape    = decode_row_close(e);
              const RowLane  role     = row_lane(l, shape);
              const bool     combined = combine_halves(sum, rhs, shape, l);
              store_row(sum, shape, l, first);
              if (role.slot < shape.n_diagonal &&
                  !(role.second_half && combined))
                for (unsigned int c1 = 0; c1 < nc; ++c1)
                  store_rhs(
                    row_targets_form.rhs(first, c1, role.slot, shape, nc),
                    rhs[c1],
                    role.second_half);
              for (unsigned int c1 = 0; c1 < nc; ++c1)
                {
                  rhs[c1] = 0;
                  for (unsigned int c2 = 0; c2 < nc; ++c2)
                    sum[c1][c2] = 0;
                }
              first = row_targets_form.next(first, shape, nc);
            }
          current = next;
        }
    }

    /**
     * store_row() of walk_lane() for a thread on its own (the host
     * version): each entry of the lane's block to its target,
     * @p target_of(c1, c2, slot) (block_target() in the row's full
     * targets, or compact_block_target()), through
     * @p store(target, value, add), with add for the second half of a
     * halved list; none where the lane holds no list of the row or the
     * pattern has no nonzero.
     */
    template <unsigned int n_c, typename Number, class TargetOf, class Store>
    GPU_ASSEMBLY_HOST_DEVICE inline void
    store_lane_block(const Number (&sum)[n_c][n_c],
                     const RowClose     row,
                     const unsigned int l,
                     const TargetOf    &target_of,
                     const Store       &store)
    {
      const RowLane role = row_lane(l, row);
      if (role.slot >= row.n_lists)
        return;
      for (unsigned int c1 = 0; c1 < n_c; ++c1)
        for (unsigned int c2 = 0; c2 < n_c; ++c2)
          {
            const index_type target = target_of(c1, c2, role.slot);
            if (target >= 0)
              store(target, sum[c1][c2], role.second_half);
          }
    }

    /// walk_lane()'s combine_halves for a thread on its own: the second
    /// halves are added where they are stored.
    struct HalvesAddedWhenStored
    {
      template <typename Number, unsigned int n_c>
      GPU_ASSEMBLY_HOST_DEVICE bool
      operator()(Number (&)[n_c][n_c],
                 Number (&)[n_c],
                 const RowClose,
                 const unsigned int) const
      {
        return false;
      }
    };
  } // namespace SharedNZLayout
} // namespace GPUAssembly

#endif
