// SPDX-License-Identifier: LGPL-2.1-or-later
// The app's explicit integrator: Total Lagrangian Explicit Dynamics through
// the plugin's TLED steppers, with the app's meshes, material and boundary
// conditions, VTU output and a force/displacement trace.

#include "explicit_solid.h"

#include <deal.II/base/exceptions.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>

#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/grid/mesh_input.h>
#include <gpu_assembly/tled/tled_element.h>
#include <gpu_assembly/tled/tled_mesh.h>
#include <gpu_assembly/tled/tled_stepper.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <tuple>
#include <type_traits>

#include "../common/app_utilities.h"
#include "bar_mesh.h"
#include "explicit_surface_loads.h"
#include "solid_common.h"
#include "surface_load_setup.h"

namespace Hyperelastic
{
  namespace TLED = GPUAssembly::TLED;

  namespace
  {
    template <typename Number>
    std::unique_ptr<TLED::Stepper<Number>>
    make_tled_stepper(const bool device, const ExplicitDynamics &e)
    {
      if (device)
        return std::make_unique<TLED::DeviceStepper<Number>>(
          e.nodal_sum == "atomic" ? TLED::NodalSum::atomic :
          e.nodal_sum == "fused"  ? TLED::NodalSum::fused :
                                    TLED::NodalSum::plan,
          e.steps_per_graph);
      return std::make_unique<TLED::HostStepper<Number>>();
    }

    std::string
    scientific(const double value, const int digits = 4)
    {
      return format_scientific(value, digits);
    }
  } // namespace



  ExplicitSolid::ExplicitSolid(const Parameters &parameters, std::ostream &out)
    : parameters(parameters)
    , out(out)
  {}



  ExplicitSolid::~ExplicitSolid() = default;



  void
  ExplicitSolid::make_grid()
  {
    // TLED's one-point elements need a conforming mesh: hanging nodes of a
    // local refinement would not be held to their neighbours.
    AssertThrow(parameters.geometry.local_refinement_steps == 0,
                ExcMessage(
                  "'Geometry/Local refinement steps' = " +
                  std::to_string(parameters.geometry.local_refinement_steps) +
                  " is not used by 'Time/Time integration' = "
                  "explicit, whose elements need a mesh without "
                  "hanging nodes. Set it to 0, or use the implicit "
                  "integrator."));
    if (const std::string dropped =
          make_mesh(parameters.geometry, triangulation);
        !dropped.empty())
      out << dropped << std::endl;
  }



