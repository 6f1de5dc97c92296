// SPDX-License-Identifier: LGPL-2.1-or-later
// HyperelasticSolid's time loop: the loads of a step, the Newton loop
// (on the device as one graph launch where the backend can, else driven
// from the host), the failure reports, and the run with its summary.

#include <deal.II/base/function.h>

#include <gpu_assembly/base/device.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "../common/app_utilities.h"
#include "hyperelastic_solid.h"
#include "solid_common.h"

namespace Hyperelastic
{
  StepLoads
  HyperelasticSolid::loads_at(const double t_new) const
  {
    return Hyperelastic::loads_at(parameters, *load_function, time, t_new);
  }



  StepReport
  HyperelasticSolid::newton_loop(const StepLoads &loads)
  {
    return run_newton_loop(*backend, loads, parameters.solver, timer);
  }



  void
  HyperelasticSolid::do_step()
  {
    const auto  &solver = parameters.solver;
    const double t_new =
      std::min(time + parameters.time.time_step, parameters.time.end_time);
    const StepLoads loads = loads_at(t_new);

    // The whole step on the device where the backend can (one graph
    // launch, the same tests in the same order), else the loop above.
    StepReport report;
    bool       ran_whole = false;
    if (backend->runs_whole_steps())
      {
        NewtonControl control;
        control.tolerance         = solver.newton_tolerance;
        control.max_iterations    = solver.max_newton_iterations;
        control.divergence_limit  = solver.divergence_limit;
        control.cg_tolerance      = solver.cg_tolerance;
        control.max_cg_iterations = solver.max_cg_iterations;
        TimerOutput::Scope scope(timer, step_graph_section);
        ran_whole = backend->run_step(loads, control, report);
      }
    if (!ran_whole)
      report = newton_loop(loads);

    if (report.status != StepStatus::converged)
      stop(step_failure_message(report, parameters, step_number, t_new, [&]() {
        std::vector<double> u;
        {
          TimerOutput::Scope scope(timer, "Transfers");
          backend->get_iterate(u);
        }
        // The kernel saw the midpoint configuration.
        if (dynamic)
          {
            const auto [u_old, p_old] = state();
            for (unsigned int i = 0; i < u.size(); ++i)
              u[i] = 0.5 * (u[i] + u_old[i]);
          }
        return find_worst_element(u);
      }));

    time = t_new;
    ++step_number;
    record_step(stats, report, parameters.output, step_number, time, pcout);
  }



  void
  HyperelasticSolid::stop(const std::string &reason)
  {
    std::vector<double> u, p;
    {
      TimerOutput::Scope scope(timer, "Transfers");
      backend->get_state(u, p);
    }
    write_output(u, p, step_number);
    stop_simulation(pcout,
                    step_number,
                    time,
                    stats.output_files.back(),
                    reason);
  }



  void
  HyperelasticSolid::run()
  {
    pcout << GPUAssembly::describe_execution_path() << std::endl;
    setup();

    const auto output = [&]() {
      std::vector<double> u, p;
      {
        TimerOutput::Scope scope(timer, "Transfers");
        backend->get_state(u, p);
      }
      write_output(u, p, step_number);
      StateSummary summary;
      summary.max_displacement =
        std::abs(*std::max_element(u.begin(),
                                   u.end(),
                                   [](const double a, const double b) {
                                     return std::abs(a) < std::abs(b);
                                   }));
      summary.kinetic_energy  = kinetic_energy(p);
      summary.strain_energy   = strain_energy(u);
      summary.momentum        = linear_momentum(p);
      summary.has_load_region = !parameters.boundary.load_region.empty;
      if (summary.has_load_region)
        summary.load_region_displacement = load_region_displacement(u);
      print_state_summary(pcout, stats.output_files.back(), summary);
    };
    stats.stepping_wall_time = run_time_steps(
      parameters,
      time,
      step_number,
      [&]() {
        do_step();
      },
      output);
    print_stepping_summary(pcout, stats);
    print_output_hint(pcout, parameters.output);
    timer.print_summary();
    DeviceStageTimes device;
    if (backend->device_stage_times(device))
      {
        // TimerOutput sees one section per step graph; the device's clock
        // splits it into the chapter's stages (Figures 16.10-16.11).
        const double total = device.assembly + device.solve + device.update;
        pcout << "Stages of the steps run as device graphs, by the device's "
                 "clock:\n";
        for (const auto &[name, seconds] :
             {std::pair<const char *, double>{"Assembly", device.assembly},
              {"Solve (Jacobi-CG)", device.solve},
              {"Update", device.update}})
          pcout << "  " << std::left << std::setw(20) << name << std::right
                << std::fixed << std::setprecision(4) << std::setw(10)
                << seconds << " s  " << std::setprecision(1) << std::setw(5)
                << (total > 0 ? 100. * seconds / total : 0.) << " %\n";
        pcout << std::flush;
      }
  }



  std::map<std::string, double>
  HyperelasticSolid::stage_times() const
  {
    std::map<std::string, double> stages =
      timer.get_summary_data(TimerOutput::total_wall_time);
    DeviceStageTimes device;
    if (backend != nullptr && backend->device_stage_times(device))
      {
        // The graph's wall time is the device's stages plus the launch
        // and the report's copy: the latter is a transfer.
        const double step = stages[step_graph_section];
        stages.erase(step_graph_section);
        stages["Assembly"] += device.assembly;
        stages["Solve (Jacobi-CG)"] += device.solve;
        stages["Update"] += device.update;
        stages["Transfers"] +=
          std::max(0., step - device.assembly - device.solve - device.update);
      }
    else
      stages.erase(step_graph_section);
    return stages;
  }



  void
  HyperelasticSolid::reset_timers()
  {
    timer.reset();
    if (backend != nullptr)
      backend->reset_device_stage_times();
  }
} // namespace Hyperelastic
