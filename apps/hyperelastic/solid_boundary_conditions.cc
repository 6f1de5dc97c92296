// SPDX-License-Identifier: LGPL-2.1-or-later
// ImplicitSolid's rollers and prescribed displacements: their regions, the
// prescribed values of a step, the rigid-motion check, the reaction forces
// and the force trace.

#include <deal.II/base/function_parser.h>
#include <deal.II/base/mpi.h>

#include <deal.II/lac/lapack_full_matrix.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "../common/app_utilities.h"
#include "implicit_solid.h"
#include "solid_common.h"

namespace Hyperelastic
{
  namespace
  {
    std::string
    condition_name(const std::string &entry, const std::string &item)
    {
      return entry + " '" + item + "'";
    }
  } // namespace



  void
  ImplicitSolid::setup_component_conditions()
  {
    const Parameters::Boundary &b = parameters.boundary;
    force_regions.clear();
    prescribed_functions.clear();
    prescribed_owned.clear();

    // A region that holds no DoF is a mistake in its entry: refused with
    // the item.
    const auto make_region = [&](const std::string &name,
                                 const HeldDoFs    &held,
                                 const std::string &where) {
      ForceRegion region;
      region.name = name;
      std::unordered_set<types::global_dof_index> dofs;
      for (const auto &[dof, component] : held)
        {
          region.dofs.push_back(dof);
          dofs.insert(dof);
        }
      for (unsigned int k = 0; k < owned_nodes.size(); ++k)
        for (unsigned int c = 0; c < dim; ++c)
          if (dofs.count(owned_nodes[k].dofs[c]) > 0)
            {
              region.nodes.push_back(k);
              break;
            }
      region.n_nodes = global_sum<unsigned int>(region.nodes.size());
      AssertThrow(region.n_nodes > 0,
                  ExcMessage("The " + name + " selects no node " + where +
                             " that an earlier entry ('Fixed boundary ids', "
                             "'Fixed region', a prescribed displacement "
                             "before it, or a hanging node) does not hold "
                             "already. Check the boundary id or the box."));
      return region;
    };

    for (unsigned int k = 0; k < b.prescribed.size(); ++k)
      {
        const PrescribedDisplacement &p    = b.prescribed[k];
        const std::string             item = p.where.text + ": " +
                                 std::string(1, char('x' + p.component)) +
                                 " = " + p.expression;
        force_regions.push_back(
          make_region(condition_name(p.entry, item),
                      component_dofs.prescribed[k],
                      p.where.by_box ? "in its box" : "on its boundary id"));
        auto f = std::make_unique<FunctionParser<1>>(1);
        f->initialize("s,t", p.expression, {{"pi", numbers::PI}}, true);
        prescribed_functions.push_back(std::move(f));
        std::vector<std::size_t> owned;
        for (const auto &[dof, component] : component_dofs.prescribed[k])
          if (owned_dofs.is_element(dof))
            owned.push_back(owned_index(dof));
        prescribed_owned.push_back(owned);
      }
    // The prescribed values enter through the state, not through the
    // constraints' distribution: a hanging DoF would not follow them.
    std::string hanging_error;
    for (unsigned int k = 0; k < b.prescribed.size(); ++k)
      {
        std::unordered_set<types::global_dof_index> held;
        for (const auto &[dof, component] : component_dofs.prescribed[k])
          held.insert(dof);
        for (const auto &line : constraints.get_lines())
          for (const auto &[master, weight] : line.entries)
            if (held.count(master) > 0 && hanging_error.empty())
              hanging_error =
                "The " + force_regions[k].name +
                " holds a node next to a hanging node of the locally "
                "refined mesh, which would not follow the prescribed value. "
                "Set 'Geometry/Local refinement steps' to 0 or move the "
                "refinement away from the region.";
      }
    throw_if_any_rank(hanging_error);

    for (unsigned int k = 0; k < b.rollers.size(); ++k)
      {
        const RollerCondition &r    = b.rollers[k];
        std::string            item = r.where.text + ":";
        for (unsigned int c = 0; c < dim; ++c)
          if (r.components[c])
            item += std::string(item.back() == ':' ? " " : ", ") +
                    std::string(1, char('x' + c));
        force_regions.push_back(
          make_region(condition_name(r.entry, item),
                      component_dofs.rollers[k],
                      r.where.by_box ? "in its box" : "on its boundary id"));
      }

    // The fixed boundary: the held DoFs no other region claims.
    std::unordered_set<types::global_dof_index> claimed;
    for (const ForceRegion &region : force_regions)
      claimed.insert(region.dofs.begin(), region.dofs.end());
    ForceRegion fixed;
    fixed.name = "Fixed boundary";
    std::unordered_set<types::global_dof_index> fixed_dofs;
    for (const auto &line : constraints.get_lines())
      if (line.entries.empty() && claimed.count(line.index) == 0)
        {
          fixed.dofs.push_back(line.index);
          fixed_dofs.insert(line.index);
        }
    for (unsigned int k = 0; k < owned_nodes.size(); ++k)
      if (fixed_dofs.count(owned_nodes[k].dofs[0]) > 0)
        fixed.nodes.push_back(k);
    fixed.n_nodes = global_sum<unsigned int>(fixed.nodes.size());
    if (fixed.n_nodes > 0)
      force_regions.push_back(fixed);

    // The nodal load, where there is one.
    bool has_load = false;
    for (const double f : b.load)
      has_load = has_load || f != 0;
    if (has_load && n_loaded_nodes > 0)
      {
        ForceRegion load;
        load.name    = "Load region";
        load.is_load = true;
        load.nodes   = loaded_nodes;
        load.n_nodes = n_loaded_nodes;
        force_regions.push_back(load);
      }

    const std::string &trace = parameters.output.force_trace;
    force_trace =
      trace == "true" || (trace == "auto" && b.has_component_conditions());
    if (!b.prescribed.empty())
      {
        curve_region    = 0;
        curve_component = b.prescribed[0].component;
      }
    else if (has_load && n_loaded_nodes > 0)
      curve_region = force_regions.size() - 1;

    force_cells.clear();
    regions_of.clear();
    for (unsigned int r = 0; r < force_regions.size(); ++r)
      for (const types::global_dof_index dof : force_regions[r].dofs)
        regions_of[dof].push_back(r);
    held_node_dofs.clear();
    for (const OwnedNode &node : owned_nodes)
      for (unsigned int c = 0; c < dim; ++c)
        if (const auto found = regions_of.find(node.dofs[c]);
            found != regions_of.end())
          for (const unsigned int r : found->second)
            held_node_dofs.push_back({node.dofs[c], c, r});
    const auto in_region = [&](const types::global_dof_index dof) {
      if (regions_of.count(dof) > 0)
        return true;
      if (const auto *entries = constraints.get_constraint_entries(dof))
        for (const auto &entry : *entries)
          if (regions_of.count(entry.first) > 0)
            return true;
      return false;
    };
    std::vector<types::global_dof_index> dofs(fe->n_dofs_per_cell());
    for (const auto &cell : dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          cell->get_dof_indices(dofs);
          if (std::any_of(dofs.begin(), dofs.end(), in_region))
            force_cells.push_back(cell);
        }
  }



