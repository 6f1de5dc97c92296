// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_host_backend_h
#define hyperelastic_host_backend_h

#include "integrator_backend.h"

namespace Hyperelastic
{
  /**
   * The backend that runs every stage on the CPU cores in double
   * precision: the plugin's coloured, multithreaded HostAssembler with the
   * same element kernel as the GPU, a threaded CSR product and the same
   * Jacobi-CG iteration. It is the reference for the GPU path and the
   * chapter's CPU configuration (NR_CPU, AssemblyCPU_Opt, DCG_CPU).
   */
  std::unique_ptr<IntegratorBackend>
  make_host_backend(const BackendData &data);
} // namespace Hyperelastic

#endif
