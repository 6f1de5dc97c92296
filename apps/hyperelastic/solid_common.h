// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_solid_common_h
#define hyperelastic_solid_common_h

// The pieces of the app's integrators: the discretization, the device
// choice, the time functions, the loads of a step, the input checks, the
// Newton loop over a backend's operations, the failure messages and the
// output helpers. The implicit integrator (ImplicitSolid) uses them all, the
// explicit one (ExplicitSolid) the discretization, the device choice and
// the output helpers.

#include <deal.II/base/conditional_ostream.h>
#include <deal.II/base/function.h>
#include <deal.II/base/function_parser.h>
#include <deal.II/base/quadrature.h>
#include <deal.II/base/symmetric_tensor.h>
#include <deal.II/base/tensor.h>
#include <deal.II/base/timer.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping.h>

#include <deal.II/grid/tria.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "integrator_backend.h"
#include "parameters.h"

namespace Hyperelastic
{
  using namespace dealii;

  struct RunStatistics;

  /// Linear elements on tetrahedra (one-point rule) or hexahedra (2^3
  /// Gauss points), and the vertex rule that lumps the mass.
  struct Discretization
  {
    std::unique_ptr<FESystem<3>>   fe;
    std::unique_ptr<Mapping<3>>    mapping;
    std::unique_ptr<Quadrature<3>> quadrature;
    Quadrature<3>                  mass_quadrature;
  };

  Discretization
  make_discretization(const bool simplex);

  /**
   * Whether the steps of one process run on the GPU ('Execution/Device'):
   * refuses gpu without a CUDA device; with auto and none, says on @p out
   * "No CUDA device found: @p host_note."
   */
  bool
  use_gpu(const Parameters::Execution &execution,
          std::ostream                &out,
          const std::string           &host_note);

  /// Three muparser expressions in x, y, z separated by ';' (@p entry
  /// names the parameter in messages).
  std::unique_ptr<FunctionParser<3>>
  make_vector_function(const std::string &expressions,
                       const std::string &entry);

  /// 'Boundary conditions/Load time function' as a function of t.
  std::unique_ptr<Function<1>>
  make_load_function(const Parameters &parameters);

  /**
   * GridTools::diameter(), bit for bit, from the vertices of boundary faces
   * alone (the two farthest vertices of a mesh lie on its boundary), in
   * parallel: deal.II's loop visits all pairs of all vertices, which grows
   * with the square of the mesh's vertices and takes tens of seconds at a
   * million cells.
   */
  double
  mesh_diameter(const Triangulation<3> &tria);



  /**
   * Whether 'Local refinement steps' refines @p cell: a vertex in the fixed
   * or the load region (within @p tolerance), or a face on a fixed boundary.
   */
  bool
  is_near_clamp_or_load(const Triangulation<3>::active_cell_iterator &cell,
                        const Parameters::Boundary                   &boundary,
                        const double tolerance);



  /// Refuses a built-in bar too large for the machine's memory.
  void
  check_bar_memory(const Parameters::Geometry &geometry);

  /// Refuses, before deal.II refines, the local refinement step @p step
  /// (from 0) of 'Geometry/Local refinement steps' when the @p n_cells
  /// hexahedra it makes would not fit into the machine's memory.
  void
  check_refinement_memory(const double       n_cells,
                          const unsigned int step,
                          const unsigned int steps);

  /// Refuses a load time function that is not finite, or that the steps
  /// never see (non-zero only between two evaluation times).
  void
  check_load_function(const Parameters         &parameters,
                      Function<1>              &load_function,
                      const bool                has_loaded_nodes,
                      const bool                has_load,
                      const ConditionalOStream &pcout);

  /// The step size and load factors of the step from @p t_old to @p t_new.
  StepLoads
  loads_at(const Parameters &parameters,
           Function<1>      &load_function,
           const double      t_old,
           const double      t_new);

  std::string
  format_scientific(const double value, const unsigned int digits = 2);

