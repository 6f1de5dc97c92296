// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_distributed_nccl_transport_h
#define gpu_assembly_src_distributed_nccl_transport_h

// The NCCL and CUDA calls of the NCCL exchanges (cuda/distributed/
// nccl_transport.cu), declared without NCCL's, CUDA's and MPI's headers so
// that the MPI side (nccl_communicator.cc) and nvcc each read only their own
// (not installed).

#include <cstddef>
#include <string>
#include <vector>

namespace GPUAssembly
{
  namespace internal
  {
    namespace NcclTransport
    {
      /// Bytes of an ncclUniqueId (NCCL_UNIQUE_ID_BYTES).
      constexpr std::size_t unique_id_bytes = 128;

      /// Bytes of a CUDA device's UUID.
      constexpr std::size_t device_uuid_bytes = 16;

      /// Whether the plugin was built with NCCL (GPU_ASSEMBLY_WITH_NCCL).
      bool
      built();

      /// ncclGetUniqueId() into @p id (unique_id_bytes).
      void
      get_unique_id(std::vector<char> &id);

      /// The UUID of the calling thread's current CUDA device.
      std::vector<unsigned char>
      current_device_uuid();

      /// An NCCL communicator, the stream its operations run on and the
      /// event that orders them after the default stream's work.
      struct Handles;

      /// ncclCommInitRank() from the unique id that every rank holds.
      Handles *
      create(const std::vector<char> &id, const int n_ranks, const int rank);

      /// ncclCommDestroy() and the stream's and event's release; reports
      /// failures without throwing.
      void
      destroy(Handles *handles) noexcept;

      /// The messages of one exchange, in entries of the element type;
      /// with @p selected, only the messages p where selected[p] is set.
      struct Messages
      {
        const std::vector<unsigned int>  *ranks;
        const std::vector<std::size_t>   *offsets;
        const std::vector<unsigned char> *selected = nullptr;
      };

      /**
       * One NCCL group of a send of @p send[offsets[p], offsets[p + 1]) to
       * every rank of @p sends and a receive into @p receive likewise from
       * every rank of @p receives, enqueued on the communicator's stream
       * after the work the default stream holds so far. @p double_values
       * chooses double, else float entries.
       */
      void
      start_exchange(Handles       *handles,
                     const bool     double_values,
                     const void    *send,
                     const Messages sends,
                     void          *receive,
                     const Messages receives);

      /// Wait on the host until the communicator's stream is done.
      void
      wait(Handles *handles);
    } // namespace NcclTransport
  }   // namespace internal
} // namespace GPUAssembly

#endif
