// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/mpi.h>
#include <deal.II/base/parallel.h>
#include <deal.II/base/thread_management.h>

#include <deal.II/distributed/shared_tria.h>
#include <deal.II/distributed/tria_base.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/sparsity_tools.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/distributed/distributed_adapter.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "../adapter/discretization_checks.h"
#include "../adapter/shared_steps.h"
#include "../base/first_touch.h"

namespace GPUAssembly
{
  namespace
  {
    template <int dim>
    void
    check_distributed_triangulation(const dealii::Triangulation<dim> &tria)
    {
      using namespace dealii;
      AssertThrow(
        dynamic_cast<const parallel::shared::Triangulation<dim> *>(&tria) ==
          nullptr,
        ExcUnsupportedInput(
          "parallel::shared::Triangulation is not supported by the "
          "distributed adapter; use a parallel::distributed::Triangulation "
          "(p4est) or a parallel::fullydistributed::Triangulation."));
      AssertThrow(
        dynamic_cast<const parallel::DistributedTriangulationBase<dim> *>(
          &tria) != nullptr,
        ExcUnsupportedInput(
          "the triangulation is not distributed; DistributedDoFHandlerAdapter "
          "needs a parallel::distributed::Triangulation (p4est) or a "
          "parallel::fullydistributed::Triangulation. Use DoFHandlerAdapter "
          "for a serial Triangulation."));
      AssertThrow(tria.n_global_active_cells() > 0,
                  ExcUnsupportedInput("the triangulation has no cells."));
      AssertThrow(tria.get_reference_cells().size() == 1,
                  ExcUnsupportedInput(
                    "the triangulation mixes " +
                    std::to_string(tria.get_reference_cells().size()) +
                    " cell types; all cells must be of one type."));
    }



  } // namespace



  template <int dim>
  DistributedDoFHandlerAdapter<dim>::DistributedDoFHandlerAdapter(
    const dealii::Mapping<dim>              &mapping,
    const dealii::DoFHandler<dim>           &dof_handler,
    const dealii::Quadrature<dim>           &quadrature,
    const dealii::AffineConstraints<double> &constraints,
    const AdditionalData                    &additional_data)
  {
    reinit(mapping, dof_handler, quadrature, constraints, additional_data);
  }



