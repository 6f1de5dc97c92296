// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_resident_exchange_h
#define gpu_assembly_distributed_resident_exchange_h

#include <deal.II/base/mpi.h>

#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/exchange_plan.h>
#include <gpu_assembly/distributed/resident_array.h>

#include <memory>
#include <vector>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * ExchangeLists run where the local values and the target are (device,
     * or host in host mode): the values of rows other ranks own are
     * gathered into one buffer per exchange, sent (from device buffers
     * with NCCL or CUDA-aware MPI, or staged through page-locked host
     * buffers, as the HaloPath says),
     * the target is zeroed and the owned values are scattered into it while
     * the messages travel, and the received values are added last, each
     * target's in the order of the lists (grouped by target, one thread per
     * target: no atomics). The result equals ExchangePlan's host exchange
     * bit for bit.
     */
    template <typename Number>
    class ResidentExchange
    {
    public:
      /// Lists from ExchangePlan (positions in the resident target), sent
      /// through @p path (one that choose_halo_path() returned). Collective
      /// through the communicator's duplication.
      void
      reinit(const ExchangeLists &lists,
             const HaloPath       path,
             const MPI_Comm       communicator,
             const int            tag);

      /**
       * An exchange in two halves, so that the rank computes while the
       * messages travel. start() gathers the values of rows other ranks
       * own from @p send_values (those must be final, the others are not
       * read) and sends them; when it returns, @p send_values may be
       * overwritten. finish() makes target = this rank's owned values of
       * @p local_values plus those received, in the rows the rank owns.
       * Both add their time to @p times (communication: packing, posting,
       * waiting; exposed: waiting; write: zeroing and adding) and the
       * staging copies to @p transfer. Collective.
       */
      void
      start(const Number        *send_values,
            ExchangePlan::Times &times,
            double              &transfer) const;

      /// Let MPI move the messages in flight (MPI_Testall), to be called
      /// now and then between start() and finish() while the rank
      /// computes.
      void
      progress() const;

      void
      finish(const Number        *local_values,
             Number              *target,
             ExchangePlan::Times &times,
             double              &transfer) const;

      std::size_t
      n_bytes_sent() const
      {
        return send_sources.size() * sizeof(Number);
      }

      std::size_t
      n_bytes_received() const
      {
        return group_entries.size() * sizeof(Number);
      }

    private:
      bool     on_device = false;
      HaloPath path;
      int      tag = 0;
      std::unique_ptr<dealii::Utilities::MPI::DuplicatedCommunicator>
                                    communicator;
      std::size_t                   n_targets = 0;
      std::vector<unsigned int>     send_ranks;
      std::vector<std::size_t>      send_offsets;
      std::vector<unsigned int>     recv_ranks;
      std::vector<std::size_t>      recv_offsets;
      ResidentArray<int>            owned_sources;
      ResidentArray<int>            owned_targets;
      ResidentArray<int>            send_sources;
      ResidentArray<int>            group_targets;
      ResidentArray<int>            group_offsets;
      ResidentArray<int>            group_entries;
      mutable ResidentArray<Number> send_buffer;
      mutable ResidentArray<Number> recv_buffer;
      mutable PinnedBuffer<Number>  pinned_send;
      mutable PinnedBuffer<Number>  pinned_recv;
      // The messages between start() and finish().
      mutable std::vector<MPI_Request> requests;

      // The NCCL communicator of the exchange's (nccl path only).
      std::shared_ptr<const NcclCommunicator> nccl;
    };
  } // namespace internal
} // namespace GPUAssembly

#endif
