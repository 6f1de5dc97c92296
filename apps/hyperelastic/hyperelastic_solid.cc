#include "hyperelastic_solid.h"

#include <deal.II/base/function_parser.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_renumbering.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>

#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>
#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/grid/mesh_input.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "host_backend.h"

namespace Hyperelastic
{
  namespace
  {
    // Three muparser expressions in x, y, z separated by ';'.
    std::unique_ptr<FunctionParser<3>>
    make_vector_function(const std::string &expressions,
                         const std::string &entry)
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

    std::string
    format_scientific(const double value, const unsigned int digits = 2)
    {
      std::ostringstream out;
      out << std::scientific << std::setprecision(digits) << value;
      return out.str();
    }
  } // namespace



  HyperelasticSolid::HyperelasticSolid(const Parameters &parameters,
                                       std::ostream     &out)
    : parameters(parameters)
    , pcout(out)
    , timer(pcout, TimerOutput::never, TimerOutput::wall_times)
    , dynamic(parameters.time.mode == "dynamic")
  {}



  void
  HyperelasticSolid::make_grid()
  {
    const auto &g = parameters.geometry;
    if (g.mesh_file.empty())
      {
        const Point<dim> upper(g.size[0], g.size[1], g.size[2]);
        if (g.cell_type == "hexahedra")
          GridGenerator::subdivided_hyper_rectangle(triangulation,
                                                    g.subdivisions,
                                                    Point<dim>(),
                                                    upper);
        else
          GridGenerator::subdivided_hyper_rectangle_with_simplices(
            triangulation,
            g.subdivisions,
            Point<dim>(),
            upper);
        // deal.II 9.4 cannot colorize the simplex version: number the faces
        // x = 0, x = Lx, y = 0, y = Ly, z = 0, z = Lz as 0 to 5 here.
        for (const auto &cell : triangulation.active_cell_iterators())
          for (const auto &face : cell->face_iterators())
            if (face->at_boundary())
              {
                const Point<dim> c = face->center();
                for (unsigned int d = 0; d < dim; ++d)
                  {
                    const double tolerance = 1e-8 * g.size[d];
                    if (std::abs(c[d]) < tolerance)
                      face->set_boundary_id(2 * d);
                    else if (std::abs(c[d] - g.size[d]) < tolerance)
                      face->set_boundary_id(2 * d + 1);
                  }
              }
      }
    else
      {
        GPUAssembly::read_mesh(g.mesh_file, triangulation);
        if (g.scale != 1.)
          GridTools::scale(g.scale, triangulation);
      }
    pcout << "Mesh: " << triangulation.n_active_cells() << ' '
          << (triangulation.all_reference_cells_are_simplex() ? "tetrahedra" :
                                                                "hexahedra")
          << ", " << triangulation.n_vertices() << " vertices"
          << (g.mesh_file.empty() ? " (built-in bar)" :
                                    " (from " + g.mesh_file + ")")
          << std::endl;
  }



