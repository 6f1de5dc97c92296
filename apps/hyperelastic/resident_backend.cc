// SPDX-License-Identifier: LGPL-2.1-or-later
// The resident backend for several ranks (integrator_backend.h): state, matrix
// and vectors in the plugin's resident distributed classes, on the rank's
// GPU or, in their host storage mode, in host memory.

#include <deal.II/base/mpi.h>
#include <deal.II/base/partitioner.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/distributed/distributed_assembler.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/distributed_jacobi_bicgstab.h>
#include <gpu_assembly/distributed/distributed_jacobi_cg.h>
#include <gpu_assembly/distributed/distributed_preconditioned_cg.h>
#include <gpu_assembly/distributed/resident_array.h>
#include <gpu_assembly/distributed/resident_operations.h>
#include <gpu_assembly/engine/device_assembler.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include "integrator_backend.h"
#include "resident_pressure_device.h"
#include "step_updates.h"
#include "surface_loads.h"

namespace Hyperelastic
{
  namespace
  {
    using namespace dealii;
    constexpr int dim = 3;

    using ResidentVector = GPUAssembly::DistributedDeviceVector<double>;

    // The path 'Execution/Exchange path' asks for on this run's storage,
    // chosen once for the matrix and all vectors (collective); a request
    // that cannot be met is refused naming the entry.
    GPUAssembly::HaloPath
    chosen_exchange_path(const BackendData &data, const MPI_Comm communicator)
    {
      try
        {
          return GPUAssembly::choose_halo_path(
            data.use_device,
            GPUAssembly::halo_path_from_string(data.exchange_path),
            communicator);
        }
      catch (const std::exception &error)
        {
          AssertThrow(false,
                      ExcMessage(
                        "'Execution/Exchange path' = " + data.exchange_path +
                        " cannot be used on this run:\n" + error.what()));
        }
      return GPUAssembly::HaloPath::automatic;
    }
    template <typename T>
    using ResidentArray = GPUAssembly::ResidentArray<T>;

    /**
     * The follower pressure on the resident backend: the forces and the
     * load stiffness of the rank's pressure faces (SurfaceLoadData of
     * make_distributed_surface_load_data()), computed from the
     * configuration at the faces' DoFs where it lives: on the device with
     * the device backend's face kernel (DevicePressureEntries), in host
     * memory with the host's face arithmetic: the same arithmetic.
     * Entries of rows the rank owns are summed there in the order of the
     * faces; those of rows other ranks own go to their owners (announced
     * once with Utilities::MPI::some_to_some(), then their values in the
     * same order at every Newton iteration, one host message per owner;
     * the device path downloads just these), which add them after their
     * own in the order of the sending ranks. So every sum takes a fixed
     * order: bitwise repeatable, and independent of the exchange path of
     * the resident vectors, which these host messages do not use. The
     * matrix stores every entry of its rows (no symmetric half), so the
     * non-symmetric load stiffness has its places.
     */
    class ResidentPressure
    {
    public:
      /// @p local_position: the position of a DoF in the local-DoF layout
      /// of the configuration that add() reads. Collective.
      template <typename LocalPosition>
      ResidentPressure(
        const SurfaceLoadData                              &loads,
        const GPUAssembly::DoFHandlerAdapter<3>            &adapter,
        const GPUAssembly::DistributedDeviceMatrix<double> &matrix,
        const LocalPosition                                &local_position,
        const bool                                          on_device);

      /**
       * Adds @p force_scale times the pressure forces at the configuration
       * @p configuration (local-DoF layout, ghosts updated) to @p residual
       * and subtracts @p stiffness_scale times their load stiffness from
       * @p matrix_values. Collective. Returns the seconds spent on the
       * messages to and from other ranks.
       */
      double
      add(const ResidentVector &configuration,
          const double          pressure,
          const double          force_scale,
          const double          stiffness_scale,
          double               *residual,
          double               *matrix_values);

      /// Where the faces' entries are computed, for the description.
      bool
      faces_on_device() const
      {
        return device_entries != nullptr;
      }

    private:
      /// The entries of the host path at the configuration values in
      /// face_values: this rank's into force_sums and stiffness_sums, the
      /// others' into send_values.
      void
      compute_on_host(const double pressure,
                      const double force_scale,
                      const double stiffness_scale);

      /// Where an entry of the faces goes: a sum of this rank's, or the
      /// message to another rank.
      struct Destination
      {
        /// -1: this rank's sum @p sum; else the index in send_ranks.
        int          message;
        unsigned int sum;
      };

      /// A sum of this rank's: a force (an owned row of the residual) or a
      /// load stiffness entry (a position of the matrix values).
      struct Sum
      {
        bool         force;
        unsigned int index;
      };

