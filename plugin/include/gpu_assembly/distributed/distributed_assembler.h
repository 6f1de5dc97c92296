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
#include <gpu_assembly/distributed/resident_exchange.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/lac/device_csr_matrix.h>
#include <gpu_assembly/lac/device_vector.h>

#include <chrono>
#include <memory>
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
     * right-hand side's exchanges together.
     */
    struct Times
    {
      double local         = 0;
      double transfer      = 0;
      double communication = 0;
      double write         = 0;
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
      return local_values;
    }

    /// The rank's local right-hand side of the last assemble() (as
    /// get_local_matrix_values()).
    const std::vector<Number> &
    get_local_rhs() const
    {
      return local_rhs;
    }

  private:
    /// The local assemblers and device arrays of reinit().
    void
    setup_local(const DoFHandlerAdapter<dim> &adapter,
                const AdditionalData         &additional_data);

    /// The rank's local assembly into local_values and local_rhs (host
    /// path) or device_matrix and device_rhs (device path), timed; with
    /// @p download, the device path copies them to the host.
    template <class Kernel>
    void
    assemble_locally(const Kernel              &kernel,
                     const std::vector<Number> &nodal_data,
                     const bool                 download);

    /// The device path's local assembly from nodal data on the device
    /// (times.local), with @p download as in assemble_locally().
    template <class Kernel>
    void
    assemble_on_device(const Kernel               &kernel,
                       const DeviceVector<Number> &nodal_data,
                       const bool                  download);

    /// The resident exchange of the local results into @p matrix and
    /// @p rhs, after a local assembly.
    void
    exchange_resident(DistributedDeviceMatrix<Number> &matrix,
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

    const DoFHandlerAdapter<dim>                 *adapter = nullptr;
    Target                                        target  = Target::none;
    AdditionalData                                additional_data;
    std::unique_ptr<HostAssembler<dim, Number>>   host_assembler;
    std::unique_ptr<DeviceAssembler<dim, Number>> device_assembler;
    std::unique_ptr<DeviceCSRMatrix<Number>>      device_matrix;
    DeviceVector<Number>                          device_rhs;
    DeviceVector<Number>                          device_nodal_data;
    ExchangePlan                                  plan;
    internal::ResidentExchange<Number>            matrix_exchange;
    internal::ResidentExchange<Number>            vector_exchange;
    std::vector<Number>                           local_values;
    std::vector<Number>                           local_rhs;
    std::size_t                                   n_matrix_values = 0;
    std::size_t                                   n_vector_values = 0;
    Times                                         times;
  };



  template <int dim, typename Number>
  void
  DistributedAssembler<dim, Number>::setup_local(
    const DoFHandlerAdapter<dim> &adapter,
    const AdditionalData         &data)
  {
    this->adapter            = &adapter;
    this->additional_data    = data;
    const MeshArrays &arrays = adapter.get_arrays();
    host_assembler.reset();
    device_assembler.reset();
    device_matrix.reset();
    SetupTimes::Scope scope(data.use_device ?
                              "DistributedAssembler: device assembler" :
                              "DistributedAssembler: host assembler");
    if (data.use_device)
      {
        AssertThrow(n_cuda_devices() > 0,
                    ExcUnsupportedInput(
                      "DistributedAssembler: use_device is set, but this "
                      "rank finds no CUDA device; assemble on the host "
                      "(use_device = false)."));
        typename DeviceAssembler<dim, Number>::AdditionalData device_data;
        static_cast<DeviceMethodData &>(device_data) = data.device;
        device_data.options                          = data.options;
        device_data.n_nodal_fields                   = data.n_nodal_fields;
        device_assembler = std::make_unique<DeviceAssembler<dim, Number>>();
        device_assembler->reinit(arrays, device_data);
        device_matrix = std::make_unique<DeviceCSRMatrix<Number>>();
        device_matrix->reinit(arrays);
        device_rhs.reinit(arrays.n_dofs);
      }
    else
      host_assembler = std::make_unique<HostAssembler<dim, Number>>(arrays);
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
  template <class Kernel>
  void
  DistributedAssembler<dim, Number>::assemble_locally(
    const Kernel              &kernel,
    const std::vector<Number> &nodal_data,
    const bool                 download)
  {
    using Clock = std::chrono::steady_clock;
    times       = Times();
    auto start  = Clock::now();
    if (device_assembler)
      {
        device_nodal_data.copy_from_host(nodal_data);
        synchronize_device();
        const double upload = internal::seconds_since(start);
        assemble_on_device(kernel, device_nodal_data, download);
        times.transfer += upload;
      }
    else
      {
        host_assembler->assemble(kernel,
                                 local_values,
                                 local_rhs,
                                 additional_data.options,
                                 nodal_data,
                                 additional_data.n_nodal_fields);
        times.local = internal::seconds_since(start);
      }
  }



  template <int dim, typename Number>
  template <class Kernel>
  void
  DistributedAssembler<dim, Number>::assemble_on_device(
    const Kernel               &kernel,
    const DeviceVector<Number> &nodal_data,
    const bool                  download)
  {
    using Clock = std::chrono::steady_clock;
    times       = Times();
    auto start  = Clock::now();
    device_assembler->assemble(kernel, nodal_data, *device_matrix, device_rhs);
    synchronize_device();
    times.local = internal::seconds_since(start);
    if (download)
      {
        start = Clock::now();
        device_matrix->get_values().copy_to_host(local_values);
        device_rhs.copy_to_host(local_rhs);
        times.transfer += internal::seconds_since(start);
      }
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
    assemble_locally(kernel, nodal_data, /*download=*/true);
    plan.reset_times();
    plan.exchange_matrix(local_values.data(),
                         internal::TrilinosTarget::values(matrix));
    plan.exchange_vector(local_rhs.data(), rhs.begin());
    times.communication = plan.get_times().communication;
    times.write         = plan.get_times().write;
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
  void
  DistributedAssembler<dim, Number>::exchange_resident(
    DistributedDeviceMatrix<Number> &matrix,
    DistributedDeviceVector<Number> &rhs)
  {
    const Number *local_matrix = device_assembler ?
                                   device_matrix->get_values().data() :
                                   local_values.data();
    const Number *local_vector =
      device_assembler ? device_rhs.data() : local_rhs.data();
    ExchangePlan::Times exchange_times;
    matrix_exchange.run(local_matrix,
                        matrix.values_data(),
                        exchange_times,
                        times.transfer);
    vector_exchange.run(local_vector,
                        rhs.data(),
                        exchange_times,
                        times.transfer);
    times.communication = exchange_times.communication;
    times.write         = exchange_times.write;
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
    assemble_locally(kernel, nodal_data, /*download=*/false);
    exchange_resident(matrix, rhs);
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
    AssertThrow(device_assembler != nullptr,
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
    assemble_on_device(kernel, device_nodal_data, /*download=*/false);
    exchange_resident(matrix, rhs);
  }
} // namespace GPUAssembly

#endif
