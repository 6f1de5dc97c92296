// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_distributed_jacobi_cg_h
#define gpu_assembly_distributed_distributed_jacobi_cg_h

#include <gpu_assembly/distributed/distributed_device_matrix.h>
#include <gpu_assembly/distributed/distributed_device_vector.h>
#include <gpu_assembly/lac/point_block_jacobi.h>
#include <gpu_assembly/lac/preconditioned_cg.h>

#include <string>

namespace GPUAssembly
{
  /**
   * The operations PreconditionedCG, ChebyshevJacobi and PointBlockJacobi
   * need of the resident distributed classes: loops over the owned entries
   * where the vectors store them, the sums reduced over the ranks. The
   * plugin instantiates the device loops of the bodies its solvers use.
   */
  template <typename Number>
  void
  cg_reinit(const DistributedDeviceMatrix<Number> &A,
            DistributedDeviceVector<Number>       &v)
  {
    if (v.get_partitioner() != A.get_partitioner() ||
        v.stores_on_device() != A.stores_on_device() ||
        v.get_halo_path() != A.get_halo_path())
      {
        // The matrix's path, not its request: no new choice to make.
        auto data      = A.get_additional_data();
        data.halo_path = A.get_halo_path();
        v.reinit(A.get_partitioner(), data);
      }
  }

  template <typename Number, typename Body>
  void
  cg_for_each(const DistributedDeviceVector<Number> &v, const Body &body)
  {
    for_each_index(v.stores_on_device(), v.locally_owned_size(), body);
  }

  template <typename Number, unsigned int n_sums, typename Body>
  void
  cg_sum(const DistributedDeviceVector<Number> &v,
         const Body                            &body,
         double (&sums)[n_sums])
  {
    v.sum_over_owned(body, sums);
  }

  template <typename Number>
  void
  cg_inverse_diagonal(const DistributedDeviceMatrix<Number> &A,
                      DistributedDeviceVector<Number>       &inverse_diagonal)
  {
    A.compute_inverse_diagonal(inverse_diagonal);
  }

  template <typename Number>
  CSRArrays<Number>
  cg_csr(const DistributedDeviceMatrix<Number> &A)
  {
    return {A.row_offsets_data(),
            A.column_indices_data(),
            A.values_data(),
            A.m(),
            A.stores_on_device()};
  }

  template <typename Number>
  void
  cg_global_range(const DistributedDeviceVector<Number> &v,
                  unsigned long long                    &first,
                  unsigned long long                    &n)
  {
    first = v.get_partitioner()->local_range().first;
    n     = v.get_partitioner()->size();
  }



  namespace internal
  {
    /**
     * Throws unless @p A has been reinit()ed and @p b has its layout and
     * storage; @p solver names the caller in the message.
     */
    template <typename Number>
    void
    check_cg_system(const DistributedDeviceMatrix<Number> &A,
                    const DistributedDeviceVector<Number> &b,
                    const std::string                     &solver)
    {
      const auto &partitioner = A.get_partitioner();
      AssertThrow(partitioner,
                  dealii::ExcMessage(solver + "::solve(): the matrix is empty; "
                                              "reinit() it first."));
      AssertThrow(b.get_partitioner() &&
                    (b.get_partitioner() == partitioner ||
                     b.get_partitioner()->is_compatible(*partitioner)) &&
                    b.stores_on_device() == A.stores_on_device(),
                  dealii::ExcMessage(
                    solver +
                    "::solve(): the right-hand side does not have the "
                    "matrix's layout (reinit() it with A.get_partitioner()) "
                    "or storage (host or device)."));
    }
  } // namespace internal



  /**
   * Conjugate gradients preconditioned with the matrix diagonal (Jacobi) on
   * a DistributedDeviceMatrix and DistributedDeviceVectors: PreconditionedCG
   * with PointJacobi. Every vector
   * operation runs where the objects store their entries (device, or host
   * in host mode), the SpMV updates the halo of the search direction
   * (DistributedDeviceMatrix::vmult()), and each iteration makes two
   * global reductions with MPI_Allreduce (p.q, then r.z and r.r together).
   * Sums are accumulated in double in a fixed order on each rank, so a
   * solve is reproducible for a fixed number of ranks.
   *
   * It is the iteration of deal.II's SolverCG with
   * TrilinosWrappers::PreconditionJacobi: x_0 = 0, and stop when
   * ||r|| <= relative_tolerance ||b|| (the unpreconditioned residual); the
   * same iteration as DeviceJacobiCG's on one GPU (preconditioned_cg.h).
   *
   * Usage with DistributedAssembler (device path; host mode alike with
   * use_device = false in both AdditionalData):
   * @code
   * DoFHandlerAdapter<dim> adapter(mapping, dof_handler,
   *                                quadrature, constraints);
   * DistributedDeviceMatrix<double>::AdditionalData storage;
   * storage.use_device = true;
   * DistributedDeviceMatrix<double> A;
   * A.reinit(adapter, storage);
   * DistributedDeviceVector<double> b, x;
   * b.reinit(A.get_partitioner(), storage);
   * x.reinit(A.get_partitioner(), storage);
   *
   * DistributedAssembler<dim, double>::AdditionalData data;
   * data.use_device    = true;
   * data.device.method = AssemblyMethod::global_nz;
   * DistributedAssembler<dim, double> assembler;
   * assembler.reinit(adapter, A, b, data);
   * assembler.assemble(kernel, A, b, nodal_data);
   *
   * DistributedJacobiCG<double> cg;
   * const auto result = cg.solve(A, x, b, 1e-8, 1000);
   * AssertThrow(result.converged, ExcMessage("CG did not converge"));
   * x.copy_locally_owned_to(solution); // a TrilinosWrappers::MPI::Vector
   * @endcode
   *
   * Instantiated for float and double.
   */
  template <typename Number>
  class DistributedJacobiCG
  {
  public:
    using Result = CGResult;

    /**
     * Solve A x = b from x = 0. @p b must have A's partitioner and storage;
     * @p x is reinit()ed to them if it has not. Work vectors are kept for
     * the next solve of the same layout. Does not throw when
     * @p max_iterations is reached: Result::converged says. As deal.II's
     * SolverCG it goes on where p.Ap < 0 (an indefinite matrix); where
     * p.Ap is zero or not finite it stops with Result::final_residual not
     * finite. Collective.
     */
    Result
    solve(const DistributedDeviceMatrix<Number> &A,
          DistributedDeviceVector<Number>       &x,
          const DistributedDeviceVector<Number> &b,
          const double                           relative_tolerance,
          const unsigned int                     max_iterations);

  private:
    PreconditionedCG<DistributedDeviceMatrix<Number>,
                     DistributedDeviceVector<Number>,
                     PointJacobi<Number>>
                                    cg;
    DistributedDeviceVector<Number> inverse_diagonal;
  };
} // namespace GPUAssembly

#endif
