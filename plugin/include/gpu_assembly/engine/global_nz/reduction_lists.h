// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_global_nz_reduction_lists_h
#define gpu_assembly_engine_global_nz_reduction_lists_h

#include <gpu_assembly/adapter/sorted_pattern.h>
#include <gpu_assembly/base/config.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/element/element_views.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

/**
 * @file
 * GlobalNZ's reduction lists of one reduction block (GlobalNZPlan), written
 * once for the host and the device: raw pointers and explicit scratch, so
 * that a host thread or a CUDA thread builds a block's packed entries, its
 * slice ends and its source base by the same code. The host plan runs it
 * block by block on its threads; the device build runs it a warp per
 * block (build_reduction_arrays_on_device()), its lanes sharing the
 * block's contributions.
 *
 * A block is built in two steps: reduction_block_layout() counts the
 * sources of each of its targets, keeps the lengths of the lists and packs
 * them into lanes (LPT, pack_lists_sliced()), which gives the block's size
 * and slice ends; relayout_reduction_block() packs them again from their
 * lengths, and write_reduction_block() fills the sorted lists and stores
 * them by slices. The sizes of all blocks come first, so that every block
 * writes straight into its place of the final array.
 */

namespace GPUAssembly
{
  struct GlobalNZPlan;
  struct MeshArrays;

  namespace internal
  {
    /// Lanes of one slice of a reduction block: a warp.
    constexpr unsigned int reduction_slice_width = 32;

    /// The largest span of the sources of a block that its positive 32-bit
    /// relative entries (source + 1) address.
    constexpr std::size_t max_reduction_source_span =
      static_cast<std::size_t>(std::numeric_limits<index_type>::max()) - 1;

    /**
     * The arrays the reduction lists are built from, in host or in device
     * memory.
     */
    struct ReductionListInput
    {
      /// GlobalNZPlan::n_value_targets.
      std::size_t  n_value_targets = 0;
      unsigned int n_dofs          = 0;
      /// Nodes, DoFs and components per node of an element.
      unsigned int n_element_nodes = 0;
      unsigned int n_element_dofs  = 0;
      unsigned int n_components    = 0;
      /// The element-data layout: GlobalNZPlan's elements_per_block,
      /// n_entries, n_matrix_entries and entry_group.
      unsigned int elements_per_block = 0;
      unsigned int n_entries          = 0;
      unsigned int n_matrix_entries   = 0;
      unsigned int entry_group        = 1;
      /// Lanes of a block (GlobalNZPlan::Parameters::reduction_threads).
      unsigned int n_lanes   = 0;
      bool         symmetric = false;

      /// GlobalNZPlan::reduction_target_begin.
      const index_type *target_begin = nullptr;
      /// The CSR pattern.
      const index_type *row_offsets    = nullptr;
      const index_type *column_indices = nullptr;
      /// Symmetric element data: GlobalNZPlan::upper_position, and the
      /// target of each nonzero summed from its own row, else -1.
      const index_type *upper_position     = nullptr;
      const index_type *target_of_position = nullptr;
      /// The node of each DoF (invalid_index for a DoF on no node) and its
      /// component there.
      const index_type *node_of_dof      = nullptr;
      const index_type *component_of_dof = nullptr;
      /// The elements of each node, increasing: node_elements[
      /// node_element_offsets[n] ... node_element_offsets[n + 1]).
      const std::size_t *node_element_offsets = nullptr;
      const index_type  *node_elements        = nullptr;
      /// MeshArrays::connectivity.
      const index_type *connectivity = nullptr;
      /// The slot k * elements_per_block + t of each element.
      const index_type *slot_of = nullptr;
      /// GlobalNZPlan::block_location: the DoFs of the element of a slot.
      const index_type *block_location = nullptr;
      /// K(e, d1, d2) (MeshArrays::nonzero_map), or null: then each entry
      /// is found by a binary search in the pattern, as
      /// nonzero_map_entry() finds it, which needs @p pattern's
      /// keep_constrained_dofs and dof_is_constrained.
      const index_type *nonzero_map = nullptr;
      PatternInput      pattern;
    };

    /**
     * The scratch of one block: list offsets and the lane assignment, for
     * at most max_lists lists of at most max_list_length entries in
     * n_lanes lanes. reduction_scratch_bytes() of memory, 8-byte aligned,
     * make one by make_reduction_scratch().
     */
    struct ReductionBlockScratch
    {
      index_type    *list_offsets; // max_lists + 1
      index_type    *fill;         // max_lists
      unsigned int  *order;        // max_lists: lists longest first
      unsigned int  *lane_of;      // max_lists
      unsigned int  *lane_lists;   // max_lists: lists by lane
      unsigned int  *lane_offsets; // n_lanes + 1
      unsigned int  *lane_load;    // n_lanes
      unsigned int  *lane_order;   // n_lanes: lanes by decreasing load
      unsigned int  *start;        // max_list_length + 2
      unsigned int  *count;        // max_list_length + 1
      std::uint64_t *bits;         // (max_list_length + 1) * lane words
    };

