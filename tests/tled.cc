// SPDX-License-Identifier: LGPL-2.1-or-later
// TLED on the host: the discrete energy does not drift without damping
// and loads (double, 10,000 steps, hexahedra and tetrahedra, strains of
// 1e-4 and 1e-6); a uniform strain
// is reproduced exactly on distorted meshes (patch test: no force at inner
// nodes, inner nodes stay on the linear field while the boundary is held
// on it); a cube driven in its hourglass pattern stays bounded with
// hourglass control and runs away without it; the computed stable time
// step lies below the true limit 2 / sqrt(lambda_max(M^-1 K)), and a
// larger step is refused with the limit in the message; the portable
// logarithm agrees with std::log; the host stepper gives bitwise the same
// states on one thread as on all; a step that is not finite (an inverted
// element) is not taken: the stepper stops at the last finite state, the
// same state and node whatever the advance() sizes; step forces that
// reproduce the ramped external force give its states bitwise and see the
// current state.

#include <deal.II/base/multithread_info.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>

#include <gpu_assembly/tled/tled_element.h>
#include <gpu_assembly/tled/tled_mesh.h>
#include <gpu_assembly/tled/tled_stepper.h>

#include <cmath>
#include <random>

#include "tests.h"
#include "tled_test_meshes.h"

using namespace GPUAssembly::TLED;

namespace
{
  // An n^3 unit cube of hexahedra or tetrahedra, inner vertices moved by up
  // to @p distortion of the cell size.
  Mesh
  make_cube(const unsigned int n, const bool hexahedra, const double distortion)
  {
    dealii::Triangulation<3> tria;
    if (hexahedra)
      dealii::GridGenerator::subdivided_hyper_cube(tria, n, 0., 1.);
    else
      dealii::GridGenerator::subdivided_hyper_rectangle_with_simplices(
        tria,
        {n, n, n},
        dealii::Point<3>(),
        dealii::Point<3>(1, 1, 1));
    Mesh                                   mesh = make_mesh(tria);
    std::mt19937                           random(7);
    std::uniform_real_distribution<double> shift(-1., 1.);
    const double                           h = 1. / n;
    for (unsigned int v = 0; v < mesh.n_nodes(); ++v)
      {
        bool inner = true;
        for (unsigned int d = 0; d < 3; ++d)
          {
            const double x = mesh.coordinates[3 * v + d];
            inner          = inner && x > 1e-12 && x < 1 - 1e-12;
          }
        for (unsigned int d = 0; d < 3; ++d)
          {
            const double s = shift(random);
            if (inner)
              mesh.coordinates[3 * v + d] += distortion * h * s;
          }
      }
    return mesh;
  }

  bool
  on_boundary(const Mesh &mesh, const unsigned int v)
  {
    for (unsigned int d = 0; d < 3; ++d)
      {
        const double x = mesh.coordinates[3 * v + d];
        if (x < 1e-12 || x > 1 - 1e-12)
          return true;
      }
    return false;
  }

  Material
  test_material(const double kappa = 0.1)
  {
    Material m;
    m.mu                    = 1000.;
    m.lambda                = 9000.;
    m.density               = 1000.;
    m.hourglass_coefficient = kappa;
    return m;
  }

  // lambda_max(M^-1 K) at u = 0 by power iteration, K v from central
  // differences of the internal forces (exact to rounding at this scale).
  double
  max_eigenvalue(const Model<double> &model)
  {
    const std::size_t   n      = 3 * std::size_t(model.n_nodes);
    std::vector<double> v      = Testing::random_values(n, 3);
    double              lambda = 0;
    for (unsigned int it = 0; it < 400; ++it)
      {
        double norm = 0;
        for (const double x : v)
          norm += x * x;
        norm = std::sqrt(norm);
        std::vector<double> plus(n), minus(n);
        const double        eps = 1e-7;
        for (std::size_t i = 0; i < n; ++i)
          {
            v[i] /= norm;
            plus[i]  = eps * v[i];
            minus[i] = -eps * v[i];
          }
        const auto fp       = internal_forces(model, plus);
        const auto fm       = internal_forces(model, minus);
        double     rayleigh = 0;
        for (std::size_t i = 0; i < n; ++i)
          {
            const double Kv = (fp[i] - fm[i]) / (2 * eps);
            const double w  = Kv / model.lumped_mass[i / 3];
            rayleigh += v[i] * w;
            v[i] = w;
          }
        lambda = rayleigh;
      }
    return lambda;
  }

