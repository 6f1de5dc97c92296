// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_device_preconditioned_cg_h
#define gpu_assembly_lac_device_preconditioned_cg_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/lac/cg_solver.h>
#include <gpu_assembly/lac/device_csr_matrix.h>
#include <gpu_assembly/lac/device_solver.h>
#include <gpu_assembly/lac/device_vector.h>
#include <gpu_assembly/lac/index_loops.h>

#include <cstddef>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * A vector of DevicePreconditionedCG: device entries, its own or a
     * caller's DeviceVector, and the workspace of its sums.
     */
    template <typename Number>
    class DeviceCGVector
    {
    public:
      DeviceCGVector() = default;

      /// A view of @p vector.
      DeviceCGVector(const DeviceVector<Number> &vector,
                     const ReductionWorkspace   &workspace)
        : external(const_cast<DeviceVector<Number> *>(&vector))
        , workspace(&workspace)
      {}

      DeviceVector<Number> &
      vector() const
      {
        return external != nullptr ? *external : storage;
      }

      Number *
      data()
      {
        return vector().data();
      }

      const Number *
      data() const
      {
        return vector().data();
      }

      std::size_t
      size() const
      {
        return vector().size();
      }

      const ReductionWorkspace &
      get_workspace() const
      {
        return *workspace;
      }

      /// @p n entries; sums with @p new_workspace.
      void
      reinit(const std::size_t n, const ReductionWorkspace &new_workspace)
      {
        workspace = &new_workspace;
        if (vector().size() != n)
          vector().reinit(n);
      }

      double
      dot(const DeviceCGVector &other) const
      {
        double sums[1];
        sum_over_indices(true,
                         size(),
                         *workspace,
                         DotProduct<Number>{data(), other.data()},
                         sums);
        return sums[0];
      }

    private:
      DeviceVector<Number>        *external = nullptr;
      mutable DeviceVector<Number> storage;
      const ReductionWorkspace    *workspace = nullptr;
    };

    /// The matrix of DevicePreconditionedCG: a DeviceCSRMatrix and the
    /// workspace of the sums.
    template <typename Number>
    struct DeviceCGMatrix
    {
      const DeviceCSRMatrix<Number> *matrix    = nullptr;
      const ReductionWorkspace      *workspace = nullptr;

      /// dst = A src (cuSPARSE's CSR algorithm 1, bitwise reproducible).
      void
      vmult(DeviceCGVector<Number>       &dst,
            const DeviceCGVector<Number> &src) const
      {
        matrix->vmult(dst.vector(), src.vector());
      }
    };

    // The operations PreconditionedCG, ChebyshevJacobi and PointBlockJacobi
    // need, on one GPU.
    template <typename Number>
    void
    cg_reinit(const DeviceCGMatrix<Number> &A, DeviceCGVector<Number> &v)
    {
      v.reinit(A.matrix->m(), *A.workspace);
    }

    template <typename Number, typename Body>
    void
    cg_for_each(const DeviceCGVector<Number> &v, const Body &body)
    {
      for_each_index(true, v.size(), body);
    }

    template <typename Number, unsigned int n_sums, typename Body>
    void
    cg_sum(const DeviceCGVector<Number> &v,
           const Body                   &body,
           double (&sums)[n_sums])
    {
      sum_over_indices(true, v.size(), v.get_workspace(), body, sums);
    }

    template <typename Number>
    CSRArrays<Number>
    cg_csr(const DeviceCGMatrix<Number> &A)
    {
      return {A.matrix->get_row_offsets().data(),
              A.matrix->get_column_indices().data(),
              A.matrix->get_values().data(),
              A.matrix->m(),
              true};
    }

    template <typename Number>
    void
    cg_inverse_diagonal(const DeviceCGMatrix<Number> &A,
                        DeviceCGVector<Number>       &inverse_diagonal)
    {
      const CSRArrays<Number> csr = cg_csr(A);
      for_each_index(true,
                     csr.n_rows,
                     CSRInverseDiagonal<Number>{csr.row_offsets,
                                                csr.columns,
                                                csr.values,
                                                inverse_diagonal.data()});
    }

    template <typename Number>
    void
    cg_global_range(const DeviceCGVector<Number> &v,
                    unsigned long long           &first,
                    unsigned long long           &n)
    {
      first = 0;
      n     = v.size();
    }
  } // namespace internal



  /**
   * Preconditioned CG on one GPU for a DeviceCSRMatrix as assembled
   * (constrained rows with their diagonal alone), with the preconditioner
   * of AdditionalData::preconditioner:
   *
   * - jacobi: DeviceJacobiCG, the whole solve one CUDA graph, with the
   *   inverse diagonal computed on the device (CSRInverseDiagonal);
   * - chebyshev (ChebyshevJacobi, deal.II's PreconditionChebyshev with a
   *   point Jacobi diagonal) and point_block_jacobi (PointBlockJacobi on the
   *   mesh's nodes): PreconditionedCG, the iteration
   *   DistributedPreconditionedCG runs on the resident distributed matrix,
   *   every vector operation a device kernel (the bodies of
   *   preconditioned_cg.h, chebyshev.h and point_block_jacobi.h) and the
   *   SpMV cuSPARSE's (CSR algorithm 1, deterministic), the iteration
   *   driven from the host, which reads one or two sums per iteration.
   *
   * Both run the same per-index steps and scalar recurrence (CGScalars).
   * Sums are accumulated in double in an order that depends on the size
   * alone, so a solve is bitwise reproducible. Each solve sets the
   * preconditioner up for the matrix's current values (the inverse
   * diagonal; Chebyshev's eigenvalue estimate, eig_cg_n_iterations CG
   * steps; the block inverses, one pass over the matrix), so a solve after
   * a re-assembly needs nothing else.
   *
   * @code
   * DevicePreconditionedCG<double>::AdditionalData data;
   * data.preconditioner = CGPreconditioner::point_block_jacobi;
   * DevicePreconditionedCG<double> cg;
   * cg.reinit(arrays, matrix, data);   // arrays = adapter.get_arrays()
   * CGControl control;
   * control.relative_tolerance = 1e-8;
   * const CGResult result = cg.solve(matrix, x, rhs, control);
   * @endcode
   *
   * Instantiated for float and double.
   */
  template <typename Number>
  class DevicePreconditionedCG
  {
  public:
    using AdditionalData = CGSolverParameters;
    using Matrix         = internal::DeviceCGMatrix<Number>;
    using Vector         = internal::DeviceCGVector<Number>;

    DevicePreconditionedCG();

    /**
     * Choose the preconditioner; for point_block_jacobi the blocks of the
     * nodes of @p arrays (MeshArrays::node_dofs) for the rows of @p A
     * (reinit()ed from the same arrays). Again after every change of the
     * mesh or the DoFs.
     */
    void
    reinit(const MeshArrays              &arrays,
           const DeviceCSRMatrix<Number> &A,
           const AdditionalData          &additional_data = AdditionalData());

    /**
     * Set the preconditioner up for @p A's values and solve A x = b from
     * x = 0 (@p x resized to A's rows). Does not throw where the
     * iteration limit is reached: CGResult::converged says.
     */
    CGResult
    solve(const DeviceCSRMatrix<Number> &A,
          DeviceVector<Number>          &x,
          const DeviceVector<Number>    &b,
          const CGControl               &control);

    const AdditionalData &
    get_additional_data() const
    {
      return data;
    }

    /// The preconditioners (Chebyshev's schedule holds its eigenvalue
    /// estimate; the block Jacobi's blocks and inverses).
    const CGSolver<Matrix, Vector> &
    get_solver() const
    {
      return solver;
    }

  private:
    ReductionWorkspace       workspace;
    AdditionalData           data;
    Matrix                   matrix;
    CGSolver<Matrix, Vector> solver;
    DeviceVector<Number>     inverse_diagonal;
    DeviceJacobiCG<Number>   jacobi_cg;
  };
} // namespace GPUAssembly

#endif
