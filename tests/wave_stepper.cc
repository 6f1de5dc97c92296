// SPDX-License-Identifier: LGPL-2.1-or-later
// The host central-difference stepper of the explicit wave solver:
// - with no damping and no source the discrete energy is conserved to
//   rounding (triangles and quadrilaterals); with damping it decreases;
// - the plan-based update (K', C', F' of Pogo eq. 4 in padded blocks)
//   equals an independent implementation of eq. 3 on the assembled system,
//   with damping, absorbing layers, force and prescribed sources;
// - results do not depend on the partitioner or the number of threads;
// - single precision stays close to double;
// - a time step above the stability limit is refused, and the limit is
//   tight: 5 % above it the scheme blows up;
// - vectors without two values per node are refused;
// - stopping and restarting from the saved state changes nothing.

#include <deal.II/base/exceptions.h>
#include <deal.II/base/multithread_info.h>

#include <gpu_assembly/wave/wave_stepper.h>

#include <cmath>

#include "tests.h"
#include "wave_test_model.h"

using namespace GPUAssembly::Wave;

namespace
{
  using Model = Testing::WaveModel;
  using Testing::blocks_of;

  Model
  make_model(const bool triangles, const bool damping, const bool sources)
  {
    return Testing::make_wave_model(triangles ? 3 : 4,
                                    triangles,
                                    damping,
                                    sources);
  }

  // A smooth bump plus rough noise: excites low and high modes alike.
  std::vector<double>
  initial_field(const WaveMesh &mesh, const double noise)
  {
    std::vector<double> u(2 * std::size_t(mesh.n_nodes));
    for (unsigned int i = 0; i < mesh.n_nodes; ++i)
      {
        const double x    = mesh.coordinates[2 * i] - 0.5,
                     y    = mesh.coordinates[2 * i + 1] - 0.5;
        const double bump = std::exp(-(x * x + y * y) / 0.02);
        u[2 * i]          = 1e-3 * bump + noise * std::sin(91.7 * i);
        u[2 * i + 1]      = -2e-3 * bump + noise * std::cos(53.3 * i);
      }
    return u;
  }

  // Eq. 3 on the assembled system, in node numbering, with the sources
  // applied as the steppers document: an implementation that shares no
  // code with the plan or the steppers.
  std::vector<double>
  reference_traces(const Model       &model,
                   const double       dt,
                   const unsigned int n_steps)
  {
    const NodalSystem  &S = model.system;
    const unsigned int  n = S.n_nodes;
    std::vector<double> u_prev(2 * n, 0.), u(2 * n, 0.), u_next(2 * n), traces;
    for (unsigned int step = 0; step < n_steps; ++step)
      {
        const double        t = step * dt;
        std::vector<double> F(2 * n, 0.), Ku(2 * n, 0.);
        for (const Source &source : model.sources)
          if (source.type == Source::Type::force)
            for (const unsigned int i : source.nodes)
              for (unsigned int c = 0; c < 2; ++c)
                F[2 * i + c] += source.amplitude * source.direction[c] *
                                source.signal.value(t);
        S.vmult_add(u, Ku);
        for (unsigned int i = 0; i < n; ++i)
          for (unsigned int c = 0; c < 2; ++c)
            {
              const double M = S.mass[i], C = S.damping[i];
              const double A = M / (dt * dt) + C / (2 * dt);
              u_next[2 * i + c] =
                (F[2 * i + c] +
                 (C / (2 * dt) - M / (dt * dt)) * u_prev[2 * i + c] +
                 2 * M / (dt * dt) * u[2 * i + c] - Ku[2 * i + c]) /
                A;
            }
        std::vector<double> prescribed(2 * n, 0.);
        std::vector<bool>   is_prescribed(2 * n, false);
        for (const Source &source : model.sources)
          if (source.type == Source::Type::displacement)
            for (const unsigned int i : source.nodes)
              for (unsigned int c = 0; c < 2; ++c)
                {
                  prescribed[2 * i + c] += source.amplitude *
                                           source.direction[c] *
                                           source.signal.value(t + dt);
                  is_prescribed[2 * i + c] = true;
                }
        for (unsigned int k = 0; k < 2 * n; ++k)
          if (is_prescribed[k])
            u_next[k] = prescribed[k];
        for (const unsigned int r : model.receivers)
          {
            traces.push_back(u_next[2 * r]);
            traces.push_back(u_next[2 * r + 1]);
          }
        u_prev.swap(u);
        u.swap(u_next);
      }
    return traces;
  }

