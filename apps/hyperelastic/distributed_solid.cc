// SPDX-License-Identifier: LGPL-2.1-or-later
// DistributedSolid: the implicit integrator on the ranks of an MPI
// communicator (distributed_solid.h).

#include "distributed_solid.h"

#include <deal.II/base/data_out_base.h>
#include <deal.II/base/parallel.h>
#include <deal.II/base/utilities.h>

#include <deal.II/distributed/fully_distributed_tria.h>
#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_values.h>

#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/tria_description.h>

#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>
#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/distributed/device_selection.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_set>

#include "../common/app_utilities.h"
#include "bar_mesh.h"
#include "solid_common.h"
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

namespace Hyperelastic
{
  namespace
  {
    // The first non-empty @p local_error of any rank, thrown on every rank:
    // a check that fails on some ranks only must not leave the others
    // waiting in the next collective operation.
    void
    throw_if_any_rank(const std::string &local_error, const MPI_Comm comm)
    {
      for (const std::string &error :
           Utilities::MPI::all_gather(comm, local_error))
        AssertThrow(error.empty(), ExcMessage(error));
    }
  } // namespace



  DistributedSolid::DistributedSolid(const Parameters &parameters,
                                     const MPI_Comm    communicator,
                                     std::ostream     &out)
    : parameters(parameters)
    , communicator(communicator)
    , pcout(out, Utilities::MPI::this_mpi_process(communicator) == 0)
    , timer(pcout, TimerOutput::never, TimerOutput::wall_times)
    , dynamic(parameters.time.mode == "dynamic")
  {}



  DistributedSolid::~DistributedSolid()
  {
    // The DoFHandler lets go of the triangulation before it goes.
    dof_handler.clear();
  }



  void
  DistributedSolid::make_grid()
  {
    const auto &g = parameters.geometry;
    check_bar_memory(g);
    GPUAssembly::SetupTimes::Steps setup_steps("DistributedSolid mesh");
    setup_steps.next("serial mesh");
    // Every rank reads or makes the whole coarse mesh, then keeps its part.
    Triangulation<dim> serial;
    if (const std::string dropped = make_mesh(g, serial); !dropped.empty())
      pcout << dropped << std::endl;
    const bool simplex = serial.all_reference_cells_are_simplex();
    AssertThrow(simplex || serial.all_reference_cells_are_hyper_cube(),
                ExcMessage("The mesh mixes cell types; the app runs on "
                           "tetrahedra or on hexahedra."));
    setup_steps.next("diameter");
    diameter                   = mesh_diameter(serial);
    mesh_boundary_ids          = serial.get_boundary_ids();
    const unsigned int n_ranks = Utilities::MPI::n_mpi_processes(communicator);

    if (!simplex)
      {
        setup_steps.next("p4est triangulation");
        auto tria = std::make_unique<parallel::distributed::Triangulation<dim>>(
          communicator);
        tria->copy_triangulation(serial);
        triangulation = std::move(tria);
        refine_near_clamp_and_load();
      }
    else
      {
        const unsigned int steps = parameters.geometry.local_refinement_steps;
        AssertThrow(steps == 0,
                    ExcMessage("'Local refinement steps' is " +
                               std::to_string(steps) +
                               ", but the mesh is not made of hexahedra only; "
                               "deal.II refines tetrahedral meshes only "
                               "globally. Set it to 0 or use hexahedra ('Cell "
                               "type')."));
        setup_steps.next("METIS partition");
        GridTools::partition_triangulation(n_ranks, serial);
        setup_steps.next("description");
        const auto description = TriangulationDescription::Utilities::
          create_description_from_triangulation(serial, communicator);
        setup_steps.next("fullydistributed triangulation");
        auto tria =
          std::make_unique<parallel::fullydistributed::Triangulation<dim>>(
            communicator);
        tria->create_triangulation(description);
        triangulation = std::move(tria);
      }

    const bool hanging = triangulation->has_hanging_nodes();
    pcout << "Mesh: " << triangulation->n_global_active_cells() << ' '
          << (simplex ? "tetrahedra" : "hexahedra")
          << (g.mesh_file.empty() ? " (built-in bar)" :
                                    " (from " + g.mesh_file + ")")
          << (hanging ? ", " + std::to_string(g.local_refinement_steps) +
                          " local refinement steps (hanging nodes)" :
                        "")
          << ", on " << n_ranks << " MPI rank" << (n_ranks > 1 ? "s" : "")
          << (simplex ? " (parallel::fullydistributed, METIS partition)" :
                        " (parallel::distributed, p4est)")
          << std::endl;
  }