  void
  ExplicitSolid::make_boundary_conditions()
  {
    const auto        &e  = parameters.explicit_dynamics;
    const auto        &b  = parameters.boundary;
    const unsigned int n  = model_double.n_nodes;
    auto              &bc = boundary_conditions;
    bc.prescribed_components.assign(n, 0);
    bc.prescribed_values.assign(3 * std::size_t(n), 0.);
    bc.external_forces.assign(3 * std::size_t(n), 0.);
    bc.ramp_time           = e.ramp_time;
    const double tolerance = 1e-10 * mesh_diameter(triangulation);
    const auto   vertex    = [&](const unsigned int v) {
      return Point<dim>(model_double.coordinates[3 * v],
                        model_double.coordinates[3 * v + 1],
                        model_double.coordinates[3 * v + 2]);
    };

    const auto boundary_ids = triangulation.get_boundary_ids();
    const auto check_id = [&](const unsigned int id, const std::string &entry) {
      AssertThrow(std::find(boundary_ids.begin(), boundary_ids.end(), id) !=
                    boundary_ids.end(),
                  ExcMessage("'" + entry + "' names boundary id " +
                             std::to_string(id) +
                             ", which the mesh does not have."));
    };

    // Rollers: the face normal's component, found from the face's vertices
    // (which share that coordinate).
    for (const unsigned int id : e.roller_boundary_ids)
      check_id(id, "Explicit dynamics/Roller boundary ids");
    for (const auto &cell : triangulation.active_cell_iterators())
      for (const auto &face : cell->face_iterators())
        if (face->at_boundary() &&
            std::find(e.roller_boundary_ids.begin(),
                      e.roller_boundary_ids.end(),
                      face->boundary_id()) != e.roller_boundary_ids.end())
          {
            int normal = -1;
            for (unsigned int d = 0; d < dim && normal < 0; ++d)
              {
                bool flat = true;
                for (const unsigned int v : face->vertex_indices())
                  flat = flat && std::abs(face->vertex(v)[d] -
                                          face->vertex(0)[d]) <= tolerance;
                if (flat)
                  normal = d;
              }
            AssertThrow(normal >= 0,
                        ExcMessage(
                          "A face with roller boundary id " +
                          std::to_string(face->boundary_id()) + " at " +
                          Utilities::to_string(face->center()[0]) + ", " +
                          Utilities::to_string(face->center()[1]) + ", " +
                          Utilities::to_string(face->center()[2]) +
                          " is not normal to a coordinate axis."));
            for (const unsigned int v : face->vertex_indices())
              bc.prescribed_components[face->vertex_index(v)] |= 1u << normal;
          }

    // 'Boundary conditions/Rollers' and 'Roller regions': the same
    // prescribed components, at zero, on any components.
    for (const RollerCondition &roller : b.rollers)
      {
        unsigned int mask = 0;
        for (unsigned int d = 0; d < dim; ++d)
          mask |= roller.components[d] ? 1u << d : 0u;
        unsigned int n_selected = 0;
        if (roller.where.by_box)
          {
            for (unsigned int v = 0; v < n; ++v)
              if (roller.where.box.contains(vertex(v), tolerance))
                {
                  bc.prescribed_components[v] |= mask;
                  ++n_selected;
                }
          }
        else
          {
            check_id(roller.where.boundary_id, "Boundary conditions/Rollers");
            for (const auto &cell : triangulation.active_cell_iterators())
              for (const auto &face : cell->face_iterators())
                if (face->at_boundary() &&
                    face->boundary_id() == roller.where.boundary_id)
                  for (const unsigned int v : face->vertex_indices())
                    {
                      bc.prescribed_components[face->vertex_index(v)] |= mask;
                      ++n_selected;
                    }
          }
        AssertThrow(n_selected > 0,
                    ExcMessage("The " + roller.entry + " item '" +
                               roller.where.text +
                               ": ...' selects no node of the mesh."));
      }
    // TLED drives displacements along its smooth ramp, not along a
    // function of time.
    AssertThrow(b.prescribed.empty(),
                ExcMessage(
                  "'Boundary conditions/Prescribed displacements' and "
                  "'Prescribed displacement regions' are for 'Time/Time "
                  "integration' = implicit. The explicit integrator moves "
                  "the nodes of 'Explicit dynamics/Displaced region' by "
                  "'Displacement' in the 'Displaced components' along the "
                  "smooth ramp of 'Ramp time': set those instead."));

    const Box displaced =
      Box::parse(e.displaced_region, "Explicit dynamics/Displaced region");
    unsigned int displaced_mask = 0;
    for (const auto &c : e.displaced_components)
      displaced_mask |= 1u << (c[0] - 'x');
    displaced_nodes.clear();
    for (unsigned int v = 0; v < n; ++v)
      if (displaced.contains(vertex(v), tolerance))
        {
          displaced_nodes.push_back(v);
          bc.prescribed_components[v] |= displaced_mask;
          for (unsigned int d = 0; d < dim; ++d)
            if (displaced_mask & (1u << d))
              bc.prescribed_values[3 * v + d] = e.displacement[d];
        }
    AssertThrow(displaced.empty || !displaced_nodes.empty(),
                ExcMessage("The 'Explicit dynamics/Displaced region' box "
                           "contains no node of the mesh."));
    AssertThrow(!displaced.empty ||
                  (e.displacement[0] == 0 && e.displacement[1] == 0 &&
                   e.displacement[2] == 0),
                ExcMessage("'Explicit dynamics/Displacement' is not zero, but "
                           "the 'Displaced region' is empty, so nothing would "
                           "be displaced. Give the box of the displaced "
                           "nodes, or set 'Displacement' to 0, 0, 0."));

    // Fixed nodes last: they win over rollers and displacements.
    std::vector<bool> fixed(n, false);
    for (const unsigned int id : b.fixed_boundary_ids)
      check_id(id, "Boundary conditions/Fixed boundary ids");
    for (const auto &cell : triangulation.active_cell_iterators())
      for (const auto &face : cell->face_iterators())
        if (face->at_boundary() &&
            std::find(b.fixed_boundary_ids.begin(),
                      b.fixed_boundary_ids.end(),
                      face->boundary_id()) != b.fixed_boundary_ids.end())
          for (const unsigned int v : face->vertex_indices())
            {
              const unsigned int k        = face->vertex_index(v);
              fixed[k]                    = true;
              bc.prescribed_components[k] = 7;
              for (unsigned int d = 0; d < dim; ++d)
                bc.prescribed_values[3 * k + d] = 0;
            }
    for (unsigned int v = 0; v < n; ++v)
      if (b.fixed_region.contains(vertex(v), tolerance))
        {
          fixed[v]                    = true;
          bc.prescribed_components[v] = 7;
          for (unsigned int d = 0; d < dim; ++d)
            bc.prescribed_values[3 * v + d] = 0;
        }

    // The load, shared equally by the load region's nodes as in the
    // implicit path, and the body force per unit reference volume.
    std::vector<unsigned int> loaded;
    for (unsigned int v = 0; v < n; ++v)
      if (b.load_region.contains(vertex(v), tolerance))
        loaded.push_back(v);
    const bool has_load = check_load_region(b, loaded.size());
    // What the implicit integrator refuses is refused here too: everything
    // held (a .dat mesh's faces all have boundary id 0), or the load on
    // held nodes only.
    {
      FixedDoFCounts counts;
      count_boundary_faces(triangulation, b, counts);
      counts.n_dofs         = 3 * std::size_t(n);
      counts.n_constrained  = 3 * std::count(fixed.begin(), fixed.end(), true);
      counts.n_loaded_nodes = loaded.size();
      for (const unsigned int v : loaded)
        {
          bool free = false;
          for (unsigned int d = 0; d < dim; ++d)
            free = free || (b.load[d] != 0 &&
                            (bc.prescribed_components[v] & (1u << d)) == 0);
          counts.n_free_loaded_nodes += free;
        }
      check_fixed_dofs(parameters, counts, has_load, ConditionalOStream(out));
    }
    for (const unsigned int v : loaded)
      for (unsigned int d = 0; d < dim; ++d)
        bc.external_forces[3 * v + d] += b.load[d] / loaded.size();
    load_total = loaded.empty() ? std::vector<double>{0, 0, 0} : b.load;
    for (unsigned int v = 0; v < n; ++v)
      for (unsigned int d = 0; d < dim; ++d)
        bc.external_forces[3 * v + d] += parameters.material.body_force[d] *
                                         model_double.lumped_mass[v] /
                                         parameters.material.density;

    // The node nearest the centre of the bounding box.
    const auto box    = GridTools::compute_bounding_box(triangulation);
    const auto centre = box.center();
    double     best   = std::numeric_limits<double>::max();
    for (unsigned int v = 0; v < n; ++v)
      if (vertex(v).distance(centre) < best)
        {
          best        = vertex(v).distance(centre);
          centre_node = v;
        }
  }



