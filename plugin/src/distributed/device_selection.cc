// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/distributed/device_selection.h>

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
} // namespace GPUAssembly