    GPU_ASSEMBLY_HOST_DEVICE inline std::size_t
    reduction_scratch_words(const unsigned int max_lists,
                            const unsigned int n_lanes,
                            const unsigned int max_list_length)
    {
      // 4-byte arrays first, rounded up to whole 8-byte words.
      const std::size_t small = std::size_t(5) * max_lists + 1 +
                                3 * std::size_t(n_lanes) + 1 +
                                2 * std::size_t(max_list_length) + 3;
      return (small + 1) / 2 +
             (std::size_t(max_list_length) + 1) * ((n_lanes + 63) / 64);
    }

    /// Bytes of the scratch of one block.
    GPU_ASSEMBLY_HOST_DEVICE inline std::size_t
    reduction_scratch_bytes(const unsigned int max_lists,
                            const unsigned int n_lanes,
                            const unsigned int max_list_length)
    {
      return reduction_scratch_words(max_lists, n_lanes, max_list_length) *
             sizeof(std::uint64_t);
    }

    /// The scratch in the reduction_scratch_bytes() at @p memory.
    GPU_ASSEMBLY_HOST_DEVICE inline ReductionBlockScratch
    make_reduction_scratch(std::uint64_t *const memory,
                           const unsigned int   max_lists,
                           const unsigned int   n_lanes,
                           const unsigned int   max_list_length)
    {
      ReductionBlockScratch s;
      unsigned int         *p = reinterpret_cast<unsigned int *>(memory);
      s.list_offsets          = reinterpret_cast<index_type *>(p);
      p += max_lists + 1;
      s.fill = reinterpret_cast<index_type *>(p);
      p += max_lists;
      s.order = p;
      p += max_lists;
      s.lane_of = p;
      p += max_lists;
      s.lane_lists = p;
      p += max_lists;
      s.lane_offsets = p;
      p += n_lanes + 1;
      s.lane_load = p;
      p += n_lanes;
      s.lane_order = p;
      p += n_lanes;
      s.start = p;
      p += max_list_length + 2;
      s.count = p;
      s.bits  = memory +
               reduction_scratch_words(max_lists, n_lanes, max_list_length) -
               (std::size_t(max_list_length) + 1) * ((n_lanes + 63) / 64);
      return s;
    }

    /// The row of matrix target @p t: that of its nonzero (with symmetric
    /// data, of the pair's upper member).
    GPU_ASSEMBLY_HOST_DEVICE inline index_type
    row_of_reduction_target(const ReductionListInput &in, const std::size_t t)
    {
      const index_type p =
        in.symmetric ? in.upper_position[t] : static_cast<index_type>(t);
      // The last row whose offset is at most p.
      unsigned int low = 0, high = in.n_dofs + 1;
      while (low < high)
        {
          const unsigned int middle = low + (high - low) / 2;
          if (in.row_offsets[middle] <= p)
            low = middle + 1;
          else
            high = middle;
        }
      return static_cast<index_type>(low) - 1;
    }

    /// GlobalNZPlan::element_data_index().
    GPU_ASSEMBLY_HOST_DEVICE inline std::size_t
    reduction_source(const ReductionListInput &in,
                     const unsigned int        k,
                     const unsigned int        t,
                     const unsigned int        i)
    {
      const unsigned int B = in.elements_per_block;
      return static_cast<std::size_t>(k) * in.n_entries * B +
             static_cast<std::size_t>(t) * in.entry_group +
             grouped_entry_position(i, B, in.entry_group);
    }

