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
// reduction_lists.h, a warp per reduction block where the work is parallel
// (finding, counting and placing the contributions, sorting the lists,
// storing the slices) and a thread per block for the lane assignment, in
// batches of blocks whose scratch stays within a share of the device's
// free memory. All work runs on the default stream; each host read of a
// device value synchronises with it.

namespace GPUAssembly
{
  namespace internal
  {
    namespace
    {
      // Threads per block of the kernels with a thread per reduction
      // block, and warps per block of those with a warp per reduction
      // block.
      constexpr unsigned int block_size          = 64;
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

      // Blocks [first, first + n), a thread each: packed from their lists'
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
        const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n)
          return;
        const unsigned int r = first + i;
        const unsigned int W = in.n_lanes / reduction_slice_width;
        const std::size_t  size =
          relayout_reduction_block(in,
                                   r,
                                   scratch.of(i),
                                   lengths,
                                   slice_offsets == nullptr ?
                                     nullptr :
                                     slice_offsets + std::size_t(r) * W + 1);
        if (block_sizes != nullptr)
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
          launch_kernel_over("pack_blocks",
                             pack_blocks,
                             n,
                             block_size,
                             nullptr,
                             in,
                             first,
                             n,
                             scratch,
                             static_cast<const ReductionListLength *>(
                               lengths.data()),
                             as_size_t(slice_offsets),
                             as_size_t(block_sizes));
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
      for (unsigned int first = 0; first < n_blocks; first += batch)
        {
          const unsigned int n = std::min(batch, n_blocks - first);
          const std::size_t  n_list_entries =
            exclusive_sum_on_device(as_size_t(list_entries) + first,
                                    as_size_t(entry_offsets),
                                    n);
          if (n_list_entries > entries.size())
            entries.reinit(n_list_entries, true);
          launch_kernel_over("pack_blocks",
                             pack_blocks,
                             n,
                             block_size,
                             nullptr,
                             in,
                             first,
                             n,
                             scratch,
                             static_cast<const ReductionListLength *>(
                               lengths.data()),
                             static_cast<std::size_t *>(nullptr),
                             static_cast<std::size_t *>(nullptr));
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
        }
      GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
    }
  } // namespace internal
} // namespace GPUAssembly