  void
  check_energy(Testing::Checks &checks,
               const bool       hexahedra,
               const double     amplitude)
  {
    const std::string   name  = hexahedra ? "hexahedra" : "tetrahedra";
    const Mesh          mesh  = make_cube(4, hexahedra, 0.15);
    const Model<double> model = make_model<double>(mesh, test_material());
    // The discrete energy H is exact for a linear material; the
    // material's nonlinearity adds an error of O(strain (omega dt)^2) (at
    // half the stable step and strains of 1e-3 it reaches 1e-3), so the
    // check runs at a fifth of the stable step and strains of 1e-4 and
    // 1e-6.
    Integration integration;
    integration.time_step = 0.2 * model.critical_time_step;
    HostStepper<double> stepper;
    stepper.reinit(model, BoundaryConditions(), integration);
    // A smooth initial displacement (strains of about 1e-3) at rest.
    std::vector<double> u0(3 * std::size_t(model.n_nodes));
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      {
        const double x = mesh.coordinates[3 * v],
                     y = mesh.coordinates[3 * v + 1],
                     z = mesh.coordinates[3 * v + 2];
        u0[3 * v]      = amplitude * std::sin(3 * x) * std::cos(2 * y);
        u0[3 * v + 1]  = amplitude * std::sin(2 * z + x);
        u0[3 * v + 2]  = -amplitude * std::cos(3 * y) * z;
      }
    stepper.set_state(0, u0, u0);
    std::vector<double> u_prev, u_curr;
    const auto          energy = [&]() {
      stepper.get_state(u_prev, u_curr);
      return discrete_energy(model, u_prev, u_curr, integration.time_step);
    };
    // H sampled at every step of the first and the last 1000 of 10,000
    // steps: it oscillates slightly about a value that must not drift.
    double mean_first = 0, mean_last = 0, H0 = 0, fluctuation = 0;
    for (unsigned int n = 0; n < 10000; ++n)
      {
        stepper.advance(1);
        if (n >= 1000 && n < 9000)
          continue;
        const double H = energy();
        if (n == 0)
          H0 = H;
        fluctuation = std::max(fluctuation, std::abs(H - H0) / H0);
        (n < 1000 ? mean_first : mean_last) += H / 1000;
      }
    const double drift = std::abs(mean_last - mean_first) / mean_first;
    checks.check(H0 > 0 && drift < 1e-6,
                 name + ", strain amplitude " + Testing::scientific(amplitude) +
                   ": no drift of the discrete energy over 10,000 steps "
                   "without damping or load (mean of the last 1000 steps "
                   "against the first 1000: relative " +
                   Testing::scientific(drift) +
                   " < 1e-6; largest fluctuation " +
                   Testing::scientific(fluctuation) + ")");
    const double moved = Testing::max_relative_difference(u_curr, u0);
    checks.check(moved > 0.1,
                 name +
                   ": the body moved (the energy check is not vacuous): "
                   "max |u - u0| / max |u0| = " +
                   Testing::scientific(moved));
  }

  void
  check_patch(Testing::Checks &checks, const bool hexahedra)
  {
    const std::string   name  = hexahedra ? "hexahedra" : "tetrahedra";
    const Mesh          mesh  = make_cube(3, hexahedra, 0.25);
    const Model<double> model = make_model<double>(mesh, test_material(0.1));
    // A finite uniform strain: F = I + A.
    const double        A[3][3] = {{0.05, 0.02, -0.01},
                                   {0.01, -0.04, 0.03},
                                   {-0.02, 0.015, 0.06}};
    std::vector<double> u(3 * std::size_t(model.n_nodes));
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      for (unsigned int i = 0; i < 3; ++i)
        for (unsigned int K = 0; K < 3; ++K)
          u[3 * v + i] += A[i][K] * mesh.coordinates[3 * v + K];
    const auto f            = internal_forces(model, u);
    double     max_boundary = 0, max_inner = 0;
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      for (unsigned int i = 0; i < 3; ++i)
        (on_boundary(mesh, v) ? max_boundary : max_inner) =
          std::max(on_boundary(mesh, v) ? max_boundary : max_inner,
                   std::abs(f[3 * v + i]));
    checks.check(max_boundary > 0 && max_inner < 1e-12 * max_boundary,
                 name +
                   " patch test: no force at inner nodes of a distorted "
                   "mesh under uniform strain (max inner / max boundary "
                   "force " +
                   Testing::scientific(max_inner / max_boundary) + " < 1e-12)");

    // Held on the boundary, the inner nodes stay on the linear field.
    BoundaryConditions bc;
    bc.prescribed_components.assign(model.n_nodes, 0);
    bc.prescribed_values.assign(3 * std::size_t(model.n_nodes), 0.);
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      if (on_boundary(mesh, v))
        {
          bc.prescribed_components[v] = 7;
          for (unsigned int i = 0; i < 3; ++i)
            bc.prescribed_values[3 * v + i] = u[3 * v + i];
        }
    Integration integration;
    integration.time_step = 0.5 * model.critical_time_step;
    HostStepper<double> stepper;
    stepper.reinit(model, bc, integration);
    stepper.set_state(0, u, u);
    stepper.advance(500);
    std::vector<double> u_prev, u_curr;
    stepper.get_state(u_prev, u_curr);
    const double error = Testing::max_relative_difference(u_curr, u);
    checks.check(error < 1e-12,
                 name +
                   " patch test: 500 steps with the boundary held on a "
                   "uniform strain keep every node on it (max relative "
                   "difference " +
                   Testing::scientific(error) + " < 1e-12)");
  }

