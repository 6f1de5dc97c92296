// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_tled_test_meshes_h
#define gpu_assembly_tests_tled_test_meshes_h

// TLED test problems: a compressed cube with rollers, a load and damping.

#include <gpu_assembly/tled/tled_model.h>

#include <cmath>
#include <random>

namespace Testing
{
  /**
   * A cube [0, L]^3 of n^3 hexahedra in deal.II's vertex order, built
   * directly (no Triangulation, so that 100^3 cells set up in seconds);
   * inner nodes moved by up to
   * @p distortion of the cell size.
   */
  inline GPUAssembly::TLED::Mesh
  make_hexahedral_cube(const unsigned int n,
                       const double       L,
                       const double       distortion = 0)
  {
    GPUAssembly::TLED::Mesh mesh;
    mesh.element_type    = GPUAssembly::TLED::ElementType::hexahedron;
    const unsigned int m = n + 1;
    const double       h = L / n;
    mesh.coordinates.resize(3 * std::size_t(m) * m * m);
    std::mt19937                           random(11);
    std::uniform_real_distribution<double> shift(-1., 1.);
    for (unsigned int k = 0; k < m; ++k)
      for (unsigned int j = 0; j < m; ++j)
        for (unsigned int i = 0; i < m; ++i)
          {
            const std::size_t v = (std::size_t(k) * m + j) * m + i;
            const bool        inner =
              i > 0 && j > 0 && k > 0 && i < n && j < n && k < n;
            const unsigned int index[3] = {i, j, k};
            for (unsigned int d = 0; d < 3; ++d)
              {
                const double s = shift(random);
                mesh.coordinates[3 * v + d] =
                  index[d] * h + (inner ? distortion * h * s : 0.);
              }
          }
    mesh.cells.reserve(8 * std::size_t(n) * n * n);
    for (unsigned int k = 0; k < n; ++k)
      for (unsigned int j = 0; j < n; ++j)
        for (unsigned int i = 0; i < n; ++i)
          for (unsigned int a = 0; a < 8; ++a)
            mesh.cells.push_back(((k + (a >> 2)) * m + j + ((a >> 1) & 1)) * m +
                                 i + (a & 1));
    return mesh;
  }

  /**
   * The truth-cube test: bottom (z = 0) on rollers, top (z = L) pressed
   * down by @p compression L in z (ramped over @p ramp_time), a small
   * sideways load on the nodes of the face x = L.
   */
  inline GPUAssembly::TLED::BoundaryConditions
  compression_conditions(const GPUAssembly::TLED::Mesh &mesh,
                         const double                   L,
                         const double                   compression,
                         const double                   ramp_time,
                         const double                   side_load = 0)
  {
    GPUAssembly::TLED::BoundaryConditions bc;
    const unsigned int                    n = mesh.n_nodes();
    bc.prescribed_components.assign(n, 0);
    bc.prescribed_values.assign(3 * std::size_t(n), 0.);
    bc.external_forces.assign(3 * std::size_t(n), 0.);
    bc.ramp_time = ramp_time;
    for (unsigned int v = 0; v < n; ++v)
      {
        const double x = mesh.coordinates[3 * v],
                     z = mesh.coordinates[3 * v + 2];
        if (z < 1e-9 * L)
          bc.prescribed_components[v] = 4;
        if (z > L * (1 - 1e-9))
          {
            bc.prescribed_components[v]     = 4;
            bc.prescribed_values[3 * v + 2] = -compression * L;
          }
        if (x > L * (1 - 1e-9))
          bc.external_forces[3 * v + 1] = side_load;
      }
    // The corner at the origin also held in x and y: no rigid sliding.
    bc.prescribed_components[0] = 7;
    return bc;
  }

  /// The truth cube's material: E = 3000 Pa, nu = 0.49, 1000 kg/m^3.
  inline GPUAssembly::TLED::Material
  truth_cube_material()
  {
    const double                E = 3000, nu = 0.49;
    GPUAssembly::TLED::Material material;
    material.mu      = E / (2 * (1 + nu));
    material.lambda  = E * nu / ((1 + nu) * (1 - 2 * nu));
    material.density = 1000;
    return material;
  }
} // namespace Testing

#endif
