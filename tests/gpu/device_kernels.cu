// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/element/element_views.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <cuda_runtime.h>

#include "device_kernels.h"

namespace Testing
{
  namespace
  {
    template <int dim, class Kernel>
    __global__ void
    element_kernel(const Kernel       kernel,
                   const double      *supplemental,
                   const unsigned int n_elements,
                   const unsigned int n_nodes,
                   const unsigned int n_q_points,
                   const double      *shape_values,
                   double            *matrices,
                   double            *vectors)
    {
      const unsigned int e = blockIdx.x * blockDim.x + threadIdx.x;
      if (e >= n_elements)
        return;
      const GPUAssembly::QuadratureGradientElement<dim, double> element{
        supplemental + e,
        n_elements,
        n_nodes,
        n_q_points,
        shape_values,
        nullptr,
        0};
      const GPUAssembly::ElementOutput<double> output{matrices + e,
                                                      vectors + e,
                                                      n_nodes *
                                                        Kernel::n_components,
                                                      n_elements};
      kernel(element, output);
    }



    template <typename T>
    T *
    to_device(const std::vector<T> &data)
    {
      T *pointer = nullptr;
      GPU_ASSEMBLY_CHECK_CUDA(cudaMalloc(&pointer, data.size() * sizeof(T)));
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(pointer,
                                         data.data(),
                                         data.size() * sizeof(T),
                                         cudaMemcpyHostToDevice));
      return pointer;
    }



    template <int dim, class Kernel>
    void
    run(const Kernel &kernel, const DeviceElementData &data)
    {
      const std::vector<double> &supplemental = data.supplemental;
      const unsigned int         n_elements   = data.n_elements;
      const unsigned int         n_nodes      = data.n_nodes;
      const unsigned int         n_q_points   = data.n_q_points;
      const std::vector<double> &shape_values = data.shape_values;
      std::vector<double>       &matrices     = data.matrices;
      std::vector<double>       &vectors      = data.vectors;
      const unsigned int         n_dofs       = n_nodes * Kernel::n_components;
      matrices.assign(static_cast<std::size_t>(n_dofs) * n_dofs * n_elements,
                      0.);
      vectors.assign(static_cast<std::size_t>(n_dofs) * n_elements, 0.);
      double            *S     = to_device(supplemental);
      double            *N     = to_device(shape_values);
      double            *A     = to_device(matrices);
      double            *F     = to_device(vectors);
      const unsigned int block = 128;
      element_kernel<dim>
        <<<(n_elements + block - 1) / block, block>>>(kernel,
                                                      S,
                                                      n_elements,
                                                      n_nodes,
                                                      n_q_points,
                                                      N,
                                                      A,
                                                      F);
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(matrices.data(),
                                         A,
                                         matrices.size() * sizeof(double),
                                         cudaMemcpyDeviceToHost));
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(vectors.data(),
                                         F,
                                         vectors.size() * sizeof(double),
                                         cudaMemcpyDeviceToHost));
      for (double *pointer : {S, N, A, F})
        GPU_ASSEMBLY_CHECK_CUDA(cudaFree(pointer));
    }



    template <int dim>
    void
    dispatch(const DeviceKernel kernel, const DeviceElementData &data)
    {
      if (kernel == DeviceKernel::laplace)
        {
          GPUAssembly::LaplaceKernel<dim, double> laplace;
          laplace.diffusion = 1.7;
          laplace.source    = 0.8;
          run<dim>(laplace, data);
        }
      else
        {
          GPUAssembly::LinearElasticityKernel<dim, double> elasticity;
          elasticity.lambda = 3.;
          elasticity.mu     = 1.25;
          for (unsigned int d = 0; d < dim; ++d)
            elasticity.body_force[d] = 1. + d;
          run<dim>(elasticity, data);
        }
    }
  } // namespace



  void
  compute_element_data_on_device(const int                dim,
                                 const DeviceKernel       kernel,
                                 const DeviceElementData &data)
  {
    if (dim == 2)
      dispatch<2>(kernel, data);
    else
      dispatch<3>(kernel, data);
  }



  void
  allocate_device_memory(const std::size_t bytes)
  {
    void *pointer = nullptr;
    GPU_ASSEMBLY_CHECK_CUDA(cudaMalloc(&pointer, bytes));
    GPU_ASSEMBLY_CHECK_CUDA(cudaFree(pointer));
  }
} // namespace Testing
