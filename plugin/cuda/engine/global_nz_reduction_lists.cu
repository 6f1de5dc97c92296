// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/device_scan.cuh>
#include <gpu_assembly/base/kernel_launch.cuh>
#include <gpu_assembly/engine/global_nz/reduction_lists.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

// GlobalNZ's reduction arrays built on the device: the per-block steps of
// reduction_lists.h, a warp per reduction block (finding, counting and
// placing the contributions, sorting the lists, storing the slices), and
// the lane assignment by a warp too, with the result of the host's
// one-thread packing, in batches of blocks whose scratch stays within a
// share of the device's free memory. All work runs on the default stream; each
// host read of a device value synchronises with it.

namespace GPUAssembly
{
  namespace internal
  {
    namespace
    {
      // Warps per block of the kernels with a warp per reduction block.
      constexpr unsigned int warps_per_cta       = 4;
      constexpr unsigned int warp_cta_size       = warps_per_cta * 32;
      constexpr std::size_t  shared_counts_limit = 48 * 1024;

      static_assert(sizeof(std::size_t) == sizeof(unsigned long long),
                    "Device offsets are stored as unsigned long long.");
      static_assert(std::is_same_v<ReductionListLength, std::uint16_t>,
                    "List lengths are stored as std::uint16_t.");

      std::size_t *
      as_size_t(DeviceVector<unsigned long long> &v)
      {
        return reinterpret_cast<std::size_t *>(v.data());
      }

      __global__ void
      mark_upper_positions(const index_type *const upper_position,
                           const std::size_t       n_targets,
                           index_type *const       target_of_position)
      {
        const std::size_t u =
          blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
        if (u < n_targets)
          target_of_position[upper_position[u]] = static_cast<index_type>(u);
      }

      __global__ void
      fill_value(index_type *const values,
                 const std::size_t n,
                 const index_type  value)
      {
        const std::size_t i =
          blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
        if (i < n)
          values[i] = value;
      }

      // What the blocks of a batch share: their scratch, one after another.
      struct BatchScratch
      {
        std::uint64_t *memory;
        std::size_t    words;
        unsigned int   max_lists, n_lanes, max_list_length;

        __device__ ReductionBlockScratch
        of(const unsigned int i) const
        {
          return make_reduction_scratch(memory + i * words,
                                        max_lists,
                                        n_lanes,
                                        max_list_length);
        }
      };

      // The reduction block of a warp's lane: its index i in the batch and
      // the lane.
      struct WarpOfBlock
      {
        unsigned int i, lane;
      };

      __device__ WarpOfBlock
      warp_of_block()
      {
        return {(blockIdx.x * blockDim.x + threadIdx.x) / 32, threadIdx.x % 32};
      }

      // The counters of the lists of warp i's block: in shared memory where
      // a block of warps_per_cta warps holds them (shared_counts), else in
      // the block's scratch.
      __device__ index_type *
      counters_of(const BatchScratch &scratch,
                  const unsigned int  i,
                  const bool          shared_counts)
      {
        extern __shared__ index_type counters[];
        return shared_counts ? counters + (threadIdx.x / 32) *
                                            std::size_t(scratch.max_lists) :
                               scratch.of(i).fill;
      }

      template <typename T>
      __device__ T
      warp_min(T value)
      {
        for (unsigned int d = 16; d > 0; d /= 2)
          {
            const T other = __shfl_xor_sync(0xffffffffu, value, d);
            value         = other < value ? other : value;
          }
        return value;
      }

      template <typename T>
      __device__ T
      warp_max(T value)
      {
        for (unsigned int d = 16; d > 0; d /= 2)
          {
            const T other = __shfl_xor_sync(0xffffffffu, value, d);
            value         = other > value ? other : value;
          }
        return value;
      }

      template <typename T>
      __device__ T
      warp_sum(T value)
      {
        for (unsigned int d = 16; d > 0; d /= 2)
          value += __shfl_xor_sync(0xffffffffu, value, d);
        return value;
      }

