// SPDX-License-Identifier: LGPL-2.1-or-later
// HyperelasticSolid's set-up: the mesh, the finite element, the fixed
// DoFs, the lumped mass and the load pattern, the plugin's arrays, the
// backend and the initial state.

#include <deal.II/base/function_parser.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_renumbering.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/grid/mesh_input.h>
#include <gpu_assembly/lac/device_constraints.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "../common/app_utilities.h"
#include "bar_mesh.h"
#include "host_backend.h"
#include "hyperelastic_solid.h"
#include "solid_common.h"

namespace Hyperelastic
{
  namespace
  {
    // check_fixed_dofs() on the counts of the whole mesh.
    void
    check_constraints(const Parameters                &parameters,
                      const Triangulation<3>          &triangulation,
                      const GPUAssembly::MeshArrays   &a,
                      const AffineConstraints<double> &constraints,
                      const std::vector<unsigned int> &loaded_nodes,
                      const bool                       has_load,
                      const ConditionalOStream        &pcout)
    {
      constexpr int dim = 3;
      // A hanging DoF is not held: it moves with the DoFs of its line, and
      // a load on it goes to them.
      const auto held = [&](const unsigned int dof) {
        return a.dof_is_constrained[dof] != 0 &&
               !std::binary_search(a.constraint_line_dofs.begin(),
                                   a.constraint_line_dofs.end(),
                                   static_cast<GPUAssembly::index_type>(dof));
      };

      FixedDoFCounts counts;
      count_boundary_faces(triangulation, parameters.boundary, counts);
      counts.n_constrained  = constraints.n_constraints();
      counts.n_dofs         = a.n_dofs;
      counts.n_loaded_nodes = loaded_nodes.size();
      for (const unsigned int n : loaded_nodes)
        {
          bool free = false;
          for (unsigned int c = 0; c < dim; ++c)
            free = free || (parameters.boundary.load[c] != 0 &&
                            !held(a.node_dofs[n * dim + c]));
          counts.n_free_loaded_nodes += free;
        }
      if (parameters.time.mode != "dynamic")
        {
          for (unsigned int n = 0; n < a.n_nodes; ++n)
            if (held(a.node_dofs[n * dim]))
              counts.fixed_nodes.emplace_back(a.nodal_coordinates[n * dim],
                                              a.nodal_coordinates[n * dim + 1],
                                              a.nodal_coordinates[n * dim + 2]);
          counts.diameter = mesh_diameter(triangulation);
        }
      check_fixed_dofs(parameters, counts, has_load, pcout);
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
    check_bar_memory(g);
    if (const std::string dropped = make_mesh(g, triangulation);
        !dropped.empty())
      pcout << dropped << std::endl;
    refine_near_clamp_and_load();
    pcout << "Mesh: " << triangulation.n_active_cells() << ' '
          << (triangulation.all_reference_cells_are_simplex() ? "tetrahedra" :
                                                                "hexahedra")
          << ", " << triangulation.n_vertices() << " vertices"
          << (g.mesh_file.empty() ? " (built-in bar)" :
                                    " (from " + g.mesh_file + ")")
          << (triangulation.has_hanging_nodes() ?
                ", " + std::to_string(g.local_refinement_steps) +
                  " local refinement steps (hanging nodes)" :
                "")
          << std::endl;
  }



