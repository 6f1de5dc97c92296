// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/parallel.h>

#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/distributed/exchange_plan.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <map>
#include <string>

#include "../base/first_touch.h"
#include "messages.h"

namespace GPUAssembly
{
  namespace
  {
    using dealii::types::global_dof_index;
    constexpr global_dof_index no_column = dealii::numbers::invalid_dof_index;

    // Rows per task of the parallel loops: position look-ups of a few
    // hundred rows outweigh a task's overhead.
    constexpr std::size_t row_grain = 256;

    // Which local rows the rank owns, and the owners of the others (from
    // deal.II's consensus algorithm, collective): owner[i] for a row i
    // that is not owned.
    struct RowOwners
    {
      std::vector<std::uint8_t> owned;
      std::vector<unsigned int> owner;
    };

    RowOwners
    find_row_owners(const std::vector<global_dof_index> &local_to_global,
                    const dealii::IndexSet              &owned_rows,
                    const MPI_Comm                       communicator)
    {
      using namespace dealii;
      // IndexSet compresses itself on first use; done here, before threads
      // read it.
      owned_rows.compress();
      const std::size_t n_rows = local_to_global.size();
      RowOwners         result;
      result.owned.resize(n_rows);
      parallel::apply_to_subranges(
        std::size_t(0),
        n_rows,
        [&](const std::size_t begin, const std::size_t end) {
          for (std::size_t i = begin; i < end; ++i)
            result.owned[i] = owned_rows.is_element(local_to_global[i]);
        },
        4096);
      // Foreign rows in increasing order, as the local DoFs are.
      std::vector<global_dof_index> foreign;
      for (std::size_t i = 0; i < n_rows; ++i)
        if (!result.owned[i])
          foreign.push_back(local_to_global[i]);
      IndexSet foreign_rows(owned_rows.size());
      foreign_rows.add_indices(foreign.begin(), foreign.end());
      foreign_rows.compress();
      const std::vector<unsigned int> owners =
        Utilities::MPI::compute_index_owner(owned_rows,
                                            foreign_rows,
                                            communicator);
      AssertDimension(owners.size(), foreign.size());
      result.owner.assign(n_rows, numbers::invalid_unsigned_int);
      std::size_t j = 0;
      for (std::size_t i = 0; i < n_rows; ++i)
        if (!result.owned[i])
          result.owner[i] = owners[j++];
      return result;
    }



    // Runs of equal rows in received (row, column) keys: run r holds the
    // keys [starts[r], starts[r + 1]) (pairs, counted as pairs). A sender
    // lists the entries of a row one after another in increasing column
    // order, so each run is one row's entries, columns increasing.
    std::vector<std::size_t>
    row_runs(const std::vector<global_dof_index> &keys)
    {
      std::vector<std::size_t> starts;
      const std::size_t        n = keys.size() / 2;
      for (std::size_t j = 0; j < n; ++j)
        if (j == 0 || keys[2 * j] != keys[2 * j - 2])
          starts.push_back(j);
      starts.push_back(n);
      return starts;
    }



    // The checks common to both lists: every target in range, message sizes
    // within MPI's int counts.
    void
    check_lists(const ExchangeLists &lists)
    {
      using namespace dealii;
      for (const std::size_t target : lists.owned_targets)
        AssertThrow(target < lists.n_targets, ExcInternalError());
      for (const std::size_t target : lists.recv_targets)
        AssertThrow(target < lists.n_targets, ExcInternalError());
      for (std::size_t p = 0; p < lists.send_ranks.size(); ++p)
        AssertThrow(lists.send_offsets[p + 1] - lists.send_offsets[p] <
                      static_cast<std::size_t>(INT_MAX),
                    ExcMessage("an exchange message exceeds MPI's count."));
      for (std::size_t p = 0; p < lists.recv_ranks.size(); ++p)
        AssertThrow(lists.recv_offsets[p + 1] - lists.recv_offsets[p] <
                      static_cast<std::size_t>(INT_MAX),
                    ExcMessage("an exchange message exceeds MPI's count."));
    }



    // Received keys must be rows this rank owns.
    void
    check_received_rows(const unsigned int                   rank,
                        const std::vector<global_dof_index> &keys,
                        const std::vector<std::size_t>      &runs,
                        const dealii::IndexSet              &owned_rows)
    {
      using namespace dealii;
      for (std::size_t r = 0; r + 1 < runs.size(); ++r)
        {
          const global_dof_index row = keys[2 * runs[r]];
          AssertThrow(owned_rows.is_element(row),
                      ExcMessage("rank " + std::to_string(rank) +
                                 " sent an entry of row " +
                                 std::to_string(row) +
                                 ", which this rank does not own."));
        }
    }