  template <typename Number>
  std::vector<double>
  run(const Model          &model,
      const PartitionerType type,
      const double          dt,
      const unsigned int    n_steps)
  {
    const Plan<Number>  plan = make_plan<Number>(model.system,
                                                blocks_of(model, type),
                                                dt,
                                                model.dt_stable,
                                                model.sources,
                                                model.receivers,
                                                n_steps);
    HostStepper<Number> stepper;
    stepper.reinit(plan, 1);
    stepper.advance(n_steps);
    return stepper.receiver_history();
  }
} // namespace

int
main()
{
  Testing::Checks checks;

  // Energy.
  for (const bool triangles : {true, false})
    {
      const std::string  cells   = triangles ? "triangles" : "quadrilaterals";
      const Model        model   = make_model(triangles, false, false);
      const double       dt      = 0.7 * model.dt_stable;
      const unsigned int n_steps = 2000;
      const Plan<double> plan =
        make_plan<double>(model.system,
                          blocks_of(model, PartitionerType::aligned),
                          dt,
                          model.dt_stable,
                          {},
                          {},
                          n_steps);
      HostStepper<double> stepper;
      stepper.reinit(plan, 1);
      const std::vector<double> u0 = initial_field(model.mesh, 1e-5);
      stepper.set_state(0, u0, u0);
      std::vector<double> u_prev, u_curr;
      stepper.advance(1);
      stepper.get_state(u_prev, u_curr);
      const double energy0 = model.system.discrete_energy(u_prev, u_curr, dt);
      double       drift = 0, motion = 0;
      for (unsigned int chunk = 0; chunk < 20; ++chunk)
        {
          stepper.advance(n_steps / 20);
          stepper.get_state(u_prev, u_curr);
          drift =
            std::max(drift,
                     std::abs(model.system.discrete_energy(u_prev, u_curr, dt) -
                              energy0) /
                       energy0);
          motion = std::max(motion, Testing::relative_l2_error(u_curr, u0));
        }
      checks.check(energy0 > 0 && motion > 0.5,
                   cells + ": the initial state moves (relative change " +
                     Testing::scientific(motion) + ")");
      checks.check(drift < 1e-11,
                   cells + ": undamped, unforced energy conserved over " +
                     std::to_string(n_steps) + " steps, relative drift " +
                     Testing::scientific(drift));
    }
  {
    Model              model = make_model(true, true, false);
    const double       dt    = 0.7 * model.dt_stable;
    const Plan<double> plan =
      make_plan<double>(model.system,
                        blocks_of(model, PartitionerType::greedy),
                        dt,
                        model.dt_stable,
                        {},
                        {},
                        0);
    HostStepper<double> stepper;
    stepper.reinit(plan, 1);
    const std::vector<double> u0 = initial_field(model.mesh, 0);
    stepper.set_state(0, u0, u0);
    std::vector<double> u_prev, u_curr;
    double              last       = std::numeric_limits<double>::max();
    bool                decreasing = true;
    for (unsigned int chunk = 0; chunk < 20; ++chunk)
      {
        stepper.advance(100);
        stepper.get_state(u_prev, u_curr);
        const double energy = model.system.discrete_energy(u_prev, u_curr, dt);
        decreasing          = decreasing && energy < last;
        last                = energy;
      }
    checks.check(decreasing, "with damping the energy decreases");
  }

  // Against eq. 3, partitioner and thread independence, float.
  {
    const Model               model     = make_model(true, true, true);
    const double              dt        = 0.8 * model.dt_stable;
    const unsigned int        n_steps   = static_cast<unsigned int>(4.0 / dt);
    const std::vector<double> reference = reference_traces(model, dt, n_steps);
    const std::vector<double> aligned =
      run<double>(model, PartitionerType::aligned, dt, n_steps);
    const std::vector<double> greedy =
      run<double>(model, PartitionerType::greedy, dt, n_steps);
    double peak = 0;
    for (const double v : reference)
      peak = std::max(peak, std::abs(v));
    checks.check(peak > 1e-4,
                 "the sources reach the receivers (peak " +
                   Testing::scientific(peak) + ")");
    const double error = Testing::max_relative_difference(aligned, reference);
    checks.check(aligned.size() == reference.size() && error < 1e-10,
                 "plan and steppers equal eq. 3 on the assembled system "
                 "over " +
                   std::to_string(n_steps) +
                   " steps: max relative difference " +
                   Testing::scientific(error));
    checks.check(aligned == greedy,
                 "aligned and greedy partitions give bitwise equal traces");
    dealii::MultithreadInfo::set_thread_limit(1);
    const std::vector<double> one_thread =
      run<double>(model, PartitionerType::aligned, dt, n_steps);
    dealii::MultithreadInfo::set_thread_limit();
    checks.check(one_thread == aligned,
                 "one thread and all threads give bitwise equal traces");
    const std::vector<double> single =
      run<float>(model, PartitionerType::aligned, dt, n_steps);
    const double float_error =
      Testing::max_relative_difference(single, aligned);
    checks.check(float_error < 1e-3 && float_error > 0,
                 "single precision within 1e-3 of double: " +
                   Testing::scientific(float_error));
  }

  // Stability.
  {
    const Model model = make_model(true, false, false);
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        make_plan<double>(model.system,
                          blocks_of(model, PartitionerType::greedy),
                          1.01 * model.dt_stable,
                          model.dt_stable,
                          {},
                          {},
                          0);
      },
      "exceeds the stability limit",
      "a time step above the stability limit is refused");
    const std::vector<double> too_short(2 * model.system.n_nodes - 1, 0.),
      right(2 * model.system.n_nodes, 0.);
    std::vector<double> result = right;
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        model.system.vmult_add(too_short, result);
      },
      "Dimension " + std::to_string(too_short.size()) + " not equal to " +
        std::to_string(right.size()),
      "NodalSystem::vmult_add() refuses a vector without two values per "
      "node");
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        model.system.discrete_energy(right, too_short, 1.);
      },
      "Dimension " + std::to_string(too_short.size()) + " not equal to " +
        std::to_string(right.size()),
      "NodalSystem::discrete_energy() refuses states of different sizes");
    for (const double factor : {0.98, 1.05})
      {
        const double       dt = factor * model.dt_stable;
        const Plan<double> plan =
          make_plan<double>(model.system,
                            blocks_of(model, PartitionerType::greedy),
                            dt,
                            0,
                            {},
                            {},
                            0);
        HostStepper<double> stepper;
        stepper.reinit(plan, 1);
        const std::vector<double> u0 = initial_field(model.mesh, 1e-3);
        stepper.set_state(0, u0, u0);
        stepper.advance(3000);
        std::vector<double> u_prev, u_curr;
        stepper.get_state(u_prev, u_curr);
        const double growth = Testing::relative_l2_error(u_curr, u0);
        if (factor < 1)
          checks.check(growth < 10,
                       "at 0.98 of the estimated limit the scheme is stable "
                       "(|u - u0| / |u0| = " +
                         Testing::scientific(growth) + ")");
        else
          checks.check(!(growth < 1e3),
                       "at 1.05 of the estimated limit the scheme blows up "
                       "(|u - u0| / |u0| = " +
                         Testing::scientific(growth) +
                         "): the estimate is tight");
      }
  }

  // Stop and restart.
  {
    const Model        model   = make_model(false, true, true);
    const double       dt      = 0.8 * model.dt_stable;
    const unsigned int n_steps = 600;
    const Plan<double> plan =
      make_plan<double>(model.system,
                        blocks_of(model, PartitionerType::aligned),
                        dt,
                        model.dt_stable,
                        model.sources,
                        model.receivers,
                        n_steps);
    HostStepper<double> whole;
    whole.reinit(plan, 3);
    whole.advance(n_steps);
    checks.check(
      Testing::restarted_traces<HostStepper>(plan, 3, 250, n_steps) ==
          whole.receiver_history() &&
        whole.receiver_history().size() ==
          2 * model.receivers.size() * (n_steps / 3),
      "a run stopped after 250 steps and restarted from its "
      "state records the same traces bitwise");
  }
  return checks.exit_code();
}
