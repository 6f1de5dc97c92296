// SPDX-License-Identifier: LGPL-2.1-or-later
// The hyperelastic app's GPU path against its host path: the same short
// simulations must give the same positions (1e-10 relative in double),
// for GlobalNZ (full and symmetric element data), SharedNZ, QR-compressed
// S(e) and hexahedra; GPU runs are bitwise reproducible; a step run as one
// device graph (the default) is bitwise the step the host-driven loop runs
// with the same kernels, takes the same iterations, and stops on the same
// failures with the same messages, leaving the last good state; single
// precision differs from the double-precision host run by float rounding:
// no less than float's unit roundoff, no more than Table 16.1's bound. The
// linear solvers: quasi-static and dynamic runs with the device direct
// solver (cuDSS) equal the host path's with UMFPACK and with Jacobi-CG to
// the Newton and CG tolerances, take no more Newton iterations than
// Jacobi-CG, and auto picks the direct solver for quasi-static runs and
// Jacobi-CG (with its step graphs) for dynamic ones; the device's
// Jacobi-, Chebyshev-Jacobi- and point-block-Jacobi-CG reach the direct
// solvers' equilibrium and the host's same-named solver's.

#include <gpu_assembly/base/device.h>

#include <cmath>
#include <sstream>

#include "../hyperelastic_test_utilities.h"
#include "../tests.h"
#include "gpu_tests.h"

namespace
{
  using namespace Testing;

  std::string
  make_scenario(const std::string &cells,
                const std::string &newton,
                const std::string &cg,
                const std::string &execution)
  {
    return prm_subsection("Geometry",
                          {"Bar size = 4, 1, 1",
                           "Subdivisions = 8, 2, 2",
                           "Cell type = " + cells}) +
           prm_subsection("Boundary conditions",
                          {"Load region = 3.9, 0, 0, 4, 1, 1",
                           "Load = 0, 0.02, -0.05",
                           "Load time function = sin(pi*t/2)"}) +
           prm_subsection("Initial conditions", {"Velocity = 0; 0; 0.02*x"}) +
           prm_subsection(
             "Solver",
             cg.empty() ?
               std::vector<std::string>{"Newton tolerance = " + newton} :
               std::vector<std::string>{"Newton tolerance = " + newton,
                                        "CG relative tolerance = " + cg}) +
           "subsection Execution\n" + execution + "end\n";
  }

  /// 'Solver/CG relative tolerance' = @p cg unless @p solver is direct,
  /// which refuses a CG entry.
  std::string
  cg_tolerance_for(const std::string &solver, const std::string &cg)
  {
    return solver == "direct" ?
             "" :
             "subsection Solver\n  set CG relative tolerance = " + cg +
               "\nend\n";
  }

  /// @p execution without the entries that choose how the GPU path runs,
  /// which a run with 'Device = host' refuses.
  std::string
  host_execution(const std::string &execution)
  {
    std::istringstream in(execution);
    std::string        kept, line;
    while (std::getline(in, line))
      if (line.find("Assembly method") == std::string::npos &&
          line.find("Symmetric element data") == std::string::npos &&
          line.find("Step graph") == std::string::npos &&
          line.find("Precision") == std::string::npos)
        kept += line + "\n";
    return kept;
  }
} // namespace