    // The part of the lists that crosses ranks, from the (row, column) keys
    // of the entries each destination rank is sent and the local entries
    // they are taken from: send lists by rank, then, once the keys are
    // exchanged (collective), receive lists by rank, whose targets
    // place(keys, runs, targets) finds for a sender's keys and their
    // row_runs(). Ends with check_lists().
    template <class Place>
    void
    exchange_keys(
      const std::map<unsigned int, std::vector<global_dof_index>> &keys_to_send,
      const std::map<unsigned int, std::vector<std::size_t>> &sources_to_send,
      const dealii::IndexSet                                 &owned_rows,
      const MPI_Comm                                          communicator,
      const Place                                            &place,
      ExchangeLists                                          &lists)
    {
      lists.send_offsets.push_back(0);
      for (const auto &[rank, sources] : sources_to_send)
        {
          lists.send_ranks.push_back(rank);
          lists.send_sources.insert(lists.send_sources.end(),
                                    sources.begin(),
                                    sources.end());
          lists.send_offsets.push_back(lists.send_sources.size());
        }

      // The owners learn once which entries they will receive.
      const std::map<unsigned int, std::vector<global_dof_index>>
        received_keys =
          dealii::Utilities::MPI::some_to_some(communicator, keys_to_send);
      lists.recv_offsets.push_back(0);
      for (const auto &[rank, keys] : received_keys)
        {
          lists.recv_ranks.push_back(rank);
          const std::size_t              offset = lists.recv_targets.size();
          const std::vector<std::size_t> runs   = row_runs(keys);
          check_received_rows(rank, keys, runs, owned_rows);
          lists.recv_targets.resize(offset + keys.size() / 2);
          place(keys, runs, lists.recv_targets.data() + offset);
          lists.recv_offsets.push_back(lists.recv_targets.size());
        }
      check_lists(lists);
    }



    // Matrix lists. Entry s of the local array is nonzero s of the local
    // CSR arrays; the owned entries of a row are consecutive, and so are
    // their positions. Collective.
    void
    build_matrix_lists(const std::vector<global_dof_index>    &local_to_global,
                       const std::vector<index_type>          &row_offsets,
                       const std::vector<index_type>          &column_indices,
                       const RowOwners                        &owners,
                       const dealii::IndexSet                 &owned_rows,
                       const MPI_Comm                          communicator,
                       const std::size_t                       n_targets,
                       const ExchangePlan::MatrixRowPositions &positions,
                       ExchangeLists                          &lists)
    {
      using namespace dealii;
      lists                    = ExchangeLists();
      lists.n_targets          = n_targets;
      const std::size_t n_rows = local_to_global.size();

      // Owned rows: sources in local order, positions a row at a time in
      // parallel (each row's place in the lists is known from the prefix
      // sum of the owned rows' lengths).
      std::vector<index_type>  owned_local_rows;
      std::vector<std::size_t> owned_offsets(1, 0);
      for (std::size_t i = 0; i < n_rows; ++i)
        if (owners.owned[i])
          {
            owned_local_rows.push_back(i);
            owned_offsets.push_back(owned_offsets.back() + row_offsets[i + 1] -
                                    row_offsets[i]);
          }
      // An entry per owned nonzero: sized on pages all threads touch first
      // (a serial zero-fill of fresh pages costs as much as the loop).
      internal::assign_first_touched_in_parallel(lists.owned_sources,
                                                 owned_offsets.back());
      internal::assign_first_touched_in_parallel(lists.owned_targets,
                                                 owned_offsets.back());
      parallel::apply_to_subranges(
        std::size_t(0),
        owned_local_rows.size(),
        [&](const std::size_t begin, const std::size_t end) {
          std::vector<global_dof_index> columns;
          for (std::size_t r = begin; r < end; ++r)
            {
              const index_type  i     = owned_local_rows[r];
              const std::size_t first = row_offsets[i];
              const std::size_t n     = row_offsets[i + 1] - first;
              columns.resize(n);
              for (std::size_t k = 0; k < n; ++k)
                {
                  columns[k] = local_to_global[column_indices[first + k]];
                  lists.owned_sources[owned_offsets[r] + k] = first + k;
                }
              positions(local_to_global[i],
                        columns.data(),
                        n,
                        lists.owned_targets.data() + owned_offsets[r]);
            }
        },
        row_grain);

      // Rows of other owners: per destination rank the keys of the entries
      // sent and where they are taken from, in local order.
      std::map<unsigned int, std::vector<global_dof_index>> keys_to_send;
      std::map<unsigned int, std::vector<std::size_t>>      sources_to_send;
      for (std::size_t i = 0; i < n_rows; ++i)
        if (!owners.owned[i])
          {
            auto &keys    = keys_to_send[owners.owner[i]];
            auto &sources = sources_to_send[owners.owner[i]];
            for (std::size_t k = row_offsets[i];
                 k < static_cast<std::size_t>(row_offsets[i + 1]);
                 ++k)
              {
                keys.push_back(local_to_global[i]);
                keys.push_back(local_to_global[column_indices[k]]);
                sources.push_back(k);
              }
          }
      // The owners find the places of the entries they receive, a row at a
      // time.
      exchange_keys(
        keys_to_send,
        sources_to_send,
        owned_rows,
        communicator,
        [&](const std::vector<global_dof_index> &keys,
            const std::vector<std::size_t>      &runs,
            std::size_t *const                   targets) {
          parallel::apply_to_subranges(
            std::size_t(0),
            runs.size() - 1,
            [&](const std::size_t begin, const std::size_t end) {
              std::vector<global_dof_index> columns;
              for (std::size_t r = begin; r < end; ++r)
                {
                  const std::size_t n = runs[r + 1] - runs[r];
                  columns.resize(n);
                  for (std::size_t k = 0; k < n; ++k)
                    columns[k] = keys[2 * (runs[r] + k) + 1];
                  positions(keys[2 * runs[r]],
                            columns.data(),
                            n,
                            targets + runs[r]);
                }
            },
            row_grain);
        },
        lists);
    }