      // Pass 1, a warp per block of [first, first + n): the lengths of the
      // block's lists, their number of entries, its source base and
      // highest source, and the first block whose sources span too far.
      __global__ void
      count_lists(const ReductionListInput   in,
                  const unsigned int         first,
                  const unsigned int         n,
                  const BatchScratch         scratch,
                  const bool                 shared_counts,
                  std::size_t *const         source_base,
                  std::size_t *const         list_entries,
                  std::size_t *const         source_high,
                  ReductionListLength *const lengths,
                  unsigned int *const        wide_block)
      {
        const WarpOfBlock w = warp_of_block();
        if (w.i >= n)
          return;
        const unsigned int r      = first + w.i;
        index_type *const  counts = counters_of(scratch, w.i, shared_counts);
        clear_reduction_counts(in, r, w.lane, counts);
        __syncwarp();
        std::size_t low, high;
        count_reduction_lane(in, r, w.lane, counts, low, high);
        __syncwarp();
        const std::size_t n_entries =
          warp_sum(store_reduction_lengths(in, r, w.lane, counts, lengths));
        low  = warp_min<unsigned long long>(low);
        high = warp_max<unsigned long long>(high);
        if (w.lane == 0)
          {
            // Without sources a block's lists hold their targets only.
            const bool any  = n_entries > std::size_t(in.target_begin[r + 1] -
                                                     in.target_begin[r]);
            low             = any ? low : 0;
            high            = any ? high : 0;
            source_base[r]  = low;
            source_high[r]  = high;
            list_entries[r] = n_entries;
            if (high - low >= max_reduction_source_span)
              atomicMin(wide_block, r);
          }
      }

      constexpr unsigned int all_lanes = 0xffffffffu;

      __device__ unsigned int
      warp_min_of(const unsigned int value)
      {
#if __CUDA_ARCH__ >= 800
        return __reduce_min_sync(all_lanes, value);
#else
        return warp_min(value);
#endif
      }

      __device__ unsigned int
      warp_max_of(const unsigned int value)
      {
#if __CUDA_ARCH__ >= 800
        return __reduce_max_sync(all_lanes, value);
#else
        return warp_max(value);
#endif
      }

      template <typename T>
      __device__ T
      warp_inclusive_sum(T value, const unsigned int lane)
      {
        for (unsigned int d = 1; d < 32; d *= 2)
          {
            const T other = __shfl_up_sync(all_lanes, value, d);
            if (lane >= d)
              value += other;
          }
        return value;
      }

      // Items [0, n) into out by increasing key_of(item) < n_keys, ties in
      // item order, by a warp: a counting sort whose offsets go to start
      // (n_keys + 1 entries), its items placed 32 at a time in item order,
      // each after the items of its key before it.
      template <class KeyOf>
      __device__ void
      stable_counting_sort(const unsigned int  n,
                           const unsigned int  n_keys,
                           const KeyOf        &key_of,
                           unsigned int *const start,
                           unsigned int *const out,
                           const unsigned int  lane)
      {
        for (unsigned int k = lane; k <= n_keys; k += 32)
          start[k] = 0;
        __syncwarp();
        for (unsigned int x = lane; x < n; x += 32)
          atomicAdd(start + key_of(x) + 1, 1u);
        __syncwarp();
        // start[k] becomes the number of items of keys below k.
        unsigned int carry = 0;
        for (unsigned int base = 0; base <= n_keys; base += 32)
          {
            const unsigned int k = base + lane;
            const unsigned int sum =
              warp_inclusive_sum(k <= n_keys ? start[k] : 0u, lane) + carry;
            if (k <= n_keys)
              start[k] = sum;
            carry = __shfl_sync(all_lanes, sum, 31);
          }
        __syncwarp();
        for (unsigned int base = 0; base < n; base += 32)
          {
            const unsigned int x     = base + lane;
            const bool         valid = x < n;
            const unsigned int key   = valid ? key_of(x) : ~0u;
            const unsigned int peers = __match_any_sync(all_lanes, key);
            const unsigned int rank  = __popc(peers & ((1u << lane) - 1));
            if (valid)
              out[start[key] + rank] = x;
            __syncwarp();
            if (valid && rank == 0)
              start[key] += __popc(peers);
            __syncwarp();
          }
      }

