// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_wave_test_meshes_h
#define gpu_assembly_tests_wave_test_meshes_h

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>

#include <gpu_assembly/wave/wave_discretization.h>

/**
 * Meshes for the tests of the explicit wave solver, made by deal.II and
 * pulled in through WaveDiscretization as the application does.
 */
namespace Testing
{
  /// [x0, x1] x [y0, y1] in nx x ny quadrilaterals, each split into 8
  /// triangles by convert_hypercube_to_simplex_mesh (node spacing half
  /// the quadrilateral size), or kept as quadrilaterals.
  inline void
  make_rectangle(const double              x0,
                 const double              y0,
                 const double              x1,
                 const double              y1,
                 const unsigned int        nx,
                 const unsigned int        ny,
                 const bool                triangles,
                 dealii::Triangulation<2> &tria)
  {
    dealii::Triangulation<2> quads;
    dealii::GridGenerator::subdivided_hyper_rectangle(triangles ? quads : tria,
                                                      {nx, ny},
                                                      dealii::Point<2>(x0, y0),
                                                      dealii::Point<2>(x1, y1));
    if (triangles)
      dealii::GridGenerator::convert_hypercube_to_simplex_mesh(quads, tria);
  }

  /// A plate with a circular hole, refined @p n_refinements times.
  inline void
  make_plate_with_hole(const unsigned int        n_refinements,
                       const bool                triangles,
                       dealii::Triangulation<2> &tria)
  {
    dealii::Triangulation<2> quads;
    dealii::GridGenerator::hyper_cube_with_cylindrical_hole(triangles ? quads :
                                                                        tria,
                                                            0.25,
                                                            1.0);
    if (triangles)
      {
        quads.refine_global(n_refinements);
        dealii::Triangulation<2> flat;
        dealii::GridGenerator::flatten_triangulation(quads, flat);
        dealii::GridGenerator::convert_hypercube_to_simplex_mesh(flat, tria);
      }
    else
      tria.refine_global(n_refinements);
  }
} // namespace Testing

#endif
