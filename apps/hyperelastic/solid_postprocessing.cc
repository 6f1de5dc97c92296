// SPDX-License-Identifier: LGPL-2.1-or-later
// ImplicitSolid's postprocessing: the state, energies and momentum for the
// summary and the tests, the cell fields and the worst element for output
// and failure reports, and the VTU/PVTU/PVD output.

#include <deal.II/base/data_out_base.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/parallel.h>
#include <deal.II/base/utilities.h>

#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/trilinos_vector.h>
#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <future>
#include <iomanip>
#include <limits>
#include <memory>
#include <sstream>

#include "../common/app_utilities.h"
#include "boundary_output.h"
#include "implicit_solid.h"
#include "solid_common.h"
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

namespace Hyperelastic
{
  namespace
  {
    // The owned entries @p values with the locally relevant ones.
    void
    make_ghosted(const std::vector<double>     &values,
                 const IndexSet                &owned_dofs,
                 const IndexSet                &relevant_dofs,
                 const MPI_Comm                 communicator,
                 TrilinosWrappers::MPI::Vector &ghosted)
    {
      TrilinosWrappers::MPI::Vector owned(owned_dofs, communicator);
      std::copy(values.begin(), values.end(), owned.begin());
      ghosted.reinit(owned_dofs, relevant_dofs, communicator);
      ghosted = owned;
    }
  } // namespace



  std::pair<std::vector<double>, std::vector<double>>
  ImplicitSolid::state() const
  {
    std::pair<std::vector<double>, std::vector<double>> result;
    backend->get_state(result.first, result.second);
    return result;
  }



  std::pair<std::vector<double>, std::vector<double>>
  ImplicitSolid::transfer_state()
  {
    TimerOutput::Scope scope(timer, "Transfers");
    return state();
  }