  void
  HyperelasticSolid::setup_system()
  {
    const bool simplex = triangulation.all_reference_cells_are_simplex();
    AssertThrow(simplex || triangulation.all_reference_cells_are_hyper_cube(),
                ExcMessage("The mesh mixes cell types; the app runs on "
                           "tetrahedra or on hexahedra."));
    const bool compressed = parameters.execution.compressed_supplemental_data;
    AssertThrow(!compressed || simplex,
                ExcMessage("'Compressed supplemental data' needs a "
                           "tetrahedral mesh (it compresses the inverse "
                           "edge matrix of linear tetrahedra)."));

    Quadrature<dim> mass_quadrature;
    if (simplex)
      {
        fe         = std::make_unique<FESystem<dim>>(FE_SimplexP<dim>(1), dim);
        mapping    = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
        quadrature = std::make_unique<QGaussSimplex<dim>>(1);
        // Vertex (Lobatto) rule on the reference tetrahedron, volume 1/6.
        const FE_SimplexP<dim> linear(1);
        mass_quadrature = Quadrature<dim>(linear.get_unit_support_points(),
                                          std::vector<double>(4, 1. / 24.));
      }
    else
      {
        fe              = std::make_unique<FESystem<dim>>(FE_Q<dim>(1), dim);
        mapping         = std::make_unique<MappingQ<dim>>(1);
        quadrature      = std::make_unique<QGauss<dim>>(2);
        mass_quadrature = QGaussLobatto<dim>(2);
      }
    dof_handler.reinit(triangulation);
    dof_handler.distribute_dofs(*fe);
    DoFRenumbering::Cuthill_McKee(dof_handler);

    // Fixed node sets: boundary ids and a box.
    constraints.clear();
    std::vector<unsigned int> missing_ids;
    const auto                boundary_ids = triangulation.get_boundary_ids();
    for (const unsigned int id : parameters.boundary.fixed_boundary_ids)
      {
        if (std::find(boundary_ids.begin(), boundary_ids.end(), id) ==
            boundary_ids.end())
          missing_ids.push_back(id);
        VectorTools::interpolate_boundary_values(*mapping,
                                                 dof_handler,
                                                 id,
                                                 Functions::ZeroFunction<dim>(
                                                   dim),
                                                 constraints);
      }
    AssertThrow(missing_ids.empty(),
                ExcMessage("'Fixed boundary ids' names boundary id " +
                           std::to_string(missing_ids.front()) +
                           ", which the mesh does not have."));
    const double tolerance = 1e-10 * GridTools::diameter(triangulation);
    if (!parameters.boundary.fixed_region.empty)
      for (const auto &cell : dof_handler.active_cell_iterators())
        for (const unsigned int v : cell->vertex_indices())
          if (parameters.boundary.fixed_region.contains(cell->vertex(v),
                                                        tolerance))
            for (unsigned int c = 0; c < dim; ++c)
              {
                const auto dof = cell->vertex_dof_index(v, c);
                if (!constraints.is_constrained(dof))
                  constraints.add_line(dof);
              }
    constraints.close();

    GPUAssembly::DoFHandlerAdapter<dim>::AdditionalData adapter_data;
    if (simplex)
      adapter_data.supplemental_format =
        compressed ?
          GPUAssembly::SupplementalDataFormat::compressed_edge_matrix :
          GPUAssembly::SupplementalDataFormat::inverse_edge_matrix;
    adapter.reinit(*mapping,
                   dof_handler,
                   *quadrature,
                   constraints,
                   adapter_data);
    const GPUAssembly::MeshArrays &a = adapter.get_arrays();

    // Lumped mass: the mass matrix with the vertex quadrature is diagonal.
    backend_data.lumped_mass.assign(a.n_dofs, 0.);
    FEValues<dim>                        fe_values(*mapping,
                            *fe,
                            mass_quadrature,
                            update_values | update_JxW_values);
    std::vector<types::global_dof_index> dofs(fe->n_dofs_per_cell());
    for (const auto &cell : dof_handler.active_cell_iterators())
      {
        fe_values.reinit(cell);
        cell->get_dof_indices(dofs);
        for (unsigned int i = 0; i < dofs.size(); ++i)
          for (unsigned int q = 0; q < mass_quadrature.size(); ++q)
            backend_data.lumped_mass[dofs[i]] += parameters.material.density *
                                                 fe_values.shape_value(i, q) *
                                                 fe_values.JxW(q);
      }

    // The scripted load: shared equally by the nodes of the load region.
    backend_data.load_pattern.assign(a.n_dofs, 0.);
    std::vector<unsigned int> loaded_nodes;
    for (unsigned int n = 0; n < a.n_nodes; ++n)
      if (parameters.boundary.load_region.contains(
            Point<dim>(a.nodal_coordinates[n * dim],
                       a.nodal_coordinates[n * dim + 1],
                       a.nodal_coordinates[n * dim + 2]),
            tolerance))
        loaded_nodes.push_back(n);
    const auto &load     = parameters.boundary.load;
    const bool  has_load = load[0] != 0 || load[1] != 0 || load[2] != 0;
    AssertThrow(parameters.boundary.load_region.empty || !has_load ||
                  !loaded_nodes.empty(),
                ExcMessage("The 'Load region' box contains no node of the "
                           "mesh, so the load would be lost. Check the "
                           "box against the mesh's extent."));
    for (const unsigned int n : loaded_nodes)
      for (unsigned int c = 0; c < dim; ++c)
        backend_data.load_pattern[a.node_dofs[n * dim + c]] =
          load[c] / loaded_nodes.size();
    load_function = [&]() {
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
    }();

    backend_data.diagonal_index.resize(a.n_dofs);
    for (unsigned int row = 0; row < a.n_dofs; ++row)
      {
        const auto begin = a.column_indices.begin() + a.row_offsets[row];
        const auto end   = a.column_indices.begin() + a.row_offsets[row + 1];
        const auto it    = std::lower_bound(begin, end, int(row));
        AssertThrow(it != end && *it == int(row),
                    ExcInternalError("The sparsity pattern has no diagonal "
                                     "entry in a row."));
        backend_data.diagonal_index[row] = it - a.column_indices.begin();
      }

    pcout << "Unknowns: " << a.n_dofs << ", nonzeros: " << a.n_nonzeros()
          << ", fixed DoFs: " << constraints.n_constraints()
          << ", loaded nodes: " << loaded_nodes.size()
          << ", S(e): " << a.n_supplemental << " values per element"
          << std::endl;
  }



