// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_device_selection_h
#define gpu_assembly_distributed_device_selection_h

#include <deal.II/base/mpi.h>

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

  namespace internal
  {
    /// cudaSetDevice(@p index), checked.
    void
    set_cuda_device(const int index);
  } // namespace internal
} // namespace GPUAssembly

#endif
