// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_tled_test_meshes_h
#define gpu_assembly_tests_tled_test_meshes_h

// TLED test problems: a compressed cube with rollers, a load and damping.

#include <gpu_assembly/tled/tled_model.h>
#include <gpu_assembly/tled/tled_stepper.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tests.h"

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

  /**
   * Where a stepper stopped at a step that was not finite, and the state
   * it kept.
   */
  struct NonFiniteStop
  {
    unsigned int        step = 0, node = 0;
    std::vector<double> u_previous, u_current;
  };

  /**
   * A cube of n^3 hexahedra whose top is pressed through its bottom (3 L in
   * 20 stable steps) inverts its elements. @p stepper runs it by advance()
   * of @p chunk steps up to 1000 steps and must stop at a step that is not
   * finite and keep the last finite state there: checks that it stops
   * within 1000 steps, that the state it keeps is finite with an inverted
   * element or a step to a non-finite state from it, that advance() then
   * does nothing, and that set_state() lets it step again. Returns the stop.
   */
  inline NonFiniteStop
  check_non_finite_stop(Checks                             &checks,
                        GPUAssembly::TLED::Stepper<double> &stepper,
                        const unsigned int                  chunk,
                        const std::string                  &name)
  {
    using namespace GPUAssembly::TLED;
    const Mesh          mesh  = make_hexahedral_cube(4, 1., 0.1);
    const Model<double> model = make_model<double>(mesh, truth_cube_material());
    Integration         integration;
    integration.time_step = 0.5 * model.critical_time_step;
    const BoundaryConditions bc =
      compression_conditions(mesh, 1., 3., 20 * integration.time_step);
    stepper.reinit(model, bc, integration);
    const unsigned int none = static_cast<unsigned int>(-1);
    for (unsigned int done = 0;
         done < 1000 && stepper.non_finite_node() == none;
         done += chunk)
      stepper.advance(chunk);
    NonFiniteStop stop;
    stop.step = stepper.step();
    stop.node = stepper.non_finite_node();
    stepper.get_state(stop.u_previous, stop.u_current);
    checks.check(stop.node < model.n_nodes && stop.step < 1000,
                 name +
                   ": a cube pressed through itself stops at a step "
                   "that is not finite (step " +
                   std::to_string(stop.step) + ", node " +
                   std::to_string(stop.node) + ")");
    const bool finite = std::all_of(stop.u_previous.begin(),
                                    stop.u_previous.end(),
                                    [](const double x) {
                                      return std::isfinite(x);
                                    }) &&
                        std::all_of(stop.u_current.begin(),
                                    stop.u_current.end(),
                                    [](const double x) {
                                      return std::isfinite(x);
                                    });
    const double J = minimum_jacobian(model, stop.u_current).first;
    checks.check(finite && !(J > 0),
                 name +
                   ": the state kept at the stop is finite and has an "
                   "inverted element (smallest J " +
                   scientific(J) + ")");
    stepper.advance(5);
    std::vector<double> u_previous, u_current;
    stepper.get_state(u_previous, u_current);
    checks.check(stepper.step() == stop.step && u_previous == stop.u_previous &&
                   u_current == stop.u_current,
                 name + ": advance() after the stop does no step and keeps "
                        "the state");
    stepper.set_state(0,
                      std::vector<double>(u_current.size(), 0.),
                      std::vector<double>(u_current.size(), 0.));
    stepper.advance(3);
    checks.check(stepper.non_finite_node() == none && stepper.step() == 3,
                 name + ": set_state() clears the stop, the stepper steps "
                        "again");
    return stop;
  }
} // namespace Testing

#endif