      // relayout_reduction_block() of block r by the 32 lanes of a warp:
      // the same list offsets, lane assignment (Largest Processing Time,
      // lists longest first, ties by index, each onto the lane of least
      // (load, lane)), lane lists, loads and order, slice ends and size.
      // The loads of the n_lanes lanes are held in registers, n_lanes / 32
      // consecutive lanes per thread, and each list's lane is a minimum
      // over the warp: the host's one-thread packing walks a ring of
      // buckets in memory instead, which on the device made the packing a
      // chain of scattered loads per block.
      __device__ std::size_t
                 relayout_reduction_block_by_warp(const ReductionListInput        &in,
                                                  const unsigned int               r,
                                                  const ReductionBlockScratch     &s,
                                                  const ReductionListLength *const lengths,
                                                  std::size_t *const slice_ends,
                                                  const unsigned int lane)
      {
        const unsigned int n_lists =
          in.target_begin[r + 1] - in.target_begin[r];
        const ReductionListLength *const length = lengths + in.target_begin[r];

        // The list offsets, and the longest list.
        unsigned int carry = 0, max_length = 0;
        if (lane == 0)
          s.list_offsets[0] = 0;
        for (unsigned int base = 0; base < n_lists; base += 32)
          {
            const unsigned int p   = base + lane;
            const unsigned int n   = p < n_lists ? length[p] : 0u;
            const unsigned int end = warp_inclusive_sum(n, lane) + carry;
            if (p < n_lists)
              s.list_offsets[p + 1] = end;
            carry      = __shfl_sync(all_lanes, end, 31);
            max_length = n > max_length ? n : max_length;
          }
        max_length = warp_max_of(max_length);

        // Lists by decreasing length, ties by index.
        stable_counting_sort(
          n_lists,
          max_length + 1,
          [&](const unsigned int l) {
            return max_length - length[l];
          },
          s.start,
          s.order,
          lane);

        // Each list onto the lane of least (load, lane), in that order.
        constexpr unsigned int max_per_thread = 1024 / 32;
        const unsigned int     per_thread     = in.n_lanes / 32;
        const unsigned int     first_lane     = lane * per_thread;
        unsigned int           load[max_per_thread], count[max_per_thread];
        for (unsigned int j = 0; j < per_thread; ++j)
          {
            load[j]  = 0;
            count[j] = 0;
          }
        unsigned int least_load = 0, least_lane = first_lane;
        for (unsigned int base = 0; base < n_lists; base += 32)
          {
            // 32 lists at a time, one per thread, then handed round.
            const unsigned int x       = base + lane;
            unsigned int       my_list = 0, my_length = 0;
            if (x < n_lists)
              {
                my_list   = s.order[x];
                my_length = length[my_list];
              }
            const unsigned int n_here =
              n_lists - base < 32 ? n_lists - base : 32;
            for (unsigned int k = 0; k < n_here; ++k)
              {
                const unsigned int l     = __shfl_sync(all_lanes, my_list, k);
                const unsigned int n     = __shfl_sync(all_lanes, my_length, k);
                const unsigned int least = warp_min_of(least_load);
                const unsigned int target =
                  warp_min_of(least_load == least ? least_lane : ~0u);
                if (target / per_thread == lane)
                  {
                    const unsigned int j = target - first_lane;
                    load[j] += n;
                    ++count[j];
                    s.lane_of[l] = target;
                    least_load   = load[0];
                    least_lane   = first_lane;
                    for (unsigned int i = 1; i < per_thread; ++i)
                      if (load[i] < least_load)
                        {
                          least_load = load[i];
                          least_lane = first_lane + i;
                        }
                  }
              }
          }

        // Loads, and lane offsets from the counts.
        unsigned int my_lists = 0, max_load = 0;
        for (unsigned int j = 0; j < per_thread; ++j)
          {
            s.lane_load[first_lane + j] = load[j];
            my_lists += count[j];
            max_load = load[j] > max_load ? load[j] : max_load;
          }
        max_load         = warp_max_of(max_load);
        unsigned int end = warp_inclusive_sum(my_lists, lane) - my_lists;
        if (lane == 0)
          s.lane_offsets[0] = 0;
        for (unsigned int j = 0; j < per_thread; ++j)
          {
            end += count[j];
            s.lane_offsets[first_lane + j + 1] = end;
          }
        __syncwarp();

        // Each lane's lists in the order they were given to it, lane_order
        // serving as the lanes' cursors.
        for (unsigned int t = lane; t < in.n_lanes; t += 32)
          s.lane_order[t] = s.lane_offsets[t];
        __syncwarp();
        for (unsigned int base = 0; base < n_lists; base += 32)
          {
            const unsigned int x       = base + lane;
            const bool         valid   = x < n_lists;
            const unsigned int l       = valid ? s.order[x] : 0u;
            const unsigned int to_lane = valid ? s.lane_of[l] : ~0u;
            const unsigned int peers   = __match_any_sync(all_lanes, to_lane);
            const unsigned int rank    = __popc(peers & ((1u << lane) - 1));
            if (valid)
              s.lane_lists[s.lane_order[to_lane] + rank] = l;
            __syncwarp();
            if (valid && rank == 0)
              s.lane_order[to_lane] += __popc(peers);
            __syncwarp();
          }

        // Lanes by decreasing load, ties by lane: the loads lie within
        // max_length of each other.
        stable_counting_sort(
          in.n_lanes,
          max_length + 1,
          [&](const unsigned int t) {
            return max_load - s.lane_load[t];
          },
          s.start,
          s.lane_order,
          lane);

        // Slice ends: each slice as wide as its longest lane.
        const unsigned int W         = in.n_lanes / reduction_slice_width;
        const std::size_t  slice_end = warp_inclusive_sum(
          lane < W ? std::size_t(s.lane_load[s.lane_order[lane * 32]]) * 32 :
                     std::size_t(0),
          lane);
        if (slice_ends != nullptr && lane < W)
          slice_ends[lane] = slice_end;
        return __shfl_sync(all_lanes, slice_end, W - 1);
      }