  void
  DistributedSolid::refine_near_clamp_and_load()
  {
    const unsigned int steps     = parameters.geometry.local_refinement_steps;
    const auto        &b         = parameters.boundary;
    const double       tolerance = 1e-10 * diameter;
    for (unsigned int step = 0; step < steps; ++step)
      {
        unsigned int n_flagged = 0;
        for (const auto &cell : triangulation->active_cell_iterators())
          if (cell->is_locally_owned())
            if (is_near_clamp_or_load(cell, b, tolerance))
              {
                cell->set_refine_flag();
                ++n_flagged;
              }
        AssertThrow(Utilities::MPI::sum(n_flagged, communicator) > 0,
                    ExcMessage("'Local refinement steps' is " +
                               std::to_string(steps) +
                               ", but no cell touches the fixed faces, the "
                               "'Fixed region' or the 'Load region'."));
        triangulation->execute_coarsening_and_refinement();
      }
  }



  bool
  DistributedSolid::is_held(const types::global_dof_index dof) const
  {
    const auto *entries = constraints.get_constraint_entries(dof);
    return constraints.is_constrained(dof) &&
           (entries == nullptr || entries->empty());
  }



  DistributedVector
  DistributedSolid::ghosted_copy(const DistributedVector &owned) const
  {
    DistributedVector ghosted(owned_dofs, relevant_dofs, communicator);
    ghosted = owned;
    return ghosted;
  }



