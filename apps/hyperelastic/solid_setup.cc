// SPDX-License-Identifier: LGPL-2.1-or-later
// ImplicitSolid's set-up: the mesh, the finite element, the fixed DoFs,
// the lumped mass and the load pattern, the plugin's arrays, the backend
// and the initial state.

#include <deal.II/base/function_parser.h>
#include <deal.II/base/utilities.h>

#include <deal.II/distributed/fully_distributed_tria.h>
#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_renumbering.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_values.h>

#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/tria_description.h>

#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/distributed/device_selection.h>
#include <gpu_assembly/lac/device_constraints.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_set>

#include "bar_mesh.h"
#include "implicit_solid.h"
#include "solid_common.h"
#include "surface_load_setup.h"
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

namespace Hyperelastic
{
  ImplicitSolid::ImplicitSolid(const Parameters &parameters, std::ostream &out)
    : parameters(parameters)
    , communicator(MPI_COMM_SELF)
    , distributed(false)
    , pcout(out)
    , timer(pcout, TimerOutput::never, TimerOutput::wall_times)
    , dynamic(parameters.time.mode == "dynamic")
  {}



  ImplicitSolid::ImplicitSolid(const Parameters &parameters,
                               const MPI_Comm    communicator,
                               std::ostream     &out)
    : parameters(parameters)
    , communicator(communicator)
    , distributed(true)
    , pcout(out, Utilities::MPI::this_mpi_process(communicator) == 0)
    , timer(pcout, TimerOutput::never, TimerOutput::wall_times)
    , dynamic(parameters.time.mode == "dynamic")
  {}



  ImplicitSolid::~ImplicitSolid()
  {
    // The writer's threads compute cell fields from the DoFHandler: they
    // end (after the snapshots queued, or at once after an error) first.
    snapshot_writer.reset();
    if (boundary_series.valid())
      boundary_series.wait();
    boundary_series = {};
    // The DoFHandler lets go of the triangulation before it goes.
    dof_handler.clear();
  }



  template <typename T>
  T
  ImplicitSolid::global_sum(const T &value) const
  {
    return distributed ? Utilities::MPI::sum(value, communicator) : value;
  }

  template unsigned int
  ImplicitSolid::global_sum(const unsigned int &) const;
  template double
  ImplicitSolid::global_sum(const double &) const;
  template Tensor<1, 3>
  ImplicitSolid::global_sum(const Tensor<1, 3> &) const;



  void
  ImplicitSolid::throw_if_any_rank(const std::string &local_error) const
  {
    // A check that fails on some ranks only must not leave the others
    // waiting in the next collective operation.
    if (!distributed)
      {
        AssertThrow(local_error.empty(), ExcMessage(local_error));
        return;
      }
    for (const std::string &error :
         Utilities::MPI::all_gather(communicator, local_error))
      AssertThrow(error.empty(), ExcMessage(error));
  }



  bool
  ImplicitSolid::is_held(const types::global_dof_index dof) const
  {
    // A hanging DoF is not held: it moves with the DoFs of its line, and
    // a load on it goes to them.
    const auto *entries = constraints.get_constraint_entries(dof);
    return constraints.is_constrained(dof) &&
           (entries == nullptr || entries->empty());
  }



