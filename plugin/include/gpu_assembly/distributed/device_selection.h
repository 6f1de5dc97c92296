// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_device_selection_h
#define gpu_assembly_distributed_device_selection_h

#include <deal.II/base/mpi.h>

#include <string>

namespace GPUAssembly
{
  /**
   * A GPU per rank: makes device (node rank) mod (number of devices) the
   * current CUDA device of the calling thread, where the node rank is the
   * rank among the ranks of @p communicator on the same machine (from
   * MPI_Comm_split_type with MPI_COMM_TYPE_SHARED). With more ranks than
   * GPUs on a machine, several ranks share one. Collective; call it before
   * any other CUDA work of the rank. Returns the device chosen, or -1 where
   * the machine has no CUDA device (the host path then runs).
   */
  int
  select_device_by_node_rank(const MPI_Comm communicator);

  /**
   * The number of cores the calling process may run on: the cores of its
   * CPU affinity mask (where the system has none, every core).
   */
  unsigned int
  n_cores_available();

  /**
   * An empty string where every rank of @p communicator may run on at least
   * as many cores as it has host threads (MultithreadInfo::n_threads()),
   * otherwise a note that names the ranks' fewest cores and how to start
   * mpirun so that the threads get theirs: MPI launchers often bind each
   * rank to one core (OpenMPI does when it starts one or two ranks), and
   * then the threaded set-up and host path run on that one core. Collective.
   */
  std::string
  describe_thread_binding(const MPI_Comm communicator);

  namespace internal
  {
    /// cudaSetDevice(@p index), checked.
    void
    set_cuda_device(const int index);
  } // namespace internal
} // namespace GPUAssembly

#endif