  void
  ExplicitSolid::setup()
  {
    const auto &e = parameters.explicit_dynamics;
    make_grid();
    const TLED::Mesh mesh = TLED::make_mesh(triangulation);
    AssertThrow(mesh.element_type == TLED::ElementType::hexahedron ||
                  parameters.changed_entries.count(
                    "Explicit dynamics/Hourglass coefficient") == 0,
                ExcMessage("'Explicit dynamics/Hourglass coefficient' = " +
                           AppUtilities::significant(e.hourglass_coefficient) +
                           " is not used: the mesh is made of tetrahedra, "
                           "which have no hourglass modes. Remove the entry, "
                           "or use hexahedra."));
    TLED::Material material;
    material.mu                    = parameters.material.mu;
    material.lambda                = parameters.material.lambda;
    material.density               = parameters.material.density;
    material.hourglass_coefficient = e.hourglass_coefficient;
    model_double                   = TLED::make_model<double>(mesh, material);
    dt                             = e.time_step > 0 ? e.time_step :
                                                       e.safety_factor * model_double.critical_time_step;
    make_boundary_conditions();
    make_surface_loads();

    out << "Mesh: " << mesh.n_elements() << ' '
        << (mesh.element_type == TLED::ElementType::hexahedron ?
              "hexahedra (one point, hourglass control)" :
              "tetrahedra")
        << ", " << mesh.n_nodes() << " nodes; dilatational wave speed "
        << scientific(material.wave_speed(), 4) << std::endl;
    out << "Stable time step " << scientific(model_double.critical_time_step, 6)
        << " (element " << model_double.critical_element << "); time step "
        << scientific(dt, 6) << std::endl;

    TLED::Integration integration;
    integration.time_step = dt;
    integration.damping   = e.damping;

    const auto &x       = parameters.execution;
    const bool  device  = use_gpu(x, out, "the steps run on the host");
    const auto  install = [&](auto new_stepper, const auto &model) {
      using Number = std::decay_t<decltype(model.mu)>;
      if (surface_loads.has_traction() || surface_loads.has_pressure())
        {
          const SurfaceLoadSchedule schedule = surface_schedule();
          if constexpr (std::is_same_v<Number, double>)
            new_stepper->set_step_forces(
              device ? device_surface_step_forces<double>(surface_loads,
                                                          model.node_stride,
                                                          schedule,
                                                          dt,
                                                          e.steps_per_graph) :
                       host_surface_step_forces(surface_loads,
                                                model.node_stride,
                                                schedule,
                                                dt));
          else
            new_stepper->set_step_forces(
              device_surface_step_forces<Number>(surface_loads,
                                                 model.node_stride,
                                                 schedule,
                                                 dt,
                                                 e.steps_per_graph));
        }
      new_stepper->reinit(model, boundary_conditions, integration);
      non_finite_node = [s = new_stepper.get()]() {
        return s->non_finite_node();
      };
      stepper = std::move(new_stepper);
    };
    const bool use_float = device && x.precision == "float";
    if (use_float)
      install(make_tled_stepper<float>(device, e),
              TLED::make_model<float>(mesh, material));
    else
      install(make_tled_stepper<double>(device, e), model_double);
    execution = std::string(device ? "GPU" : "host") + " TLED stepper, " +
                (use_float ? "float" : "double") +
                (device ? ", nodal sum: " + e.nodal_sum + ", " +
                            std::to_string(e.steps_per_graph) +
                            " steps per graph launch" :
                          std::string(", all cores"));
    out << "Execution: " << execution << std::endl;
  }