  void
  HyperelasticSolid::setup_backend()
  {
    const auto &e       = parameters.execution;
    backend_data.arrays = &adapter.get_arrays();
    backend_data.mu     = parameters.material.mu;
    backend_data.lambda = parameters.material.lambda;
    for (unsigned int d = 0; d < dim; ++d)
      backend_data.body_force[d] = parameters.material.body_force[d];
    backend_data.nodal_data_are_positions = e.compressed_supplemental_data;
    backend_data.assembly_method          = e.assembly_method;
    backend_data.symmetric_element_data   = e.symmetric_element_data;
    backend_data.step_graph               = e.step_graph;

    const bool has_gpu = GPUAssembly::n_cuda_devices() > 0;
    AssertThrow(e.device != "gpu" || has_gpu,
                ExcMessage("'Device' is gpu, but no CUDA device was found. "
                           "Set it to host or auto to run on the CPU."));
    if (e.device == "host" || (e.device == "auto" && !has_gpu))
      {
        if (e.device == "auto")
          pcout << "No CUDA device found: every stage runs on the host."
                << std::endl;
        backend = make_host_backend(backend_data);
      }
    else if (e.precision == "float")
      backend = make_device_backend<float>(backend_data);
    else
      backend = make_device_backend<double>(backend_data);
    pcout << "Execution: " << backend->description() << "; "
          << backend->memory_consumption() / (1024 * 1024) << " MiB"
          << std::endl;
  }



  void
  HyperelasticSolid::set_initial_state()
  {
    const GPUAssembly::MeshArrays &a = adapter.get_arrays();
    const auto u0 = make_vector_function(parameters.initial.displacement,
                                         "Initial conditions/Displacement");
    const auto v0 = make_vector_function(parameters.initial.velocity,
                                         "Initial conditions/Velocity");
    std::vector<double> u(a.n_dofs, 0.), p(a.n_dofs, 0.);
    for (unsigned int n = 0; n < a.n_nodes; ++n)
      {
        const Point<dim> X(a.nodal_coordinates[n * dim],
                           a.nodal_coordinates[n * dim + 1],
                           a.nodal_coordinates[n * dim + 2]);
        for (unsigned int c = 0; c < dim; ++c)
          {
            const auto dof = a.node_dofs[n * dim + c];
            if (a.dof_is_constrained[dof])
              continue;
            u[dof] = u0->value(X, c);
            p[dof] = backend_data.lumped_mass[dof] * v0->value(X, c);
          }
      }
    const auto [J_min, where] = find_worst_element(u);
    AssertThrow(J_min > 0,
                ExcMessage("The initial displacement inverts " + where +
                           " (J = " + std::to_string(J_min) + ")."));
    backend->set_state(u, p);
  }



  void
  HyperelasticSolid::setup()
  {
    {
      TimerOutput::Scope scope(timer, "Set-up (mesh, adapter, plan)");
      make_grid();
      setup_system();
      setup_backend();
    }
    TimerOutput::Scope scope(timer, "Transfers");
    set_initial_state();
  }



