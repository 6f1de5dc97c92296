// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/distributed/resident_operations.h>

#include <cmath>
#include <string>
#include <type_traits>
#include <utility>

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#  include <mpi-ext.h>
#endif

#include "messages.h"
#include "nccl_communicator.h"

namespace GPUAssembly
{
  namespace
  {
    // Messages of the halo exchange; the vectors' communicator is the
    // program's, and the messages of one pair of ranks arrive in order, so
    // one tag serves all vectors.
    constexpr int halo_tag = 18671;
  } // namespace



  std::string
  to_string(const HaloPath path)
  {
    switch (path)
      {
        case HaloPath::automatic:
          return "automatic";
        case HaloPath::host_memory:
          return "host memory";
        case HaloPath::staged_through_host:
          return "host staging";
        case HaloPath::nccl:
          return "NCCL";
        case HaloPath::cuda_aware_mpi:
          return "CUDA-aware MPI";
      }
    return "unknown";
  }



  namespace
  {
    // The values of halo_path_from_string() and the paths they name.
    const std::pair<const char *, HaloPath> halo_path_names[] = {
      {"auto", HaloPath::automatic},
      {"host", HaloPath::staged_through_host},
      {"nccl", HaloPath::nccl},
      {"cuda-aware-mpi", HaloPath::cuda_aware_mpi}};
  } // namespace



  std::string
  halo_path_choices()
  {
    std::string choices;
    for (const auto &[name, path] : halo_path_names)
      choices += (choices.empty() ? "" : "|") + std::string(name);
    return choices;
  }



  HaloPath
  halo_path_from_string(const std::string &name)
  {
    for (const auto &[known, path] : halo_path_names)
      if (name == known)
        return path;
    AssertThrow(false,
                dealii::ExcMessage("unknown exchange path '" + name +
                                   "'; choose one of " + halo_path_choices() +
                                   "."));
    return HaloPath::automatic;
  }



  bool
  mpi_supports_device_memory()
  {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    // The compile-time macro says what the headers were built with; the
    // library actually loaded answers at run time.
    return MPIX_Query_cuda_support() == 1;
#else
    return false;
#endif
  }



  bool
  nccl_available()
  {
    return internal::NcclTransport::built();
  }



  HaloPath
  choose_halo_path(const bool     use_device,
                   const HaloPath requested,
                   const MPI_Comm communicator)
  {
    std::shared_ptr<const internal::NcclCommunicator> nccl;
    return internal::choose_halo_path(use_device,
                                      requested,
                                      communicator,
                                      nccl);
  }



