// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_device_vector_h
#define gpu_assembly_lac_device_vector_h

#include <cstddef>
#include <cstdint>
#include <vector>

namespace GPUAssembly
{
  /**
   * An array in device memory, owned: allocated in the constructor or
   * reinit(), freed in the destructor. Not copyable (a copy would be a
   * silent device allocation); movable. Running out of device memory raises
   * ExcDeviceMemory with the bytes asked for and the bytes free.
   *
   * Instantiated for float, double, int, unsigned char, std::uint16_t and
   * unsigned long long.
   */
  template <typename T>
  class DeviceVector
  {
  public:
    DeviceVector() = default;

    explicit DeviceVector(const std::size_t size);

    explicit DeviceVector(const std::vector<T> &host_data);

    ~DeviceVector();

    DeviceVector(const DeviceVector &) = delete;
    DeviceVector &
    operator=(const DeviceVector &) = delete;

    DeviceVector(DeviceVector &&other) noexcept;
    DeviceVector &
    operator=(DeviceVector &&other) noexcept;

    /**
     * Resize to @p size entries, set to zero unless @p omit_zeroing_entries
     * (for a buffer whose every read entry is written first). Keeps the
     * allocation if the size does not change, so that re-assembly allocates
     * nothing.
     */
    void
    reinit(const std::size_t size, const bool omit_zeroing_entries = false);

    /// Set every entry to zero (asynchronously on the default stream).
    void
    set_zero();

    /// Copy @p host_data to the device, resizing if needed.
    void
    copy_from_host(const std::vector<T> &host_data);

    /// Copy the entries to @p host_data, resizing it.
    void
    copy_to_host(std::vector<T> &host_data) const;

    /**
     * Copy the first @p n_entries entries to @p host_data, resizing it: for
     * a buffer of which only a prefix is filled.
     */
    void
    copy_to_host(std::vector<T> &host_data, const std::size_t n_entries) const;

    std::vector<T>
    to_host() const
    {
      std::vector<T> result;
      copy_to_host(result);
      return result;
    }

    std::size_t
    size() const
    {
      return n_elements;
    }

    T *
    data()
    {
      return pointer;
    }

    const T *
    data() const
    {
      return pointer;
    }

    std::size_t
    memory_consumption() const
    {
      return n_elements * sizeof(T);
    }

  private:
    void
    release() noexcept;

    T          *pointer    = nullptr;
    std::size_t n_elements = 0;
  };
} // namespace GPUAssembly

#endif