  void
  ImplicitSolid::make_grid()
  {
    const auto &g = parameters.geometry;
    check_bar_memory(g);
    GPUAssembly::SetupTimes::Steps setup_steps("ImplicitSolid mesh");
    setup_steps.next("serial mesh");
    // On a communicator every rank reads or makes the whole coarse mesh,
    // then keeps its part.
    auto serial = std::make_unique<Triangulation<dim>>();
    if (const std::string dropped = make_mesh(g, *serial); !dropped.empty())
      pcout << dropped << std::endl;
    const bool simplex = serial->all_reference_cells_are_simplex();
    AssertThrow(simplex || serial->all_reference_cells_are_hyper_cube(),
                ExcMessage("The mesh mixes cell types; the app runs on "
                           "tetrahedra or on hexahedra."));
    const unsigned int steps = g.local_refinement_steps;
    AssertThrow(steps == 0 || !simplex,
                ExcMessage("'Local refinement steps' is " +
                           std::to_string(steps) +
                           ", but the mesh is not made of hexahedra only; "
                           "deal.II refines tetrahedral meshes only globally. "
                           "Set it to 0 or use hexahedra ('Cell type')."));
    setup_steps.next("diameter");
    diameter          = mesh_diameter(*serial);
    mesh_boundary_ids = serial->get_boundary_ids();
    const unsigned int n_ranks =
      distributed ? Utilities::MPI::n_mpi_processes(communicator) : 1;

    if (!distributed)
      triangulation = std::move(serial);
    else if (!simplex)
      {
        setup_steps.next("p4est triangulation");
        auto tria = std::make_unique<parallel::distributed::Triangulation<dim>>(
          communicator);
        tria->copy_triangulation(*serial);
        triangulation = std::move(tria);
      }
    else
      {
        setup_steps.next("METIS partition");
        GridTools::partition_triangulation(n_ranks, *serial);
        setup_steps.next("description");
        const auto description = TriangulationDescription::Utilities::
          create_description_from_triangulation(*serial, communicator);
        setup_steps.next("fullydistributed triangulation");
        auto tria =
          std::make_unique<parallel::fullydistributed::Triangulation<dim>>(
            communicator);
        tria->create_triangulation(description);
        triangulation = std::move(tria);
      }
    refine_near_clamp_and_load();

    pcout << "Mesh: " << triangulation->n_global_active_cells() << ' '
          << (simplex ? "tetrahedra" : "hexahedra");
    if (!distributed)
      pcout << ", " << triangulation->n_vertices() << " vertices";
    pcout << (g.mesh_file.empty() ? " (built-in bar)" :
                                    " (from " + g.mesh_file + ")")
          << (triangulation->has_hanging_nodes() ?
                ", " + std::to_string(steps) +
                  " local refinement steps (hanging nodes)" :
                "");
    if (distributed)
      pcout << ", on " << n_ranks << " MPI rank" << (n_ranks > 1 ? "s" : "")
            << (simplex ? " (parallel::fullydistributed, METIS partition)" :
                          " (parallel::distributed, p4est)");
    pcout << std::endl;
  }



  void
  ImplicitSolid::refine_near_clamp_and_load()
  {
    const unsigned int steps     = parameters.geometry.local_refinement_steps;
    const auto        &b         = parameters.boundary;
    const double       tolerance = 1e-10 * diameter;
    for (unsigned int step = 0; step < steps; ++step)
      {
        unsigned int n_flagged = 0;
        for (const auto &cell : triangulation->active_cell_iterators())
          if (cell->is_locally_owned() &&
              is_near_clamp_or_load(cell, b, tolerance))
            {
              cell->set_refine_flag();
              ++n_flagged;
            }
        const double n_refined = global_sum(n_flagged);
        AssertThrow(n_refined > 0,
                    ExcMessage("'Local refinement steps' is " +
                               std::to_string(steps) +
                               ", but no cell touches the fixed faces, the "
                               "'Fixed region' or the 'Load region'."));
        // Each refined hexahedron becomes eight: refused before deal.II
        // allocates them, not by std::bad_alloc.
        check_refinement_memory(triangulation->n_global_active_cells() +
                                  7 * n_refined,
                                step,
                                steps);
        triangulation->execute_coarsening_and_refinement();
      }
  }



