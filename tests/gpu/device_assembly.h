// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_gpu_device_assembly_h
#define gpu_assembly_tests_gpu_device_assembly_h

#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/lac/device_csr_matrix.h>
#include <gpu_assembly/lac/device_vector.h>

#include <vector>

namespace Testing
{
  /// The assembler's data for @p method: with @p node_pairs for SharedNZ,
  /// @p symmetric element data for GlobalNZ.
  template <int dim, typename Number>
  typename GPUAssembly::DeviceAssembler<dim, Number>::AdditionalData
  assembler_data(const GPUAssembly::AssemblyMethod method,
                 const bool                        node_pairs,
                 const bool                        symmetric)
  {
    typename GPUAssembly::DeviceAssembler<dim, Number>::AdditionalData data;
    data.method               = method;
    data.shared_nz.node_pairs = node_pairs;
    data.global_nz.symmetric  = symmetric;
    return data;
  }

  /**
   * Assembles @p kernel on the device with the assembler's @p data,
   * @p n_repetitions times into the same matrix and right-hand side (as a
   * time loop re-assembles), and copies the matrix values and the
   * right-hand side to @p values and @p rhs.
   */
  template <int dim, typename Number, class Kernel>
  void
  device_assemble(
    const GPUAssembly::MeshArrays &arrays,
    const typename GPUAssembly::DeviceAssembler<dim, Number>::AdditionalData
                        &data,
    const Kernel        &kernel,
    const unsigned int   n_repetitions,
    std::vector<Number> &values,
    std::vector<Number> &rhs)
  {
    GPUAssembly::DeviceAssembler<dim, Number> assembler;
    assembler.reinit(arrays, data);
    GPUAssembly::DeviceCSRMatrix<Number> matrix;
    matrix.reinit(arrays);
    GPUAssembly::DeviceVector<Number> device_rhs(arrays.n_dofs);
    GPUAssembly::DeviceVector<Number> nodal(
      std::vector<Number>(arrays.nodal_coordinates.begin(),
                          arrays.nodal_coordinates.end()));
    for (unsigned int i = 0; i < n_repetitions; ++i)
      assembler.assemble(kernel, nodal, matrix, device_rhs);
    matrix.get_values().copy_to_host(values);
    device_rhs.copy_to_host(rhs);
  }
} // namespace Testing

#endif
