// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/device_memory.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace GPUAssembly
{
  template <typename T>
  DeviceVector<T>::DeviceVector(const std::size_t size)
  {
    reinit(size);
  }



  template <typename T>
  DeviceVector<T>::DeviceVector(const std::vector<T> &host_data)
  {
    copy_from_host(host_data);
  }



  template <typename T>
  DeviceVector<T>::~DeviceVector()
  {
    release();
  }



  template <typename T>
  DeviceVector<T>::DeviceVector(DeviceVector &&other) noexcept
    : pointer(other.pointer)
    , n_elements(other.n_elements)
  {
    other.pointer    = nullptr;
    other.n_elements = 0;
  }



  template <typename T>
  DeviceVector<T> &
  DeviceVector<T>::operator=(DeviceVector &&other) noexcept
  {
    if (this != &other)
      {
        release();
        pointer          = other.pointer;
        n_elements       = other.n_elements;
        other.pointer    = nullptr;
        other.n_elements = 0;
      }
    return *this;
  }



  template <typename T>
  void
  DeviceVector<T>::release() noexcept
  {
    internal::free_device_memory(pointer);
    pointer    = nullptr;
    n_elements = 0;
  }



  template <typename T>
  void
  DeviceVector<T>::reinit(const std::size_t size,
                          const bool        omit_zeroing_entries)
  {
    if (size != n_elements)
      {
        release();
        pointer =
          static_cast<T *>(internal::allocate_device_memory(size * sizeof(T)));
        n_elements = size;
      }
    if (!omit_zeroing_entries)
      set_zero();
  }



  template <typename T>
  void
  DeviceVector<T>::set_zero()
  {
    if (n_elements > 0)
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemset(pointer, 0, n_elements * sizeof(T)));
  }



  template <typename T>
  void
  DeviceVector<T>::copy_from_host(const std::vector<T> &host_data)
  {
    // Every entry is overwritten: a new allocation needs no zeroing first.
    if (host_data.size() != n_elements)
      reinit(host_data.size(), /*omit_zeroing_entries=*/true);
    if (n_elements > 0)
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(pointer,
                                         host_data.data(),
                                         n_elements * sizeof(T),
                                         cudaMemcpyHostToDevice));
  }



  template <typename T>
  void
  DeviceVector<T>::copy_to_host(std::vector<T> &host_data) const
  {
    copy_to_host(host_data, n_elements);
  }



  template <typename T>
  void
  DeviceVector<T>::copy_to_host(std::vector<T>   &host_data,
                                const std::size_t n_entries) const
  {
    if (n_entries > n_elements)
      internal::throw_error(
        "DeviceVector::copy_to_host: " + std::to_string(n_entries) +
        " entries requested from a vector of " + std::to_string(n_elements) +
        ".");
    host_data.resize(n_entries);
    if (n_entries > 0)
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(host_data.data(),
                                         pointer,
                                         n_entries * sizeof(T),
                                         cudaMemcpyDeviceToHost));
  }



  template class DeviceVector<float>;
  template class DeviceVector<double>;
  template class DeviceVector<int>;
  template class DeviceVector<unsigned char>;
  template class DeviceVector<std::uint16_t>;
  template class DeviceVector<unsigned long long>;
} // namespace GPUAssembly
