// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_base_device_task_h
#define gpu_assembly_src_base_device_task_h

// Set-up work on a thread of its own that talks to the caller's CUDA
// device (not installed).

#include <future>
#include <utility>

namespace GPUAssembly
{
  namespace internal
  {
    /// The calling thread's current CUDA device.
    int
    current_cuda_device();

    /// Make @p index the calling thread's current CUDA device (defined
    /// with device selection, cuda/distributed/device_selection.cu).
    void
    set_cuda_device(const int index);

    /**
     * @p work() run on a new thread, with the calling thread's CUDA device
     * current there (a new thread starts on device 0, whatever the caller
     * chose). The future's get() returns its result or rethrows its
     * exception; its destructor waits for the thread, so that the thread
     * never outlives what it reads.
     */
    template <class Work>
    auto
    run_on_device_thread(Work &&work)
    {
      return std::async(std::launch::async,
                        [device = current_cuda_device(),
                         work   = std::forward<Work>(work)]() mutable {
                          set_cuda_device(device);
                          return work();
                        });
    }
  } // namespace internal
} // namespace GPUAssembly

#endif
