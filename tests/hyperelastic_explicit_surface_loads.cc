// SPDX-License-Identifier: LGPL-2.1-or-later
// The hyperelastic app's surface loads in the explicit (TLED) integrator on
// the host, against analytic results: a block on three symmetry rollers
// under a uniform dead traction, damped to rest, reaches the homogeneous
// neo-Hookean uniaxial state, and its consistent nodal forces sum to the
// traction times the face's area times the time function at t_n; under a
// follower pressure on its three free faces it reaches the hydrostatic
// state whose Cauchy stress is -p (the pressure acts on the current
// surface); the pressure's nodal forces over a closed deformed surface sum
// to zero, and over a deformed flat face to p times its current area along
// its normal; a bent bar of tetrahedra under both loads, damped to rest,
// equals the implicit integrator's quasi-static solution on the same mesh;
// and entries that select no face are refused, naming them.

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "explicit_solid.h"
#include "hyperelastic_test_utilities.h"
#include "tests.h"

namespace
{
  using namespace Testing;
  using dealii::Point;

  constexpr double mu     = 1.;
  constexpr double lambda = 1.5;

  /// P_11 of the neo-Hookean material at stretch l and J.
  double
  principal_piola(const double l, const double J)
  {
    return mu * l + (lambda * std::log(J) - mu) / l;
  }

  /// The root of the increasing function g in [low, high], by bisection to
  /// round-off.
  template <typename Function>
  double
  bisect(const Function &g, double low, double high)
  {
    for (unsigned int it = 0; it < 200; ++it)
      {
        const double mid          = 0.5 * (low + high);
        (g(mid) > 0 ? high : low) = mid;
      }
    return 0.5 * (low + high);
  }

  /// The unit block [0, 1]^3 of @p cells cells per direction on rollers at
  /// x = 0, y = 0, z = 0, explicit, on the host, damped by @p damping, with
  /// the 'Surface loads' @p surface.
  std::string
  block(const std::string              &cells,
        const std::string              &cell_type,
        const double                    damping,
        const std::vector<std::string> &surface)
  {
    return prm_subsection("Geometry",
                          {"Bar size = 1, 1, 1",
                           "Subdivisions = " + cells,
                           "Cell type = " + cell_type}) +
           prm_subsection("Material",
                          {"Shear modulus = " + std::to_string(mu),
                           "Lame lambda = " + std::to_string(lambda),
                           "Density = 1"}) +
           prm_subsection("Boundary conditions",
                          {"Fixed boundary ids = ",
                           "Load region = ",
                           "Load = 0, 0, 0",
                           "Rollers = 0: x; 2: y; 4: z"}) +
           prm_subsection("Execution", {"Device = host"}) +
           prm_subsection("Time", {"Time integration = explicit"}) +
           prm_subsection("Explicit dynamics",
                          {"Damping = " + std::to_string(damping)}) +
           prm_subsection("Surface loads", surface);
  }

  std::unique_ptr<Hyperelastic::ExplicitSolid>
  make_solid(const std::string &prm, std::ostream &log)
  {
    auto solid =
      std::make_unique<Hyperelastic::ExplicitSolid>(hyperelastic_parameters(
                                                      prm),
                                                    log);
    solid->setup();
    return solid;
  }

  Point<3>
  vertex(const Hyperelastic::ExplicitSolid &solid, const unsigned int v)
  {
    const auto &X = solid.model().coordinates;
    return Point<3>(X[3 * v], X[3 * v + 1], X[3 * v + 2]);
  }

  /// The largest distance of a node from x = diag(s) X.
  double
  distance_to_stretch(const Hyperelastic::ExplicitSolid &solid,
                      const std::array<double, 3>       &s)
  {
    const std::vector<double> u     = solid.displacement();
    double                    error = 0;
    for (unsigned int v = 0; v < u.size() / 3; ++v)
      for (unsigned int d = 0; d < 3; ++d)
        error =
          std::max(error,
                   std::abs(u[3 * v + d] - (s[d] - 1.) * vertex(solid, v)[d]));
    return error;
  }

  /// Advance @p solid to time @p t.
  void
  advance_to(Hyperelastic::ExplicitSolid &solid, const double t)
  {
    const unsigned int n = std::ceil(t / solid.time_step());
    solid.advance(n - std::min(n, solid.step()));
  }

