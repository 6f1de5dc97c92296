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
// reduction_lists.h, a thread per reduction block, in batches of blocks
// whose scratch stays within a share of the device's free memory. All work
// runs on the default stream; each host read of a device value
// synchronises with it.

namespace GPUAssembly
{
  namespace internal
  {
    namespace
    {
      constexpr unsigned int block_size = 64;

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

      // Pass 1, blocks [first, first + n): each block's size, its slice
      // ends relative to its start, its source base, the lengths and
      // entries of its lists, and the first block whose sources span too
      // far.
      __global__ void
      lay_out_blocks(const ReductionListInput   in,
                     const unsigned int         first,
                     const unsigned int         n,
                     const BatchScratch         scratch,
                     std::size_t *const         slice_offsets,
                     std::size_t *const         source_base,
                     std::size_t *const         block_sizes,
                     std::size_t *const         list_entries,
                     std::size_t *const         source_high,
                     ReductionListLength *const lengths,
                     unsigned int *const        wide_block)
      {
        const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n)
          return;
        const unsigned int          r   = first + i;
        const ReductionBlockScratch s   = scratch.of(i);
        const unsigned int          W   = in.n_lanes / reduction_slice_width;
        std::size_t                 low = 0, high = 0;
        block_sizes[r] =
          reduction_block_layout(in,
                                 r,
                                 VisitedContributions{in, r},
                                 s,
                                 slice_offsets + std::size_t(r) * W + 1,
                                 low,
                                 high,
                                 lengths);
        source_base[r] = low;
        source_high[r] = high;
        list_entries[r] =
          s.list_offsets[in.target_begin[r + 1] - in.target_begin[r]];
        if (high - low >= max_reduction_source_span)
          atomicMin(wide_block, r);
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

      // Pass 2, blocks [first, first + n): each block's lists, packed again
      // from their lengths, filled at entries + entry_offsets[i] and
      // stored into the block's place of the array.
      __global__ void
      write_blocks(const ReductionListInput         in,
                   const unsigned int               first,
                   const unsigned int               n,
                   const BatchScratch               scratch,
                   const std::size_t *const         source_base,
                   const std::size_t *const         block_start,
                   const std::size_t *const         entry_offsets,
                   const ReductionListLength *const lengths,
                   index_type *const                entries,
                   index_type *const                reduction_array)
      {
        const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n)
          return;
        const unsigned int          r = first + i;
        const ReductionBlockScratch s = scratch.of(i);
        relayout_reduction_block(in, r, s, lengths);
        write_reduction_block(in,
                              r,
                              VisitedContributions{in, r},
                              source_base[r],
                              s,
                              entries + entry_offsets[i],
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
      for (unsigned int first = 0; first < n_blocks; first += batch)
        {
          const unsigned int n = std::min(batch, n_blocks - first);
          launch_kernel_over("lay_out_blocks",
                             lay_out_blocks,
                             n,
                             block_size,
                             nullptr,
                             in,
                             first,
                             n,
                             scratch,
                             as_size_t(slice_offsets),
                             as_size_t(source_base),
                             as_size_t(block_sizes),
                             as_size_t(list_entries),
                             as_size_t(source_high),
                             lengths.data(),
                             wide_block);
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
          launch_kernel_over("write_blocks",
                             write_blocks,
                             n,
                             block_size,
                             nullptr,
                             in,
                             first,
                             n,
                             scratch,
                             as_size_t(source_base),
                             as_size_t(block_start),
                             as_size_t(entry_offsets),
                             lengths.data(),
                             entries.data(),
                             reduction_array.data());
        }
      GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
    }
  } // namespace internal
} // namespace GPUAssembly
