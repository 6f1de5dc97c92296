// SPDX-License-Identifier: LGPL-2.1-or-later
// The hyperelastic app's solver on the host path: conservation of linear
// momentum and the energy behaviour of the midpoint rule on a free body,
// the QR-compressed supplemental data, path independence of quasi-static
// load stepping, the linear solvers of the host path reaching the same
// equilibrium, and the stop with a message when an element inverts.

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/lac/device_constraints.h>

#include <filesystem>
#include <sstream>

#include "hyperelastic_test_utilities.h"
#include "tests.h"

namespace
{
  using namespace Testing;

  // The 2 x 1 x 1 bar of every scenario, on the host.
  const std::string bar =
    prm_subsection("Geometry",
                   {"Bar size = 2, 1, 1", "Subdivisions = 4, 2, 2"}) +
    prm_subsection("Execution", {"Device = host"});

  // The load region at the free end of the bar.
  const std::string tip_region = "Load region = 1.9, 0, 0, 2, 1, 1";

  const std::string tight_solver =
    prm_subsection("Solver",
                   {"Newton tolerance = 1e-12",
                    "CG relative tolerance = 1e-13"});

  // A bar with no support and no load, set spinning, drifting and bending.
  const std::string free_body =
    bar +
    prm_subsection(
      "Boundary conditions",
      {"Fixed boundary ids = ", "Load region = ", "Load = 0, 0, 0"}) +
    prm_subsection(
      "Initial conditions",
      {"Velocity = 0.05 + 0.3*(z-0.5); 0.02; -0.3*(x-1) + 0.2*sin(pi*x/2)"}) +
    prm_subsection("Solver",
                   {"Newton tolerance = 1e-11",
                    "CG relative tolerance = 1e-12"});

  struct EnergyHistory
  {
    double max_relative_deviation = 0;
    double max_momentum_drift     = 0;
    double momentum_norm          = 0;
    double drift_bound            = 0;
  };

  EnergyHistory
  run_free_body(const double dt, const double end_time)
  {
    std::ostringstream log;
    const std::string  prm =
      free_body + "subsection Time\n  set Time step = " + std::to_string(dt) +
      "\n  set End time = " + std::to_string(end_time) + "\nend\n";
    auto         solid = run_hyperelastic(prm, 0, log);
    const double E0    = solid->kinetic_energy() + solid->strain_energy();
    const dealii::Tensor<1, 3> P0 = solid->linear_momentum();
    EnergyHistory              history;
    history.momentum_norm      = P0.norm();
    const unsigned int n_steps = std::lround(end_time / dt);
    for (unsigned int s = 0; s < n_steps; ++s)
      {
        solid->do_step();
        const double E = solid->kinetic_energy() + solid->strain_energy();
        history.max_relative_deviation =
          std::max(history.max_relative_deviation, std::abs(E - E0) / E0);
        history.max_momentum_drift =
          std::max(history.max_momentum_drift,
                   (solid->linear_momentum() - P0).norm());
      }
    // Each step changes the momentum by the sum of the Newton residual's
    // entries (see eq. (4)-(5)), at most sqrt(n) |r| <= sqrt(n) tol per
    // component; everything else cancels exactly.
    history.drift_bound =
      n_steps * std::sqrt(3. * solid->arrays().n_dofs) * 1e-11;
    return history;
  }
} // namespace