  void
  ExplicitSolid::make_surface_loads()
  {
    const Parameters::SurfaceLoads &s = parameters.surface_loads;
    surface_amplitudes = std::make_shared<SurfaceLoadAmplitudes>(s);
    surface_loads      = SurfaceLoadData();
    if (!s.has_traction() && !s.has_pressure())
      return;
    // The faces and their integrals of the implicit integrator, on the
    // linear elements of the same mesh, whose vertices are TLED's nodes.
    const Discretization discretization =
      make_discretization(triangulation.all_reference_cells_are_simplex());
    DoFHandler<dim> dof_handler(triangulation);
    dof_handler.distribute_dofs(*discretization.fe);
    const auto [traction_faces, pressure_faces] =
      select_surface_load_faces(dof_handler,
                                s,
                                1e-10 * mesh_diameter(triangulation));
    surface_loads = make_vertex_surface_load_data(
      *discretization.mapping,
      dof_handler,
      traction_faces,
      Tensor<1, dim>({s.traction[0], s.traction[1], s.traction[2]}),
      pressure_faces,
      model_double.node_stride);
    out << "Surface loads: ";
    if (s.has_traction())
      out << "traction on " << traction_faces.size() << " faces"
          << (s.has_pressure() ? ", " : "");
    if (s.has_pressure())
      out << "follower pressure on " << pressure_faces.size()
          << " faces (on the current surface, every step)";
    out << std::endl;
  }