    /**
     * Call action(p, source) for every contribution to block @p r: p the
     * target's place in the block, source its element-data index. Each
     * block gathers the sources of its targets from the rows they lie in:
     * the elements of a row's node, in the row's local DoF. A DoF on no
     * node (on a rank of a distributed mesh, the master of a hanging node
     * whose coarse edge ends on another rank's cell) has couplings through
     * constraints only, which the constraint stage sums. The order of the
     * calls is no part of the result: the lists are sorted.
     *
     * The contributions are numbered over the block's rows, elements and
     * d2 in turn; this call visits those of number lane, lane + stride,
     * ... only, so that the lanes of a warp share a block, all of them
     * in the same row's elements at a time (the defaults: all of them).
     */
    template <class Action>
    GPU_ASSEMBLY_HOST_DEVICE inline void
    for_each_reduction_contribution(const ReductionListInput &input,
                                    const unsigned int        r,
                                    Action                   &action,
                                    const unsigned int        lane   = 0,
                                    const unsigned int        stride = 1)
    {
#if defined(__CUDA_ARCH__)
      const ReductionListInput &in = input;
#else
      // A copy, which the action's stores cannot alias: the host compiler
      // then keeps its fields in registers instead of reloading them after
      // every call of the action.
      const ReductionListInput in = input;
#endif
      const std::size_t  first = in.target_begin[r];
      const std::size_t  last  = in.target_begin[r + 1];
      const unsigned int n_en  = in.n_element_nodes;
      const unsigned int n_ed  = in.n_element_dofs;
      const unsigned int B     = in.elements_per_block;
      const bool         rhs   = first >= in.n_value_targets;
      // Contributions of an element to a row: one d2 each, or its
      // right-hand side entry.
      const unsigned int n_items = rhs ? 1 : n_ed;
      const index_type   first_row =
        rhs ? static_cast<index_type>(first - in.n_value_targets) :
                row_of_reduction_target(in, first);
      const index_type last_row =
        rhs ? static_cast<index_type>(last - 1 - in.n_value_targets) :
              row_of_reduction_target(in, last - 1);
      // The number of the current element's first contribution, modulo
      // stride (no division on the host, where one lane takes all).
      unsigned int number = 0;
      for (index_type row = first_row; row <= last_row; ++row)
        {
          const index_type node = in.node_of_dof[row];
          if (node == invalid_index)
            continue;
          const std::size_t end = in.node_element_offsets[node + 1];
          for (std::size_t i = in.node_element_offsets[node]; i < end;
               ++i, number = stride == 1 ? 0 : (number + n_items) % stride)
            {
              // This lane's first d2 of the element.
              const unsigned int d2_first =
                lane >= number ? lane - number : lane + stride - number;
              if (d2_first >= n_items)
                {
                  // Neither this nor the next d2_first / n_items - 1
                  // elements have contributions of this lane: with few
                  // per element (the right-hand side, simplices), a lane
                  // steps over most elements.
                  const std::size_t skip_more =
                    (d2_first / n_items < end - i ? d2_first / n_items :
                                                    end - i) -
                    1;
                  i += skip_more;
                  number =
                    (number + static_cast<unsigned int>(skip_more) * n_items) %
                    stride;
                  continue;
                }
              const std::size_t e = in.node_elements[i];
              unsigned int      a = 0;
              while (in.connectivity[e * n_en + a] != node)
                ++a;
              const unsigned int d1 =
                a * in.n_components + in.component_of_dof[row];
              const index_type   slot = in.slot_of[e];
              const unsigned int k    = slot / B;
              const unsigned int t    = slot % B;
              if (rhs)
                {
                  action(static_cast<std::size_t>(row) + in.n_value_targets -
                           first,
                         reduction_source(in, k, t, in.n_matrix_entries + d1));
                  continue;
                }
              for (unsigned int d2 = d2_first; d2 < n_ed; d2 += stride)
                {
                  index_type position;
                  if (in.nonzero_map != nullptr)
                    position = in.nonzero_map[(e * n_ed + d1) * n_ed + d2];
                  else
                    position = nonzero_position(
                      in.pattern,
                      in.row_offsets,
                      in.column_indices,
                      row,
                      in.block_location[(std::size_t(k) * n_ed + d2) * B + t]);
                  if (position == invalid_index)
                    continue;
                  const index_type target =
                    in.symmetric ? in.target_of_position[position] : position;
                  if (target >= 0 &&
                      static_cast<std::size_t>(target) >= first &&
                      static_cast<std::size_t>(target) < last)
                    action(
                      static_cast<std::size_t>(target) - first,
                      reduction_source(
                        in,
                        k,
                        t,
                        in.symmetric ?
                          SymmetricElementOutput<double>::packed_index(n_ed,
                                                                       d1,
                                                                       d2) :
                          d1 * n_ed + d2));
                }
            }
        }
    }

    /// A contribution found once: the target's place in its block and the
    /// source's element-data index.
    struct ReductionContribution
    {
      std::size_t place, source;
    };

    /// The contributions of a block stored as it found them, for a caller
    /// that reads them twice without finding them twice.
    struct StoredContributions
    {
      const ReductionContribution *contributions;
      std::size_t                  n;

      template <class Action>
      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(Action &action) const
      {
        for (std::size_t i = 0; i < n; ++i)
          action(contributions[i].place, contributions[i].source);
      }
    };

    // Counts the sources of each list and their smallest and largest.
    struct ReductionListCounter
    {
      index_type *counts;
      std::size_t low, high;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t p, const std::size_t source)
      {
        ++counts[p + 1];
        low  = source < low ? source : low;
        high = source > high ? source : high;
      }
    };