  double
  ImplicitSolid::prescribed_value(const unsigned int k, const double t) const
  {
    prescribed_functions[k]->set_time(t);
    const double value = prescribed_functions[k]->value(Point<1>());
    const PrescribedDisplacement &p = parameters.boundary.prescribed[k];
    AssertThrow(std::isfinite(value),
                ExcMessage("The entry '" + p.entry + "' has '" + p.expression +
                           "', which is not finite at t = " +
                           AppUtilities::significant(t) + " s."));
    return value;
  }



  void
  ImplicitSolid::set_prescribed_values(const double         t_new,
                                       std::vector<double> &u,
                                       std::vector<double> &p) const
  {
    const double dt = t_new - time;
    for (unsigned int k = 0; k < prescribed_functions.size(); ++k)
      {
        const double value = prescribed_value(k, t_new);
        for (const std::size_t i : prescribed_owned[k])
          if (dynamic)
            p[i] = backend_data.lumped_mass[i] * (value - u[i]) / dt;
          else
            u[i] = value;
      }
  }



  void
  ImplicitSolid::check_rigid_motions() const
  {
    // The Gram matrix of the functionals (a, w) -> (a + w x X)_c of the
    // held DoFs, w scaled by the diameter so that both parts weigh alike.
    std::vector<double> gram(36, 0.);
    for (const OwnedNode &node : owned_nodes)
      for (unsigned int c = 0; c < dim; ++c)
        if (is_held(node.dofs[c]))
          {
            Tensor<1, dim> e;
            e[c] = 1;
            const Tensor<1, dim> rotation =
              cross_product_3d(node.position, e) / diameter;
            double g[6];
            for (unsigned int d = 0; d < dim; ++d)
              {
                g[d]       = e[d];
                g[dim + d] = rotation[d];
              }
            for (unsigned int i = 0; i < 6; ++i)
              for (unsigned int j = 0; j < 6; ++j)
                gram[6 * i + j] += g[i] * g[j];
          }
    if (distributed)
      {
        const std::vector<double> local = gram;
        Utilities::MPI::sum(make_array_view(local),
                            communicator,
                            make_array_view(gram));
      }
    LAPACKFullMatrix<double> matrix(6);
    for (unsigned int i = 0; i < 6; ++i)
      for (unsigned int j = 0; j < 6; ++j)
        matrix(i, j) = gram[6 * i + j];
    matrix.compute_eigenvalues();
    double smallest = std::numeric_limits<double>::max(), largest = 0;
    for (unsigned int i = 0; i < 6; ++i)
      {
        smallest = std::min(smallest, std::abs(matrix.eigenvalue(i)));
        largest  = std::max(largest, std::abs(matrix.eigenvalue(i)));
      }
    AssertThrow(largest > 0 && smallest > 1e-10 * largest,
                ExcMessage(
                  "In 'Time/Mode' = quasi-static nothing but the held "
                  "displacement components hold the body, but those of "
                  "'Boundary conditions/Fixed boundary ids', 'Fixed "
                  "region', 'Rollers', 'Roller regions', 'Prescribed "
                  "displacements' and 'Prescribed displacement regions' "
                  "leave a rigid motion (a translation or a rotation) "
                  "free: the stiffness matrix would be singular. Hold "
                  "more components, for example rollers on three "
                  "symmetry planes x = 0, y = 0 and z = 0."));
  }



