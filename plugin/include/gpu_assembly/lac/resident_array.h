// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_resident_array_h
#define gpu_assembly_lac_resident_array_h

#include <gpu_assembly/lac/device_vector.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace GPUAssembly
{
  /**
   * An array in host memory (std::vector) or in device memory
   * (DeviceVector), chosen at reinit(): the storage of the classes whose
   * loops run on the host or the device (for_each_index() and its
   * siblings, with on_device()), such as the resident distributed classes,
   * whose host mode is what CI tests.
   */
  template <typename T>
  class ResidentArray
  {
  public:
    /// @p n entries, zero.
    void
    reinit(const bool on_device, const std::size_t n)
    {
      device = on_device;
      if (device)
        {
          host.clear();
          host.shrink_to_fit();
          device_data.reinit(n);
        }
      else
        {
          device_data.reinit(0);
          host.assign(n, T());
        }
    }

    /// The entries of @p values, in the storage of @p on_device.
    void
    reinit(const bool on_device, const std::vector<T> &values)
    {
      device = on_device;
      if (device)
        {
          host.clear();
          host.shrink_to_fit();
          device_data.copy_from_host(values);
        }
      else
        {
          device_data.reinit(0);
          host = values;
        }
    }

    bool
    on_device() const
    {
      return device;
    }

    std::size_t
    size() const
    {
      return device ? device_data.size() : host.size();
    }

    /// Host or device pointer, as on_device() says.
    T *
    data()
    {
      return device ? device_data.data() : host.data();
    }

    const T *
    data() const
    {
      return device ? device_data.data() : host.data();
    }

    void
    set_zero()
    {
      if (device)
        device_data.set_zero();
      else
        std::fill(host.begin(), host.end(), T());
    }

    /// Copy the entries to @p values (resized).
    void
    copy_to_host(std::vector<T> &values) const
    {
      if (device)
        device_data.copy_to_host(values);
      else
        values = host;
    }

    std::size_t
    memory_consumption() const
    {
      return size() * sizeof(T);
    }

  private:
    bool            device = false;
    std::vector<T>  host;
    DeviceVector<T> device_data;
  };
} // namespace GPUAssembly

#endif
