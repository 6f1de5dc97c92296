// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_distributed_device_vector_h
#define gpu_assembly_distributed_distributed_device_vector_h

#include <deal.II/base/mpi.h>
#include <deal.II/base/partitioner.h>

#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/distributed/resident_array.h>
#include <gpu_assembly/lac/index_loops.h>

#include <memory>
#include <string>
#include <vector>

namespace GPUAssembly
{
  /**
   * How the halo of the resident distributed classes travels: on the host
   * path, MPI on host arrays; on the device path, either MPI directly on
   * device buffers (CUDA-aware MPI) or device buffers copied to page-locked
   * host buffers, sent, and copied back.
   */
  enum class HaloPath
  {
    host_memory,
    staged_through_host,
    cuda_aware_mpi
  };

  std::string
  to_string(const HaloPath path);

  /**
   * Whether the MPI library reads and writes device memory, asked at run
   * time (MPIX_Query_cuda_support() where the MPI library declares it in
   * mpi-ext.h, as Open MPI does; false elsewhere).
   */
  bool
  mpi_supports_device_memory();

  /**
   * The halo path a resident object with these choices takes:
   * host_memory without @p use_device; cuda_aware_mpi on the device where
   * mpi_supports_device_memory() and not @p force_host_staging;
   * staged_through_host otherwise.
   */
  HaloPath
  choose_halo_path(const bool use_device, const bool force_host_staging);



  /**
   * A distributed vector whose entries stay where the solver runs: on the
   * device (use_device) or in host memory (the same loops on the CPU, the
   * path CI tests). The layout is that of a
   * dealii::Utilities::MPI::Partitioner: the rank's locally owned entries,
   * then its ghost entries, in the partitioner's local numbering (as
   * LinearAlgebra::distributed::Vector stores them).
   * DistributedDeviceMatrix::get_partitioner() gives the layout of the
   * vectors it multiplies.
   *
   * update_ghost_values() packs the partitioner's import_indices() (on the
   * device for device vectors), sends one message per import_targets()
   * rank and receives one per ghost_targets() rank straight into the ghost
   * entries (or into a page-locked buffer, then copied there), MPI on device
   * buffers where the MPI library supports it (get_halo_path()).
   *
   * Collective functions must be called by every rank of the partitioner's
   * communicator in the same order. Instantiated for float and double.
   */
  template <typename Number>
  class DistributedDeviceVector
  {
  public:
    struct AdditionalData
    {
      /// Entries in device memory (needs a CUDA device), else host memory.
      bool use_device = false;
      /// Stage device messages through host memory even where MPI reads
      /// device memory.
      bool force_host_staging = false;
    };

    DistributedDeviceVector()                                = default;
    DistributedDeviceVector(const DistributedDeviceVector &) = delete;
    DistributedDeviceVector &
    operator=(const DistributedDeviceVector &) = delete;

    /// Entries for @p partitioner's owned and ghost indices, all zero.
    void
    reinit(const std::shared_ptr<const dealii::Utilities::MPI::Partitioner>
                                &partitioner,
           const AdditionalData &additional_data = AdditionalData());

    /// The layout and storage of @p other, all entries zero.
    void
    reinit(const DistributedDeviceVector &other);

    const std::shared_ptr<const dealii::Utilities::MPI::Partitioner> &
    get_partitioner() const
    {
      return partitioner;
    }

    const AdditionalData &
    get_additional_data() const
    {
      return additional_data;
    }

    bool
    stores_on_device() const
    {
      return additional_data.use_device;
    }

    HaloPath
    get_halo_path() const
    {
      return halo_path;
    }

    unsigned int
    locally_owned_size() const
    {
      return n_owned;
    }

    unsigned int
    n_ghost_entries() const
    {
      return n_ghosts;
    }

    /// The owned then the ghost entries, device or host pointer as
    /// stores_on_device() says.
    Number *
    data()
    {
      return values.data();
    }

    const Number *
    data() const
    {
      return values.data();
    }

    /// Zero the owned and the ghost entries.
    void
    set_zero();

    /// Fill the ghost entries with their owners' values. Collective.
    void
    update_ghost_values() const;

    /// First half of update_ghost_values(): pack and post the messages.
    /// Nothing may change the owned entries before the second half.
    void
    update_ghost_values_start() const;

    /// Second half: wait for the messages and write the ghost entries.
    void
    update_ghost_values_finish() const;

    /// Zero the ghost entries (owned entries unchanged).
    void
    zero_out_ghost_values();

    /// Sum over all ranks of the owned entries' products. Collective.
    double
    dot(const DistributedDeviceVector &other) const;

    /// Euclidean norm of the owned entries of all ranks. Collective.
    double
    l2_norm() const;

    /**
     * body(i, sums) for the owned indices i, where the body adds index i's
     * terms to @p n_sums running sums (sum_over_indices(), on the host or
     * the device as this vector stores its entries); @p sums are the sums
     * over all ranks. For fused vector operations, such as CG's updates
     * that also give r.z and r.r. The device branch must be instantiated
     * for @p Body (index_loops.h). Collective.
     */
    template <unsigned int n_sums, typename Body>
    void
    sum_over_owned(const Body &body, double (&sums)[n_sums]) const
    {
      sum_over_indices(stores_on_device(), n_owned, workspace, body, sums);
      const int ierr = MPI_Allreduce(MPI_IN_PLACE,
                                     sums,
                                     n_sums,
                                     MPI_DOUBLE,
                                     MPI_SUM,
                                     partitioner->get_mpi_communicator());
      AssertThrowMPI(ierr);
    }

    /// Owned entries from @p vector (same locally owned indices); ghosts
    /// are not touched.
    void
    copy_locally_owned_from(
      const dealii::LinearAlgebra::distributed::Vector<double> &vector);

    void
    copy_locally_owned_from(
      const dealii::TrilinosWrappers::MPI::Vector &vector);

    /// Owned entries into @p vector (same locally owned indices); its
    /// ghosts are not touched.
    void
    copy_locally_owned_to(
      dealii::LinearAlgebra::distributed::Vector<double> &vector) const;

    /// Owned entries into @p vector, which must have no ghost entries.
    void
    copy_locally_owned_to(dealii::TrilinosWrappers::MPI::Vector &vector) const;

    /// The owned then the ghost entries, copied to the host.
    void
    copy_to_host(std::vector<Number> &local_values) const;

    /// Bytes one update_ghost_values() sends from this rank.
    std::size_t
    n_halo_bytes_sent() const
    {
      return import_list.size() * sizeof(Number);
    }

  private:
    void
    check_compatible(const DistributedDeviceVector &other) const;

    std::shared_ptr<const dealii::Utilities::MPI::Partitioner> partitioner;
    AdditionalData                                             additional_data;
    HaloPath     halo_path = HaloPath::host_memory;
    unsigned int n_owned   = 0;
    unsigned int n_ghosts  = 0;
    // Entries are mutable: update_ghost_values() is const, as deal.II's.
    mutable ResidentArray<Number> values;
    // The partitioner's import_indices() expanded, for the pack loop.
    ResidentArray<int>                     import_list;
    mutable ResidentArray<Number>          send_buffer;
    mutable internal::PinnedBuffer<Number> pinned_send;
    mutable internal::PinnedBuffer<Number> pinned_receive;
    mutable std::vector<MPI_Request>       requests;
    ReductionWorkspace                     workspace;
  };
} // namespace GPUAssembly

#endif
