// SPDX-License-Identifier: LGPL-2.1-or-later
// GlobalNZ's reduction arrays and S(e) in the block layout built on the
// GPU (ReductionConstruction::device) against the host plan's, byte for
// byte (the reduction arrays also built in batches of
// a few blocks), and an assembly with them against one with the host-built
// arrays, bit for bit, on the meshes of
// global_nz_reduction_cases.h (the cube with a refined octant at 16^3
// cells among them) and with blocks of 4096 targets; and where each
// construction builds them.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/engine/global_nz/device_data.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include "../global_nz_reduction_cases.h"
#include "device_assembly.h"
#include "gpu_tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  // The values and right-hand side of a GlobalNZ assembly on the device
  // with @p parameters: elasticity for vector-valued problems, else
  // Laplace.
  template <int dim>
  void
  assemble(const MeshArrays               &arrays,
           const GlobalNZPlan::Parameters &parameters,
           std::vector<double>            &values,
           std::vector<double>            &rhs)
  {
    typename DeviceAssembler<dim, double>::AdditionalData data;
    data.method    = AssemblyMethod::global_nz;
    data.global_nz = parameters;
    if (arrays.layout.n_components == dim)
      {
        LinearElasticityKernel<dim, double> kernel;
        kernel.lambda        = 3.;
        kernel.mu            = 1.25;
        kernel.body_force[0] = 1.;
        Testing::device_assemble<dim>(arrays, data, kernel, 1, values, rhs);
      }
    else
      {
        LaplaceKernel<dim, double> kernel;
        kernel.source = 2.;
        Testing::device_assemble<dim>(arrays, data, kernel, 1, values, rhs);
      }
  }
} // namespace



int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks   checks;
  const std::size_t shared_memory =
    get_device_info(0).shared_memory_per_block_optin;
  unsigned int n_plans = 0, n_assemblies = 0;
  std::size_t  n_entries = 0;
  Testing::for_each_reduction_case(
    true,
    [&](const auto        &problem,
        const auto        &data,
        const auto        &parameters,
        const std::string &what) {
      constexpr int dim = Testing::ProblemDimension<
        std::remove_cv_t<std::remove_reference_t<decltype(problem)>>>::value;
      const auto        adapter = Testing::make_adapter(problem, data);
      const MeshArrays &arrays  = adapter.get_arrays();
      GlobalNZPlan      host_plan;
      host_plan.reinit(arrays, parameters, dim, sizeof(double), shared_memory);

      GlobalNZPlan::Parameters on_device = parameters;
      on_device.reduction_construction   = ReductionConstruction::device;
      GPUAssembly::internal::GlobalNZDeviceData<double> device_data;
      device_data.reinit(arrays, on_device, dim, shared_memory);
      const GlobalNZPlan &device_plan = device_data.get_plan();
      checks.check(device_plan.reduction_arrays_on_device &&
                     device_plan.reduction_array.empty() &&
                     device_plan.n_reduction_entries ==
                       host_plan.reduction_array.size(),
                   what + ": ReductionConstruction::device builds the " +
                     std::to_string(host_plan.reduction_array.size()) +
                     " reduction entries on the device, none on the host");
      GlobalNZPlan downloaded;
      device_data.copy_reduction_arrays_to(downloaded);
      Testing::check_same_reduction_arrays(checks,
                                           what + ", built on the GPU",
                                           host_plan,
                                           downloaded);
      checks.check(device_plan.block_supplemental.empty() &&
                     device_data.get_block_supplemental().to_host() ==
                       host_plan.block_supplemental,
                   what +
                     ": S(e) in the block layout, gathered on the GPU, "
                     "equals the host plan's bit for bit (" +
                     std::to_string(host_plan.block_supplemental.size()) +
                     " values, padding slots 0)");
      ++n_plans;
      n_entries += downloaded.reduction_array.size();

      // In batches of a few blocks each, as a device with little free
      // memory builds them.
      {
        GPUAssembly::internal::GlobalNZDeviceData<double> batched;
        batched.reinit(arrays, on_device, dim, shared_memory, 64 * 1024);
        GlobalNZPlan batched_arrays;
        batched.copy_reduction_arrays_to(batched_arrays);
        Testing::check_same_reduction_arrays(
          checks,
          what + ", built on the GPU in batches of 64 KiB of scratch",
          host_plan,
          batched_arrays);
      }

      // Assemblies with either arrays: the same bits.
      std::vector<double>      host_values, host_rhs, device_values, device_rhs;
      GlobalNZPlan::Parameters on_host = parameters;
      on_host.reduction_construction   = ReductionConstruction::host;
      assemble<dim>(arrays, on_host, host_values, host_rhs);
      assemble<dim>(arrays, on_device, device_values, device_rhs);
      checks.check(host_values == device_values && host_rhs == device_rhs,
                   what +
                     ": the assembly with the reduction arrays built on "
                     "the GPU equals the one with the host's, bit for "
                     "bit (" +
                     std::to_string(host_values.size()) + " values, " +
                     std::to_string(host_rhs.size()) +
                     " right-hand side "
                     "entries)");
      ++n_assemblies;
    });

  // Blocks of 4096 targets, more than the shared memory of a block of
  // warps holds the list counters of: they are counted in global memory.
  {
    Testing::TestProblem<3> problem;
    Testing::setup_refined_octant(problem, 4);
    const auto               adapter = Testing::make_adapter(problem);
    const MeshArrays        &arrays  = adapter.get_arrays();
    GlobalNZPlan::Parameters parameters;
    parameters.targets_per_block = 4096;
    GlobalNZPlan host_plan;
    host_plan.reinit(arrays, parameters, 3, sizeof(double), shared_memory);
    parameters.reduction_construction = ReductionConstruction::device;
    GPUAssembly::internal::GlobalNZDeviceData<double> device_data;
    device_data.reinit(arrays, parameters, 3, shared_memory);
    GlobalNZPlan downloaded;
    device_data.copy_reduction_arrays_to(downloaded);
    Testing::check_same_reduction_arrays(
      checks,
      "3D cube with a refined octant, blocks of 4096 targets, built on the "
      "GPU",
      host_plan,
      downloaded);
  }

  // Where each construction builds them.
  {
    Testing::TestProblem<3> problem;
    Testing::setup_refined_octant(problem, 4);
    const auto        adapter = Testing::make_adapter(problem);
    const MeshArrays &arrays  = adapter.get_arrays();
    for (const auto construction :
         {ReductionConstruction::automatic, ReductionConstruction::host})
      {
        GlobalNZPlan::Parameters parameters;
        parameters.reduction_construction = construction;
        GPUAssembly::internal::GlobalNZDeviceData<double> device_data;
        device_data.reinit(arrays, parameters, 3, shared_memory);
        const bool automatic = construction == ReductionConstruction::automatic;
        checks.check(device_data.get_plan().reduction_arrays_on_device ==
                         automatic &&
                       device_data.get_plan().reduction_array.empty() ==
                         automatic,
                     std::string("ReductionConstruction::") +
                       (automatic ? "automatic builds on the device where "
                                    "its memory holds the build" :
                                    "host builds on the host and uploads"));
      }
  }
  std::cout << "Compared the reduction arrays of " << n_plans
            << " plans built on the GPU (" << n_entries << " entries) and "
            << n_assemblies << " assemblies with them against the host's"
            << std::endl;
  return checks.exit_code();
}
