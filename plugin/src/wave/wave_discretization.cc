// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_renumbering.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/lac/affine_constraints.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/wave/wave_discretization.h>

namespace GPUAssembly
{
  namespace Wave
  {
    using namespace dealii;

    namespace
    {
      // The affine map of a linear triangle, which only its vertices define.
      // MappingFE of deal.II 9.4 requires all faces of a cell to carry the
      // cell's manifold id (a debug-mode Assert), even for a linear element
      // that never asks a manifold for a point. Meshes converted from curved
      // quadrilateral meshes (convert_hypercube_to_simplex_mesh copies the
      // ids of the boundary faces) do not satisfy this, and their manifold
      // ids are legitimate. The support points are interpolated as
      // FlatManifold does, so they are those of MappingFE on flat cells bit
      // for bit.
      class LinearTriangleMapping : public MappingFE<2>
      {
      public:
        LinearTriangleMapping()
          : MappingFE<2>(FE_SimplexP<2>(1))
        {}

        std::unique_ptr<Mapping<2>>
        clone() const override
        {
          return std::make_unique<LinearTriangleMapping>(*this);
        }

      protected:
        std::vector<Point<2>>
        compute_mapping_support_points(
          const Triangulation<2>::cell_iterator &cell) const override
        {
          const ReferenceCell          reference_cell = fe->reference_cell();
          const std::vector<Point<2>> &unit_points =
            fe->get_unit_support_points();
          std::vector<Point<2>> points(unit_points.size());
          for (unsigned int p = 0; p < unit_points.size(); ++p)
            for (const unsigned int v : cell->vertex_indices())
              points[p] +=
                cell->vertex(v) *
                reference_cell.d_linear_shape_function(unit_points[p], v);
          return points;
        }
      };
    } // namespace



    void
    WaveDiscretization::reinit(
      const Triangulation<2>                           &tria,
      const std::map<types::material_id, unsigned int> &material_index)
    {
      AssertThrow(tria.n_active_cells() > 0,
                  ExcMessage("The mesh has no cells."));
      AssertThrow(tria.all_reference_cells_are_simplex() ||
                    tria.all_reference_cells_are_hyper_cube(),
                  ExcUnsupportedInput("a mesh that mixes triangles and "
                                      "quadrilaterals"));
      dof_handler.clear();
      if (tria.all_reference_cells_are_simplex())
        {
          fe         = std::make_unique<FESystem<2>>(FE_SimplexP<2>(1), 2);
          mapping    = std::make_unique<LinearTriangleMapping>();
          quadrature = std::make_unique<QGaussSimplex<2>>(1);
        }
      else
        {
          fe         = std::make_unique<FESystem<2>>(FE_Q<2>(1), 2);
          mapping    = std::make_unique<MappingQ<2>>(1);
          quadrature = std::make_unique<QGauss<2>>(2);
        }
      dof_handler.reinit(tria);
      dof_handler.distribute_dofs(*fe);
      // Nodes follow the DoFs of component 0: a bandwidth-reducing order
      // keeps neighbours close in memory for the partitioners' seeds.
      DoFRenumbering::Cuthill_McKee(dof_handler);

      std::vector<unsigned int> cell_material(tria.n_active_cells());
      for (const auto &cell : tria.active_cell_iterators())
        {
          const auto it = material_index.find(cell->material_id());
          AssertThrow(it != material_index.end(),
                      ExcMessage(
                        "Cell " + std::to_string(cell->active_cell_index()) +
                        " (centre " + std::to_string(cell->center()[0]) + ", " +
                        std::to_string(cell->center()[1]) +
                        ") has material id " +
                        std::to_string(cell->material_id()) +
                        ", for which no material is defined."));
          cell_material[cell->active_cell_index()] = it->second;
        }

      AffineConstraints<double> constraints;
      constraints.close();
      adapter.reinit(*mapping, dof_handler, *quadrature, constraints);
      mesh = make_wave_mesh(adapter.get_arrays(), cell_material);
    }



    void
    WaveDiscretization::nodal_to_dof_vector(const std::vector<double> &nodal,
                                            Vector<double> &dof_values) const
    {
      dof_values.reinit(dof_handler.n_dofs());
      adapter.scatter_nodal_values(nodal, dof_values);
    }
  } // namespace Wave
} // namespace GPUAssembly