    // Right-hand-side lists: local entry i is local row i. Collective.
    void
    build_vector_lists(const std::vector<global_dof_index> &local_to_global,
                       const RowOwners                     &owners,
                       const dealii::IndexSet              &owned_rows,
                       const MPI_Comm                       communicator,
                       const std::size_t                    n_targets,
                       const ExchangePlan::VectorPositions &positions,
                       ExchangeLists                       &lists)
    {
      using namespace dealii;
      lists                    = ExchangeLists();
      lists.n_targets          = n_targets;
      const std::size_t n_rows = local_to_global.size();

      std::vector<global_dof_index> owned_global_rows;
      for (std::size_t i = 0; i < n_rows; ++i)
        if (owners.owned[i])
          {
            lists.owned_sources.push_back(i);
            owned_global_rows.push_back(local_to_global[i]);
          }
      const auto find_positions =
        [&positions](const std::vector<global_dof_index> &rows,
                     const std::size_t                    stride,
                     const std::size_t                    n,
                     std::size_t                         *result) {
          parallel::apply_to_subranges(
            std::size_t(0),
            n,
            [&](const std::size_t begin, const std::size_t end) {
              std::vector<global_dof_index> block(end - begin);
              for (std::size_t j = begin; j < end; ++j)
                block[j - begin] = rows[stride * j];
              positions(block.data(), block.size(), result + begin);
            },
            4096);
        };
      lists.owned_targets.resize(owned_global_rows.size());
      find_positions(owned_global_rows,
                     1,
                     owned_global_rows.size(),
                     lists.owned_targets.data());

      std::map<unsigned int, std::vector<global_dof_index>> keys_to_send;
      std::map<unsigned int, std::vector<std::size_t>>      sources_to_send;
      for (std::size_t i = 0; i < n_rows; ++i)
        if (!owners.owned[i])
          {
            auto &keys = keys_to_send[owners.owner[i]];
            keys.push_back(local_to_global[i]);
            keys.push_back(no_column);
            sources_to_send[owners.owner[i]].push_back(i);
          }
      exchange_keys(
        keys_to_send,
        sources_to_send,
        owned_rows,
        communicator,
        [&](const std::vector<global_dof_index> &keys,
            const std::vector<std::size_t> &,
            std::size_t *const targets) {
          find_positions(keys, 2, keys.size() / 2, targets);
        },
        lists);
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
    const MatrixRowPositions                           &matrix_positions,
    const std::size_t                                   n_vector_targets,
    const VectorPositions                              &vector_positions)
  {
    AssertThrow(row_offsets.size() == local_to_global.size() + 1,
                dealii::ExcDimensionMismatch(row_offsets.size(),
                                             local_to_global.size() + 1));
    AssertThrow(std::is_sorted(local_to_global.begin(), local_to_global.end()),
                dealii::ExcMessage("the local DoFs must be in increasing "
                                   "global order."));
    SetupTimes::Steps steps("ExchangePlan");
    steps.next("communicator");
    communicator =
      std::make_unique<dealii::Utilities::MPI::DuplicatedCommunicator>(
        mpi_communicator);
    const MPI_Comm comm = **communicator;

    // One consensus on the owners serves both lists.
    steps.next("row owners");
    const RowOwners owners = find_row_owners(local_to_global, owned_rows, comm);
    steps.next("matrix lists");
    build_matrix_lists(local_to_global,
                       row_offsets,
                       column_indices,
                       owners,
                       owned_rows,
                       comm,
                       n_matrix_targets,
                       matrix_positions,
                       matrix);
    steps.next("vector lists");
    build_vector_lists(local_to_global,
                       owners,
                       owned_rows,
                       comm,
                       n_vector_targets,
                       vector_positions,
                       vector);

    for (auto [lists, in_flight] : {std::make_pair(&matrix, &matrix_in_flight),
                                    std::make_pair(&vector, &vector_in_flight)})
      {
        in_flight->send_buffer.resize(lists->n_send());
        in_flight->recv_buffer.resize(lists->n_recv());
        in_flight->requests.clear();
      }
  }



