// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_device_h
#define gpu_assembly_base_device_h

#include <cstddef>
#include <string>

namespace GPUAssembly
{
  /**
   * What the plugin needs to know about a CUDA device to size its plans:
   * the shared-memory limit decides SharedNZ's partitions and must be read
   * from the device, never assumed.
   */
  struct DeviceInfo
  {
    int         index = -1;
    std::string name;
    int         compute_capability_major = 0;
    int         compute_capability_minor = 0;
    int         n_multiprocessors        = 0;
    /// Largest dynamic shared memory one block may opt in to, in bytes.
    std::size_t shared_memory_per_block_optin    = 0;
    std::size_t shared_memory_per_multiprocessor = 0;
    std::size_t global_memory_bytes              = 0;
    std::size_t l2_cache_bytes                   = 0;
    int         max_threads_per_block            = 0;
  };

  /**
   * Number of usable CUDA devices. Returns 0, rather than throwing, when the
   * machine has no GPU (cudaErrorNoDevice, which CUDA_VISIBLE_DEVICES=-1
   * also gives) or no CUDA driver at all: that is the normal state of a
   * build or CI machine, and callers then take the host path. A driver
   * older than the CUDA runtime, or any other error, throws with CUDA's
   * message: a GPU host with a broken set-up must fail, not run as if it
   * had no GPU.
   */
  unsigned int
  n_cuda_devices();

  /**
   * Properties of device @p index. Throws ExcCudaError for an invalid index.
   */
  DeviceInfo
  get_device_info(const int index = 0);

  /**
   * Wait for all work queued on the device (for timings and before host
   * reads of results written by kernels).
   */
  void
  synchronize_device();

  /**
   * The device's measured copy bandwidth in bytes per second: a
   * device-to-device cudaMemcpy of @p bytes, best of @p n_repetitions,
   * counting the bytes read and the bytes written. Benchmarks report their
   * effective bandwidth as a fraction of this. Throws ExcDeviceMemory where
   * two buffers of @p bytes do not fit on the device.
   */
  double
  measure_copy_bandwidth(const std::size_t  bytes = std::size_t(1) << 30,
                         const unsigned int n_repetitions = 10);

  /**
   * One line describing which path runs: the device's name and limits, or a
   * plain statement that no GPU is present and the host path runs.
   */
  std::string
  describe_execution_path();
} // namespace GPUAssembly

#endif
