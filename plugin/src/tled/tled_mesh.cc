// SPDX-License-Identifier: LGPL-2.1-or-later

#include <deal.II/base/exceptions.h>

#include <gpu_assembly/tled/tled_mesh.h>

namespace GPUAssembly
{
  namespace TLED
  {
    Mesh
    make_mesh(const dealii::Triangulation<3> &triangulation)
    {
      const bool simplex = triangulation.all_reference_cells_are_simplex();
      AssertThrow(simplex || triangulation.all_reference_cells_are_hyper_cube(),
                  dealii::ExcMessage("TLED meshes hold hexahedra or "
                                     "tetrahedra, not both."));
      AssertThrow(!triangulation.has_hanging_nodes(),
                  dealii::ExcMessage("TLED meshes cannot have hanging "
                                     "nodes."));
      Mesh mesh;
      mesh.element_type =
        simplex ? ElementType::tetrahedron : ElementType::hexahedron;
      const auto &vertices = triangulation.get_vertices();
      const auto &used     = triangulation.get_used_vertices();
      for (unsigned int v = 0; v < vertices.size(); ++v)
        AssertThrow(used[v],
                    dealii::ExcMessage("Vertex " + std::to_string(v) +
                                       " of the triangulation is unused; "
                                       "TLED numbers nodes as vertices."));
      mesh.coordinates.reserve(3 * vertices.size());
      for (const auto &p : vertices)
        for (unsigned int d = 0; d < 3; ++d)
          mesh.coordinates.push_back(p[d]);
      mesh.cells.reserve(triangulation.n_active_cells() *
                         mesh.nodes_per_element());
      for (const auto &cell : triangulation.active_cell_iterators())
        for (const unsigned int v : cell->vertex_indices())
          mesh.cells.push_back(cell->vertex_index(v));
      return mesh;
    }
  } // namespace TLED
} // namespace GPUAssembly