  HaloPath
  internal::choose_halo_path(
    const bool                                         use_device,
    const HaloPath                                     requested,
    const MPI_Comm                                     communicator,
    std::shared_ptr<const internal::NcclCommunicator> &nccl)
  {
    nccl.reset();
    const std::string asked =
      "the exchange path " + to_string(requested) + " was asked for, but ";
    if (!use_device)
      {
        AssertThrow(requested != HaloPath::nccl &&
                      requested != HaloPath::cuda_aware_mpi,
                    ExcUnsupportedInput(
                      asked +
                      "the entries are in host memory (use_device = false): "
                      "NCCL and CUDA-aware MPI exchange device memory. Ask "
                      "for the automatic or the host path, or keep the "
                      "entries on the device."));
        return HaloPath::host_memory;
      }
    // What the build and the MPI library decide comes first: it holds
    // with or without a device.
    AssertThrow(requested != HaloPath::nccl || nccl_available(),
                ExcUnsupportedInput(
                  asked +
                  "the plugin was built without NCCL "
                  "(GPU_ASSEMBLY_WITH_NCCL=OFF); configure it with "
                  "-DGPU_ASSEMBLY_WITH_NCCL=ON (NCCL from the CUDA toolkit, "
                  "NCCL_DIR or pip install nvidia-nccl-cu13), or ask for "
                  "host staging."));
    AssertThrow(requested != HaloPath::cuda_aware_mpi ||
                  mpi_supports_device_memory(),
                ExcUnsupportedInput(
                  asked + "the MPI library does not report CUDA support "
                          "(MPIX_Query_cuda_support()); ask for NCCL or host "
                          "staging."));
    AssertThrow(n_cuda_devices() > 0,
                ExcUnsupportedInput(
                  "device entries (use_device) are asked for, but this rank "
                  "finds no CUDA device; keep the entries in host memory "
                  "(use_device = false)."));
    switch (requested)
      {
        case HaloPath::host_memory:
        case HaloPath::staged_through_host:
          return HaloPath::staged_through_host;
        case HaloPath::cuda_aware_mpi:
          return HaloPath::cuda_aware_mpi;
        case HaloPath::nccl:
          nccl = internal::NcclCommunicator::get(communicator);
          AssertThrow(nccl->usable(),
                      ExcUnsupportedInput(asked + nccl->why_not() +
                                          "; or ask for host staging."));
          return HaloPath::nccl;
        case HaloPath::automatic:
          if (nccl_available())
            {
              nccl = internal::NcclCommunicator::get(communicator);
              if (nccl->usable())
                return HaloPath::nccl;
              nccl.reset();
            }
          return HaloPath::staged_through_host;
      }
    return HaloPath::staged_through_host;
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::reinit(
    const std::shared_ptr<const dealii::Utilities::MPI::Partitioner>
                         &new_partitioner,
    const AdditionalData &data)
  {
    AssertThrow(new_partitioner,
                dealii::ExcMessage("DistributedDeviceVector::reinit() needs a "
                                   "partitioner."));
    AssertThrow(!data.use_device || n_cuda_devices() > 0,
                ExcUnsupportedInput(
                  "DistributedDeviceVector: use_device is set, but this rank "
                  "finds no CUDA device; keep the vector in host memory "
                  "(use_device = false)."));
    std::shared_ptr<const internal::NcclCommunicator> communicator;
    const HaloPath                                    path =
      internal::choose_halo_path(data.use_device,
                                 data.halo_path,
                                 new_partitioner->get_mpi_communicator(),
                                 communicator);
    reinit(new_partitioner, data, path, communicator);
    // NCCL's connections for this layout's ghost updates, made here
    // rather than by the first update (the entries are zero again after).
    if (halo_path == HaloPath::nccl)
      {
        nccl->connect(send_buffer.data(),
                      import_ranks,
                      import_offsets,
                      values.data() + n_owned,
                      ghost_ranks,
                      ghost_offsets);
        zero_out_ghost_values();
      }
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::reinit(
    const std::shared_ptr<const dealii::Utilities::MPI::Partitioner>
                                                            &new_partitioner,
    const AdditionalData                                    &data,
    const HaloPath                                           path,
    const std::shared_ptr<const internal::NcclCommunicator> &communicator)
  {
    AssertThrow(requests.empty() && !nccl_in_flight,
                dealii::ExcMessage("DistributedDeviceVector::reinit() while "
                                   "a ghost update is in flight; call "
                                   "update_ghost_values_finish() first."));
    partitioner     = new_partitioner;
    additional_data = data;
    halo_path       = path;
    n_owned         = partitioner->locally_owned_size();
    n_ghosts        = partitioner->n_ghost_indices();
    values.reinit(data.use_device, std::size_t(n_owned) + n_ghosts);
    nccl = communicator;

    std::vector<int> imports;
    imports.reserve(partitioner->n_import_indices());
    for (const auto &[first, last] : partitioner->import_indices())
      for (unsigned int i = first; i < last; ++i)
        imports.push_back(static_cast<int>(i));
    import_list.reinit(data.use_device, imports);
    send_buffer.reinit(data.use_device, imports.size());
    if (halo_path == HaloPath::staged_through_host)
      {
        pinned_send.reinit(imports.size());
        pinned_receive.reinit(n_ghosts);
      }
    else
      {
        pinned_send.reinit(0);
        pinned_receive.reinit(0);
      }
    workspace.reinit(data.use_device);

    // The messages' ranks and offsets in the order of the partitioner's
    // targets, for NCCL's grouped sends and receives.
    const auto segments = [](const auto                &targets,
                             std::vector<unsigned int> &ranks,
                             std::vector<std::size_t>  &offsets) {
      ranks.clear();
      offsets.assign(1, 0);
      for (const auto &[rank, count] : targets)
        {
          ranks.push_back(rank);
          offsets.push_back(offsets.back() + count);
        }
    };
    segments(partitioner->ghost_targets(), ghost_ranks, ghost_offsets);
    segments(partitioner->import_targets(), import_ranks, import_offsets);
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::reinit(const DistributedDeviceVector &other)
  {
    reinit(other.partitioner,
           other.additional_data,
           other.halo_path,
           other.nccl);
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::check_compatible(
    const DistributedDeviceVector &other) const
  {
    AssertThrow(partitioner && other.partitioner &&
                  (partitioner == other.partitioner ||
                   partitioner->is_compatible(*other.partitioner)) &&
                  stores_on_device() == other.stores_on_device(),
                dealii::ExcMessage(
                  "two DistributedDeviceVectors of different layouts or "
                  "storage (host and device) are combined; reinit() one from "
                  "the other."));
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::set_zero()
  {
    values.set_zero();
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::update_ghost_values_start() const
  {
    Assert(partitioner, dealii::ExcNotInitialized());
    AssertThrow(requests.empty() && !nccl_in_flight,
                dealii::ExcMessage("update_ghost_values_start() twice without "
                                   "update_ghost_values_finish() between."));
    const auto pack = [this]() {
      for_each_index(stores_on_device(),
                     import_list.size(),
                     ResidentOperations::Gather<Number>{values.data(),
                                                        import_list.data(),
                                                        send_buffer.data()});
    };
    if (halo_path == HaloPath::nccl)
      {
        pack();
        // Enqueued after the pack kernel and after the kernels still
        // reading the ghost entries (the last SpMV's rows with ghost
        // columns), all on the default stream: no wait on the host.
        nccl->start_exchange(send_buffer.data(),
                             import_ranks,
                             import_offsets,
                             values.data() + n_owned,
                             ghost_ranks,
                             ghost_offsets);
        nccl_in_flight = true;
        return;
      }

    const MPI_Comm comm   = partitioner->get_mpi_communicator();
    const bool     staged = halo_path == HaloPath::staged_through_host;
    requests.reserve(ghost_ranks.size() + import_ranks.size());
    // MPI writes the ghost entries directly: kernels still reading them
    // (the last SpMV's rows with ghost columns) must be done.
    if (halo_path == HaloPath::cuda_aware_mpi)
      internal::DeviceMemory::synchronize();
    internal::post_messages(MPI_Irecv,
                            staged ? pinned_receive.data() :
                                     values.data() + n_owned,
                            ghost_ranks,
                            ghost_offsets,
                            halo_tag,
                            comm,
                            requests);

    pack();
    const Number *send = send_buffer.data();
    if (staged)
      {
        // A synchronous copy: it also waits for the pack kernel.
        internal::DeviceMemory::copy_to_host(pinned_send.data(),
                                             send_buffer.data(),
                                             import_list.size() *
                                               sizeof(Number));
        send = pinned_send.data();
      }
    else if (halo_path == HaloPath::cuda_aware_mpi)
      internal::DeviceMemory::synchronize();
    internal::post_messages(MPI_Isend,
                            send,
                            import_ranks,
                            import_offsets,
                            halo_tag,
                            comm,
                            requests);
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::update_ghost_values_finish() const
  {
    if (nccl_in_flight)
      {
        nccl->wait();
        nccl_in_flight = false;
        return;
      }
    if (!requests.empty())
      {
        internal::wait_for_all(requests);
        requests.clear();
      }
    if (halo_path == HaloPath::staged_through_host)
      internal::DeviceMemory::copy_to_device(values.data() + n_owned,
                                             pinned_receive.data(),
                                             n_ghosts * sizeof(Number));
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::update_ghost_values() const
  {
    update_ghost_values_start();
    update_ghost_values_finish();
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::zero_out_ghost_values()
  {
    if (stores_on_device())
      internal::DeviceMemory::set_zero(values.data() + n_owned,
                                       n_ghosts * sizeof(Number));
    else
      std::fill(values.data() + n_owned,
                values.data() + n_owned + n_ghosts,
                Number());
  }



  template <typename Number>
  double
  DistributedDeviceVector<Number>::dot(
    const DistributedDeviceVector &other) const
  {
    check_compatible(other);
    double sum[1];
    sum_over_owned(ResidentOperations::Dot<Number>{values.data(),
                                                   other.values.data()},
                   sum);
    return sum[0];
  }



  template <typename Number>
  double
  DistributedDeviceVector<Number>::l2_norm() const
  {
    return std::sqrt(dot(*this));
  }



  namespace
  {
    template <typename Number>
    void
    copy_owned_in(const bool        on_device,
                  const double     *source,
                  const std::size_t n,
                  Number           *target)
    {
      if (!on_device && std::is_same_v<Number, double>)
        {
          std::copy(source, source + n, target);
          return;
        }
      std::vector<Number> converted(source, source + n);
      if (on_device)
        internal::DeviceMemory::copy_to_device(target,
                                               converted.data(),
                                               n * sizeof(Number));
      else
        std::copy(converted.begin(), converted.end(), target);
    }

    template <typename Number>
    void
    copy_owned_out(const bool        on_device,
                   const Number     *source,
                   const std::size_t n,
                   double           *target)
    {
      std::vector<Number> host(n);
      if (on_device)
        internal::DeviceMemory::copy_to_host(host.data(),
                                             source,
                                             n * sizeof(Number));
      else
        std::copy(source, source + n, host.begin());
      std::copy(host.begin(), host.end(), target);
    }

    // Throws unless the locally owned indices of @p vector (a deal.II or
    // Trilinos vector given to @p function) are those of @p partitioner,
    // and, if @p writable, @p vector has no ghost entries.
    template <typename VectorType>
    void
    check_owned_indices(
      const std::shared_ptr<const dealii::Utilities::MPI::Partitioner>
                        &partitioner,
      const VectorType  &vector,
      const std::string &function,
      const std::string &vector_kind,
      const bool         writable = false)
    {
      AssertThrow(partitioner &&
                    vector.locally_owned_elements() ==
                      partitioner->locally_owned_range() &&
                    !(writable && vector.has_ghost_elements()),
                  dealii::ExcMessage(
                    function + "(): the " + vector_kind +
                    " vector's locally owned indices are not this vector's" +
                    (writable ? ", or it has ghost entries (it must be "
                                "writable)." :
                                ".")));
    }
  } // namespace



  template <typename Number>
  void
  DistributedDeviceVector<Number>::copy_locally_owned_from(
    const dealii::LinearAlgebra::distributed::Vector<double> &vector)
  {
    check_owned_indices(partitioner,
                        vector,
                        "copy_locally_owned_from",
                        "deal.II");
    copy_owned_in(stores_on_device(), vector.begin(), n_owned, values.data());
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::copy_locally_owned_from(
    const dealii::TrilinosWrappers::MPI::Vector &vector)
  {
    check_owned_indices(partitioner,
                        vector,
                        "copy_locally_owned_from",
                        "Trilinos");
    std::vector<double> owned(n_owned);
    if (!vector.has_ghost_elements())
      std::copy(vector.begin(), vector.begin() + n_owned, owned.begin());
    else
      for (unsigned int i = 0; i < n_owned; ++i)
        owned[i] = vector(partitioner->local_to_global(i));
    copy_owned_in(stores_on_device(), owned.data(), n_owned, values.data());
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::copy_locally_owned_to(
    dealii::LinearAlgebra::distributed::Vector<double> &vector) const
  {
    check_owned_indices(partitioner,
                        vector,
                        "copy_locally_owned_to",
                        "deal.II");
    copy_owned_out(stores_on_device(), values.data(), n_owned, vector.begin());
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::copy_locally_owned_to(
    dealii::TrilinosWrappers::MPI::Vector &vector) const
  {
    check_owned_indices(partitioner,
                        vector,
                        "copy_locally_owned_to",
                        "Trilinos",
                        /*writable=*/true);
    copy_owned_out(stores_on_device(), values.data(), n_owned, vector.begin());
  }



  template <typename Number>
  void
  DistributedDeviceVector<Number>::copy_to_host(
    std::vector<Number> &local_values) const
  {
    values.copy_to_host(local_values);
  }



  template class DistributedDeviceVector<float>;
  template class DistributedDeviceVector<double>;
} // namespace GPUAssembly