  void
  DistributedSolid::setup_system()
  {
    const bool simplex    = triangulation->all_reference_cells_are_simplex();
    const bool compressed = parameters.execution.compressed_supplemental_data;
    AssertThrow(!compressed || simplex,
                ExcMessage("'Compressed supplemental data' needs a "
                           "tetrahedral mesh (it compresses the inverse "
                           "edge matrix of linear tetrahedra)."));
    AssertThrow(!compressed,
                ExcMessage("'Execution/Compressed supplemental data' is "
                           "offered on one MPI process only; set it to false "
                           "to run on several ranks."));

    GPUAssembly::SetupTimes::Steps steps("DistributedSolid system");
    steps.next("DoFs");
    Discretization discretization = make_discretization(simplex);
    fe                            = std::move(discretization.fe);
    mapping                       = std::move(discretization.mapping);
    quadrature                    = std::move(discretization.quadrature);
    mass_quadrature               = discretization.mass_quadrature;

    dof_handler.reinit(*triangulation);
    dof_handler.distribute_dofs(*fe);
    owned_dofs    = dof_handler.locally_owned_dofs();
    relevant_dofs = DoFTools::extract_locally_relevant_dofs(dof_handler);

    // As HyperelasticSolid, on the locally relevant DoFs (step-40): hanging
    // nodes first, then the fixed boundary ids and the fixed region.
    steps.next("constraints");
    constraints.clear();
    constraints.reinit(relevant_dofs);
    const double tolerance = 1e-10 * diameter;
    make_fixed_constraints(*mapping,
                           dof_handler,
                           parameters.boundary,
                           mesh_boundary_ids,
                           tolerance,
                           constraints);

    steps.next("adapter");
    GPUAssembly::DoFHandlerAdapter<dim>::AdditionalData adapter_data;
    if (simplex)
      adapter_data.supplemental_format =
        GPUAssembly::SupplementalDataFormat::inverse_edge_matrix;
    adapter.reinit(*mapping,
                   dof_handler,
                   *quadrature,
                   constraints,
                   adapter_data);

    // The rank's nodes: the vertices whose DoFs it owns (all components of
    // a vertex belong to one rank), each once.
    steps.next("owned nodes");
    owned_nodes.clear();
    {
      std::unordered_set<types::global_dof_index> seen;
      for (const auto &cell : dof_handler.active_cell_iterators())
        if (cell->is_locally_owned())
          for (const unsigned int v : cell->vertex_indices())
            {
              OwnedNode node;
              node.position = cell->vertex(v);
              for (unsigned int c = 0; c < dim; ++c)
                node.dofs[c] = cell->vertex_dof_index(v, c);
              if (owned_dofs.is_element(node.dofs[0]) &&
                  seen.insert(node.dofs[0]).second)
                owned_nodes.push_back(node);
            }
    }

    // A value at a hanging DoF acts on the DoFs of its line, with the
    // line's weights (HyperelasticSolid's distribute_to_lines); the entries
    // may belong to other ranks, compress(add) takes them there.
    const auto add_to_lines = [&](const types::global_dof_index dof,
                                  const double                  value,
                                  const bool                    keep_own,
                                  std::vector<types::global_dof_index> &indices,
                                  std::vector<double> &values) {
      const auto *entries = constraints.get_constraint_entries(dof);
      const bool  hanging = entries != nullptr && !entries->empty();
      if (!hanging || keep_own)
        {
          indices.push_back(dof);
          values.push_back(value);
        }
      if (hanging)
        for (const auto &[master, weight] : *entries)
          {
            indices.push_back(master);
            values.push_back(weight * value);
          }
    };

    // Lumped mass: the mass matrix with the vertex quadrature is diagonal;
    // a hanging DoF keeps its own mass for its velocity.
    steps.next("lumped mass");
    backend_data.lumped_mass.reinit(owned_dofs, communicator);
    {
      FEValues<dim>                        fe_values(*mapping,
                              *fe,
                              mass_quadrature,
                              update_values | update_JxW_values);
      std::vector<types::global_dof_index> dofs(fe->n_dofs_per_cell());
      std::vector<types::global_dof_index> indices;
      std::vector<double>                  values;
      for (const auto &cell : dof_handler.active_cell_iterators())
        if (cell->is_locally_owned())
          {
            fe_values.reinit(cell);
            cell->get_dof_indices(dofs);
            indices.clear();
            values.clear();
            for (unsigned int i = 0; i < dofs.size(); ++i)
              {
                double mass = 0;
                for (unsigned int q = 0; q < mass_quadrature.size(); ++q)
                  mass += parameters.material.density *
                          fe_values.shape_value(i, q) * fe_values.JxW(q);
                add_to_lines(dofs[i], mass, true, indices, values);
              }
            backend_data.lumped_mass.add(indices, values);
          }
      backend_data.lumped_mass.compress(VectorOperation::add);
    }

    // The scripted load: shared equally by the nodes of the load region.
    steps.next("load and checks");
    loaded_nodes.clear();
    for (unsigned int k = 0; k < owned_nodes.size(); ++k)
      if (parameters.boundary.load_region.contains(owned_nodes[k].position,
                                                   tolerance))
        loaded_nodes.push_back(k);
    n_loaded_nodes =
      Utilities::MPI::sum<unsigned int>(loaded_nodes.size(), communicator);
    const auto &load = parameters.boundary.load;
    const bool  has_load =
      check_load_region(parameters.boundary, n_loaded_nodes);
    backend_data.load_pattern.reinit(owned_dofs, communicator);
    {
      std::vector<types::global_dof_index> indices;
      std::vector<double>                  values;
      for (const unsigned int k : loaded_nodes)
        for (unsigned int c = 0; c < dim; ++c)
          add_to_lines(owned_nodes[k].dofs[c],
                       load[c] / n_loaded_nodes,
                       false,
                       indices,
                       values);
      backend_data.load_pattern.add(indices, values);
      backend_data.load_pattern.compress(VectorOperation::add);
    }
    check_constraints(has_load);

    load_function = make_load_function(parameters);
    check_load_function(parameters,
                        *load_function,
                        n_loaded_nodes > 0,
                        has_load,
                        pcout);

    unsigned int n_fixed = 0, n_hanging = 0;
    for (const types::global_dof_index dof : owned_dofs)
      if (constraints.is_constrained(dof))
        ++(is_held(dof) ? n_fixed : n_hanging);
    const auto n_owned =
      Utilities::MPI::min_max_avg(double(owned_dofs.n_elements()),
                                  communicator);
    pcout << "Unknowns: " << dof_handler.n_dofs() << " (" << n_owned.min
          << " to " << n_owned.max << " per rank), fixed DoFs: "
          << Utilities::MPI::sum(n_fixed, communicator)
          << (Utilities::MPI::sum(n_hanging, communicator) > 0 ?
                ", hanging DoFs: " +
                  std::to_string(Utilities::MPI::sum(n_hanging, communicator)) :
                "")
          << ", loaded nodes: " << n_loaded_nodes
          << ", S(e): " << adapter.get_arrays().n_supplemental
          << " values per element" << std::endl;
  }