  /// What the line after each output says about the state.
  struct StateSummary
  {
    double       max_displacement = 0;
    double       kinetic_energy   = 0;
    double       strain_energy    = 0;
    Tensor<1, 3> momentum;
    /// Set where the load region holds nodes.
    bool         has_load_region = false;
    Tensor<1, 3> load_region_displacement;
  };

  /// "  output FILE: max |u| = ..., kinetic energy ..., ..." on one line.
  void
  print_state_summary(const ConditionalOStream &pcout,
                      const std::string        &file,
                      const StateSummary       &summary);

  /**
   * Runs @p do_step until the end time or the step limit of @p parameters
   * (@p time and @p step_number are those do_step() advances), and
   * @p output after the start and after every 'Output interval'-th and the
   * last step where the interval is set. Returns the wall time of the steps
   * without the outputs.
   */
  double
  run_time_steps(const Parameters            &parameters,
                 const double                &time,
                 const unsigned int          &step_number,
                 const std::function<void()> &do_step,
                 const std::function<void()> &output);

  /// "N steps in T s without output: S steps/s; Newton ..., CG ..." from
  /// @p stats, the linear solver's iterations named after it.
  void
  print_stepping_summary(const ConditionalOStream &pcout,
                         const RunStatistics      &stats);

  /// "Open DIR/BASE.pvd in ParaView." where 'Output interval' is set.
  void
  print_output_hint(const ConditionalOStream &pcout,
                    const Parameters::Output &output);

  /**
   * Counts the converged step @p report in @p stats and, every 'Output/Screen
   * interval' steps, prints "Step N  t = ...  Newton ...  CG ...  |r|: ..."
   * ("direct" in place of "CG" with the direct solver, which counts one
   * per solve; @p step_number and @p time: those after the step).
   */
  void
  record_step(RunStatistics            &stats,
              const StepReport         &report,
              const Parameters::Output &output,
              const unsigned int        step_number,
              const double              time,
              const ConditionalOStream &pcout);

  /**
   * Whether the 'Boundary conditions/Load' is non-zero; refuses one that a
   * 'Load region' holding no node (@p n_loaded_nodes: those of all ranks)
   * would lose.
   */
  bool
  check_load_region(const Parameters::Boundary &boundary,
                    const unsigned int          n_loaded_nodes);

  /**
   * Says on @p pcout that the last good state (@p step_number, @p time)
   * went to @p file, then throws ExcSimulationStopped(@p reason).
   */
  [[noreturn]] void
  stop_simulation(const ConditionalOStream &pcout,
                  const unsigned int        step_number,
                  const double              time,
                  const std::string        &file,
                  const std::string        &reason);

  /**
   * The hanging-node constraints of @p dof_handler, then the DoFs held at
   * zero: those on the 'Fixed boundary ids' (each checked against
   * @p mesh_boundary_ids) and the vertices in the 'Fixed region' (within
   * @p tolerance); closes @p constraints, which the caller has cleared (and
   * given its index set).
   */
  /// The DoFs that one roller or prescribed displacement holds, each with
  /// its component: the locally relevant ones not held before.
  using HeldDoFs =
    std::vector<std::pair<types::global_dof_index, unsigned int>>;

  /// What make_fixed_constraints() holds for 'Prescribed displacements' and
  /// 'Rollers', in the order of Parameters::Boundary's lists.
  struct ComponentConstraintDoFs
  {
    std::vector<HeldDoFs> prescribed;
    std::vector<HeldDoFs> rollers;
  };

  /**
   * ... then the components of the prescribed displacements and of the
   * rollers, in this order (a DoF held before stays with its first
   * holder), as homogeneous lines: the backends keep the increments of
   * every held DoF at zero, and the prescribed values enter through the
   * state (ImplicitSolid). Their DoFs go to @p component_dofs.
   */
  void
  make_fixed_constraints(
    const Mapping<3>                      &mapping,
    const DoFHandler<3>                   &dof_handler,
    const Parameters::Boundary            &boundary,
    const std::vector<types::boundary_id> &mesh_boundary_ids,
    const double                           tolerance,
    AffineConstraints<double>             &constraints,
    ComponentConstraintDoFs               &component_dofs);

