// SPDX-License-Identifier: LGPL-2.1-or-later
// ImplicitSolid's time loop: the loads of a step, the Newton loop (on the
// device as one graph launch where the backend can, else driven from the
// host), the failure reports, and the run with its summary.

#include <deal.II/base/function.h>
#include <deal.II/base/mpi.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/distributed/device_selection.h>

#include <algorithm>
#include <iomanip>

#include "implicit_solid.h"
#include "solid_common.h"
#include "surface_load_setup.h"

namespace Hyperelastic
{
  void
  ImplicitSolid::do_step()
  {
    const auto  &solver = parameters.solver;
    const double t_new =
      std::min(time + parameters.time.time_step, parameters.time.end_time);
    const StepLoads loads = step_loads(t_new);

    // The whole step on the device where the backend can (one graph
    // launch, the same tests in the same order), else the loop on the host.
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
      report = run_newton_loop(*backend, loads, solver, timer);

    if (report.status != StepStatus::converged)
      stop(
        step_failure_message(report,
                             parameters,
                             backend->linear_solver(),
                             step_number,
                             t_new,
                             [&]() {
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



  StepLoads
  ImplicitSolid::step_loads(const double t_new)
  {
    StepLoads loads = loads_at(parameters, *load_function, time, t_new);
    surface_amplitudes->set(dynamic, time, t_new, loads);
    return loads;
  }



  void
  ImplicitSolid::stop(const std::string &reason)
  {
    const auto [u, p] = transfer_state();
    write_output(u, p);
    finish_output();
    stop_simulation(pcout,
                    step_number,
                    time,
                    stats.output_files.back(),
                    reason);
  }



  void
  ImplicitSolid::run()
  {
    if (!distributed)
      pcout << GPUAssembly::describe_execution_path() << std::endl;
    else
      {
        const unsigned int n_ranks =
          Utilities::MPI::n_mpi_processes(communicator);
        pcout << "Running on " << n_ranks << " MPI rank"
              << (n_ranks > 1 ? "s" : "") << "." << std::endl;
        const std::string binding =
          GPUAssembly::describe_thread_binding(communicator);
        if (!binding.empty())
          pcout << binding << std::endl;
      }
    setup();

    const auto output = [&]() {
      const auto [u, p] = transfer_state();
      write_output(u, p);
      summarize_state(u, p);
    };
    stats.stepping_wall_time = run_time_steps(
      parameters,
      time,
      step_number,
      [&]() {
        do_step();
      },
      output);
    finish_output();
    print_stepping_summary(pcout, stats);
    if (distributed)
      print_stage_split();
    print_output_hint(pcout, parameters.output);
    timer.print_summary();
    print_device_stages();
  }



  void
  ImplicitSolid::print_stage_split() const
  {
    // The slowest rank's times: every stage ends in a global reduction,
    // so the ranks wait for it.
    const std::map<std::string, double> totals =
      timer.get_summary_data(TimerOutput::total_wall_time);
    const auto stage = [&](const std::string &name) {
      const auto entry = totals.find(name);
      return Utilities::MPI::max(entry == totals.end() ? 0. : entry->second,
                                 communicator);
    };
    const double per_step = 1e3 / std::max<double>(stats.n_steps, 1);
    const double assembly = stage("Assembly");
    const double solve    = stage(solve_stage_name(backend->linear_solver()));
    const double update   = stage("Update");
    const double exchange =
      Utilities::MPI::max(backend->exchange_seconds(), communicator);
    pcout << "Stages per step (ms, slowest rank): assembly " << std::fixed
          << std::setprecision(3) << assembly * per_step << ", solve "
          << solve * per_step << ", update " << update * per_step
          << "; exchange between ranks " << exchange * per_step
          << " of assembly and solve (assembly exchange and ghost updates, "
          << "CG's halo not included)." << std::endl;
  }



  void
  ImplicitSolid::print_device_stages() const
  {
    DeviceStageTimes device;
    if (!backend->device_stage_times(device))
      return;
    // TimerOutput sees one section per step graph; the device's clock
    // splits it into the chapter's stages (Figures 16.10-16.11).
    const double total = device.assembly + device.solve + device.update;
    pcout << "Stages of the steps run as device graphs, by the device's "
             "clock:\n";
    for (const auto &[name, seconds] :
         {std::pair<std::string, double>{"Assembly", device.assembly},
          {solve_stage_name(backend->linear_solver()), device.solve},
          {"Update", device.update}})
      pcout << "  " << std::left << std::setw(20) << name << std::right
            << std::fixed << std::setprecision(4) << std::setw(10) << seconds
            << " s  " << std::setprecision(1) << std::setw(5)
            << (total > 0 ? 100. * seconds / total : 0.) << " %\n";
    pcout << std::flush;
  }



  std::map<std::string, double>
  ImplicitSolid::stage_times() const
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
        stages[solve_stage_name(backend->linear_solver())] += device.solve;
        stages["Update"] += device.update;
        stages["Transfers"] +=
          std::max(0., step - device.assembly - device.solve - device.update);
      }
    else
      stages.erase(step_graph_section);
    return stages;
  }



  void
  ImplicitSolid::reset_timers()
  {
    timer.reset();
    if (backend != nullptr)
      backend->reset_device_stage_times();
  }
} // namespace Hyperelastic
