// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_device_memory_h
#define gpu_assembly_base_device_memory_h

#include <cstddef>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * A device allocation of @p bytes (none, and a null pointer, for zero
     * bytes): the one every owner of device memory makes, so that running
     * out of device memory reads the same everywhere. Throws
     * ExcDeviceMemory, with the bytes asked for and the bytes free, where
     * the device has too little memory, and ExcCudaError on any other
     * error; nothing is allocated then.
     */
    void *
    allocate_device_memory(const std::size_t bytes);

    /**
     * Free what allocate_device_memory() returned (nothing for a null
     * pointer); reports a failure on std::cerr without throwing, for
     * destructors.
     */
    void
    free_device_memory(void *const pointer) noexcept;
  } // namespace internal
} // namespace GPUAssembly

#endif