  SurfaceLoadSchedule
  ExplicitSolid::surface_schedule() const
  {
    // Explicit steps take the loads at t_n itself.
    return [amplitudes = surface_amplitudes](const double t, StepLoads &loads) {
      amplitudes->set(false, t, t, loads);
    };
  }



  std::vector<double>
  ExplicitSolid::surface_forces(const unsigned int         n,
                                const std::vector<double> &u) const
  {
    const std::size_t   n_nodes = model_double.n_nodes;
    const std::size_t   stride  = model_double.node_stride;
    std::vector<double> forces(3 * n_nodes, 0.);
    if (!surface_loads.has_traction() && !surface_loads.has_pressure())
      return forces;
    AssertThrow(u.size() == 3 * n_nodes,
                ExcMessage("surface_forces() takes 3 values per node."));
    std::vector<double> state(3 * stride, 0.), g(3 * stride, 0.);
    for (std::size_t v = 0; v < n_nodes; ++v)
      for (unsigned int d = 0; d < dim; ++d)
        state[d * stride + v] = u[3 * v + d];
    host_surface_step_forces(surface_loads,
                             model_double.node_stride,
                             surface_schedule(),
                             dt)
      ->compute(n, state.data(), g.data());
    for (std::size_t v = 0; v < n_nodes; ++v)
      for (unsigned int d = 0; d < dim; ++d)
        forces[3 * v + d] = g[d * stride + v];
    return forces;
  }



  unsigned int
  ExplicitSolid::step() const
  {
    return stepper->step();
  }



  void
  ExplicitSolid::advance(const unsigned int n_steps)
  {
    stepper->advance(n_steps);
  }



  std::vector<double>
  ExplicitSolid::displacement() const
  {
    std::vector<double> previous, current;
    stepper->get_state(previous, current);
    return current;
  }



  TracePoint
  ExplicitSolid::trace_point() const
  {
    std::vector<double> previous, u;
    stepper->get_state(previous, u);
    TracePoint p;
    p.step = step();
    p.time = step() * dt;
    if (!displaced_nodes.empty())
      {
        const std::vector<double> f = TLED::internal_forces(model_double, u);
        for (const unsigned int v : displaced_nodes)
          for (unsigned int d = 0; d < dim; ++d)
            p.force[d] += f[3 * v + d];
      }
    else
      {
        const double r =
          GPUAssembly::TLED::smooth_ramp(p.time, boundary_conditions.ramp_time);
        for (unsigned int d = 0; d < dim; ++d)
          p.force[d] = r * load_total[d];
      }
    for (unsigned int d = 0; d < dim; ++d)
      p.centre_displacement[d] = u[3 * centre_node + d];
    return p;
  }



