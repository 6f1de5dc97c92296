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
  namespace internal
  {
    class NcclCommunicator;
  } // namespace internal



  /**
   * How the halos and interface rows of the resident distributed classes
   * travel between ranks. Their AdditionalData asks for one (automatic
   * unless the user chooses); get_halo_path() says which one runs:
   *
   * - host_memory: the entries are in host memory (use_device = false) and
   *   MPI sends them from there;
   * - staged_through_host: device entries are copied to page-locked host
   *   buffers, sent with MPI, and the received ones copied back to the
   *   device; portable, needs nothing but MPI;
   * - nccl: device buffers are sent and received with NCCL (grouped
   *   ncclSend/ncclRecv on a stream of the rank's GPU), never passing
   *   through the host; needs the plugin built with NCCL
   *   (GPU_ASSEMBLY_WITH_NCCL) and one GPU per rank;
   * - cuda_aware_mpi: device buffers are given to MPI; needs an MPI library
   *   that reports CUDA support (mpi_supports_device_memory()). Not
   *   covered by the test suite; opt-in: automatic never chooses it.
   *
   * automatic is a request, never a path that runs: nccl for device
   * entries where nccl_available() and every rank of the communicator has
   * a GPU of its own, else staged_through_host; host_memory for host
   * entries. All paths give bitwise equal results: the same values travel
   * and are added in the same order.
   */
  enum class HaloPath
  {
    automatic,
    host_memory,
    staged_through_host,
    nccl,
    cuda_aware_mpi
  };

  /**
   * The name of @p path as programs report it: "automatic", "host memory",
   * "host staging", "NCCL", "CUDA-aware MPI".
   */
  std::string
  to_string(const HaloPath path);

  /**
   * The path a command-line or parameter-file value names: "auto", "host"
   * (staged_through_host; host memory for host entries), "nccl",
   * "cuda-aware-mpi". Throws ExcMessage naming @p name and the choices for
   * any other value.
   */
  HaloPath
  halo_path_from_string(const std::string &name);

  /// The values halo_path_from_string() accepts, separated by '|'.
  std::string
  halo_path_choices();

  /**
   * Whether the MPI library reads and writes device memory, asked at run
   * time (MPIX_Query_cuda_support() where the MPI library declares it in
   * mpi-ext.h, as Open MPI does; false elsewhere).
   */
  bool
  mpi_supports_device_memory();

  /// Whether the plugin was built with NCCL (GPU_ASSEMBLY_WITH_NCCL).
  bool
  nccl_available();

  /**
   * The path that runs for entries in device (@p use_device) or host memory
   * when @p requested is asked for on @p communicator (see HaloPath).
   * Throws ExcUnsupportedInput with the reason where the request cannot be
   * met: nccl or cuda_aware_mpi for host entries, nccl without NCCL in the
   * plugin (naming GPU_ASSEMBLY_WITH_NCCL) or with ranks sharing a GPU,
   * cuda_aware_mpi where MPI does not report CUDA support. Collective where
   * @p use_device is set and @p requested is automatic or nccl: the first
   * such call for a communicator builds its NCCL communicator.
   */
  HaloPath
  choose_halo_path(const bool     use_device,
                   const HaloPath requested,
                   const MPI_Comm communicator);



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
   * entries, through the path that AdditionalData::halo_path asks for
   * (get_halo_path(): MPI on host entries, page-locked host buffers, NCCL
   * or CUDA-aware MPI on device entries).
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
      /// How the halo travels (HaloPath): automatic takes NCCL for device
      /// entries where the plugin has it and each rank its own GPU, else
      /// host staging.
      HaloPath halo_path = HaloPath::automatic;
    };

    DistributedDeviceVector()                                = default;
    DistributedDeviceVector(const DistributedDeviceVector &) = delete;
    DistributedDeviceVector &
    operator=(const DistributedDeviceVector &) = delete;

    /// Entries for @p partitioner's owned and ghost indices, all zero.
    /// Collective where choose_halo_path() is, and on the NCCL path, where
    /// it makes NCCL's connections for the layout's ghost updates.
    void
    reinit(const std::shared_ptr<const dealii::Utilities::MPI::Partitioner>
                                &partitioner,
           const AdditionalData &additional_data = AdditionalData());

    /// The layout, storage and halo path of @p other, all entries zero.
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
    /// reinit() with the path already chosen, and its NCCL communicator
    /// on the nccl path.
    void
    reinit(
      const std::shared_ptr<const dealii::Utilities::MPI::Partitioner>
                                                              &partitioner,
      const AdditionalData                                    &additional_data,
      const HaloPath                                           path,
      const std::shared_ptr<const internal::NcclCommunicator> &communicator);

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
    // The ranks and the segments of the ghost entries and of the packed
    // imports, in the partitioner's order of ghost_targets() and
    // import_targets().
    std::vector<unsigned int> ghost_ranks, import_ranks;
    std::vector<std::size_t>  ghost_offsets, import_offsets;
    // The NCCL communicator of the partitioner's (nccl path only).
    std::shared_ptr<const internal::NcclCommunicator> nccl;
    mutable bool                                      nccl_in_flight = false;
    ReductionWorkspace                                workspace;
  };
} // namespace GPUAssembly

#endif
