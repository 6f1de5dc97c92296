// SPDX-License-Identifier: LGPL-2.1-or-later
// The pieces of the app's integrators (solid_common.h).

#include "solid_common.h"

#include <deal.II/base/parallel.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/lac/trilinos_vector.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/lac/direct_solver_exceptions.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <mutex>
#include <sstream>

#include "../common/app_utilities.h"
#include "implicit_solid.h"
#include "png_image.h"

namespace Hyperelastic
{
  void
  throw_message(const std::string &message)
  {
    AssertThrow(false, ExcMessage(message));
    __builtin_unreachable();
  }



  void
  refuse_resident_only_solver(const LinearSolver solver,
                              const std::string &backend)
  {
    if (solver == LinearSolver::bicgstab_jacobi)
      throw_message(
        "'Solver/Linear solver' = bicgstab-jacobi is offered by the resident "
        "backend on MPI ranks only ('Execution/Distributed linear algebra' "
        "= resident, or auto on GPUs, under mpirun); this run uses " +
        backend +
        ". Choose direct (which a follower 'Surface loads/Pressure' needs "
        "there), a CG, or auto.");
  }



  DirectSolverOutcome
  run_direct_solver_phase(const std::function<void()> &phase,
                          std::string                 &message)
  {
    // The exception's own text, without deal.II's frame around it.
    const auto text_of = [](const ExceptionBase &exc) {
      std::ostringstream text;
      exc.print_info(text);
      return text.str();
    };
    try
      {
        phase();
      }
    catch (const GPUAssembly::ExcSingularMatrix &exc)
      {
        message = text_of(exc);
        return DirectSolverOutcome::singular;
      }
    catch (const GPUAssembly::ExcDirectSolverMemory &exc)
      {
        message = text_of(exc);
        return DirectSolverOutcome::out_of_memory;
      }
    return DirectSolverOutcome::success;
  }



  namespace
  {
    // Peak memory per cell of a run on the built-in bar (triangulation,
    // DoF handler, adapter arrays, backend) on the host path: the growth of
    // the peak from 16 x 4 x 4 to 32 x 8 x 8 bricks, 1.7 kB per tetrahedron
    // and 11 kB per hexahedron, rounded up.
    constexpr double bytes_per_tetrahedron = 4000;
    constexpr double bytes_per_hexahedron  = 12000;
  } // namespace



  Discretization
  make_discretization(const bool simplex)
  {
    constexpr int  dim = 3;
    Discretization d;
    if (simplex)
      {
        d.fe      = std::make_unique<FESystem<dim>>(FE_SimplexP<dim>(1), dim);
        d.mapping = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
        d.quadrature = std::make_unique<QGaussSimplex<dim>>(1);
        // Vertex (Lobatto) rule on the reference tetrahedron, volume 1/6.
        const FE_SimplexP<dim> linear(1);
        d.mass_quadrature = Quadrature<dim>(linear.get_unit_support_points(),
                                            std::vector<double>(4, 1. / 24.));
      }
    else
      {
        d.fe              = std::make_unique<FESystem<dim>>(FE_Q<dim>(1), dim);
        d.mapping         = std::make_unique<MappingQ<dim>>(1);
        d.quadrature      = std::make_unique<QGauss<dim>>(2);
        d.mass_quadrature = QGaussLobatto<dim>(2);
      }
    return d;
  }



  bool
  use_gpu(const Parameters::Execution &e,
          std::ostream                &out,
          const std::string           &host_note)
  {
    const bool has_gpu = GPUAssembly::n_cuda_devices() > 0;
    AssertThrow(e.device != "gpu" || has_gpu,
                ExcMessage("'Device' is gpu, but no CUDA device was found. "
                           "Set it to host or auto to run on the CPU."));
    if (e.device == "auto" && !has_gpu)
      out << "No CUDA device found: " << host_note << '.' << std::endl;
    return e.device == "gpu" || (e.device == "auto" && has_gpu);
  }



  std::unique_ptr<FunctionParser<3>>
  make_vector_function(const std::string &expressions, const std::string &entry)
  {
    auto function = std::make_unique<FunctionParser<3>>(3);
    try
      {
        function->initialize("x,y,z", expressions, {{"pi", numbers::PI}});
      }
    catch (...)
      {
        AssertThrow(false,
                    ExcMessage("The entry '" + entry + "' = '" + expressions +
                               "' is not three expressions in x, y, z "
                               "separated by ';'."));
      }
    return function;
  }