int
main()
{
  Checks checks;

  {
    // Linear momentum: with no external force the midpoint rule keeps it
    // up to the Newton residuals.
    const EnergyHistory coarse = run_free_body(0.1, 4.);
    checks.check(coarse.max_momentum_drift <= coarse.drift_bound,
                 "free body: linear momentum drift " +
                   scientific(coarse.max_momentum_drift) +
                   " (|P| = " + scientific(coarse.momentum_norm) +
                   ") within the Newton-tolerance bound " +
                   scientific(coarse.drift_bound));

    // Energy: the implicit midpoint rule is symplectic but not exactly
    // energy-conserving for a nonlinear material. Its energy error is a
    // bounded oscillation of order dt^2 (backward error analysis: it
    // conserves a modified energy E + O(dt^2)). So the bound is justified
    // by checking the order: halving dt must divide the largest deviation
    // by about 4, and the deviation with dt = 0.1 must stay below 1 % of
    // the energy (the measured constant times dt^2, with a safety factor).
    const EnergyHistory fine = run_free_body(0.05, 4.);
    const double        ratio =
      coarse.max_relative_deviation / fine.max_relative_deviation;
    checks.check(ratio > 3. && ratio < 6.,
                 "free body: energy deviation " +
                   scientific(coarse.max_relative_deviation) +
                   " (dt = 0.1) and " +
                   scientific(fine.max_relative_deviation) +
                   " (dt = 0.05): ratio " + std::to_string(ratio) +
                   ", second order in dt");
    checks.check(coarse.max_relative_deviation < 1e-2,
                 "free body: energy stays within 1 % with dt = 0.1");
  }

  {
    // The QR-compressed S(e) (6 values) gives the same motion as the full
    // inverse edge matrix (10 values): the material is isotropic.
    const std::string loaded =
      bar +
      prm_subsection("Boundary conditions",
                     {tip_region, "Load = 0, 0.05, -0.1"}) +
      tight_solver;
    std::ostringstream log;
    const auto         full = run_hyperelastic(loaded, 10, log);
    const auto         compressed =
      run_hyperelastic(loaded +
                         "subsection Execution\n  set Compressed supplemental "
                         "data = true\nend\n",
                       10,
                       log);
    checks.check(compressed->arrays().n_supplemental == 6 &&
                   full->arrays().n_supplemental == 10,
                 "compressed S(e) holds 6 values instead of 10");
    const auto [u_full, p_full] = full->state();
    const auto [u_comp, p_comp] = compressed->state();
    const double difference     = max_relative_difference(u_comp, u_full);
    checks.check(difference < 1e-9,
                 "compressed S(e): displacement after 10 steps differs by " +
                   scientific(difference) + " (relative)");
  }

  // Hexahedra under a load ramped over one second, quasi-static.
  const std::string statics =
    bar + prm_subsection("Geometry", {"Cell type = hexahedra"}) +
    prm_subsection("Boundary conditions",
                   {tip_region,
                    "Load = 0, 0, -0.5",
                    "Load time function = t"}) +
    prm_subsection("Time", {"Mode = quasi-static", "End time = 1"}) +
    tight_solver;

  {
    // Quasi-static stepping of a hyperelastic solid is path independent:
    // one load step and four give the same equilibrium.
    std::ostringstream log;
    const auto         one_step =
      run_hyperelastic(statics + "subsection Time\n  set Time step = 1\nend\n",
                       1,
                       log);
    const auto four_steps =
      run_hyperelastic(statics +
                         "subsection Time\n  set Time step = 0.25\nend\n",
                       4,
                       log);
    const auto   u1         = one_step->state().first;
    const auto   u4         = four_steps->state().first;
    const double difference = max_relative_difference(u1, u4);
    const double tip        = *std::max_element(u4.begin(),
                                         u4.end(),
                                         [](const double a, const double b) {
                                           return std::abs(a) < std::abs(b);
                                         });
    checks.check(difference < 1e-8 && std::abs(tip) > 1e-2,
                 "quasi-static hexahedra: 1 and 4 load steps agree to " +
                   scientific(difference) + " (largest displacement " +
                   scientific(std::abs(tip)) + ")");
  }

  {
    // The linear solvers of the host path (UMFPACK, Jacobi-CG, deal.II's
    // Chebyshev and node-block Jacobi around CG) reach the same equilibrium
    // of the hanging-node mesh: Newton's tolerance 1e-12 on |r| and CG's
    // 1e-13 leave the states apart by far less than 1e-8 relative, which
    // any wrong update (a constraint line not distributed, a
    // preconditioner that is not symmetric) exceeds. The direct solver's
    // exact Newton steps take no more iterations than inexact CG ones; it
    // counts one linear iteration per solve, and the log names the solver
    // and why.
    const std::string refined =
      statics + prm_subsection("Time", {"Time step = 0.5"}) +
      prm_subsection("Geometry", {"Local refinement steps = 1"});
    const auto run_with = [&](const std::string &solver, std::string &text) {
      std::ostringstream log;
      // The direct solver refuses a CG tolerance other than the default.
      std::vector<std::string> entries = {"Linear solver = " + solver};
      if (solver == "direct")
        entries.push_back("CG relative tolerance = 1e-6");
      auto solid =
        run_hyperelastic(refined + prm_subsection("Solver", entries), 2, log);
      text = log.str();
      return solid;
    };
    std::string direct_log, log;
    const auto  direct   = run_with("direct", direct_log);
    const auto &d        = direct->statistics();
    const auto  u_direct = direct->state().first;
    checks.check(
      direct->linear_solver() == Hyperelastic::LinearSolver::direct &&
        d.n_cg_iterations == d.n_newton_iterations &&
        direct_log.find("Linear solver: direct (as 'Solver/Linear solver' "
                        "asks)") != std::string::npos &&
        direct->backend_description().find("UMFPACK") != std::string::npos,
      "direct on the host: UMFPACK named in the log, one linear iteration "
      "per Newton iteration (" +
        std::to_string(d.n_cg_iterations) + " for " +
        std::to_string(d.n_newton_iterations) + ")");
    for (const std::string solver :
         {"cg-jacobi", "cg-chebyshev", "cg-block-jacobi", "auto"})
      {
        const auto   cg = run_with(solver, log);
        const auto  &c  = cg->statistics();
        const double difference =
          max_relative_difference(cg->state().first, u_direct);
        checks.check(difference < 1e-8 &&
                       d.n_newton_iterations <= c.n_newton_iterations &&
                       c.n_cg_iterations > c.n_newton_iterations,
                     "quasi-static, hanging nodes: " + solver +
                       " and direct reach the same equilibrium (relative "
                       "difference " +
                       scientific(difference) + "), Newton iterations " +
                       std::to_string(c.n_newton_iterations) +
                       " against direct's " +
                       std::to_string(d.n_newton_iterations) + ", CG " +
                       std::to_string(c.n_cg_iterations));
        if (solver == "auto")
          checks.check(cg->linear_solver() ==
                           Hyperelastic::LinearSolver::cg_jacobi &&
                         log.find("Linear solver: cg-jacobi (auto: the host "
                                  "path keeps Jacobi-CG") != std::string::npos,
                       "auto on the host: Jacobi-CG, and the log says why");
      }
  }

  {
    // Hexahedra refined near the clamp and the load (hanging nodes): the
    // equilibrium satisfies every hanging-node line, and it is the coarse
    // mesh's to discretization accuracy.
    const std::string refined =
      statics + prm_subsection("Time", {"Time step = 0.5"});
    std::ostringstream log;
    const auto         coarse = run_hyperelastic(refined, 2, log);
    const auto         fine   = run_hyperelastic(
      refined + "subsection Geometry\n  set Local refinement steps = 2\nend\n",
      2,
      log);
    const GPUAssembly::MeshArrays &arrays = fine->arrays();
    checks.check(arrays.n_constraint_lines() > 0 &&
                   arrays.n_elements > coarse->arrays().n_elements,
                 "local refinement: " + std::to_string(arrays.n_elements) +
                   " hexahedra with " +
                   std::to_string(arrays.n_constraint_lines()) +
                   " hanging DoFs");
    std::vector<double> u = fine->state().first, distributed = u;
    GPUAssembly::distribute_constraints(GPUAssembly::ConstraintLines(arrays),
                                        distributed);
    const double violation = max_relative_difference(u, distributed);
    checks.check(violation < 1e-13,
                 "local refinement: the displacement satisfies the hanging "
                 "node lines (relative violation " +
                   scientific(violation) + ")");
    // The tip's vertical displacement: the mean over the loaded nodes.
    const auto tip = [](const Hyperelastic::ImplicitSolid &solid) {
      const GPUAssembly::MeshArrays &a   = solid.arrays();
      const std::vector<double>      u   = solid.state().first;
      double                         sum = 0;
      unsigned int                   n   = 0;
      for (unsigned int node = 0; node < a.n_nodes; ++node)
        if (a.nodal_coordinates[node * 3] > 1.999)
          {
            sum += u[a.node_dofs[node * 3 + 2]];
            ++n;
          }
      return sum / n;
    };
    const double tip_coarse = tip(*coarse), tip_fine = tip(*fine);
    const double change =
      std::abs(tip_fine - tip_coarse) / std::abs(tip_coarse);
    checks.check(tip_coarse < -1e-2 && change < 0.1 && change > 1e-6,
                 "local refinement: tip displacement " + scientific(tip_fine) +
                   " against " + scientific(tip_coarse) +
                   " on the coarse mesh (relative change " +
                   scientific(change) + ", a discretization change < 10 %)");
  }

  {
    // A load far too large inverts elements: the run stops, names the step
    // and the element, and writes the last good state.
    const std::filesystem::path directory = "hyperelastic_inversion_output";
    std::filesystem::remove_all(directory);
    const std::string crushing =
      bar +
      prm_subsection("Boundary conditions", {tip_region, "Load = 0, 0, -500"}) +
      prm_subsection("Output",
                     {"Directory = hyperelastic_inversion_output",
                      "Output interval = 0"});
    std::ostringstream          log;
    Hyperelastic::ImplicitSolid solid(hyperelastic_parameters(crushing), log);
    solid.setup();
    checks.check_throws<Hyperelastic::ExcSimulationStopped>(
      [&]() {
        for (unsigned int s = 0; s < 50; ++s)
          solid.do_step();
      },
      "is inverted",
      "an inverting load stops the run with the element named");
    checks.check(std::filesystem::exists(directory / "solid.pvd") &&
                   !solid.statistics().output_files.empty(),
                 "the last good state was written before stopping");
  }

  {
    // Bad input is refused with a message.
    std::ostringstream log;
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        hyperelastic_parameters(
          "subsection Boundary conditions\n  set Load region = 5, 5, 5, 6, "
          "6\nend\n");
      },
      "needs 6 comma-separated numbers",
      "a box with five numbers is refused");
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        Hyperelastic::ImplicitSolid solid(
          hyperelastic_parameters("subsection Boundary conditions\n  set "
                                  "Load region = 5, 5, 5, 6, 6, 6\nend\n"),
          log);
        solid.setup();
      },
      "contains no node",
      "a load region outside the body is refused");
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        Hyperelastic::ImplicitSolid solid(
          hyperelastic_parameters("subsection Boundary conditions\n  set "
                                  "Fixed boundary ids = 17\nend\n"),
          log);
        solid.setup();
      },
      "boundary id 17",
      "a fixed boundary id the mesh lacks is refused");
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        hyperelastic_parameters(
          "subsection Solver\n  set Linear solver = cholesky\nend\n");
      },
      "cholesky",
      "a linear solver the app does not know is refused");
    if (GPUAssembly::n_cuda_devices() == 0)
      checks.check_throws<dealii::ExceptionBase>(
        [&]() {
          Hyperelastic::ImplicitSolid solid(
            hyperelastic_parameters(
              "subsection Execution\n  set Device = gpu\nend\n"),
            log);
          solid.setup();
        },
        "no CUDA device was found",
        "Device = gpu without a GPU is refused");
  }

  return checks.exit_code();
}
