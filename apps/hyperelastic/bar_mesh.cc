// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bar_mesh.h"

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>

#include <gpu_assembly/grid/mesh_input.h>

#include <cmath>

namespace Hyperelastic
{
  std::string
  make_mesh(const Parameters::Geometry &g, Triangulation<3> &triangulation)
  {
    constexpr int dim = 3;
    if (!g.mesh_file.empty())
      {
        const GPUAssembly::MeshFileSummary summary =
          GPUAssembly::read_mesh(g.mesh_file, triangulation);
        if (g.scale != 1.)
          GridTools::scale(g.scale, triangulation);
        return summary.n_unused_nodes > 0 ?
                 "Mesh " + g.mesh_file + ": " + summary.describe() :
                 std::string();
      }

    const Point<dim> upper(g.size[0], g.size[1], g.size[2]);
    if (g.cell_type == "hexahedra")
      GridGenerator::subdivided_hyper_rectangle(triangulation,
                                                g.subdivisions,
                                                Point<dim>(),
                                                upper);
    else
      GridGenerator::subdivided_hyper_rectangle_with_simplices(triangulation,
                                                               g.subdivisions,
                                                               Point<dim>(),
                                                               upper);
    // deal.II 9.4 cannot colorize the simplex version: number the faces
    // here, for both cell types alike.
    for (const auto &cell : triangulation.active_cell_iterators())
      for (const auto &face : cell->face_iterators())
        if (face->at_boundary())
          {
            const Point<dim> c = face->center();
            for (unsigned int d = 0; d < dim; ++d)
              {
                const double tolerance = 1e-8 * g.size[d];
                if (std::abs(c[d]) < tolerance)
                  face->set_boundary_id(2 * d);
                else if (std::abs(c[d] - g.size[d]) < tolerance)
                  face->set_boundary_id(2 * d + 1);
              }
          }
    return std::string();
  }
} // namespace Hyperelastic