  std::unique_ptr<Function<1>>
  make_load_function(const Parameters &parameters)
  {
    auto f = std::make_unique<FunctionParser<1>>(1);
    try
      {
        f->initialize("s,t",
                      parameters.boundary.load_time_function,
                      {{"pi", numbers::PI}},
                      true);
      }
    catch (...)
      {
        AssertThrow(false,
                    ExcMessage("The 'Load time function' '" +
                               parameters.boundary.load_time_function +
                               "' is not a valid expression of t."));
      }
    return f;
  }



  void
  check_bar_memory(const Parameters::Geometry &g)
  {
    if (!g.mesh_file.empty())
      return;
    const bool   hexahedra = g.cell_type == "hexahedra";
    const double n_cells   = double(g.subdivisions[0]) * g.subdivisions[1] *
                           g.subdivisions[2] * (hexahedra ? 1 : 5);
    AppUtilities::check_memory_estimate(
      n_cells * (hexahedra ? bytes_per_hexahedron : bytes_per_tetrahedron),
      "The built-in bar with 'Geometry/Subdivisions' = " +
        std::to_string(g.subdivisions[0]) + ", " +
        std::to_string(g.subdivisions[1]) + ", " +
        std::to_string(g.subdivisions[2]) + " (" +
        AppUtilities::significant(n_cells, 3) + " " + g.cell_type + ")",
      "Choose fewer 'Geometry/Subdivisions'.");
  }



  void
  check_refinement_memory(const double       n_cells,
                          const unsigned int step,
                          const unsigned int steps)
  {
    AppUtilities::check_memory_estimate(
      n_cells * bytes_per_hexahedron,
      "Refinement step " + std::to_string(step + 1) +
        " of 'Geometry/Local refinement steps' = " + std::to_string(steps) +
        " (at least " + AppUtilities::significant(n_cells, 3) + " hexahedra)",
      "Choose fewer 'Geometry/Local refinement steps', smaller 'Fixed "
      "region' and 'Load region' boxes, or a coarser mesh.");
  }



  void
  check_load_function(const Parameters         &parameters,
                      Function<1>              &load_function_ref,
                      const bool                has_loaded_nodes,
                      const bool                has_load,
                      const ConditionalOStream &pcout)
  {
    const bool   dynamic       = parameters.time.mode == "dynamic";
    Function<1> *load_function = &load_function_ref;
    // Sample the load's amplitude finely over the run and evaluate it
    // where the steps do (midpoints in dynamic mode, step ends in
    // quasi-static mode): a load that the steps never see would be
    // skipped without a word.
    const auto        &time_parameters = parameters.time;
    const double       end_time        = time_parameters.end_time;
    const double       dt              = time_parameters.time_step;
    const std::string &expression      = parameters.boundary.load_time_function;
    double             n_steps         = std::ceil(end_time / dt * (1 - 1e-12));
    if (time_parameters.max_steps > 0)
      n_steps = std::min<double>(n_steps, time_parameters.max_steps);
    const double t_last    = std::min(end_time, n_steps * dt);
    const auto   amplitude = [&](const double t) {
      load_function->set_time(t);
      const double value = load_function->value(Point<1>());
      AssertThrow(std::isfinite(value),
                  ExcMessage("The 'Boundary conditions/Load time function' "
                               "'" +
                             expression + "' is not finite at t = " +
                             AppUtilities::significant(t) + " s (it gives " +
                             AppUtilities::significant(value) + ")."));
      return value;
    };

    const unsigned int n_samples =
      std::clamp<double>(20 * n_steps, 1000, 100000);
    double sampled_max = 0, t_first = -1, t_end = -1;
    for (unsigned int i = 0; i <= n_samples; ++i)
      {
        const double t     = t_last * i / n_samples;
        const double value = std::abs(amplitude(t));
        if (value > 0)
          {
            if (t_first < 0)
              t_first = t;
            t_end = t;
          }
        sampled_max = std::max(sampled_max, value);
      }
    double seen_max = 0;
    for (double k = 0; k < std::min(n_steps, 1e7); ++k)
      {
        const double t_old = k * dt, t_new = std::min(end_time, t_old + dt);
        seen_max = std::max(seen_max,
                            std::abs(amplitude(dynamic ? 0.5 * (t_old + t_new) :
                                                         t_new)));
      }
    if (!has_load || !has_loaded_nodes || sampled_max == 0)
      return;
    const std::string where =
      dynamic ? "at the midpoint of each step" : "at the end of each step";
    AssertThrow(seen_max > 0,
                ExcMessage(
                  "The 'Boundary conditions/Load time function' '" +
                  expression + "' is non-zero only between t = " +
                  AppUtilities::significant(t_first) +
                  " s and t = " + AppUtilities::significant(t_end) +
                  " s, but the steps of 'Time/Time step' = " +
                  AppUtilities::significant(dt) + " s evaluate it " + where +
                  ", where it is zero: the load would be skipped and the "
                  "body would not move. Choose a 'Time/Time step' below " +
                  AppUtilities::significant(
                    std::max(t_end - t_first, t_last / n_samples)) +
                  " s."));
    if (seen_max < 0.5 * sampled_max)
      pcout << "Warning: the steps of 'Time/Time step' = "
            << AppUtilities::significant(dt) << " s see the 'Load time "
            << "function' at most at " << AppUtilities::significant(seen_max)
            << ", below its peak " << AppUtilities::significant(sampled_max)
            << " between their evaluation times; a smaller time step "
               "resolves it."
            << std::endl;
  }



