// SPDX-License-Identifier: LGPL-2.1-or-later
#include "nccl_communicator.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>

#include <map>
#include <mutex>
#include <type_traits>

namespace GPUAssembly
{
  namespace internal
  {
    NcclCommunicator::NcclCommunicator(const MPI_Comm communicator)
    {
      AssertThrowMPI(MPI_Comm_group(communicator, &group));
      const unsigned int n_ranks =
        dealii::Utilities::MPI::n_mpi_processes(communicator);
      const unsigned int rank =
        dealii::Utilities::MPI::this_mpi_process(communicator);

      // NCCL refuses two ranks on one GPU; the UUIDs of all ranks' devices
      // tell (also across machines).
      const std::vector<unsigned char> uuid =
        NcclTransport::current_device_uuid();
      std::vector<unsigned char> uuids(n_ranks *
                                       NcclTransport::device_uuid_bytes);
      AssertThrowMPI(MPI_Allgather(uuid.data(),
                                   NcclTransport::device_uuid_bytes,
                                   MPI_UNSIGNED_CHAR,
                                   uuids.data(),
                                   NcclTransport::device_uuid_bytes,
                                   MPI_UNSIGNED_CHAR,
                                   communicator));
      std::map<std::vector<unsigned char>, unsigned int> first_rank;
      for (unsigned int r = 0; r < n_ranks && reason.empty(); ++r)
        {
          const auto begin = uuids.begin() + r * uuid.size();
          const auto [where, inserted] =
            first_rank.emplace(std::vector<unsigned char>(begin,
                                                          begin + uuid.size()),
                               r);
          if (!inserted)
            reason = "ranks " + std::to_string(where->second) + " and " +
                     std::to_string(r) +
                     " share one GPU, and NCCL needs a GPU per rank (start "
                     "at most as many ranks on a machine as it has GPUs; "
                     "select_device_by_node_rank() gives each its own)";
        }
      if (!reason.empty())
        return;

      std::vector<char> id(NcclTransport::unique_id_bytes);
      if (rank == 0)
        NcclTransport::get_unique_id(id);
      AssertThrowMPI(
        MPI_Bcast(id.data(), id.size(), MPI_CHAR, 0, communicator));
      handles = NcclTransport::create(id, n_ranks, rank);
    }



    NcclCommunicator::~NcclCommunicator()
    {
      NcclTransport::destroy(handles);
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized && group != MPI_GROUP_NULL)
        MPI_Group_free(&group);
    }



    std::shared_ptr<NcclCommunicator>
    NcclCommunicator::get(const MPI_Comm communicator)
    {
      AssertThrow(NcclTransport::built(),
                  dealii::ExcMessage(
                    "the NCCL exchange was asked for, but the plugin was "
                    "built without NCCL (GPU_ASSEMBLY_WITH_NCCL=OFF)."));
      static std::mutex                                          mutex;
      static std::map<MPI_Comm, std::weak_ptr<NcclCommunicator>> cache;
      std::lock_guard<std::mutex>                                lock(mutex);
      for (auto entry = cache.begin(); entry != cache.end();)
        entry = entry->second.expired() ? cache.erase(entry) : ++entry;

      const auto found = cache.find(communicator);
      if (found != cache.end())
        {
          std::shared_ptr<NcclCommunicator> shared = found->second.lock();
          MPI_Group                         group;
          AssertThrowMPI(MPI_Comm_group(communicator, &group));
          int comparison = MPI_UNEQUAL;
          AssertThrowMPI(MPI_Group_compare(shared->group, group, &comparison));
          MPI_Group_free(&group);
          if (comparison == MPI_IDENT)
            return shared;
        }
      std::shared_ptr<NcclCommunicator> shared(
        new NcclCommunicator(communicator));
      cache[communicator] = shared;
      return shared;
    }



    template <typename Number>
    void
    NcclCommunicator::start_exchange(
      const Number                    *send,
      const std::vector<unsigned int> &send_ranks,
      const std::vector<std::size_t>  &send_offsets,
      Number                          *receive,
      const std::vector<unsigned int> &recv_ranks,
      const std::vector<std::size_t>  &recv_offsets) const
    {
      AssertThrow(usable(),
                  dealii::ExcMessage("an NCCL exchange on ranks without an "
                                     "NCCL communicator: " +
                                     reason + "."));
      NcclTransport::start_exchange(handles,
                                    std::is_same_v<Number, double>,
                                    send,
                                    {&send_ranks, &send_offsets},
                                    receive,
                                    {&recv_ranks, &recv_offsets});
    }



    void
    NcclCommunicator::wait() const
    {
      if (handles != nullptr)
        NcclTransport::wait(handles);
    }



    template <typename Number>
    void
    NcclCommunicator::connect(
      const Number                    *send,
      const std::vector<unsigned int> &send_ranks,
      const std::vector<std::size_t>  &send_offsets,
      Number                          *receive,
      const std::vector<unsigned int> &recv_ranks,
      const std::vector<std::size_t>  &recv_offsets) const
    {
      if (!usable())
        return;
      bool       any    = false;
      const auto choose = [&any](const std::vector<unsigned int>     &ranks,
                                 const std::vector<std::size_t>      &offsets,
                                 std::map<unsigned int, std::size_t> &longest) {
        std::vector<unsigned char> chosen(ranks.size(), 0);
        for (std::size_t p = 0; p < ranks.size(); ++p)
          {
            const std::size_t bytes =
              (offsets[p + 1] - offsets[p]) * sizeof(Number);
            std::size_t &known = longest[ranks[p]];
            if (bytes > known)
              {
                known     = bytes;
                chosen[p] = 1;
                any       = true;
              }
          }
        return chosen;
      };
      const std::vector<unsigned char> sends =
        choose(send_ranks, send_offsets, connected_sends);
      const std::vector<unsigned char> receives =
        choose(recv_ranks, recv_offsets, connected_receives);
      if (!any)
        return;
      NcclTransport::start_exchange(handles,
                                    std::is_same_v<Number, double>,
                                    send,
                                    {&send_ranks, &send_offsets, &sends},
                                    receive,
                                    {&recv_ranks, &recv_offsets, &receives});
      NcclTransport::wait(handles);
    }



    template void
    NcclCommunicator::connect(const float *,
                              const std::vector<unsigned int> &,
                              const std::vector<std::size_t> &,
                              float *,
                              const std::vector<unsigned int> &,
                              const std::vector<std::size_t> &) const;
    template void
    NcclCommunicator::connect(const double *,
                              const std::vector<unsigned int> &,
                              const std::vector<std::size_t> &,
                              double *,
                              const std::vector<unsigned int> &,
                              const std::vector<std::size_t> &) const;
    template void
    NcclCommunicator::start_exchange(const float *,
                                     const std::vector<unsigned int> &,
                                     const std::vector<std::size_t> &,
                                     float *,
                                     const std::vector<unsigned int> &,
                                     const std::vector<std::size_t> &) const;
    template void
    NcclCommunicator::start_exchange(const double *,
                                     const std::vector<unsigned int> &,
                                     const std::vector<std::size_t> &,
                                     double *,
                                     const std::vector<unsigned int> &,
                                     const std::vector<std::size_t> &) const;
  } // namespace internal
} // namespace GPUAssembly
