// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_device_assembler_templates_cuh
#define gpu_assembly_engine_device_assembler_templates_cuh

// Definition of DeviceAssembler::assemble(), with the kernels of every
// method. Include this one header in a .cu file to instantiate assemble()
// for a kernel of your own:
//   template void GPUAssembly::DeviceAssembler<3, double>::assemble(
//     const MyKernel &, const DeviceVector<double> &,
//     DeviceCSRMatrix<double> &, DeviceVector<double> &, CUstream_st *) const;

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/constraints/kernels.cuh>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/element_stage_traits.h>
#include <gpu_assembly/engine/global_nz/kernels.cuh>
#include <gpu_assembly/engine/local_elem/kernels.cuh>
#include <gpu_assembly/engine/shared_nz/kernels.cuh>

#include <cuda_runtime.h>

#include <string>

namespace GPUAssembly
{
  template <int dim, typename Number>
  template <class Kernel>
  void
  DeviceAssembler<dim, Number>::assemble(const Kernel               &kernel,
                                         const DeviceVector<Number> &nodal_data,
                                         DeviceCSRMatrix<Number>    &matrix,
                                         DeviceVector<Number>       &rhs,
                                         CUstream_st *const stream) const
  {
    if (arrays == nullptr)
      internal::throw_error("DeviceAssembler::assemble() before reinit().");
    if (Kernel::n_components != arrays->layout.n_components)
      internal::throw_error(
        "DeviceAssembler::assemble(): the element kernel works on " +
        std::to_string(Kernel::n_components) +
        " components per node, the finite element has " +
        std::to_string(arrays->layout.n_components) + ".");
    if (nodal_data.size() != static_cast<std::size_t>(arrays->n_nodes) *
                               additional_data.n_nodal_fields)
      internal::throw_error(
        "DeviceAssembler::assemble(): the nodal data has " +
        std::to_string(nodal_data.size()) + " values, expected " +
        std::to_string(arrays->n_nodes) + " nodes times " +
        std::to_string(additional_data.n_nodal_fields) + " fields.");
    if (matrix.n_nonzeros() != arrays->n_nonzeros() ||
        matrix.m() != arrays->n_dofs)
      internal::throw_error("DeviceAssembler::assemble(): the matrix was "
                            "not initialized with these mesh arrays.");
    if (additional_data.method != AssemblyMethod::global_nz &&
        uses_own_element_stage(kernel))
      internal::throw_error(
        "DeviceAssembler::assemble(): the element kernel asks for an element "
        "stage of its own, which computes element data for GlobalNZ only; " +
        to_string(additional_data.method) +
        " runs the kernel's operator(): choose GlobalNZ or the kernel's "
        "thread-per-element form.");
    if (rhs.size() != arrays->n_dofs)
      rhs.reinit(arrays->n_dofs);

    const ElementStageData<Number> data{
      arrays->layout.n_nodes,
      arrays->layout.n_q_points,
      arrays->layout.n_dofs,
      additional_data.n_nodal_fields,
      arrays->supplemental_format ==
          SupplementalDataFormat::inverse_edge_matrix ||
        arrays->supplemental_format ==
          SupplementalDataFormat::compressed_edge_matrix,
      arrays->supplemental_format ==
        SupplementalDataFormat::compressed_edge_matrix,
      shape_values.data(),
      quadrature_weights.data(),
      dof_is_constrained.data(),
      inhomogeneities.data(),
      additional_data.options.use_inhomogeneities_for_rhs};

    const internal::AssemblyLaunch<Number> call{nodal_data.data(),
                                                matrix.get_values().data(),
                                                matrix.get_values().size(),
                                                rhs.data(),
                                                rhs.size(),
                                                stream};
    switch (additional_data.method)
      {
        case AssemblyMethod::global_nz:
          global_nz.template launch<dim>(kernel, data, call);
          break;
        case AssemblyMethod::shared_nz:
          shared_nz.template launch<dim>(kernel, data, call);
          break;
        case AssemblyMethod::local_elem_atomic:
        case AssemblyMethod::local_elem_colored:
          local_elem.template launch<dim>(kernel, data, call);
          break;
      }
    constraint_stage.template launch<dim>(kernel, data, call);
  }
} // namespace GPUAssembly

#endif
