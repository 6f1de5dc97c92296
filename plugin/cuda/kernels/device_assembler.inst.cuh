// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_cuda_kernels_device_assembler_inst_cuh
#define gpu_assembly_cuda_kernels_device_assembler_inst_cuh

// Instantiations of DeviceAssembler::assemble() for the bundled element
// kernels, one number type per .cu file so that the two compile in
// parallel: each kernel is compiled in several forms (methods, symmetric
// storage, simplex specializations), which makes this the plugin's longest
// compilation.

#include <gpu_assembly/engine/device_assembler.templates.cuh>
#include <gpu_assembly/kernels/element_kernels.h>
#include <gpu_assembly/kernels/hex8_elasticity.cuh>
#include <gpu_assembly/kernels/neo_hookean.h>

#define GPU_ASSEMBLY_INSTANTIATE(dim, Number, ...)                   \
  template void GPUAssembly::DeviceAssembler<dim, Number>::assemble( \
    const __VA_ARGS__ &,                                             \
    const GPUAssembly::DeviceVector<Number> &,                       \
    GPUAssembly::DeviceCSRMatrix<Number> &,                          \
    GPUAssembly::DeviceVector<Number> &,                             \
    CUstream_st *) const;

#define GPU_ASSEMBLY_INSTANTIATE_ALL(dim, Number)                            \
  GPU_ASSEMBLY_INSTANTIATE(dim,                                              \
                           Number,                                           \
                           GPUAssembly::LaplaceKernel<dim, Number>)          \
  GPU_ASSEMBLY_INSTANTIATE(dim,                                              \
                           Number,                                           \
                           GPUAssembly::LinearElasticityKernel<dim, Number>) \
  GPU_ASSEMBLY_INSTANTIATE(dim,                                              \
                           Number,                                           \
                           GPUAssembly::MassKernel<dim, 1, Number>)          \
  GPU_ASSEMBLY_INSTANTIATE(dim,                                              \
                           Number,                                           \
                           GPUAssembly::MassKernel<dim, dim, Number>)        \
  GPU_ASSEMBLY_INSTANTIATE(dim,                                              \
                           Number,                                           \
                           GPUAssembly::NeoHookeanKernel<dim, Number>)

#define GPU_ASSEMBLY_INSTANTIATE_NUMBER(Number) \
  GPU_ASSEMBLY_INSTANTIATE_ALL(2, Number)       \
  GPU_ASSEMBLY_INSTANTIATE_ALL(3, Number)       \
  GPU_ASSEMBLY_INSTANTIATE(3, Number, GPUAssembly::Hex8ElasticityKernel<Number>)

#endif