int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Checks             checks;
  std::ostringstream log;
  const unsigned int n_steps = 20;

  struct Case
  {
    std::string name, cells, execution;
  };
  const std::vector<Case> cases = {
    {"GlobalNZ, symmetric element data",
     "tetrahedra",
     "  set Assembly method = GlobalNZ\n"},
    {"GlobalNZ, full element data",
     "tetrahedra",
     "  set Assembly method = GlobalNZ\n  set Symmetric element data = "
     "false\n"},
    {"SharedNZ", "tetrahedra", "  set Assembly method = SharedNZ\n"},
    {"GlobalNZ, QR-compressed S(e)",
     "tetrahedra",
     "  set Compressed supplemental data = true\n"},
    {"GlobalNZ, hexahedra", "hexahedra", ""},
    {"SharedNZ, hexahedra", "hexahedra", "  set Assembly method = SharedNZ\n"}};

  // The scenario with tight tolerances on @p device, @p more appended.
  const auto run_on = [&](const std::string &cells,
                          const std::string &execution,
                          const std::string &device,
                          const std::string &more = "") {
    return run_hyperelastic(
      make_scenario(cells,
                    "1e-11",
                    "1e-13",
                    (device == "host" ? host_execution(execution) : execution) +
                      "  set Device = " + device + "\n") +
        more,
      n_steps,
      log);
  };

  for (const Case &c : cases)
    {
      const auto host             = run_on(c.cells, c.execution, "host");
      const auto gpu              = run_on(c.cells, c.execution, "gpu");
      const auto [u_host, p_host] = host->state();
      const auto [u_gpu, p_gpu]   = gpu->state();
      const double position_difference =
        max_relative_difference(positions(*gpu, u_gpu),
                                positions(*host, u_host));
      const double displacement_difference =
        max_relative_difference(u_gpu, u_host);
      const double momentum_difference = max_relative_difference(p_gpu, p_host);
      checks.check(position_difference < 1e-10 &&
                     displacement_difference < 1e-8 &&
                     momentum_difference < 1e-8,
                   c.name + ": GPU vs host after " + std::to_string(n_steps) +
                     " steps, positions " + scientific(position_difference) +
                     ", displacements " + scientific(displacement_difference) +
                     ", momenta " + scientific(momentum_difference) +
                     " (relative)");
    }

  for (const std::string method : {"GlobalNZ", "SharedNZ"})
    {
      // Hexahedra refined near the clamp and the load: hanging nodes in
      // the assembly and in every Newton update, on the device.
      const std::string refinement =
        "subsection Geometry\n  set Local refinement steps = 1\nend\n";
      const std::string execution = "  set Assembly method = " + method + "\n";
      const auto host = run_on("hexahedra", execution, "host", refinement);
      const auto gpu  = run_on("hexahedra", execution, "gpu", refinement);
      const auto [u_host, p_host] = host->state();
      const auto [u_gpu, p_gpu]   = gpu->state();
      const double displacement_difference =
        max_relative_difference(u_gpu, u_host);
      const double momentum_difference = max_relative_difference(p_gpu, p_host);
      checks.check(gpu->arrays().n_constraint_lines() > 0 &&
                     displacement_difference < 1e-8 &&
                     momentum_difference < 1e-8,
                   method + ", locally refined hexahedra (" +
                     std::to_string(gpu->arrays().n_constraint_lines()) +
                     " hanging DoFs): GPU vs host after " +
                     std::to_string(n_steps) + " steps, displacements " +
                     scientific(displacement_difference) + ", momenta " +
                     scientific(momentum_difference) + " (relative)");
    }

  {
    // No atomics anywhere in a step: two GPU runs agree bit for bit.
    const std::string prm =
      make_scenario("tetrahedra", "1e-11", "1e-13", "  set Device = gpu\n");
    const auto first  = run_hyperelastic(prm, n_steps, log);
    const auto second = run_hyperelastic(prm, n_steps, log);
    checks.check(first->state() == second->state(),
                 "GlobalNZ: two GPU runs give bitwise identical states");
  }

  for (const std::string method : {"GlobalNZ", "SharedNZ"})
    {
      // The Newton loop on the device (one graph per step) against the
      // host-driven loop: the same kernels and tests in the same order.
      const std::string execution = "  set Device = gpu\n"
                                    "  set Assembly method = " +
                                    method + "\n";
      const auto graph =
        run_hyperelastic(make_scenario("tetrahedra", "1e-8", "1e-6", execution),
                         n_steps,
                         log);
      const auto loop =
        run_hyperelastic(make_scenario("tetrahedra",
                                       "1e-8",
                                       "1e-6",
                                       execution +
                                         "  set Step graph = false\n"),
                         n_steps,
                         log);
      const auto &a = graph->statistics();
      const auto &b = loop->statistics();
      checks.check(graph->state() == loop->state() &&
                     a.n_newton_iterations == b.n_newton_iterations &&
                     a.n_cg_iterations == b.n_cg_iterations &&
                     a.last_newton_residual == b.last_newton_residual &&
                     a.n_newton_iterations > n_steps,
                   method +
                     ": steps as device graphs equal the host-driven "
                     "loop bitwise (Newton " +
                     std::to_string(a.n_newton_iterations) + " vs " +
                     std::to_string(b.n_newton_iterations) + ", CG " +
                     std::to_string(a.n_cg_iterations) + " vs " +
                     std::to_string(b.n_cg_iterations) + ")");
      const auto stages = graph->stage_times();
      const auto at     = [&](const std::string &name) {
        const auto it = stages.find(name);
        return it == stages.end() ? 0. : it->second;
      };
      checks.check(at("Assembly") > 0 && at("Solve (Jacobi-CG)") > 0 &&
                     at("Update") > 0,
                   method +
                     ": the device clock splits the step graphs into "
                     "assembly " +
                     scientific(at("Assembly")) + " s, solve " +
                     scientific(at("Solve (Jacobi-CG)")) + " s, update " +
                     scientific(at("Update")) + " s");
    }

  {
    // Quasi-static load stepping: the body force ramps, so the step graph's
    // kernel changes every step and those steps run the host-driven loop;
    // the result is the same as with the loop throughout. Jacobi-CG, whose
    // steps run as graphs (auto would pick the direct solver).
    const std::string quasi_static =
      make_scenario("tetrahedra", "1e-9", "1e-8", "  set Device = gpu\n") +
      "subsection Time\n  set Mode = quasi-static\n  set End time = 1\n"
      "  set Time step = 0.25\nend\n"
      "subsection Initial conditions\n  set Velocity = 0; 0; 0\nend\n"
      "subsection Material\n  set Body force = 0, 0, -0.01\nend\n"
      "subsection Solver\n  set Linear solver = cg-jacobi\nend\n";
    const auto graph = run_hyperelastic(quasi_static, 6, log);
    const auto loop  = run_hyperelastic(
      quasi_static + "subsection Execution\n  set Step graph = false\nend\n",
      6,
      log);
    checks.check(graph->state() == loop->state() &&
                   graph->statistics().n_newton_iterations ==
                     loop->statistics().n_newton_iterations &&
                   graph->statistics().n_steps == 6,
                 "quasi-static, 4 ramped load steps and 2 at full load: steps "
                 "as device graphs where the kernel repeats, else the host "
                 "loop, equal the host loop bitwise (Newton " +
                   std::to_string(graph->statistics().n_newton_iterations) +
                   ")");
  }

  for (const bool step_graph : {true, false})
    {
      // Failures found on the device stop the run with the host loop's
      // messages, and the state stays the last completed step's.
      const std::string mode = step_graph ? "device graph" : "host loop";
      const std::string execution =
        std::string("  set Device = gpu\n  set Step graph = ") +
        (step_graph ? "true" : "false") + "\n";
      {
        const std::string crushing =
          prm_subsection("Geometry",
                         {"Bar size = 2, 1, 1", "Subdivisions = 4, 2, 2"}) +
          prm_subsection("Boundary conditions",
                         {"Load region = 1.9, 0, 0, 2, 1, 1",
                          "Load = 0, 0, -500",
                          "Load time function = 0.1*t"}) +
          prm_subsection("Output",
                         {"Output interval = 0", "Screen interval = 0"});
        Hyperelastic::ImplicitSolid solid(
          hyperelastic_parameters(crushing + "subsection Execution\n" +
                                  execution + "end\n"),
          log);
        solid.setup();
        std::pair<std::vector<double>, std::vector<double>> last_good;
        unsigned int                                        completed = 0;
        checks.check_throws<Hyperelastic::ExcSimulationStopped>(
          [&]() {
            for (unsigned int s = 0; s < 50; ++s)
              {
                last_good = solid.state();
                solid.do_step();
                ++completed;
              }
          },
          "is inverted",
          mode + ": an inverting load stops the run with the element named");
        // The ramp inverts an element in step 4 (host path).
        checks.check(completed > 0 && solid.state() == last_good &&
                       solid.statistics().n_steps == completed,
                     mode + ": after the failure in step " +
                       std::to_string(completed + 1) +
                       " the state is the last completed step's");
      }
      {
        // One Newton iteration allowed, a tolerance it cannot reach.
        const std::string prm =
          make_scenario("tetrahedra", "1e-14", "1e-6", execution) +
          "subsection Solver\n  set Maximum Newton iterations = 1\nend\n";
        Hyperelastic::ImplicitSolid solid(
          hyperelastic_parameters(prm +
                                  "subsection Output\n  set Output interval "
                                  "= 0\n  set Screen interval = 0\nend\n"),
          log);
        solid.setup();
        const auto initial = solid.state();
        checks.check_throws<Hyperelastic::ExcSimulationStopped>(
          [&]() {
            solid.do_step();
          },
          "Newton's method diverged in step 1",
          mode + ": too few Newton iterations stop the run as diverged");
        checks.check(solid.state() == initial,
                     mode + ": the state after the diverged step is the "
                            "initial one");
      }
    }

  {
    // The linear solvers on quasi-static load steps (a body force and a
    // tip load ramped over four steps, hexahedra with hanging nodes so
    // that every update is distributed): the device's direct solver
    // against the host's UMFPACK and Jacobi-CG. Newton 1e-10 (absolute)
    // and CG 1e-12 (relative) leave the equilibria apart by far less than
    // 1e-8 relative.
    const std::string quasi_static =
      make_scenario("hexahedra", "1e-10", "", "") +
      "subsection Time\n  set Mode = quasi-static\n  set End time = 1\n"
      "  set Time step = 0.25\nend\n"
      "subsection Initial conditions\n  set Velocity = 0; 0; 0\nend\n"
      "subsection Material\n  set Body force = 0, 0, -0.01\nend\n"
      "subsection Geometry\n  set Local refinement steps = 1\nend\n";
    const auto run_with = [&](const std::string &device,
                              const std::string &solver,
                              std::string       &text) {
      std::ostringstream solver_log;
      auto               solid = run_hyperelastic(
        quasi_static + "subsection Execution\n  set Device = " + device +
          "\nend\nsubsection Solver\n  set Linear solver = " + solver +
          "\nend\n" + cg_tolerance_for(solver, "1e-12"),
        4,
        solver_log);
      text = solver_log.str();
      return solid;
    };
    std::string  text;
    const auto   host_direct = run_with("host", "direct", text);
    const auto   host_cg     = run_with("host", "cg-jacobi", text);
    const auto   gpu_direct  = run_with("gpu", "direct", text);
    const auto   u_reference = host_direct->state().first;
    const double difference_direct =
      max_relative_difference(gpu_direct->state().first, u_reference);
    const double difference_cg =
      max_relative_difference(gpu_direct->state().first,
                              host_cg->state().first);
    const auto &d = gpu_direct->statistics();
    checks.check(gpu_direct->linear_solver() ==
                     Hyperelastic::LinearSolver::direct &&
                   difference_direct < 1e-8 && difference_cg < 1e-8 &&
                   d.n_cg_iterations == d.n_newton_iterations &&
                   d.n_newton_iterations <=
                     host_cg->statistics().n_newton_iterations &&
                   gpu_direct->arrays().n_constraint_lines() > 0,
                 "quasi-static, hanging nodes: the device direct solver "
                 "against UMFPACK " +
                   scientific(difference_direct) + ", against host Jacobi-CG " +
                   scientific(difference_cg) + " (relative); Newton " +
                   std::to_string(d.n_newton_iterations) + " against CG's " +
                   std::to_string(host_cg->statistics().n_newton_iterations));
    const auto gpu_auto = run_with("gpu", "auto", text);
    checks.check(gpu_auto->linear_solver() ==
                     Hyperelastic::LinearSolver::direct &&
                   text.find("Linear solver: direct (auto: quasi-static on "
                             "one GPU") != std::string::npos &&
                   gpu_auto->state() == gpu_direct->state(),
                 "quasi-static: auto picks the device direct solver, says "
                 "why, and gives direct's state bitwise");
    for (const std::string solver :
         {"cg-jacobi", "cg-chebyshev", "cg-block-jacobi"})
      {
        const auto   gpu_cg = run_with("gpu", solver, text);
        const auto   host   = run_with("host", solver, text);
        const double difference =
          max_relative_difference(gpu_cg->state().first, u_reference);
        const double host_difference =
          max_relative_difference(gpu_cg->state().first, host->state().first);
        checks.check(Hyperelastic::parameter_value(gpu_cg->linear_solver()) ==
                         solver &&
                       difference < 1e-8 && host_difference < 1e-8 &&
                       gpu_cg->statistics().n_cg_iterations >
                         gpu_cg->statistics().n_newton_iterations,
                     "quasi-static: the device " + solver +
                       " reaches the direct solvers' equilibrium (" +
                       scientific(difference) + ") and the host's " + solver +
                       " one (" + scientific(host_difference) + "), " +
                       std::to_string(gpu_cg->statistics().n_cg_iterations) +
                       " CG iterations");
      }
  }

  {
    // Dynamic steps: the direct solver asked for runs the host-driven
    // Newton loop and equals the host's UMFPACK run; auto keeps Jacobi-CG
    // and its step graphs.
    const std::string dynamic  = make_scenario("tetrahedra", "1e-11", "", "");
    const auto        run_with = [&](const std::string &device,
                              const std::string &solver) {
      return run_hyperelastic(
        dynamic + "subsection Execution\n  set Device = " + device +
          "\nend\nsubsection Solver\n  set Linear "
                 "solver = " +
          solver + "\nend\n" + cg_tolerance_for(solver, "1e-13"),
        n_steps,
        log);
    };
    const auto   host     = run_with("host", "direct");
    const auto   gpu      = run_with("gpu", "direct");
    const auto   gpu_auto = run_with("gpu", "auto");
    const double difference =
      max_relative_difference(gpu->state().first, host->state().first);
    checks.check(difference < 1e-8 &&
                   gpu->linear_solver() == Hyperelastic::LinearSolver::direct,
                 "dynamic: the device direct solver against UMFPACK after " +
                   std::to_string(n_steps) + " steps, displacements " +
                   scientific(difference) + " (relative)");
    checks.check(gpu_auto->linear_solver() ==
                     Hyperelastic::LinearSolver::cg_jacobi &&
                   gpu_auto->stage_times().count("Solve (Jacobi-CG)") == 1 &&
                   gpu->stage_times().count("Solve (direct solver)") == 1,
                 "dynamic: auto keeps Jacobi-CG; the solve stage is named "
                 "after the solver");
  }

  {
    // Single precision with tolerances it can reach, against the double
    // host run with the same tolerances.
    const std::string execution = "  set Precision = float\n";
    const auto        host      = run_hyperelastic(
      make_scenario("tetrahedra", "1e-4", "1e-6", "  set Device = host\n"),
      n_steps,
      log);
    const auto gpu =
      run_hyperelastic(make_scenario("tetrahedra",
                                     "1e-4",
                                     "1e-6",
                                     execution + "  set Device = gpu\n"),
                       n_steps,
                       log);
    // Between float's rounding and Table 16.1's bound for it: at least
    // float's unit roundoff 2^-24 in the displacements (a run in double
    // differs from the host by about 1e-14, see above), at most 1e-6 in
    // the positions.
    const double float_rounding = std::ldexp(1., -24);
    const double difference =
      max_relative_difference(positions(*gpu, gpu->state().first),
                              positions(*host, host->state().first));
    const double displacement_difference =
      max_relative_difference(gpu->state().first, host->state().first);
    checks.check(displacement_difference >= float_rounding &&
                   difference <= 1e-6,
                 "float GPU vs double host, Newton 1e-4: displacements "
                 "differ by " +
                   scientific(displacement_difference) + " >= 2^-24 = " +
                   scientific(float_rounding) + ", positions by " +
                   scientific(difference) + " <= 1e-6 (relative)");
  }

  return checks.exit_code();
}