  StepLoads
  loads_at(const Parameters &parameters,
           Function<1>      &load_function,
           const double      time,
           const double      t_new)
  {
    const bool dynamic = parameters.time.mode == "dynamic";
    StepLoads  loads;
    if (dynamic)
      {
        loads.dt = t_new - time;
        // Eq. (4) evaluates the forces at the midpoint in time as well.
        const double t_mid = 0.5 * (time + t_new);
        load_function.set_time(t_mid);
        loads.load_amplitude    = load_function.value(Point<1>());
        loads.body_force_factor = 1.;
      }
    else
      {
        load_function.set_time(t_new);
        loads.load_amplitude = load_function.value(Point<1>());
        loads.body_force_factor =
          std::min(1., t_new / parameters.time.end_time);
      }
    AssertThrow(
      std::isfinite(loads.load_amplitude),
      ExcMessage(
        "The 'Boundary conditions/Load time function' '" +
        parameters.boundary.load_time_function + "' is not finite at t = " +
        AppUtilities::significant(dynamic ? 0.5 * (time + t_new) : t_new) +
        " s (it gives " + AppUtilities::significant(loads.load_amplitude) +
        ")."));
    return loads;
  }



  std::string
  format_scientific(const double value, const unsigned int digits)
  {
    std::ostringstream out;
    out << std::scientific << std::setprecision(digits) << value;
    return out.str();
  }



  std::string
  step_failure_message(
    const StepReport                                      &report,
    const Parameters                                      &parameters,
    const LinearSolver                                     solver,
    const unsigned int                                     step_number,
    const double                                           t_new,
    const std::function<std::pair<double, std::string>()> &worst_element)
  {
    const std::vector<double> &residuals = report.residuals;
    const unsigned int         it        = residuals.size() - 1;
    switch (report.status)
      {
        case StepStatus::not_finite:
          {
            const auto [J_min, where] = worst_element();
            return "in step " + std::to_string(step_number + 1) +
                   " (t = " + std::to_string(t_new) + "), Newton iteration " +
                   std::to_string(it) + ": " +
                   (J_min <= 0 ?
                      where + " is inverted (J = " + std::to_string(J_min) +
                        ")" :
                      "the residual is not finite (smallest J: " +
                        std::to_string(J_min) + " at " + where + ")") +
                   ". Try a smaller time step or load increment.";
          }
        case StepStatus::diverged:
          {
            std::ostringstream history;
            for (const double r : residuals)
              history << ' ' << format_scientific(r);
            return "Newton's method diverged in step " +
                   std::to_string(step_number + 1) +
                   " (t = " + std::to_string(t_new) + ") after " +
                   std::to_string(it) +
                   " iterations; residuals:" + history.str() +
                   ". Try a smaller time step, more Newton iterations or a "
                   "looser tolerance.";
          }
        case StepStatus::cg_breakdown:
          {
            const auto &m = parameters.material;
            if (solver == LinearSolver::direct)
              return "The direct solver found the tangent singular in step " +
                     std::to_string(step_number + 1) +
                     " (t = " + AppUtilities::significant(t_new) +
                     " s): the body is unstable at this load (buckling, "
                     "an element close to inversion; a smaller 'Time/Time "
                     "step' or load helps) or free to move (quasi-static: "
                     "'Boundary conditions/Fixed boundary ids' or 'Fixed "
                     "region' must hold it), or the material makes K "
                     "overflow or vanish: check 'Material/Shear modulus' = " +
                     AppUtilities::significant(m.mu) +
                     " and 'Material/Lame lambda' = " +
                     AppUtilities::significant(m.lambda) + ".";
            return "CG broke down in step " + std::to_string(step_number + 1) +
                   " (t = " + AppUtilities::significant(t_new) +
                   " s): the tangent m/dt + dt/4 K is not positive definite "
                   "or not finite. Either an element is close to inversion "
                   "or the body is unstable (a smaller 'Time/Time step' or "
                   "load helps), or the material makes K overflow or vanish "
                   "against the mass: check 'Material/Shear modulus' = " +
                   AppUtilities::significant(m.mu) +
                   ", 'Material/Lame lambda' = " +
                   AppUtilities::significant(m.lambda) +
                   " and 'Material/Density' = " +
                   AppUtilities::significant(m.density) + ".";
          }
        case StepStatus::converged:
          break;
      }
    Assert(false, ExcInternalError("The step converged; nothing to report."));
    return std::string();
  }