  // The global hourglass pattern: (-1)^(i+j+k) on the nodes of an n^3 grid.
  double
  run_hourglass(const double kappa, const unsigned int n_steps, double &growth)
  {
    // 4^3 nodes: as many of each sign, so no net force or moment.
    const unsigned int  n     = 3;
    const Mesh          mesh  = make_cube(n, true, 0.);
    const Model<double> model = make_model<double>(mesh, test_material(kappa));
    BoundaryConditions  bc;
    bc.external_forces.assign(3 * std::size_t(model.n_nodes), 0.);
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      {
        int parity = 0;
        for (unsigned int d = 0; d < 3; ++d)
          parity += int(std::lround(mesh.coordinates[3 * v + d] * n));
        bc.external_forces[3 * v] = (parity % 2 ? 1. : -1.) * 1e-2;
      }
    bc.ramp_time = 200 * 0.5 * model.critical_time_step;
    Integration integration;
    integration.time_step = 0.5 * model.critical_time_step;
    integration.damping   = 5.;
    HostStepper<double> stepper;
    stepper.reinit(model, bc, integration);
    std::vector<double> u_prev, u_curr;
    double              max_first = 0, max_second = 0;
    for (unsigned int k = 0; k < 20; ++k)
      {
        stepper.advance(n_steps / 20);
        stepper.get_state(u_prev, u_curr);
        double m = 0;
        for (const double x : u_curr)
          m = std::max(m, std::abs(x));
        (k < 10 ? max_first : max_second) =
          std::max(k < 10 ? max_first : max_second, m);
      }
    growth = max_second / max_first;
    return strain_energy(model, u_curr);
  }
} // namespace

