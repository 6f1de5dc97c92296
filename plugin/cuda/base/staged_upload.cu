// SPDX-License-Identifier: LGPL-2.1-or-later
// The CUDA side of StagedUpload: pinned buffers, stream and events. The
// host threads' part, copy(), is in src/base/staged_upload.cc.

#include <gpu_assembly/base/cuda_check.h>

#include <cuda_runtime.h>

#include "../../src/base/staged_upload.h"

namespace GPUAssembly
{
  namespace internal
  {
    struct StagedUpload::Cuda
    {
      cudaStream_t stream = nullptr;
      // Recorded after each buffer's last transfer: the buffer is free
      // once it has passed.
      cudaEvent_t drained[2]  = {nullptr, nullptr};
      bool        recorded[2] = {false, false};
    };



    StagedUpload::StagedUpload(const std::size_t total_bytes,
                               const std::size_t buffer_bytes)
      : cuda(std::make_unique<Cuda>())
      , buffer_bytes(buffer_bytes)
    {
      if (buffer_bytes == 0)
        throw_error("StagedUpload: the staging buffers need at least one "
                    "byte.");
      // A constructor that throws gets no destructor call: what was made
      // before a failure is released here (a handle or buffer is non-null
      // only once it exists).
      try
        {
          GPU_ASSEMBLY_CHECK_CUDA(cudaStreamCreate(&cuda->stream));
          for (unsigned int b = 0; b < 2; ++b)
            {
              GPU_ASSEMBLY_CHECK_CUDA(
                cudaEventCreateWithFlags(&cuda->drained[b],
                                         cudaEventDisableTiming));
            }
          if (total_bytes / 32 >= buffer_bytes)
            for (unsigned int b = 0; b < 2; ++b)
              {
                const cudaError_t status =
                  cudaMallocHost(&buffers[b], buffer_bytes);
                if (status == cudaErrorMemoryAllocation)
                  {
                    // No pinned memory to spare: the copies go from
                    // pageable memory, slower but all the same.
                    (void)cudaGetLastError();
                    buffers[b] = nullptr;
                    if (b == 1)
                      {
                        GPU_ASSEMBLY_CHECK_CUDA(cudaFreeHost(buffers[0]));
                        buffers[0] = nullptr;
                      }
                    break;
                  }
                GPU_ASSEMBLY_CHECK_CUDA(status);
              }
        }
      catch (...)
        {
          for (unsigned int b = 0; b < 2; ++b)
            {
              if (buffers[b] != nullptr)
                GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaFreeHost(buffers[b]));
              if (cuda->drained[b] != nullptr)
                GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(
                  cudaEventDestroy(cuda->drained[b]));
            }
          if (cuda->stream != nullptr)
            GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaStreamDestroy(cuda->stream));
          throw;
        }
    }



    StagedUpload::~StagedUpload()
    {
      // The buffers may be freed only once no transfer reads them.
      GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaStreamSynchronize(cuda->stream));
      for (unsigned int b = 0; b < 2; ++b)
        {
          if (buffers[b] != nullptr)
            GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaFreeHost(buffers[b]));
          GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaEventDestroy(cuda->drained[b]));
        }
      GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaStreamDestroy(cuda->stream));
    }



    void
    StagedUpload::finish()
    {
      GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(cuda->stream));
    }



    void
    StagedUpload::wait_until_free(const unsigned int b)
    {
      if (cuda->recorded[b])
        GPU_ASSEMBLY_CHECK_CUDA(cudaEventSynchronize(cuda->drained[b]));
    }



    void
    StagedUpload::send(const unsigned int b,
                       void              *device,
                       const void        *host,
                       const std::size_t  bytes)
    {
      // From pageable memory, cudaMemcpyAsync() returns once the driver
      // has staged the source: the array may go away afterwards.
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpyAsync(device,
                                              host,
                                              bytes,
                                              cudaMemcpyHostToDevice,
                                              cuda->stream));
      if (b < 2)
        {
          GPU_ASSEMBLY_CHECK_CUDA(
            cudaEventRecord(cuda->drained[b], cuda->stream));
          cuda->recorded[b] = true;
        }
    }
  } // namespace internal
} // namespace GPUAssembly