  std::vector<ImplicitSolid::RegionForce>
  ImplicitSolid::region_forces() const
  {
    return region_forces(state().first);
  }



  std::vector<ImplicitSolid::RegionForce>
  ImplicitSolid::region_forces(const std::vector<double> &u) const
  {
    // The reaction at a held DoF: the internal force minus the body
    // force and the nodal load, assembled cell by cell as the backends do
    // (the same quadrature), each cell on the rank that owns it; only the
    // cells of force_cells contribute.
    std::vector<RegionForce> forces(force_regions.size());
    const double             mu     = parameters.material.mu;
    const double             lambda = parameters.material.lambda;
    Tensor<1, dim>           body_force;
    for (unsigned int d = 0; d < dim; ++d)
      body_force[d] =
        last_loads.body_force_factor * parameters.material.body_force[d];
    std::vector<types::global_dof_index> dofs(fe->n_dofs_per_cell());
    for_each_cell_gradient(
      u,
      update_values | update_gradients | update_JxW_values,
      [&](const auto                        &cell,
          const FEValues<dim>               &fe_values,
          const std::vector<Tensor<2, dim>> &grad_u) {
        cell->get_dof_indices(dofs);
        // The regions each DoF's force goes to, with its weight: a
        // hanging DoF's to those of its line's DoFs.
        std::vector<std::vector<std::pair<unsigned int, double>>> targets(
          dofs.size());
        for (unsigned int i = 0; i < dofs.size(); ++i)
          {
            const auto add = [&](const types::global_dof_index dof,
                                 const double                  weight) {
              if (const auto found = regions_of.find(dof);
                  found != regions_of.end())
                for (const unsigned int r : found->second)
                  targets[i].emplace_back(r, weight);
            };
            add(dofs[i], 1.);
            if (const auto *entries =
                  constraints.get_constraint_entries(dofs[i]))
              for (const auto &[master, weight] : *entries)
                add(master, weight);
          }
        std::vector<Tensor<2, dim>> P(grad_u.size());
        for (unsigned int q = 0; q < grad_u.size(); ++q)
          {
            const Tensor<2, dim> F = unit_symmetric_tensor<dim>() + grad_u[q];
            const Tensor<2, dim> F_inv_T = transpose(invert(F));
            P[q] =
              mu * (F - F_inv_T) + lambda * std::log(determinant(F)) * F_inv_T;
          }
        for (unsigned int i = 0; i < dofs.size(); ++i)
          {
            if (targets[i].empty())
              continue;
            const unsigned int c = fe->system_to_component_index(i).first;
            double             f = 0;
            for (unsigned int q = 0; q < grad_u.size(); ++q)
              f += (P[q][c] * fe_values.shape_grad_component(i, q, c) -
                    body_force[c] * fe_values.shape_value_component(i, q, c)) *
                   fe_values.JxW(q);
            for (const auto &[r, weight] : targets[i])
              forces[r].force[c] += weight * f;
          }
      },
      &force_cells);

    // A nodal load on a held DoF acts on its support.
    const double load_amplitude = last_loads.load_amplitude;
    for (const HeldNodeDoF &held : held_node_dofs)
      forces[held.region].force[held.component] -=
        load_amplitude * backend_data.load_pattern[owned_index(held.dof)];

    for (unsigned int r = 0; r < force_regions.size(); ++r)
      {
        const ForceRegion &region = force_regions[r];
        forces[r].name            = region.name;
        if (region.is_load)
          for (unsigned int c = 0; c < dim; ++c)
            forces[r].force[c] = load_amplitude * parameters.boundary.load[c];
        else
          forces[r].force = global_sum(forces[r].force);
        Tensor<1, dim> sum;
        for (const unsigned int k : region.nodes)
          for (unsigned int c = 0; c < dim; ++c)
            sum[c] += u[owned_index(owned_nodes[k].dofs[c])];
        forces[r].mean_displacement = global_sum(sum) / double(region.n_nodes);
      }
    return forces;
  }
} // namespace Hyperelastic