  void
  DistributedSolid::check_constraints(const bool has_load) const
  {
    // HyperelasticSolid's checks of the fixed DoFs, with the counts summed
    // over the ranks.
    FixedDoFCounts counts;
    count_boundary_faces(*triangulation, parameters.boundary, counts);
    counts.n_boundary_faces =
      Utilities::MPI::sum(counts.n_boundary_faces, communicator);
    counts.n_fixed_faces =
      Utilities::MPI::sum(counts.n_fixed_faces, communicator);

    unsigned int n_constrained = 0;
    for (const types::global_dof_index dof : owned_dofs)
      n_constrained += constraints.is_constrained(dof);
    counts.n_constrained  = Utilities::MPI::sum(n_constrained, communicator);
    counts.n_dofs         = dof_handler.n_dofs();
    counts.n_loaded_nodes = n_loaded_nodes;

    unsigned int n_free = 0;
    for (const unsigned int k : loaded_nodes)
      {
        bool free = false;
        for (unsigned int c = 0; c < dim; ++c)
          free = free || (parameters.boundary.load[c] != 0 &&
                          !is_held(owned_nodes[k].dofs[c]));
        n_free += free;
      }
    counts.n_free_loaded_nodes = Utilities::MPI::sum(n_free, communicator);

    if (!dynamic)
      {
        std::vector<double> local;
        for (const OwnedNode &node : owned_nodes)
          if (is_held(node.dofs[0]))
            for (unsigned int d = 0; d < dim; ++d)
              local.push_back(node.position[d]);
        for (const auto &part : Utilities::MPI::all_gather(communicator, local))
          for (unsigned int i = 0; i < part.size(); i += dim)
            counts.fixed_nodes.emplace_back(part[i], part[i + 1], part[i + 2]);
        counts.diameter = diameter;
      }
    check_fixed_dofs(parameters, counts, has_load, pcout);
  }



