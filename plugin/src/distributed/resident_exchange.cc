// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/parallel.h>

#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/distributed/resident_exchange.h>
#include <gpu_assembly/distributed/resident_operations.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <numeric>
#include <type_traits>

#include "../base/first_touch.h"
#include "messages.h"
#include "nccl_communicator.h"

namespace GPUAssembly
{
  namespace internal
  {
    namespace
    {
      // Entries per task of the parallel loops over the lists.
      constexpr std::size_t grain = 16384;

      // The values as 32-bit indices, converted in parallel into @p result
      // (the matrix lists hold an entry per local nonzero).
      void
      convert_to_int(const std::vector<std::size_t> &values, int *result)
      {
        std::atomic<bool> too_large(false);
        dealii::parallel::apply_to_subranges(
          std::size_t(0),
          values.size(),
          [&](const std::size_t begin, const std::size_t end) {
            bool large = false;
            for (std::size_t i = begin; i < end; ++i)
              {
                large |= values[i] >= static_cast<std::size_t>(INT_MAX);
                result[i] = static_cast<int>(values[i]);
              }
            if (large)
              too_large.store(true, std::memory_order_relaxed);
          },
          grain);
        AssertThrow(!too_large.load(),
                    dealii::ExcMessage(
                      "a resident exchange index exceeds 32 bits; use "
                      "more ranks."));
      }



      std::vector<int>
      to_int(const std::vector<std::size_t> &values)
      {
        std::vector<int> result;
        assign_first_touched_in_parallel(result, values.size());
        convert_to_int(values, result.data());
        return result;
      }



      // @p array holds @p values as 32-bit indices: in host memory written
      // in place (no second copy of a list of a nonzero per entry), on the
      // device uploaded from a host copy.
      void
      reinit_from(ResidentArray<int>             &array,
                  const bool                      on_device,
                  const std::vector<std::size_t> &values)
      {
        if (on_device)
          array.reinit(true, to_int(values));
        else
          {
            array.reinit(false, values.size());
            convert_to_int(values, array.data());
          }
      }



      // Whether the targets are distinct and below n_targets. They increase
      // where they are the positions of the owned rows' entries in CSR
      // arrays of the owned rows (the resident matrix and vector): checked
      // in parallel; otherwise every target is marked once.
      bool
      distinct_targets(const std::vector<std::size_t> &targets,
                       const std::size_t               n_targets)
      {
        std::atomic<bool> increasing(true);
        dealii::parallel::apply_to_subranges(
          std::size_t(0),
          targets.size(),
          [&](const std::size_t begin, const std::size_t end) {
            for (std::size_t i = std::max<std::size_t>(begin, 1); i < end; ++i)
              if (targets[i - 1] >= targets[i])
                {
                  increasing.store(false, std::memory_order_relaxed);
                  return;
                }
          },
          grain);
        if (increasing.load())
          return targets.empty() || targets.back() < n_targets;
        std::vector<char> marked(n_targets, 0);
        for (const std::size_t target : targets)
          {
            if (target >= n_targets || marked[target] != 0)
              return false;
            marked[target] = 1;
          }
        return true;
      }
    } // namespace



    template <typename Number>
    void
    ResidentExchange<Number>::reinit(const ExchangeLists &lists,
                                     const HaloPath       halo_path,
                                     const MPI_Comm       comm,
                                     const int            message_tag)
    {
      path      = halo_path;
      on_device = path != HaloPath::host_memory;
      tag       = message_tag;
      communicator =
        std::make_unique<dealii::Utilities::MPI::DuplicatedCommunicator>(comm);
      n_targets    = lists.n_targets;
      send_ranks   = lists.send_ranks;
      send_offsets = lists.send_offsets;
      recv_ranks   = lists.recv_ranks;
      recv_offsets = lists.recv_offsets;
      nccl = path == HaloPath::nccl ? NcclCommunicator::get(comm) : nullptr;

      // The owned entries go to distinct places (one local nonzero per
      // entry of the pattern), so that they are scattered without atomics.
      AssertThrow(distinct_targets(lists.owned_targets, n_targets),
                  dealii::ExcInternalError());
      reinit_from(owned_sources, on_device, lists.owned_sources);
      reinit_from(owned_targets, on_device, lists.owned_targets);
      reinit_from(send_sources, on_device, lists.send_sources);

      // Received entries grouped by target, each group in the order of the
      // lists (stable sort), which is the order ExchangePlan adds them in.
      std::vector<std::size_t> order(lists.n_recv());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(),
                       order.end(),
                       [&lists](const std::size_t a, const std::size_t b) {
                         return lists.recv_targets[a] < lists.recv_targets[b];
                       });
      std::vector<std::size_t> targets, offsets(1, 0);
      for (std::size_t k = 0; k < order.size(); ++k)
        {
          if (k == 0 ||
              lists.recv_targets[order[k]] != lists.recv_targets[order[k - 1]])
            {
              if (k > 0)
                offsets.push_back(k);
              targets.push_back(lists.recv_targets[order[k]]);
            }
        }
      if (!order.empty())
        offsets.push_back(order.size());
      group_targets.reinit(on_device, to_int(targets));
      group_offsets.reinit(on_device, to_int(offsets));
      group_entries.reinit(on_device, to_int(order));

