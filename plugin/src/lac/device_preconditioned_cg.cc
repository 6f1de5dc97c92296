// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/device_preconditioned_cg.h>

#include <string>

namespace GPUAssembly
{
  template <typename Number>
  DevicePreconditionedCG<Number>::DevicePreconditionedCG()
  {
    workspace.reinit(true);
    matrix.workspace = &workspace;
  }



  template <typename Number>
  void
  DevicePreconditionedCG<Number>::reinit(const MeshArrays              &arrays,
                                         const DeviceCSRMatrix<Number> &A,
                                         const AdditionalData &additional_data)
  {
    additional_data.chebyshev.check();
    data          = additional_data;
    matrix.matrix = &A;
    if (data.preconditioner == CGPreconditioner::point_block_jacobi)
      solver.set_blocks(PointBlocks::make(arrays.node_dofs,
                                          arrays.layout.n_components,
                                          A.m(),
                                          [](const std::size_t dof) {
                                            return static_cast<long long>(dof);
                                          }),
                        matrix);
  }



  template <typename Number>
  CGResult
  DevicePreconditionedCG<Number>::solve(const DeviceCSRMatrix<Number> &A,
                                        DeviceVector<Number>          &x,
                                        const DeviceVector<Number>    &b,
                                        const CGControl               &control)
  {
    if (A.m() != b.size())
      internal::throw_error("DevicePreconditionedCG::solve(): the matrix has " +
                            std::to_string(A.m()) +
                            " rows, the right-hand side " +
                            std::to_string(b.size()) + " entries.");
    matrix.matrix = &A;
    if (data.preconditioner == CGPreconditioner::jacobi)
      {
        control.check();
        if (inverse_diagonal.size() != A.m())
          inverse_diagonal.reinit(A.m());
        Vector diagonal_view(inverse_diagonal, workspace);
        cg_inverse_diagonal(matrix, diagonal_view);
        return jacobi_cg.solve(A, inverse_diagonal, x, b, control);
      }
    if (x.size() != b.size())
      x.reinit(b.size());
    Vector x_view(x, workspace);
    return solver.solve(matrix, x_view, Vector(b, workspace), data, control);
  }



  template class DevicePreconditionedCG<float>;
  template class DevicePreconditionedCG<double>;
} // namespace GPUAssembly