      // Blocks [first, first + n), a warp each: packed from their lists'
      // lengths, their sizes and, unless null, their slice ends relative to
      // their starts.
      __global__ void
      pack_blocks(const ReductionListInput         in,
                  const unsigned int               first,
                  const unsigned int               n,
                  const BatchScratch               scratch,
                  const ReductionListLength *const lengths,
                  std::size_t *const               slice_offsets,
                  std::size_t *const               block_sizes)
      {
        const WarpOfBlock w = warp_of_block();
        if (w.i >= n)
          return;
        const unsigned int r    = first + w.i;
        const unsigned int W    = in.n_lanes / reduction_slice_width;
        const std::size_t  size = relayout_reduction_block_by_warp(
          in,
          r,
          scratch.of(w.i),
          lengths,
          slice_offsets == nullptr ? nullptr :
                                      slice_offsets + std::size_t(r) * W + 1,
          w.lane);
        if (block_sizes != nullptr && w.lane == 0)
          block_sizes[r] = size;
      }

      // Each block's slice ends moved by its start.
      __global__ void
      shift_slice_offsets(std::size_t *const       slice_offsets,
                          const std::size_t *const block_start,
                          const std::size_t        n,
                          const unsigned int       W)
      {
        const std::size_t i =
          blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
        if (i < n)
          slice_offsets[i + 1] += block_start[i / W];
      }