  void
  ImplicitSolid::setup_system()
  {
    const bool simplex    = triangulation->all_reference_cells_are_simplex();
    const bool compressed = parameters.execution.compressed_supplemental_data;
    AssertThrow(!compressed || simplex,
                ExcMessage("'Compressed supplemental data' needs a "
                           "tetrahedral mesh (it compresses the inverse "
                           "edge matrix of linear tetrahedra)."));
    AssertThrow(!compressed || !distributed,
                ExcMessage("'Execution/Compressed supplemental data' is "
                           "offered on one MPI process only; set it to false "
                           "to run on several ranks."));

    GPUAssembly::SetupTimes::Steps steps("ImplicitSolid system");
    steps.next("DoFs");
    Discretization discretization = make_discretization(simplex);
    fe                            = std::move(discretization.fe);
    mapping                       = std::move(discretization.mapping);
    quadrature                    = std::move(discretization.quadrature);
    mass_quadrature               = discretization.mass_quadrature;

    dof_handler.reinit(*triangulation);
    dof_handler.distribute_dofs(*fe);
    if (!distributed)
      DoFRenumbering::Cuthill_McKee(dof_handler);
    owned_dofs    = dof_handler.locally_owned_dofs();
    relevant_dofs = DoFTools::extract_locally_relevant_dofs(dof_handler);
    // The output's geometry is built beside the rest of the set-up.
    if (!distributed && parameters.output.output_interval > 0)
      start_output_writers();

    // Hanging nodes first, then the fixed boundary ids and the fixed
    // region; on a communicator on the locally relevant DoFs (step-40).
    steps.next("constraints");
    constraints.clear();
    if (distributed)
      constraints.reinit(relevant_dofs);
    const double tolerance = 1e-10 * diameter;
    make_fixed_constraints(*mapping,
                           dof_handler,
                           parameters.boundary,
                           mesh_boundary_ids,
                           tolerance,
                           constraints,
                           component_dofs);

    steps.next("adapter");
    owned_nodes.clear();
    if (!distributed)
      {
        GPUAssembly::DoFHandlerAdapter<dim>::AdditionalData adapter_data;
        // A host run leaves the GPU alone, set-up included.
        if (parameters.execution.device == "host")
          adapter_data.pattern_construction =
            GPUAssembly::PatternConstruction::host;
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

        // The nodes in the adapter's order.
        const GPUAssembly::MeshArrays &a = adapter.get_arrays();
        owned_nodes.resize(a.n_nodes);
        for (unsigned int n = 0; n < a.n_nodes; ++n)
          for (unsigned int c = 0; c < dim; ++c)
            {
              owned_nodes[n].position[c] = a.nodal_coordinates[n * dim + c];
              owned_nodes[n].dofs[c]     = a.node_dofs[n * dim + c];
            }
      }
    else
      {
        GPUAssembly::DoFHandlerAdapter<dim>::AdditionalData adapter_data;
        if (simplex)
          adapter_data.supplemental_format =
            GPUAssembly::SupplementalDataFormat::inverse_edge_matrix;
        adapter.reinit(*mapping,
                       dof_handler,
                       *quadrature,
                       constraints,
                       adapter_data);

        // The rank's nodes: the vertices whose DoFs it owns (all components
        // of a vertex belong to one rank), each once.
        steps.next("owned nodes");
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

    // The scripted load: shared equally by the nodes of the load region.
    steps.next("loaded nodes");
    loaded_nodes.clear();
    for (unsigned int k = 0; k < owned_nodes.size(); ++k)
      if (parameters.boundary.load_region.contains(owned_nodes[k].position,
                                                   tolerance))
        loaded_nodes.push_back(k);
    n_loaded_nodes = global_sum<unsigned int>(loaded_nodes.size());
    const bool has_load =
      check_load_region(parameters.boundary, n_loaded_nodes);
    steps.next("rollers and prescribed displacements");
    setup_component_conditions();
    steps.next("lumped mass and load");
    make_mass_and_load();
    steps.next("checks");
    check_constraints(has_load);

    load_function = make_load_function(parameters);
    steps.next("surface loads");
    make_surface_loads();
    check_load_function(parameters,
                        *load_function,
                        n_loaded_nodes > 0,
                        has_load,
                        pcout);

    unsigned int n_fixed = 0, n_hanging = 0;
    for (const types::global_dof_index dof : owned_dofs)
      if (constraints.is_constrained(dof))
        ++(is_held(dof) ? n_fixed : n_hanging);
    n_fixed   = global_sum(n_fixed);
    n_hanging = global_sum(n_hanging);
    pcout << "Unknowns: " << dof_handler.n_dofs();
    if (!distributed)
      pcout << ", nonzeros: " << adapter.get_arrays().n_nonzeros();
    else
      {
        const auto n_owned =
          Utilities::MPI::min_max_avg(double(owned_dofs.n_elements()),
                                      communicator);
        pcout << " (" << n_owned.min << " to " << n_owned.max << " per rank)";
      }
    pcout << ", fixed DoFs: " << n_fixed
          << (n_hanging > 0 ? ", hanging DoFs: " + std::to_string(n_hanging) :
                              "")
          << ", loaded nodes: " << n_loaded_nodes
          << ", S(e): " << adapter.get_arrays().n_supplemental
          << " values per element" << std::endl;
  }



  void
  ImplicitSolid::make_mass_and_load()
  {
    // The mass matrix with the vertex quadrature is diagonal. A DoF
    // constrained to others (a hanging node) moves with them: its load and
    // its inertia act on the DoFs of its line, with the line's weights (the
    // rows of C^T M C summed, which keeps the total mass). Its own mass
    // stays, so that its momentum keeps giving its velocity.
    const auto                          &load = parameters.boundary.load;
    FEValues<dim>                        fe_values(*mapping,
                            *fe,
                            mass_quadrature,
                            update_values | update_JxW_values);
    std::vector<types::global_dof_index> dofs(fe->n_dofs_per_cell());
    const double                         density = parameters.material.density;
    if (!distributed)
      {
        const unsigned int n    = dof_handler.n_dofs();
        auto              &mass = backend_data.lumped_mass;
        mass.assign(n, 0.);
        for (const auto &cell : dof_handler.active_cell_iterators())
          {
            fe_values.reinit(cell);
            cell->get_dof_indices(dofs);
            for (unsigned int i = 0; i < dofs.size(); ++i)
              for (unsigned int q = 0; q < mass_quadrature.size(); ++q)
                mass[dofs[i]] +=
                  density * fe_values.shape_value(i, q) * fe_values.JxW(q);
          }
        const auto distribute_to_lines = [&](std::vector<double> &values,
                                             const bool           keep_own) {
          for (const auto &line : constraints.get_lines())
            if (!line.entries.empty())
              {
                for (const auto &[dof, weight] : line.entries)
                  values[dof] += weight * values[line.index];
                if (!keep_own)
                  values[line.index] = 0.;
              }
        };
        distribute_to_lines(mass, true);

        auto &pattern = backend_data.load_pattern;
        pattern.assign(n, 0.);
        for (const unsigned int k : loaded_nodes)
          for (unsigned int c = 0; c < dim; ++c)
            pattern[owned_nodes[k].dofs[c]] = load[c] / n_loaded_nodes;
        distribute_to_lines(pattern, false);
        return;
      }

    // On a communicator the entries of a line may belong to other ranks:
    // compress(add) takes them there.
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
    std::vector<types::global_dof_index> indices;
    std::vector<double>                  values;
    TrilinosWrappers::MPI::Vector        mass(owned_dofs, communicator);
    for (const auto &cell : dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          fe_values.reinit(cell);
          cell->get_dof_indices(dofs);
          indices.clear();
          values.clear();
          for (unsigned int i = 0; i < dofs.size(); ++i)
            {
              double m = 0;
              for (unsigned int q = 0; q < mass_quadrature.size(); ++q)
                m += density * fe_values.shape_value(i, q) * fe_values.JxW(q);
              add_to_lines(dofs[i], m, true, indices, values);
            }
          mass.add(indices, values);
        }
    mass.compress(VectorOperation::add);
    backend_data.lumped_mass.assign(mass.begin(), mass.end());

    TrilinosWrappers::MPI::Vector pattern(owned_dofs, communicator);
    indices.clear();
    values.clear();
    for (const unsigned int k : loaded_nodes)
      for (unsigned int c = 0; c < dim; ++c)
        add_to_lines(owned_nodes[k].dofs[c],
                     load[c] / n_loaded_nodes,
                     false,
                     indices,
                     values);
    pattern.add(indices, values);
    pattern.compress(VectorOperation::add);
    backend_data.load_pattern.assign(pattern.begin(), pattern.end());
  }



  void
  ImplicitSolid::make_surface_loads()
  {
    const Parameters::SurfaceLoads &s = parameters.surface_loads;
    surface_amplitudes         = std::make_unique<SurfaceLoadAmplitudes>(s);
    backend_data.surface_loads = SurfaceLoadData();
    if (!s.has_traction() && !s.has_pressure())
      return;
    const double tolerance = 1e-10 * diameter;
    const auto [traction_faces, pressure_faces] =
      select_surface_load_faces(dof_handler, s, tolerance);
    const Tensor<1, dim> traction(
      {s.traction[0], s.traction[1], s.traction[2]});
    backend_data.surface_loads =
      distributed ?
        make_distributed_surface_load_data(*mapping,
                                           dof_handler,
                                           constraints,
                                           adapter.locally_relevant_dofs(),
                                           s.has_traction(),
                                           traction_faces,
                                           traction,
                                           pressure_faces) :
        make_surface_load_data(*mapping,
                               dof_handler,
                               constraints,
                               adapter.get_arrays(),
                               traction_faces,
                               traction,
                               pressure_faces);
    pcout << "Surface loads: ";
    if (s.has_traction())
      pcout << "traction on " << global_sum<unsigned int>(traction_faces.size())
            << " faces" << (s.has_pressure() ? ", " : "");
    if (s.has_pressure())
      pcout << "follower pressure on "
            << global_sum<unsigned int>(pressure_faces.size()) << " faces";
    pcout << std::endl;
  }



  void
  ImplicitSolid::check_constraints(const bool has_load) const
  {
    // check_fixed_dofs() on the counts of the whole mesh, summed over the
    // ranks.
    FixedDoFCounts counts;
    count_boundary_faces(*triangulation, parameters.boundary, counts);
    counts.n_boundary_faces        = global_sum(counts.n_boundary_faces);
    counts.n_fixed_faces           = global_sum(counts.n_fixed_faces);
    counts.n_fixed_region_vertices = global_sum(counts.n_fixed_region_vertices);

    unsigned int n_constrained = 0;
    for (const types::global_dof_index dof : owned_dofs)
      n_constrained += constraints.is_constrained(dof);
    counts.n_constrained  = global_sum(n_constrained);
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
    counts.n_free_loaded_nodes = global_sum(n_free);

    if (!dynamic && parameters.boundary.has_component_conditions())
      {
        check_rigid_motions();
        counts.rigid_motions_checked = true;
      }
    else if (!dynamic)
      {
        std::vector<double> local;
        for (const OwnedNode &node : owned_nodes)
          if (is_held(node.dofs[0]))
            for (unsigned int d = 0; d < dim; ++d)
              local.push_back(node.position[d]);
        const std::vector<std::vector<double>> parts =
          distributed ? Utilities::MPI::all_gather(communicator, local) :
                        std::vector<std::vector<double>>{local};
        for (const auto &part : parts)
          for (unsigned int i = 0; i < part.size(); i += dim)
            counts.fixed_nodes.emplace_back(part[i], part[i + 1], part[i + 2]);
        counts.diameter = diameter;
      }
    check_fixed_dofs(parameters, counts, has_load, pcout);
  }



  void
  ImplicitSolid::setup_backend()
  {
    const auto &e       = parameters.execution;
    backend_data.mu     = parameters.material.mu;
    backend_data.lambda = parameters.material.lambda;
    for (unsigned int d = 0; d < dim; ++d)
      backend_data.body_force[d] = parameters.material.body_force[d];
    backend_data.nodal_data_are_positions = e.compressed_supplemental_data;
    backend_data.assembly_method          = e.assembly_method;
    backend_data.symmetric_element_data   = e.symmetric_element_data;
    backend_data.step_graph               = e.step_graph;

    // 'Solver/Linear solver': an explicit choice goes to the backend, which
    // refuses one it cannot run; auto is resolved here and the reason
    // printed with the solver that runs.
    const Parameters::Solver &s             = parameters.solver;
    LinearSolverData         &linear_solver = backend_data.linear_solver;
    linear_solver.chebyshev_degree          = s.chebyshev_degree;
    linear_solver.chebyshev_smoothing_range = s.chebyshev_smoothing_range;
    const bool   automatic                  = s.linear_solver == "auto";
    std::string &reason                     = linear_solver_reason;
    reason                                  = "as 'Solver/Linear solver' asks";
    if (!automatic)
      linear_solver.solver = parse_linear_solver(s.linear_solver);
    // The pressure's load stiffness makes the tangent non-symmetric,
    // which CG cannot solve: a direct solver, or BiCGStab where the
    // backend has no direct solver (resident, on MPI ranks).
    const bool pressure            = parameters.surface_loads.has_pressure();
    const auto choose_for_pressure = [&](const LinearSolver solver) {
      linear_solver.solver = solver;
      reason = "auto: the follower pressure's load stiffness makes the "
               "tangent non-symmetric";
    };
    AssertThrow(!pressure || automatic ||
                  linear_solver.solver == LinearSolver::direct ||
                  linear_solver.solver == LinearSolver::bicgstab_jacobi,
                ExcMessage("'Solver/Linear solver' = " + s.linear_solver +
                           " solves symmetric systems only, but the follower "
                           "'Surface loads/Pressure' on the faces of "
                           "'Surface loads/Pressure boundary ids' and "
                           "'Surface loads/Pressure region' adds a "
                           "non-symmetric load stiffness to the tangent. Set "
                           "'Solver/Linear solver' to direct, bicgstab-jacobi "
                           "(the resident backend on MPI ranks) or auto."));

    if (!distributed)
      {
        const GPUAssembly::MeshArrays &a = adapter.get_arrays();
        backend_data.arrays              = &a;
        backend_data.diagonal_index.resize(a.n_dofs);
        for (unsigned int row = 0; row < a.n_dofs; ++row)
          {
            const auto begin = a.column_indices.begin() + a.row_offsets[row];
            const auto end = a.column_indices.begin() + a.row_offsets[row + 1];
            const auto it  = std::lower_bound(begin, end, int(row));
            AssertThrow(it != end && *it == int(row),
                        ExcInternalError("The sparsity pattern has no "
                                         "diagonal entry in a row."));
            backend_data.diagonal_index[row] = it - a.column_indices.begin();
          }
        const bool gpu =
          use_gpu(e, pcout.get_stream(), "every stage runs on the host");
        if (automatic && pressure)
          choose_for_pressure(LinearSolver::direct);
        else if (automatic && dynamic)
          reason =
            "auto: dynamic runs keep Jacobi-CG, whose iterations the "
            "mass term keeps few" +
            std::string(gpu ? " and whose steps run as device graphs" : "");
        else if (automatic && !gpu)
          reason = "auto: the host path keeps Jacobi-CG, the GPU path's "
                   "reference; the direct solver (UMFPACK) on request";
        else if (automatic)
          {
            linear_solver.solver              = LinearSolver::direct;
            backend_data.direct_may_fall_back = true;
            reason = "auto: quasi-static on one GPU, where a static tangent "
                     "takes CG many iterations";
          }
        if (!gpu)
          backend = make_host_backend(backend_data);
        else if (e.precision == "float")
          backend = make_device_backend<float>(backend_data);
        else
          backend = make_device_backend<double>(backend_data);
        return;
      }

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
    backend_data.exchange_path = e.exchange_path;
    const bool resident =
      e.distributed_linear_algebra == "resident" ||
      (e.distributed_linear_algebra == "auto" && backend_data.use_device);
    // The resident backend has no direct solver: BiCGStab there.
    if (automatic && pressure)
      choose_for_pressure(resident ? LinearSolver::bicgstab_jacobi :
                                     LinearSolver::direct);
    else if (automatic)
      reason = "auto: Jacobi-CG on MPI ranks";
    backend = resident ? make_resident_backend(backend_data) :
                         make_trilinos_backend(backend_data);
  }



  void
  ImplicitSolid::setup_linear_solver()
  {
    const LinearSolver requested = backend_data.linear_solver.solver;
    {
      // The sections of runs with Jacobi-CG stay those they always were.
      std::unique_ptr<TimerOutput::Scope> scope;
      if (requested != LinearSolver::cg_jacobi)
        scope =
          std::make_unique<TimerOutput::Scope>(timer, "Set-up (linear solver)");
      const double t_new =
        std::min(time + parameters.time.time_step, parameters.time.end_time);
      backend->setup_linear_solver(step_loads(t_new));
    }
    // After the linear solver's set-up: it may have fallen back, and its
    // memory counts.
    pcout << "Execution: " << backend->description();
    if (!distributed)
      pcout << "; " << backend->memory_consumption() / (1024 * 1024) << " MiB";
    pcout << std::endl;
    stats.linear_solver      = backend->linear_solver();
    const std::string note   = backend->linear_solver_note();
    std::string      &reason = linear_solver_reason;
    if (parameters.solver.linear_solver == "auto" &&
        stats.linear_solver != requested)
      reason = "auto: " + note;
    else if (!note.empty())
      reason += "; " + note;
    pcout << "Linear solver: " << parameter_value(stats.linear_solver) << " ("
          << reason << ")" << std::endl;
  }



  void
  ImplicitSolid::set_initial_state()
  {
    const auto        u0 = make_vector_function(parameters.initial.displacement,
                                         "Initial conditions/Displacement");
    const auto        v0 = make_vector_function(parameters.initial.velocity,
                                         "Initial conditions/Velocity");
    const std::size_t n_owned = owned_dofs.n_elements();
    std::vector<double> u(n_owned, 0.), v(n_owned, 0.), p(n_owned, 0.);
    std::string         error;
    for (const OwnedNode &node : owned_nodes)
      for (unsigned int c = 0; c < dim && error.empty(); ++c)
        {
          const auto dof = node.dofs[c];
          if (constraints.is_constrained(dof))
            continue;
          const std::size_t i = owned_index(dof);
          u[i]                = u0->value(node.position, c);
          v[i]                = v0->value(node.position, c);
          std::ostringstream where;
          where << node.position;
          if (!std::isfinite(u[i]))
            error = "The entry 'Initial conditions/Displacement' = '" +
                    parameters.initial.displacement + "' is not finite at (" +
                    where.str() + ").";
          else if (!std::isfinite(v[i]))
            error = "The entry 'Initial conditions/Velocity' = '" +
                    parameters.initial.velocity + "' is not finite at (" +
                    where.str() + ").";
        }
    throw_if_any_rank(error);

    // Hanging nodes take the values their lines give (the fixed DoFs
    // zero), so that the state is conforming from the start.
    if (!distributed)
      {
        const GPUAssembly::ConstraintLines lines(adapter.get_arrays());
        GPUAssembly::distribute_constraints(lines, u);
        GPUAssembly::distribute_constraints(lines, v);
      }
    else
      for (std::vector<double> *values : {&u, &v})
        {
          TrilinosWrappers::MPI::Vector owned(owned_dofs, communicator);
          std::copy(values->begin(), values->end(), owned.begin());
          constraints.distribute(owned);
          values->assign(owned.begin(), owned.end());
        }
    for (std::size_t i = 0; i < n_owned; ++i)
      p[i] = backend_data.lumped_mass[i] * v[i];
    // The prescribed displacements at t = 0 (the initial displacement
    // does not set held DoFs).
    for (unsigned int k = 0; k < prescribed_functions.size(); ++k)
      {
        const double value = prescribed_value(k, 0.);
        for (const std::size_t i : prescribed_owned[k])
          u[i] = value;
      }
    const auto [J_min, where] = find_worst_element(u);
    AssertThrow(J_min > 0,
                ExcMessage("The initial displacement inverts " + where +
                           " (J = " + std::to_string(J_min) + ")."));
    backend->set_state(u, p);
  }



  void
  ImplicitSolid::setup()
  {
    GPUAssembly::SetupTimes::Steps steps("ImplicitSolid set-up");
    {
      TimerOutput::Scope scope(timer, "Set-up (mesh, adapter, plan)");
      steps.next("mesh");
      make_grid();
      steps.next("system");
      setup_system();
      steps.next("backend");
      setup_backend();
    }
    {
      steps.next("initial state");
      TimerOutput::Scope scope(timer, "Transfers");
      set_initial_state();
    }
    steps.next("linear solver");
    setup_linear_solver();
    last_loads = loads_at(parameters, *load_function, time, time);
    if (force_trace)
      record_trace(transfer_state().first);
  }



  std::string
  ImplicitSolid::backend_description() const
  {
    return backend->description();
  }



  LinearSolver
  ImplicitSolid::linear_solver() const
  {
    return backend->linear_solver();
  }



  types::global_dof_index
  ImplicitSolid::n_dofs() const
  {
    return dof_handler.n_dofs();
  }



  const GPUAssembly::MeshArrays &
  ImplicitSolid::arrays() const
  {
    return adapter.get_arrays();
  }
} // namespace Hyperelastic