  void
  DistributedSolid::setup_backend()
  {
    const auto &e = parameters.execution;
    AssertThrow(e.precision == "double",
                ExcMessage("'Execution/Precision' = " + e.precision +
                           " is offered on one MPI process only; on several "
                           "ranks the assembly and the solver run in double. "
                           "Set it to double."));
    // A GPU per rank, chosen before any other CUDA work of the rank.
    const int  device = e.device == "host" ?
                          -1 :
                          GPUAssembly::select_device_by_node_rank(communicator);
    const bool every_rank_has_gpu =
      Utilities::MPI::min(device >= 0 ? 1 : 0, communicator) == 1;
    AssertThrow(e.device != "gpu" || every_rank_has_gpu,
                ExcMessage("'Device' is gpu, but a rank found no CUDA device. "
                           "Set it to host or auto to run on the CPU."));
    if (e.device == "auto" && !every_rank_has_gpu)
      pcout << "No CUDA device found on every rank: every stage runs on the "
               "host."
            << std::endl;

    backend_data.adapter       = &adapter;
    backend_data.constraints   = &constraints;
    backend_data.use_device    = e.device != "host" && every_rank_has_gpu;
    backend_data.kernel.mu     = parameters.material.mu;
    backend_data.kernel.lambda = parameters.material.lambda;
    for (unsigned int d = 0; d < dim; ++d)
      backend_data.kernel.body_force[d] = parameters.material.body_force[d];
    backend_data.kernel.assembly_method        = e.assembly_method;
    backend_data.kernel.symmetric_element_data = e.symmetric_element_data;
    const bool resident =
      e.distributed_linear_algebra == "resident" ||
      (e.distributed_linear_algebra == "auto" && backend_data.use_device);
    backend = resident ? make_resident_backend(backend_data) :
                         make_trilinos_backend(backend_data);
    pcout << "Execution: " << backend->description() << std::endl;
  }



  void
  DistributedSolid::set_initial_state()
  {
    const auto        u0 = make_vector_function(parameters.initial.displacement,
                                         "Initial conditions/Displacement");
    const auto        v0 = make_vector_function(parameters.initial.velocity,
                                         "Initial conditions/Velocity");
    DistributedVector u(owned_dofs, communicator), v(owned_dofs, communicator);
    std::string       error;
    for (const OwnedNode &node : owned_nodes)
      for (unsigned int c = 0; c < dim && error.empty(); ++c)
        {
          const auto dof = node.dofs[c];
          if (constraints.is_constrained(dof))
            continue;
          const double u_value = u0->value(node.position, c);
          const double v_value = v0->value(node.position, c);
          u(dof)               = u_value;
          v(dof)               = v_value;
          std::ostringstream where;
          where << node.position;
          if (!std::isfinite(u_value))
            error = "The entry 'Initial conditions/Displacement' = '" +
                    parameters.initial.displacement + "' is not finite at (" +
                    where.str() + ").";
          else if (!std::isfinite(v_value))
            error = "The entry 'Initial conditions/Velocity' = '" +
                    parameters.initial.velocity + "' is not finite at (" +
                    where.str() + ").";
        }
    throw_if_any_rank(error, communicator);
    u.compress(VectorOperation::insert);
    v.compress(VectorOperation::insert);
    // Hanging nodes take the values their lines give (the fixed DoFs
    // zero), so that the state is conforming from the start.
    constraints.distribute(u);
    constraints.distribute(v);
    DistributedVector p(v);
    p.scale(backend_data.lumped_mass);
    const auto [J_min, where] = find_worst_element(ghosted_copy(u));
    AssertThrow(J_min > 0,
                ExcMessage("The initial displacement inverts " + where +
                           " (J = " + std::to_string(J_min) + ")."));
    backend->set_state(u, p);
  }



  void
  DistributedSolid::setup()
  {
    TimerOutput::Scope             scope(timer, "Set-up (mesh, adapter, plan)");
    GPUAssembly::SetupTimes::Steps steps("DistributedSolid set-up");
    steps.next("mesh");
    make_grid();
    steps.next("system");
    setup_system();
    steps.next("backend");
    setup_backend();
    steps.next("initial state");
    set_initial_state();
  }



  std::string
  DistributedSolid::backend_description() const
  {
    return backend->description();
  }



  types::global_dof_index
  DistributedSolid::n_dofs() const
  {
    return dof_handler.n_dofs();
  }



