// SPDX-License-Identifier: LGPL-2.1-or-later
// DeviceAssembler::assemble() for the bundled element kernels in float.

#include "device_assembler.inst.cuh"

GPU_ASSEMBLY_INSTANTIATE_NUMBER(float)