      /// The sum of this rank's for the global entry (@p row, @p column)
      /// (@p force: of the residual, @p column unused), made at its first
      /// call.
      Sum
      sum_of(const bool                            force,
             const dealii::types::global_dof_index row,
             const dealii::types::global_dof_index column);

      /// The messages' own communicator, so that they never match others.
      const Utilities::MPI::DuplicatedCommunicator        communicator;
      const bool                                          on_device;
      const dealii::IndexSet                             &owned;
      const GPUAssembly::DistributedDeviceMatrix<double> &matrix;
      /// The faces, their cell_dofs renumbered to face_dofs' order.
      SurfaceLoadData faces;
      /// Positions in the configuration of the values the faces read, and
      /// those values.
      ResidentArray<int>    face_dofs;
      ResidentArray<double> face_values;
      std::vector<double>   host_face_values;
      /// The destination of every force entry and every stiffness entry.
      std::vector<Destination> force_destinations, stiffness_destinations;
      /// Ranks sent to, increasing, and the values of the message to each.
      std::vector<unsigned int>                   send_ranks;
      std::map<unsigned int, std::vector<double>> send_values;
      /// Per sending rank, the sums its values go to, in their order.
      std::map<unsigned int, std::vector<Sum>> received_sums;
      /// This rank's sums by entry: (row, invalid) for a force.
      std::map<std::pair<dealii::types::global_dof_index,
                         dealii::types::global_dof_index>,
               Sum>
        sum_numbers;
      /// The sums of a Newton iteration, and where they are added: owned
      /// positions in the residual, positions in the matrix values.
      std::vector<double>   force_sums, stiffness_sums;
      std::vector<int>      force_rows, stiffness_positions;
      ResidentArray<double> resident_force_sums, resident_stiffness_sums;
      ResidentArray<int>    force_sources, force_targets, stiffness_sources,
        stiffness_targets;
      /// The device path's entries and sums (null on the host path), the
      /// sizes of its messages by send_ranks, and its host buffers of the
      /// values sent and received.
      std::unique_ptr<DevicePressureEntries> device_entries;
      std::vector<std::size_t>               message_sizes;
      std::vector<double>                    sent_values, received_values;
    };



