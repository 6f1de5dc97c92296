// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_bar_mesh_h
#define hyperelastic_bar_mesh_h

#include <deal.II/grid/tria.h>

#include <string>

#include "parameters.h"

namespace Hyperelastic
{
  /**
   * The mesh the 'Geometry' entries ask for, for the implicit and the
   * explicit integrator alike: the mesh file, scaled, or the built-in bar,
   * whose faces x = 0, x = Lx, y = 0, y = Ly, z = 0, z = Lz get boundary ids
   * 0 to 5. Returns what reading the file dropped (unused nodes), to be
   * printed, or an empty string.
   */
  std::string
  make_mesh(const Parameters::Geometry &geometry,
            Triangulation<3>           &triangulation);
} // namespace Hyperelastic

#endif
