// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/cuda_handles.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/device_memory.h>

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <sstream>

#include "../../src/base/device_task.h"

namespace GPUAssembly
{
  unsigned int
  n_cuda_devices()
  {
    int        count  = 0;
    const auto status = cudaGetDeviceCount(&count);
    if (status == cudaErrorNoDevice)
      {
        (void)cudaGetLastError();
        return 0;
      }
    if (status == cudaErrorInsufficientDriver)
      {
        (void)cudaGetLastError();
        // The runtime gives this error both where no driver is installed
        // (a machine without a GPU, or a container started without one)
        // and where the driver is older than the runtime; only the first
        // means "no device". A GPU host with an old driver must not look
        // like a machine without a GPU.
        int driver_version = 0, runtime_version = 0;
        (void)cudaDriverGetVersion(&driver_version);
        (void)cudaRuntimeGetVersion(&runtime_version);
        if (driver_version == 0)
          return 0;
        std::ostringstream message;
        message << "The CUDA driver (version " << driver_version
                << ") is older than the CUDA runtime this program was built "
                   "with (version "
                << runtime_version
                << "): no GPU can be used. Update the driver, or build "
                   "against an older CUDA toolkit.";
        internal::throw_error(message.str());
      }
    GPU_ASSEMBLY_CHECK_CUDA(status);
    return static_cast<unsigned int>(count);
  }



  DeviceInfo
  get_device_info(const int index)
  {
    cudaDeviceProp properties;
    GPU_ASSEMBLY_CHECK_CUDA(cudaGetDeviceProperties(&properties, index));

    DeviceInfo info;
    info.index                         = index;
    info.name                          = properties.name;
    info.compute_capability_major      = properties.major;
    info.compute_capability_minor      = properties.minor;
    info.n_multiprocessors             = properties.multiProcessorCount;
    info.shared_memory_per_block_optin = properties.sharedMemPerBlockOptin;
    info.shared_memory_per_multiprocessor =
      properties.sharedMemPerMultiprocessor;
    info.global_memory_bytes   = properties.totalGlobalMem;
    info.l2_cache_bytes        = properties.l2CacheSize;
    info.max_threads_per_block = properties.maxThreadsPerBlock;
    return info;
  }



  void
  synchronize_device()
  {
    GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
  }



  double
  measure_copy_bandwidth(const std::size_t  bytes,
                         const unsigned int n_repetitions)
  {
    using DeviceBytes =
      std::unique_ptr<void, decltype(&internal::free_device_memory)>;
    const DeviceBytes source(internal::allocate_device_memory(bytes),
                             &internal::free_device_memory);
    const DeviceBytes target(internal::allocate_device_memory(bytes),
                             &internal::free_device_memory);
    GPU_ASSEMBLY_CHECK_CUDA(cudaMemset(source.get(), 1, bytes));

    const CudaEvent start, stop;
    float           best_ms = std::numeric_limits<float>::max();
    for (unsigned int i = 0; i < n_repetitions + 1; ++i)
      {
        GPU_ASSEMBLY_CHECK_CUDA(cudaEventRecord(start.get()));
        GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(target.get(),
                                           source.get(),
                                           bytes,
                                           cudaMemcpyDeviceToDevice));
        GPU_ASSEMBLY_CHECK_CUDA(cudaEventRecord(stop.get()));
        GPU_ASSEMBLY_CHECK_CUDA(cudaEventSynchronize(stop.get()));
        float ms = 0;
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaEventElapsedTime(&ms, start.get(), stop.get()));
        if (i > 0) // the first copy warms up
          best_ms = std::min(best_ms, ms);
      }
    return 2. * bytes / (best_ms * 1e-3);
  }



  std::string
  describe_execution_path()
  {
    if (n_cuda_devices() == 0)
      return "No CUDA device found: the host (CPU) path runs.";

    const DeviceInfo   info = get_device_info(0);
    std::ostringstream out;
    out << "CUDA device 0: " << info.name << " (sm_"
        << info.compute_capability_major << info.compute_capability_minor
        << ", " << info.n_multiprocessors << " SMs, "
        << info.global_memory_bytes / (1024 * 1024) << " MiB, "
        << info.shared_memory_per_block_optin / 1024
        << " KiB shared memory per block)";
    return out.str();
  }



  namespace internal
  {
    void *
    allocate_device_memory(const std::size_t bytes)
    {
      if (bytes == 0)
        return nullptr;
      void             *pointer = nullptr;
      const cudaError_t status  = cudaMalloc(&pointer, bytes);
      if (status == cudaErrorMemoryAllocation)
        {
          // Clear the error, so that the next unrelated check does not
          // report it again.
          (void)cudaGetLastError();
          std::size_t free  = 0;
          std::size_t total = 0;
          (void)cudaMemGetInfo(&free, &total);
          throw_device_memory_error(bytes,
                                    free,
                                    total,
                                    cuda_error_string(status));
        }
      GPU_ASSEMBLY_CHECK_CUDA(status);
      return pointer;
    }



    void
    free_device_memory(void *const pointer) noexcept
    {
      if (pointer != nullptr)
        GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaFree(pointer));
    }



    std::string
    cuda_error_string(const int status)
    {
      const auto error = static_cast<cudaError_t>(status);
      return std::string(cudaGetErrorName(error)) + ": " +
             cudaGetErrorString(error);
    }



    std::string
    cusparse_error_string(const int status)
    {
      const auto error = static_cast<cusparseStatus_t>(status);
      return std::string(cusparseGetErrorName(error)) + ": " +
             cusparseGetErrorString(error);
    }



    int
    current_cuda_device()
    {
      int device = 0;
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetDevice(&device));
      return device;
    }
  } // namespace internal
} // namespace GPUAssembly