    template <typename LocalPosition>
    ResidentPressure::ResidentPressure(
      const SurfaceLoadData                              &loads,
      const GPUAssembly::DoFHandlerAdapter<3>            &adapter,
      const GPUAssembly::DistributedDeviceMatrix<double> &matrix,
      const LocalPosition                                &local_position,
      const bool                                          on_device)
      : communicator(adapter.get_communicator())
      , on_device(on_device)
      , owned(adapter.locally_owned_dofs())
      , matrix(matrix)
      , faces(loads)
    {
      // The faces read the configuration at their DoFs only: gather those
      // (numbered in the order the faces first name them).
      const IndexSet &relevant = adapter.locally_relevant_dofs();
      std::map<unsigned int, unsigned int> compact;
      std::vector<int>                     positions;
      for (unsigned int &dof : faces.cell_dofs)
        {
          const auto [entry, inserted] =
            compact.emplace(dof, static_cast<unsigned int>(positions.size()));
          if (inserted)
            positions.push_back(local_position(relevant.nth_index_in_set(dof)));
          dof = entry->second;
        }
      face_dofs.reinit(on_device, positions);
      face_values.reinit(on_device, positions.size());

      // The owners of the rows this rank's faces reach but does not own.
      IndexSet remote_rows(owned.size());
      for (const unsigned int row : faces.force_rows)
        if (!owned.is_element(row))
          remote_rows.add_index(row);
      if (faces.load_stiffness)
        for (const unsigned int row : faces.stiffness_rows)
          if (!owned.is_element(row))
            remote_rows.add_index(row);
      remote_rows.compress();
      const std::vector<unsigned int> owners =
        Utilities::MPI::compute_index_owner(owned, remote_rows, *communicator);
      for (const unsigned int owner : owners)
        send_values[owner];
      for (const auto &message : send_values)
        send_ranks.push_back(message.first);

      // Every entry's destination; the entries sent are announced to the
      // owners once, who find their sums.
      std::map<unsigned int, std::vector<types::global_dof_index>> requests;
      const auto destination = [&](const bool                    force,
                                   const types::global_dof_index row,
                                   const types::global_dof_index column) {
        if (owned.is_element(row))
          return Destination{-1, sum_of(force, row, column).index};
        const unsigned int owner   = owners[remote_rows.index_within_set(row)];
        auto              &request = requests[owner];
        request.push_back(row);
        request.push_back(force ? numbers::invalid_dof_index : column);
        return Destination{static_cast<int>(std::lower_bound(send_ranks.begin(),
                                                             send_ranks.end(),
                                                             owner) -
                                            send_ranks.begin()),
                           0};
      };
      // In the order in which add() visits the entries, which is that of
      // the messages.
      force_destinations.resize(faces.force_rows.size());
      if (faces.load_stiffness)
        stiffness_destinations.resize(faces.stiffness_rows.size());
      // On the device path the entries lie in one array, the force
      // entries first; each of this rank's sums and each message lists the
      // places it reads there, in the order of this visit.
      const int n_force_entries = static_cast<int>(faces.force_rows.size());
      const int n_entries       = static_cast<int>(
        n_force_entries +
        (faces.load_stiffness ? faces.stiffness_rows.size() : 0));
      std::vector<std::vector<int>> force_places, stiffness_places,
        message_places(send_ranks.size());
      const auto place = [&](const Destination             &destination,
                             const int                      entry,
                             std::vector<std::vector<int>> &own_places) {
        if (!on_device)
          return;
        if (destination.message >= 0)
          message_places[destination.message].push_back(entry);
        else
          {
            if (own_places.size() <= destination.sum)
              own_places.resize(destination.sum + 1);
            own_places[destination.sum].push_back(entry);
          }
      };
      const std::vector<double> zero(positions.size());
      for_each_pressure_entry(
        faces,
        zero.data(),
        0.,
        [&](const unsigned int k, const double) {
          force_destinations[k] =
            destination(true, faces.force_rows[k], numbers::invalid_dof_index);
          place(force_destinations[k], k, force_places);
        },
        [&](const unsigned int k, const double) {
          stiffness_destinations[k] = destination(false,
                                                  faces.stiffness_rows[k],
                                                  faces.stiffness_columns[k]);
          place(stiffness_destinations[k],
                n_force_entries + k,
                stiffness_places);
        });
      for (const auto &[rank, entries] :
           Utilities::MPI::some_to_some(*communicator, requests))
        {
          std::vector<Sum> &sums = received_sums[rank];
          for (std::size_t j = 0; j < entries.size(); j += 2)
            {
              AssertThrow(owned.is_element(entries[j]),
                          ExcInternalError(
                            "A rank sent pressure entries of row " +
                            std::to_string(entries[j]) +
                            ", which this rank does not own."));
              const bool force = entries[j + 1] == numbers::invalid_dof_index;
              sums.push_back(sum_of(force, entries[j], entries[j + 1]));
            }
        }

      if (on_device)
        {
          // The received values follow the entries, in the order of the
          // sending ranks, and are summed after this rank's own entries.
          int received_place = n_entries;
          force_places.resize(force_rows.size());
          stiffness_places.resize(stiffness_positions.size());
          for (const auto &[rank, sums] : received_sums)
            for (const Sum &sum : sums)
              (sum.force ? force_places : stiffness_places)[sum.index]
                .push_back(received_place++);
          const auto ordered = [](const std::vector<std::vector<int>> &places,
                                  const std::vector<int> &targets) {
            OrderedSums sums;
            sums.targets = targets;
            for (const std::vector<int> &sources : places)
              {
                sums.sources.insert(sums.sources.end(),
                                    sources.begin(),
                                    sources.end());
                sums.offsets.push_back(static_cast<int>(sums.sources.size()));
              }
            return sums;
          };
          std::vector<int> sent;
          for (const std::vector<int> &message : message_places)
            {
              message_sizes.push_back(message.size());
              sent.insert(sent.end(), message.begin(), message.end());
            }
          device_entries = std::make_unique<DevicePressureEntries>(
            faces,
            sent,
            ordered(force_places, force_rows),
            ordered(stiffness_places, stiffness_positions),
            received_place - n_entries);
          return;
        }

      force_sums.resize(force_rows.size());
      stiffness_sums.resize(stiffness_positions.size());
      const auto identity = [](const std::size_t n) {
        std::vector<int> indices(n);
        for (std::size_t i = 0; i < n; ++i)
          indices[i] = static_cast<int>(i);
        return indices;
      };
      force_sources.reinit(on_device, identity(force_rows.size()));
      force_targets.reinit(on_device, force_rows);
      stiffness_sources.reinit(on_device, identity(stiffness_positions.size()));
      stiffness_targets.reinit(on_device, stiffness_positions);
    }



    ResidentPressure::Sum
    ResidentPressure::sum_of(const bool                    force,
                             const types::global_dof_index row,
                             const types::global_dof_index column)
    {
      const auto key =
        std::make_pair(row, force ? numbers::invalid_dof_index : column);
      const auto found = sum_numbers.find(key);
      if (found != sum_numbers.end())
        return found->second;
      Sum sum{force, 0};
      if (force)
        {
          sum.index = force_rows.size();
          force_rows.push_back(static_cast<int>(owned.index_within_set(row)));
        }
      else
        {
          // position() throws naming the entry where the matrix's pattern
          // lacks it.
          sum.index = stiffness_positions.size();
          stiffness_positions.push_back(
            static_cast<int>(matrix.position(row, column)));
        }
      sum_numbers.emplace(key, sum);
      return sum;
    }