    // Puts each source into its sorted place in its list as it arrives: an
    // insertion sort, which for lists of a handful of sources beats sorting
    // them afterwards.
    struct ReductionListFiller
    {
      const index_type *offsets;
      index_type       *fill;
      index_type       *entries;
      std::size_t       base;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t p, const std::size_t element_data)
      {
        const index_type source =
          static_cast<index_type>(element_data - base + 1);
        index_type *const list_begin = entries + offsets[p];
        index_type       *place      = entries + fill[p]++;
        for (; place != list_begin && place[-1] > source; --place)
          *place = place[-1];
        *place = source;
      }
    };

    /**
     * Assign the @p n_lists lists of @p offsets to n_lanes lanes by the
     * Largest-Processing-Time rule of pack_lists_sliced(): lists longest
     * first, ties by index, each onto the lane of least (load, lane). Lanes
     * are kept in a ring of buckets by load, each a bit set of lanes, as
     * the host packing keeps them: every load lies within the longest list
     * of the least. Leaves the lists of lane t in lane_lists[lane_offsets[t]
     * ... lane_offsets[t + 1]) in the order they were given to it, the
     * loads in lane_load and the lanes by decreasing load, ties by lane, in
     * lane_order.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline void
    assign_reduction_lanes(const index_type            *offsets,
                           const unsigned int           n_lists,
                           const unsigned int           n_lanes,
                           const ReductionBlockScratch &s)
    {
      unsigned int max_length = 0;
      for (unsigned int l = 0; l < n_lists; ++l)
        {
          const unsigned int length = offsets[l + 1] - offsets[l];
          max_length                = length > max_length ? length : max_length;
        }
      // Lists by decreasing length, ties by index: a counting sort.
      for (unsigned int i = 0; i < max_length + 2; ++i)
        s.start[i] = 0;
      for (unsigned int l = 0; l < n_lists; ++l)
        ++s.start[max_length - (offsets[l + 1] - offsets[l]) + 1];
      for (unsigned int i = 1; i < max_length + 2; ++i)
        s.start[i] += s.start[i - 1];
      for (unsigned int l = 0; l < n_lists; ++l)
        s.order[s.start[max_length - (offsets[l + 1] - offsets[l])]++] = l;

      // The ring of max_length + 1 buckets of lanes by load.
      const unsigned int n_words   = (n_lanes + 63) / 64;
      const unsigned int n_buckets = max_length + 1;
      for (unsigned int b = 0; b < n_buckets; ++b)
        {
          s.count[b] = 0;
          for (unsigned int w = 0; w < n_words; ++w)
            s.bits[std::size_t(b) * n_words + w] = 0;
        }
      for (unsigned int t = 0; t < n_lanes; ++t)
        s.bits[t / 64] |= std::uint64_t(1) << (t % 64);
      s.count[0]          = n_lanes;
      unsigned long least = 0;
      for (unsigned int t = 0; t <= n_lanes; ++t)
        s.lane_offsets[t] = 0;
      for (unsigned int i = 0; i < n_lists; ++i)
        {
          const unsigned int l = s.order[i];
          // The lane of least (load, lane): the lowest bit of the first
          // non-empty bucket.
          while (s.count[least % n_buckets] == 0)
            ++least;
          const unsigned int b    = least % n_buckets;
          std::uint64_t     *word = s.bits + std::size_t(b) * n_words;
          unsigned int       w    = 0;
          while (word[w] == 0)
            ++w;
#if defined(__CUDA_ARCH__)
          const unsigned int bit = __ffsll(static_cast<long long>(word[w])) - 1;
#else
          const unsigned int bit = __builtin_ctzll(word[w]);
#endif
          word[w] &= word[w] - 1;
          --s.count[b];
          const unsigned int lane = w * 64 + bit;
          s.lane_of[l]            = lane;
          ++s.lane_offsets[lane + 1];
          const unsigned long load = least + (offsets[l + 1] - offsets[l]);
          const unsigned int  to   = load % n_buckets;
          s.bits[std::size_t(to) * n_words + lane / 64] |= std::uint64_t(1)
                                                           << (lane % 64);
          ++s.count[to];
        }
      for (unsigned int t = 0; t < n_lanes; ++t)
        s.lane_offsets[t + 1] += s.lane_offsets[t];
      // Each lane's lists in the order they were given to it, and its load.
      for (unsigned int t = 0; t < n_lanes; ++t)
        {
          s.lane_order[t] = s.lane_offsets[t];
          s.lane_load[t]  = 0;
        }
      for (unsigned int i = 0; i < n_lists; ++i)
        {
          const unsigned int l               = s.order[i];
          const unsigned int lane            = s.lane_of[l];
          s.lane_lists[s.lane_order[lane]++] = l;
          s.lane_load[lane] += offsets[l + 1] - offsets[l];
        }

      // Lanes by decreasing load, ties by lane (a stable counting sort):
      // the loads lie within max_length of each other.
      unsigned int max_load = 0;
      for (unsigned int t = 0; t < n_lanes; ++t)
        max_load = s.lane_load[t] > max_load ? s.lane_load[t] : max_load;
      for (unsigned int i = 0; i < max_length + 2; ++i)
        s.start[i] = 0;
      for (unsigned int t = 0; t < n_lanes; ++t)
        ++s.start[max_load - s.lane_load[t] + 1];
      for (unsigned int i = 1; i < max_length + 2; ++i)
        s.start[i] += s.start[i - 1];
      for (unsigned int t = 0; t < n_lanes; ++t)
        s.lane_order[s.start[max_load - s.lane_load[t]]++] = t;
    }

    /// The length of a list, its sources and its target, kept from a
    /// block's layout for its write: a node has fewer elements.
    using ReductionListLength = std::uint16_t;

    /**
     * Pack the @p n_lists lists of s.list_offsets into lanes
     * (assign_reduction_lanes()) and return the number of entries of the
     * block's slices of 32 lanes, each as wide as its longest lane; the end
     * of each, relative to the block's start, to @p slice_ends unless null.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline std::size_t
    pack_reduction_block(const ReductionListInput    &in,
                         const unsigned int           n_lists,
                         const ReductionBlockScratch &s,
                         std::size_t *const           slice_ends)
    {
      assign_reduction_lanes(s.list_offsets, n_lists, in.n_lanes, s);
      std::size_t end = 0;
      for (unsigned int w = 0; w < in.n_lanes / reduction_slice_width; ++w)
        {
          end +=
            std::size_t(s.lane_load[s.lane_order[w * reduction_slice_width]]) *
            reduction_slice_width;
          if (slice_ends != nullptr)
            slice_ends[w] = end;
        }
      return end;
    }

    /**
     * Count the lists of block @p r, whose @p contributions
     * (StoredContributions) it visits, into
     * s.list_offsets (each closed by its target), their lengths into
     * @p lengths (at the block's targets) unless null, and pack them
     * (pack_reduction_block()). Writes the block's slice ends to
     * @p slice_ends, its smallest and largest source to @p low and @p high
     * (0 without sources), and returns the number of its entries.
     */
    template <class Contributions>
    GPU_ASSEMBLY_HOST_DEVICE inline std::size_t
    reduction_block_layout(const ReductionListInput    &in,
                           const unsigned int           r,
                           const Contributions         &contributions,
                           const ReductionBlockScratch &s,
                           std::size_t *const           slice_ends,
                           std::size_t                 &low,
                           std::size_t                 &high,
                           ReductionListLength *const   lengths)
    {
      const unsigned int n_local = in.target_begin[r + 1] - in.target_begin[r];
      for (unsigned int p = 0; p <= n_local; ++p)
        s.list_offsets[p] = 0;
      ReductionListCounter counter{s.list_offsets,
                                   ~std::size_t(0),
                                   std::size_t(0)};
      contributions(counter);
      for (unsigned int p = 0; p < n_local; ++p)
        {
          if (lengths != nullptr)
            lengths[in.target_begin[r] + p] =
              static_cast<ReductionListLength>(s.list_offsets[p + 1] + 1);
          s.list_offsets[p + 1] += s.list_offsets[p] + 1;
        }
      const bool any = s.list_offsets[n_local] > index_type(n_local);
      low            = any ? counter.low : 0;
      high           = any ? counter.high : 0;
      return pack_reduction_block(in, n_local, s, slice_ends);
    }

    /**
     * The list offsets and lanes of block @p r again, from the @p lengths
     * of its lists, for write_reduction_block() or
     * store_reduction_slices(): returns the block's number of entries and
     * writes its slice ends to @p slice_ends unless null, as
     * pack_reduction_block().
     */
    GPU_ASSEMBLY_HOST_DEVICE inline std::size_t
    relayout_reduction_block(const ReductionListInput        &in,
                             const unsigned int               r,
                             const ReductionBlockScratch     &s,
                             const ReductionListLength *const lengths,
                             std::size_t *const slice_ends = nullptr)
    {
      const unsigned int n_local = in.target_begin[r + 1] - in.target_begin[r];
      const ReductionListLength *const length = lengths + in.target_begin[r];
      s.list_offsets[0]                       = 0;
      for (unsigned int p = 0; p < n_local; ++p)
        s.list_offsets[p + 1] = s.list_offsets[p] + length[p];
      return pack_reduction_block(in, n_local, s, slice_ends);
    }

    /**
     * Lane @p i's column of every slice of a block whose lists @p entries
     * holds at s.list_offsets: entry j of lane s.lane_order[w * 32 + i] at
     * slice start + j * 32 + i of @p out, padded with 0. The 32 columns
     * of a slice make it whole, so that the 32 threads of a warp store a
     * slice's rows together.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline void
    store_reduction_slices(const ReductionListInput    &in,
                           const unsigned int           i,
                           const ReductionBlockScratch &s,
                           const index_type *const      entries,
                           index_type *const            out)
    {
      std::size_t start = 0;
      for (unsigned int w = 0; w < in.n_lanes / reduction_slice_width; ++w)
        {
          const unsigned int first = w * reduction_slice_width;
          const unsigned int width = s.lane_load[s.lane_order[first]];
          const unsigned int lane  = s.lane_order[first + i];
          index_type *const  to    = out + start + i;
          // One step per row of the slice, the lane's next entry or its
          // padding: the 32 lanes of a warp store each row together. No
          // list is empty (its target closes it).
          unsigned int a     = s.lane_offsets[lane];
          unsigned int a_end = s.lane_offsets[lane + 1];
          index_type   k = 0, k_end = 0;
          if (a < a_end)
            {
              k     = s.list_offsets[s.lane_lists[a]];
              k_end = s.list_offsets[s.lane_lists[a] + 1];
            }
          for (unsigned int j = 0; j < width; ++j)
            {
              index_type entry = 0;
              if (k < k_end)
                {
                  entry = entries[k++];
                  if (k == k_end && ++a < a_end)
                    {
                      k     = s.list_offsets[s.lane_lists[a]];
                      k_end = s.list_offsets[s.lane_lists[a] + 1];
                    }
                }
              to[std::size_t(j) * reduction_slice_width] = entry;
            }
          start += std::size_t(width) * reduction_slice_width;
        }
    }

    /**
     * Block @p r's sorted lists of its @p contributions
     * (StoredContributions), each closed by -(p + 1) for its target p,
     * relative to @p base (its smallest source), into @p entries
     * (s.list_offsets[n_targets] of them), then stored by slices into
     * @p out (reduction_block_layout()'s number of entries) by
     * store_reduction_slices(). Needs the scratch that
     * reduction_block_layout() or relayout_reduction_block() left for the
     * block.
     */
    template <class Contributions>
    GPU_ASSEMBLY_HOST_DEVICE inline void
    write_reduction_block(const ReductionListInput    &in,
                          const unsigned int           r,
                          const Contributions         &contributions,
                          const std::size_t            base,
                          const ReductionBlockScratch &s,
                          index_type *const            entries,
                          index_type *const            out)
    {
      const unsigned int n_local = in.target_begin[r + 1] - in.target_begin[r];
      for (unsigned int p = 0; p < n_local; ++p)
        s.fill[p] = s.list_offsets[p];
      ReductionListFiller filler{s.list_offsets, s.fill, entries, base};
      contributions(filler);
      for (unsigned int p = 0; p < n_local; ++p)
        entries[s.fill[p]] = -static_cast<index_type>(p + 1);
      for (unsigned int i = 0; i < reduction_slice_width; ++i)
        store_reduction_slices(in, i, s, entries, out);
    }

    /**
     * @name A block built by a warp
     *
     * The device builds a block by the 32 threads of a warp: each finds
     * its share of the block's contributions (for_each_reduction_contribution()
     * with stride 32), so that the lanes read the same row's elements
     * together, and counts or places them by atomic operations, which the
     * host, running the lanes one after another, does by plain ones. The
     * steps of a block, each for lane 0 to 31 before the next:
     *
     * - layout: clear_reduction_counts(), count_reduction_lane(),
     *   store_reduction_lengths(); the block's smallest and largest source
     *   and its number of list entries are the least, the greatest and the
     *   sum over its lanes. Then relayout_reduction_block() with slice
     *   ends, a thread per block: the lane assignment (LPT) is sequential.
     * - write: relayout_reduction_block(), a thread per block, then
     *   start_reduction_fill(), place_reduction_sources(),
     *   close_reduction_lists() and store_reduction_slices().
     *
     * The lists come out as the host plan's: counts do not depend on the
     * order of the contributions, and the sources of a list are distinct,
     * so that sorting them gives one order.
     */
    ///@{

    /// Take the next of @p counter's values: atomically on the device,
    /// where the lanes of a warp run together.
    GPU_ASSEMBLY_HOST_DEVICE inline index_type
    claim_reduction_slot(index_type *const counter)
    {
#if defined(__CUDA_ARCH__)
      return atomicAdd(counter, 1);
#else
      return (*counter)++;
#endif
    }

    /// Lane @p lane's share of zeroing the counts of block @p r's lists.
    GPU_ASSEMBLY_HOST_DEVICE inline void
    clear_reduction_counts(const ReductionListInput &in,
                           const unsigned int        r,
                           const unsigned int        lane,
                           index_type *const         counts)
    {
      const unsigned int n_local = in.target_begin[r + 1] - in.target_begin[r];
      for (unsigned int p = lane; p < n_local; p += reduction_slice_width)
        counts[p] = 0;
    }

    // Counts the sources of each list and the lane's smallest and largest.
    struct ReductionLaneCounter
    {
      index_type *counts;
      std::size_t low, high;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t p, const std::size_t source)
      {
        claim_reduction_slot(counts + p);
        low  = source < low ? source : low;
        high = source > high ? source : high;
      }
    };

    /**
     * Count lane @p lane's share of the contributions of block @p r into
     * @p counts (a count per list, cleared); its smallest and largest
     * source to @p low and @p high (~0 and 0 without any).
     */
    GPU_ASSEMBLY_HOST_DEVICE inline void
    count_reduction_lane(const ReductionListInput &in,
                         const unsigned int        r,
                         const unsigned int        lane,
                         index_type *const         counts,
                         std::size_t              &low,
                         std::size_t              &high)
    {
      ReductionLaneCounter counter{counts, ~std::size_t(0), std::size_t(0)};
      for_each_reduction_contribution(in,
                                      r,
                                      counter,
                                      lane,
                                      reduction_slice_width);
      low  = counter.low;
      high = counter.high;
    }

    /**
     * Store the lengths of lane @p lane's share of block @p r's lists (each
     * with its target) from @p counts to @p lengths, at the block's
     * targets, and return their number of entries.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline std::size_t
    store_reduction_lengths(const ReductionListInput  &in,
                            const unsigned int         r,
                            const unsigned int         lane,
                            const index_type *const    counts,
                            ReductionListLength *const lengths)
    {
      const unsigned int n_local = in.target_begin[r + 1] - in.target_begin[r];
      std::size_t        n       = 0;
      for (unsigned int p = lane; p < n_local; p += reduction_slice_width)
        {
          lengths[in.target_begin[r] + p] =
            static_cast<ReductionListLength>(counts[p] + 1);
          n += counts[p] + 1;
        }
      return n;
    }

    /// Lane @p lane's share of setting the fill counters @p fill of block
    /// @p r's lists to their starts (s.list_offsets).
    GPU_ASSEMBLY_HOST_DEVICE inline void
    start_reduction_fill(const ReductionListInput    &in,
                         const unsigned int           r,
                         const unsigned int           lane,
                         const ReductionBlockScratch &s,
                         index_type *const            fill)
    {
      const unsigned int n_local = in.target_begin[r + 1] - in.target_begin[r];
      for (unsigned int p = lane; p < n_local; p += reduction_slice_width)
        fill[p] = s.list_offsets[p];
    }

    // Puts each source, relative to base, into the next free place of its
    // list.
    struct ReductionLanePlacer
    {
      index_type *fill;
      index_type *entries;
      std::size_t base;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t p, const std::size_t element_data)
      {
        entries[claim_reduction_slot(fill + p)] =
          static_cast<index_type>(element_data - base + 1);
      }
    };

    /// Place lane @p lane's share of the contributions of block @p r into
    /// its lists in @p entries, unsorted, by the counters @p fill.
    GPU_ASSEMBLY_HOST_DEVICE inline void
    place_reduction_sources(const ReductionListInput &in,
                            const unsigned int        r,
                            const unsigned int        lane,
                            const std::size_t         base,
                            index_type *const         fill,
                            index_type *const         entries)
    {
      ReductionLanePlacer placer{fill, entries, base};
      for_each_reduction_contribution(in,
                                      r,
                                      placer,
                                      lane,
                                      reduction_slice_width);
    }

    /// Sort the sources of lane @p lane's share of block @p r's lists in
    /// @p entries (lists at s.list_offsets, their sources placed) and
    /// close each by -(p + 1) for its target p.
    GPU_ASSEMBLY_HOST_DEVICE inline void
    close_reduction_lists(const ReductionListInput    &in,
                          const unsigned int           r,
                          const unsigned int           lane,
                          const ReductionBlockScratch &s,
                          index_type *const            entries)
    {
      const unsigned int n_local = in.target_begin[r + 1] - in.target_begin[r];
      for (unsigned int p = lane; p < n_local; p += reduction_slice_width)
        {
          const index_type begin = s.list_offsets[p];
          const index_type end   = s.list_offsets[p + 1] - 1;
          // Lists of a handful of sources: insertion.
          for (index_type i = begin + 1; i < end; ++i)
            {
              const index_type source = entries[i];
              index_type       j      = i;
              for (; j > begin && entries[j - 1] > source; --j)
                entries[j] = entries[j - 1];
              entries[j] = source;
            }
          entries[end] = -static_cast<index_type>(p + 1);
        }
    }

    ///@}



    /**
     * The host arrays that the reduction lists need besides the plan's and
     * the mesh's (ReductionListInput), which GlobalNZPlan::reinit() hands
     * over where the device builds the lists.
     */
    struct ReductionListSource
    {
      std::vector<index_type>  node_of_dof, component_of_dof, slot_of;
      std::vector<std::size_t> node_element_offsets;
      std::vector<index_type>  node_elements;
      /// Symmetric element data: the target of each nonzero summed from its
      /// own row, else -1 (ReductionListInput::target_of_position).
      std::vector<index_type> target_of_position;
      /// The most elements of a node, plus one: no list is longer
      /// (GlobalNZPlan::reinit() refuses a mesh whose lists do not fit
      /// ReductionListLength).
      unsigned int max_list_length = 0;
    };

    /**
     * The ReductionListInput of @p plan (all but its reduction arrays
     * built), @p arrays and @p source in host memory; K from
     * arrays.nonzero_map if @p use_nonzero_map, else by search in the
     * pattern.
     */
    ReductionListInput
    host_reduction_list_input(const GlobalNZPlan        &plan,
                              const MeshArrays          &arrays,
                              const ReductionListSource &source,
                              const bool                 use_nonzero_map);

    /**
     * Where value @p v of a plan's block_supplemental comes from: its
     * index in the mesh's S(e) (@p n_supplemental values per element), or
     * -1 in a padding slot, which holds 0. The gather that builds the block
     * layout on the device (gather_block_supplemental()) reads this for
     * each value; @p block_element is GlobalNZPlan::block_element with
     * @p elements_per_block slots per block.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline long long
    block_supplemental_source(const index_type *const block_element,
                              const std::size_t       v,
                              const unsigned int      elements_per_block,
                              const unsigned int      n_supplemental)
    {
      const std::size_t  slab = v / elements_per_block; // k * n + i
      const unsigned int t    = v % elements_per_block;
      const std::size_t  k    = slab / n_supplemental;
      const index_type   e    = block_element[k * elements_per_block + t];
      return e < 0 ? -1 :
                     static_cast<long long>(e) * n_supplemental +
                       static_cast<long long>(slab % n_supplemental);
    }

    /**
     * Size and fill @p plan's block_supplemental on the host's threads
     * from @p arrays, as GlobalNZPlan::reinit() does without a build on
     * the device: where the device could not gather it.
     */
    void
    fill_block_supplemental(GlobalNZPlan &plan, const MeshArrays &arrays);

    /**
     * Throw ExcUnsupportedInput where the sources @p low to @p high of
     * reduction block @p r span more than its 32-bit entries address.
     */
    void
    check_reduction_source_span(const unsigned int r,
                                const std::size_t  low,
                                const std::size_t  high);

    /**
     * Build @p plan's reduction_slice_offsets, reduction_source_base and
     * reduction_array (and n_reduction_entries) on the host's threads from
     * @p source, as GlobalNZPlan::reinit() does, timed as the steps
     * "reduction lists" and "reduction array" of @p steps. Throws
     * ExcUnsupportedInput for the first block whose sources span more than
     * its 32-bit entries address.
     */
    void
    build_reduction_arrays_on_host(GlobalNZPlan              &plan,
                                   const MeshArrays          &arrays,
                                   const ReductionListSource &source,
                                   SetupTimes::Steps         &steps);

    /**
     * Build the reduction arrays on the current CUDA device from @p in,
     * whose pointers are device memory (nonzero_map null: K is found in
     * the pattern; target_of_position null: it is found here from
     * upper_position of the @p n_nonzeros nonzeros), for @p n_blocks
     * blocks of at most @p max_lists targets and lists of at most
     * @p max_list_length entries (ReductionListSource::max_list_length):
     * the three arrays that uploading build_reduction_arrays_on_host()'s
     * would give, byte for byte. Blocks are built in batches whose scratch
     * takes at most @p scratch_bytes (0: an eighth of the free device
     * memory), at least one block. Timed as the steps "reduction lists
     * (device)" and "reduction array (device)" of @p steps. Throws
     * ExcUnsupportedInput as the host build does, and ExcDeviceMemory where
     * the device's memory does not hold the build.
     */
    void
    build_reduction_arrays_on_device(
      ReductionListInput                in,
      const std::size_t                 n_nonzeros,
      const unsigned int                n_blocks,
      const unsigned int                max_lists,
      const unsigned int                max_list_length,
      DeviceVector<unsigned long long> &slice_offsets,
      DeviceVector<unsigned long long> &source_base,
      DeviceVector<int>                &reduction_array,
      SetupTimes::Steps                &steps,
      const std::size_t                 scratch_bytes = 0);

    /**
     * A plan's block_supplemental built on the current CUDA device, on the
     * default stream: @p block_supplemental (n_element_blocks *
     * n_supplemental * elements_per_block values) from the mesh's S(e) in
     * @p supplemental (n_supplemental values per element) and the slots'
     * elements @p block_element (GlobalNZPlan::block_element), 0 in the
     * padding slots; all device memory. The values that uploading the
     * host plan's block_supplemental gives, bit for bit.
     */
    template <typename Number>
    void
    gather_block_supplemental(const index_type *block_element,
                              const Number     *supplemental,
                              unsigned int      n_element_blocks,
                              unsigned int      elements_per_block,
                              unsigned int      n_supplemental,
                              Number           *block_supplemental);
  } // namespace internal
} // namespace GPUAssembly

#endif
