// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/thread_management.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/device_assembler.h>

#include <utility>

#include "upload.h"

namespace GPUAssembly
{
  std::string
  to_string(const AssemblyMethod method)
  {
    switch (method)
      {
        case AssemblyMethod::global_nz:
          return "GlobalNZ";
        case AssemblyMethod::shared_nz:
          return "SharedNZ";
        case AssemblyMethod::local_elem_atomic:
          return "LocalElem-atomic";
        case AssemblyMethod::local_elem_colored:
          return "LocalElem-colored";
      }
    return "unknown";
  }



  AssemblyMethod
  parse_assembly_method(const std::string &name)
  {
    for (const auto method : {AssemblyMethod::global_nz,
                              AssemblyMethod::shared_nz,
                              AssemblyMethod::local_elem_atomic,
                              AssemblyMethod::local_elem_colored})
      if (name == to_string(method))
        return method;
    AssertThrow(false,
                dealii::ExcMessage(
                  "Unknown assembly method '" + name +
                  "'; choose GlobalNZ, SharedNZ, LocalElem-atomic "
                  "or LocalElem-colored."));
    return AssemblyMethod::global_nz;
  }



  template <int dim, typename Number>
  void
  DeviceAssembler<dim, Number>::reinit(const MeshArrays     &new_arrays,
                                       const AdditionalData &new_data)
  {
    AssertThrow(new_arrays.dim == dim,
                dealii::ExcMessage("DeviceAssembler<" + std::to_string(dim) +
                                   "> was given mesh arrays of dimension " +
                                   std::to_string(new_arrays.dim) + "."));
    AssertThrow(n_cuda_devices() > 0,
                dealii::ExcMessage(
                  "DeviceAssembler needs a CUDA device and none was found; "
                  "use HostAssembler (the host path) instead."));
    // Start from nothing: a reinit() with another method must not keep the
    // previous method's plan and element-data buffer on the device.
    *this                   = DeviceAssembler();
    arrays                  = &new_arrays;
    additional_data         = new_data;
    const DeviceInfo device = get_device_info(0);

    shape_values.copy_from_host(
      internal::convert<Number>(arrays->layout.shape_values));
    quadrature_weights.copy_from_host(
      internal::convert<Number>(arrays->layout.quadrature_weights));
    inhomogeneities.copy_from_host(
      internal::convert<Number>(arrays->inhomogeneities));
    dof_is_constrained.copy_from_host(
      std::vector<unsigned char>(arrays->dof_is_constrained.begin(),
                                 arrays->dof_is_constrained.end()));

    // The constraint plan needs only the mesh arrays, and the host build
    // of a method's plan leaves cores idle while the device builds its
    // part (GlobalNZ's reduction arrays): made by a task beside it, the
    // constraint plan fills that time. A task, not a thread: its parallel
    // loops then share the method's pool of threads rather than compete
    // with it. Should the method's plan throw, the task is waited for on
    // destruction, before the arrays can go.
    dealii::Threads::Task<ConstraintPlan> constraint_plan =
      dealii::Threads::new_task([&new_arrays]() {
        ConstraintPlan plan;
        plan.reinit(new_arrays);
        return plan;
      });

    switch (additional_data.method)
      {
        case AssemblyMethod::global_nz:
          global_nz.reinit(*arrays,
                           additional_data.global_nz,
                           additional_data.n_nodal_fields,
                           device.shared_memory_per_block_optin);
          break;
        case AssemblyMethod::shared_nz:
          shared_nz.reinit(*arrays,
                           additional_data.shared_nz,
                           additional_data.n_nodal_fields,
                           device);
          break;
        case AssemblyMethod::local_elem_atomic:
        case AssemblyMethod::local_elem_colored:
          local_elem.reinit(*arrays,
                            additional_data.method ==
                              AssemblyMethod::local_elem_colored,
                            additional_data.local_elem);
          break;
      }
    constraint_stage.reinit(std::move(constraint_plan.return_value()));
  }



  template <int dim, typename Number>
  const DeviceVector<Number> &
  DeviceAssembler<dim, Number>::get_element_data() const
  {
    return additional_data.method == AssemblyMethod::global_nz ?
             global_nz.get_element_data() :
             local_elem.get_element_data();
  }



  template <int dim, typename Number>
  std::size_t
  DeviceAssembler<dim, Number>::device_memory_consumption() const
  {
    return shape_values.memory_consumption() +
           quadrature_weights.memory_consumption() +
           inhomogeneities.memory_consumption() +
           dof_is_constrained.memory_consumption() +
           global_nz.memory_consumption() + shared_nz.memory_consumption() +
           local_elem.memory_consumption() +
           constraint_stage.memory_consumption();
  }



  template class DeviceAssembler<2, float>;
  template class DeviceAssembler<2, double>;
  template class DeviceAssembler<3, float>;
  template class DeviceAssembler<3, double>;
} // namespace GPUAssembly
