// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_wave_wave_discretization_h
#define gpu_assembly_wave_wave_discretization_h

#include <deal.II/base/quadrature.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping.h>

#include <deal.II/grid/tria.h>

#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/wave/elastic_wave_system.h>

#include <map>
#include <memory>

namespace GPUAssembly
{
  namespace Wave
  {
    /**
     * The deal.II side of the explicit wave solver: a linear displacement
     * field (FE_SimplexP(1)^2 on triangles, FE_Q(1)^2 on quadrilaterals) on
     * a 2D Triangulation, pulled into a WaveMesh through DoFHandlerAdapter,
     * and the way back from nodal results to DoF vectors for DataOut.
     */
    class WaveDiscretization
    {
    public:
      /**
       * Distribute DoFs on @p tria (kept by reference) and build the
       * WaveMesh. Cells with material_id m get material index
       * material_index.at(m); a cell whose material_id is not in the map
       * raises an exception naming the id and the cell.
       */
      void
      reinit(const dealii::Triangulation<2> &tria,
             const std::map<dealii::types::material_id, unsigned int>
               &material_index);

      const WaveMesh &
      get_mesh() const
      {
        return mesh;
      }

      WaveMesh &
      get_mesh()
      {
        return mesh;
      }

      const dealii::DoFHandler<2> &
      get_dof_handler() const
      {
        return dof_handler;
      }

      const dealii::Mapping<2> &
      get_mapping() const
      {
        return *mapping;
      }

      /// Nodal values (x, y of node n at 2 n, 2 n + 1) as a DoF vector.
      void
      nodal_to_dof_vector(const std::vector<double> &nodal,
                          dealii::Vector<double>    &dof_values) const;

    private:
      std::unique_ptr<dealii::FESystem<2>>   fe;
      std::unique_ptr<dealii::Mapping<2>>    mapping;
      std::unique_ptr<dealii::Quadrature<2>> quadrature;
      dealii::DoFHandler<2>                  dof_handler;
      DoFHandlerAdapter<2>                   adapter;
      WaveMesh                               mesh;
    };
  } // namespace Wave
} // namespace GPUAssembly

#endif
