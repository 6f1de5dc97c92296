// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_distributed_nccl_communicator_h
#define gpu_assembly_src_distributed_nccl_communicator_h

// The NCCL communicator of an MPI communicator, shared by the exchanges on
// it (not installed).

#include <gpu_assembly/distributed/distributed_device_vector.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nccl_transport.h"
#include <mpi.h>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * An NCCL communicator over the ranks of an MPI communicator, in the
     * same order, built once: rank 0's ncclGetUniqueId() is broadcast and
     * every rank calls ncclCommInitRank(). Objects that exchange on the same
     * MPI communicator share it through get(), which keeps a weak reference
     * only: the NCCL communicator is destroyed with its last user, so with
     * the objects of main(), before deal.II's MPI_InitFinalize finalizes
     * MPI.
     *
     * NCCL runs one rank per GPU. Where two ranks share a GPU (more ranks
     * than GPUs on a machine), no NCCL communicator is built and
     * usable() is false, with the reason in why_not().
     */
    class NcclCommunicator
    {
    public:
      /**
       * The shared object of @p communicator: built (collectively) on the
       * first call for a communicator and whenever the earlier one has no
       * user left or was built for another group of ranks under the same
       * handle. Every rank of @p communicator must call it in the same
       * order. Needs the plugin built with NCCL (NcclTransport::built()) and
       * a current CUDA device.
       */
      static std::shared_ptr<NcclCommunicator>
      get(const MPI_Comm communicator);

      NcclCommunicator(const NcclCommunicator &) = delete;
      NcclCommunicator &
      operator=(const NcclCommunicator &) = delete;
      ~NcclCommunicator();

      /// Whether every rank has a GPU of its own, and so an NCCL
      /// communicator.
      bool
      usable() const
      {
        return handles != nullptr;
      }

      /// Why usable() is false (empty where it is true).
      const std::string &
      why_not() const
      {
        return reason;
      }

      /**
       * Enqueue one group of NCCL sends of @p send's segments to
       * @p send_ranks and receives into @p receive's segments from
       * @p recv_ranks (segment p from offsets[p] to offsets[p + 1], in
       * entries), after the default stream's work so far. Collective over
       * the ranks the messages name.
       */
      template <typename Number>
      void
      start_exchange(const Number                    *send,
                     const std::vector<unsigned int> &send_ranks,
                     const std::vector<std::size_t>  &send_offsets,
                     Number                          *receive,
                     const std::vector<unsigned int> &recv_ranks,
                     const std::vector<std::size_t>  &recv_offsets) const;

      /// Wait until the exchanges started are done.
      void
      wait() const;

      /**
       * Make NCCL's connections for an exchange of these messages now, at
       * set-up. NCCL connects two ranks when their first message is sent,
       * and connects more of its channels when a longer one comes: the
       * first exchanges of a time loop would pay for it. Exchanges once,
       * and waits for, the messages longer than any connect() has sent
       * between the same two ranks in the same direction (both ranks of a
       * pair see the same history, so they choose the same messages).
       * Collective over the ranks the messages name; overwrites the
       * chosen segments of @p receive.
       */
      template <typename Number>
      void
      connect(const Number                    *send,
              const std::vector<unsigned int> &send_ranks,
              const std::vector<std::size_t>  &send_offsets,
              Number                          *receive,
              const std::vector<unsigned int> &recv_ranks,
              const std::vector<std::size_t>  &recv_offsets) const;

    private:
      explicit NcclCommunicator(const MPI_Comm communicator);

      // The group of ranks the communicator was built for: a handle freed
      // and reused for other ranks gets a new one.
      MPI_Group               group   = MPI_GROUP_NULL;
      NcclTransport::Handles *handles = nullptr;
      std::string             reason;
      // The longest message connect() has sent to (received from) each
      // rank, in bytes.
      mutable std::map<unsigned int, std::size_t> connected_sends;
      mutable std::map<unsigned int, std::size_t> connected_receives;
    };

    /**
     * GPUAssembly::choose_halo_path(), which also gives the NCCL
     * communicator it built or found on the nccl path (else null), for the
     * caller to keep: dropped, the next request would build it again.
     */
    HaloPath
    choose_halo_path(const bool                               use_device,
                     const HaloPath                           requested,
                     const MPI_Comm                           communicator,
                     std::shared_ptr<const NcclCommunicator> &nccl);
  } // namespace internal
} // namespace GPUAssembly

#endif
