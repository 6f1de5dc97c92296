// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>

#include <gpu_assembly/distributed/distributed_jacobi_cg.h>

#include <cmath>
#include <limits>
#include <string>

namespace GPUAssembly
{
  template <typename Number>
  typename DistributedJacobiCG<Number>::Result
  DistributedJacobiCG<Number>::solve(const DistributedDeviceMatrix<Number> &A,
                                     DistributedDeviceVector<Number>       &x,
                                     const DistributedDeviceVector<Number> &b,
                                     const double       relative_tolerance,
                                     const unsigned int max_iterations)
  {
    const auto &partitioner = A.get_partitioner();
    AssertThrow(partitioner,
                dealii::ExcMessage(
                  "DistributedJacobiCG::solve(): the matrix is empty; "
                  "reinit() it first."));
    AssertThrow(b.get_partitioner() &&
                  (b.get_partitioner() == partitioner ||
                   b.get_partitioner()->is_compatible(*partitioner)) &&
                  b.stores_on_device() == A.stores_on_device(),
                dealii::ExcMessage(
                  "DistributedJacobiCG::solve(): the right-hand side does "
                  "not have the matrix's layout (reinit() it with "
                  "A.get_partitioner()) or storage (host or device)."));
    AssertThrow(relative_tolerance >= 0 && std::isfinite(relative_tolerance),
                dealii::ExcMessage(
                  "DistributedJacobiCG::solve(): the relative tolerance must "
                  "be finite and not negative."));
    const bool device      = A.stores_on_device();
    const auto same_layout = [&](const DistributedDeviceVector<Number> &v) {
      return v.get_partitioner() == partitioner &&
             v.stores_on_device() == device &&
             v.get_additional_data().force_host_staging ==
               A.get_additional_data().force_host_staging;
    };
    if (!same_layout(x))
      x.reinit(partitioner, A.get_additional_data());
    for (DistributedDeviceVector<Number> *v :
         {&r, &z, &p, &q, &inverse_diagonal})
      if (!same_layout(*v))
        v->reinit(partitioner, A.get_additional_data());
    workspace.reinit(device,
                     device ? 2 * internal::ResidentKernels::max_blocks + 2 :
                              0);
    internal::ResidentKernels::Workspace ws;
    if (device)
      {
        ws.partial = workspace.data();
        ws.result =
          workspace.data() + 2 * internal::ResidentKernels::max_blocks;
      }
    const MPI_Comm     comm = partitioner->get_mpi_communicator();
    const unsigned int n    = partitioner->locally_owned_size();
    const auto         sum2 = [comm](double(&sums)[2]) {
      const int ierr =
        MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
      AssertThrowMPI(ierr);
    };

    A.compute_inverse_diagonal(inverse_diagonal);
    double sums[2];
    internal::ResidentKernels::cg_start(device,
                                        b.data(),
                                        inverse_diagonal.data(),
                                        x.data(),
                                        r.data(),
                                        z.data(),
                                        p.data(),
                                        n,
                                        ws,
                                        sums);
    sum2(sums);
    double rz = sums[0];

    Result result;
    result.initial_residual = std::sqrt(sums[1]);
    result.final_residual   = result.initial_residual;
    const double tolerance  = relative_tolerance * result.initial_residual;
    result.converged        = result.final_residual <= tolerance;
    while (!result.converged && result.iterations < max_iterations &&
           std::isfinite(result.final_residual))
      {
        A.vmult(q, p);
        const double pq = dealii::Utilities::MPI::sum(
          internal::ResidentKernels::dot(device, p.data(), q.data(), n, ws),
          comm);
        // As deal.II's SolverCG, go on where p.Ap < 0: a Newton tangent far
        // from equilibrium may be indefinite, and CG mostly converges on it
        // all the same. A breakdown ends the solve with a residual that is
        // not finite, which callers read as CG having failed.
        if (pq == 0 || !std::isfinite(pq))
          {
            result.final_residual = std::numeric_limits<double>::quiet_NaN();
            break;
          }
        const double alpha = rz / pq;
        internal::ResidentKernels::cg_update(device,
                                             alpha,
                                             p.data(),
                                             q.data(),
                                             inverse_diagonal.data(),
                                             x.data(),
                                             r.data(),
                                             z.data(),
                                             n,
                                             ws,
                                             sums);
        sum2(sums);
        ++result.iterations;
        result.final_residual = std::sqrt(sums[1]);
        result.converged      = result.final_residual <= tolerance;
        if (result.converged)
          break;
        const double beta = sums[0] / rz;
        rz                = sums[0];
        internal::ResidentKernels::cg_direction(device,
                                                beta,
                                                z.data(),
                                                p.data(),
                                                n);
      }
    return result;
  }



  template class DistributedJacobiCG<float>;
  template class DistributedJacobiCG<double>;
} // namespace GPUAssembly