    void
    ResidentPressure::compute_on_host(const double pressure,
                                      const double force_scale,
                                      const double stiffness_scale)
    {
      face_values.copy_to_host(host_face_values);
      std::fill(force_sums.begin(), force_sums.end(), 0.);
      std::fill(stiffness_sums.begin(), stiffness_sums.end(), 0.);
      const auto put = [&](const Destination   &destination,
                           const double         value,
                           std::vector<double> &sums) {
        if (destination.message < 0)
          sums[destination.sum] += value;
        else
          send_values[send_ranks[destination.message]].push_back(value);
      };
      for_each_pressure_entry(
        faces,
        host_face_values.data(),
        pressure,
        [&](const unsigned int k, const double force) {
          put(force_destinations[k],
              force_scale * faces.force_weights[k] * force,
              force_sums);
        },
        [&](const unsigned int k, const double stiffness) {
          put(stiffness_destinations[k],
              -stiffness_scale * faces.stiffness_weights[k] * stiffness,
              stiffness_sums);
        });
    }



    double
    ResidentPressure::add(const ResidentVector &configuration,
                          const double          pressure,
                          const double          force_scale,
                          const double          stiffness_scale,
                          double               *residual,
                          double               *matrix_values)
    {
      GPUAssembly::for_each_index(
        on_device,
        face_dofs.size(),
        GPUAssembly::ResidentOperations::Gather<double>{configuration.data(),
                                                        face_dofs.data(),
                                                        face_values.data()});
      for (auto &message : send_values)
        message.second.clear();
      if (device_entries)
        {
          // Only the entries of other ranks' rows leave the device.
          device_entries->compute(face_values.data(),
                                  pressure,
                                  force_scale,
                                  stiffness_scale,
                                  sent_values);
          auto value = sent_values.cbegin();
          for (std::size_t m = 0; m < send_ranks.size(); ++m)
            {
              send_values[send_ranks[m]].assign(value,
                                                value + message_sizes[m]);
              value += message_sizes[m];
            }
        }
      else
        compute_on_host(pressure, force_scale, stiffness_scale);
      // The sizes of the messages are those of the set-up: plain
      // point-to-point messages, received into one buffer per rank.
      const auto                       start = std::chrono::steady_clock::now();
      std::vector<MPI_Request>         requests;
      std::vector<std::vector<double>> received;
      received.reserve(received_sums.size());
      for (const auto &[rank, sums] : received_sums)
        {
          received.emplace_back(sums.size());
          requests.emplace_back();
          const int ierr = MPI_Irecv(received.back().data(),
                                     static_cast<int>(sums.size()),
                                     MPI_DOUBLE,
                                     rank,
                                     0,
                                     *communicator,
                                     &requests.back());
          AssertThrowMPI(ierr);
        }
      for (const auto &[rank, values] : send_values)
        {
          requests.emplace_back();
          const int ierr = MPI_Isend(values.data(),
                                     static_cast<int>(values.size()),
                                     MPI_DOUBLE,
                                     rank,
                                     0,
                                     *communicator,
                                     &requests.back());
          AssertThrowMPI(ierr);
        }
      const int ierr = MPI_Waitall(static_cast<int>(requests.size()),
                                   requests.data(),
                                   MPI_STATUSES_IGNORE);
      AssertThrowMPI(ierr);
      const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
      if (device_entries)
        {
          received_values.clear();
          for (const std::vector<double> &message : received)
            received_values.insert(received_values.end(),
                                   message.begin(),
                                   message.end());
          device_entries->add(received_values, residual, matrix_values);
          return seconds;
        }
      auto values = received.begin();
      for (const auto &[rank, sums] : received_sums)
        {
          for (std::size_t j = 0; j < sums.size(); ++j)
            (sums[j].force ? force_sums : stiffness_sums)[sums[j].index] +=
              (*values)[j];
          ++values;
        }

      resident_force_sums.reinit(on_device, force_sums);
      resident_stiffness_sums.reinit(on_device, stiffness_sums);
      GPUAssembly::for_each_index(
        on_device,
        force_sums.size(),
        GPUAssembly::ResidentOperations::ScatterAdd<double>{
          resident_force_sums.data(),
          force_sources.data(),
          force_targets.data(),
          residual});
      GPUAssembly::for_each_index(
        on_device,
        stiffness_sums.size(),
        GPUAssembly::ResidentOperations::ScatterAdd<double>{
          resident_stiffness_sums.data(),
          stiffness_sources.data(),
          stiffness_targets.data(),
          matrix_values});
      return seconds;
    }