  StepLoads
  HyperelasticSolid::loads_at(const double t_new) const
  {
    StepLoads loads;
    if (dynamic)
      {
        loads.dt = t_new - time;
        // Eq. (4) evaluates the forces at the midpoint in time as well.
        const double t_mid = 0.5 * (time + t_new);
        load_function->set_time(t_mid);
        loads.load_amplitude    = load_function->value(Point<1>());
        loads.body_force_factor = 1.;
      }
    else
      {
        load_function->set_time(t_new);
        loads.load_amplitude = load_function->value(Point<1>());
        loads.body_force_factor =
          std::min(1., t_new / parameters.time.end_time);
      }
    return loads;
  }



  StepReport
  HyperelasticSolid::newton_loop(const StepLoads &loads)
  {
    const auto &solver = parameters.solver;
    {
      TimerOutput::Scope scope(timer, "Update");
      backend->predict(loads);
    }

    StepReport report;
    for (unsigned int it = 0;; ++it)
      {
        double residual;
        {
          TimerOutput::Scope scope(timer, "Assembly");
          residual = backend->assemble_residual(loads);
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
          TimerOutput::Scope scope(timer, "Solve (Jacobi-CG)");
          cg = backend->solve_and_update(solver.cg_tolerance,
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
      backend->finish_step(loads);
    }
    report.status = StepStatus::converged;
    return report;
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

    const std::vector<double> &residuals = report.residuals;
    const unsigned int         it        = residuals.size() - 1;
    switch (report.status)
      {
        case StepStatus::converged:
          break;
        case StepStatus::not_finite:
          {
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
            const auto [J_min, where] = find_worst_element(u);
            stop("in step " + std::to_string(step_number + 1) +
                 " (t = " + std::to_string(t_new) + "), Newton iteration " +
                 std::to_string(it) + ": " +
                 (J_min <= 0 ?
                    where + " is inverted (J = " + std::to_string(J_min) + ")" :
                    "the residual is not finite (smallest J: " +
                      std::to_string(J_min) + " at " + where + ")") +
                 ". Try a smaller time step or load increment.");
          }
        case StepStatus::diverged:
          {
            std::ostringstream history;
            for (const double r : residuals)
              history << ' ' << format_scientific(r);
            stop("Newton's method diverged in step " +
                 std::to_string(step_number + 1) + " (t = " +
                 std::to_string(t_new) + ") after " + std::to_string(it) +
                 " iterations; residuals:" + history.str() +
                 ". Try a smaller time step, more Newton iterations or a "
                 "looser tolerance.");
          }
        case StepStatus::cg_breakdown:
          stop("CG broke down in step " + std::to_string(step_number + 1) +
               " (the tangent is not positive definite: an element is close "
               "to inversion or the body is unstable).");
      }

    time = t_new;
    ++step_number;
    const unsigned int n_newton = it;
    const unsigned int n_cg     = report.n_cg_iterations;
    stats.n_steps += 1;
    stats.n_newton_iterations += n_newton;
    stats.n_cg_iterations += n_cg;
    stats.max_newton_iterations =
      std::max(stats.max_newton_iterations, n_newton);
    stats.last_newton_residual = residuals.back();

    const unsigned int interval = parameters.output.screen_interval;
    if (interval > 0 && step_number % interval == 0)
      {
        pcout << "Step " << std::setw(5) << step_number
              << "  t = " << std::setw(9) << std::fixed << std::setprecision(4)
              << time << "  Newton " << n_newton << "  CG " << std::setw(4)
              << n_cg << "  |r|:";
        for (const double r : residuals)
          pcout << ' ' << format_scientific(r);
        pcout << std::endl;
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



  std::pair<std::vector<double>, std::vector<double>>
  HyperelasticSolid::state() const
  {
    std::pair<std::vector<double>, std::vector<double>> result;
    backend->get_state(result.first, result.second);
    return result;
  }



  double
  HyperelasticSolid::kinetic_energy(const std::vector<double> &p) const
  {
    double energy = 0;
    for (unsigned int i = 0; i < p.size(); ++i)
      energy += 0.5 * p[i] * p[i] / backend_data.lumped_mass[i];
    return energy;
  }



  Tensor<1, HyperelasticSolid::dim>
  HyperelasticSolid::linear_momentum(const std::vector<double> &p) const
  {
    const GPUAssembly::MeshArrays &a = adapter.get_arrays();
    Tensor<1, dim>                 momentum;
    for (unsigned int n = 0; n < a.n_nodes; ++n)
      for (unsigned int c = 0; c < dim; ++c)
        momentum[c] += p[a.node_dofs[n * dim + c]];
    return momentum;
  }



  double
  HyperelasticSolid::strain_energy(const std::vector<double> &u_values) const
  {
    const Vector<double>             u(u_values.begin(), u_values.end());
    FEValues<dim>                    fe_values(*mapping,
                            *fe,
                            *quadrature,
                            update_gradients | update_JxW_values);
    const FEValuesExtractors::Vector displacement(0);
    std::vector<Tensor<2, dim>>      grad_u(quadrature->size());
    const double                     mu     = parameters.material.mu;
    const double                     lambda = parameters.material.lambda;
    double                           energy = 0;
    for (const auto &cell : dof_handler.active_cell_iterators())
      {
        fe_values.reinit(cell);
        fe_values[displacement].get_function_gradients(u, grad_u);
        for (unsigned int q = 0; q < quadrature->size(); ++q)
          {
            const Tensor<2, dim> F = unit_symmetric_tensor<dim>() + grad_u[q];
            const double         J = determinant(F);
            const double         log_J = std::log(J);
            energy += (0.5 * mu * (scalar_product(F, F) - dim) +
                       0.5 * lambda * log_J * log_J - mu * log_J) *
                      fe_values.JxW(q);
          }
      }
    return energy;
  }



  void
  HyperelasticSolid::compute_cell_fields(const std::vector<double> &u_values,
                                         Vector<double>            &J_cells,
                                         Vector<double> &von_mises) const
  {
    const Vector<double> u(u_values.begin(), u_values.end());
    J_cells.reinit(triangulation.n_active_cells());
    von_mises.reinit(triangulation.n_active_cells());
    FEValues<dim>                    fe_values(*mapping,
                            *fe,
                            *quadrature,
                            update_gradients | update_JxW_values);
    const FEValuesExtractors::Vector displacement(0);
    std::vector<Tensor<2, dim>>      grad_u(quadrature->size());
    const double                     mu     = parameters.material.mu;
    const double                     lambda = parameters.material.lambda;
    for (const auto &cell : dof_handler.active_cell_iterators())
      {
        fe_values.reinit(cell);
        fe_values[displacement].get_function_gradients(u, grad_u);
        double volume = 0, J_sum = 0, mises_sum = 0;
        for (unsigned int q = 0; q < quadrature->size(); ++q)
          {
            const Tensor<2, dim> F = unit_symmetric_tensor<dim>() + grad_u[q];
            const double         J = determinant(F);
            // Cauchy stress sigma = P F^T / J
            //                     = (mu F F^T + (lambda ln J - mu) I) / J.
            const Tensor<2, dim> sigma =
              (mu * F * transpose(F) +
               (lambda * std::log(J) - mu) * unit_symmetric_tensor<dim>()) /
              J;
            const Tensor<2, dim> s =
              sigma - trace(sigma) / dim * unit_symmetric_tensor<dim>();
            const double JxW = fe_values.JxW(q);
            volume += JxW;
            J_sum += J * JxW;
            mises_sum += std::sqrt(1.5 * scalar_product(s, s)) * JxW;
          }
        J_cells[cell->active_cell_index()]   = J_sum / volume;
        von_mises[cell->active_cell_index()] = mises_sum / volume;
      }
  }



  std::pair<double, std::string>
  HyperelasticSolid::find_worst_element(
    const std::vector<double> &u_values) const
  {
    const Vector<double> u(u_values.begin(), u_values.end());
    FEValues<dim> fe_values(*mapping, *fe, *quadrature, update_gradients);
    const FEValuesExtractors::Vector displacement(0);
    std::vector<Tensor<2, dim>>      grad_u(quadrature->size());
    double                           J_min = std::numeric_limits<double>::max();
    std::string                      where;
    for (const auto &cell : dof_handler.active_cell_iterators())
      {
        fe_values.reinit(cell);
        fe_values[displacement].get_function_gradients(u, grad_u);
        for (unsigned int q = 0; q < quadrature->size(); ++q)
          {
            const double J =
              determinant(unit_symmetric_tensor<dim>() + grad_u[q]);
            if (J < J_min || !std::isfinite(J))
              {
                J_min = J;
                std::ostringstream text;
                text << "element " << cell->active_cell_index()
                     << " (reference centre " << cell->center() << ')';
                where = text.str();
              }
          }
      }
    return {J_min, where};
  }



  void
  HyperelasticSolid::write_output(const std::vector<double> &u_values,
                                  const std::vector<double> &p_values,
                                  const unsigned int         number)
  {
    TimerOutput::Scope scope(timer, "Output");
    const auto        &o = parameters.output;
    std::filesystem::create_directories(o.directory);

    const Vector<double> u(u_values.begin(), u_values.end());
    Vector<double>       v(u.size());
    for (unsigned int i = 0; i < v.size(); ++i)
      v[i] = p_values[i] / backend_data.lumped_mass[i];
    Vector<double> J, von_mises;
    compute_cell_fields(u_values, J, von_mises);

    DataOut<dim> data_out;
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
    data_out.add_data_vector(J, "J", DataOut<dim>::type_cell_data);
    data_out.add_data_vector(von_mises,
                             "von_Mises_stress",
                             DataOut<dim>::type_cell_data);
    data_out.build_patches(*mapping);

    std::ostringstream name;
    name << o.base_name << '-' << std::setw(5) << std::setfill('0') << number
         << ".vtu";
    const std::string path = o.directory + "/" + name.str();
    std::ofstream     file(path);
    AssertThrow(file, ExcMessage("Cannot write the output file " + path));
    data_out.write_vtu(file);
    stats.output_files.push_back(path);

    pvd_records.emplace_back(time, name.str());
    std::ofstream pvd(o.directory + "/" + o.base_name + ".pvd");
    AssertThrow(pvd,
                ExcMessage("Cannot write the .pvd file in " + o.directory));
    DataOutBase::write_pvd_record(pvd, pvd_records);
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
    pcout << "Wrote the last good state (step " << step_number
          << ", t = " << time << ") to " << stats.output_files.back() << '.'
          << std::endl;
    AssertThrow(false, ExcSimulationStopped(reason));
    __builtin_unreachable();
  }



  std::string
  HyperelasticSolid::backend_description() const
  {
    return backend->description();
  }



  void
  HyperelasticSolid::run()
  {
    pcout << GPUAssembly::describe_execution_path() << std::endl;
    setup();

    const auto &o      = parameters.output;
    const auto  output = [&]() {
      std::vector<double> u, p;
      {
        TimerOutput::Scope scope(timer, "Transfers");
        backend->get_state(u, p);
      }
      write_output(u, p, step_number);
      const Tensor<1, dim> momentum = linear_momentum(p);
      pcout << "  output " << stats.output_files.back() << ": max |u| = "
            << format_scientific(
                 std::abs(*std::max_element(u.begin(),
                                            u.end(),
                                            [](const double a, const double b) {
                                              return std::abs(a) < std::abs(b);
                                            })),
                 3)
            << ", kinetic energy " << format_scientific(kinetic_energy(p), 4)
            << ", strain energy " << format_scientific(strain_energy(u), 4)
            << ", momentum (" << format_scientific(momentum[0]) << ", "
            << format_scientific(momentum[1]) << ", "
            << format_scientific(momentum[2]) << ')' << std::endl;
    };
    if (o.output_interval > 0)
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
        if (o.output_interval > 0 &&
            (step_number % o.output_interval == 0 || last))
          {
            const auto before = std::chrono::steady_clock::now();
            output();
            output_time += std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - before)
                             .count();
          }
      }
    stats.stepping_wall_time =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count() -
      output_time;

    pcout << "\n"
          << stats.n_steps << " steps in " << std::fixed << std::setprecision(3)
          << stats.stepping_wall_time
          << " s without output: " << std::setprecision(1)
          << stats.n_steps / std::max(stats.stepping_wall_time, 1e-300)
          << " steps/s; Newton iterations " << stats.n_newton_iterations
          << " (at most " << stats.max_newton_iterations << " per step), CG "
          << "iterations " << stats.n_cg_iterations << "." << std::endl;
    if (o.output_interval > 0)
      pcout << "Open " << o.directory << "/" << o.base_name
            << ".pvd in ParaView." << std::endl;
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
} // namespace Hyperelastic