      // Pass 2, a warp per block of [first, first + n), packed by
      // pack_blocks() into its scratch: its lists filled at entries +
      // entry_offsets[i], sorted and stored into the block's place of the
      // array.
      __global__ void
      write_blocks(const ReductionListInput in,
                   const unsigned int       first,
                   const unsigned int       n,
                   const BatchScratch       scratch,
                   const bool               shared_counts,
                   const std::size_t *const source_base,
                   const std::size_t *const block_start,
                   const std::size_t *const entry_offsets,
                   index_type *const        entries,
                   index_type *const        reduction_array)
      {
        const WarpOfBlock w = warp_of_block();
        if (w.i >= n)
          return;
        const unsigned int          r = first + w.i;
        const ReductionBlockScratch s = scratch.of(w.i);
        index_type *const fill = counters_of(scratch, w.i, shared_counts);
        index_type *const list = entries + entry_offsets[w.i];
        start_reduction_fill(in, r, w.lane, s, fill);
        __syncwarp();
        place_reduction_sources(in, r, w.lane, source_base[r], fill, list);
        __syncwarp();
        close_reduction_lists(in, r, w.lane, s, list);
        __syncwarp();
        store_reduction_slices(in,
                               w.lane,
                               s,
                               list,
                               reduction_array + block_start[r]);
      }
    } // namespace



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
      const std::size_t                 scratch_bytes)
    {
      const unsigned int W = in.n_lanes / reduction_slice_width;

      // Symmetric element data: the target of each nonzero summed from its
      // own row, the upper member of its pair.
      DeviceVector<int> target_of_position;
      if (in.symmetric)
        {
          target_of_position.reinit(n_nonzeros, true);
          launch_kernel_over("fill_value",
                             fill_value,
                             n_nonzeros,
                             256,
                             nullptr,
                             target_of_position.data(),
                             n_nonzeros,
                             index_type(-1));
          launch_kernel_over("mark_upper_positions",
                             mark_upper_positions,
                             in.n_value_targets,
                             256,
                             nullptr,
                             in.upper_position,
                             in.n_value_targets,
                             target_of_position.data());
          in.target_of_position = target_of_position.data();
        }

      // Scratch of a batch: at most scratch_bytes, by default an eighth of
      // the free memory.
      const std::size_t words =
        reduction_scratch_words(max_lists, in.n_lanes, max_list_length);
      std::size_t budget = scratch_bytes;
      if (budget == 0)
        {
          std::size_t free_bytes = 0, total_bytes = 0;
          GPU_ASSEMBLY_CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
          budget = free_bytes / 8;
        }
      const unsigned int batch =
        static_cast<unsigned int>(std::max<std::size_t>(
          1,
          std::min<std::size_t>(n_blocks,
                                budget / (words * sizeof(std::uint64_t)))));
      DeviceVector<unsigned long long> memory;
      memory.reinit(std::size_t(batch) * words, true);
      const BatchScratch scratch{reinterpret_cast<std::uint64_t *>(
                                   memory.data()),
                                 words,
                                 max_lists,
                                 in.n_lanes,
                                 max_list_length};

      steps.next("reduction lists (device)");
      slice_offsets.reinit(std::size_t(n_blocks) * W + 1);
      source_base.reinit(n_blocks, true);
      DeviceVector<unsigned long long> block_sizes, list_entries, source_high,
        block_start;
      block_sizes.reinit(std::size_t(n_blocks) + 1);
      list_entries.reinit(std::size_t(n_blocks) + 1);
      source_high.reinit(n_blocks, true);
      // The lengths of every block's lists, from the first pass to the
      // second.
      DeviceVector<std::uint16_t> lengths;
      lengths.reinit(in.n_value_targets + in.n_dofs, true);
      block_start.reinit(std::size_t(n_blocks) + 1, true);
      DeviceVector<unsigned char> wide(sizeof(unsigned int));
      {
        const unsigned int none = n_blocks;
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaMemcpy(wide.data(), &none, sizeof(none), cudaMemcpyHostToDevice));
      }
      unsigned int *const wide_block =
        reinterpret_cast<unsigned int *>(wide.data());
      // The lists' counters of the warps of a block in its shared memory
      // where they fit without opting in, else in each block's scratch.
      const std::size_t counters_bytes =
        std::size_t(warps_per_cta) * max_lists * sizeof(index_type);
      const bool        shared_counts = counters_bytes <= shared_counts_limit;
      const std::size_t shared_bytes  = shared_counts ? counters_bytes : 0;
      const auto        warp_blocks   = [](const unsigned int n) {
        return n_blocks_covering(std::size_t(n) * 32, warp_cta_size);
      };
      // The lanes of blocks [first, first + n) into their scratch, with
      // their slice ends and sizes unless null.
      const auto pack = [&](const unsigned int first,
                            const unsigned int n,
                            std::size_t *const block_slice_offsets,
                            std::size_t *const sizes) {
        launch_kernel("pack_blocks",
                      pack_blocks,
                      warp_blocks(n),
                      warp_cta_size,
                      0,
                      nullptr,
                      in,
                      first,
                      n,
                      scratch,
                      static_cast<const ReductionListLength *>(lengths.data()),
                      block_slice_offsets,
                      sizes);
      };
      for (unsigned int first = 0; first < n_blocks; first += batch)
        {
          const unsigned int n = std::min(batch, n_blocks - first);
          launch_kernel("count_lists",
                        count_lists,
                        warp_blocks(n),
                        warp_cta_size,
                        shared_bytes,
                        nullptr,
                        in,
                        first,
                        n,
                        scratch,
                        shared_counts,
                        as_size_t(source_base),
                        as_size_t(list_entries),
                        as_size_t(source_high),
                        lengths.data(),
                        wide_block);
          pack(first, n, as_size_t(slice_offsets), as_size_t(block_sizes));
        }
      if (const unsigned int r = read_device_value(wide_block); r < n_blocks)
        check_reduction_source_span(
          r,
          read_device_value(as_size_t(source_base) + r),
          read_device_value(as_size_t(source_high) + r));
      source_high.reinit(0);

