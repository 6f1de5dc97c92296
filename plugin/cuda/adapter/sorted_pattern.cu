// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/adapter/sorted_pattern.h>
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/device_memory.h>
#include <gpu_assembly/base/device_scan.cuh>
#include <gpu_assembly/base/kernel_launch.cuh>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

// The device build of the pattern and K: the steps of sorted_pattern.h, one
// thread per element, per key or per entry of K, with CUB's radix sort,
// unique selection and scans in between. All work runs on the default
// stream; each host read of a device value synchronises with it.

namespace GPUAssembly
{
  namespace internal
  {
    namespace
    {
      constexpr unsigned int block_size = 256;

      // An array of T in device memory, freed with its owner.
      template <typename T>
      class Buffer
      {
      public:
        Buffer() = default;
        explicit Buffer(const std::size_t size)
        {
          resize(size);
        }
        ~Buffer()
        {
          free_device_memory(pointer);
        }
        Buffer(const Buffer &) = delete;
        Buffer &
        operator=(const Buffer &) = delete;

        void
        resize(const std::size_t new_size)
        {
          free_device_memory(pointer);
          pointer = nullptr;
          size    = 0;
          pointer =
            static_cast<T *>(allocate_device_memory(new_size * sizeof(T)));
          size = new_size;
        }

        void
        upload(const std::vector<T> &values)
        {
          resize(values.size());
          if (size > 0)
            GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(pointer,
                                               values.data(),
                                               size * sizeof(T),
                                               cudaMemcpyHostToDevice));
        }

        void
        clear()
        {
          free_device_memory(pointer);
          pointer = nullptr;
          size    = 0;
        }

        T          *pointer = nullptr;
        std::size_t size    = 0;
      };

      __global__ void
      count_entries(const PatternInput in, std::size_t *const counts)
      {
        const std::size_t e =
          blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
        if (e < in.n_elements)
          counts[e] = n_entries_with_repetitions(in, e);
        else if (e == in.n_elements)
          counts[e] = 0;
      }

      __global__ void
      gather_entries(const PatternInput       in,
                     const std::size_t *const entry_offsets,
                     index_type *const        entries,
                     unsigned int *const      n_entries,
                     std::size_t *const       key_counts)
      {
        const std::size_t e =
          blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
        if (e < in.n_elements)
          {
            const unsigned int n =
              element_entries(in, e, entries + entry_offsets[e]);
            n_entries[e]  = n;
            key_counts[e] = n_entry_keys(in, e, n);
          }
        else if (e == in.n_elements)
          key_counts[e] = 0;
      }

      __global__ void
      write_element_keys(const PatternInput in,
                         const KeyCoding    coding,
                         const std::size_t  n_keys,
                         PatternKey *const  keys)
      {
        const std::size_t k =
          blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
        if (k < n_keys)
          {
            const std::size_t n_ed2 =
              std::size_t(in.n_element_dofs) * in.n_element_dofs;
            keys[k] = element_key(in, coding, k / n_ed2, k % n_ed2);
          }
      }

      __global__ void
      write_entry_keys(const PatternInput        in,
                       const KeyCoding           coding,
                       const std::size_t *const  entry_offsets,
                       const index_type *const   entries,
                       const unsigned int *const n_entries,
                       const std::size_t *const  key_offsets,
                       PatternKey *const         keys)
      {
        const std::size_t e =
          blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
        if (e < in.n_elements && n_entries[e] > 0)
          entry_keys(in,
                     coding,
                     e,
                     entries + entry_offsets[e],
                     n_entries[e],
                     keys + key_offsets[e]);
      }

      // The CSR arrays from the sorted unique keys: thread k of n_keys + 1
      // writes the row offsets that key k starts and its column.
      __global__ void
      write_csr_arrays(const KeyCoding         coding,
                       const PatternKey *const keys,
                       const std::size_t       n_keys,
                       const unsigned int      n_dofs,
                       index_type *const       row_offsets,
                       index_type *const       columns)
      {
        const std::size_t k =
          blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
        if (k <= n_keys)
          set_row_offsets(coding, keys, n_keys, n_dofs, k, row_offsets);
        if (k < n_keys)
          columns[k] = coding.column(keys[k]);
      }