    /**
     * Two layouts: the matrix's partitioner (owned DoFs, then the columns
     * of owned rows that other ranks own) for the state, the right-hand
     * side and CG's vectors; and the adapter's local DoFs as ghosts for
     * the vectors whose ghost entries are read: the midpoint configuration,
     * whose values at the nodes of the rank's cells feed the assembly (a
     * cell's DoFs need not be columns of any owned row), and the Newton
     * update, whose owned constrained entries are set from their lines,
     * which refer to local DoFs. The owned entries come first in both
     * layouts, in the same order, so element-wise loops over them mix the
     * two.
     */
    class ResidentBackend : public IntegratorBackend
    {
    public:
      explicit ResidentBackend(const BackendData &data);

      void
      set_state(const std::vector<double> &u,
                const std::vector<double> &p) override;

      void
      get_state(std::vector<double> &u, std::vector<double> &p) const override;

      void
      get_iterate(std::vector<double> &u) const override;

      void
      predict(const StepLoads &loads) override;

      double
      assemble_residual(const StepLoads &loads) override;

      LinearSolveResult
      solve_and_update(const double       relative_tolerance,
                       const unsigned int max_iterations) override;

      void
      finish_step(const StepLoads &loads) override;

      LinearSolver
      linear_solver() const override
      {
        return data.linear_solver.solver;
      }

      std::string
      description() const override;

      ExchangeTimes
      exchange_times() const override
      {
        return exchange;
      }

    private:
      /// update_ghost_values() of @p vector, timed into the exchange's
      /// ghost updates.
      void
      update_ghosts(const ResidentVector &vector);

      /// The owned entries of @p vector, through a host vector of the
      /// owned layout.
      void
      copy_to_host(const ResidentVector &vector,
                   std::vector<double>  &values) const;
      void
      copy_from_host(const std::vector<double> &values,
                     ResidentVector            &vector) const;

      const BackendData                             &data;
      const GPUAssembly::DoFHandlerAdapter<3>       &adapter;
      const MPI_Comm                                 communicator;
      const bool                                     on_device;
      const unsigned int                             n_owned;
      GPUAssembly::DistributedDeviceMatrix<double>   matrix;
      GPUAssembly::DistributedAssembler<dim, double> assembler;
      GPUAssembly::DistributedJacobiCG<double>       cg;
      /// bicgstab_jacobi: for the non-symmetric tangent of a pressure.
      GPUAssembly::DistributedJacobiBiCGStab<double> bicgstab;
      /// cg_chebyshev, cg_block_jacobi: the plugin's preconditioned CG on
      /// the resident matrix.
      GPUAssembly::DistributedPreconditionedCG<double> preconditioned_cg;
      // Matrix layout.
      ResidentVector u, u_old, p_old, mass, load, assembled, residual, delta;
      /// The dead traction's nodal forces at unit amplitude (empty without
      /// a traction).
      ResidentVector traction;
      /// The follower pressure (null where no rank has pressure faces).
      std::unique_ptr<ResidentPressure> pressure;
      // Local-DoF layout.
      ResidentVector mid, delta_local;
      /// Position in mid of the DoF of every entry of the nodal data.
      ResidentArray<int> nodal_positions;
      /// The nodal data: device memory on the device path, else a host
      /// vector (what each of the assembler's overloads takes).
      GPUAssembly::DeviceVector<double> device_nodal_data;
      std::vector<double>               host_nodal_data;
      /// Owned DoFs with a constraint line, by owned position: their
      /// residual is zero, as the serial backends make it.
      ResidentArray<int> constrained;
      /// Their lines in the local-DoF layout (StepUpdates::Distribute).
      ResidentArray<int>    line_dofs, line_offsets, line_entries;
      ResidentArray<double> line_weights, line_inhomogeneities;
      std::size_t           n_lines = 0;
      /// Position of each owned row's diagonal entry in the values.
      ResidentArray<int> diagonal_positions;
      double             residual_norm = 0;
      ExchangeTimes      exchange;
    };



