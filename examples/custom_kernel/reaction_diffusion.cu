// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The device half of the program: DeviceAssembler::assemble() compiled for
// its own kernel. The plugin compiles assemble() only for its bundled
// kernels; device_assembler.templates.cuh holds the definition, and one
// explicit instantiation per kernel, dimension and number type makes it
// callable from main.cc like any other member function.

#include <gpu_assembly/engine/device_assembler.templates.cuh>

#include "reaction_diffusion_kernel.h"

template void
GPUAssembly::DeviceAssembler<2, double>::assemble(
  const ReactionDiffusionKernel<2, double> &,
  const GPUAssembly::DeviceVector<double> &,
  GPUAssembly::DeviceCSRMatrix<double> &,
  GPUAssembly::DeviceVector<double> &,
  CUstream_st *) const;
