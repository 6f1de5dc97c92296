// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_grid_abaqus_input_h
#define gpu_assembly_src_grid_abaqus_input_h

#include <istream>
#include <string>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * Throw ExcMeshFile unless every *Part, *Assembly, *Instance and *Step
     * block of the Abaqus file @p input is closed by its *End line: a file
     * that ends inside one was cut short. Rewinds @p input.
     */
    void
    check_abaqus_structure(std::istream &input, const std::string &name);
  } // namespace internal
} // namespace GPUAssembly

#endif
