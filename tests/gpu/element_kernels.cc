// SPDX-License-Identifier: LGPL-2.1-or-later
// The bundled element kernels, compiled by nvcc and run a thread per element
// on the device with the coalesced column-major layout, give the element
// matrices and vectors of the same functors run on the host. Also checks
// that a failing CUDA call raises a clear error in a release build.
// Needs a GPU: exits with 77 (skipped) where there is none.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/element/element_views.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <algorithm>
#include <cmath>

#include "../test_problems.h"
#include "../tests.h"
#include "device_kernels.h"
#include "gpu_tests.h"

using namespace dealii;
using namespace GPUAssembly;

template <int dim, class Kernel>
void
host_element_data(const Kernel        &kernel,
                  const MeshArrays    &arrays,
                  std::vector<double> &matrices,
                  std::vector<double> &vectors)
{
  const unsigned int n_ed = arrays.layout.n_dofs;
  matrices.resize(static_cast<std::size_t>(n_ed) * n_ed * arrays.n_elements);
  vectors.resize(static_cast<std::size_t>(n_ed) * arrays.n_elements);
  for (unsigned int e = 0; e < arrays.n_elements; ++e)
    {
      const QuadratureGradientElement<dim, double> element{
        arrays.supplemental.data() +
          static_cast<std::size_t>(e) * arrays.n_supplemental,
        1,
        arrays.layout.n_nodes,
        arrays.layout.n_q_points,
        arrays.layout.shape_values.data(),
        nullptr,
        0};
      // The same column-major layout as the device writes.
      const ElementOutput<double> output{matrices.data() + e,
                                         vectors.data() + e,
                                         n_ed,
                                         arrays.n_elements};
      kernel(element, output);
    }
}



template <int dim>
void
test_kernel(Testing::Checks            &checks,
            const bool                  simplex,
            const unsigned int          degree,
            const Testing::DeviceKernel kernel_choice)
{
  const bool laplace = kernel_choice == Testing::DeviceKernel::laplace;
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         simplex,
                         degree,
                         laplace ? 1 : dim,
                         Testing::ConstraintKind::none,
                         false,
                         6);
  const DoFHandlerAdapter<dim> adapter = Testing::make_adapter(problem);
  const MeshArrays            &arrays  = adapter.get_arrays();

  std::vector<double> host_matrices, host_vectors;
  if (laplace)
    {
      LaplaceKernel<dim, double> kernel;
      kernel.diffusion = 1.7;
      kernel.source    = 0.8;
      host_element_data<dim>(kernel, arrays, host_matrices, host_vectors);
    }
  else
    {
      LinearElasticityKernel<dim, double> kernel;
      kernel.lambda = 3.;
      kernel.mu     = 1.25;
      for (unsigned int d = 0; d < dim; ++d)
        kernel.body_force[d] = 1. + d;
      host_element_data<dim>(kernel, arrays, host_matrices, host_vectors);
    }

  std::vector<double> column_major(arrays.supplemental.size());
  for (unsigned int e = 0; e < arrays.n_elements; ++e)
    for (unsigned int i = 0; i < arrays.n_supplemental; ++i)
      column_major[static_cast<std::size_t>(i) * arrays.n_elements + e] =
        arrays
          .supplemental[static_cast<std::size_t>(e) * arrays.n_supplemental +
                        i];
  std::vector<double> device_matrices, device_vectors;
  Testing::compute_element_data_on_device(dim,
                                          kernel_choice,
                                          {column_major,
                                           arrays.n_elements,
                                           arrays.layout.n_nodes,
                                           arrays.layout.n_q_points,
                                           arrays.layout.shape_values,
                                           device_matrices,
                                           device_vectors});

  const double matrix_error =
    Testing::max_relative_difference(device_matrices, host_matrices);
  const double vector_error =
    Testing::max_relative_difference(device_vectors, host_vectors);
  std::ostringstream what;
  what << problem.name() << ", " << (laplace ? "Laplace" : "elasticity") << ", "
       << arrays.n_elements
       << " elements on the device: max relative difference to the host "
       << matrix_error << " (matrices), " << vector_error
       << " (vectors) <= 1e-13";
  checks.check(matrix_error <= 1e-13 && vector_error <= 1e-13 &&
                 std::any_of(device_matrices.begin(),
                             device_matrices.end(),
                             [](const double v) {
                               return v != 0.;
                             }),
               what.str());
}



int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();

  Testing::Checks  checks;
  const DeviceInfo info = get_device_info(0);
  checks.check(info.shared_memory_per_block_optin >= 48 * 1024 &&
                 info.n_multiprocessors > 0,
               "device properties are read from the device (" +
                 std::to_string(info.shared_memory_per_block_optin / 1024) +
                 " KiB shared memory per block)");

  test_kernel<2>(checks, false, 1, Testing::DeviceKernel::laplace);
  test_kernel<2>(checks, true, 2, Testing::DeviceKernel::elasticity);
  test_kernel<3>(checks, true, 1, Testing::DeviceKernel::elasticity);
  test_kernel<3>(checks, false, 2, Testing::DeviceKernel::laplace);
  test_kernel<3>(checks, false, 1, Testing::DeviceKernel::elasticity);

  checks.check_throws<ExcCudaError>(
    [] {
      Testing::allocate_device_memory(std::size_t(1) << 52);
    },
    "cudaErrorMemoryAllocation",
    "asking for 4 PiB of device memory raises ExcCudaError naming "
    "cudaErrorMemoryAllocation");
  return checks.exit_code();
}