      __global__ void
      write_nonzero_map(const PatternInput      in,
                        const index_type *const row_offsets,
                        const index_type *const columns,
                        const std::size_t       n,
                        index_type *const       nonzero_map)
      {
        const std::size_t i =
          blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
        if (i < n)
          nonzero_map[i] = nonzero_map_entry(in, row_offsets, columns, i);
      }
    } // namespace



    struct DevicePatternBuilder::Data
    {
      PatternInput input;
      KeyCoding    coding;

      Buffer<index_type>   location, line_of_dof, entry_offsets, entry_dofs;
      Buffer<std::uint8_t> dof_is_constrained;

      // Two buffers of keys for the radix sort; after it, `unique` points
      // to the one that does not hold the sorted keys, into which the
      // unique keys go.
      Buffer<PatternKey> keys[2];
      PatternKey        *unique     = nullptr;
      std::size_t        n_nonzeros = 0;

      Buffer<index_type> row_offsets, columns;
    };



    DevicePatternBuilder::DevicePatternBuilder(const MeshArrays &arrays)
      : data(std::make_unique<Data>())
    {
      Data &d = *data;
      d.location.upload(arrays.location);
      d.dof_is_constrained.upload(arrays.dof_is_constrained);
      d.line_of_dof.upload(constraint_line_of_dofs(arrays));
      d.entry_offsets.upload(arrays.constraint_entry_offsets);
      d.entry_dofs.upload(arrays.constraint_entry_dofs);

      PatternInput &in         = d.input;
      in.n_elements            = arrays.n_elements;
      in.n_element_dofs        = arrays.layout.n_dofs;
      in.n_dofs                = arrays.n_dofs;
      in.keep_constrained_dofs = arrays.keep_constrained_dofs;
      in.location              = d.location.pointer;
      in.dof_is_constrained    = d.dof_is_constrained.pointer;
      in.line_of_dof           = d.line_of_dof.pointer;
      in.entry_offsets         = d.entry_offsets.pointer;
      in.entry_dofs            = d.entry_dofs.pointer;
      d.coding                 = make_key_coding(arrays.n_dofs);
    }



    DevicePatternBuilder::~DevicePatternBuilder() = default;