  template <int dim>
  void
  DistributedDoFHandlerAdapter<dim>::reinit(
    const dealii::Mapping<dim>              &mapping,
    const dealii::DoFHandler<dim>           &dof_handler,
    const dealii::Quadrature<dim>           &quadrature,
    const dealii::AffineConstraints<double> &constraints,
    const AdditionalData                    &additional_data)
  {
    using namespace dealii;
    const Triangulation<dim> &tria = dof_handler.get_triangulation();
    check_distributed_triangulation(tria);
    internal::check_discretization(dof_handler, quadrature);
    const FiniteElement<dim> &fe   = dof_handler.get_fe();
    const FiniteElement<dim> &base = fe.base_element(0);
    AssertThrow(additional_data.supplemental_format !=
                  SupplementalDataFormat::compressed_edge_matrix,
                ExcUnsupportedInput(
                  "the compressed_edge_matrix format of the supplemental "
                  "data is not offered for distributed meshes; use "
                  "quadrature_gradients or inverse_edge_matrix."));
    const bool edge_matrix_format = additional_data.supplemental_format ==
                                    SupplementalDataFormat::inverse_edge_matrix;
    AssertThrow(!edge_matrix_format ||
                  (base.reference_cell().is_simplex() && base.degree == 1),
                ExcUnsupportedInput(
                  "the inverse-edge-matrix format of the supplemental data "
                  "exists only for linear simplices, not for " +
                  fe.get_name() + "."));
    AssertThrow(constraints.is_closed(),
                ExcUnsupportedInput(
                  "the AffineConstraints object is not closed; call "
                  "constraints.close() after adding all constraints."));

    SetupTimes::Steps steps("distributed adapter");
    steps.next("relevant DoFs");
    communicator  = tria.get_communicator();
    owned_dofs    = dof_handler.locally_owned_dofs();
    relevant_dofs = DoFTools::extract_locally_relevant_dofs(dof_handler);
    // IndexSet compresses itself on first use: done here, before threads
    // read them.
    relevant_dofs.compress();

    // The constraints must hold the lines of all DoFs of the rank's cells
    // (step-40 makes them on the locally relevant DoFs); lines are looked up
    // for these DoFs only.
    const IndexSet &constraint_lines = constraints.get_local_lines();
    AssertThrow(constraint_lines.size() == 0 ||
                  (relevant_dofs & constraint_lines).n_elements() ==
                    relevant_dofs.n_elements(),
                ExcUnsupportedInput(
                  "the AffineConstraints object does not store the lines of "
                  "all locally relevant DoFs; make it with "
                  "constraints.reinit(locally_relevant_dofs) as in step-40."));

    // The owned cells, in the order of the active cell iterators: element
    // e of the arrays.
    steps.next("owned cells");
    std::vector<typename DoFHandler<dim>::active_cell_iterator> cells;
    for (const auto &cell : dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        cells.push_back(cell);

    const unsigned int n_cell_dofs = fe.n_dofs_per_cell();
    const unsigned int n_c         = fe.n_components();
    const unsigned int n_en        = base.n_dofs_per_cell();
    const std::size_t  nonzero_map_size =
      cells.size() * n_cell_dofs * n_cell_dofs;
    AssertThrow(
      nonzero_map_size <
        static_cast<std::size_t>(std::numeric_limits<index_type>::max()),
      ExcUnsupportedInput(
        "the rank's part of the mesh is too large for 32-bit element data "
        "indices."));

    // K(e, d1, d2) is the largest array. Its pages are first touched in
    // parallel, but its zero-fill that std::vector requires runs on one
    // thread: it is sized by a task of its own while the other arrays are
    // built, as in DoFHandlerAdapter (the task is waited for, also on an
    // exception, before the vector goes out of scope: it is declared
    // first).
    std::vector<index_type> nonzero_map;
    Threads::Task<void>     size_nonzero_map = Threads::new_task([&]() {
      SetupTimes::Scope scope("distributed adapter: nonzero map sizing (task)");
      internal::assign_first_touched_in_parallel(nonzero_map, nonzero_map_size);
    });

    // The DoFs of every cell (cell e's from e * n_cell_dofs), in parallel
    // over the cells: each writes its own part.
    steps.next("cell DoFs");
    std::vector<types::global_dof_index> cell_dofs(cells.size() * n_cell_dofs);
    parallel::apply_to_subranges(
      std::size_t(0),
      cells.size(),
      [&](const std::size_t begin, const std::size_t end) {
        std::vector<types::global_dof_index> dofs(n_cell_dofs);
        for (std::size_t e = begin; e < end; ++e)
          {
            cells[e]->get_dof_indices(dofs);
            std::copy(dofs.begin(),
                      dofs.end(),
                      cell_dofs.begin() + e * n_cell_dofs);
          }
      },
      256);

    // The rank's DoFs: those of its cells and the DoFs their constraint
    // lines refer to, in increasing order. The DoFs of owned cells are
    // locally relevant: they are marked at their place in relevant_dofs (in
    // parallel; every thread stores the same value), so that no sort of all
    // cell DoFs is needed. Constraint entries outside relevant_dofs (e.g. of
    // periodicity) are merged in separately.
    steps.next("local DoFs");
    const std::size_t n_relevant = relevant_dofs.n_elements();
    std::unique_ptr<std::atomic<std::uint8_t>[]> is_local(
      new std::atomic<std::uint8_t>[n_relevant]());
    parallel::apply_to_subranges(
      std::size_t(0),
      cell_dofs.size(),
      [&](const std::size_t begin, const std::size_t end) {
        for (std::size_t i = begin; i < end; ++i)
          {
            const types::global_dof_index k =
              relevant_dofs.index_within_set(cell_dofs[i]);
            Assert(k < n_relevant, ExcInternalError());
            is_local[k].store(1, std::memory_order_relaxed);
          }
      },
      4096);
    std::vector<types::global_dof_index> other_dofs;
    {
      // Only lines of the cells' DoFs add entries: those marked so far.
      std::vector<types::global_dof_index> entry_dofs;
      for (const auto &line : constraints.get_lines())
        {
          const types::global_dof_index k =
            relevant_dofs.index_within_set(line.index);
          if (k == numbers::invalid_dof_index ||
              is_local[k].load(std::memory_order_relaxed) != 1)
            continue;
          for (const auto &entry : line.entries)
            entry_dofs.push_back(entry.first);
        }
      for (const types::global_dof_index dof : entry_dofs)
        {
          const types::global_dof_index k = relevant_dofs.index_within_set(dof);
          if (k == numbers::invalid_dof_index)
            other_dofs.push_back(dof);
          else
            is_local[k].store(2, std::memory_order_relaxed);
        }
      std::sort(other_dofs.begin(), other_dofs.end());
      other_dofs.erase(std::unique(other_dofs.begin(), other_dofs.end()),
                       other_dofs.end());
    }
    // relevant_to_local: the local number of each marked relevant DoF.
    std::vector<index_type> relevant_to_local(n_relevant, invalid_index);
    {
      std::vector<types::global_dof_index> dofs;
      std::size_t                          k     = 0;
      auto                                 other = other_dofs.begin();
      for (const types::global_dof_index dof : relevant_dofs)
        {
          if (is_local[k].load(std::memory_order_relaxed) != 0)
            {
              while (other != other_dofs.end() && *other < dof)
                dofs.push_back(*other++);
              relevant_to_local[k] = dofs.size();
              dofs.push_back(dof);
            }
          ++k;
        }
      dofs.insert(dofs.end(), other, other_dofs.end());
      is_local.reset();
      AssertThrow(dofs.size() < static_cast<std::size_t>(
                                  std::numeric_limits<index_type>::max()),
                  ExcUnsupportedInput("the rank has more DoFs than 32-bit "
                                      "indices can address."));
      local_dof_set = IndexSet(dof_handler.n_dofs());
      local_dof_set.add_indices(dofs.begin(), dofs.end());
      local_dof_set.compress();
      local_to_global = std::move(dofs);
    }
    // The local number of a DoF of the rank: through its place in
    // relevant_dofs, else a search in the sorted local DoFs. Called from
    // several threads at once below.
    const auto to_local = [&](const types::global_dof_index dof) {
      const types::global_dof_index k = relevant_dofs.index_within_set(dof);
      if (k != numbers::invalid_dof_index)
        {
          Assert(relevant_to_local[k] != invalid_index, ExcInternalError());
          return relevant_to_local[k];
        }
      const auto position =
        std::lower_bound(local_to_global.begin(), local_to_global.end(), dof);
      Assert(position != local_to_global.end() && *position == dof,
             ExcInternalError());
      return static_cast<index_type>(position - local_to_global.begin());
    };

    MeshArrays a;
    a.n_elements = cells.size();
    a.n_dofs     = local_to_global.size();
    internal::set_element_layout(fe,
                                 quadrature,
                                 additional_data.keep_constrained_dofs,
                                 additional_data.supplemental_format,
                                 a);
    const ElementLayout &layout = a.layout;

    // The constraints of the local DoFs in the local numbering. Closed
    // constraints refer only to unconstrained DoFs, so the copy is closed
    // too; close() sorts it. The lines are those of the stored lines that
    // belong to local DoFs, in increasing order as the local DoFs.
    steps.next("constraints");
    AffineConstraints<double> local_constraints;
    for (const auto &line : constraints.get_lines())
      {
        const types::global_dof_index dof = line.index;
        if (!local_dof_set.is_element(dof))
          continue;
        const index_type i = to_local(dof);
        local_constraints.add_line(i);
        for (const auto &[entry, weight] : line.entries)
          {
            AssertThrow(std::isfinite(weight),
                        ExcUnsupportedInput(
                          "the constraint of DoF " + std::to_string(dof) +
                          " has a non-finite weight for DoF " +
                          std::to_string(entry) + "."));
            local_constraints.add_entry(i, to_local(entry), weight);
          }
        local_constraints.set_inhomogeneity(i, line.inhomogeneity);
      }
    local_constraints.close();
    // Read in the local numbering from the object the local pattern is
    // made from, so that pattern and arrays come from one source.
    internal::read_constraints(local_constraints, a);

    // L(e, .), S(e) and the support points of the element's nodes, in
    // parallel over the elements with FEValues of each subrange's own; the
    // values are those of a serial loop, whatever the threads.
    steps.next("elements");
    a.location.resize(static_cast<std::size_t>(a.n_elements) * n_cell_dofs);
    a.supplemental.resize(static_cast<std::size_t>(a.n_elements) *
                          a.n_supplemental);
    std::vector<Point<dim>> element_points(
      static_cast<std::size_t>(a.n_elements) * n_en);
    const Quadrature<dim> support_quadrature(base.get_unit_support_points());
    struct Scratch
    {
      FEValues<dim>                        fe_values;
      FEValues<dim>                        support_values;
      std::vector<types::global_dof_index> local_cell_dofs;
    };
    internal::for_element_ranges(
      a.n_elements,
      [&]() {
        return Scratch{FEValues<dim>(mapping,
                                     base,
                                     quadrature,
                                     update_gradients | update_jacobians),
                       FEValues<dim>(mapping,
                                     base,
                                     support_quadrature,
                                     update_quadrature_points),
                       std::vector<types::global_dof_index>(n_cell_dofs)};
      },
      [&](Scratch &scratch, const unsigned int e) {
        const auto &cell = cells[e];
        for (unsigned int i = 0; i < n_cell_dofs; ++i)
          scratch.local_cell_dofs[i] = to_local(cell_dofs[e * n_cell_dofs + i]);
        for (unsigned int n = 0; n < n_en; ++n)
          for (unsigned int c = 0; c < n_c; ++c)
            a.location[static_cast<std::size_t>(e) * n_cell_dofs + n * n_c +
                       c] =
              scratch.local_cell_dofs[fe.component_to_system_index(c, n)];
        const typename Triangulation<dim>::cell_iterator tria_cell(cell);
        FEValues<dim> &fe_values = scratch.fe_values;
        fe_values.reinit(tria_cell);
        for (unsigned int q = 0; q < layout.n_q_points; ++q)
          {
            const double det = fe_values.jacobian(q).determinant();
            AssertThrow(det > 0.,
                        ExcUnsupportedInput(
                          "cell " + cell->id().to_string() +
                          " is inverted or degenerate: the Jacobian "
                          "determinant at quadrature point " +
                          std::to_string(q) + " is " + std::to_string(det) +
                          "."));
          }
        double *const S = a.supplemental.data() +
                          static_cast<std::size_t>(e) * a.n_supplemental;
        if (edge_matrix_format)
          {
            const Tensor<2, dim> edges = internal::edge_matrix<dim>(cell);
            const double         det   = determinant(edges);
            AssertThrow(det > 0.,
                        ExcUnsupportedInput(
                          "cell " + cell->id().to_string() +
                          " is inverted or degenerate: its edge matrix has "
                          "determinant " +
                          std::to_string(det) + "."));
            internal::fill_inverse_edge_matrix(edges, det, S);
          }
        else
          internal::fill_quadrature_gradients(fe_values, quadrature, n_en, S);
        scratch.support_values.reinit(tria_cell);
        for (unsigned int n = 0; n < n_en; ++n)
          element_points[static_cast<std::size_t>(e) * n_en + n] =
            scratch.support_values.quadrature_point(n);
      });

    // Nodes follow the local DoFs of component 0, as the serial adapter's
    // follow the global ones. A node's DoFs and coordinates are those of its
    // last cell, as in the serial adapter (cells sharing a node may map its
    // support point to coordinates that differ in the last bits); the
    // support points were mapped in the loop above, on every cell, so a
    // serial pass over the elements places them.
    steps.next("nodes");
    internal::number_nodes(a);
    a.node_dofs.assign(static_cast<std::size_t>(a.n_nodes) * n_c,
                       invalid_index);
    a.nodal_coordinates.resize(static_cast<std::size_t>(a.n_nodes) * dim);
    for (std::size_t e = 0; e < cells.size(); ++e)
      for (unsigned int n = 0; n < n_en; ++n)
        {
          const std::size_t node = a.connectivity[e * n_en + n];
          for (unsigned int c = 0; c < n_c; ++c)
            a.node_dofs[node * n_c + c] =
              a.location[e * n_cell_dofs + n * n_c + c];
          const Point<dim> &x = element_points[e * n_en + n];
          for (unsigned int k = 0; k < dim; ++k)
            a.nodal_coordinates[node * dim + k] = x[k];
        }
    std::vector<Point<dim>>().swap(element_points);

    // The CSR pattern: from the node graph (in parallel) where every
    // constraint is Dirichlet-like, otherwise deal.II's
    // add_entries_local_to_global() cell by cell, which also couples the
    // DoFs that constraint lines refer to.
    steps.next("pattern");
    if (internal::constraints_are_dirichlet(local_constraints))
      internal::make_pattern_from_node_graph(internal::node_to_elements(a), a);
    else
      {
        DynamicSparsityPattern               dsp(a.n_dofs);
        std::vector<types::global_dof_index> local_cell_dofs(n_cell_dofs);
        for (std::size_t e = 0; e < cells.size(); ++e)
          {
            std::copy(a.location.begin() + e * n_cell_dofs,
                      a.location.begin() + (e + 1) * n_cell_dofs,
                      local_cell_dofs.begin());
            local_constraints.add_entries_local_to_global(
              local_cell_dofs,
              dsp,
              a.keep_constrained_dofs);
          }
        internal::copy_pattern(dsp, "the rank's sparsity pattern", a);
      }

    // K(e, d1, d2), in parallel over the elements.
    steps.next("nonzero map sizing (wait)");
    size_nonzero_map.join();
    a.nonzero_map = std::move(nonzero_map);
    steps.next("nonzero map");
    internal::fill_nonzero_map(a);

    arrays = std::move(a);
  }



  template <int dim>
  void
  DistributedDoFHandlerAdapter<dim>::make_sparsity_pattern(
    dealii::DynamicSparsityPattern &dsp) const
  {
    SetupTimes::Steps steps("distributed adapter pattern");
    steps.next("local rows");
    dsp.reinit(owned_dofs.size(), owned_dofs.size(), local_dof_set);
    std::vector<dealii::types::global_dof_index> columns;
    for (unsigned int row = 0; row < arrays.n_dofs; ++row)
      {
        columns.clear();
        for (index_type k = arrays.row_offsets[row];
             k < arrays.row_offsets[row + 1];
             ++k)
          columns.push_back(local_to_global[arrays.column_indices[k]]);
        dsp.add_entries(local_to_global[row],
                        columns.begin(),
                        columns.end(),
                        true);
      }
    steps.next("distribute");
    dealii::SparsityTools::distribute_sparsity_pattern(dsp,
                                                       owned_dofs,
                                                       communicator,
                                                       local_dof_set);
  }
} // namespace GPUAssembly



namespace GPUAssembly
{
  template class DistributedDoFHandlerAdapter<2>;
  template class DistributedDoFHandlerAdapter<3>;
} // namespace GPUAssembly
