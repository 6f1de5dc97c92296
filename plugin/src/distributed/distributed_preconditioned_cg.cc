// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>

#include <gpu_assembly/distributed/distributed_preconditioned_cg.h>
#include <gpu_assembly/lac/index_loops.h>

#include <cmath>
#include <numeric>

namespace GPUAssembly
{
  std::string
  to_string(const CGPreconditioner preconditioner)
  {
    switch (preconditioner)
      {
        case CGPreconditioner::jacobi:
          return "jacobi";
        case CGPreconditioner::chebyshev:
          return "chebyshev";
        case CGPreconditioner::point_block_jacobi:
          return "point_block_jacobi";
      }
    return "unknown";
  }



  template <typename Number>
  void
  DistributedPointBlockJacobi<Number>::reinit(
    const PointBlocks                     &new_blocks,
    const DistributedDeviceMatrix<Number> &A)
  {
    AssertThrow(new_blocks.offsets.size() >= 1 &&
                  new_blocks.rows.size() == A.m() &&
                  static_cast<std::size_t>(new_blocks.offsets.back()) ==
                    new_blocks.rows.size() &&
                  new_blocks.block_size <= PointBlocks::max_block_size,
                dealii::ExcMessage(
                  "DistributedPointBlockJacobi::reinit(): the blocks hold " +
                  std::to_string(new_blocks.rows.size()) +
                  " rows, the matrix " + std::to_string(A.m()) +
                  " (or a block is larger than " +
                  std::to_string(PointBlocks::max_block_size) + ")."));
    blocks          = new_blocks;
    const bool here = A.stores_on_device();
    offsets.reinit(here, blocks.offsets);
    rows.reinit(here, blocks.rows);
    singular.reinit(here, blocks.n_blocks());
    inverses.reinit(here,
                    std::size_t(blocks.n_blocks()) * blocks.block_size *
                      blocks.block_size);
  }



  template <typename Number>
  unsigned int
  DistributedPointBlockJacobi<Number>::initialize(
    const DistributedDeviceMatrix<Number> &A)
  {
    AssertThrow(blocks.rows.size() == A.m() &&
                  offsets.on_device() == A.stores_on_device(),
                dealii::ExcMessage(
                  "DistributedPointBlockJacobi::initialize(): the blocks "
                  "were made for another matrix; reinit() them with this "
                  "one."));
    for_each_index(A.stores_on_device(),
                   blocks.n_blocks(),
                   PointBlockInverse<Number>{A.row_offsets_data(),
                                             A.column_indices_data(),
                                             A.values_data(),
                                             offsets.data(),
                                             rows.data(),
                                             blocks.block_size,
                                             inverses.data(),
                                             singular.data()});
    std::vector<int> flags;
    singular.copy_to_host(flags);
    const unsigned int n_singular =
      std::accumulate(flags.begin(), flags.end(), 0u);
    return dealii::Utilities::MPI::sum(
      n_singular,
      A.get_partitioner()->get_mpi_communicator());
  }



  template <typename Number>
  void
  DistributedPointBlockJacobi<Number>::vmult(
    DistributedDeviceVector<Number>       &z,
    const DistributedDeviceVector<Number> &r) const
  {
    for_each_index(z.stores_on_device(),
                   blocks.n_blocks(),
                   PointBlockApply<Number>{offsets.data(),
                                           rows.data(),
                                           blocks.block_size,
                                           inverses.data(),
                                           r.data(),
                                           z.data()});
  }



  template <typename Number>
  CGResult
  DistributedPreconditionedCG<Number>::solve(
    const DistributedDeviceMatrix<Number> &A,
    DistributedDeviceVector<Number>       &x,
    const DistributedDeviceVector<Number> &b,
    const CGControl                       &control)
  {
    const auto &partitioner = A.get_partitioner();
    AssertThrow(partitioner,
                dealii::ExcMessage(
                  "DistributedPreconditionedCG::solve(): the matrix is "
                  "empty; reinit() it first."));
    AssertThrow(b.get_partitioner() &&
                  (b.get_partitioner() == partitioner ||
                   b.get_partitioner()->is_compatible(*partitioner)) &&
                  b.stores_on_device() == A.stores_on_device(),
                dealii::ExcMessage(
                  "DistributedPreconditionedCG::solve(): the right-hand side "
                  "does not have the matrix's layout (reinit() it with "
                  "A.get_partitioner()) or storage (host or device)."));
    AssertThrow(control.relative_tolerance >= 0 &&
                  std::isfinite(control.relative_tolerance) &&
                  control.absolute_tolerance >= 0 &&
                  std::isfinite(control.absolute_tolerance),
                dealii::ExcMessage(
                  "DistributedPreconditionedCG::solve(): the tolerances must "
                  "be finite and not negative."));
    switch (data.preconditioner)
      {
        case CGPreconditioner::jacobi:
          cg_reinit(A, inverse_diagonal);
          A.compute_inverse_diagonal(inverse_diagonal);
          return jacobi_cg.solve(A,
                                 x,
                                 b,
                                 PointJacobi<Number>{inverse_diagonal.data()},
                                 control);
        case CGPreconditioner::chebyshev:
          chebyshev.initialize(A, data.chebyshev);
          return chebyshev_cg.solve(A, x, b, chebyshev, control);
        case CGPreconditioner::point_block_jacobi:
          AssertThrow(blocks_ready &&
                        block_jacobi.get_blocks().rows.size() == A.m(),
                      dealii::ExcMessage(
                        "DistributedPreconditionedCG::solve(): the point-block "
                        "Jacobi preconditioner needs the nodes: reinit() the "
                        "solver with the adapter and this matrix first."));
          block_jacobi.initialize(A);
          return block_jacobi_cg.solve(A, x, b, block_jacobi, control);
      }
    AssertThrow(false, dealii::ExcMessage("unknown CGPreconditioner"));
    return CGResult();
  }



  template class DistributedPointBlockJacobi<float>;
  template class DistributedPointBlockJacobi<double>;
  template class DistributedPreconditionedCG<float>;
  template class DistributedPreconditionedCG<double>;
} // namespace GPUAssembly