    ResidentBackend::ResidentBackend(const BackendData &data)
      : data(data)
      , adapter(*data.adapter)
      , communicator(adapter.get_communicator())
      , on_device(data.use_device)
      , n_owned(adapter.locally_owned_dofs().n_elements())
    {
      const IndexSet                  &owned = adapter.locally_owned_dofs();
      const AffineConstraints<double> &constraints = *data.constraints;
      ResidentVector::AdditionalData   storage;
      storage.use_device = on_device;
      storage.halo_path  = chosen_exchange_path(data, communicator);
      matrix.reinit(adapter, storage);
      AssertThrow(matrix.m() == n_owned, ExcInternalError());
      for (ResidentVector *v :
           {&u, &u_old, &p_old, &mass, &load, &assembled, &residual, &delta})
        v->reinit(matrix.get_partitioner(), storage);
      copy_from_host(data.lumped_mass, mass);
      copy_from_host(data.load_pattern, load);
      if (data.surface_loads.has_traction())
        {
          traction.reinit(matrix.get_partitioner(), storage);
          copy_from_host(data.surface_loads.traction_pattern, traction);
        }

      IndexSet local_ghosts = adapter.local_dofs();
      local_ghosts.subtract_set(owned);
      const auto local_layout =
        std::make_shared<const Utilities::MPI::Partitioner>(owned,
                                                            local_ghosts,
                                                            communicator);
      mid.reinit(local_layout, storage);
      delta_local.reinit(local_layout, storage);
      const auto local_position = [&](const types::global_dof_index dof) {
        AssertThrow(local_layout->in_local_range(dof) ||
                      local_layout->is_ghost_entry(dof),
                    ExcInternalError("DoF " + std::to_string(dof) +
                                     " is not among the adapter's local "
                                     "DoFs."));
        return static_cast<int>(local_layout->global_to_local(dof));
      };

      typename GPUAssembly::DistributedAssembler<dim, double>::AdditionalData
        assembler_data;
      assembler_data.use_device     = on_device;
      assembler_data.n_nodal_fields = dim;
      set_device_method(data, assembler_data.device);
      assembler.reinit(adapter, matrix, assembled, assembler_data);
      if (data.linear_solver.solver == LinearSolver::cg_chebyshev ||
          data.linear_solver.solver == LinearSolver::cg_block_jacobi)
        preconditioned_cg.reinit(adapter,
                                 matrix,
                                 cg_solver_parameters(data.linear_solver));

      // The adapter numbers its local DoFs in increasing global order; the
      // local layout puts the owned ones first: map once.
      const GPUAssembly::MeshArrays &arrays = adapter.get_arrays();
      const auto      &local_to_global      = adapter.get_local_to_global();
      std::vector<int> positions(arrays.node_dofs.size());
      for (std::size_t i = 0; i < positions.size(); ++i)
        positions[i] = local_position(local_to_global[arrays.node_dofs[i]]);
      nodal_positions.reinit(on_device, positions);
      if (on_device)
        device_nodal_data.reinit(positions.size());
      else
        host_nodal_data.resize(positions.size());

      std::vector<int>    rows, dofs, offsets{0}, entries, diagonal;
      std::vector<double> weights, inhomogeneities;
      diagonal.reserve(n_owned);
      for (unsigned int k = 0; k < n_owned; ++k)
        {
          const types::global_dof_index row = owned.nth_index_in_set(k);
          diagonal.push_back(static_cast<int>(matrix.position(row, row)));
          if (!constraints.is_constrained(row))
            continue;
          rows.push_back(k);
          dofs.push_back(k);
          if (const auto *line = constraints.get_constraint_entries(row))
            for (const auto &[column, weight] : *line)
              {
                entries.push_back(local_position(column));
                weights.push_back(weight);
              }
          offsets.push_back(entries.size());
          inhomogeneities.push_back(constraints.get_inhomogeneity(row));
        }
      constrained.reinit(on_device, rows);
      diagonal_positions.reinit(on_device, diagonal);
      n_lines = dofs.size();
      line_dofs.reinit(on_device, dofs);
      line_offsets.reinit(on_device, offsets);
      line_entries.reinit(on_device, entries);
      line_weights.reinit(on_device, weights);
      line_inhomogeneities.reinit(on_device, inhomogeneities);

      if (Utilities::MPI::max(data.surface_loads.has_pressure() ? 1 : 0,
                              communicator) == 1)
        pressure = std::make_unique<ResidentPressure>(data.surface_loads,
                                                      adapter,
                                                      matrix,
                                                      local_position,
                                                      on_device);
    }



    void
    ResidentBackend::update_ghosts(const ResidentVector &vector)
    {
      const auto start = std::chrono::steady_clock::now();
      vector.update_ghost_values();
      exchange.ghost_updates +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
    }



    void
    ResidentBackend::copy_to_host(const ResidentVector &vector,
                                  std::vector<double>  &values) const
    {
      TrilinosWrappers::MPI::Vector host(adapter.locally_owned_dofs(),
                                         communicator);
      vector.copy_locally_owned_to(host);
      values.assign(host.begin(), host.end());
    }



    void
    ResidentBackend::copy_from_host(const std::vector<double> &values,
                                    ResidentVector            &vector) const
    {
      AssertDimension(values.size(), n_owned);
      TrilinosWrappers::MPI::Vector host(adapter.locally_owned_dofs(),
                                         communicator);
      std::copy(values.begin(), values.end(), host.begin());
      vector.copy_locally_owned_from(host);
    }



    void
    ResidentBackend::set_state(const std::vector<double> &u_new,
                               const std::vector<double> &p_new)
    {
      copy_from_host(u_new, u_old);
      copy_from_host(p_new, p_old);
      GPUAssembly::for_each_index(on_device,
                                  n_owned,
                                  StepUpdates::Copy{u_old.data(), u.data()});
    }



