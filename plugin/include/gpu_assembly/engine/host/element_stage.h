// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_host_element_stage_h
#define gpu_assembly_engine_host_element_stage_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/assembly_options.h>

#include <vector>

namespace GPUAssembly
{
  /**
   * The ElementStageData of a host assembly: the mesh's shared element data
   * converted once to Number (so that single-precision assembly reads
   * single-precision input as the device does) and kept alive for the
   * pointers in data(). Not copyable, as those pointers would dangle.
   */
  template <typename Number>
  class HostElementStage
  {
  public:
    HostElementStage(const MeshArrays      &arrays,
                     const unsigned int     n_nodal_fields,
                     const AssemblyOptions &options)
      : shape_values(arrays.layout.shape_values.begin(),
                     arrays.layout.shape_values.end())
      , quadrature_weights(arrays.layout.quadrature_weights.begin(),
                           arrays.layout.quadrature_weights.end())
      , inhomogeneities(arrays.inhomogeneities.begin(),
                        arrays.inhomogeneities.end())
      , stage{arrays.layout.n_nodes,
              arrays.layout.n_q_points,
              arrays.layout.n_dofs,
              n_nodal_fields,
              arrays.supplemental_format ==
                  SupplementalDataFormat::inverse_edge_matrix ||
                arrays.supplemental_format ==
                  SupplementalDataFormat::compressed_edge_matrix,
              arrays.supplemental_format ==
                SupplementalDataFormat::compressed_edge_matrix,
              shape_values.data(),
              quadrature_weights.data(),
              arrays.dof_is_constrained.data(),
              inhomogeneities.data(),
              options.use_inhomogeneities_for_rhs}
    {}

    HostElementStage(const HostElementStage &) = delete;
    HostElementStage &
    operator=(const HostElementStage &) = delete;

    const ElementStageData<Number> &
    data() const
    {
      return stage;
    }

  private:
    const std::vector<Number>      shape_values;
    const std::vector<Number>      quadrature_weights;
    const std::vector<Number>      inhomogeneities;
    const ElementStageData<Number> stage;
  };
} // namespace GPUAssembly

#endif