  // The squared distances are those deal.II computes (the vertex of
  // smaller index first), and their maximum does not depend on the order in
  // which they are compared.
  double
  mesh_diameter(const Triangulation<3> &tria)
  {
    const std::vector<Point<3>> &vertices = tria.get_vertices();
    std::vector<bool>            is_boundary(vertices.size(), false);
    for (const auto &cell : tria.active_cell_iterators())
      for (const unsigned int f : cell->face_indices())
        if (cell->face(f)->at_boundary())
          for (unsigned int v = 0; v < cell->face(f)->n_vertices(); ++v)
            is_boundary[cell->face(f)->vertex_index(v)] = true;
    std::vector<unsigned int> boundary;
    for (unsigned int i = 0; i < vertices.size(); ++i)
      if (is_boundary[i])
        boundary.push_back(i);
    std::mutex mutex;
    double     max_distance_sqr = 0;
    parallel::apply_to_subranges(
      std::size_t(0),
      boundary.size(),
      [&](const std::size_t begin, const std::size_t end) {
        double local_max = 0;
        for (std::size_t a = begin; a < end; ++a)
          {
            const Point<3> &p = vertices[boundary[a]];
            for (std::size_t b = a + 1; b < boundary.size(); ++b)
              local_max =
                std::max(local_max, (p - vertices[boundary[b]]).norm_square());
          }
        std::lock_guard<std::mutex> lock(mutex);
        max_distance_sqr = std::max(max_distance_sqr, local_max);
      },
      64);
    return std::sqrt(max_distance_sqr);
  }



  void
  print_state_summary(const ConditionalOStream &pcout,
                      const std::string        &file,
                      const StateSummary       &s)
  {
    pcout << "  output " << file
          << ": max |u| = " << format_scientific(s.max_displacement, 3)
          << ", kinetic energy " << format_scientific(s.kinetic_energy, 4)
          << ", strain energy " << format_scientific(s.strain_energy, 4)
          << ", momentum (" << format_scientific(s.momentum[0]) << ", "
          << format_scientific(s.momentum[1]) << ", "
          << format_scientific(s.momentum[2]) << ')';
    if (s.has_load_region)
      pcout << ", load region mean u ("
            << format_scientific(s.load_region_displacement[0], 4) << ", "
            << format_scientific(s.load_region_displacement[1], 4) << ", "
            << format_scientific(s.load_region_displacement[2], 4) << ')';
    pcout << std::endl;
  }



