// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_distributed_assembler_h
#define gpu_assembly_distributed_distributed_assembler_h

#include <deal.II/base/config.h>

#include <deal.II/lac/trilinos_sparse_matrix.h>
#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/exchange_plan.h>
#include <gpu_assembly/distributed/interface_split.h>
#include <gpu_assembly/distributed/resident_exchange.h>
#include <gpu_assembly/distributed/resident_operations.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/lac/device_csr_matrix.h>
#include <gpu_assembly/lac/device_vector.h>

#include <chrono>
#include <memory>
#include <type_traits>
#include <vector>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * Where the values of a TrilinosWrappers::SparseMatrix and the owned
     * entries of a TrilinosWrappers::MPI::Vector are: the Epetra arrays,
     * contiguous over the rank's rows once the matrix is filled (deal.II
     * fills and optimizes it in reinit()). Positions are found once, by
     * ExchangePlan::reinit(); assembly then writes the arrays directly.
     */
    struct TrilinosTarget
    {
      static std::size_t
      n_values(const dealii::TrilinosWrappers::SparseMatrix &matrix);

      /// The rank's values of @p matrix, all rows one after another.
      static double *
      values(dealii::TrilinosWrappers::SparseMatrix &matrix);

      static ExchangePlan::MatrixRowPositions
      matrix_positions(const dealii::TrilinosWrappers::SparseMatrix &matrix);

      static ExchangePlan::VectorPositions
      vector_positions(const dealii::TrilinosWrappers::MPI::Vector &vector);
    };
  } // namespace internal



  /**
   * MPI-distributed assembly into Trilinos: each rank assembles its cells
   * (DoFHandlerAdapter's arrays of a distributed triangulation) on the host
   * with HostAssembler or on its GPU with DeviceAssembler and any method,
   * then an ExchangePlan adds the rows other ranks own into their owners'
   * TrilinosWrappers objects, as deal.II's distribute_local_to_global()
   * followed by compress(VectorOperation::add) does. The matrix and the
   * right-hand side are then ready for Trilinos' solvers and preconditioners
   * (e.g. TrilinosWrappers::PreconditionAMG).
   *
   * reinit() plans everything once per mesh; assemble() runs the local
   * assembly, one message per neighbouring rank for each of matrix and
   * right-hand side, and writes the Epetra arrays through precomputed
   * positions.
   *
   * The exchange travels while the rank computes: the local assembly is
   * split (InterfaceSplit) into the elements that write rows other ranks
   * own, assembled first, and the interior, assembled while the values of
   * those rows are on their way; the two parts' values are added where
   * both write (interior first), then the owned values are written and the
   * received ones added. The result does not depend on timing. (The device
   * path into Trilinos, which downloads the whole local matrix, assembles
   * both parts before its exchange.)
   *
   * The overloads for a DistributedDeviceMatrix and DistributedDeviceVector
   * keep the result where it was assembled: on the device path, the owned
   * entries are scattered into the device CSR arrays on the device, the
   * values of interface rows are gathered on the device and sent through
   * the resident matrix's get_halo_path() (NCCL or CUDA-aware MPI on device
   * buffers, or staged through host buffers), and the
   * received values are added on the device in the plan's fixed order;
   * nothing of the local matrix goes to the host. On the host path the
   * same loops run on host arrays. Either way the values equal those the
   * Trilinos target receives, bit for bit for the same local assembly.
   * DistributedJacobiCG solves with them.
   */
  template <int dim, typename Number = double>
  class DistributedAssembler
  {
  public:
    struct AdditionalData
    {
      /// Assemble on the GPU (DeviceAssembler, device.method) instead of
      /// the host (HostAssembler). Needs a CUDA device; see
      /// select_device_by_node_rank().
      bool use_device = false;
      /// For both paths.
      AssemblyOptions options;
      /// Values per node of the nodal data given to assemble().
      unsigned int n_nodal_fields = 0;
      /// The device path's method and its choices.
      DeviceMethodData device;
    };

    /**
     * Plan the assembly of @p adapter's arrays (the adapter must outlive
     * this object) into @p matrix, reinit()ed with the pattern of
     * DoFHandlerAdapter::make_sparsity_pattern(DynamicSparsityPattern &) (or
     * one that holds it) and the locally owned DoFs as rows and columns, and
     * into vectors with the layout of @p rhs (locally owned DoFs, no ghosts).
     * Collective.
     */
    void
    reinit(const DoFHandlerAdapter<dim>                 &adapter,
           const dealii::TrilinosWrappers::SparseMatrix &matrix,
           const dealii::TrilinosWrappers::MPI::Vector  &rhs,
           const AdditionalData &additional_data = AdditionalData());

    /**
     * Assemble @p kernel into @p matrix and @p rhs (those of reinit(), or
     * objects with the same layout): the values are replaced, not added
     * to. @p nodal_data holds n_nodal_fields values per local node of the
     * adapter's arrays (DoFHandlerAdapter::gather_nodal_values()).
     * Collective. The device path needs DeviceAssembler::assemble()
     * instantiated for the kernel (the plugin does it for its own kernels).
     */
    template <class Kernel>
    void
    assemble(const Kernel                           &kernel,
             dealii::TrilinosWrappers::SparseMatrix &matrix,
             dealii::TrilinosWrappers::MPI::Vector  &rhs,
             const std::vector<Number>              &nodal_data = {});

    /**
     * Plan the assembly into a resident @p matrix (reinit()ed from
     * @p adapter, or with a pattern that holds the adapter's) and
     * right-hand sides with the layout of @p rhs (the matrix's
     * partitioner). Their storage must match use_device: device storage for
     * the device path, host storage for the host path. Collective.
     */
    void
    reinit(const DoFHandlerAdapter<dim>          &adapter,
           const DistributedDeviceMatrix<Number> &matrix,
           const DistributedDeviceVector<Number> &rhs,
           const AdditionalData &additional_data = AdditionalData());

    /**
     * Assemble @p kernel into the resident @p matrix and the owned entries
     * of @p rhs (values replaced; rhs's ghost entries are left alone).
     * Times as for the Trilinos target, transfer being the nodal data's
     * upload and, on the host staging path, the staging copies of the
     * interface values. Collective.
     */
    template <class Kernel>
    void
    assemble(const Kernel                    &kernel,
             DistributedDeviceMatrix<Number> &matrix,
             DistributedDeviceVector<Number> &rhs,
             const std::vector<Number>       &nodal_data = {});

    /**
     * The same with the nodal data already in device memory (device path
     * only): a solver whose state stays on the device gathers them there,
     * and nothing of an assembly passes through the host. transfer then
     * counts the staging copies alone.
     */
    template <class Kernel>
    void
    assemble(const Kernel                    &kernel,
             DistributedDeviceMatrix<Number> &matrix,
             DistributedDeviceVector<Number> &rhs,
             const DeviceVector<Number>      &device_nodal_data);

    /**
     * Bytes this rank sends and receives in one resident assemble()
     * (matrix and right-hand side; values travel as Number). Zero before a
     * resident reinit().
     */
    std::size_t
    n_resident_bytes_sent() const
    {
      return matrix_exchange.n_bytes_sent() + vector_exchange.n_bytes_sent();
    }

    std::size_t
    n_resident_bytes_received() const
    {
      return matrix_exchange.n_bytes_received() +
             vector_exchange.n_bytes_received();
    }

    const ExchangePlan &
    get_exchange_plan() const
    {
      return plan;
    }

    /**
     * Where the time of the last assemble() went, in seconds (for
     * benchmarks). local: the rank's assembly; on the device path the
     * kernels alone, with the device synchronized before and after them.
     * transfer: on the device path, the nodal data's upload and the local
     * matrix and right-hand side's download (0 on the host path).
     * communication and write: ExchangePlan::Times of the matrix and the
     * right-hand side's exchanges together. exposed: the part of
     * communication the rank spent waiting for messages (MPI_Waitall) that
     * the work done while they travel did not hide.
     */
    struct Times
    {
      double local         = 0;
      double transfer      = 0;
      double communication = 0;
      double write         = 0;
      double exposed       = 0;
    };

    const Times &
    get_times() const
    {
      return times;
    }

    /// The rank's local matrix values of the last assemble(), in the order
    /// of the adapter's column_indices (before the exchange). Not filled by
    /// the device path into a resident matrix, which keeps them on the
    /// device.
    const std::vector<Number> &
    get_local_matrix_values() const
    {
      return interior_part.values;
    }

    /// The rank's local right-hand side of the last assemble() (as
    /// get_local_matrix_values()).
    const std::vector<Number> &
    get_local_rhs() const
    {
      return interior_part.rhs;
    }

    /// The split of the rank's elements into interface and interior
    /// (reinit()).
    const InterfaceSplit &
    get_interface_split() const
    {
      return split;
    }

  private:
    /**
     * One part of the local assembly (InterfaceSplit): the interface or
     * the interior elements, with their assembler and where it writes
     * (host path: values and rhs; device path: device_matrix and
     * device_rhs). A part without elements has no assembler.
     */
    struct LocalPart
    {
      /// The part's arrays where it is not the adapter's whole mesh.
      MeshArrays                                    arrays;
      std::unique_ptr<HostAssembler<dim, Number>>   host_assembler;
      std::unique_ptr<DeviceAssembler<dim, Number>> device_assembler;
      std::unique_ptr<DeviceCSRMatrix<Number>>      device_matrix;
      DeviceVector<Number>                          device_rhs;
      /// Host path: the part's local matrix and right-hand side. Device
      /// path into Trilinos: the interior's hold the downloaded result.
      std::vector<Number> values;
      std::vector<Number> rhs;

      bool
      has_elements() const
      {
        return host_assembler || device_assembler;
      }

      const Number *
      matrix_data() const
      {
        return device_matrix ? device_matrix->get_values().data() :
                               values.data();
      }

      const Number *
      rhs_data() const
      {
        return device_matrix ? device_rhs.data() : rhs.data();
      }
    };

    /// The part whose values of the rows other ranks own are sent: the
    /// interface; where it has no elements, no element writes these rows,
    /// and the interior's zeros there are sent.
    const LocalPart &
    sending() const
    {
      return interface_part.has_elements() ? interface_part : interior_part;
    }

    /// The split, the parts' assemblers and device arrays of reinit().
    void
    setup_local(const DoFHandlerAdapter<dim> &adapter,
                const AdditionalData         &additional_data);

    /// @p part's assembler for @p elements of the adapter's arrays.
    void
    setup_part(LocalPart &part, const std::vector<unsigned int> &elements);

    /**
     * The local assembly of both parts from @p nodal_data (a
     * std::vector on the host path, a DeviceVector on the device path)
     * into interior's arrays, timed (times.local): the interface part
     * first, then @p between (which starts the exchange of the interface
     * values) while the interior part is yet to come, then the interior
     * part, and the interface values added to the interior's where both
     * write. While the device computes the interior, @p progress lets MPI
     * move the messages.
     */
    template <class Kernel, class NodalData, class Between, class Progress>
    void
    assemble_parts(const Kernel    &kernel,
                   const NodalData &nodal_data,
                   const Between   &between,
                   const Progress  &progress);

    /// The resident exchange around assemble_parts().
    template <class Kernel, class NodalData>
    void
    assemble_resident(const Kernel                    &kernel,
                      const NodalData                 &nodal_data,
                      DistributedDeviceMatrix<Number> &matrix,
                      DistributedDeviceVector<Number> &rhs);

    /// The checks of both resident assemble()s.
    void
    check_resident_target(const DistributedDeviceMatrix<Number> &matrix,
                          const DistributedDeviceVector<Number> &rhs) const;

    enum class Target
    {
      none,
      trilinos,
      resident
    };

    const DoFHandlerAdapter<dim> *adapter = nullptr;
    Target                        target  = Target::none;
    AdditionalData                additional_data;
    InterfaceSplit                split;
    LocalPart                     interface_part;
    /// Also the local result of both parts.
    LocalPart                          interior_part;
    ResidentArray<int>                 nonzeros_written;
    ResidentArray<int>                 rows_written;
    DeviceVector<Number>               device_nodal_data;
    ExchangePlan                       plan;
    internal::ResidentExchange<Number> matrix_exchange;
    internal::ResidentExchange<Number> vector_exchange;
    std::size_t                        n_matrix_values = 0;
    std::size_t                        n_vector_values = 0;
    Times                              times;
  };



  template <int dim, typename Number>
  void
  DistributedAssembler<dim, Number>::setup_part(
    LocalPart                       &part,
    const std::vector<unsigned int> &elements)
  {
    const MeshArrays &arrays = adapter->get_arrays();
    part                     = LocalPart();
    // Where the part is the whole mesh, the adapter's arrays serve it.
    const bool whole = elements.size() == arrays.n_elements;
    if (!whole)
      part.arrays = restrict_to_elements(arrays, elements);
    const MeshArrays &part_arrays = whole ? arrays : part.arrays;
    const bool        use_device  = additional_data.use_device;
    // The interior's arrays hold the local result even without elements;
    // zero until assembled: the exchange may read them first.
    if (use_device && (!elements.empty() || &part == &interior_part))
      {
        part.device_matrix = std::make_unique<DeviceCSRMatrix<Number>>();
        part.device_matrix->reinit(arrays);
        part.device_matrix->get_values().set_zero();
        part.device_rhs.reinit(arrays.n_dofs);
      }
    else if (!use_device)
      {
        part.values.assign(arrays.n_nonzeros(), Number());
        part.rhs.assign(arrays.n_dofs, Number());
      }
    if (elements.empty())
      return;
    if (use_device)
      {
        typename DeviceAssembler<dim, Number>::AdditionalData device_data;
        static_cast<DeviceMethodData &>(device_data) = additional_data.device;
        device_data.options                          = additional_data.options;
        device_data.n_nodal_fields = additional_data.n_nodal_fields;
        part.device_assembler =
          std::make_unique<DeviceAssembler<dim, Number>>();
        part.device_assembler->reinit(part_arrays, device_data);
      }
    else
      part.host_assembler =
        std::make_unique<HostAssembler<dim, Number>>(part_arrays);
  }



  template <int dim, typename Number>
  void
  DistributedAssembler<dim, Number>::setup_local(
    const DoFHandlerAdapter<dim> &adapter,
    const AdditionalData         &data)
  {
    this->adapter            = &adapter;
    this->additional_data    = data;
    const MeshArrays &arrays = adapter.get_arrays();
    interface_part           = LocalPart();
    interior_part            = LocalPart();
    SetupTimes::Scope scope(data.use_device ?
                              "DistributedAssembler: device assembler" :
                              "DistributedAssembler: host assembler");
    AssertThrow(!data.use_device || n_cuda_devices() > 0,
                ExcUnsupportedInput(
                  "DistributedAssembler: use_device is set, but this "
                  "rank finds no CUDA device; assemble on the host "
                  "(use_device = false)."));
    split.reinit(arrays,
                 adapter.get_local_to_global(),
                 adapter.locally_owned_dofs());
    setup_part(interface_part, split.interface_elements);
    setup_part(interior_part, split.interior_elements);
    const auto to_int = [](const std::vector<index_type> &indices) {
      return std::vector<int>(indices.begin(), indices.end());
    };
    nonzeros_written.reinit(data.use_device, to_int(split.nonzeros_written));
    rows_written.reinit(data.use_device, to_int(split.rows_written));
  }



  template <int dim, typename Number>
  void
  DistributedAssembler<dim, Number>::reinit(
    const DoFHandlerAdapter<dim>                 &adapter,
    const dealii::TrilinosWrappers::SparseMatrix &matrix,
    const dealii::TrilinosWrappers::MPI::Vector  &rhs,
    const AdditionalData                         &data)
  {
    AssertThrow(matrix.locally_owned_range_indices() ==
                  adapter.locally_owned_dofs(),
                dealii::ExcMessage(
                  "the matrix's rows are not the locally owned DoFs of the "
                  "adapter's DoFHandler; reinit it with "
                  "locally_owned_dofs() as rows and columns."));
    AssertThrow(rhs.locally_owned_elements() == adapter.locally_owned_dofs() &&
                  !rhs.has_ghost_elements(),
                dealii::ExcMessage(
                  "the right-hand side vector must hold the locally owned "
                  "DoFs of the adapter's DoFHandler and no ghosts."));
    SetupTimes::Scope scope("DistributedAssembler");
    setup_local(adapter, data);
    const MeshArrays &arrays = adapter.get_arrays();
    n_matrix_values          = internal::TrilinosTarget::n_values(matrix);
    n_vector_values          = rhs.locally_owned_size();
    plan.reinit(adapter.get_local_to_global(),
                arrays.row_offsets,
                arrays.column_indices,
                adapter.locally_owned_dofs(),
                adapter.get_communicator(),
                n_matrix_values,
                internal::TrilinosTarget::matrix_positions(matrix),
                n_vector_values,
                internal::TrilinosTarget::vector_positions(rhs));
    target = Target::trilinos;
  }



  template <int dim, typename Number>
  void
  DistributedAssembler<dim, Number>::reinit(
    const DoFHandlerAdapter<dim>          &adapter,
    const DistributedDeviceMatrix<Number> &matrix,
    const DistributedDeviceVector<Number> &rhs,
    const AdditionalData                  &data)
  {
    AssertThrow(matrix.get_partitioner() &&
                  matrix.get_partitioner()->locally_owned_range() ==
                    adapter.locally_owned_dofs(),
                dealii::ExcMessage(
                  "the resident matrix's rows are not the locally owned DoFs "
                  "of the adapter's DoFHandler; reinit() it with the "
                  "adapter."));
    AssertThrow(rhs.get_partitioner() &&
                  rhs.get_partitioner()->locally_owned_range() ==
                    adapter.locally_owned_dofs(),
                dealii::ExcMessage(
                  "the resident right-hand side does not hold the locally "
                  "owned DoFs of the adapter's DoFHandler; reinit() it with "
                  "the matrix's get_partitioner()."));
    AssertThrow(matrix.stores_on_device() == data.use_device &&
                  rhs.stores_on_device() == data.use_device,
                dealii::ExcMessage(
                  std::string("DistributedAssembler: use_device is ") +
                  (data.use_device ? "set" : "not set") +
                  ", but the resident matrix or right-hand side stores its "
                  "values in " +
                  (matrix.stores_on_device() ? "device" : "host") + " and " +
                  (rhs.stores_on_device() ? "device" : "host") +
                  " memory; give both the same use_device."));
    SetupTimes::Scope scope("DistributedAssembler");
    setup_local(adapter, data);
    const MeshArrays &arrays = adapter.get_arrays();
    n_matrix_values          = matrix.n_nonzeros();
    n_vector_values          = rhs.locally_owned_size();
    const auto &partitioner  = rhs.get_partitioner();
    plan.reinit(
      adapter.get_local_to_global(),
      arrays.row_offsets,
      arrays.column_indices,
      adapter.locally_owned_dofs(),
      adapter.get_communicator(),
      n_matrix_values,
      [&matrix](const dealii::types::global_dof_index  row,
                const dealii::types::global_dof_index *columns,
                const std::size_t                      n_columns,
                std::size_t                           *positions) {
        matrix.row_positions(row, columns, n_columns, positions);
      },
      n_vector_values,
      [&partitioner](const dealii::types::global_dof_index *rows,
                     const std::size_t                      n_rows,
                     std::size_t                           *positions) {
        for (std::size_t j = 0; j < n_rows; ++j)
          positions[j] =
            static_cast<std::size_t>(partitioner->global_to_local(rows[j]));
      });
    const HaloPath    path = matrix.get_halo_path();
    SetupTimes::Scope exchange_scope("DistributedAssembler: resident exchange");
    matrix_exchange.reinit(plan.matrix_lists(),
                           path,
                           adapter.get_communicator(),
                           1);
    vector_exchange.reinit(plan.vector_lists(),
                           path,
                           adapter.get_communicator(),
                           2);
    target = Target::resident;
  }



  template <int dim, typename Number>
  template <class Kernel, class NodalData, class Between, class Progress>
  void
  DistributedAssembler<dim, Number>::assemble_parts(const Kernel    &kernel,
                                                    const NodalData &nodal_data,
                                                    const Between   &between,
                                                    const Progress  &progress)
  {
    using Clock              = std::chrono::steady_clock;
    const bool on_device     = additional_data.use_device;
    const auto assemble_part = [&](LocalPart &part) {
      if constexpr (std::is_same_v<NodalData, std::vector<Number>>)
        part.host_assembler->assemble(kernel,
                                      part.values,
                                      part.rhs,
                                      additional_data.options,
                                      nodal_data,
                                      additional_data.n_nodal_fields);
      else
        part.device_assembler->assemble(kernel,
                                        nodal_data,
                                        *part.device_matrix,
                                        part.device_rhs);
    };

    auto    start  = Clock::now();
    Number *values = on_device ?
                       interior_part.device_matrix->get_values().data() :
                       interior_part.values.data();
    Number *rhs =
      on_device ? interior_part.device_rhs.data() : interior_part.rhs.data();
    // An assembler need not write rows without elements of its part; the
    // interior's rows that the interface part writes are added to below,
    // so they start from zero.
    for_each_index(on_device,
                   nonzeros_written.size(),
                   ResidentOperations::ZeroAt<Number>{nonzeros_written.data(),
                                                      values});
    for_each_index(on_device,
                   rows_written.size(),
                   ResidentOperations::ZeroAt<Number>{rows_written.data(),
                                                      rhs});
    if (interface_part.has_elements())
      assemble_part(interface_part);
    if (on_device)
      synchronize_device();
    times.local += internal::seconds_since(start);

    between();

    start = Clock::now();
    if (interior_part.has_elements())
      assemble_part(interior_part);
    // interior + interface where both write, in this order whatever the
    // order of the parts.
    for_each_index(
      on_device,
      nonzeros_written.size(),
      ResidentOperations::ScatterAdd<Number>{interface_part.matrix_data(),
                                             nonzeros_written.data(),
                                             nonzeros_written.data(),
                                             values});
    for_each_index(
      on_device,
      rows_written.size(),
      ResidentOperations::ScatterAdd<Number>{interface_part.rhs_data(),
                                             rows_written.data(),
                                             rows_written.data(),
                                             rhs});
    if (on_device)
      {
        // The messages move while the device computes, also with an MPI
        // library that moves large messages only inside MPI calls.
        while (!internal::DeviceMemory::finished())
          progress();
        synchronize_device();
      }
    times.local += internal::seconds_since(start);
  }



  template <int dim, typename Number>
  template <class Kernel>
  void
  DistributedAssembler<dim, Number>::assemble(
    const Kernel                           &kernel,
    dealii::TrilinosWrappers::SparseMatrix &matrix,
    dealii::TrilinosWrappers::MPI::Vector  &rhs,
    const std::vector<Number>              &nodal_data)
  {
    AssertThrow(target == Target::trilinos,
                dealii::ExcMessage(
                  "DistributedAssembler::assemble() into Trilinos objects "
                  "needs a reinit() with Trilinos objects first."));
    AssertThrow(internal::TrilinosTarget::n_values(matrix) == n_matrix_values &&
                  rhs.locally_owned_size() == n_vector_values &&
                  !rhs.has_ghost_elements(),
                dealii::ExcMessage(
                  "the matrix or right-hand side given to assemble() does "
                  "not have the layout planned by reinit(); call reinit() "
                  "again after reinitializing them."));
    using Clock = std::chrono::steady_clock;
    times       = Times();
    plan.reset_times();
    const auto nothing = []() {};
    if (additional_data.use_device)
      {
        auto start = Clock::now();
        device_nodal_data.copy_from_host(nodal_data);
        synchronize_device();
        times.transfer += internal::seconds_since(start);
        // The exchange reads the whole local matrix from the host: both
        // parts first, then one download.
        assemble_parts(kernel, device_nodal_data, nothing, nothing);
        start = Clock::now();
        interior_part.device_matrix->get_values().copy_to_host(
          interior_part.values);
        interior_part.device_rhs.copy_to_host(interior_part.rhs);
        times.transfer += internal::seconds_since(start);
        plan.start_matrix_exchange(interior_part.values.data());
        plan.start_vector_exchange(interior_part.rhs.data());
      }
    else
      assemble_parts(
        kernel,
        nodal_data,
        [&]() {
          plan.start_matrix_exchange(sending().matrix_data());
          plan.start_vector_exchange(sending().rhs_data());
        },
        nothing);
    plan.finish_matrix_exchange(interior_part.values.data(),
                                internal::TrilinosTarget::values(matrix));
    plan.finish_vector_exchange(interior_part.rhs.data(), rhs.begin());
    times.communication = plan.get_times().communication;
    times.write         = plan.get_times().write;
    times.exposed       = plan.get_times().exposed;
  }



  template <int dim, typename Number>
  void
  DistributedAssembler<dim, Number>::check_resident_target(
    const DistributedDeviceMatrix<Number> &matrix,
    const DistributedDeviceVector<Number> &rhs) const
  {
    AssertThrow(target == Target::resident,
                dealii::ExcMessage(
                  "DistributedAssembler::assemble() into a resident matrix "
                  "needs a reinit() with a resident matrix first."));
    AssertThrow(matrix.n_nonzeros() == n_matrix_values &&
                  rhs.locally_owned_size() == n_vector_values &&
                  matrix.stores_on_device() == additional_data.use_device &&
                  rhs.stores_on_device() == additional_data.use_device,
                dealii::ExcMessage(
                  "the resident matrix or right-hand side given to "
                  "assemble() does not have the layout or storage planned "
                  "by reinit(); call reinit() again after reinitializing "
                  "them."));
  }



  template <int dim, typename Number>
  template <class Kernel, class NodalData>
  void
  DistributedAssembler<dim, Number>::assemble_resident(
    const Kernel                    &kernel,
    const NodalData                 &nodal_data,
    DistributedDeviceMatrix<Number> &matrix,
    DistributedDeviceVector<Number> &rhs)
  {
    ExchangePlan::Times exchange_times;
    assemble_parts(
      kernel,
      nodal_data,
      [&]() {
        matrix_exchange.start(sending().matrix_data(),
                              exchange_times,
                              times.transfer);
        vector_exchange.start(sending().rhs_data(),
                              exchange_times,
                              times.transfer);
      },
      [&]() {
        matrix_exchange.progress();
        vector_exchange.progress();
      });
    matrix_exchange.finish(interior_part.matrix_data(),
                           matrix.values_data(),
                           exchange_times,
                           times.transfer);
    vector_exchange.finish(interior_part.rhs_data(),
                           rhs.data(),
                           exchange_times,
                           times.transfer);
    times.communication = exchange_times.communication;
    times.write         = exchange_times.write;
    times.exposed       = exchange_times.exposed;
  }



  template <int dim, typename Number>
  template <class Kernel>
  void
  DistributedAssembler<dim, Number>::assemble(
    const Kernel                    &kernel,
    DistributedDeviceMatrix<Number> &matrix,
    DistributedDeviceVector<Number> &rhs,
    const std::vector<Number>       &nodal_data)
  {
    check_resident_target(matrix, rhs);
    times = Times();
    if (additional_data.use_device)
      {
        const auto start = std::chrono::steady_clock::now();
        device_nodal_data.copy_from_host(nodal_data);
        synchronize_device();
        times.transfer += internal::seconds_since(start);
        assemble_resident(kernel, device_nodal_data, matrix, rhs);
      }
    else
      assemble_resident(kernel, nodal_data, matrix, rhs);
  }



  template <int dim, typename Number>
  template <class Kernel>
  void
  DistributedAssembler<dim, Number>::assemble(
    const Kernel                    &kernel,
    DistributedDeviceMatrix<Number> &matrix,
    DistributedDeviceVector<Number> &rhs,
    const DeviceVector<Number>      &device_nodal_data)
  {
    check_resident_target(matrix, rhs);
    AssertThrow(additional_data.use_device,
                dealii::ExcMessage(
                  "DistributedAssembler::assemble() with nodal data in "
                  "device memory needs the device path (use_device); give "
                  "the host path its nodal data in a std::vector."));
    const std::size_t n_nodes = adapter->get_arrays().node_dofs.size() /
                                adapter->get_arrays().layout.n_components;
    AssertThrow(
      device_nodal_data.size() == n_nodes * additional_data.n_nodal_fields,
      dealii::ExcMessage("the device nodal data given to assemble() have " +
                         std::to_string(device_nodal_data.size()) +
                         " entries; the adapter's " + std::to_string(n_nodes) +
                         " nodes need n_nodal_fields values each."));
    times = Times();
    assemble_resident(kernel, device_nodal_data, matrix, rhs);
  }
} // namespace GPUAssembly

#endif
