// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/multithread_info.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/distributed/device_selection.h>

#include <algorithm>
#include <thread>

#include <sched.h>

namespace GPUAssembly
{
  int
  select_device_by_node_rank(const MPI_Comm communicator)
  {
    MPI_Comm  node_communicator;
    const int rank = dealii::Utilities::MPI::this_mpi_process(communicator);
    int       ierr = MPI_Comm_split_type(communicator,
                                   MPI_COMM_TYPE_SHARED,
                                   rank,
                                   MPI_INFO_NULL,
                                   &node_communicator);
    AssertThrowMPI(ierr);
    const unsigned int node_rank =
      dealii::Utilities::MPI::this_mpi_process(node_communicator);
    ierr = MPI_Comm_free(&node_communicator);
    AssertThrowMPI(ierr);

    const unsigned int n_devices = n_cuda_devices();
    if (n_devices == 0)
      return -1;
    const int device = node_rank % n_devices;
    internal::set_cuda_device(device);
    return device;
  }



  unsigned int
  n_cores_available()
  {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof(mask), &mask) == 0)
      return std::max(1, CPU_COUNT(&mask));
    return std::max(1u, std::thread::hardware_concurrency());
  }



  std::string
  describe_thread_binding(const MPI_Comm communicator)
  {
    const unsigned int threads = dealii::MultithreadInfo::n_threads();
    const unsigned int fewest =
      dealii::Utilities::MPI::min(n_cores_available(), communicator);
    if (fewest >= threads)
      return "";
    return "Note: " + std::to_string(threads) +
           " host threads per rank, but a rank may run on only " +
           std::to_string(fewest) + " core" + (fewest > 1 ? "s" : "") +
           " (its CPU affinity), so the threaded set-up runs on " +
           (fewest > 1 ? "those" : "that one") +
           ". Start mpirun with '--bind-to none' (OpenMPI) or give each "
           "rank its cores, e.g. '--map-by slot:PE=" +
           std::to_string(threads) + "'.";
  }
} // namespace GPUAssembly