  template <typename Number>
  void
  ExchangePlan::start(const ExchangeLists &lists,
                      const int            tag,
                      const Number        *send_values,
                      InFlight            &in_flight) const
  {
    Assert(communicator, dealii::ExcNotInitialized());
    AssertThrow(in_flight.requests.empty(),
                dealii::ExcMessage("an exchange starts before the previous "
                                   "one of the same lists finished."));
    using Clock            = std::chrono::steady_clock;
    const auto     start   = Clock::now();
    const MPI_Comm comm    = **communicator;
    auto          &buffer  = in_flight.send_buffer;
    auto          &request = in_flight.requests;
    request.reserve(lists.recv_ranks.size() + lists.send_ranks.size());
    internal::post_messages(MPI_Irecv,
                            in_flight.recv_buffer.data(),
                            lists.recv_ranks,
                            lists.recv_offsets,
                            tag,
                            comm,
                            request);
    for (std::size_t j = 0; j < lists.n_send(); ++j)
      buffer[j] = send_values[lists.send_sources[j]];
    internal::post_messages(MPI_Isend,
                            buffer.data(),
                            lists.send_ranks,
                            lists.send_offsets,
                            tag,
                            comm,
                            request);
    times.communication += internal::seconds_since(start);
  }



  template <typename Number>
  void
  ExchangePlan::finish(const ExchangeLists &lists,
                       const Number        *local_values,
                       double              *target,
                       InFlight            &in_flight) const
  {
    using Clock = std::chrono::steady_clock;

    // The rank's own rows while the messages travel.
    auto start = Clock::now();
    std::fill(target, target + lists.n_targets, 0.);
    for (std::size_t i = 0; i < lists.owned_sources.size(); ++i)
      target[lists.owned_targets[i]] += local_values[lists.owned_sources[i]];
    times.write += internal::seconds_since(start);

    start = Clock::now();
    internal::wait_for_all(in_flight.requests);
    in_flight.requests.clear();
    const double wait = internal::seconds_since(start);
    times.communication += wait;
    times.exposed += wait;

    start = Clock::now();
    for (std::size_t j = 0; j < lists.n_recv(); ++j)
      target[lists.recv_targets[j]] += in_flight.recv_buffer[j];
    times.write += internal::seconds_since(start);
  }



  void
  ExchangePlan::progress_exchanges() const
  {
    internal::test_all(matrix_in_flight.requests);
    internal::test_all(vector_in_flight.requests);
  }



  template <typename Number>
  void
  ExchangePlan::exchange_matrix(const Number *local_values,
                                double       *target) const
  {
    start_matrix_exchange(local_values);
    finish_matrix_exchange(local_values, target);
  }



  template <typename Number>
  void
  ExchangePlan::exchange_vector(const Number *local_values,
                                double       *target) const
  {
    start_vector_exchange(local_values);
    finish_vector_exchange(local_values, target);
  }



  template <typename Number>
  void
  ExchangePlan::start_matrix_exchange(const Number *send_values) const
  {
    start(matrix, 1, send_values, matrix_in_flight);
  }



  template <typename Number>
  void
  ExchangePlan::finish_matrix_exchange(const Number *local_values,
                                       double       *target) const
  {
    finish(matrix, local_values, target, matrix_in_flight);
  }



  template <typename Number>
  void
  ExchangePlan::start_vector_exchange(const Number *send_values) const
  {
    start(vector, 2, send_values, vector_in_flight);
  }



  template <typename Number>
  void
  ExchangePlan::finish_vector_exchange(const Number *local_values,
                                       double       *target) const
  {
    finish(vector, local_values, target, vector_in_flight);
  }



#define GPU_ASSEMBLY_INSTANTIATE_EXCHANGE(Number)                              \
  template void ExchangePlan::exchange_matrix(const Number *, double *) const; \
  template void ExchangePlan::exchange_vector(const Number *, double *) const; \
  template void ExchangePlan::start_matrix_exchange(const Number *) const;     \
  template void ExchangePlan::finish_matrix_exchange(const Number *, double *) \
    const;                                                                     \
  template void ExchangePlan::start_vector_exchange(const Number *) const;     \
  template void ExchangePlan::finish_vector_exchange(const Number *, double *) \
    const;

  GPU_ASSEMBLY_INSTANTIATE_EXCHANGE(float)
  GPU_ASSEMBLY_INSTANTIATE_EXCHANGE(double)
} // namespace GPUAssembly
