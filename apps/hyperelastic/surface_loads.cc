// SPDX-License-Identifier: LGPL-2.1-or-later
// The surface loads: the boundary faces they act on, their data from
// deal.II's FEFaceValues, and the pressure forces and load stiffness on
// the host.

#include "surface_loads.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/numbers.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/trilinos_vector.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <sstream>
#include <tuple>

#include "../common/app_utilities.h"
#include "surface_load_setup.h"

namespace Hyperelastic
{
  using namespace dealii;

  namespace
  {
    void
    initialize_time_function(FunctionParser<1> &function,
                             const std::string &expression,
                             const std::string &entry)
    {
      try
        {
          function.initialize("s,t", expression, {{"pi", numbers::PI}}, true);
        }
      catch (...)
        {
          AssertThrow(false,
                      ExcMessage("The entry 'Surface loads/" + entry + "' = '" +
                                 expression +
                                 "' is not a valid expression of t."));
        }
    }

    double
    finite_value(FunctionParser<1> &function,
                 const double       t,
                 const std::string &expression,
                 const std::string &entry)
    {
      function.set_time(t);
      const double value = function.value(Point<1>());
      AssertThrow(std::isfinite(value),
                  ExcMessage("The entry 'Surface loads/" + entry + "' = '" +
                             expression + "' is not finite at t = " +
                             AppUtilities::significant(t) + " s."));
      return value;
    }

    /// The DoFs and weights a force on @p dof acts on: itself, the DoFs
    /// of its line (a hanging node), or none (a held DoF).
    std::vector<std::pair<types::global_dof_index, double>>
    condensed(const AffineConstraints<double> &constraints,
              const types::global_dof_index    dof)
    {
      if (!constraints.is_constrained(dof))
        return {{dof, 1.}};
      std::vector<std::pair<types::global_dof_index, double>> targets;
      if (const auto *entries = constraints.get_constraint_entries(dof))
        for (const auto &[master, weight] : *entries)
          targets.emplace_back(master, weight);
      return targets;
    }
  } // namespace



  void
  pressure_face_forces(const SurfaceLoadData &data,
                       const unsigned int     face,
                       const double          *u,
                       const double           pressure,
                       double                *force,
                       double                *stiffness)
  {
    const unsigned int n   = data.n_cell_dofs;
    const unsigned int n_q = data.n_face_q_points;
    const std::size_t  fq  = std::size_t(face) * n_q;
    for (unsigned int j = 0; j < n; ++j)
      pressure_face_column(n,
                           n_q,
                           data.dof_components.data(),
                           &data.cell_dofs[std::size_t(face) * n],
                           &data.shape_values[fq * n],
                           &data.shape_gradients[fq * n * 3],
                           &data.area_vectors[fq * 3],
                           u,
                           pressure,
                           j,
                           force[j],
                           stiffness);
  }



  void
  add_pressure_loads(const SurfaceLoadData &data,
                     const double          *u,
                     const double           pressure,
                     const double           force_scale,
                     const double           stiffness_scale,
                     double                *residual,
                     double                *matrix_values)
  {
    for_each_pressure_entry(
      data,
      u,
      pressure,
      [&](const unsigned int k, const double force) {
        residual[data.force_rows[k]] +=
          force_scale * data.force_weights[k] * force;
      },
      [&](const unsigned int k, const double stiffness) {
        matrix_values[data.stiffness_positions[k]] -=
          stiffness_scale * data.stiffness_weights[k] * stiffness;
      });
  }



  namespace
  {
    /// Entries (target, source, weight) grouped by target, ascending, each
    /// target's entries in the order given.
    SurfaceLoadGather
    make_gather(
      std::vector<std::tuple<std::size_t, unsigned int, double>> entries)
    {
      std::stable_sort(entries.begin(),
                       entries.end(),
                       [](const auto &a, const auto &b) {
                         return std::get<0>(a) < std::get<0>(b);
                       });
      SurfaceLoadGather gather;
      for (std::size_t k = 0; k < entries.size(); ++k)
        {
          const auto &[target, source, weight] = entries[k];
          if (k == 0 || target != std::get<0>(entries[k - 1]))
            {
              gather.targets.push_back(static_cast<unsigned int>(target));
              gather.offsets.push_back(static_cast<unsigned int>(k));
            }
          gather.sources.push_back(source);
          gather.weights.push_back(weight);
        }
      gather.offsets.push_back(static_cast<unsigned int>(entries.size()));
      return gather;
    }
  } // namespace