    void
    ResidentBackend::get_state(std::vector<double> &u_out,
                               std::vector<double> &p_out) const
    {
      copy_to_host(u_old, u_out);
      copy_to_host(p_old, p_out);
    }



    void
    ResidentBackend::get_iterate(std::vector<double> &u_out) const
    {
      copy_to_host(u, u_out);
    }



    void
    ResidentBackend::predict(const StepLoads &loads)
    {
      GPUAssembly::for_each_index(on_device,
                                  n_owned,
                                  StepUpdates::Predict{loads.dt,
                                                       u_old.data(),
                                                       p_old.data(),
                                                       mass.data(),
                                                       u.data()});
    }



    double
    ResidentBackend::assemble_residual(const StepLoads &loads)
    {
      const bool dynamic = loads.dt > 0;
      // The kernel sees the midpoint configuration (dynamic) or u, at the
      // nodes of the rank's cells: owned entries here, the rest from their
      // owners.
      GPUAssembly::for_each_index(
        on_device,
        n_owned,
        StepUpdates::Midpoint{dynamic, u.data(), u_old.data(), mid.data()});
      update_ghosts(mid);
      const auto kernel = make_step_kernel<double>(data, loads);
      if (on_device)
        {
          GPUAssembly::for_each_index(
            true,
            device_nodal_data.size(),
            GPUAssembly::ResidentOperations::Gather<double>{
              mid.data(),
              nodal_positions.data(),
              device_nodal_data.data()});
          assembler.assemble(kernel, matrix, assembled, device_nodal_data);
        }
      else
        {
          GPUAssembly::for_each_index(
            false,
            host_nodal_data.size(),
            GPUAssembly::ResidentOperations::Gather<double>{
              mid.data(),
              nodal_positions.data(),
              host_nodal_data.data()});
          assembler.assemble(kernel, matrix, assembled, host_nodal_data);
        }
      const auto &times = assembler.get_times();
      exchange.messages += times.communication;
      exchange.waited += times.exposed;
      exchange.writes += times.write;
      exchange.staging += times.transfer;

      GPUAssembly::for_each_index(on_device,
                                  n_owned,
                                  StepUpdates::Residual{loads.dt,
                                                        load_factor(loads),
                                                        load.data(),
                                                        assembled.data(),
                                                        mass.data(),
                                                        u.data(),
                                                        u_old.data(),
                                                        p_old.data(),
                                                        residual.data()});
      if (data.surface_loads.has_traction())
        GPUAssembly::for_each_index(
          on_device,
          n_owned,
          StepUpdates::AddScaled{(dynamic ? loads.dt / 2 : 1.) *
                                   loads.traction_amplitude,
                                 traction.data(),
                                 residual.data()});
      // The pressure at the configuration the kernel sees, its forces and
      // load stiffness scaled as the element's (dt/2, dt/4 in dynamic
      // steps), after the assembly has written the matrix.
      if (pressure)
        exchange.surface_loads += pressure->add(mid,
                                                loads.pressure,
                                                dynamic ? loads.dt / 2 : 1.,
                                                dynamic ? loads.dt / 4 : 1.,
                                                residual.data(),
                                                matrix.values_data());
      // Every rank must take the Newton loop's same branch: a non-finite
      // entry anywhere, constrained ones included, makes the norm NaN on
      // every rank (the norm is global).
      if (!std::isfinite(residual.l2_norm()))
        return residual_norm = std::numeric_limits<double>::quiet_NaN();
      GPUAssembly::for_each_index(on_device,
                                  constrained.size(),
                                  StepUpdates::ZeroEntries{constrained.data(),
                                                           residual.data()});

      // m/dt on the diagonal, where the assembler wrote it (no exchange).
      if (dynamic)
        GPUAssembly::for_each_index(
          on_device,
          n_owned,
          StepUpdates::AddMassToDiagonal{loads.dt,
                                         mass.data(),
                                         diagonal_positions.data(),
                                         matrix.values_data()});
      return residual_norm = residual.l2_norm();
    }