  std::string
  ExplicitSolid::write_output(const unsigned int         step_number,
                              const std::vector<double> &u_prev,
                              const std::vector<double> &u_curr)
  {
    const auto &o = parameters.output;
    AppUtilities::create_output_directory(o.directory, "Output/Directory");
    if (!snapshot_writer)
      {
        // The mesh is fixed: the geometry is written once, each output
        // converts and compresses the point data on the writer's thread.
        // That thread reads the element and the DoFHandler when it starts;
        // the DoFHandler goes before the element it uses.
        struct OutputDoFs
        {
          explicit OutputDoFs(const Triangulation<dim> &triangulation)
            : discretization(make_discretization(
                triangulation.all_reference_cells_are_simplex()))
            , dof_handler(triangulation)
          {
            dof_handler.distribute_dofs(*discretization.fe);
          }
          Discretization  discretization;
          DoFHandler<dim> dof_handler;
        };
        const auto output = std::make_shared<OutputDoFs>(triangulation);
        const DoFHandler<dim> &dof_handler = output->dof_handler;
        // Entries that no vertex sets stay zero.
        output_state_entry.assign(dof_handler.n_dofs(),
                                  numbers::invalid_unsigned_int);
        for (const auto &cell : dof_handler.active_cell_iterators())
          for (const unsigned int k : cell->vertex_indices())
            for (unsigned int d = 0; d < dim; ++d)
              output_state_entry[cell->vertex_dof_index(k, d)] =
                3 * cell->vertex_index(k) + d;
        snapshot_writer = std::make_unique<AppUtilities::SnapshotWriter<dim>>(
          std::vector<std::size_t>(2, dof_handler.n_dofs()),
          [output](DataOut<dim>                      &data_out,
                   const std::vector<Vector<double>> &in) {
            add_displacement_and_velocity(data_out,
                                          output->dof_handler,
                                          in[0],
                                          in[1]);
            data_out.build_patches(*output->discretization.mapping);
          },
          vtk_flags(o));
      }
    std::vector<double> u(output_state_entry.size()), v(u.size());
    for (unsigned int dof = 0; dof < u.size(); ++dof)
      if (const unsigned int i = output_state_entry[dof];
          i != numbers::invalid_unsigned_int)
        {
          u[dof] = u_curr[i];
          v[dof] = (u_curr[i] - u_prev[i]) / dt;
        }
    std::ostringstream name;
    name << o.base_name << '-' << std::setw(6) << std::setfill('0')
         << step_number << ".vtu";
    const std::string path = o.directory + "/" + name.str();
    // The series names only files that were written whole: the record
    // follows its file on the writer's thread.
    auto records = pvd_records;
    records.emplace_back(step_number * dt, name.str());
    snapshot_writer->write(
      path,
      {std::move(u), std::move(v)},
      [pvd = o.directory + "/" + o.base_name + ".pvd", records]() {
        AppUtilities::write_file(pvd, [&](std::ostream &file) {
          DataOutBase::write_pvd_record(file, records);
        });
      });
    pvd_records = records;
    return path;
  }



  void
  ExplicitSolid::finish_output()
  {
    if (snapshot_writer)
      snapshot_writer->flush();
  }



  void
  ExplicitSolid::write_trace() const
  {
    std::ostringstream header;
    header << "step, time (s), force on the "
           << (displaced_nodes.empty() ? "load region (applied)" :
                                         "displaced region (reaction)")
           << " fx, fy, fz (N), displacement of node " << centre_node << " at ("
           << model_double.coordinates[3 * centre_node] << ", "
           << model_double.coordinates[3 * centre_node + 1] << ", "
           << model_double.coordinates[3 * centre_node + 2]
           << ") ux, uy, uz (m)";
    std::vector<std::vector<double>> rows;
    for (const auto &p : trace_points)
      rows.push_back({p.step,
                      p.time,
                      p.force[0],
                      p.force[1],
                      p.force[2],
                      p.centre_displacement[0],
                      p.centre_displacement[1],
                      p.centre_displacement[2]});
    // Two panels against time: the three force components, and the three
    // components of the centre's displacement.
    TraceFigure figure;
    figure.title  = "TLED trace against time (s), components";
    figure.panels = {{"force (N)", {2, 3, 4}}, {"centre u (m)", {5, 6, 7}}};
    write_trace_files(parameters.output.directory,
                      "trace",
                      header.str(),
                      rows,
                      figure);
  }