  /// What check_fixed_dofs() judges, summed over all ranks.
  struct FixedDoFCounts
  {
    unsigned int n_boundary_faces = 0;
    /// Boundary faces with one of the 'Fixed boundary ids'.
    unsigned int n_fixed_faces = 0;
    /// Vertices of cells (one per cell it belongs to) in the 'Fixed
    /// region' box.
    unsigned int n_fixed_region_vertices = 0;
    /// Constrained DoFs (held and hanging) against all DoFs.
    types::global_dof_index n_constrained  = 0;
    types::global_dof_index n_dofs         = 0;
    unsigned int            n_loaded_nodes = 0;
    /// Loaded nodes with a loaded component that is not held.
    unsigned int n_free_loaded_nodes = 0;
    /// Quasi-static mode only: the positions of the held nodes, and the
    /// mesh's diameter.
    std::vector<Point<3>> fixed_nodes;
    double                diameter = 0;
    /// Whether the caller checked the rigid motions on the held components
    /// itself (rollers, prescribed displacements): fixed_nodes is then
    /// not used.
    bool rigid_motions_checked = false;
  };

  /// The boundary faces of the locally owned cells of @p tria and those of
  /// them on a 'Fixed boundary ids' face, and their vertices in the 'Fixed
  /// region', in @p counts.
  void
  count_boundary_faces(const Triangulation<3>     &tria,
                       const Parameters::Boundary &boundary,
                       FixedDoFCounts             &counts);

  /**
   * Refuses fixed DoFs that leave the problem ill posed (everything held,
   * the load on held nodes only, nothing holding a quasi-static body),
   * naming the entries to change; warns where part of the load is lost.
   */
  void
  check_fixed_dofs(const Parameters         &parameters,
                   const FixedDoFCounts     &counts,
                   const bool                has_load,
                   const ConditionalOStream &pcout);

  /// A panel of a trace figure: up to three columns of the rows, drawn in
  /// the colours of x, y and z.
  struct TracePanel
  {
    std::string               label;
    std::vector<unsigned int> columns;
  };

  /// A trace figure: panels stacked, all against the column x_column.
  struct TraceFigure
  {
    std::string title;
    /// Where the x, y, z colour legend starts right of the title, pixels.
    int                     legend_offset = 525;
    unsigned int            x_column      = 1;
    std::vector<TracePanel> panels;
  };

  /**
   * @p directory/@p base_name.csv: the line "# @p header", then @p rows,
   * comma-separated with 10 significant digits; and
   * @p directory/@p base_name.png: @p figure. Both through the apps' safe
   * writer (a file is whole or absent).
   */
  void
  write_trace_files(const std::string                      &directory,
                    const std::string                      &base_name,
                    const std::string                      &header,
                    const std::vector<std::vector<double>> &rows,
                    const TraceFigure                      &figure);

  /// Attaches @p dof_handler to @p data_out and adds @p u and @p v as the
  /// vector fields "displacement" and "velocity".
  template <class VectorType>
  void
  add_displacement_and_velocity(DataOut<3>          &data_out,
                                const DoFHandler<3> &dof_handler,
                                const VectorType    &u,
                                const VectorType    &v);

  /// The VTU flags of the output files: the level of 'Output/Compression'.
  inline DataOutBase::VtkFlags
  vtk_flags(const Parameters::Output &output)
  {
    DataOutBase::VtkFlags flags;
    flags.compression_level = output.compression;
    return flags;
  }

  /// Adds the cell fields "J" and "von_Mises_stress".
  void
  add_J_and_von_mises(DataOut<3>           &data_out,
                      const Vector<double> &J,
                      const Vector<double> &von_mises);