      const std::size_t n_entries =
        exclusive_sum_on_device(as_size_t(block_sizes),
                                as_size_t(block_start),
                                n_blocks);
      launch_kernel_over("shift_slice_offsets",
                         shift_slice_offsets,
                         std::size_t(n_blocks) * W,
                         256,
                         nullptr,
                         as_size_t(slice_offsets),
                         as_size_t(block_start),
                         std::size_t(n_blocks) * W,
                         W);
      block_sizes.reinit(0);

      steps.next("reduction array (device)");
      reduction_array.reinit(n_entries, true);
      DeviceVector<unsigned long long> entry_offsets;
      entry_offsets.reinit(std::size_t(batch) + 1, true);
      DeviceVector<int> entries;
      // The batches from the last to the first: the scratch still holds
      // the lane assignment that the first pass made for the last batch
      // (all blocks, where one batch holds them), and only the others are
      // packed again.
      const unsigned int last_first =
        n_blocks > 0 ? (n_blocks - 1) / batch * batch : 0;
      for (unsigned int first = last_first; n_blocks > 0; first -= batch)
        {
          const unsigned int n = std::min(batch, n_blocks - first);
          const std::size_t  n_list_entries =
            exclusive_sum_on_device(as_size_t(list_entries) + first,
                                    as_size_t(entry_offsets),
                                    n);
          if (n_list_entries > entries.size())
            entries.reinit(n_list_entries, true);
          if (first != last_first)
            pack(first, n, nullptr, nullptr);
          launch_kernel(
            "write_blocks",
            write_blocks,
            warp_blocks(n),
            warp_cta_size,
            shared_bytes,
            nullptr,
            in,
            first,
            n,
            scratch,
            shared_counts,
            static_cast<const std::size_t *>(as_size_t(source_base)),
            static_cast<const std::size_t *>(as_size_t(block_start)),
            static_cast<const std::size_t *>(as_size_t(entry_offsets)),
            entries.data(),
            reduction_array.data());
          if (first == 0)
            break;
        }
      GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
    }
  } // namespace internal
} // namespace GPUAssembly