  ExplicitSolid::StateCheck
  ExplicitSolid::check_state(const std::vector<double> &u_prev,
                             const std::vector<double> &u_curr) const
  {
    StateCheck check;
    for (const auto *state : {&u_curr, &u_prev})
      if (const std::size_t i = AppUtilities::first_non_finite(*state);
          i < state->size())
        {
          const unsigned int node = i / dim;
          check.finite            = false;
          check.problem =
            "the displacement of node " + std::to_string(node) + " at (" +
            scientific(model_double.coordinates[3 * node]) + ", " +
            scientific(model_double.coordinates[3 * node + 1]) + ", " +
            scientific(model_double.coordinates[3 * node + 2]) +
            ") is not finite (u_" + "xyz"[i % dim] + " = " +
            std::to_string((*state)[i]) +
            (state == &u_prev ? " at the step before" : "") + ")";
          return check;
        }
    std::tie(check.minimum_J, check.element) =
      TLED::minimum_jacobian(model_double, u_curr);
    if (!(check.minimum_J > 0))
      check.problem = "element " + std::to_string(check.element) +
                      " is inverted (J = " + scientific(check.minimum_J) + ")";
    return check;
  }



  void
  ExplicitSolid::run()
  {
    const auto start = std::chrono::steady_clock::now();
    out << GPUAssembly::describe_execution_path() << std::endl;
    setup();
    const auto        &o       = parameters.output;
    const auto        &e       = parameters.explicit_dynamics;
    const unsigned int n_total = [&]() {
      const double steps = std::ceil(parameters.time.end_time / dt - 1e-9);
      unsigned int n     = steps > 4e9 ? 4000000000u : unsigned(steps);
      if (parameters.time.max_steps > 0)
        n = std::min(n, parameters.time.max_steps);
      return n;
    }();
    out << "Steps: " << n_total << " to t = " << scientific(n_total * dt, 6)
        << std::endl;
    parameters.check_intervals(n_total, out);

    // The stepper checks every step for forces and displacements that are
    // not finite (an inverted element gives NaN forces) and stays at the
    // last finite state; the state is checked again at every trace point
    // and output (from the host copy the trace needs anyway). A state that
    // is not finite, or that has an inverted element, stops the run, and the
    // last state that passed the check is what the run leaves written, with
    // the trace up to it.
    unsigned int        checked_step = 0;
    std::vector<double> checked_prev, checked_curr;
    double              checked_J = 1;
    std::string         checked_vtu; // where it is written, if it is
    const auto          report = [&](const bool write) {
      std::vector<double> u_prev, u_curr;
      stepper->get_state(u_prev, u_curr);
      StateCheck check = check_state(u_prev, u_curr);
      if (const unsigned int node = non_finite_node();
          node != numbers::invalid_unsigned_int)
        check.problem = "the step to step " + std::to_string(step() + 1) +
                        " gives node " + std::to_string(node) + " at (" +
                        scientific(model_double.coordinates[3 * node]) + ", " +
                        scientific(model_double.coordinates[3 * node + 1]) +
                        ", " +
                        scientific(model_double.coordinates[3 * node + 2]) +
                        ") a force or a displacement that is not finite" +
                        (check.problem.empty() ?
                                    std::string() :
                                    "; in the state of step " + std::to_string(step()) +
                             " " + check.problem);
      if (!check.problem.empty())
        {
          // An inverted element in a finite state: that state is worth
          // looking at. A state that is not finite, or too large for the
          // files, is not written; the last checked one is, unless it
          // already was.
          // The VTU files hold float numbers: a finite state beyond their
          // range would reach the file as infinities.
          double largest_u = 0, largest_v = 0;
          for (std::size_t i = 0; check.finite && i < u_curr.size(); ++i)
            {
              largest_u = std::max(largest_u, std::abs(u_curr[i]));
              largest_v =
                std::max(largest_v, std::abs(u_curr[i] - u_prev[i]) / dt);
            }
          const bool fits = std::max(largest_u, largest_v) <=
                            double(std::numeric_limits<float>::max());
          std::string written;
          if (check.finite && fits)
            written = "This state, the last finite one, is written to " +
                      write_output(step(), u_prev, u_curr) + ".";
          else
            written =
              (check.finite ?
                          "Its displacement (up to " + scientific(largest_u) +
                   " m) or velocity (up to " + scientific(largest_v) +
                   " m/s) exceeds the float numbers of the VTU files. " :
                          std::string()) +
              "The last finite state, of step " + std::to_string(checked_step) +
              " (smallest J " + scientific(checked_J) + "), is " +
              "written to " +
              (checked_vtu.empty() ?
                          write_output(checked_step, checked_prev, checked_curr) :
                          checked_vtu) +
              ".";
          write_trace();
          finish_output();
          AssertThrow(false,
                      ExcMessage(
                        "The simulation stopped at step " +
                        std::to_string(step()) + " (t = " +
                        scientific(step() * dt) + "): " + check.problem + ". " +
                        written + " The trace up to step " +
                        std::to_string(checked_step) + " is in " + o.directory +
                        "/trace.csv. Likely cause: elements inverted by too "
                                 "large a load or displacement or too fast a ramp "
                                 "('Explicit dynamics/Ramp time'); a smaller time "
                                 "step or more damping may help."));
        }
      checked_step = step();
      checked_prev = std::move(u_prev);
      checked_curr = std::move(u_curr);
      checked_J    = check.minimum_J;
      checked_vtu = write ? write_output(step(), checked_prev, checked_curr) :
                                     std::string();
      trace_points.push_back(trace_point());
      if (write)
        {
          const auto &p = trace_points.back();
          out << "  step " << step() << ", t = " << scientific(p.time)
              << ": force (" << scientific(p.force[0]) << ", "
              << scientific(p.force[1]) << ", " << scientific(p.force[2])
              << "), centre u (" << scientific(p.centre_displacement[0]) << ", "
              << scientific(p.centre_displacement[1]) << ", "
              << scientific(p.centre_displacement[2]) << "), min J "
              << std::fixed << std::setprecision(5) << check.minimum_J
              << std::defaultfloat << std::endl;
        }
    };
    // What the trace points and the outputs cost the loop's thread: the
    // copy to the host, the checks, the hand-over to the writer.
    double     output_seconds = 0;
    const auto timed_report   = [&](const bool write) {
      const auto before = std::chrono::steady_clock::now();
      report(write);
      output_seconds += AppUtilities::seconds_since(before);
    };
    timed_report(o.output_interval > 0);

    double stepping_time = 0;
    while (step() < n_total)
      {
        const unsigned int n = step();
        unsigned int       next_event =
          std::min(n_total, (n / e.trace_interval + 1) * e.trace_interval);
        if (o.output_interval > 0)
          next_event =
            std::min(next_event,
                     (n / o.output_interval + 1) * o.output_interval);
        const auto start = std::chrono::steady_clock::now();
        advance(next_event - n);
        stepping_time += std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
        const bool output_due =
          o.output_interval > 0 &&
          (step() % o.output_interval == 0 || step() == n_total);
        timed_report(output_due);
      }
    stepping_seconds = stepping_time;
    {
      const auto before = std::chrono::steady_clock::now();
      write_trace();
      finish_output();
      output_seconds += AppUtilities::seconds_since(before);
    }
    out << "\n"
        << n_total << " steps in " << std::fixed << std::setprecision(3)
        << stepping_time
        << " s of stepping (traces and output apart): " << std::setprecision(1)
        << n_total / std::max(stepping_time, 1e-300) << " steps/s, "
        << std::scientific << std::setprecision(3)
        << double(n_total) * model_double.n_elements /
             std::max(stepping_time, 1e-300)
        << " element updates/s" << std::defaultfloat
        << ". Trace: " << o.directory << "/trace.csv, trace.png";
    if (o.output_interval > 0)
      out << "; open " << o.directory << "/" << o.base_name
          << ".pvd in ParaView";
    out << '.' << std::endl;
    out << AppUtilities::describe_output_share(output_seconds,
                                               AppUtilities::seconds_since(
                                                 start),
                                               snapshot_writer.get())
        << std::endl;
  }
} // namespace Hyperelastic
