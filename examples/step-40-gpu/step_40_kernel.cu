// SPDX-License-Identifier: LGPL-2.1-or-later
//
// DeviceAssembler::assemble() compiled for step-40's kernel: one explicit
// instantiation makes it callable from the host code of the program.

#include <gpu_assembly/engine/device_assembler.templates.cuh>

#include "step_40_kernel.h"

template void
GPUAssembly::DeviceAssembler<2, double>::assemble(
  const Step40Kernel<2, double> &,
  const GPUAssembly::DeviceVector<double> &,
  GPUAssembly::DeviceCSRMatrix<double> &,
  GPUAssembly::DeviceVector<double> &,
  CUstream_st *) const;