namespace Hyperelastic
{
  void
  ImplicitSolid::record_trace(const std::vector<double> &u)
  {
    std::vector<double> row = {double(step_number), time};
    for (const RegionForce &f : region_forces(u))
      for (const Tensor<1, dim> &v : {f.force, f.mean_displacement})
        for (unsigned int c = 0; c < dim; ++c)
          row.push_back(v[c]);
    trace_rows.push_back(row);
  }



  void
  ImplicitSolid::write_trace() const
  {
    if (!force_trace || trace_rows.empty())
      return;
    // Written by the first rank: every rank holds the same rows.
    if (distributed && Utilities::MPI::this_mpi_process(communicator) != 0)
      return;
    const std::string &directory = parameters.output.directory;
    std::string        header    = "step, time (s)";
    TraceFigure        figure;
    figure.title         = "Forces on the boundary conditions against time (s)";
    figure.legend_offset = 670;
    for (unsigned int r = 0; r < force_regions.size(); ++r)
      {
        const std::string &name = force_regions[r].name;
        header +=
          ", " + name +
          (force_regions[r].is_load ? ": applied force" : ": reaction force") +
          " fx, fy, fz (N), mean displacement ux, uy, uz (m)";
        const unsigned int first = 2 + 6 * r;
        figure.panels.push_back(
          {name.substr(0, 24) + " (N)", {first, first + 1, first + 2}});
      }
    write_trace_files(directory, "trace", header, trace_rows, figure);
    pcout << "Force trace: " << directory << "/trace.csv, trace.png";
    if (curve_region != numbers::invalid_unsigned_int)
      pcout << "; force/displacement curve: " << directory
            << "/force_displacement.csv, force_displacement.png";
    pcout << std::endl;

    if (curve_region == numbers::invalid_unsigned_int)
      return;
    // The force/displacement curve: the driven region's force against its
    // displacement along the driven component (the load's direction for
    // the load region).
    const ForceRegion &region = force_regions[curve_region];
    const unsigned int first  = 2 + 6 * curve_region;
    Tensor<1, dim>     direction;
    if (region.is_load)
      for (unsigned int c = 0; c < dim; ++c)
        direction[c] = parameters.boundary.load[c];
    else
      direction[curve_component] = 1;
    direction /= direction.norm();
    std::vector<std::vector<double>> rows;
    for (const auto &row : trace_rows)
      {
        double displacement = 0;
        for (unsigned int c = 0; c < dim; ++c)
          displacement += direction[c] * row[first + 3 + c];
        rows.push_back({row[0],
                        row[1],
                        displacement,
                        row[first],
                        row[first + 1],
                        row[first + 2]});
      }
    std::ostringstream what;
    what << "step, time (s), mean displacement of the " << region.name
         << " along (" << direction << ") (m), its "
         << (region.is_load ? "applied" : "reaction")
         << " force fx, fy, fz (N)";
    TraceFigure curve;
    curve.title         = "Force against displacement (m) of the driven region";
    curve.legend_offset = 680;
    curve.x_column      = 2;
    curve.panels        = {{"force (N)", {3, 4, 5}}};
    write_trace_files(directory, "force_displacement", what.str(), rows, curve);
  }
} // namespace Hyperelastic