      send_buffer.reinit(on_device, lists.n_send());
      recv_buffer.reinit(on_device, lists.n_recv());
      pinned_send.reinit(
        path == HaloPath::staged_through_host ? lists.n_send() : 0);
      pinned_recv.reinit(
        path == HaloPath::staged_through_host ? lists.n_recv() : 0);
      // NCCL's connections for these messages, made here rather than by
      // the first assembly.
      if (nccl)
        nccl->connect(send_buffer.data(),
                      send_ranks,
                      send_offsets,
                      recv_buffer.data(),
                      recv_ranks,
                      recv_offsets);
    }



    template <typename Number>
    void
    ResidentExchange<Number>::start(const Number        *send_values,
                                    ExchangePlan::Times &times,
                                    double              &transfer) const
    {
      AssertThrow(communicator,
                  dealii::ExcMessage("a resident exchange runs before its "
                                     "reinit()."));
      AssertThrow(requests.empty(),
                  dealii::ExcMessage("a resident exchange starts before the "
                                     "previous one finished."));
      using Clock              = std::chrono::steady_clock;
      const bool        staged = path == HaloPath::staged_through_host;
      const MPI_Comm    comm   = **communicator;
      const std::size_t n_send = send_sources.size();

      auto start = Clock::now();
      requests.reserve(recv_ranks.size() + send_ranks.size());
      Number *receive = staged ? pinned_recv.data() : recv_buffer.data();
      if (!nccl)
        post_messages(MPI_Irecv,
                      receive,
                      recv_ranks,
                      recv_offsets,
                      tag,
                      comm,
                      requests);
      for_each_index(on_device,
                     n_send,
                     ResidentOperations::Gather<Number>{send_values,
                                                        send_sources.data(),
                                                        send_buffer.data()});
      if (on_device)
        DeviceMemory::synchronize();
      times.communication += seconds_since(start);
      const Number *send = send_buffer.data();
      if (staged)
        {
          start = Clock::now();
          DeviceMemory::copy_to_host(pinned_send.data(),
                                     send_buffer.data(),
                                     n_send * sizeof(Number));
          send = pinned_send.data();
          transfer += seconds_since(start);
        }
      start = Clock::now();
      if (nccl)
        nccl->start_exchange(send,
                             send_ranks,
                             send_offsets,
                             receive,
                             recv_ranks,
                             recv_offsets);
      else
        post_messages(MPI_Isend,
                      send,
                      send_ranks,
                      send_offsets,
                      tag,
                      comm,
                      requests);
      times.communication += seconds_since(start);
    }



    template <typename Number>
    void
    ResidentExchange<Number>::progress() const
    {
      test_all(requests);
    }



    template <typename Number>
    void
    ResidentExchange<Number>::finish(const Number        *local_values,
                                     Number              *target,
                                     ExchangePlan::Times &times,
                                     double              &transfer) const
    {
      using Clock     = std::chrono::steady_clock;
      const auto sync = [this]() {
        if (on_device)
          DeviceMemory::synchronize();
      };
      const bool        staged = path == HaloPath::staged_through_host;
      const std::size_t n_recv = group_entries.size();

      // The rank's own rows while the messages travel.
      auto start = Clock::now();
      if (on_device)
        DeviceMemory::set_zero(target, n_targets * sizeof(Number));
      else
        std::fill(target, target + n_targets, Number());
      for_each_index(
        on_device,
        owned_sources.size(),
        ResidentOperations::ScatterAdd<Number>{local_values,
                                               owned_sources.data(),
                                               owned_targets.data(),
                                               target});
      sync();
      times.write += seconds_since(start);

      start = Clock::now();
      if (nccl)
        nccl->wait();
      else
        wait_for_all(requests);
      requests.clear();
      const double wait = seconds_since(start);
      times.communication += wait;
      times.exposed += wait;

      if (staged)
        {
          start = Clock::now();
          DeviceMemory::copy_to_device(recv_buffer.data(),
                                       pinned_recv.data(),
                                       n_recv * sizeof(Number));
          transfer += seconds_since(start);
        }
      start = Clock::now();
      for_each_index(
        on_device,
        group_targets.size(),
        ResidentOperations::AddGrouped<Number>{recv_buffer.data(),
                                               group_targets.data(),
                                               group_offsets.data(),
                                               group_entries.data(),
                                               target});
      sync();
      times.write += seconds_since(start);
    }



    template class ResidentExchange<float>;
    template class ResidentExchange<double>;
  } // namespace internal
} // namespace GPUAssembly
