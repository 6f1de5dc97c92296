// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>

#include <gpu_assembly/distributed/exchange_plan.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>
#include <string>

namespace GPUAssembly
{
  namespace
  {
    using dealii::types::global_dof_index;
    constexpr global_dof_index no_column = dealii::numbers::invalid_dof_index;

    // Builds the lists of one exchange. Entry s of the local array belongs
    // to local row row_of[s]; key(s) is its (global row, global column), the
    // column no_column for vector entries. Collective.
    template <class Key, class Position>
    void
    build_lists(const std::vector<global_dof_index> &local_to_global,
                const std::vector<index_type>       &row_of,
                const Key                           &key,
                const dealii::IndexSet              &owned_rows,
                const MPI_Comm                       communicator,
                const std::size_t                    n_targets,
                const Position                      &position,
                ExchangeLists                       &lists)
    {
      using namespace dealii;
      lists           = ExchangeLists();
      lists.n_targets = n_targets;

      // The owners of the rows this rank has but does not own, from
      // deal.II's consensus algorithm.
      IndexSet foreign_rows(owned_rows.size());
      for (const global_dof_index row : local_to_global)
        if (!owned_rows.is_element(row))
          foreign_rows.add_index(row);
      foreign_rows.compress();
      const std::vector<unsigned int> owners =
        Utilities::MPI::compute_index_owner(owned_rows,
                                            foreign_rows,
                                            communicator);

      // Per destination rank: the keys of the entries sent, and where they
      // are taken from.
      std::map<unsigned int, std::vector<global_dof_index>> keys_to_send;
      std::map<unsigned int, std::vector<std::size_t>>      sources_to_send;
      for (std::size_t s = 0; s < row_of.size(); ++s)
        {
          const global_dof_index row             = local_to_global[row_of[s]];
          const auto [global_row, global_column] = key(s);
          if (owned_rows.is_element(row))
            {
              lists.owned_sources.push_back(s);
              lists.owned_targets.push_back(
                position(global_row, global_column));
              continue;
            }
          const unsigned int owner = owners[foreign_rows.index_within_set(row)];
          keys_to_send[owner].push_back(global_row);
          keys_to_send[owner].push_back(global_column);
          sources_to_send[owner].push_back(s);
        }
      lists.send_offsets.push_back(0);
      for (const auto &[rank, sources] : sources_to_send)
        {
          lists.send_ranks.push_back(rank);
          lists.send_sources.insert(lists.send_sources.end(),
                                    sources.begin(),
                                    sources.end());
          lists.send_offsets.push_back(lists.send_sources.size());
        }

      // The owners learn once which entries they will receive, and find
      // their places.
      const std::map<unsigned int, std::vector<global_dof_index>>
        received_keys =
          Utilities::MPI::some_to_some(communicator, keys_to_send);
      lists.recv_offsets.push_back(0);
      for (const auto &[rank, keys] : received_keys)
        {
          lists.recv_ranks.push_back(rank);
          for (std::size_t j = 0; j + 1 < keys.size(); j += 2)
            {
              AssertThrow(owned_rows.is_element(keys[j]),
                          ExcMessage("rank " + std::to_string(rank) +
                                     " sent an entry of row " +
                                     std::to_string(keys[j]) +
                                     ", which this rank does not own."));
              lists.recv_targets.push_back(position(keys[j], keys[j + 1]));
            }
          lists.recv_offsets.push_back(lists.recv_targets.size());
        }
      for (const std::size_t target : lists.owned_targets)
        AssertThrow(target < n_targets, ExcInternalError());
      for (const std::size_t target : lists.recv_targets)
        AssertThrow(target < n_targets, ExcInternalError());
      // MPI counts are int.
      for (std::size_t p = 0; p < lists.send_ranks.size(); ++p)
        AssertThrow(lists.send_offsets[p + 1] - lists.send_offsets[p] <
                      static_cast<std::size_t>(INT_MAX),
                    ExcMessage("an exchange message exceeds MPI's count."));
      for (std::size_t p = 0; p < lists.recv_ranks.size(); ++p)
        AssertThrow(lists.recv_offsets[p + 1] - lists.recv_offsets[p] <
                      static_cast<std::size_t>(INT_MAX),
                    ExcMessage("an exchange message exceeds MPI's count."));
    }
  } // namespace



