// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_assembly_options_h
#define gpu_assembly_engine_assembly_options_h

namespace GPUAssembly
{
  /**
   * Options that change what is assembled, shared by all methods.
   */
  struct AssemblyOptions
  {
    /// As the argument of AffineConstraints::distribute_local_to_global.
    bool use_inhomogeneities_for_rhs = false;
  };
} // namespace GPUAssembly

#endif