  std::vector<unsigned int>
  pressure_force_sources(const SurfaceLoadData &data)
  {
    std::vector<unsigned int> sources(data.force_local.size());
    for (unsigned int f = 0; f < data.n_pressure_faces; ++f)
      for (unsigned int k = data.force_offsets[f];
           k < data.force_offsets[f + 1];
           ++k)
        sources[k] = f * data.n_cell_dofs + data.force_local[k];
    return sources;
  }



  std::vector<unsigned int>
  pressure_stiffness_sources(const SurfaceLoadData &data)
  {
    const unsigned int        n = data.n_cell_dofs;
    std::vector<unsigned int> sources(data.stiffness_local_i.size());
    for (unsigned int f = 0; f < data.n_pressure_faces; ++f)
      for (unsigned int k = data.stiffness_offsets[f];
           k < data.stiffness_offsets[f + 1];
           ++k)
        sources[k] =
          (f * n + data.stiffness_local_i[k]) * n + data.stiffness_local_j[k];
    return sources;
  }



  SurfaceLoadGather
  pressure_force_gather(const SurfaceLoadData &data)
  {
    const std::vector<unsigned int> sources = pressure_force_sources(data);
    std::vector<std::tuple<std::size_t, unsigned int, double>> entries;
    for (std::size_t k = 0; k < sources.size(); ++k)
      entries.emplace_back(data.force_rows[k],
                           sources[k],
                           data.force_weights[k]);
    return make_gather(std::move(entries));
  }



  SurfaceLoadGather
  pressure_stiffness_gather(const SurfaceLoadData &data)
  {
    const std::vector<unsigned int> sources = pressure_stiffness_sources(data);
    std::vector<std::tuple<std::size_t, unsigned int, double>> entries;
    for (std::size_t k = 0; k < sources.size(); ++k)
      entries.emplace_back(data.stiffness_positions[k],
                           sources[k],
                           data.stiffness_weights[k]);
    return make_gather(std::move(entries));
  }



  std::vector<unsigned int>
  SurfaceStepGather::nodes() const
  {
    std::vector<unsigned int> result;
    for (const unsigned int target : targets)
      result.push_back(target % node_stride);
    std::sort(result.begin(), result.end());
    result.erase(std::unique(result.begin(), result.end()), result.end());
    return result;
  }



  SurfaceStepGather
  surface_step_gather(const SurfaceLoadData &data,
                      const unsigned int     node_stride)
  {
    // The pressure's gather and the traction's nonzero entries, merged by
    // target.
    const SurfaceLoadGather pressure = pressure_force_gather(data);
    SurfaceStepGather       gather;
    gather.node_stride = node_stride;
    gather.offsets.push_back(0);
    const std::size_t n_entries = data.traction_pattern.size();
    std::size_t       p = 0, i = 0;
    const std::size_t n_pressure =
      data.has_pressure() ? pressure.targets.size() : 0;
    while (p < n_pressure || i < n_entries)
      {
        if (i < n_entries && data.traction_pattern[i] == 0.)
          {
            ++i;
            continue;
          }
        const std::size_t target =
          p < n_pressure ?
            (i < n_entries ? std::min<std::size_t>(pressure.targets[p], i) :
                             pressure.targets[p]) :
            i;
        gather.targets.push_back(target);
        gather.traction.push_back(
          i < n_entries && i == target ? data.traction_pattern[i] : 0.);
        if (i == target)
          ++i;
        if (p < n_pressure && pressure.targets[p] == target)
          {
            for (unsigned int k = pressure.offsets[p];
                 k < pressure.offsets[p + 1];
                 ++k)
              {
                gather.sources.push_back(pressure.sources[k]);
                gather.weights.push_back(pressure.weights[k]);
              }
            ++p;
          }
        gather.offsets.push_back(gather.sources.size());
      }
    return gather;
  }