  std::vector<ImplicitSolid::NodalState>
  ImplicitSolid::gather_nodal_state(const unsigned int root) const
  {
    const auto [u, p] = state();
    std::vector<double> local;
    local.reserve(owned_nodes.size() * 3 * dim);
    for (const OwnedNode &node : owned_nodes)
      {
        for (unsigned int d = 0; d < dim; ++d)
          local.push_back(node.position[d]);
        for (unsigned int c = 0; c < dim; ++c)
          local.push_back(u[owned_index(node.dofs[c])]);
        for (unsigned int c = 0; c < dim; ++c)
          local.push_back(p[owned_index(node.dofs[c])]);
      }
    const std::vector<std::vector<double>> parts =
      distributed ? Utilities::MPI::gather(communicator, local, root) :
                    std::vector<std::vector<double>>{local};
    std::vector<NodalState> result;
    for (const auto &part : parts)
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
  ImplicitSolid::kinetic_energy() const
  {
    return kinetic_energy(state().second);
  }



  double
  ImplicitSolid::strain_energy() const
  {
    return strain_energy(state().first);
  }



  Tensor<1, ImplicitSolid::dim>
  ImplicitSolid::linear_momentum() const
  {
    return linear_momentum(state().second);
  }



  Tensor<1, ImplicitSolid::dim>
  ImplicitSolid::load_region_displacement() const
  {
    return load_region_displacement(state().first);
  }



  double
  ImplicitSolid::kinetic_energy(const std::vector<double> &p) const
  {
    const std::vector<double> &mass   = backend_data.lumped_mass;
    double                     energy = 0;
    for (unsigned int i = 0; i < p.size(); ++i)
      energy += 0.5 * p[i] * p[i] / mass[i];
    return global_sum(energy);
  }



  Tensor<1, ImplicitSolid::dim>
  ImplicitSolid::linear_momentum(const std::vector<double> &p) const
  {
    Tensor<1, dim> momentum;
    for (const OwnedNode &node : owned_nodes)
      for (unsigned int c = 0; c < dim; ++c)
        momentum[c] += p[owned_index(node.dofs[c])];
    return global_sum(momentum);
  }



  Tensor<1, ImplicitSolid::dim>
  ImplicitSolid::load_region_displacement(const std::vector<double> &u) const
  {
    Tensor<1, dim> sum;
    for (const unsigned int k : loaded_nodes)
      for (unsigned int c = 0; c < dim; ++c)
        sum[c] += u[owned_index(owned_nodes[k].dofs[c])];
    sum = global_sum(sum);
    return n_loaded_nodes == 0 ? sum : sum / double(n_loaded_nodes);
  }



  void
  ImplicitSolid::for_each_cell_gradient(
    const std::vector<double> &u_owned,
    const UpdateFlags          flags,
    const std::function<
      void(const typename DoFHandler<dim>::active_cell_iterator &,
           const FEValues<dim> &,
           const std::vector<Tensor<2, dim>> &)>                      &f,
    const std::vector<typename DoFHandler<dim>::active_cell_iterator> *cells)
    const
  {
    FEValues<dim> fe_values(*mapping, *fe, *quadrature, flags);
    const FEValuesExtractors::Vector displacement(0);
    std::vector<Tensor<2, dim>>      grad_u(quadrature->size());
    const auto                       visit = [&](const auto &u) {
      const auto visit_cell = [&](const auto &cell) {
        fe_values.reinit(cell);
        fe_values[displacement].get_function_gradients(u, grad_u);
        f(cell, fe_values, grad_u);
      };
      if (cells != nullptr)
        for (const auto &cell : *cells)
          visit_cell(cell);
      else
        for (const auto &cell : dof_handler.active_cell_iterators())
          if (cell->is_locally_owned())
            visit_cell(cell);
    };
    if (distributed)
      {
        // The cells' DoFs include ghosts: the locally relevant entries.
        TrilinosWrappers::MPI::Vector u;
        make_ghosted(u_owned, owned_dofs, relevant_dofs, communicator, u);
        visit(u);
      }
    else
      visit(Vector<double>(u_owned.begin(), u_owned.end()));
  }



  void
  ImplicitSolid::for_each_cell_gradient_concurrently(
    const std::vector<double> &u_owned,
    const std::function<
      void(std::size_t,
           const typename DoFHandler<dim>::active_cell_iterator &,
           const double *,
           const std::vector<Tensor<2, dim>> &)> &f) const
  {
    const UpdateFlags flags = update_gradients | update_JxW_values;
    if (distributed)
      {
        std::size_t k = 0;
        for_each_cell_gradient(u_owned,
                               flags,
                               [&](const auto                        &cell,
                                   const FEValues<dim>               &fe_values,
                                   const std::vector<Tensor<2, dim>> &grad_u) {
                                 f(k++,
                                   cell,
                                   fe_values.get_JxW_values().data(),
                                   grad_u);
                               });
        return;
      }
    const Vector<double> u(u_owned.begin(), u_owned.end());
    // The writer's thread and the loop's may both get here first.
    std::call_once(cell_gradient_cache_built, [&]() {
      build_cell_gradient_cache(u);
    });
    const unsigned int n_q = quadrature->size();
    if (cell_gradient_cache)
      {
        const CellGradientCache &cache = *cell_gradient_cache;
        parallel::apply_to_subranges(
          std::size_t(0),
          cache.cells.size(),
          [&](const std::size_t begin, const std::size_t end) {
            std::vector<Tensor<2, dim>> grad_u(n_q);
            for (std::size_t k = begin; k < end; ++k)
              {
                cache.gradients_of(u, k, grad_u);
                f(k, cache.cells[k], &cache.JxW[k * n_q], grad_u);
              }
          },
          64);
        return;
      }

    std::vector<typename DoFHandler<dim>::active_cell_iterator> cells;
    cells.reserve(triangulation->n_active_cells());
    for (const auto &cell : dof_handler.active_cell_iterators())
      cells.push_back(cell);
    parallel::apply_to_subranges(
      std::size_t(0),
      cells.size(),
      [&](const std::size_t begin, const std::size_t end) {
        FEValues<dim> fe_values(*mapping, *fe, *quadrature, flags);
        const FEValuesExtractors::Vector displacement(0);
        std::vector<Tensor<2, dim>>      grad_u(n_q);
        for (std::size_t k = begin; k < end; ++k)
          {
            fe_values.reinit(cells[k]);
            fe_values[displacement].get_function_gradients(u, grad_u);
            f(k, cells[k], fe_values.get_JxW_values().data(), grad_u);
          }
      },
      64);
  }



  void
  ImplicitSolid::build_cell_gradient_cache(const Vector<double> &u) const
  {
    const std::size_t  n_cells = triangulation->n_active_cells();
    const unsigned int n_dofs  = fe->n_dofs_per_cell();
    const unsigned int n_q     = quadrature->size();
    const std::size_t  bytes =
      n_cells * (n_dofs * (n_q * sizeof(Tensor<1, dim>) +
                           sizeof(types::global_dof_index)) +
                 n_q * sizeof(double));
    if (bytes > cell_gradient_cache_limit || !fe->is_primitive())
      return;
    auto cache = std::make_unique<CellGradientCache>();
    cache->cells.reserve(n_cells);
    for (const auto &cell : dof_handler.active_cell_iterators())
      cache->cells.push_back(cell);
    for (unsigned int i = 0; i < n_dofs; ++i)
      cache->components.push_back(fe->system_to_component_index(i).first);
    cache->dofs.resize(n_cells * n_dofs);
    cache->gradients.resize(n_cells * n_dofs * n_q);
    cache->JxW.resize(n_cells * n_q);

    // The same FEValues pass as the one it replaces (subranges of at
    // least 64 cells, a FEValues each), and the gradients of @p u from
    // both compared: a cache that would change a bit is not kept.
    std::atomic<bool> equal{true};
    parallel::apply_to_subranges(
      std::size_t(0),
      n_cells,
      [&](const std::size_t begin, const std::size_t end) {
        FEValues<dim>                        fe_values(*mapping,
                                *fe,
                                *quadrature,
                                update_gradients | update_JxW_values);
        const FEValuesExtractors::Vector     displacement(0);
        std::vector<Tensor<2, dim>>          expected(n_q), grad_u(n_q);
        std::vector<types::global_dof_index> local(n_dofs);
        for (std::size_t k = begin; k < end; ++k)
          {
            const auto &cell = cache->cells[k];
            fe_values.reinit(cell);
            cell->get_dof_indices(local);
            for (unsigned int i = 0; i < n_dofs; ++i)
              {
                cache->dofs[k * n_dofs + i] = local[i];
                for (unsigned int q = 0; q < n_q; ++q)
                  cache->gradients[(k * n_dofs + i) * n_q + q] =
                    fe_values.shape_grad_component(i, q, cache->components[i]);
              }
            for (unsigned int q = 0; q < n_q; ++q)
              cache->JxW[k * n_q + q] = fe_values.JxW(q);
            // The sum the outputs will make, against FEValues'.
            cache->gradients_of(u, k, grad_u);
            fe_values[displacement].get_function_gradients(u, expected);
            for (unsigned int q = 0; q < n_q; ++q)
              for (unsigned int c = 0; c < dim; ++c)
                for (unsigned int d = 0; d < dim; ++d)
                  if (std::memcmp(&grad_u[q][c][d],
                                  &expected[q][c][d],
                                  sizeof(double)) != 0)
                    equal = false;
          }
      },
      64);
    if (equal)
      cell_gradient_cache = std::move(cache);
  }



  void
  ImplicitSolid::CellGradientCache::gradients_of(
    const Vector<double>        &u,
    const std::size_t            k,
    std::vector<Tensor<2, dim>> &grad_u) const
  {
    const unsigned int n_dofs = components.size();
    const unsigned int n_q    = grad_u.size();
    std::fill(grad_u.begin(), grad_u.end(), Tensor<2, dim>());
    for (unsigned int i = 0; i < n_dofs; ++i)
      {
        const double value = u[dofs[k * n_dofs + i]];
        if (value == 0.)
          continue;
        const Tensor<1, dim> *g = &gradients[(k * n_dofs + i) * n_q];
        for (unsigned int q = 0; q < n_q; ++q)
          grad_u[q][components[i]] += value * g[q];
      }
  }



  double
  ImplicitSolid::strain_energy(const std::vector<double> &u) const
  {
    const double       mu     = parameters.material.mu;
    const double       lambda = parameters.material.lambda;
    const unsigned int n_q    = quadrature->size();
    // Each point's term on the task threads, summed in the order of the
    // cells and their points: the sum of one thread, bit for bit.
    std::size_t n_cells = 0;
    for (const auto &cell : triangulation->active_cell_iterators())
      n_cells += cell->is_locally_owned();
    std::vector<double> terms(n_cells * n_q);
    for_each_cell_gradient_concurrently(
      u,
      [&](const std::size_t k,
          const auto &,
          const double                      *JxW,
          const std::vector<Tensor<2, dim>> &grad_u) {
        for (unsigned int q = 0; q < grad_u.size(); ++q)
          {
            const Tensor<2, dim> F = unit_symmetric_tensor<dim>() + grad_u[q];
            terms[k * n_q + q] = strain_energy_density(F, mu, lambda) * JxW[q];
          }
      });
    double energy = 0;
    for (const double term : terms)
      energy += term;
    return global_sum(energy);
  }



  std::pair<double, std::string>
  ImplicitSolid::find_worst_element(const std::vector<double> &u) const
  {
    std::pair<double, std::string> worst(std::numeric_limits<double>::max(),
                                         "");
    for_each_cell_gradient(u,
                           update_gradients,
                           [&](const auto &cell,
                               const FEValues<dim> &,
                               const std::vector<Tensor<2, dim>> &grad_u) {
                             for (unsigned int q = 0; q < grad_u.size(); ++q)
                               {
                                 const double J = determinant(
                                   unit_symmetric_tensor<dim>() + grad_u[q]);
                                 if (J < worst.first || !std::isfinite(J))
                                   {
                                     // On a communicator the index of a cell
                                     // depends on the partition, its id does
                                     // not.
                                     std::ostringstream text;
                                     text << "element ";
                                     if (distributed)
                                       text << cell->id();
                                     else
                                       text << cell->active_cell_index();
                                     text << " (reference centre "
                                          << cell->center() << ')';
                                     worst = {J, text.str()};
                                   }
                               }
                           });
    if (!distributed)
      return worst;
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
  ImplicitSolid::summarize_state(const std::vector<double> &u,
                                 const std::vector<double> &p) const
  {
    // Every rank takes part in the reductions; rank 0 prints.
    double max_u = 0;
    for (const double value : u)
      max_u = std::max(max_u, std::abs(value));
    StateSummary summary;
    summary.max_displacement =
      distributed ? Utilities::MPI::max(max_u, communicator) : max_u;
    summary.kinetic_energy  = kinetic_energy(p);
    summary.strain_energy   = strain_energy(u);
    summary.momentum        = linear_momentum(p);
    summary.has_load_region = !parameters.boundary.load_region.empty;
    if (summary.has_load_region)
      summary.load_region_displacement = load_region_displacement(u);
    print_state_summary(pcout, stats.output_files.back(), summary);
  }



  void
  ImplicitSolid::cell_fields(const std::vector<double> &u_owned,
                             std::vector<double>       &J,
                             std::vector<double>       &von_mises) const
  {
    const unsigned int n_cells = triangulation->n_active_cells();
    J.assign(n_cells, 0.);
    von_mises.assign(n_cells, 0.);
    const double mu     = parameters.material.mu;
    const double lambda = parameters.material.lambda;
    for_each_cell_gradient_concurrently(
      u_owned,
      [&](const std::size_t,
          const auto                        &cell,
          const double                      *JxW_values,
          const std::vector<Tensor<2, dim>> &grad_u) {
        double volume = 0, J_sum = 0, mises_sum = 0;
        for (unsigned int q = 0; q < grad_u.size(); ++q)
          {
            const Tensor<2, dim> F   = unit_symmetric_tensor<dim>() + grad_u[q];
            const double         JxW = JxW_values[q];
            volume += JxW;
            J_sum += determinant(F) * JxW;
            mises_sum += von_mises_stress(F, mu, lambda) * JxW;
          }
        const unsigned int index = cell->active_cell_index();
        J[index]                 = J_sum / volume;
        von_mises[index]         = mises_sum / volume;
      });
  }



  void
  ImplicitSolid::finish_output()
  {
    TimerOutput::Scope scope(timer, "Output");
    if (snapshot_writer)
      snapshot_writer->flush();
  }



  void
  ImplicitSolid::start_output_writers()
  {
    if (snapshot_writer)
      return;
    const auto        &o       = parameters.output;
    const unsigned int n_cells = triangulation->n_active_cells();
    // The mesh is fixed: its geometry is written once, each output
    // converts and compresses the point data on the writer's thread.
    snapshot_writer = std::make_unique<AppUtilities::SnapshotWriter<dim>>(
      std::vector<std::size_t>{dof_handler.n_dofs(),
                               dof_handler.n_dofs(),
                               n_cells,
                               n_cells},
      [this](DataOut<dim> &data_out, const std::vector<Vector<double>> &in) {
        add_displacement_and_velocity(data_out, dof_handler, in[0], in[1]);
        add_J_and_von_mises(data_out, in[2], in[3]);
        data_out.build_patches(*mapping);
      },
      vtk_flags(o));
    boundary_series =
      std::async(std::launch::async, [this, flags = vtk_flags(o)]() {
        return std::shared_ptr<const BoundarySeries>(
          std::make_shared<BoundarySeries>(*mapping,
                                           dof_handler,
                                           parameters.material.mu,
                                           parameters.material.lambda,
                                           flags));
      }).share();
  }



  void
  ImplicitSolid::write_output(const std::vector<double> &u_owned,
                              const std::vector<double> &p_owned)
  {
    TimerOutput::Scope scope(timer, "Output");
    const auto        &o = parameters.output;
    const bool         root =
      !distributed || Utilities::MPI::this_mpi_process(communicator) == 0;
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
      throw_if_any_rank(message);
    }

    std::vector<double> v_owned(p_owned.size());
    for (unsigned int i = 0; i < v_owned.size(); ++i)
      v_owned[i] = p_owned[i] / backend_data.lumped_mass[i];

    const unsigned int n_cells = triangulation->n_active_cells();
    if (!distributed)
      {
        start_output_writers();
        std::ostringstream name;
        name << o.base_name << '-' << std::setw(5) << std::setfill('0')
             << step_number << ".vtu";
        const std::string path    = o.directory + "/" + name.str();
        auto              records = pvd_records;
        records.emplace_back(time, name.str());
        // The series names only files that were written whole: the record
        // follows its file on the writer's thread.
        // J and von Mises stress are computed there too, from the fixed
        // mesh and the state.
        // The boundary's traction and stress: a series of its own, whose
        // records are the volume's with the names of the boundary files,
        // written on the writer's thread after the volume's file, so that a
        // failure is reported as the volume's are.
        const auto boundary_name =
          [base = o.base_name](const std::string &volume_name) {
            return base + "-boundary" + volume_name.substr(base.size());
          };
        auto boundary_records = records;
        for (auto &record : boundary_records)
          record.second = boundary_name(record.second);
        snapshot_writer->write(
          path,
          {u_owned, std::move(v_owned), {}, {}},
          [this,
           pvd = o.directory + "/" + o.base_name + ".pvd",
           records,
           boundary_path = o.directory + "/" + boundary_name(name.str()),
           boundary_pvd  = o.directory + "/" + o.base_name + "-boundary.pvd",
           boundary_records,
           boundary = boundary_series,
           u        = Vector<double>(u_owned.begin(), u_owned.end())]() {
            boundary.get()->write(u, boundary_path);
            AppUtilities::write_file(boundary_pvd, [&](std::ostream &out) {
              DataOutBase::write_pvd_record(out, boundary_records);
            });
            AppUtilities::write_file(pvd, [&](std::ostream &out) {
              DataOutBase::write_pvd_record(out, records);
            });
          },
          [this](std::vector<std::vector<double>> &in) {
            cell_fields(in[0], in[2], in[3]);
          });
        stats.output_files.push_back(path);
        pvd_records = records;
        return;
      }

    std::vector<double> J, von_mises;
    cell_fields(u_owned, J, von_mises);
    const Vector<double> J_cells(J.begin(), J.end()),
      von_mises_cells(von_mises.begin(), von_mises.end());
    // The owning rank, on the rank's cells.
    Vector<float> subdomain(n_cells);
    for (const auto &cell : triangulation->active_cell_iterators())
      if (cell->is_locally_owned())
        subdomain[cell->active_cell_index()] = cell->subdomain_id();

    // DataOut keeps references to the vectors until build_patches().
    TrilinosWrappers::MPI::Vector u_ghosted, v_ghosted;
    make_ghosted(u_owned, owned_dofs, relevant_dofs, communicator, u_ghosted);
    make_ghosted(v_owned, owned_dofs, relevant_dofs, communicator, v_ghosted);
    DataOut<dim> data_out;
    add_displacement_and_velocity(data_out, dof_handler, u_ghosted, v_ghosted);
    add_J_and_von_mises(data_out, J_cells, von_mises_cells);
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
      throw_if_any_rank(message);
    };
    write_collectively([&]() {
      AppUtilities::write_vtu(data_out,
                              vtk_flags(o),
                              o.directory + "/" +
                                piece_name(Utilities::MPI::this_mpi_process(
                                  communicator)));
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

    // The boundary's traction and stress in the same layout, named as on
    // one process: base-boundary_NNNNN.R.vtu, its .pvtu and series.
    const auto boundary_name = [&](const std::string &volume_name) {
      return o.base_name + "-boundary" + volume_name.substr(o.base_name.size());
    };
    auto boundary_records = records;
    for (auto &record : boundary_records)
      record.second = boundary_name(record.second);
    write_boundary_pieces(
      *mapping,
      dof_handler,
      u_ghosted,
      parameters.material.mu,
      parameters.material.lambda,
      [&](const DataOutFaces<dim> &faces) {
        write_collectively([&]() {
          AppUtilities::write_file(
            o.directory + "/" +
              boundary_name(
                piece_name(Utilities::MPI::this_mpi_process(communicator))),
            [&](std::ostream &out) {
              faces.write_vtu(out);
            });
        });
        write_collectively([&]() {
          if (!root)
            return;
          std::vector<std::string> pieces;
          for (unsigned int rank = 0; rank < n_ranks; ++rank)
            pieces.push_back(boundary_name(piece_name(rank)));
          AppUtilities::write_file(o.directory + "/" + boundary_name(pvtu),
                                   [&](std::ostream &out) {
                                     faces.write_pvtu_record(out, pieces);
                                   });
          AppUtilities::write_file(
            o.directory + "/" + o.base_name + "-boundary.pvd",
            [&](std::ostream &out) {
              DataOutBase::write_pvd_record(out, boundary_records);
            });
        });
      });
    stats.output_files.push_back(o.directory + "/" + pvtu);
    pvd_records = records;
  }
} // namespace Hyperelastic
