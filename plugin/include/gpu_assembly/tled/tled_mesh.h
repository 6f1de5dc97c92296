// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tled_tled_mesh_h
#define gpu_assembly_tled_tled_mesh_h

#include <deal.II/grid/tria.h>

#include <gpu_assembly/tled/tled_model.h>

namespace GPUAssembly
{
  namespace TLED
  {
    /**
     * The TLED mesh of a deal.II triangulation of hexahedra or of
     * tetrahedra: its vertices are the nodes (vertex numbers kept; unused
     * vertices are refused, as are mixed cell types, refined meshes with
     * hanging nodes and anything else than 3D linear cells).
     */
    Mesh
    make_mesh(const dealii::Triangulation<3> &triangulation);
  } // namespace TLED
} // namespace GPUAssembly

#endif