  /**
   * The reason a step's Newton loop failed (report.status not converged),
   * as the text of ExcSimulationStopped. @p worst_element gives the
   * smallest J and where it is, at the configuration the kernel saw;
   * @p solver is the linear solver that ran.
   */
  std::string
  step_failure_message(
    const StepReport                                      &report,
    const Parameters                                      &parameters,
    const LinearSolver                                     solver,
    const unsigned int                                     step_number,
    const double                                           t_new,
    const std::function<std::pair<double, std::string>()> &worst_element);

  /// Stored energy density W(F) of the compressible neo-Hookean solid.
  inline double
  strain_energy_density(const Tensor<2, 3> &F,
                        const double        mu,
                        const double        lambda)
  {
    const double J     = determinant(F);
    const double log_J = std::log(J);
    return 0.5 * mu * (scalar_product(F, F) - 3) +
           0.5 * lambda * log_J * log_J - mu * log_J;
  }

  /// The Cauchy stress sigma = P F^T / J
  /// = (mu F F^T + (lambda ln J - mu) I) / J.
  inline Tensor<2, 3>
  cauchy_stress(const Tensor<2, 3> &F, const double mu, const double lambda)
  {
    const double J = determinant(F);
    return (mu * F * transpose(F) +
            (lambda * std::log(J) - mu) * unit_symmetric_tensor<3>()) /
           J;
  }

  /// The first Piola-Kirchhoff stress P = mu F + (lambda ln J - mu) F^-T.
  inline Tensor<2, 3>
  first_piola_stress(const Tensor<2, 3> &F,
                     const double        mu,
                     const double        lambda)
  {
    return mu * F +
           (lambda * std::log(determinant(F)) - mu) * transpose(invert(F));
  }

  /// von Mises stress of the Cauchy stress.
  inline double
  von_mises_stress(const Tensor<2, 3> &F, const double mu, const double lambda)
  {
    const Tensor<2, 3> sigma = cauchy_stress(F, mu, lambda);
    const Tensor<2, 3> s =
      sigma - trace(sigma) / 3 * unit_symmetric_tensor<3>();
    return std::sqrt(1.5 * scalar_product(s, s));
  }



  /**
   * The Newton loop of a time step over a backend's operations (predict,
   * assemble_residual, solve_and_update, finish_step), timed in @p timer.
   * With several MPI ranks every rank takes the same branches: the
   * residual norms and CG's results are global.
   */
  inline StepReport
  run_newton_loop(IntegratorBackend        &backend,
                  const StepLoads          &loads,
                  const Parameters::Solver &solver,
                  TimerOutput              &timer)
  {
    {
      TimerOutput::Scope scope(timer, "Update");
      backend.predict(loads);
    }

    StepReport report;
    for (unsigned int it = 0;; ++it)
      {
        double residual;
        {
          TimerOutput::Scope scope(timer, "Assembly");
          residual = backend.assemble_residual(loads);
        }
        report.residuals.push_back(residual);
        if (!std::isfinite(residual))
          {
            report.status = StepStatus::not_finite;
            return report;
          }
        if (residual <= solver.newton_tolerance)
          break;
        if (it == solver.max_newton_iterations ||
            residual >
              solver.divergence_limit *
                std::max(report.residuals.front(), solver.newton_tolerance))
          {
            report.status = StepStatus::diverged;
            return report;
          }
        LinearSolveResult cg;
        {
          TimerOutput::Scope scope(timer,
                                   solve_stage_name(backend.linear_solver()));
          cg = backend.solve_and_update(solver.cg_tolerance,
                                        solver.max_cg_iterations);
        }
        report.n_cg_iterations += cg.iterations;
        if (!std::isfinite(cg.final_residual))
          {
            report.status = StepStatus::cg_breakdown;
            return report;
          }
      }

    {
      TimerOutput::Scope scope(timer, "Update");
      backend.finish_step(loads);
    }
    report.status = StepStatus::converged;
    return report;
  }
} // namespace Hyperelastic

#endif