  double
  run_time_steps(const Parameters            &parameters,
                 const double                &time,
                 const unsigned int          &step_number,
                 const std::function<void()> &do_step,
                 const std::function<void()> &output)
  {
    const unsigned int output_interval = parameters.output.output_interval;
    if (output_interval > 0)
      output();

    const auto   start       = std::chrono::steady_clock::now();
    double       output_time = 0;
    const double end_time    = parameters.time.end_time;
    while (time < end_time * (1 - 1e-12) &&
           (parameters.time.max_steps == 0 ||
            step_number < parameters.time.max_steps))
      {
        do_step();
        const bool last = !(time < end_time * (1 - 1e-12)) ||
                          step_number == parameters.time.max_steps;
        if (output_interval > 0 && (step_number % output_interval == 0 || last))
          {
            const auto before = std::chrono::steady_clock::now();
            output();
            output_time += std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - before)
                             .count();
          }
      }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
             .count() -
           output_time;
  }



  void
  print_stepping_summary(const ConditionalOStream &pcout,
                         const RunStatistics      &stats)
  {
    const unsigned int n_steps            = stats.n_steps;
    const double       stepping_wall_time = stats.stepping_wall_time;
    pcout << "\n"
          << n_steps << " steps in " << std::fixed << std::setprecision(3)
          << stepping_wall_time << " s without output: " << std::setprecision(1)
          << n_steps / std::max(stepping_wall_time, 1e-300)
          << " steps/s; Newton iterations " << stats.n_newton_iterations
          << " (at most " << stats.max_newton_iterations << " per step), ";
    switch (stats.linear_solver)
      {
        case LinearSolver::direct:
          pcout << "direct solves " << stats.n_cg_iterations
                << " (one per Newton iteration)";
          break;
        case LinearSolver::cg_jacobi:
          pcout << "CG iterations " << stats.n_cg_iterations;
          break;
        default:
          pcout << short_name(stats.linear_solver) << " iterations "
                << stats.n_cg_iterations;
      }
    pcout << "." << std::endl;
  }



  void
  print_output_hint(const ConditionalOStream &pcout,
                    const Parameters::Output &output)
  {
    if (output.output_interval > 0)
      pcout << "Open " << output.directory << "/" << output.base_name
            << ".pvd in ParaView." << std::endl;
  }



  bool
  is_near_clamp_or_load(const Triangulation<3>::active_cell_iterator &cell,
                        const Parameters::Boundary                   &b,
                        const double                                  tolerance)
  {
    bool near = false;
    for (const unsigned int v : cell->vertex_indices())
      near |= (!b.fixed_region.empty &&
               b.fixed_region.contains(cell->vertex(v), tolerance)) ||
              (!b.load_region.empty &&
               b.load_region.contains(cell->vertex(v), tolerance));
    for (const auto &face : cell->face_iterators())
      near |= face->at_boundary() &&
              std::find(b.fixed_boundary_ids.begin(),
                        b.fixed_boundary_ids.end(),
                        face->boundary_id()) != b.fixed_boundary_ids.end();
    return near;
  }



  void
  record_step(RunStatistics            &stats,
              const StepReport         &report,
              const Parameters::Output &output,
              const unsigned int        step_number,
              const double              time,
              const ConditionalOStream &pcout)
  {
    const std::vector<double> &residuals = report.residuals;
    const unsigned int         n_newton  = residuals.size() - 1;
    const unsigned int         n_cg      = report.n_cg_iterations;
    stats.n_steps += 1;
    stats.n_newton_iterations += n_newton;
    stats.n_cg_iterations += n_cg;
    stats.max_newton_iterations =
      std::max(stats.max_newton_iterations, n_newton);
    stats.last_newton_residual = residuals.back();

    const unsigned int interval = output.screen_interval;
    if (interval > 0 && step_number % interval == 0)
      {
        pcout << "Step " << std::setw(5) << step_number
              << "  t = " << std::setw(9) << std::fixed << std::setprecision(4)
              << time << "  Newton " << n_newton
              << (stats.linear_solver == LinearSolver::direct ? "  direct " :
                  stats.linear_solver == LinearSolver::bicgstab_jacobi ?
                                                                "  BiCGStab " :
                                                                "  CG ")
              << std::setw(4) << n_cg << "  |r|:";
        for (const double r : residuals)
          pcout << ' ' << format_scientific(r);
        pcout << std::endl;
      }
  }



  bool
  check_load_region(const Parameters::Boundary &boundary,
                    const unsigned int          n_loaded_nodes)
  {
    const auto &load     = boundary.load;
    const bool  has_load = load[0] != 0 || load[1] != 0 || load[2] != 0;
    AssertThrow(!boundary.load_region.empty || !has_load,
                ExcMessage("'Boundary conditions/Load' = " +
                           format_scientific(load[0], 4) + ", " +
                           format_scientific(load[1], 4) + ", " +
                           format_scientific(load[2], 4) +
                           " is not zero, but the 'Load region' is empty, so "
                           "the load would act on nothing. Give the box of "
                           "the loaded nodes, or set 'Load' to 0, 0, 0."));
    AssertThrow(boundary.load_region.empty || !has_load || n_loaded_nodes > 0,
                ExcMessage("The 'Load region' box contains no node of the "
                           "mesh, so the load would be lost. Check the "
                           "box against the mesh's extent."));
    return has_load;
  }



  void
  stop_simulation(const ConditionalOStream &pcout,
                  const unsigned int        step_number,
                  const double              time,
                  const std::string        &file,
                  const std::string        &reason)
  {
    pcout << "Wrote the last good state (step " << step_number
          << ", t = " << time << ") to " << file << '.' << std::endl;
    AssertThrow(false, ExcSimulationStopped(reason));
    __builtin_unreachable();
  }



  void
  make_fixed_constraints(
    const Mapping<3>                      &mapping,
    const DoFHandler<3>                   &dof_handler,
    const Parameters::Boundary            &boundary,
    const std::vector<types::boundary_id> &mesh_boundary_ids,
    const double                           tolerance,
    AffineConstraints<double>             &constraints,
    ComponentConstraintDoFs               &component_dofs)
  {
    constexpr int dim = 3;
    // Hanging nodes first: a fixed DoF that is also hanging keeps its
    // hanging-node line, as in deal.II's tutorials.
    DoFTools::make_hanging_node_constraints(dof_handler, constraints);
    for (const unsigned int id : boundary.fixed_boundary_ids)
      {
        AssertThrow(
          std::find(mesh_boundary_ids.begin(), mesh_boundary_ids.end(), id) !=
            mesh_boundary_ids.end(),
          ExcMessage("'Fixed boundary ids' names boundary id " +
                     std::to_string(id) + ", which the mesh does not have."));
        VectorTools::interpolate_boundary_values(mapping,
                                                 dof_handler,
                                                 id,
                                                 Functions::ZeroFunction<dim>(
                                                   dim),
                                                 constraints);
      }
    if (!boundary.fixed_region.empty)
      for (const auto &cell : dof_handler.active_cell_iterators())
        if (!cell->is_artificial())
          for (const unsigned int v : cell->vertex_indices())
            if (boundary.fixed_region.contains(cell->vertex(v), tolerance))
              for (unsigned int c = 0; c < dim; ++c)
                {
                  const auto dof = cell->vertex_dof_index(v, c);
                  if (!constraints.is_constrained(dof))
                    constraints.add_line(dof);
                }

    // A component on a selection: the boundary DoFs of an id, or the
    // vertices in a box.
    const auto hold = [&](const BoundarySelection &where,
                          const unsigned int       component,
                          const std::string       &entry,
                          HeldDoFs                &held) {
      const auto claim = [&](const types::global_dof_index dof) {
        if (!constraints.is_constrained(dof))
          {
            constraints.add_line(dof);
            held.emplace_back(dof, component);
          }
      };
      if (where.by_box)
        {
          for (const auto &cell : dof_handler.active_cell_iterators())
            if (!cell->is_artificial())
              for (const unsigned int v : cell->vertex_indices())
                if (where.box.contains(cell->vertex(v), tolerance))
                  claim(cell->vertex_dof_index(v, component));
          return;
        }
      AssertThrow(std::find(mesh_boundary_ids.begin(),
                            mesh_boundary_ids.end(),
                            where.boundary_id) != mesh_boundary_ids.end(),
                  ExcMessage("'" + entry + "' names boundary id " +
                             std::to_string(where.boundary_id) +
                             ", which the mesh does not have."));
      ComponentMask mask(dim, false);
      mask.set(component, true);
      for (const types::global_dof_index dof : DoFTools::extract_boundary_dofs(
             dof_handler,
             mask,
             {types::boundary_id(where.boundary_id)}))
        claim(dof);
    };
    component_dofs.prescribed.assign(boundary.prescribed.size(), {});
    for (unsigned int i = 0; i < boundary.prescribed.size(); ++i)
      hold(boundary.prescribed[i].where,
           boundary.prescribed[i].component,
           boundary.prescribed[i].entry,
           component_dofs.prescribed[i]);
    component_dofs.rollers.assign(boundary.rollers.size(), {});
    for (unsigned int i = 0; i < boundary.rollers.size(); ++i)
      for (unsigned int c = 0; c < dim; ++c)
        if (boundary.rollers[i].components[c])
          hold(boundary.rollers[i].where,
               c,
               boundary.rollers[i].entry,
               component_dofs.rollers[i]);
    constraints.close();
  }



  void
  count_boundary_faces(const Triangulation<3>     &tria,
                       const Parameters::Boundary &boundary,
                       FixedDoFCounts             &counts)
  {
    const auto &ids = boundary.fixed_boundary_ids;
    for (const auto &cell : tria.active_cell_iterators())
      if (cell->is_locally_owned())
        for (const auto &face : cell->face_iterators())
          if (face->at_boundary())
            {
              ++counts.n_boundary_faces;
              if (std::find(ids.begin(), ids.end(), face->boundary_id()) !=
                  ids.end())
                ++counts.n_fixed_faces;
            }
    if (!boundary.fixed_region.empty)
      for (const auto &cell : tria.active_cell_iterators())
        if (cell->is_locally_owned())
          for (const unsigned int v : cell->vertex_indices())
            counts.n_fixed_region_vertices +=
              boundary.fixed_region.contains(cell->vertex(v),
                                             1e-6 * cell->diameter());
  }



  void
  check_fixed_dofs(const Parameters         &parameters,
                   const FixedDoFCounts     &counts,
                   const bool                has_load,
                   const ConditionalOStream &pcout)
  {
    // How the fixed DoFs came about, for the messages.
    const auto        &boundary = parameters.boundary;
    std::ostringstream ids;
    for (unsigned int i = 0; i < boundary.fixed_boundary_ids.size(); ++i)
      ids << (i > 0 ? ", " : "") << boundary.fixed_boundary_ids[i];
    const unsigned int n_boundary_faces = counts.n_boundary_faces;
    const unsigned int n_fixed_faces    = counts.n_fixed_faces;
    const std::string  source =
      "'Boundary conditions/Fixed boundary ids' = '" + ids.str() +
      "' (it holds " + std::to_string(n_fixed_faces) + " of the mesh's " +
      std::to_string(n_boundary_faces) + " boundary faces" +
      (n_fixed_faces == n_boundary_faces && n_boundary_faces > 0 ?
         ", its whole surface" :
         std::string()) +
      ") and 'Boundary conditions/Fixed region' = '" +
      (boundary.fixed_region.empty ? std::string() : "a box") + "'";
    const std::string advice =
      " A .dat mesh has no boundary information, so all its faces have "
      "boundary id 0; select the faces to hold by position instead: set "
      "'Fixed boundary ids' empty and 'Fixed region' to a box x0, y0, z0, "
      "x1, y1, z1 around them.";

    AssertThrow(boundary.fixed_region.empty ||
                  counts.n_fixed_region_vertices > 0,
                ExcMessage("The 'Boundary conditions/Fixed region' box "
                           "contains no node of the mesh, so it would hold "
                           "nothing. Check the box against the mesh's "
                           "extent."));
    AssertThrow(counts.n_constrained < counts.n_dofs,
                ExcMessage("Every degree of freedom is held fixed by " +
                           source + ", so nothing can move." + advice));

    const unsigned int n_loaded = counts.n_loaded_nodes;
    const unsigned int n_free   = counts.n_free_loaded_nodes;
    if (has_load && n_loaded > 0)
      {
        AssertThrow(n_free > 0,
                    ExcMessage(
                      "All " + std::to_string(n_loaded) +
                      " nodes of the 'Boundary conditions/Load region' are "
                      "held fixed by " +
                      source +
                      ", so the load acts on no free node and the result "
                      "would be zero." +
                      advice));
        if (n_free < n_loaded)
          pcout << "Warning: " << n_loaded - n_free << " of the " << n_loaded
                << " nodes of the 'Load region' are held fixed; their "
                   "share of the 'Load' is lost."
                << std::endl;
      }

    // Without inertia, the fixed nodes must hold the rigid motions: they
    // must not all lie on one line.
    if (parameters.time.mode != "dynamic" &&
        !parameters.explicit_dynamics.is_explicit() &&
        !counts.rigid_motions_checked)
      {
        const std::vector<Point<3>> &fixed = counts.fixed_nodes;
        double                       area  = 0;
        for (const auto &p : fixed)
          for (const auto &q : fixed)
            area =
              std::max(area,
                       cross_product_3d(q - fixed[0], p - fixed[0]).norm());
        const double diameter = counts.diameter;
        AssertThrow(area > 1e-12 * diameter * diameter,
                    ExcMessage(
                      "In 'Time/Mode' = quasi-static nothing but the fixed "
                      "nodes holds the body, but " +
                      source + " hold " + std::to_string(fixed.size()) +
                      " nodes" +
                      (fixed.empty() ? std::string() : ", all on one line") +
                      ": the body could move freely and the stiffness "
                      "matrix would be singular. Fix at least three nodes "
                      "not on one line." +
                      advice));
      }
  }



  void
  write_trace_files(const std::string                      &directory,
                    const std::string                      &base_name,
                    const std::string                      &header,
                    const std::vector<std::vector<double>> &rows,
                    const TraceFigure                      &figure)
  {
    AppUtilities::create_output_directory(directory, "Output/Directory");
    AppUtilities::write_file(directory + "/" + base_name + ".csv",
                             [&](std::ostream &csv) {
                               csv << "# " << header << '\n';
                               csv << std::setprecision(10);
                               for (const auto &row : rows)
                                 {
                                   for (unsigned int i = 0; i < row.size(); ++i)
                                     csv << (i > 0 ? ", " : "") << row[i];
                                   csv << '\n';
                                 }
                             });

    using Wave2D::Image;
    const Wave2D::PanelLayout layout{200,
                                     40,
                                     50,
                                     260,
                                     1200,
                                     40,
                                     [](const double value) {
                                       return format_scientific(value, 2);
                                     },
                                     80};
    const int                 n_panels = figure.panels.size();
    Image image(layout.width, layout.top + n_panels * layout.panel_height + 40);
    const Image::Color black     = {{0, 0, 0}};
    const Image::Color colors[3] = {{{20, 80, 200}},
                                    {{30, 150, 40}},
                                    {{210, 40, 30}}};
    image.text(layout.left, 12, figure.title, black);
    for (int d = 0; d < 3; ++d)
      image.text(layout.left + figure.legend_offset + 35 * d,
                 12,
                 std::string(1, char('x' + d)),
                 colors[d]);
    const auto column = [&](const unsigned int c) {
      std::vector<double> values;
      for (const auto &row : rows)
        values.push_back(row[c]);
      return values;
    };
    const std::vector<double> x = column(figure.x_column);
    for (int k = 0; k < n_panels; ++k)
      {
        std::vector<std::vector<double>> values;
        for (const unsigned int c : figure.panels[k].columns)
          values.push_back(column(c));
        std::vector<Wave2D::Curve> curves;
        for (unsigned int i = 0; i < values.size(); ++i)
          curves.push_back({&values[i], colors[i % 3]});
        Wave2D::plot_panel(image,
                           layout,
                           k,
                           x,
                           curves,
                           figure.panels[k].label,
                           true);
      }
    image.write_png(directory + "/" + base_name + ".png");
  }



  template <class VectorType>
  void
  add_displacement_and_velocity(DataOut<3>          &data_out,
                                const DoFHandler<3> &dof_handler,
                                const VectorType    &u,
                                const VectorType    &v)
  {
    constexpr int dim = 3;
    data_out.attach_dof_handler(dof_handler);
    const std::vector<DataComponentInterpretation::DataComponentInterpretation>
      vector_field(dim,
                   DataComponentInterpretation::component_is_part_of_vector);
    data_out.add_data_vector(u,
                             std::vector<std::string>(dim, "displacement"),
                             DataOut<dim>::type_dof_data,
                             vector_field);
    data_out.add_data_vector(v,
                             std::vector<std::string>(dim, "velocity"),
                             DataOut<dim>::type_dof_data,
                             vector_field);
  }

  template void
  add_displacement_and_velocity(DataOut<3> &,
                                const DoFHandler<3> &,
                                const Vector<double> &,
                                const Vector<double> &);
  template void
  add_displacement_and_velocity(DataOut<3> &,
                                const DoFHandler<3> &,
                                const TrilinosWrappers::MPI::Vector &,
                                const TrilinosWrappers::MPI::Vector &);



  void
  add_J_and_von_mises(DataOut<3>           &data_out,
                      const Vector<double> &J,
                      const Vector<double> &von_mises)
  {
    data_out.add_data_vector(J, "J", DataOut<3>::type_cell_data);
    data_out.add_data_vector(von_mises,
                             "von_Mises_stress",
                             DataOut<3>::type_cell_data);
  }
} // namespace Hyperelastic