  void
  ExchangePlan::reinit(
    const std::vector<dealii::types::global_dof_index> &local_to_global,
    const std::vector<index_type>                      &row_offsets,
    const std::vector<index_type>                      &column_indices,
    const dealii::IndexSet                             &owned_rows,
    const MPI_Comm                                      mpi_communicator,
    const std::size_t                                   n_matrix_targets,
    const MatrixPosition                               &matrix_position,
    const std::size_t                                   n_vector_targets,
    const VectorPosition                               &vector_position)
  {
    AssertThrow(row_offsets.size() == local_to_global.size() + 1,
                dealii::ExcDimensionMismatch(row_offsets.size(),
                                             local_to_global.size() + 1));
    AssertThrow(std::is_sorted(local_to_global.begin(), local_to_global.end()),
                dealii::ExcMessage("the local DoFs must be in increasing "
                                   "global order."));
    communicator =
      std::make_unique<dealii::Utilities::MPI::DuplicatedCommunicator>(
        mpi_communicator);
    const MPI_Comm comm = **communicator;

    std::vector<index_type> row_of_nonzero(column_indices.size());
    for (std::size_t row = 0; row < local_to_global.size(); ++row)
      std::fill(row_of_nonzero.begin() + row_offsets[row],
                row_of_nonzero.begin() + row_offsets[row + 1],
                static_cast<index_type>(row));
    build_lists(
      local_to_global,
      row_of_nonzero,
      [&](const std::size_t k) {
        return std::make_pair(local_to_global[row_of_nonzero[k]],
                              local_to_global[column_indices[k]]);
      },
      owned_rows,
      comm,
      n_matrix_targets,
      matrix_position,
      matrix);

    std::vector<index_type> row_of_entry(local_to_global.size());
    for (std::size_t i = 0; i < row_of_entry.size(); ++i)
      row_of_entry[i] = i;
    build_lists(
      local_to_global,
      row_of_entry,
      [&](const std::size_t i) {
        return std::make_pair(local_to_global[i], no_column);
      },
      owned_rows,
      comm,
      n_vector_targets,
      [&](const global_dof_index row, const global_dof_index) {
        return vector_position(row);
      },
      vector);

    send_buffer.resize(std::max(matrix.n_send(), vector.n_send()));
    recv_buffer.resize(std::max(matrix.n_recv(), vector.n_recv()));
  }



  template <typename Number>
  void
  ExchangePlan::exchange(const ExchangeLists &lists,
                         const int            tag,
                         const Number        *local_values,
                         double              *target) const
  {
    Assert(communicator, dealii::ExcNotInitialized());
    using Clock        = std::chrono::steady_clock;
    const auto elapsed = [](const Clock::time_point since) {
      return std::chrono::duration<double>(Clock::now() - since).count();
    };
    auto                     start = Clock::now();
    const MPI_Comm           comm  = **communicator;
    std::vector<MPI_Request> requests(lists.recv_ranks.size() +
                                      lists.send_ranks.size());
    std::size_t              r = 0;
    for (std::size_t p = 0; p < lists.recv_ranks.size(); ++p)
      {
        const int ierr = MPI_Irecv(recv_buffer.data() + lists.recv_offsets[p],
                                   static_cast<int>(lists.recv_offsets[p + 1] -
                                                    lists.recv_offsets[p]),
                                   MPI_DOUBLE,
                                   lists.recv_ranks[p],
                                   tag,
                                   comm,
                                   &requests[r++]);
        AssertThrowMPI(ierr);
      }
    for (std::size_t j = 0; j < lists.n_send(); ++j)
      send_buffer[j] = local_values[lists.send_sources[j]];
    for (std::size_t p = 0; p < lists.send_ranks.size(); ++p)
      {
        const int ierr = MPI_Isend(send_buffer.data() + lists.send_offsets[p],
                                   static_cast<int>(lists.send_offsets[p + 1] -
                                                    lists.send_offsets[p]),
                                   MPI_DOUBLE,
                                   lists.send_ranks[p],
                                   tag,
                                   comm,
                                   &requests[r++]);
        AssertThrowMPI(ierr);
      }

    times.communication += elapsed(start);

    // The rank's own rows while the messages travel.
    start = Clock::now();
    std::fill(target, target + lists.n_targets, 0.);
    for (std::size_t i = 0; i < lists.owned_sources.size(); ++i)
      target[lists.owned_targets[i]] += local_values[lists.owned_sources[i]];
    times.write += elapsed(start);

    start = Clock::now();
    const int ierr =
      MPI_Waitall(requests.size(), requests.data(), MPI_STATUSES_IGNORE);
    AssertThrowMPI(ierr);
    times.communication += elapsed(start);

    start = Clock::now();
    for (std::size_t j = 0; j < lists.n_recv(); ++j)
      target[lists.recv_targets[j]] += recv_buffer[j];
    times.write += elapsed(start);
  }



  template <typename Number>
  void
  ExchangePlan::exchange_matrix(const Number *local_values,
                                double       *target) const
  {
    exchange(matrix, 1, local_values, target);
  }



  template <typename Number>
  void
  ExchangePlan::exchange_vector(const Number *local_values,
                                double       *target) const
  {
    exchange(vector, 2, local_values, target);
  }



  template void
  ExchangePlan::exchange_matrix(const float *, double *) const;
  template void
  ExchangePlan::exchange_matrix(const double *, double *) const;
  template void
  ExchangePlan::exchange_vector(const float *, double *) const;
  template void
  ExchangePlan::exchange_vector(const double *, double *) const;
} // namespace GPUAssembly