  BoundaryFaces
  select_boundary_faces(const DoFHandler<3>             &dof_handler,
                        const std::vector<unsigned int> &boundary_ids,
                        const Box                       &region,
                        const double                     tolerance)
  {
    BoundaryFaces faces;
    for (const auto &cell : dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        for (const unsigned int f : cell->face_indices())
          {
            if (!cell->at_boundary(f))
              continue;
            const auto face = cell->face(f);
            bool       selected =
              std::find(boundary_ids.begin(),
                        boundary_ids.end(),
                        face->boundary_id()) != boundary_ids.end();
            if (!selected && !region.empty)
              {
                selected = true;
                for (const unsigned int v : face->vertex_indices())
                  selected =
                    selected && region.contains(face->vertex(v), tolerance);
              }
            if (selected)
              faces.emplace_back(cell, f);
          }
    return faces;
  }



  SurfaceLoadFaces
  select_surface_load_faces(const DoFHandler<3>            &dof_handler,
                            const Parameters::SurfaceLoads &entries,
                            const double                    tolerance)
  {
    const auto select = [&](const bool                       active,
                            const std::vector<unsigned int> &ids,
                            const Box                       &region,
                            const std::string               &name) {
      if (!active)
        return BoundaryFaces();
      BoundaryFaces faces =
        select_boundary_faces(dof_handler, ids, region, tolerance);
      std::ostringstream id_list;
      for (unsigned int i = 0; i < ids.size(); ++i)
        id_list << (i > 0 ? ", " : "") << ids[i];
      AssertThrow(
        Utilities::MPI::sum<unsigned int>(faces.size(),
                                          dof_handler.get_communicator()) > 0,
        ExcMessage("'Surface loads/" + name + " boundary ids' = '" +
                   id_list.str() + "' and 'Surface loads/" + name +
                   " region' = '" + (region.empty ? std::string() : "a box") +
                   "' select no boundary face of the mesh, so the " + name +
                   " would act nowhere."));
      return faces;
    };
    SurfaceLoadFaces faces;
    faces.traction = select(entries.has_traction(),
                            entries.traction_boundary_ids,
                            entries.traction_region,
                            "Traction");
    faces.pressure = select(entries.has_pressure(),
                            entries.pressure_boundary_ids,
                            entries.pressure_region,
                            "Pressure");
    return faces;
  }



  namespace
  {
    /**
     * Where make_surface_load_data()'s numbers go: @p add_traction(row,
     * force) receives each share of the traction's nodal forces, @p
     * cell_dof(dof) gives the index by which a cell's DoF value is read,
     * @p add_stiffness_target(row, column) records where a stiffness entry
     * goes (if empty, no stiffness entries are made).
     */
    struct SurfaceLoadTargets
    {
      std::function<void(types::global_dof_index, double)> add_traction;
      std::function<unsigned int(types::global_dof_index)> cell_dof;
      std::function<void(types::global_dof_index, types::global_dof_index)>
        add_stiffness_target;
    };

    /// The surface loads' data of make_surface_load_data() into @p data,
    /// indexed by @p targets.
    void
    fill_surface_load_data(const Mapping<3>                &mapping,
                           const DoFHandler<3>             &dof_handler,
                           const AffineConstraints<double> &constraints,
                           const BoundaryFaces             &traction_faces,
                           const Tensor<1, 3>              &traction,
                           const BoundaryFaces             &pressure_faces,
                           const SurfaceLoadTargets        &targets,
                           SurfaceLoadData                 &data)
    {
      if (traction_faces.empty() && pressure_faces.empty())
        return;
      const FiniteElement<3> &fe = dof_handler.get_fe();
      const unsigned int      n  = fe.n_dofs_per_cell();
      const Quadrature<2>     face_quadrature =
        fe.reference_cell().is_simplex() ? Quadrature<2>(QGaussSimplex<2>(2)) :
                                               Quadrature<2>(QGauss<2>(2));
      FEFaceValues<3>                      fe_face_values(mapping,
                                     fe,
                                     face_quadrature,
                                     update_values | update_gradients |
                                       update_normal_vectors |
                                       update_JxW_values);
      const unsigned int                   n_q = face_quadrature.size();
      std::vector<types::global_dof_index> dofs(n);

      for (const auto &[cell, f] : traction_faces)
        {
          fe_face_values.reinit(cell, f);
          cell->get_dof_indices(dofs);
          for (unsigned int i = 0; i < n; ++i)
            {
              const unsigned int c = fe.system_to_component_index(i).first;
              double             nodal_force = 0;
              for (unsigned int q = 0; q < n_q; ++q)
                nodal_force += fe_face_values.shape_value(i, q) * traction[c] *
                               fe_face_values.JxW(q);
              for (const auto &[row, weight] : condensed(constraints, dofs[i]))
                targets.add_traction(row, weight * nodal_force);
            }
        }

      if (pressure_faces.empty())
        return;
      data.n_pressure_faces = pressure_faces.size();
      data.n_cell_dofs      = n;
      data.n_face_q_points  = n_q;
      for (unsigned int i = 0; i < n; ++i)
        data.dof_components.push_back(fe.system_to_component_index(i).first);
      data.force_offsets.push_back(0);
      data.stiffness_offsets.push_back(0);
      for (const auto &[cell, f] : pressure_faces)
        {
          fe_face_values.reinit(cell, f);
          cell->get_dof_indices(dofs);
          for (unsigned int i = 0; i < n; ++i)
            data.cell_dofs.push_back(targets.cell_dof(dofs[i]));
          for (unsigned int q = 0; q < n_q; ++q)
            {
              for (unsigned int i = 0; i < n; ++i)
                data.shape_values.push_back(fe_face_values.shape_value(i, q));
              for (unsigned int i = 0; i < n; ++i)
                for (unsigned int d = 0; d < 3; ++d)
                  data.shape_gradients.push_back(
                    fe_face_values.shape_grad(i, q)[d]);
              for (unsigned int d = 0; d < 3; ++d)
                data.area_vectors.push_back(fe_face_values.normal_vector(q)[d] *
                                            fe_face_values.JxW(q));
            }

          // A row's force is nonzero only where its shape function is on
          // the face; every column of the cell enters through F.
          std::vector<bool> on_face(n, false);
          for (unsigned int i = 0; i < n; ++i)
            for (unsigned int q = 0; q < n_q; ++q)
              on_face[i] = on_face[i] || fe_face_values.shape_value(i, q) != 0.;
          std::vector<std::vector<std::pair<types::global_dof_index, double>>>
            lines(n);
          for (unsigned int i = 0; i < n; ++i)
            lines[i] = condensed(constraints, dofs[i]);
          for (unsigned int i = 0; i < n; ++i)
            if (on_face[i])
              for (const auto &[row, weight] : lines[i])
                {
                  data.force_local.push_back(i);
                  data.force_rows.push_back(row);
                  data.force_weights.push_back(weight);
                  if (!targets.add_stiffness_target)
                    continue;
                  for (unsigned int j = 0; j < n; ++j)
                    for (const auto &[column, column_weight] : lines[j])
                      {
                        data.stiffness_local_i.push_back(i);
                        data.stiffness_local_j.push_back(j);
                        targets.add_stiffness_target(row, column);
                        data.stiffness_weights.push_back(weight *
                                                         column_weight);
                      }
                }
          data.force_offsets.push_back(data.force_local.size());
          data.stiffness_offsets.push_back(data.stiffness_local_i.size());
        }
    }
  } // namespace



  SurfaceLoadData
  make_surface_load_data(const Mapping<3>                &mapping,
                         const DoFHandler<3>             &dof_handler,
                         const AffineConstraints<double> &constraints,
                         const GPUAssembly::MeshArrays   &arrays,
                         const BoundaryFaces             &traction_faces,
                         const Tensor<1, 3>              &traction,
                         const BoundaryFaces             &pressure_faces)
  {
    SurfaceLoadData data;
    if (!traction_faces.empty())
      data.traction_pattern.assign(arrays.n_dofs, 0.);
    SurfaceLoadTargets targets;
    targets.add_traction = [&](const types::global_dof_index row,
                               const double                  force) {
      data.traction_pattern[row] += force;
    };
    targets.cell_dof = [](const types::global_dof_index dof) {
      return static_cast<unsigned int>(dof);
    };
    targets.add_stiffness_target = [&](const types::global_dof_index row,
                                       const types::global_dof_index column) {
      const auto begin =
        arrays.column_indices.begin() + arrays.row_offsets[row];
      const auto end =
        arrays.column_indices.begin() + arrays.row_offsets[row + 1];
      const auto it = std::lower_bound(begin, end, int(column));
      AssertThrow(it != end && *it == int(column),
                  ExcInternalError("The sparsity pattern lacks an entry "
                                   "that couples two DoFs of a cell."));
      data.stiffness_positions.push_back(it - arrays.column_indices.begin());
    };
    fill_surface_load_data(mapping,
                           dof_handler,
                           constraints,
                           traction_faces,
                           traction,
                           pressure_faces,
                           targets,
                           data);
    return data;
  }



  SurfaceLoadData
  make_vertex_surface_load_data(const Mapping<3>    &mapping,
                                const DoFHandler<3> &dof_handler,
                                const BoundaryFaces &traction_faces,
                                const Tensor<1, 3>  &traction,
                                const BoundaryFaces &pressure_faces,
                                const unsigned int   node_stride)
  {
    std::vector<unsigned int> entry(dof_handler.n_dofs(),
                                    numbers::invalid_unsigned_int);
    for (const auto &cell : dof_handler.active_cell_iterators())
      for (const unsigned int k : cell->vertex_indices())
        for (unsigned int d = 0; d < 3; ++d)
          entry[cell->vertex_dof_index(k, d)] =
            d * node_stride + cell->vertex_index(k);
    AssertThrow(std::find(entry.begin(),
                          entry.end(),
                          numbers::invalid_unsigned_int) == entry.end(),
                ExcInternalError("The explicit integrator's surface loads "
                                 "need an element with vertex DoFs only."));

    SurfaceLoadData data;
    if (!traction_faces.empty())
      data.traction_pattern.assign(3 * std::size_t(node_stride), 0.);
    SurfaceLoadTargets targets;
    targets.add_traction = [&](const types::global_dof_index row,
                               const double                  force) {
      data.traction_pattern[entry[row]] += force;
    };
    targets.cell_dof = [&](const types::global_dof_index dof) {
      return entry[dof];
    };
    // No add_stiffness_target: no load stiffness is recorded.
    AffineConstraints<double> none;
    none.close();
    fill_surface_load_data(mapping,
                           dof_handler,
                           none,
                           traction_faces,
                           traction,
                           pressure_faces,
                           targets,
                           data);
    for (unsigned int &row : data.force_rows)
      row = entry[row];
    data.load_stiffness = false;
    return data;
  }



  SurfaceLoadData
  make_distributed_surface_load_data(
    const Mapping<3>                &mapping,
    const DoFHandler<3>             &dof_handler,
    const AffineConstraints<double> &constraints,
    const IndexSet                  &relevant_dofs,
    const bool                       has_traction,
    const BoundaryFaces             &traction_faces,
    const Tensor<1, 3>              &traction,
    const BoundaryFaces             &pressure_faces)
  {
    SurfaceLoadData                      data;
    std::vector<types::global_dof_index> traction_rows;
    std::vector<double>                  traction_forces;
    SurfaceLoadTargets                   targets;
    targets.add_traction = [&](const types::global_dof_index row,
                               const double                  force) {
      traction_rows.push_back(row);
      traction_forces.push_back(force);
    };
    targets.cell_dof = [&](const types::global_dof_index dof) {
      AssertThrow(relevant_dofs.is_element(dof),
                  ExcInternalError("A DoF of a locally owned cell is not "
                                   "locally relevant."));
      return static_cast<unsigned int>(relevant_dofs.index_within_set(dof));
    };
    targets.add_stiffness_target = [&](const types::global_dof_index row,
                                       const types::global_dof_index column) {
      data.stiffness_rows.push_back(row);
      data.stiffness_columns.push_back(column);
    };
    fill_surface_load_data(mapping,
                           dof_handler,
                           constraints,
                           traction_faces,
                           traction,
                           pressure_faces,
                           targets,
                           data);
    if (has_traction)
      {
        // A face's share may belong to another rank: compress(add) takes
        // it there.
        TrilinosWrappers::MPI::Vector pattern(dof_handler.locally_owned_dofs(),
                                              dof_handler.get_communicator());
        pattern.add(traction_rows, traction_forces);
        pattern.compress(VectorOperation::add);
        data.traction_pattern.assign(pattern.begin(), pattern.end());
      }
    return data;
  }



  SurfaceLoadAmplitudes::SurfaceLoadAmplitudes(
    const Parameters::SurfaceLoads &entries)
    : entries(entries)
  {
    initialize_time_function(traction,
                             entries.traction_time_function,
                             "Traction time function");
    initialize_time_function(pressure,
                             entries.pressure_time_function,
                             "Pressure time function");
  }



  void
  SurfaceLoadAmplitudes::set(const bool   dynamic,
                             const double time,
                             const double t_new,
                             StepLoads   &loads)
  {
    const double t           = dynamic ? 0.5 * (time + t_new) : t_new;
    loads.traction_amplitude = entries.has_traction() ?
                                 finite_value(traction,
                                              t,
                                              entries.traction_time_function,
                                              "Traction time function") :
                                 0.;
    loads.pressure =
      entries.has_pressure() ?
        entries.pressure * finite_value(pressure,
                                        t,
                                        entries.pressure_time_function,
                                        "Pressure time function") :
        0.;
  }
} // namespace Hyperelastic