int
main()
{
  Testing::Checks checks;

  {
    double worst = 0;
    for (double x = 1e-3; x < 1e3; x *= 1.0137)
      worst = std::max(worst,
                       std::abs(portable_log(x) - std::log(x)) /
                         std::max(std::abs(std::log(x)), 1e-300));
    double worst_near_1 = 0;
    for (double x = 0.9; x < 1.1; x += 1.37e-4)
      if (x != 1.)
        worst_near_1 = std::max(worst_near_1,
                                std::abs(portable_log(x) - std::log(x)) /
                                  std::abs(std::log(x)));
    checks.check(worst < 1e-15 && worst_near_1 < 1e-15,
                 "portable_log<double> within 1e-15 of std::log (relative " +
                   Testing::scientific(std::max(worst, worst_near_1)) + ")");
    double worst_float = 0;
    for (float x = 1e-2f; x < 1e2f; x *= 1.011f)
      worst_float =
        std::max(worst_float,
                 std::abs(double(portable_log(x)) - std::log(double(x))) /
                   std::max(std::abs(std::log(double(x))), 1e-3));
    checks.check(worst_float < 1e-6,
                 "portable_log<float> within 1e-6 of std::log (" +
                   Testing::scientific(worst_float) + ")");
    checks.check(std::isnan(portable_log(-1.)) && std::isnan(portable_log(0.)),
                 "portable_log of x <= 0 is NaN");
  }

  check_energy(checks, true, 1e-4);
  check_energy(checks, true, 1e-6);
  check_energy(checks, false, 1e-4);
  check_energy(checks, false, 1e-6);
  check_patch(checks, true);
  check_patch(checks, false);

  {
    double       growth_controlled, growth_free;
    const double controlled = run_hourglass(0.1, 20000, growth_controlled);
    const double free       = run_hourglass(0., 20000, growth_free);
    checks.check(growth_controlled < 1.05,
                 "hourglass pattern with control (kappa = 0.1): the "
                 "displacement stays bounded (max over the second half / "
                 "first half = " +
                   Testing::scientific(growth_controlled) + " < 1.05)");
    checks.check(growth_free > 1.5 && free < controlled,
                 "hourglass pattern without control (kappa = 0): the "
                 "displacement runs away with no stored energy (growth " +
                   Testing::scientific(growth_free) +
                   " > 1.5), so the check "
                   "above can fail");
  }

  for (const double kappa : {0.1, 0.5})
    for (const bool hexahedra : {true, false})
      {
        const std::string name =
          std::string(hexahedra ? "hexahedra" : "tetrahedra") +
          ", hourglass coefficient " + Testing::scientific(kappa);
        const Model<double> model =
          make_model<double>(make_cube(3, hexahedra, 0.2),
                             test_material(kappa));
        const double limit = 2. / std::sqrt(max_eigenvalue(model));
        checks.check(model.critical_time_step <= limit,
                     name + ": the stable time step L_e / c = " +
                       Testing::scientific(model.critical_time_step) +
                       " lies below the true limit 2 / sqrt(lambda_max) = " +
                       Testing::scientific(limit));
        checks.check_throws<dealii::ExceptionBase>(
          [&]() {
            Integration integration;
            integration.time_step = 1.01 * model.critical_time_step;
            HostStepper<double> stepper;
            stepper.reinit(model, BoundaryConditions(), integration);
          },
          "exceeds the stable limit",
          name + ": a time step 1 % above the limit is refused, naming the "
                 "limit");
      }

  {
    const Mesh          mesh  = make_cube(4, true, 0.2);
    const Model<double> model = make_model<double>(mesh, test_material());
    BoundaryConditions  bc;
    bc.external_forces.assign(3 * std::size_t(model.n_nodes), 0.);
    bc.prescribed_components.assign(model.n_nodes, 0);
    bc.prescribed_values.assign(3 * std::size_t(model.n_nodes), 0.);
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      {
        if (mesh.coordinates[3 * v + 2] < 1e-12)
          bc.prescribed_components[v] = 4;
        if (mesh.coordinates[3 * v + 2] > 1 - 1e-12)
          {
            bc.prescribed_components[v]     = 4;
            bc.prescribed_values[3 * v + 2] = -0.1;
          }
        bc.external_forces[3 * v] = 0.01 * mesh.coordinates[3 * v + 1];
      }
    bc.ramp_time = 300 * 0.5 * model.critical_time_step;
    Integration integration;
    integration.time_step = 0.5 * model.critical_time_step;
    integration.damping   = 2;
    std::vector<double> a_prev, a_curr, b_prev, b_curr;
    {
      HostStepper<double> stepper;
      stepper.reinit(model, bc, integration);
      stepper.advance(400);
      stepper.get_state(a_prev, a_curr);
    }
    dealii::MultithreadInfo::set_thread_limit(1);
    {
      HostStepper<double> stepper;
      stepper.reinit(model, bc, integration);
      stepper.advance(400);
      stepper.get_state(b_prev, b_curr);
    }
    checks.check(a_curr == b_curr && a_prev == b_prev,
                 "host stepper: bitwise the same states on one thread as on "
                 "all threads (400 steps with loads, prescribed displacements "
                 "and damping)");
  }

  {
    // Step forces: g_n = r(t_n) f_ext at the loaded nodes gives the states
    // of the ramped external force bitwise, and compute() sees u_n.
    const Mesh          mesh  = make_cube(3, true, 0.2);
    const Model<double> model = make_model<double>(mesh, test_material());
    const std::size_t   ns    = model.node_stride;
    BoundaryConditions  bc;
    bc.prescribed_components.assign(model.n_nodes, 0);
    bc.external_forces.assign(3 * std::size_t(model.n_nodes), 0.);
    std::vector<unsigned int> loaded;
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      {
        if (mesh.coordinates[3 * v] < 1e-12)
          bc.prescribed_components[v] = 7;
        if (mesh.coordinates[3 * v] > 1 - 1e-12)
          {
            loaded.push_back(v);
            bc.external_forces[3 * v + 1] = 0.01;
            bc.external_forces[3 * v + 2] = 0.003 * mesh.coordinates[3 * v + 1];
          }
      }
    bc.ramp_time = 50 * 0.5 * model.critical_time_step;
    Integration integration;
    integration.time_step = 0.5 * model.critical_time_step;
    integration.damping   = 1;

    struct RampedForces : StepForces<double>
    {
      std::vector<unsigned int> loaded;
      std::vector<double>       external; // the stepper's layout
      double                    dt = 0, ramp_time = 0;
      unsigned int              last_step = 0;
      std::vector<double>       last_u;

      std::vector<unsigned int>
      nodes() const override
      {
        return loaded;
      }
      void
      compute(const unsigned int step, const double *u, double *forces) override
      {
        const double r = smooth_ramp(double(step) * dt, ramp_time);
        for (std::size_t k = 0; k < external.size(); ++k)
          if (external[k] != 0)
            forces[k] = r * external[k];
        last_step = step;
        last_u.assign(u, u + external.size());
      }
      void
      prepare(CUstream_st *, const unsigned int, const unsigned int) override
      {}
      void
      enqueue(CUstream_st *,
              const unsigned int,
              const double *,
              double *) override
      {}
    };
    const auto forces = std::make_shared<RampedForces>();
    forces->loaded    = loaded;
    forces->external.assign(3 * ns, 0.);
    for (const unsigned int v : loaded)
      for (unsigned int d = 0; d < 3; ++d)
        forces->external[d * ns + v] = bc.external_forces[3 * v + d];
    forces->dt        = integration.time_step;
    forces->ramp_time = bc.ramp_time;

    std::vector<double> a_prev, a_curr, b_prev, b_curr;
    HostStepper<double> by_conditions, by_step_forces;
    by_conditions.reinit(model, bc, integration);
    by_conditions.advance(120);
    by_conditions.get_state(a_prev, a_curr);
    BoundaryConditions held = bc;
    held.external_forces.clear();
    by_step_forces.set_step_forces(forces);
    by_step_forces.reinit(model, held, integration);
    by_step_forces.advance(120);
    by_step_forces.get_state(b_prev, b_curr);
    double moved = 0, seen = 0;
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      for (unsigned int d = 0; d < 3; ++d)
        {
          moved = std::max(moved, std::abs(b_curr[3 * v + d]));
          seen =
            std::max(seen,
                     std::abs(forces->last_u[d * ns + v] - b_prev[3 * v + d]));
        }
    checks.check(moved > 1e-4 && a_curr == b_curr && a_prev == b_prev,
                 "step forces r(t_n) f_ext give bitwise the states of the "
                 "ramped external force (120 steps, largest |u| " +
                   Testing::scientific(moved) + ")");
    checks.check(forces->last_step == 119 && seen == 0,
                 "step forces: the last call is for step 119 (" +
                   std::to_string(forces->last_step) +
                   ") and sees u_119, the state before the last step");

    const auto stray = std::make_shared<RampedForces>();
    stray->loaded    = {model.n_nodes};
    HostStepper<double> refused;
    refused.set_step_forces(stray);
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        refused.reinit(model, held, integration);
      },
      "is not a node of the model",
      "step forces on a node the model does not have are refused");
  }

  {
    HostStepper<double>          by_one, by_chunk;
    const Testing::NonFiniteStop one =
      Testing::check_non_finite_stop(checks, by_one, 1, "host, advance(1)");
    const Testing::NonFiniteStop chunk =
      Testing::check_non_finite_stop(checks,
                                     by_chunk,
                                     1000,
                                     "host, advance(1000)");
    checks.check(one.step == chunk.step && one.node == chunk.node &&
                   one.u_previous == chunk.u_previous &&
                   one.u_current == chunk.u_current,
                 "host: the stop (step " + std::to_string(one.step) +
                   ", node " + std::to_string(one.node) +
                   ") and its state are the same whatever the advance() "
                   "sizes");
    // The state kept is that of a run that ends at the stop's step.
    HostStepper<double> fresh;
    Testing::check_non_finite_stop(checks, fresh, 1000, "host, again");
    fresh.set_state(0,
                    std::vector<double>(one.u_current.size(), 0.),
                    std::vector<double>(one.u_current.size(), 0.));
    fresh.advance(one.step);
    std::vector<double> u_previous, u_current;
    fresh.get_state(u_previous, u_current);
    checks.check(fresh.non_finite_node() == static_cast<unsigned int>(-1) &&
                   u_previous == one.u_previous && u_current == one.u_current,
                 "host: the state kept at the stop is bitwise that of a run "
                 "of " +
                   std::to_string(one.step) + " steps");
  }

  return checks.exit_code();
}