    std::size_t
    DevicePatternBuilder::make_pattern()
    {
      Data              &d  = *data;
      const PatternInput in = d.input;
      const std::size_t  n_ed2 =
        std::size_t(in.n_element_dofs) * in.n_element_dofs;
      const std::size_t n_element_keys = std::size_t(in.n_elements) * n_ed2;

      // X_e of the elements with constrained DoFs: the number of keys each
      // adds, and their offsets after the element couplings.
      Buffer<std::size_t>  entry_offsets, key_offsets;
      Buffer<index_type>   entries;
      Buffer<unsigned int> n_entries;
      std::size_t          n_keys = n_element_keys;
      if (d.entry_dofs.size > 0)
        {
          Buffer<std::size_t> counts(in.n_elements + 1);
          entry_offsets.resize(in.n_elements + 1);
          launch_kernel_over("count_entries",
                             count_entries,
                             std::size_t(in.n_elements) + 1,
                             block_size,
                             nullptr,
                             in,
                             counts.pointer);
          entries.resize(exclusive_sum_on_device(counts.pointer,
                                                 entry_offsets.pointer,
                                                 in.n_elements));
          n_entries.resize(in.n_elements);
          launch_kernel_over("gather_entries",
                             gather_entries,
                             std::size_t(in.n_elements) + 1,
                             block_size,
                             nullptr,
                             in,
                             entry_offsets.pointer,
                             entries.pointer,
                             n_entries.pointer,
                             counts.pointer);
          key_offsets.resize(in.n_elements + 1);
          n_keys += exclusive_sum_on_device(counts.pointer,
                                            key_offsets.pointer,
                                            in.n_elements);
        }

      d.keys[0].resize(n_keys);
      d.keys[1].resize(n_keys);
      launch_kernel_over("write_element_keys",
                         write_element_keys,
                         n_element_keys,
                         block_size,
                         nullptr,
                         in,
                         d.coding,
                         n_element_keys,
                         d.keys[0].pointer);
      if (n_keys > n_element_keys)
        launch_kernel_over("write_entry_keys",
                           write_entry_keys,
                           in.n_elements,
                           block_size,
                           nullptr,
                           in,
                           d.coding,
                           entry_offsets.pointer,
                           entries.pointer,
                           n_entries.pointer,
                           key_offsets.pointer,
                           d.keys[0].pointer + n_element_keys);
      entries.clear();
      n_entries.clear();
      entry_offsets.clear();
      key_offsets.clear();

      // Sort on the bits in which keys differ, then keep one of each.
      cub::DoubleBuffer<PatternKey> buffers(d.keys[0].pointer,
                                            d.keys[1].pointer);
      {
        std::size_t temp_bytes = 0;
        GPU_ASSEMBLY_CHECK_CUDA(
          cub::DeviceRadixSort::SortKeys(nullptr,
                                         temp_bytes,
                                         buffers,
                                         n_keys,
                                         0,
                                         d.coding.n_bits()));
        Buffer<unsigned char> temp(temp_bytes);
        GPU_ASSEMBLY_CHECK_CUDA(
          cub::DeviceRadixSort::SortKeys(temp.pointer,
                                         temp_bytes,
                                         buffers,
                                         n_keys,
                                         0,
                                         d.coding.n_bits()));
      }
      PatternKey *const sorted = buffers.Current();
      d.unique                 = buffers.Alternate();
      std::size_t n_unique     = 0;
      {
        Buffer<std::int64_t> n_selected(1);
        std::size_t          temp_bytes = 0;
        GPU_ASSEMBLY_CHECK_CUDA(cub::DeviceSelect::Unique(nullptr,
                                                          temp_bytes,
                                                          sorted,
                                                          d.unique,
                                                          n_selected.pointer,
                                                          n_keys));
        Buffer<unsigned char> temp(temp_bytes);
        GPU_ASSEMBLY_CHECK_CUDA(cub::DeviceSelect::Unique(temp.pointer,
                                                          temp_bytes,
                                                          sorted,
                                                          d.unique,
                                                          n_selected.pointer,
                                                          n_keys));
        n_unique = read_device_value(n_selected.pointer);
      }
      if (n_unique > 0 &&
          read_device_value(d.unique + n_unique - 1) == d.coding.sentinel())
        --n_unique;
      check_nonzero_count(n_unique);
      d.n_nonzeros = n_unique;

      d.row_offsets.resize(std::size_t(in.n_dofs) + 1);
      d.columns.resize(n_unique);
      launch_kernel_over("write_csr_arrays",
                         write_csr_arrays,
                         n_unique + 1,
                         block_size,
                         nullptr,
                         d.coding,
                         d.unique,
                         n_unique,
                         in.n_dofs,
                         d.row_offsets.pointer,
                         d.columns.pointer);
      GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
      return n_unique;
    }



    void
    DevicePatternBuilder::copy_pattern_to(
      index_type *const row_offsets,
      index_type *const column_indices) const
    {
      const Data &d = *data;
      GPU_ASSEMBLY_CHECK_CUDA(
        cudaMemcpy(row_offsets,
                   d.row_offsets.pointer,
                   d.row_offsets.size * sizeof(index_type),
                   cudaMemcpyDeviceToHost));
      if (d.n_nonzeros > 0)
        GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(column_indices,
                                           d.columns.pointer,
                                           d.n_nonzeros * sizeof(index_type),
                                           cudaMemcpyDeviceToHost));
    }



    void
    DevicePatternBuilder::make_nonzero_map(index_type *const nonzero_map)
    {
      Data &d = *data;
      d.keys[0].clear();
      d.keys[1].clear();
      d.unique            = nullptr;
      const std::size_t n = std::size_t(d.input.n_elements) *
                            d.input.n_element_dofs * d.input.n_element_dofs;
      Buffer<index_type> map(n);
      launch_kernel_over("write_nonzero_map",
                         write_nonzero_map,
                         n,
                         block_size,
                         nullptr,
                         d.input,
                         d.row_offsets.pointer,
                         d.columns.pointer,
                         n,
                         map.pointer);
      if (n > 0)
        GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(nonzero_map,
                                           map.pointer,
                                           n * sizeof(index_type),
                                           cudaMemcpyDeviceToHost));
    }
  } // namespace internal
} // namespace GPUAssembly