    LinearSolveResult
    ResidentBackend::solve_and_update(const double       relative_tolerance,
                                      const unsigned int max_iterations)
    {
      // As the serial Jacobi-CG, an iteration that ran out of steps still
      // updates u: Newton's next residual judges it. A CG that broke down
      // (a non-finite residual) is reported through final_residual.
      LinearSolveResult result;
      if (data.linear_solver.solver == LinearSolver::bicgstab_jacobi)
        {
          GPUAssembly::CGControl control;
          control.relative_tolerance = relative_tolerance;
          control.max_iterations     = max_iterations;
          result                     = to_linear_solve_result(
            bicgstab.solve(matrix, delta, residual, control));
        }
      else if (data.linear_solver.solver == LinearSolver::cg_jacobi)
        {
          const auto cg_result  = cg.solve(matrix,
                                          delta,
                                          residual,
                                          relative_tolerance,
                                          max_iterations);
          result.iterations     = cg_result.iterations;
          result.final_residual = cg_result.final_residual;
          result.converged      = cg_result.converged;
        }
      else
        {
          GPUAssembly::CGControl control;
          control.relative_tolerance = relative_tolerance;
          control.max_iterations     = max_iterations;
          result                     = to_linear_solve_result(
            preconditioned_cg.solve(matrix, delta, residual, control));
        }
      result.initial_residual = residual_norm;

      // AffineConstraints::distribute() on the update: its owned
      // constrained entries from their lines, which may read other ranks'
      // entries.
      GPUAssembly::for_each_index(on_device,
                                  n_owned,
                                  StepUpdates::Copy{delta.data(),
                                                    delta_local.data()});
      update_ghosts(delta_local);
      GPUAssembly::for_each_index(
        on_device,
        n_lines,
        StepUpdates::Distribute{line_dofs.data(),
                                line_offsets.data(),
                                line_entries.data(),
                                line_weights.data(),
                                line_inhomogeneities.data(),
                                delta_local.data()});
      GPUAssembly::for_each_index(on_device,
                                  n_owned,
                                  StepUpdates::Add{delta_local.data(),
                                                   u.data()});
      return result;
    }



    void
    ResidentBackend::finish_step(const StepLoads &loads)
    {
      GPUAssembly::for_each_index(on_device,
                                  n_owned,
                                  StepUpdates::FinishStep{loads.dt,
                                                          u.data(),
                                                          mass.data(),
                                                          u_old.data(),
                                                          p_old.data()});
    }



    std::string
    ResidentBackend::description() const
    {
      const unsigned int n_ranks =
        Utilities::MPI::n_mpi_processes(communicator);
      const std::string ranks =
        std::to_string(n_ranks) + " MPI rank" + (n_ranks > 1 ? "s" : "");
      const LinearSolver requested = data.linear_solver.solver;
      const std::string  solver =
        requested == LinearSolver::cg_jacobi ?
           "DistributedJacobiCG" :
         requested == LinearSolver::bicgstab_jacobi ?
           "DistributedJacobiBiCGStab" :
           "DistributedPreconditionedCG (" + short_name(requested) + ")";
      const std::string faces =
        pressure == nullptr         ? "" :
        pressure->faces_on_device() ? ", pressure faces on the device" :
                                      ", pressure faces on the host";
      if (on_device)
        return "GPU per rank, resident: DistributedAssembler with " +
               device_method_description(data) +
               " into DistributedDeviceMatrix, " + solver +
               " and updates on the device" + faces + ", exchange path " +
               GPUAssembly::to_string(matrix.get_halo_path()) + ", " + ranks;
      return "host, resident: DistributedAssembler with HostAssembler into "
             "DistributedDeviceMatrix (host storage), " +
             solver + " and updates in host memory" + faces +
             ", exchange path " +
             GPUAssembly::to_string(matrix.get_halo_path()) + ", " + ranks;
    }
  } // namespace



  std::unique_ptr<IntegratorBackend>
  make_resident_backend(const BackendData &data)
  {
    AssertThrow(data.adapter != nullptr && data.constraints != nullptr,
                ExcMessage("make_resident_backend() needs the adapter and the "
                           "constraints."));
    AssertThrow(data.linear_solver.solver != LinearSolver::direct,
                ExcMessage("'Solver/Linear solver' = direct is not offered by "
                           "the resident backend on MPI ranks "
                           "('Execution/Distributed linear algebra' = "
                           "resident, or auto on GPUs): the plugin's direct "
                           "solver factorizes on one GPU. Choose cg-jacobi, "
                           "cg-chebyshev, cg-block-jacobi or bicgstab-jacobi "
                           "(a follower pressure), or "
                           "'Execution/Distributed linear algebra' = "
                           "trilinos for Trilinos' direct solver on the "
                           "host, or the one-process path (no mpirun, "
                           "'Execution/Distributed solver on one process' "
                           "= false)."));
    const LinearSolver solver = data.linear_solver.solver;
    AssertThrow(Utilities::MPI::max(data.surface_loads.has_pressure() ? 1 : 0,
                                    data.adapter->get_communicator()) == 0 ||
                  solver == LinearSolver::bicgstab_jacobi,
                ExcMessage(
                  "'Solver/Linear solver' = " + parameter_value(solver) +
                  " solves symmetric systems only, but the "
                  "follower 'Surface loads/Pressure' adds a "
                  "non-symmetric load stiffness to the tangent. On "
                  "the resident backend ('Execution/Distributed "
                  "linear algebra' = resident, or auto on GPUs) "
                  "set 'Solver/Linear solver' to bicgstab-jacobi "
                  "or auto."));
    return std::make_unique<ResidentBackend>(data);
  }
} // namespace Hyperelastic
