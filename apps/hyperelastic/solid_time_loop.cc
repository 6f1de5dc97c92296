// SPDX-License-Identifier: LGPL-2.1-or-later
// ImplicitSolid's time loop: the loads of a step, the Newton loop (on the
// device as one graph launch where the backend can, else driven from the
// host), the failure reports, and the run with its summary.

#include <deal.II/base/function.h>
#include <deal.II/base/mpi.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/distributed/device_selection.h>

#include <algorithm>
#include <chrono>
#include <iomanip>

#include "../common/app_utilities.h"
#include "implicit_solid.h"
#include "solid_common.h"
#include "surface_load_setup.h"

namespace Hyperelastic
{
  StepReport
  ImplicitSolid::attempt_step(const double t_new, const StepLoads &loads)
  {
    const auto &solver = parameters.solver;
    if (!parameters.boundary.prescribed.empty())
      {
        // The prescribed values enter through the state: the predictor
        // carries them into the first iterate, the Newton updates keep
        // them (their increments are constrained to zero).
        auto [u, p] = transfer_state();
        set_prescribed_values(t_new, u, p);
        TimerOutput::Scope scope(timer, "Transfers");
        backend->set_state(u, p);
      }

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
    return report;
  }



  void
  ImplicitSolid::do_step()
  {
    const double end_time = parameters.time.end_time;
    if (step_size == 0)
      step_size = parameters.time.time_step;
    // Quasi-static: a step that does not converge is cut in half and
    // tried again from the last converged state (which the backend keeps
    // on failure), 'Solver/Maximum step cuts' times in a row at most.
    const unsigned int max_cuts = dynamic ? 0 : parameters.solver.max_step_cuts;
    double             dt       = step_size;
    for (unsigned int cut = 0;; ++cut)
      {
        const double     t_new  = std::min(time + dt, end_time);
        const StepLoads  loads  = step_loads(t_new);
        const StepReport report = attempt_step(t_new, loads);
        if (report.status == StepStatus::converged)
          {
            last_loads = loads;
            time       = t_new;
            ++step_number;
            record_step(stats,
                        report,
                        parameters.output,
                        step_number,
                        time,
                        pcout);
            // After a cut step the load step grows back towards 'Time
            // step'.
            step_size = std::min(2 * dt, parameters.time.time_step);
            if (force_trace)
              record_trace(transfer_state().first);
            return;
          }

        const std::string failure =
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
                               });
        if (cut == max_cuts)
          {
            if (!parameters.boundary.prescribed.empty() && !dynamic)
              {
                // The last converged state, with the prescribed values of
                // its time.
                auto [u, p] = transfer_state();
                set_prescribed_values(time, u, p);
                backend->set_state(u, p);
              }
            if (max_cuts > 0)
              stop(failure + " The step was cut in half " +
                   std::to_string(max_cuts) +
                   " times ('Solver/Maximum step cuts'), down to " +
                   AppUtilities::significant(dt) +
                   " s of pseudo-time, and did not converge.");
            stop(failure);
          }
        ++step_cuts;
        dt /= 2;
        pcout << "Step " << step_number + 1
              << " to t = " << AppUtilities::significant(t_new)
              << " did not converge after "
              << std::max<std::size_t>(report.residuals.size(), 1) - 1
              << " Newton iterations (|r| = "
              << format_scientific(
                   report.residuals.empty() ? 0. : report.residuals.back())
              << "); cut in half to a step of " << AppUtilities::significant(dt)
              << " s." << std::endl;
      }
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
    write_trace();
    stop_simulation(pcout,
                    step_number,
                    time,
                    stats.output_files.back(),
                    reason);
  }



  void
  ImplicitSolid::run()
  {
    const auto start = std::chrono::steady_clock::now();
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

    // Everything an output costs the loop's thread: the copy to the host,
    // the hand-over to the writer (or the wait for it), the summary line.
    double     output_seconds = 0;
    const auto output         = [&]() {
      const auto before = std::chrono::steady_clock::now();
      const auto [u, p] = transfer_state();
      write_output(u, p);
      summarize_state(u, p);
      output_seconds += AppUtilities::seconds_since(before);
    };
    stats.stepping_wall_time = run_time_steps(
      parameters,
      time,
      step_number,
      [&]() {
        do_step();
      },
      output);
    {
      // The traces are written while the writer's threads finish the last
      // outputs.
      const auto before = std::chrono::steady_clock::now();
      write_trace();
      finish_output();
      output_seconds += AppUtilities::seconds_since(before);
    }
    print_stepping_summary(pcout, stats);
    {
      pcout << AppUtilities::describe_output_share(output_seconds,
                                                   AppUtilities::seconds_since(
                                                     start),
                                                   snapshot_writer.get())
            << std::endl;
    }
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
    // The exchange's parts as the rank with the longest exchange spent
    // them, so that they add up to its total.
    IntegratorBackend::ExchangeTimes exchange = backend->exchange_times();
    const unsigned int               slowest_rank =
      Utilities::MPI::min_max_avg(exchange.total(), communicator).max_index;
    exchange = Utilities::MPI::broadcast(communicator, exchange, slowest_rank);
    pcout << "Stages per step (ms, slowest rank): assembly " << std::fixed
          << std::setprecision(3) << assembly * per_step << ", solve "
          << solve * per_step << ", update " << update * per_step
          << "; exchange between ranks " << exchange.total() * per_step
          << " of assembly and solve (ghost updates "
          << exchange.ghost_updates * per_step << ", assembly messages "
          << exchange.messages * per_step << " of which waited "
          << exchange.waited * per_step << ", writes "
          << exchange.writes * per_step << ", staging copies "
          << exchange.staging * per_step << ", surface loads "
          << exchange.surface_loads * per_step << "; CG's halo not included)."
          << std::endl;
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
