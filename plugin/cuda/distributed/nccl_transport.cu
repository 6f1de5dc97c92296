// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The NCCL and CUDA calls of the NCCL exchanges. Without NCCL the functions
// that need it refuse, naming the CMake option; the MPI side never calls
// them then (it asks built() first).

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/nccl_check.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../../src/distributed/nccl_transport.h"

#ifdef GPU_ASSEMBLY_WITH_NCCL
#  include <cuda_runtime.h>

#  include <nccl.h>
#endif

namespace GPUAssembly
{
  namespace internal
  {
    namespace NcclTransport
    {
#ifdef GPU_ASSEMBLY_WITH_NCCL
      static_assert(unique_id_bytes == NCCL_UNIQUE_ID_BYTES,
                    "the unique id's size is NCCL's");

      struct Handles
      {
        ncclComm_t   communicator = nullptr;
        cudaStream_t stream       = nullptr;
        cudaEvent_t  ready        = nullptr;
      };



      bool
      built()
      {
        return true;
      }



      void
      get_unique_id(std::vector<char> &id)
      {
        ncclUniqueId unique;
        GPU_ASSEMBLY_CHECK_NCCL(ncclGetUniqueId(&unique));
        id.assign(unique.internal, unique.internal + unique_id_bytes);
      }



      std::vector<unsigned char>
      current_device_uuid()
      {
        int device = 0;
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetDevice(&device));
        cudaDeviceProp properties;
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetDeviceProperties(&properties, device));
        const auto *bytes =
          reinterpret_cast<const unsigned char *>(properties.uuid.bytes);
        return std::vector<unsigned char>(bytes, bytes + device_uuid_bytes);
      }



      Handles *
      create(const std::vector<char> &id, const int n_ranks, const int rank)
      {
        if (id.size() != unique_id_bytes)
          throw_error("an NCCL unique id of " + std::to_string(id.size()) +
                      " bytes; NCCL's have " + std::to_string(unique_id_bytes) +
                      ".");
        ncclUniqueId unique;
        std::memcpy(unique.internal, id.data(), unique_id_bytes);
        auto handles = std::make_unique<Handles>();
        // A stream of its own, not synchronizing with the legacy default
        // stream: the owned rows' kernels on the default stream run while
        // NCCL's kernels wait for the other ranks.
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaStreamCreateWithFlags(&handles->stream, cudaStreamNonBlocking));
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaEventCreateWithFlags(&handles->ready, cudaEventDisableTiming));
        const ncclResult_t status =
          ncclCommInitRank(&handles->communicator, n_ranks, unique, rank);
        if (status != ncclSuccess)
          {
            handles->communicator = nullptr;
            destroy(handles.release());
            GPU_ASSEMBLY_CHECK_NCCL(status);
          }
        return handles.release();
      }



      void
      destroy(Handles *handles) noexcept
      {
        if (handles == nullptr)
          return;
        if (handles->communicator != nullptr)
          GPU_ASSEMBLY_CHECK_NCCL_NOTHROW(
            ncclCommDestroy(handles->communicator));
        if (handles->ready != nullptr)
          GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaEventDestroy(handles->ready));
        if (handles->stream != nullptr)
          GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaStreamDestroy(handles->stream));
        delete handles;
      }



      void
      start_exchange(Handles       *handles,
                     const bool     double_values,
                     const void    *send,
                     const Messages sends,
                     void          *receive,
                     const Messages receives)
      {
        const ncclDataType_t type = double_values ? ncclDouble : ncclFloat;
        const std::size_t size = double_values ? sizeof(double) : sizeof(float);
        // The packed send buffer and the receive buffer's last readers are
        // kernels on the default stream.
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaEventRecord(handles->ready, cudaStreamLegacy));
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaStreamWaitEvent(handles->stream, handles->ready, 0));
        GPU_ASSEMBLY_CHECK_NCCL(ncclGroupStart());
        // Every operation of the group is enqueued before ncclGroupEnd(),
        // which must run even where one fails, so that NCCL's group state
        // is left clean; the first failure is thrown after it.
        ncclResult_t first = ncclSuccess;
        const auto   note  = [&first](const ncclResult_t status) {
          if (first == ncclSuccess)
            first = status;
        };
        for (std::size_t p = 0; p < receives.ranks->size(); ++p)
          {
            if (receives.selected != nullptr && (*receives.selected)[p] == 0)
              continue;
            const std::size_t begin = (*receives.offsets)[p];
            note(ncclRecv(static_cast<char *>(receive) + begin * size,
                          (*receives.offsets)[p + 1] - begin,
                          type,
                          static_cast<int>((*receives.ranks)[p]),
                          handles->communicator,
                          handles->stream));
          }
        for (std::size_t p = 0; p < sends.ranks->size(); ++p)
          {
            if (sends.selected != nullptr && (*sends.selected)[p] == 0)
              continue;
            const std::size_t begin = (*sends.offsets)[p];
            note(ncclSend(static_cast<const char *>(send) + begin * size,
                          (*sends.offsets)[p + 1] - begin,
                          type,
                          static_cast<int>((*sends.ranks)[p]),
                          handles->communicator,
                          handles->stream));
          }
        const ncclResult_t end = ncclGroupEnd();
        GPU_ASSEMBLY_CHECK_NCCL(first);
        GPU_ASSEMBLY_CHECK_NCCL(end);
      }



      void
      wait(Handles *handles)
      {
        GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(handles->stream));
      }
#else
      struct Handles
      {};

      namespace
      {
        [[noreturn]] void
        refuse()
        {
          throw_error("the plugin was built without NCCL "
                      "(GPU_ASSEMBLY_WITH_NCCL=OFF); configure it with "
                      "-DGPU_ASSEMBLY_WITH_NCCL=ON and NCCL installed.");
        }
      } // namespace



      bool
      built()
      {
        return false;
      }



      void
      get_unique_id(std::vector<char> &)
      {
        refuse();
      }



      std::vector<unsigned char>
      current_device_uuid()
      {
        refuse();
      }



      Handles *
      create(const std::vector<char> &, const int, const int)
      {
        refuse();
      }



      void
      destroy(Handles *handles) noexcept
      {
        delete handles;
      }



      void
      start_exchange(Handles *,
                     const bool,
                     const void *,
                     const Messages,
                     void *,
                     const Messages)
      {
        refuse();
      }



      void
      wait(Handles *)
      {
        refuse();
      }
#endif
    } // namespace NcclTransport
  }   // namespace internal
} // namespace GPUAssembly