  std::array<double, 3>
  sum_of(const std::vector<double> &f)
  {
    std::array<double, 3> sum{{0, 0, 0}};
    for (std::size_t i = 0; i < f.size(); ++i)
      sum[i % 3] += f[i];
    return sum;
  }
} // namespace



int
main()
{
  Checks             checks;
  std::ostringstream log;

  // The damped run: mass-proportional damping D = 3 /s damps every mode at
  // least at the rate of the slowest, about 1 /s for this block (its lowest
  // frequencies are near 1.5 rad/s, damped near critically), so after
  // t = 60 s the transient of the load ramp (1 s) has decayed by far more
  // than 1e-12: the nodes stand at the static solution to round-off of the
  // steps, which the tolerance 1e-9 leaves room for.
  const double damping = 3., end_time = 60.;

  // (a) A dead traction T e_x on the face x = 1, ramped by min(1, t):
  // the homogeneous state x = (l1 X, l2 Y, l2 Z), P_11 = T, P_22 = P_33 =
  // 0, which the one-point hexahedra and the tetrahedra hold exactly.
  {
    const double T  = 0.4;
    const auto   l2 = [&](const double l1) {
      return std::sqrt(l1 * l1 - T * l1 / mu);
    };
    const double l1 = bisect(
      [&](const double l) {
        return principal_piola(l, l * l2(l) * l2(l)) - T;
      },
      std::max(1., T / mu) + 1e-14,
      10.);
    for (const auto &[cells, type] :
         {std::pair<std::string, std::string>{"3, 2, 2", "hexahedra"},
          std::pair<std::string, std::string>{"2, 2, 2", "tetrahedra"}})
      {
        auto solid =
          make_solid(block(cells,
                           type,
                           damping,
                           {"Traction boundary ids = 1",
                            "Traction = " + std::to_string(T) + ", 0, 0",
                            "Traction time function = min(1, t)"}),
                     log);
        // The total nodal force at step n is T a(t_n) times the area 1,
        // the consistent forces of the faces summing to their areas.
        const unsigned int          n = 3;
        const double                a = std::min(1., n * solid->time_step());
        const std::array<double, 3> total =
          sum_of(solid->surface_forces(n, solid->displacement()));
        checks.check(std::abs(total[0] - T * a) < 1e-15 &&
                       std::abs(total[1]) < 1e-15 && std::abs(total[2]) < 1e-15,
                     type + ": the traction's nodal forces at step " +
                       std::to_string(n) + " sum to (" + scientific(total[0]) +
                       ", " + scientific(total[1]) + ", " +
                       scientific(total[2]) + "), T a(t_n) area = " +
                       scientific(T * a) + " along x, to 1e-15");
        advance_to(*solid, end_time);
        const double error =
          distance_to_stretch(*solid, {{l1, l2(l1), l2(l1)}});
        checks.check(error < 1e-9,
                     type + ": damped to rest under the dead traction T = " +
                       scientific(T) +
                       ", the nodes' largest distance to the homogeneous "
                       "state (l1 = " +
                       std::to_string(l1) + ", l2 = " + std::to_string(l2(l1)) +
                       ") is " + scientific(error) + " < 1e-9");
      }
  }

  // (b) A follower pressure p on the faces x = 1, y = 1, z = 1: the
  // hydrostatic state x = l X with Cauchy stress -p I, (mu (l^2 - 1) +
  // lambda ln J) / J = -p, J = l^3. A dead load p N would give another
  // l: the run checks that the pressure acts on the current surface.
  {
    const double p = 0.3;
    const double l = bisect(
      [&](const double s) {
        const double J = s * s * s;
        return (mu * (s * s - 1.) + lambda * std::log(J)) / J + p;
      },
      0.3,
      1.);
    auto solid = make_solid(block("3, 2, 2",
                                  "hexahedra",
                                  damping,
                                  {"Pressure boundary ids = 1, 3, 5",
                                   "Pressure = " + std::to_string(p),
                                   "Pressure time function = min(1, t)"}),
                            log);
    advance_to(*solid, end_time);
    const double error = distance_to_stretch(*solid, {{l, l, l}});
    checks.check(error < 1e-9,
                 "damped to rest under the follower pressure p = " +
                   scientific(p) +
                   ", the nodes' largest distance to the hydrostatic state "
                   "(l = " +
                   std::to_string(l) + ") is " + scientific(error) + " < 1e-9");
  }

  // (c) The pressure's nodal forces in a deformed state: a shear traction
  // and a pressure deform the block unevenly for 40 steps; over the closed
  // surface (all six faces) the pressure's forces sum to zero (the vector
  // area of a closed surface of bilinear faces is zero, and the two-point
  // rule integrates each face's exactly).
  {
    auto deformer = make_solid(block("3, 2, 2",
                                     "hexahedra",
                                     0.,
                                     {"Traction boundary ids = 1",
                                      "Traction = 0, 0.2, 0.1",
                                      "Pressure boundary ids = 3",
                                      "Pressure = 0.2"}),
                               log);
    deformer->advance(40);
    const std::vector<double> u    = deformer->displacement();
    double                    size = 0;
    for (const double value : u)
      size = std::max(size, std::abs(value));
    const double                p      = 0.7;
    auto                        closed = make_solid(block("3, 2, 2",
                                   "hexahedra",
                                   0.,
                                   {"Pressure boundary ids = 0, 1, 2, 3, 4, 5",
                                                           "Pressure = " + std::to_string(p)}),
                             log);
    const std::array<double, 3> net    = sum_of(closed->surface_forces(0, u));
    checks.check(size > 1e-2 && std::abs(net[0]) < 1e-14 &&
                   std::abs(net[1]) < 1e-14 && std::abs(net[2]) < 1e-14,
                 "the pressure p = " + scientific(p) +
                   " on the closed surface of the block deformed unevenly "
                   "(largest |u| " +
                   scientific(size) + " > 1e-2) gives the net force (" +
                   scientific(net[0]) + ", " + scientific(net[1]) + ", " +
                   scientific(net[2]) + "), zero to 1e-14");

    // A flat face in a deformed state: u = (0.1 X^2, 0.05 Y Z + 0.1 X Y,
    // 0.03 Z^2) keeps the face X = 1 in the plane x = 1.1 and stretches
    // it unevenly. The pressure on it gives -p A e_x, A its current area:
    // the sum of the shoelace areas of its current quadrilaterals.
    auto                flat = make_solid(block("3, 2, 2",
                                 "hexahedra",
                                 0.,
                                 {"Pressure boundary ids = 1",
                                                 "Pressure = " + std::to_string(p)}),
                           log);
    std::vector<double> w(u.size());
    const auto          current = [&](const Point<3> &X) {
      return Point<3>(X[0] + 0.1 * X[0] * X[0],
                      X[1] + 0.05 * X[1] * X[2] + 0.1 * X[0] * X[1],
                      X[2] + 0.03 * X[2] * X[2]);
    };
    for (unsigned int v = 0; v < w.size() / 3; ++v)
      {
        const Point<3> X = vertex(*flat, v);
        for (unsigned int d = 0; d < 3; ++d)
          w[3 * v + d] = current(X)[d] - X[d];
      }
    double area = 0;
    for (const auto &cell : flat->get_triangulation().active_cell_iterators())
      for (const auto &face : cell->face_iterators())
        if (face->at_boundary() && face->boundary_id() == 1)
          {
            // deal.II's face vertices 0, 1, 3, 2 go round the quadrilateral.
            const unsigned int order[4] = {0, 1, 3, 2};
            for (unsigned int k = 0; k < 4; ++k)
              {
                const Point<3> a = current(face->vertex(order[k]));
                const Point<3> b = current(face->vertex(order[(k + 1) % 4]));
                area += 0.5 * (a[1] * b[2] - b[1] * a[2]);
              }
          }
    const std::array<double, 3> force = sum_of(flat->surface_forces(0, w));
    checks.check(std::abs(area) > 1.1 &&
                   std::abs(force[0] + p * std::abs(area)) < 1e-14 &&
                   std::abs(force[1]) < 1e-14 && std::abs(force[2]) < 1e-14,
                 "the pressure p = " + scientific(p) +
                   " on the face X = 1, deformed flat to the current area " +
                   scientific(std::abs(area)) + ", gives the force (" +
                   scientific(force[0]) + ", " + scientific(force[1]) + ", " +
                   scientific(force[2]) + "), -p A e_x to 1e-14");
  }

  // (d) A bent bar of tetrahedra, clamped at x = 0, under a dead traction
  // on its end face and a follower pressure on its top face: the explicit
  // run damped to rest equals the implicit quasi-static solution on the
  // same mesh, whose discretization is the same (linear tetrahedra, one
  // point, the same face integrals), so the two differ by the Newton
  // tolerance and the explicit run's remaining transient only. The damping
  // D = 1.7 /s is about critical for the first bending mode (near 0.9
  // rad/s), so after 60 s the transient has decayed by far more than the
  // tolerance 1e-8 of the largest displacement.
  {
    const std::string bar =
      prm_subsection("Geometry",
                     {"Bar size = 2, 1, 1",
                      "Subdivisions = 4, 2, 2",
                      "Cell type = tetrahedra"}) +
      prm_subsection(
        "Boundary conditions",
        {"Fixed boundary ids = 0", "Load region = ", "Load = 0, 0, 0"}) +
      prm_subsection("Execution", {"Device = host"}) +
      prm_subsection("Surface loads",
                     {"Traction boundary ids = 1",
                      "Traction = 0, 0.1, -0.2",
                      "Traction time function = min(1, t)",
                      "Pressure boundary ids = 5",
                      "Pressure = 0.1",
                      "Pressure time function = min(1, t)"});
    const auto implicit =
      run_hyperelastic(bar +
                         prm_subsection("Time",
                                        {"Mode = quasi-static",
                                         "End time = 1",
                                         "Time step = 0.25"}) +
                         prm_subsection("Solver", {"Newton tolerance = 1e-13"}),
                       4,
                       log);
    const auto [u_implicit, p_implicit] = implicit->state();
    const GPUAssembly::MeshArrays &a    = implicit->arrays();

    auto explicit_solid =
      make_solid(bar + prm_subsection("Time", {"Time integration = explicit"}) +
                   prm_subsection("Explicit dynamics", {"Damping = 1.7"}),
                 log);
    advance_to(*explicit_solid, end_time);
    const std::vector<double>       u_explicit = explicit_solid->displacement();
    std::map<NodeKey, unsigned int> implicit_node;
    for (unsigned int n = 0; n < a.n_nodes; ++n)
      implicit_node[node_key(Point<3>(a.nodal_coordinates[3 * n],
                                      a.nodal_coordinates[3 * n + 1],
                                      a.nodal_coordinates[3 * n + 2]))] = n;
    double difference = 0, size = 0;
    bool   matched = a.n_nodes == u_explicit.size() / 3;
    for (unsigned int v = 0; v < u_explicit.size() / 3; ++v)
      {
        const auto it =
          implicit_node.find(node_key(vertex(*explicit_solid, v)));
        matched = matched && it != implicit_node.end();
        if (it == implicit_node.end())
          continue;
        for (unsigned int d = 0; d < 3; ++d)
          {
            const double u = u_implicit[a.node_dofs[3 * it->second + d]];
            difference =
              std::max(difference, std::abs(u_explicit[3 * v + d] - u));
            size = std::max(size, std::abs(u));
          }
      }
    checks.check(matched && size > 1e-2 && difference < 1e-8 * size,
                 "tetrahedral bar under a traction and a pressure: the "
                 "explicit run damped to rest equals the implicit "
                 "quasi-static solution to " +
                   scientific(difference) +
                   " < 1e-8 of the largest "
                   "displacement " +
                   scientific(size));
  }

  // (e) Entries that select no face are refused, naming them.
  checks.check_throws<dealii::ExceptionBase>(
    [&]() {
      make_solid(block("3, 2, 2",
                       "hexahedra",
                       damping,
                       {"Pressure region = 5, 5, 5, 6, 6, 6", "Pressure = 1"}),
                 log);
    },
    "'Surface loads/Pressure region' = 'a box' select no boundary face",
    "explicit: a pressure region that selects no face is refused, naming "
    "the entries");

  return checks.exit_code();
}