  void
  HyperelasticSolid::refine_near_clamp_and_load()
  {
    const unsigned int steps = parameters.geometry.local_refinement_steps;
    if (steps == 0)
      return;
    AssertThrow(triangulation.all_reference_cells_are_hyper_cube(),
                ExcMessage("'Local refinement steps' is " +
                           std::to_string(steps) +
                           ", but the mesh is not made of hexahedra only; "
                           "deal.II refines tetrahedral meshes only globally. "
                           "Set it to 0 or use hexahedra ('Cell type')."));
    const auto &b = parameters.boundary;
    for (unsigned int step = 0; step < steps; ++step)
      {
        const double tolerance = 1e-10 * mesh_diameter(triangulation);
        unsigned int n_flagged = 0;
        for (const auto &cell : triangulation.active_cell_iterators())
          if (is_near_clamp_or_load(cell, b, tolerance))
            {
              cell->set_refine_flag();
              ++n_flagged;
            }
        AssertThrow(n_flagged > 0,
                    ExcMessage("'Local refinement steps' is " +
                               std::to_string(steps) +
                               ", but no cell touches the fixed faces, the "
                               "'Fixed region' or the 'Load region'."));
        triangulation.execute_coarsening_and_refinement();
      }
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

    Discretization discretization = make_discretization(simplex);
    fe                            = std::move(discretization.fe);
    mapping                       = std::move(discretization.mapping);
    quadrature                    = std::move(discretization.quadrature);
    const Quadrature<dim> &mass_quadrature = discretization.mass_quadrature;
    dof_handler.reinit(triangulation);
    dof_handler.distribute_dofs(*fe);
    DoFRenumbering::Cuthill_McKee(dof_handler);

    constraints.clear();
    const double tolerance = 1e-10 * mesh_diameter(triangulation);
    make_fixed_constraints(*mapping,
                           dof_handler,
                           parameters.boundary,
                           triangulation.get_boundary_ids(),
                           tolerance,
                           constraints);

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

    // A DoF constrained to others (a hanging node) moves with them: its
    // load and its inertia act on the DoFs of its line, with the line's
    // weights (the rows of C^T M C summed, which keeps the total mass). Its
    // own mass stays, so that its momentum keeps giving its velocity.
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
    distribute_to_lines(backend_data.lumped_mass, true);

    // The scripted load: shared equally by the nodes of the load region.
    backend_data.load_pattern.assign(a.n_dofs, 0.);
    loaded_nodes.clear();
    for (unsigned int n = 0; n < a.n_nodes; ++n)
      if (parameters.boundary.load_region.contains(
            Point<dim>(a.nodal_coordinates[n * dim],
                       a.nodal_coordinates[n * dim + 1],
                       a.nodal_coordinates[n * dim + 2]),
            tolerance))
        loaded_nodes.push_back(n);
    const auto &load = parameters.boundary.load;
    const bool  has_load =
      check_load_region(parameters.boundary, loaded_nodes.size());
    for (const unsigned int n : loaded_nodes)
      for (unsigned int c = 0; c < dim; ++c)
        backend_data.load_pattern[a.node_dofs[n * dim + c]] =
          load[c] / loaded_nodes.size();
    check_constraints(parameters,
                      triangulation,
                      a,
                      constraints,
                      loaded_nodes,
                      has_load,
                      pcout);
    distribute_to_lines(backend_data.load_pattern, false);
    load_function = make_load_function(parameters);

    check_load_function(parameters,
                        *load_function,
                        !loaded_nodes.empty(),
                        has_load,
                        pcout);

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
          << ", fixed DoFs: "
          << constraints.n_constraints() - a.n_constraint_lines()
          << (a.n_constraint_lines() > 0 ?
                ", hanging DoFs: " + std::to_string(a.n_constraint_lines()) :
                "")
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
    std::vector<double> u(a.n_dofs, 0.), v(a.n_dofs, 0.), p(a.n_dofs, 0.);
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
            v[dof] = v0->value(X, c);
            std::ostringstream where;
            where << X;
            AssertThrow(std::isfinite(u[dof]),
                        ExcMessage("The entry 'Initial conditions/"
                                   "Displacement' = '" +
                                   parameters.initial.displacement +
                                   "' is not finite at (" + where.str() +
                                   ")."));
            AssertThrow(std::isfinite(v[dof]),
                        ExcMessage("The entry 'Initial conditions/Velocity' "
                                   "= '" +
                                   parameters.initial.velocity +
                                   "' is not finite at (" + where.str() +
                                   ")."));
          }
      }
    // Hanging nodes take the values their lines give (the fixed DoFs
    // zero), so that the state is conforming from the start.
    const GPUAssembly::ConstraintLines lines(a);
    GPUAssembly::distribute_constraints(lines, u);
    GPUAssembly::distribute_constraints(lines, v);
    for (unsigned int i = 0; i < a.n_dofs; ++i)
      p[i] = backend_data.lumped_mass[i] * v[i];
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



  std::string
  HyperelasticSolid::backend_description() const
  {
    return backend->description();
  }
} // namespace Hyperelastic
