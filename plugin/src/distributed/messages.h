// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_distributed_messages_h
#define gpu_assembly_src_distributed_messages_h

// The point-to-point messages of the exchanges: ExchangePlan's (host),
// ResidentExchange's and DistributedDeviceVector's halo (device or host)
// (not installed).

#include <deal.II/base/exceptions.h>

#include <cstddef>
#include <type_traits>
#include <vector>

#include <mpi.h>

namespace GPUAssembly
{
  namespace internal
  {
    template <typename Number>
    MPI_Datatype
    mpi_type()
    {
      static_assert(std::is_same_v<Number, double> ||
                      std::is_same_v<Number, float>,
                    "messages hold float or double");
      return std::is_same_v<Number, double> ? MPI_DOUBLE : MPI_FLOAT;
    }

    /**
     * @p post (MPI_Irecv or MPI_Isend) of @p count entries at @p buffer
     * from or to @p rank, its request appended to @p requests.
     */
    template <typename Post, typename Pointer>
    void
    post_message(const Post                post,
                 const Pointer             buffer,
                 const std::size_t         count,
                 const unsigned int        rank,
                 const int                 tag,
                 const MPI_Comm            communicator,
                 std::vector<MPI_Request> &requests)
    {
      requests.emplace_back();
      const int ierr =
        post(buffer,
             static_cast<int>(count),
             mpi_type<std::remove_cv_t<std::remove_pointer_t<Pointer>>>(),
             rank,
             tag,
             communicator,
             &requests.back());
      AssertThrowMPI(ierr);
    }

    /// A post_message() per rank: the message from or to @p ranks[p] is
    /// @p buffer[offsets[p], offsets[p + 1]).
    template <typename Post, typename Pointer>
    void
    post_messages(const Post                       post,
                  const Pointer                    buffer,
                  const std::vector<unsigned int> &ranks,
                  const std::vector<std::size_t>  &offsets,
                  const int                        tag,
                  const MPI_Comm                   communicator,
                  std::vector<MPI_Request>        &requests)
    {
      for (std::size_t p = 0; p < ranks.size(); ++p)
        post_message(post,
                     buffer + offsets[p],
                     offsets[p + 1] - offsets[p],
                     ranks[p],
                     tag,
                     communicator,
                     requests);
    }

    /// Let MPI move the messages of @p requests without waiting for them:
    /// an MPI library may move a large message only inside MPI calls.
    /// Completed requests become MPI_REQUEST_NULL, which wait_for_all()
    /// accepts.
    inline void
    test_all(std::vector<MPI_Request> &requests)
    {
      int       completed = 0;
      const int ierr      = MPI_Testall(requests.size(),
                                   requests.data(),
                                   &completed,
                                   MPI_STATUSES_IGNORE);
      AssertThrowMPI(ierr);
    }

    /// Wait for all of @p requests.
    inline void
    wait_for_all(std::vector<MPI_Request> &requests)
    {
      const int ierr =
        MPI_Waitall(requests.size(), requests.data(), MPI_STATUSES_IGNORE);
      AssertThrowMPI(ierr);
    }
  } // namespace internal
} // namespace GPUAssembly

#endif
