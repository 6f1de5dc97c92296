// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef apps_common_inverse_diagonal_h
#define apps_common_inverse_diagonal_h

#include <gpu_assembly/lac/device_csr_matrix.h>
#include <gpu_assembly/lac/device_vector.h>

namespace AppSolvers
{
  /**
   * d_i = 1 / A_ii on the device, the Jacobi preconditioner of
   * DeviceJacobiCG; 1 where a row has no diagonal entry or a zero one, so
   * that such a row is left unscaled rather than made infinite. Enqueued on
   * the default stream. Instantiated for float and double.
   */
  template <typename Number>
  void
  compute_inverse_diagonal(const GPUAssembly::DeviceCSRMatrix<Number> &A,
                           GPUAssembly::DeviceVector<Number> &inverse_diagonal);
} // namespace AppSolvers

#endif
