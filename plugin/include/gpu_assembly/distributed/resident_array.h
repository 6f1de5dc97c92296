// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_resident_array_h
#define gpu_assembly_distributed_resident_array_h

#include <gpu_assembly/lac/device_vector.h>
#include <gpu_assembly/lac/resident_array.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * The memory operations of the device path of the resident classes:
     * synchronous, on the default stream.
     */
    namespace DeviceMemory
    {
      void
      copy_to_host(void *dst, const void *src, const std::size_t bytes);

      void
      copy_to_device(void *dst, const void *src, const std::size_t bytes);

      void
      set_zero(void *dst, const std::size_t bytes);

      /// Wait for the default stream (before MPI reads device buffers).
      void
      synchronize();

      /// Whether the default stream has finished its work (without
      /// waiting).
      bool
      finished();

      /// Page-locked host memory, for staging messages of the device.
      void *
      allocate_pinned(const std::size_t bytes);

      void
      free_pinned(void *pointer) noexcept;
    } // namespace DeviceMemory



    /// Page-locked host memory for staging device messages; allocated
    /// once, reused.
    template <typename T>
    class PinnedBuffer
    {
    public:
      PinnedBuffer()                     = default;
      PinnedBuffer(const PinnedBuffer &) = delete;
      PinnedBuffer &
      operator=(const PinnedBuffer &) = delete;
      ~PinnedBuffer()
      {
        DeviceMemory::free_pinned(pointer);
      }

      void
      reinit(const std::size_t n)
      {
        if (n == n_elements)
          return;
        DeviceMemory::free_pinned(pointer);
        pointer    = nullptr;
        n_elements = 0;
        if (n > 0)
          pointer =
            static_cast<T *>(DeviceMemory::allocate_pinned(n * sizeof(T)));
        n_elements = n;
      }

      T *
      data() const
      {
        return pointer;
      }

      std::size_t
      size() const
      {
        return n_elements;
      }

    private:
      T          *pointer    = nullptr;
      std::size_t n_elements = 0;
    };
  } // namespace internal
} // namespace GPUAssembly

#endif