  void
  DistributedSolid::do_step()
  {
    const double t_new =
      std::min(time + parameters.time.time_step, parameters.time.end_time);
    const StepLoads  loads = loads_at(parameters, *load_function, time, t_new);
    const StepReport report =
      run_newton_loop(*backend, loads, parameters.solver, timer);
    if (report.status != StepStatus::converged)
      stop(step_failure_message(report, parameters, step_number, t_new, [&]() {
        DistributedVector u, u_old, p_old;
        backend->get_iterate(u);
        // The kernel saw the midpoint configuration.
        if (dynamic)
          {
            backend->get_state(u_old, p_old);
            u += u_old;
            u *= 0.5;
          }
        return find_worst_element(ghosted_copy(u));
      }));

    time = t_new;
    ++step_number;
    record_step(stats, report, parameters.output, step_number, time, pcout);
  }



  void
  DistributedSolid::stop(const std::string &reason)
  {
    write_output();
    stop_simulation(pcout,
                    step_number,
                    time,
                    stats.output_files.back(),
                    reason);
  }



  void
  DistributedSolid::run()
  {
    const unsigned int n_ranks = Utilities::MPI::n_mpi_processes(communicator);
    pcout << "Running on " << n_ranks << " MPI rank" << (n_ranks > 1 ? "s" : "")
          << "." << std::endl;
    const std::string binding =
      GPUAssembly::describe_thread_binding(communicator);
    if (!binding.empty())
      pcout << binding << std::endl;
    setup();

    const auto output = [&]() {
      write_output();
      DistributedVector u, p;
      backend->get_state(u, p);
      // Every rank takes part in the reductions; rank 0 prints.
      StateSummary summary;
      summary.max_displacement = u.linfty_norm();
      summary.momentum         = linear_momentum();
      summary.kinetic_energy   = kinetic_energy();
      summary.strain_energy    = strain_energy();
      summary.has_load_region  = !parameters.boundary.load_region.empty;
      if (summary.has_load_region)
        summary.load_region_displacement = load_region_displacement();
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
    print_stage_split();
    print_output_hint(pcout, parameters.output);
    timer.print_summary();
  }



  void
  DistributedSolid::print_stage_split() const
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
    const double solve    = stage("Solve (Jacobi-CG)");
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



  std::vector<DistributedSolid::NodalState>
  DistributedSolid::gather_nodal_state(const unsigned int root) const
  {
    DistributedVector u, p;
    backend->get_state(u, p);
    std::vector<double> local;
    local.reserve(owned_nodes.size() * 3 * dim);
    for (const OwnedNode &node : owned_nodes)
      {
        for (unsigned int d = 0; d < dim; ++d)
          local.push_back(node.position[d]);
        for (unsigned int c = 0; c < dim; ++c)
          local.push_back(u(node.dofs[c]));
        for (unsigned int c = 0; c < dim; ++c)
          local.push_back(p(node.dofs[c]));
      }
    std::vector<NodalState> result;
    for (const auto &part : Utilities::MPI::gather(communicator, local, root))
      for (unsigned int i = 0; i < part.size(); i += 3 * dim)
        {
          NodalState node;
          for (unsigned int d = 0; d < dim; ++d)
            {
              node.position[d] = part[i + d];
              node.u[d]        = part[i + dim + d];
              node.p[d]        = part[i + 2 * dim + d];
            }
          result.push_back(node);
        }
    return result;
  }



  double
  DistributedSolid::kinetic_energy() const
  {
    DistributedVector u, p;
    backend->get_state(u, p);
    const double *momentum = p.begin();
    const double *mass     = backend_data.lumped_mass.begin();
    double        energy   = 0;
    for (unsigned int k = 0; k < p.locally_owned_size(); ++k)
      energy += 0.5 * momentum[k] * momentum[k] / mass[k];
    return Utilities::MPI::sum(energy, communicator);
  }



  Tensor<1, DistributedSolid::dim>
  DistributedSolid::linear_momentum() const
  {
    DistributedVector u, p;
    backend->get_state(u, p);
    Tensor<1, dim> momentum;
    for (const OwnedNode &node : owned_nodes)
      for (unsigned int c = 0; c < dim; ++c)
        momentum[c] += p(node.dofs[c]);
    return Utilities::MPI::sum(momentum, communicator);
  }



  Tensor<1, DistributedSolid::dim>
  DistributedSolid::load_region_displacement() const
  {
    DistributedVector u, p;
    backend->get_state(u, p);
    Tensor<1, dim> sum;
    for (const unsigned int k : loaded_nodes)
      for (unsigned int c = 0; c < dim; ++c)
        sum[c] += u(owned_nodes[k].dofs[c]);
    sum = Utilities::MPI::sum(sum, communicator);
    return n_loaded_nodes == 0 ? sum : sum / double(n_loaded_nodes);
  }



  double
  DistributedSolid::strain_energy() const
  {
    DistributedVector u_owned, p;
    backend->get_state(u_owned, p);
    const DistributedVector          u = ghosted_copy(u_owned);
    FEValues<dim>                    fe_values(*mapping,
                            *fe,
                            *quadrature,
                            update_gradients | update_JxW_values);
    const FEValuesExtractors::Vector displacement(0);
    std::vector<Tensor<2, dim>>      grad_u(quadrature->size());
    double                           energy = 0;
    for (const auto &cell : dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          fe_values.reinit(cell);
          fe_values[displacement].get_function_gradients(u, grad_u);
          for (unsigned int q = 0; q < quadrature->size(); ++q)
            energy +=
              strain_energy_density(unit_symmetric_tensor<dim>() + grad_u[q],
                                    parameters.material.mu,
                                    parameters.material.lambda) *
              fe_values.JxW(q);
        }
    return Utilities::MPI::sum(energy, communicator);
  }



  std::pair<double, std::string>
  DistributedSolid::find_worst_element(const DistributedVector &u) const
  {
    FEValues<dim> fe_values(*mapping, *fe, *quadrature, update_gradients);
    const FEValuesExtractors::Vector displacement(0);
    std::vector<Tensor<2, dim>>      grad_u(quadrature->size());
    std::pair<double, std::string>   worst(std::numeric_limits<double>::max(),
                                         "");
    for (const auto &cell : dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          fe_values.reinit(cell);
          fe_values[displacement].get_function_gradients(u, grad_u);
          for (unsigned int q = 0; q < quadrature->size(); ++q)
            {
              const double J =
                determinant(unit_symmetric_tensor<dim>() + grad_u[q]);
              if (J < worst.first || !std::isfinite(J))
                {
                  std::ostringstream text;
                  text << "element " << cell->id() << " (reference centre "
                       << cell->center() << ')';
                  worst = {J, text.str()};
                }
            }
        }
    // The same choice over the ranks' worst elements, in rank order.
    std::pair<double, std::string> result(std::numeric_limits<double>::max(),
                                          "");
    for (const auto &candidate :
         Utilities::MPI::all_gather(communicator, worst))
      if (candidate.first < result.first || !std::isfinite(candidate.first))
        result = candidate;
    return result;
  }



  void
  DistributedSolid::write_output()
  {
    TimerOutput::Scope scope(timer, "Output");
    const auto        &o = parameters.output;
    const bool root      = Utilities::MPI::this_mpi_process(communicator) == 0;
    {
      std::string message;
      if (root)
        {
          std::error_code error;
          std::filesystem::create_directories(o.directory, error);
          if (error)
            message = "'Output/Directory' = '" + o.directory +
                      "' cannot be created: " + error.message() + ".";
        }
      throw_if_any_rank(message, communicator);
    }

    DistributedVector u_owned, p;
    backend->get_state(u_owned, p);
    DistributedVector v_owned(p);
    {
      double       *v    = v_owned.begin();
      const double *mass = backend_data.lumped_mass.begin();
      for (unsigned int k = 0; k < v_owned.locally_owned_size(); ++k)
        v[k] /= mass[k];
    }
    const DistributedVector u = ghosted_copy(u_owned);
    const DistributedVector v = ghosted_copy(v_owned);

    // Cell-wise J and von Mises stress (averaged over quadrature points)
    // and the owning rank, on the rank's cells.
    const unsigned int n_cells = triangulation->n_active_cells();
    Vector<double>     J_cells(n_cells), von_mises(n_cells);
    Vector<float>      subdomain(n_cells);
    {
      FEValues<dim>                    fe_values(*mapping,
                              *fe,
                              *quadrature,
                              update_gradients | update_JxW_values);
      const FEValuesExtractors::Vector displacement(0);
      std::vector<Tensor<2, dim>>      grad_u(quadrature->size());
      for (const auto &cell : dof_handler.active_cell_iterators())
        if (cell->is_locally_owned())
          {
            fe_values.reinit(cell);
            fe_values[displacement].get_function_gradients(u, grad_u);
            double volume = 0, J_sum = 0, mises_sum = 0;
            for (unsigned int q = 0; q < quadrature->size(); ++q)
              {
                const Tensor<2, dim> F =
                  unit_symmetric_tensor<dim>() + grad_u[q];
                const double JxW = fe_values.JxW(q);
                volume += JxW;
                J_sum += determinant(F) * JxW;
                mises_sum += von_mises_stress(F,
                                              parameters.material.mu,
                                              parameters.material.lambda) *
                             JxW;
              }
            const unsigned int index = cell->active_cell_index();
            J_cells[index]           = J_sum / volume;
            von_mises[index]         = mises_sum / volume;
            subdomain[index]         = cell->subdomain_id();
          }
    }

    DataOut<dim> data_out;
    add_displacement_and_velocity(data_out, dof_handler, u, v);
    add_J_and_von_mises(data_out, J_cells, von_mises);
    data_out.add_data_vector(subdomain,
                             "subdomain",
                             DataOut<dim>::type_cell_data);
    data_out.build_patches(*mapping);

    // One piece per rank and, from rank 0, the .pvtu record naming them
    // and the .pvd series: deal.II's write_vtu_with_pvtu_record() layout,
    // each file written whole or not at all (AppUtilities::write_file), and
    // a failure on any rank stops every rank with its message.
    const unsigned int n_ranks = Utilities::MPI::n_mpi_processes(communicator);
    const std::string  stem =
      o.base_name + "_" + Utilities::int_to_string(step_number, 5);
    const auto piece_name = [&](const unsigned int rank) {
      return stem + "." +
             Utilities::int_to_string(rank,
                                      Utilities::needed_digits(n_ranks - 1)) +
             ".vtu";
    };
    const std::string pvtu    = stem + ".pvtu";
    auto              records = pvd_records;
    records.emplace_back(time, pvtu);
    const auto write_collectively = [&](const std::function<void()> &write) {
      std::string message;
      try
        {
          write();
        }
      catch (const ExceptionBase &exc)
        {
          // The message alone: every rank throws it again.
          std::ostringstream info;
          exc.print_info(info);
          message = info.str();
          message.erase(0, message.find_first_not_of(" \n"));
          message.erase(message.find_last_not_of(" \n") + 1);
        }
      catch (const std::exception &exc)
        {
          message = exc.what();
        }
      throw_if_any_rank(message, communicator);
    };
    write_collectively([&]() {
      AppUtilities::write_file(o.directory + "/" +
                                 piece_name(Utilities::MPI::this_mpi_process(
                                   communicator)),
                               [&](std::ostream &out) {
                                 data_out.write_vtu(out);
                               });
    });
    write_collectively([&]() {
      if (!root)
        return;
      std::vector<std::string> pieces;
      for (unsigned int rank = 0; rank < n_ranks; ++rank)
        pieces.push_back(piece_name(rank));
      AppUtilities::write_file(o.directory + "/" + pvtu,
                               [&](std::ostream &out) {
                                 data_out.write_pvtu_record(out, pieces);
                               });
      AppUtilities::write_file(o.directory + "/" + o.base_name + ".pvd",
                               [&](std::ostream &out) {
                                 DataOutBase::write_pvd_record(out, records);
                               });
    });
    stats.output_files.push_back(o.directory + "/" + pvtu);
    pvd_records = records;
  }
} // namespace Hyperelastic
