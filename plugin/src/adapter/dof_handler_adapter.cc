// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/parallel.h>
#include <deal.II/base/thread_management.h>

#include <deal.II/distributed/shared_tria.h>
#include <deal.II/distributed/tria_base.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_fe.h>

#include <deal.II/lac/sparsity_tools.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/adapter/sorted_pattern.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/base/setup_times.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "../base/first_touch.h"

// DoFHandlerAdapter::reinit() in steps: the checks of the input, the cells
// the process owns, its DoFs and their local numbers (all DoFs, numbered as
// deal.II does, on a serial triangulation), the constraints, then the
// arrays element by element, node by node, the pattern and K(e, d1, d2).

namespace GPUAssembly
{
  namespace
  {
    // ---- Checks of the input ------------------------------------------

    // The plugin's kernels work on a scalar Lagrange base element repeated
    // n_components times; everything else is refused here, before any
    // array is built, with the element's name in the message.
    template <int dim>
    void
    check_finite_element(const dealii::FiniteElement<dim> &fe)
    {
      AssertThrow(fe.n_base_elements() == 1,
                  ExcUnsupportedInput(
                    "the finite element " + fe.get_name() +
                    " combines different base elements; only FE_Q or "
                    "FE_SimplexP, alone or as an FESystem of copies of one "
                    "of them, are supported."));
      const dealii::FiniteElement<dim> &base = fe.base_element(0);
      const bool                        is_lagrange =
        dynamic_cast<const dealii::FE_Q<dim> *>(&base) != nullptr ||
        dynamic_cast<const dealii::FE_SimplexP<dim> *>(&base) != nullptr;
      AssertThrow(is_lagrange && base.n_components() == 1,
                  ExcUnsupportedInput(
                    "the finite element " + fe.get_name() +
                    " is not built on FE_Q or FE_SimplexP; only these "
                    "Lagrange elements are supported."));
      AssertThrow(base.degree == 1 || base.degree == 2,
                  ExcUnsupportedInput("the finite element " + fe.get_name() +
                                      " has degree " +
                                      std::to_string(base.degree) +
                                      "; only degrees 1 and 2 are supported."));
    }



    // The triangulations DoFTools takes for a DoFHandler of one process's
    // cells: serial ones and those whose cells are distributed over the
    // ranks (parallel::distributed, parallel::fullydistributed).
    // parallel::shared keeps all cells on every rank but numbers DoFs by
    // subdomain, which the local numbering does not follow.
    template <int dim>
    void
    check_triangulation(const dealii::Triangulation<dim> &tria)
    {
      using namespace dealii;
      AssertThrow(dynamic_cast<const parallel::shared::Triangulation<dim> *>(
                    &tria) == nullptr,
                  ExcUnsupportedInput(
                    "parallel::shared::Triangulation is not supported by "
                    "DoFHandlerAdapter; use a serial Triangulation, a "
                    "parallel::distributed::Triangulation (p4est) or a "
                    "parallel::fullydistributed::Triangulation."));
      AssertThrow(tria.n_global_active_cells() > 0,
                  ExcUnsupportedInput("the triangulation has no cells."));
      AssertThrow(tria.get_reference_cells().size() == 1,
                  ExcUnsupportedInput(
                    "the triangulation mixes " +
                    std::to_string(tria.get_reference_cells().size()) +
                    " cell types; all cells must be of one type."));
    }



    /**
     * Refuse with ExcUnsupportedInput, naming what was found, a DoFHandler
     * without DoFs or with several elements (hp), a finite element other
     * than FE_Q or FE_SimplexP of degree 1 or 2 (alone or as an FESystem of
     * copies of one), an element for another cell type than the
     * triangulation's, and a quadrature rule for another reference cell.
     */
    template <int dim>
    void
    check_discretization(const dealii::DoFHandler<dim> &dof_handler,
                         const dealii::Quadrature<dim> &quadrature)
    {
      using namespace dealii;
      const Triangulation<dim> &tria = dof_handler.get_triangulation();
      // Before distribute_dofs() the FE collection is empty, so this check
      // must come before the one for hp DoFHandlers.
      AssertThrow(dof_handler.get_fe_collection().size() > 0 &&
                    dof_handler.n_dofs() > 0,
                  ExcUnsupportedInput(
                    "the DoFHandler has no degrees of "
                    "freedom; call distribute_dofs() first."));
      AssertThrow(dof_handler.get_fe_collection().size() == 1,
                  ExcUnsupportedInput(
                    "the DoFHandler uses several finite elements (hp); only "
                    "one element for all cells is supported."));
      const FiniteElement<dim> &fe = dof_handler.get_fe();
      check_finite_element(fe);
      const FiniteElement<dim> &base = fe.base_element(0);
      AssertThrow(base.reference_cell() == tria.get_reference_cells()[0],
                  ExcUnsupportedInput("the finite element " + fe.get_name() +
                                      " does not match the cell type of the "
                                      "triangulation."));
      AssertThrow(quadrature.size() > 0,
                  ExcUnsupportedInput("the quadrature rule is empty."));
      // FEValues accepts a rule for another cell type (QGauss with
      // FE_SimplexP, say) without complaint and integrates the wrong domain.
      {
        const ReferenceCell reference_cell = base.reference_cell();
        double              weight_sum     = 0.;
        for (unsigned int q = 0; q < quadrature.size(); ++q)
          {
            AssertThrow(
              reference_cell.contains_point(quadrature.point(q), 1e-12),
              ExcUnsupportedInput(
                "quadrature point " + std::to_string(q) +
                " lies outside the reference cell of " + fe.get_name() +
                "; the quadrature rule must be one for this cell type "
                "(QGaussSimplex for simplices, QGauss for hypercubes)."));
            weight_sum += quadrature.weight(q);
          }
        AssertThrow(std::abs(weight_sum - reference_cell.volume()) <=
                      1e-10 * reference_cell.volume(),
                    ExcUnsupportedInput(
                      "the quadrature weights sum to " +
                      std::to_string(weight_sum) + ", not to the volume " +
                      std::to_string(reference_cell.volume()) +
                      " of the reference cell of " + fe.get_name() +
                      "; the quadrature rule must be one for this cell type "
                      "(QGaussSimplex for simplices, QGauss for "
                      "hypercubes)."));
      }
    }



    template <int dim>
    void
    check_supplemental_format(const dealii::FiniteElement<dim> &fe,
                              const SupplementalDataFormat      format)
    {
      const dealii::FiniteElement<dim> &base = fe.base_element(0);
      AssertThrow(format == SupplementalDataFormat::quadrature_gradients ||
                    (base.reference_cell().is_simplex() && base.degree == 1),
                  ExcUnsupportedInput(
                    "the inverse-edge-matrix format of the supplemental data "
                    "exists only for linear simplices, not for " +
                    fe.get_name() + "."));
    }



    // Every DoF is read through the lines of the constraints: they must be
    // closed, and on a distributed triangulation hold the lines of all
    // locally relevant DoFs (step-40 makes them on these), since lines are
    // looked up for the DoFs of the rank's cells only.
    void
    check_constraints(const dealii::AffineConstraints<double> &constraints,
                      const bool                               distributed,
                      const dealii::IndexSet                  &relevant_dofs)
    {
      AssertThrow(constraints.is_closed(),
                  ExcUnsupportedInput(
                    "the AffineConstraints object is not closed; call "
                    "constraints.close() after adding all constraints."));
      if (!distributed)
        return;
      const dealii::IndexSet &constraint_lines = constraints.get_local_lines();
      AssertThrow(constraint_lines.size() == 0 ||
                    (relevant_dofs & constraint_lines).n_elements() ==
                      relevant_dofs.n_elements(),
                  ExcUnsupportedInput(
                    "the AffineConstraints object does not store the lines "
                    "of all locally relevant DoFs; make it with "
                    "constraints.reinit(locally_relevant_dofs) as in "
                    "step-40."));
    }



    // ---- What the element and the quadrature give --------------------

    // What follows from the finite element, the quadrature and the options
    // alone: dim, the options, the layout (with the base element's shape
    // values at the quadrature points) and the number of values of S(e).
    template <int dim>
    void
    set_element_layout(const dealii::FiniteElement<dim> &fe,
                       const dealii::Quadrature<dim>    &quadrature,
                       const bool                        keep_constrained_dofs,
                       const SupplementalDataFormat      supplemental_format,
                       MeshArrays                       &a)
    {
      const dealii::FiniteElement<dim> &base = fe.base_element(0);
      a.dim                                  = dim;
      a.keep_constrained_dofs                = keep_constrained_dofs;
      a.supplemental_format                  = supplemental_format;

      ElementLayout &layout     = a.layout;
      layout.is_simplex         = base.reference_cell().is_simplex();
      layout.degree             = base.degree;
      layout.n_nodes            = base.n_dofs_per_cell();
      layout.n_components       = fe.n_components();
      layout.n_dofs             = fe.n_dofs_per_cell();
      layout.n_q_points         = quadrature.size();
      layout.quadrature_weights = quadrature.get_weights();
      layout.shape_values.resize(layout.n_q_points * layout.n_nodes);
      for (unsigned int q = 0; q < layout.n_q_points; ++q)
        for (unsigned int n = 0; n < layout.n_nodes; ++n)
          layout.shape_values[q * layout.n_nodes + n] =
            base.shape_value(n, quadrature.point(q));

      switch (supplemental_format)
        {
          case SupplementalDataFormat::compressed_edge_matrix:
            a.n_supplemental = dim * (dim + 1) / 2;
            break;
          case SupplementalDataFormat::inverse_edge_matrix:
            a.n_supplemental = dim * dim + 1;
            break;
          case SupplementalDataFormat::quadrature_gradients:
            a.n_supplemental = layout.n_q_points * (1 + layout.n_nodes * dim);
        }
    }



    // ---- The process's cells ------------------------------------------

    // An active cell by level and index: what a thread needs to make an
    // iterator to any cell without walking the mesh from its start.
    using CellIndex = std::pair<int, int>;

    // The locally owned active cells (all active cells of a serial
    // triangulation, @p all_owned) in the order of their active_cell_index(),
    // which is that of a walk over the active cells: element e of the arrays is
    // the e-th of them. Level by level, the cells are visited by index in
    // parallel, each active cell writing its own entry; the cells of other
    // ranks are then dropped.
    template <int dim>
    std::vector<CellIndex>
    owned_cells(const dealii::Triangulation<dim> &tria,
                const bool                        all_owned,
                const unsigned int                n_owned_cells)
    {
      constexpr CellIndex    not_owned{-1, -1};
      std::vector<CellIndex> cells(tria.n_active_cells());
      for (unsigned int level = 0; level < tria.n_levels(); ++level)
        dealii::parallel::apply_to_subranges(
          0u,
          tria.n_raw_cells(level),
          [&](const unsigned int begin, const unsigned int end) {
            for (unsigned int index = begin; index < end; ++index)
              {
                // A raw iterator: slots of removed cells stay in the
                // levels, and a plain iterator may not point at them.
                const dealii::TriaRawIterator<dealii::CellAccessor<dim>>
                  cell(&tria, level, index);
                if (cell->used() && cell->is_active())
                  cells[cell->active_cell_index()] =
                    all_owned || cell->is_locally_owned() ?
                      CellIndex{level, index} :
                      not_owned;
              }
          },
          4096);
      if (n_owned_cells != cells.size())
        cells.erase(std::remove(cells.begin(), cells.end(), not_owned),
                    cells.end());
      Assert(cells.size() == n_owned_cells, dealii::ExcInternalError());
      return cells;
    }



    // ---- The process's DoFs -------------------------------------------

    // The local number of a DoF of the process. Without relevant DoFs (a
    // serial triangulation) it is the global number; otherwise through the
    // DoF's place in the locally relevant DoFs, else (a DoF only constraint
    // lines refer to) a search in the sorted local DoFs. Called from
    // several threads at once.
    struct LocalNumbering
    {
      const dealii::IndexSet *relevant_dofs = nullptr;
      std::vector<index_type> relevant_to_local;
      const std::vector<dealii::types::global_dof_index> *local_to_global =
        nullptr;

      index_type
      operator()(const dealii::types::global_dof_index dof) const
      {
        if (relevant_dofs == nullptr)
          return dof;
        const dealii::types::global_dof_index k =
          relevant_dofs->index_within_set(dof);
        if (k != dealii::numbers::invalid_dof_index)
          {
            Assert(relevant_to_local[k] != invalid_index,
                   dealii::ExcInternalError());
            return relevant_to_local[k];
          }
        const auto position = std::lower_bound(local_to_global->begin(),
                                               local_to_global->end(),
                                               dof);
        Assert(position != local_to_global->end() && *position == dof,
               dealii::ExcInternalError());
        return static_cast<index_type>(position - local_to_global->begin());
      }
    };



    // The DoFs of a rank of a distributed triangulation: those of its cells
    // and the DoFs their constraint lines refer to, in increasing order
    // (@p local_to_global), and their local numbers. The DoFs of owned
    // cells are locally relevant: they are marked at their place in
    // @p relevant_dofs (in parallel; every thread stores the same value), so
    // that no sort of all cell DoFs is needed. Constraint entries outside
    // the relevant DoFs (e.g. of periodicity) are merged in separately.
    template <int dim>
    LocalNumbering
    number_local_dofs(
      const dealii::DoFHandler<dim>                &dof_handler,
      const std::vector<CellIndex>                 &cells,
      const dealii::AffineConstraints<double>      &constraints,
      const dealii::IndexSet                       &relevant_dofs,
      std::vector<dealii::types::global_dof_index> &local_to_global)
    {
      using namespace dealii;
      const Triangulation<dim> &tria = dof_handler.get_triangulation();
      const unsigned int n_cell_dofs = dof_handler.get_fe().n_dofs_per_cell();
      const std::size_t  n_relevant  = relevant_dofs.n_elements();
      std::unique_ptr<std::atomic<std::uint8_t>[]> is_local(
        new std::atomic<std::uint8_t>[n_relevant]());
      parallel::apply_to_subranges(
        std::size_t(0),
        cells.size(),
        [&](const std::size_t begin, const std::size_t end) {
          std::vector<types::global_dof_index> dofs(n_cell_dofs);
          for (std::size_t e = begin; e < end; ++e)
            {
              const typename DoFHandler<dim>::active_cell_iterator
                cell(&tria, cells[e].first, cells[e].second, &dof_handler);
              cell->get_dof_indices(dofs);
              for (const types::global_dof_index dof : dofs)
                {
                  const types::global_dof_index k =
                    relevant_dofs.index_within_set(dof);
                  Assert(k < n_relevant, ExcInternalError());
                  is_local[k].store(1, std::memory_order_relaxed);
                }
            }
        },
        256);
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
            const types::global_dof_index k =
              relevant_dofs.index_within_set(dof);
            if (k == numbers::invalid_dof_index)
              other_dofs.push_back(dof);
            else
              is_local[k].store(2, std::memory_order_relaxed);
          }
        std::sort(other_dofs.begin(), other_dofs.end());
        other_dofs.erase(std::unique(other_dofs.begin(), other_dofs.end()),
                         other_dofs.end());
      }

      LocalNumbering numbering;
      numbering.relevant_dofs   = &relevant_dofs;
      numbering.local_to_global = &local_to_global;
      numbering.relevant_to_local.assign(n_relevant, invalid_index);
      local_to_global.clear();
      std::size_t k     = 0;
      auto        other = other_dofs.begin();
      for (const types::global_dof_index dof : relevant_dofs)
        {
          if (is_local[k].load(std::memory_order_relaxed) != 0)
            {
              while (other != other_dofs.end() && *other < dof)
                local_to_global.push_back(*other++);
              numbering.relevant_to_local[k] = local_to_global.size();
              local_to_global.push_back(dof);
            }
          ++k;
        }
      local_to_global.insert(local_to_global.end(), other, other_dofs.end());
      AssertThrow(local_to_global.size() <
                    static_cast<std::size_t>(
                      std::numeric_limits<index_type>::max()),
                  ExcUnsupportedInput("the rank has more DoFs than 32-bit "
                                      "indices can address."));
      return numbering;
    }



    // ---- Constraints --------------------------------------------------

    // The lines of a rank's DoFs in the local numbering. Closed constraints
    // refer only to unconstrained DoFs, so the copy is closed too; close()
    // sorts it. The lines are those of the stored lines that belong to
    // local DoFs, in increasing order as the local DoFs.
    dealii::AffineConstraints<double>
    local_constraints(const dealii::AffineConstraints<double> &constraints,
                      const dealii::IndexSet                  &local_dofs,
                      const LocalNumbering                    &numbering)
    {
      dealii::AffineConstraints<double> local;
      for (const auto &line : constraints.get_lines())
        {
          const dealii::types::global_dof_index dof = line.index;
          if (!local_dofs.is_element(dof))
            continue;
          const index_type i = numbering(dof);
          local.add_line(i);
          for (const auto &[entry, weight] : line.entries)
            {
              AssertThrow(std::isfinite(weight),
                          ExcUnsupportedInput(
                            "the constraint of DoF " + std::to_string(dof) +
                            " has a non-finite weight for DoF " +
                            std::to_string(entry) + "."));
              local.add_entry(i, numbering(entry), weight);
            }
          local.set_inhomogeneity(i, line.inhomogeneity);
        }
      local.close();
      return local;
    }



    // Every line of a closed AffineConstraints is taken: lines x_i = g_i
    // are what the element-level condensation applies, lines with entries
    // (hanging nodes, periodicity, user lines) are in addition what the
    // constraint plan distributes to the DoFs they depend on. Closed means
    // no entry refers to a constrained DoF, which both rely on. The indices
    // of @p constraints are those of the arrays.
    void
    read_constraints(const dealii::AffineConstraints<double> &constraints,
                     MeshArrays                              &arrays)
    {
      arrays.dof_is_constrained.assign(arrays.n_dofs, 0);
      arrays.inhomogeneities.assign(arrays.n_dofs, 0.);
      arrays.constraint_line_dofs.clear();
      arrays.constraint_entry_offsets.assign(1, 0);
      arrays.constraint_entry_dofs.clear();
      arrays.constraint_entry_weights.clear();

      // get_lines() is sorted by DoF index once closed.
      for (const auto &line : constraints.get_lines())
        {
          AssertThrow(line.index < arrays.n_dofs,
                      ExcUnsupportedInput("the constraints refer to DoF " +
                                          std::to_string(line.index) +
                                          ", but the DoFHandler has only " +
                                          std::to_string(arrays.n_dofs) +
                                          " DoFs."));
          arrays.dof_is_constrained[line.index] = 1;
          arrays.inhomogeneities[line.index]    = line.inhomogeneity;
          if (line.entries.empty())
            continue;
          arrays.constraint_line_dofs.push_back(line.index);
          for (const auto &[dof, weight] : line.entries)
            {
              AssertThrow(dof < arrays.n_dofs,
                          ExcUnsupportedInput(
                            "the constraint of DoF " +
                            std::to_string(line.index) + " refers to DoF " +
                            std::to_string(dof) +
                            ", but the DoFHandler has only " +
                            std::to_string(arrays.n_dofs) + " DoFs."));
              AssertThrow(std::isfinite(weight),
                          ExcUnsupportedInput(
                            "the constraint of DoF " +
                            std::to_string(line.index) +
                            " has a non-finite weight for DoF " +
                            std::to_string(dof) + "."));
              arrays.constraint_entry_dofs.push_back(dof);
              arrays.constraint_entry_weights.push_back(weight);
            }
          arrays.constraint_entry_offsets.push_back(
            arrays.constraint_entry_dofs.size());
        }
      AssertThrow(arrays.constraint_entry_dofs.size() <
                    static_cast<std::size_t>(
                      std::numeric_limits<index_type>::max()),
                  ExcUnsupportedInput("the constraints have more entries "
                                      "than 32-bit indices can address."));
      // Closed constraints never refer to a constrained DoF; a violation
      // would make the plan distribute into rows that are then condensed.
      Assert(std::none_of(arrays.constraint_entry_dofs.begin(),
                          arrays.constraint_entry_dofs.end(),
                          [&](const index_type dof) {
                            return arrays.dof_is_constrained[dof] != 0;
                          }),
             dealii::ExcInternalError());
    }



    // ---- Element by element -------------------------------------------

    template <int dim>
    std::string
    describe_cell(
      const typename dealii::Triangulation<dim>::cell_iterator &cell)
    {
      std::ostringstream out;
      out << "cell " << cell->id() << " (active cell index "
          << cell->active_cell_index() << ") with vertices";
      for (const unsigned int v : cell->vertex_indices())
        out << " (" << cell->vertex(v) << ')';
      return out.str();
    }



    // R^{-1} of D = Q R with det Q = 1 and R's diagonal positive (det D > 0
    // is checked before): modified Gram-Schmidt on D's columns, then back
    // substitution. Only R^{-1} is stored; Q, a rotation, drops out of
    // rotation-invariant element kernels.
    template <int dim>
    dealii::Tensor<2, dim>
    inverse_upper_triangular_factor(const dealii::Tensor<2, dim> &D)
    {
      dealii::Tensor<2, dim> Q, R;
      for (unsigned int j = 0; j < dim; ++j)
        {
          dealii::Tensor<1, dim> v;
          for (unsigned int k = 0; k < dim; ++k)
            v[k] = D[k][j];
          for (unsigned int i = 0; i < j; ++i)
            {
              double r = 0;
              for (unsigned int k = 0; k < dim; ++k)
                r += Q[k][i] * v[k];
              R[i][j] = r;
              for (unsigned int k = 0; k < dim; ++k)
                v[k] -= r * Q[k][i];
            }
          R[j][j] = v.norm();
          for (unsigned int k = 0; k < dim; ++k)
            Q[k][j] = v[k] / R[j][j];
        }
      // With det D > 0 and a positive diagonal, det Q = det D / det R > 0.
      dealii::Tensor<2, dim> R_inverse;
      for (int j = dim - 1; j >= 0; --j)
        {
          R_inverse[j][j] = 1. / R[j][j];
          for (int k = j + 1; k < dim; ++k)
            {
              double sum = 0;
              for (int i = j + 1; i <= k; ++i)
                sum += R[j][i] * R_inverse[i][k];
              R_inverse[j][k] = -sum / R[j][j];
            }
        }
      return R_inverse;
    }



    // The edge matrix x_{j+1} - x_0 (column j) of a simplex: the Jacobian
    // of a linear one.
    template <int dim, class CellIterator>
    dealii::Tensor<2, dim>
    edge_matrix(const CellIterator &cell)
    {
      dealii::Tensor<2, dim> edges;
      for (unsigned int j = 0; j < dim; ++j)
        for (unsigned int k = 0; k < dim; ++k)
          edges[k][j] = cell->vertex(j + 1)[k] - cell->vertex(0)[k];
      return edges;
    }



    // S(e) in the inverse_edge_matrix format: the inverse of the edge
    // matrix, row by row, then its determinant det (checked positive
    // before).
    template <int dim>
    void
    fill_inverse_edge_matrix(const dealii::Tensor<2, dim> &edges,
                             const double                  det,
                             double *const                 S)
    {
      const dealii::Tensor<2, dim> inverse = invert(edges);
      for (unsigned int j = 0; j < dim; ++j)
        for (unsigned int k = 0; k < dim; ++k)
          S[j * dim + k] = inverse[j][k];
      S[dim * dim] = det;
    }



    // S(e) in the quadrature_gradients format from FEValues of the base
    // element reinit'ed on the element: per quadrature point JxW (formed
    // from the Jacobian, see read_elements()), then the gradients of the
    // n_en shape functions.
    template <int dim>
    void
    fill_quadrature_gradients(const dealii::FEValues<dim>   &fe_values,
                              const dealii::Quadrature<dim> &quadrature,
                              const unsigned int             n_en,
                              double *const                  S)
    {
      for (unsigned int q = 0; q < quadrature.size(); ++q)
        {
          double *const Sq = S + q * (1 + n_en * dim);
          Sq[0] = quadrature.weight(q) * fe_values.jacobian(q).determinant();
          for (unsigned int n = 0; n < n_en; ++n)
            {
              const dealii::Tensor<1, dim> grad = fe_values.shape_grad(n, q);
              for (unsigned int k = 0; k < dim; ++k)
                Sq[1 + n * dim + k] = grad[k];
            }
        }
    }



    // Runs body(scratch, e) for every element e, in parallel over fixed
    // blocks of 512 elements, each block with a scratch object of its own
    // (FEValues are not shared between threads). The blocks, not the
    // scheduler's subranges, decide which elements share a scratch object,
    // so that this does not depend on the threads. (deal.II's FEValues
    // reuses a cell's mapping data for the next cell that is a translation
    // of it only while one thread runs, and computes every cell anew with
    // several, so S(e) on one thread may differ from S(e) on several in the
    // last bits.) A block stops at its first element for which body()
    // throws; the exception rethrown is that of the first failing element,
    // so that a mesh with several bad cells names the same one as a serial
    // loop would, whatever the threads.
    template <class MakeScratch, class Body>
    void
    for_element_ranges(const unsigned int n_elements,
                       const MakeScratch &make_scratch,
                       const Body        &body)
    {
      constexpr unsigned int block_size = 512;
      const unsigned int n_blocks = (n_elements + block_size - 1) / block_size;
      std::mutex         mutex;
      unsigned int       first_failure = n_elements;
      std::exception_ptr failure;
      dealii::parallel::apply_to_subranges(
        0u,
        n_blocks,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int block = begin; block < end; ++block)
            {
              auto               scratch = make_scratch();
              unsigned int       e       = block * block_size;
              const unsigned int last =
                std::min(n_elements, (block + 1) * block_size);
              try
                {
                  for (; e < last; ++e)
                    body(scratch, e);
                }
              catch (...)
                {
                  std::lock_guard<std::mutex> lock(mutex);
                  if (e < first_failure)
                    {
                      first_failure = e;
                      failure       = std::current_exception();
                    }
                }
            }
        },
        1);
      if (failure)
        std::rethrow_exception(failure);
    }



    // The per-element part of the arrays, in parallel over the elements:
    // L(e, .) and S(e), with the check that no element is inverted. The
    // values do not depend on the number of threads (for_element_ranges()
    // gives each fixed block of elements a fresh FEValues).
    template <int dim>
    void
    read_elements(const dealii::Mapping<dim>    &mapping,
                  const dealii::DoFHandler<dim> &dof_handler,
                  const dealii::Quadrature<dim> &quadrature,
                  const std::vector<CellIndex>  &cells,
                  const LocalNumbering          &numbering,
                  MeshArrays                    &a)
    {
      using namespace dealii;
      const Triangulation<dim> &tria   = dof_handler.get_triangulation();
      const FiniteElement<dim> &fe     = dof_handler.get_fe();
      const FiniteElement<dim> &base   = fe.base_element(0);
      const ElementLayout      &layout = a.layout;
      const unsigned int        n_en   = layout.n_nodes;
      const unsigned int        n_c    = layout.n_components;
      const unsigned int        n_ed   = layout.n_dofs;
      const bool                compressed_format =
        a.supplemental_format == SupplementalDataFormat::compressed_edge_matrix;
      const bool edge_matrix_format =
        compressed_format ||
        a.supplemental_format == SupplementalDataFormat::inverse_edge_matrix;

      internal::assign_first_touched_in_parallel(
        a.location,
        static_cast<std::size_t>(a.n_elements) * n_ed);
      internal::assign_first_touched_in_parallel(
        a.supplemental,
        static_cast<std::size_t>(a.n_elements) * a.n_supplemental);

      // A linear simplex under a MappingFE of degree 1 is mapped affinely
      // by its vertices: MappingFE's Jacobian sums the vertices times
      // reference shape gradients of 0, 1 and -1, which is the edge matrix
      // x_{j+1} - x_0 exactly, and FEValues forms JxW and the shape
      // gradients from it with deal.II's determinant(), invert() and
      // contractions, which are used here on the edge matrix directly: the
      // same numbers, bit for bit, without FEValues' work per cell.
      const bool affine =
        layout.is_simplex && layout.degree == 1 &&
        typeid(mapping) == typeid(MappingFE<dim>) &&
        static_cast<const MappingFE<dim> &>(mapping).get_degree() == 1;
      std::vector<Tensor<1, dim>> reference_gradients;
      if (affine)
        for (unsigned int q = 0; q < layout.n_q_points; ++q)
          for (unsigned int n = 0; n < n_en; ++n)
            reference_gradients.push_back(
              base.shape_grad(n, quadrature.point(q)));

      struct Scratch
      {
        std::vector<types::global_dof_index> local_dofs;
        // JxW is formed here from the Jacobian, as the mappings do: asking
        // FEValues for it would have deal.II's debug-mode Assert on
        // distorted cells fire before the check below, which names the
        // cell. None where the map is affine.
        std::unique_ptr<FEValues<dim>> fe_values;
      };
      for_element_ranges(
        a.n_elements,
        [&]() {
          return Scratch{std::vector<types::global_dof_index>(n_ed),
                         affine ?
                           nullptr :
                           std::make_unique<FEValues<dim>>(mapping,
                                                           base,
                                                           quadrature,
                                                           update_gradients |
                                                             update_jacobians)};
        },
        [&](Scratch &scratch, const unsigned int e) {
          const typename DoFHandler<dim>::active_cell_iterator
            cell(&tria, cells[e].first, cells[e].second, &dof_handler);
          cell->get_dof_indices(scratch.local_dofs);
          for (unsigned int n = 0; n < n_en; ++n)
            for (unsigned int c = 0; c < n_c; ++c)
              a.location[static_cast<std::size_t>(e) * n_ed + n * n_c + c] =
                numbering(
                  scratch.local_dofs[fe.component_to_system_index(c, n)]);

          const typename Triangulation<dim>::cell_iterator tria_cell(cell);
          // The edge matrix of a simplex, the Jacobian of an affine one.
          const Tensor<2, dim> edges = layout.is_simplex && layout.degree == 1 ?
                                         edge_matrix<dim>(cell) :
                                         Tensor<2, dim>();
          if (!affine)
            scratch.fe_values->reinit(tria_cell);
          for (unsigned int q = 0; q < layout.n_q_points; ++q)
            {
              const double det = affine ?
                                   determinant(edges) :
                                   scratch.fe_values->jacobian(q).determinant();
              AssertThrow(det > 0.,
                          ExcUnsupportedInput(
                            "element " + std::to_string(e) + ", " +
                            describe_cell<dim>(tria_cell) +
                            ", is inverted or degenerate: the Jacobian "
                            "determinant at quadrature point " +
                            std::to_string(q) + " is " + std::to_string(det) +
                            "."));
            }

          double *const S = a.supplemental.data() +
                            static_cast<std::size_t>(e) * a.n_supplemental;
          if (edge_matrix_format)
            {
              const double det = determinant(edges);
              AssertThrow(det > 0.,
                          ExcUnsupportedInput(
                            "element " + std::to_string(e) + ", " +
                            describe_cell<dim>(tria_cell) +
                            ", is inverted or degenerate: its edge matrix "
                            "has determinant " +
                            std::to_string(det) + "."));
              if (compressed_format)
                {
                  const Tensor<2, dim> R_inverse =
                    inverse_upper_triangular_factor(edges);
                  unsigned int i_packed = 0;
                  for (unsigned int j = 0; j < dim; ++j)
                    for (unsigned int k = j; k < dim; ++k)
                      S[i_packed++] = R_inverse[j][k];
                }
              else
                fill_inverse_edge_matrix(edges, det, S);
            }
          else if (affine)
            {
              // FEValues' covariant transformation: the transposed inverse
              // of the Jacobian, each row contracted with the reference
              // gradient (DerivativeForm::covariant_form(),
              // apply_transformation()).
              const Tensor<2, dim> covariant = transpose(invert(edges));
              for (unsigned int q = 0; q < layout.n_q_points; ++q)
                {
                  double *const Sq = S + q * (1 + n_en * dim);
                  Sq[0]            = quadrature.weight(q) * determinant(edges);
                  for (unsigned int n = 0; n < n_en; ++n)
                    for (unsigned int k = 0; k < dim; ++k)
                      Sq[1 + n * dim + k] =
                        covariant[k] * reference_gradients[q * n_en + n];
                }
            }
          else
            fill_quadrature_gradients(*scratch.fe_values, quadrature, n_en, S);
        });
    }



    // ---- Node by node -------------------------------------------------

    // Runs visit(e, n) for every node n of every element e, in parallel
    // over the elements.
    template <class Visit>
    void
    for_element_nodes(const MeshArrays &a, const Visit &visit)
    {
      const unsigned int n_en = a.layout.n_nodes;
      dealii::parallel::apply_to_subranges(
        0u,
        a.n_elements,
        [&](const unsigned int begin, const unsigned int end) {
          for (std::size_t e = begin; e < end; ++e)
            for (unsigned int n = 0; n < n_en; ++n)
              visit(e, n);
        },
        4096);
    }



    // Node numbers follow the DoF numbers of component 0, so a renumbering
    // of the DoFs (Cuthill-McKee, say) carries over to the nodes. Fills
    // n_nodes and E(e, .) from L(e, .).
    void
    number_nodes(MeshArrays &a)
    {
      const unsigned int        n_en = a.layout.n_nodes;
      const unsigned int        n_c  = a.layout.n_components;
      const unsigned int        n_ed = a.layout.n_dofs;
      std::vector<std::uint8_t> is_node_dof(a.n_dofs, 0);
      for (unsigned int e = 0; e < a.n_elements; ++e)
        for (unsigned int n = 0; n < n_en; ++n)
          is_node_dof[a.location[static_cast<std::size_t>(e) * n_ed +
                                 n * n_c]] = 1;
      std::vector<index_type> node_of_dof(a.n_dofs, invalid_index);
      a.n_nodes = 0;
      for (unsigned int i = 0; i < a.n_dofs; ++i)
        if (is_node_dof[i])
          node_of_dof[i] = a.n_nodes++;

      internal::assign_first_touched_in_parallel(
        a.connectivity,
        static_cast<std::size_t>(a.n_elements) * n_en);
      for_element_nodes(a, [&](const std::size_t e, const unsigned int n) {
        a.connectivity[e * n_en + n] =
          node_of_dof[a.location[e * n_ed + n * n_c]];
      });
    }



    // The elements of every node, in increasing order (compressed lists:
    // those of node n are entries[offsets[n], offsets[n + 1])).
    struct NodeElements
    {
      std::vector<std::size_t> offsets;
      std::vector<index_type>  entries;
    };



    // Counted and placed in parallel over the elements (counts and places
    // by atomic increments, so elements land in a node's list in any
    // order), then each list sorted: the lists of a serial counting sort,
    // whatever the threads.
    NodeElements
    node_to_elements(const MeshArrays &a)
    {
      const unsigned int                    n_en = a.layout.n_nodes;
      std::vector<std::atomic<std::size_t>> count(a.n_nodes);
      for_element_nodes(a, [&](const std::size_t e, const unsigned int n) {
        count[a.connectivity[e * n_en + n]]
          .fetch_add(1, std::memory_order_relaxed);
      });
      NodeElements result;
      result.offsets.resize(a.n_nodes + 1);
      result.offsets[0] = 0;
      for (unsigned int node = 0; node < a.n_nodes; ++node)
        {
          result.offsets[node + 1] = result.offsets[node] + count[node];
          // From here on, the next free place in the list of the node.
          count[node] = result.offsets[node];
        }
      internal::assign_first_touched_in_parallel(result.entries,
                                                 result.offsets.back());
      for_element_nodes(a, [&](const std::size_t e, const unsigned int n) {
        result.entries[count[a.connectivity[e * n_en + n]]
                         .fetch_add(1, std::memory_order_relaxed)] = e;
      });
      dealii::parallel::apply_to_subranges(
        0u,
        a.n_nodes,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int node = begin; node < end; ++node)
            std::sort(result.entries.begin() + result.offsets[node],
                      result.entries.begin() + result.offsets[node + 1]);
        },
        4096);
      return result;
    }



    // The per-node part of the arrays, in parallel over the elements:
    // DoFs and coordinates C(n). Elements that share a node may map its
    // support point to coordinates that differ in the last bits; a node's
    // coordinates are those of its last element, as in a serial loop over
    // the cells that overwrites them, so each element writes the nodes of
    // which it is the last element and no two threads write one node.
    template <int dim>
    void
    read_nodes(const dealii::Mapping<dim>    &mapping,
               const dealii::DoFHandler<dim> &dof_handler,
               const std::vector<CellIndex>  &cells,
               const NodeElements            &elements_of,
               MeshArrays                    &a)
    {
      using namespace dealii;
      const Triangulation<dim> &tria = dof_handler.get_triangulation();
      const FiniteElement<dim> &base = dof_handler.get_fe().base_element(0);
      const unsigned int        n_en = a.layout.n_nodes;
      const unsigned int        n_c  = a.layout.n_components;
      const unsigned int        n_ed = a.layout.n_dofs;
      a.node_dofs.assign(static_cast<std::size_t>(a.n_nodes) * n_c,
                         invalid_index);
      a.nodal_coordinates.resize(static_cast<std::size_t>(a.n_nodes) * dim);

      const auto is_last_element = [&](const index_type node,
                                       const index_type e) {
        return elements_of.entries[elements_of.offsets[node + 1] - 1] == e;
      };
      for_element_ranges(
        a.n_elements,
        [&]() {
          // Maps the base element's support points to real space: these
          // are the node coordinates C(n), in the node order of the
          // element.
          return std::make_unique<FEValues<dim>>(
            mapping,
            base,
            Quadrature<dim>(base.get_unit_support_points()),
            update_quadrature_points);
        },
        [&](std::unique_ptr<FEValues<dim>> &support_values,
            const unsigned int              e) {
          const index_type *const E =
            a.connectivity.data() + static_cast<std::size_t>(e) * n_en;
          if (std::none_of(E, E + n_en, [&](const index_type node) {
                return is_last_element(node, e);
              }))
            return;
          support_values->reinit(
            typename Triangulation<dim>::cell_iterator(&tria,
                                                       cells[e].first,
                                                       cells[e].second));
          for (unsigned int n = 0; n < n_en; ++n)
            if (is_last_element(E[n], e))
              {
                const std::size_t node = E[n];
                for (unsigned int c = 0; c < n_c; ++c)
                  a.node_dofs[node * n_c + c] =
                    a.location[static_cast<std::size_t>(e) * n_ed + n * n_c +
                               c];
                const Point<dim> &x = support_values->quadrature_point(n);
                for (unsigned int k = 0; k < dim; ++k)
                  a.nodal_coordinates[node * dim + k] = x[k];
              }
        });
    }



    // ---- The pattern and K(e, d1, d2) ---------------------------------

    // Whether the pattern holds the coupling of two DoFs of one element:
    // DoFTools::make_sparsity_pattern() with keep_constrained_dofs false
    // drops those of a constrained DoF but its diagonal.
    inline bool
    keeps_coupling(const MeshArrays &a,
                   const index_type  row,
                   const index_type  column)
    {
      return a.keep_constrained_dofs || row == column ||
             (!a.dof_is_constrained[row] && !a.dof_is_constrained[column]);
    }



    // The DoFs that the constraint lines of an element's constrained DoFs
    // refer to (their entries), sorted and without repetitions: compressed
    // lists, those of element e at dofs[offsets[e], offsets[e + 1]), empty
    // for elements without such DoFs. `elements` inverts them: the
    // elements whose entries hold DoF i, increasing, at
    // elements.entries[elements.offsets[i], elements.offsets[i + 1]).
    struct ElementEntries
    {
      std::vector<std::size_t> offsets;
      std::vector<index_type>  dofs;
      NodeElements             elements;
    };



    ElementEntries
    element_constraint_entries(const MeshArrays &a)
    {
      const unsigned int      n_ed = a.layout.n_dofs;
      std::vector<index_type> line_of_dof(a.n_dofs, invalid_index);
      for (std::size_t l = 0; l < a.constraint_line_dofs.size(); ++l)
        line_of_dof[a.constraint_line_dofs[l]] = l;

      // The entries of element e, sorted, into `dofs` (cleared first).
      const auto entries_of = [&](const std::size_t        e,
                                  std::vector<index_type> &dofs) {
        dofs.clear();
        for (unsigned int d = 0; d < n_ed; ++d)
          {
            const index_type line = line_of_dof[a.location[e * n_ed + d]];
            if (line == invalid_index)
              continue;
            dofs.insert(dofs.end(),
                        a.constraint_entry_dofs.begin() +
                          a.constraint_entry_offsets[line],
                        a.constraint_entry_dofs.begin() +
                          a.constraint_entry_offsets[line + 1]);
          }
        std::sort(dofs.begin(), dofs.end());
        dofs.erase(std::unique(dofs.begin(), dofs.end()), dofs.end());
      };

      ElementEntries result;
      result.offsets.assign(a.n_elements + 1, 0);
      if (a.constraint_line_dofs.empty())
        {
          result.elements.offsets.assign(a.n_dofs + 1, 0);
          return result;
        }
      const auto for_elements = [&](const auto &visit) {
        dealii::parallel::apply_to_subranges(
          0u,
          a.n_elements,
          [&](const unsigned int begin, const unsigned int end) {
            std::vector<index_type> dofs;
            for (unsigned int e = begin; e < end; ++e)
              {
                entries_of(e, dofs);
                visit(e, dofs);
              }
          },
          4096);
      };
      for_elements([&](const std::size_t e, const std::vector<index_type> &d) {
        result.offsets[e + 1] = d.size();
      });
      std::partial_sum(result.offsets.begin(),
                       result.offsets.end(),
                       result.offsets.begin());
      result.dofs.resize(result.offsets.back());
      for_elements([&](const std::size_t e, const std::vector<index_type> &d) {
        std::copy(d.begin(), d.end(), result.dofs.begin() + result.offsets[e]);
      });

      // Few elements have entries: the inverse lists are counted and
      // filled serially, in increasing element order.
      NodeElements &inverse = result.elements;
      inverse.offsets.assign(a.n_dofs + 1, 0);
      for (const index_type dof : result.dofs)
        ++inverse.offsets[dof + 1];
      std::partial_sum(inverse.offsets.begin(),
                       inverse.offsets.end(),
                       inverse.offsets.begin());
      inverse.entries.resize(inverse.offsets.back());
      std::vector<std::size_t> next(inverse.offsets.begin(),
                                    inverse.offsets.end() - 1);
      for (unsigned int e = 0; e < a.n_elements; ++e)
        for (std::size_t k = result.offsets[e]; k < result.offsets[e + 1]; ++k)
          inverse.entries[next[result.dofs[k]]++] = e;
      return result;
    }



    // The CSR pattern of DoFTools::make_sparsity_pattern(), which calls
    // AffineConstraints::add_entries_local_to_global() cell by cell. For a
    // cell with DoFs L_e, of which C_e are constrained, that function
    // couples among themselves the DoFs of A_e: the free DoFs of L_e and
    // the entries of the lines of C_e; with keep_constrained_dofs it also
    // couples C_e with L_e both ways, else it adds the diagonal of C_e.
    // Closed lines refer to free DoFs only, so row by row:
    // - a constrained DoF of node n: with keep_constrained_dofs the DoFs
    //   D_n of the nodes sharing an element with n, else its diagonal;
    // - a free DoF i of node n: D_n (without keep_constrained_dofs its free
    //   DoFs), the entries of the elements of n, and A_e of every element
    //   e whose entries hold i;
    // - a DoF of no element (on a distributed triangulation, one only
    //   constraint lines refer to): A_e of every element whose entries
    //   hold it.
    // The rows of a node are independent of all others, so they are
    // made in parallel; the result is deal.II's set of
    // sorted columns per row, whatever the threads. Without lines with
    // entries a free row is D_n alone: no element has entries.
    void
    make_pattern(const NodeElements &elements_of, MeshArrays &a)
    {
      const unsigned int   n_en        = a.layout.n_nodes;
      const unsigned int   n_c         = a.layout.n_components;
      const unsigned int   n_ed        = a.layout.n_dofs;
      const ElementEntries entries     = element_constraint_entries(a);
      const auto           has_entries = [&](const index_type e) {
        return entries.offsets[e + 1] > entries.offsets[e];
      };

      struct Scratch
      {
        std::vector<index_type> nodes, dofs, node_entries, row;
      };

      // D_n into scratch.dofs and the entries of the elements of n into
      // scratch.node_entries, both sorted.
      const auto neighbor_dofs = [&](const unsigned int n, Scratch &scratch) {
        scratch.nodes.clear();
        scratch.node_entries.clear();
        for (std::size_t i = elements_of.offsets[n];
             i < elements_of.offsets[n + 1];
             ++i)
          {
            const index_type e = elements_of.entries[i];
            const auto       first =
              a.connectivity.begin() + static_cast<std::size_t>(e) * n_en;
            scratch.nodes.insert(scratch.nodes.end(), first, first + n_en);
            if (has_entries(e))
              scratch.node_entries.insert(scratch.node_entries.end(),
                                          entries.dofs.begin() +
                                            entries.offsets[e],
                                          entries.dofs.begin() +
                                            entries.offsets[e + 1]);
          }
        std::sort(scratch.nodes.begin(), scratch.nodes.end());
        scratch.nodes.erase(std::unique(scratch.nodes.begin(),
                                        scratch.nodes.end()),
                            scratch.nodes.end());
        scratch.dofs.clear();
        for (const index_type m : scratch.nodes)
          scratch.dofs.insert(scratch.dofs.end(),
                              a.node_dofs.begin() +
                                static_cast<std::size_t>(m) * n_c,
                              a.node_dofs.begin() +
                                static_cast<std::size_t>(m + 1) * n_c);
        std::sort(scratch.dofs.begin(), scratch.dofs.end());
        if (!scratch.node_entries.empty())
          {
            std::sort(scratch.node_entries.begin(), scratch.node_entries.end());
            scratch.node_entries.erase(std::unique(scratch.node_entries.begin(),
                                                   scratch.node_entries.end()),
                                       scratch.node_entries.end());
          }
      };

      // Appends A_e of the elements whose entries hold @p dof to the row.
      const auto add_entry_elements = [&](const index_type         dof,
                                          std::vector<index_type> &row) {
        for (std::size_t k = entries.elements.offsets[dof];
             k < entries.elements.offsets[dof + 1];
             ++k)
          {
            const std::size_t       e = entries.elements.entries[k];
            const index_type *const L = a.location.data() + e * n_ed;
            for (unsigned int d = 0; d < n_ed; ++d)
              if (!a.dof_is_constrained[L[d]])
                row.push_back(L[d]);
            row.insert(row.end(),
                       entries.dofs.begin() + entries.offsets[e],
                       entries.dofs.begin() + entries.offsets[e + 1]);
          }
      };

      // The columns of a row into scratch.row, sorted; the row is a free
      // DoF of the node whose neighbor_dofs() are in the scratch object.
      const auto free_row = [&](const index_type row, Scratch &scratch) {
        std::vector<index_type> &columns = scratch.row;
        columns.clear();
        for (const index_type column : scratch.dofs)
          if (a.keep_constrained_dofs || !a.dof_is_constrained[column])
            columns.push_back(column);
        if (scratch.node_entries.empty() &&
            entries.elements.offsets[row] == entries.elements.offsets[row + 1])
          return;
        columns.insert(columns.end(),
                       scratch.node_entries.begin(),
                       scratch.node_entries.end());
        add_entry_elements(row, columns);
        std::sort(columns.begin(), columns.end());
        columns.erase(std::unique(columns.begin(), columns.end()),
                      columns.end());
      };

      // Each row is made once: the rows of a fixed chunk of nodes go to a
      // buffer of the chunk, in parallel over the chunks, with their
      // lengths at row_offsets[row + 1]; once the prefix sum has placed
      // the rows, each buffer's columns are copied to their place.
      struct RowBuffer
      {
        std::vector<index_type> rows, columns;
      };
      constexpr unsigned int chunk_size = 1024;
      const unsigned int n_chunks = (a.n_nodes + chunk_size - 1) / chunk_size;
      // One more for the rows of DoFs of no element.
      std::vector<RowBuffer> buffers(n_chunks + 1);
      a.row_offsets.assign(a.n_dofs + 1, 0);
      const auto store = [&](RowBuffer                     &buffer,
                             const index_type               row,
                             const std::vector<index_type> &columns) {
        buffer.rows.push_back(row);
        buffer.columns.insert(buffer.columns.end(),
                              columns.begin(),
                              columns.end());
        a.row_offsets[row + 1] = columns.size();
      };
      dealii::parallel::apply_to_subranges(
        0u,
        n_chunks,
        [&](const unsigned int chunk_begin, const unsigned int chunk_end) {
          Scratch                 scratch;
          std::vector<index_type> diagonal(1);
          for (unsigned int chunk = chunk_begin; chunk < chunk_end; ++chunk)
            for (unsigned int n = chunk * chunk_size;
                 n < std::min(a.n_nodes, (chunk + 1) * chunk_size);
                 ++n)
              {
                neighbor_dofs(n, scratch);
                for (unsigned int c = 0; c < n_c; ++c)
                  {
                    const index_type row =
                      a.node_dofs[static_cast<std::size_t>(n) * n_c + c];
                    if (!a.dof_is_constrained[row])
                      {
                        free_row(row, scratch);
                        store(buffers[chunk], row, scratch.row);
                      }
                    else if (a.keep_constrained_dofs)
                      store(buffers[chunk], row, scratch.dofs);
                    else
                      {
                        diagonal[0] = row;
                        store(buffers[chunk], row, diagonal);
                      }
                  }
              }
        },
        1);

      // The rows of DoFs of no element: only those whose entries hold
      // them have columns.
      {
        std::vector<std::uint8_t> is_node_dof(a.n_dofs, 0);
        for (const index_type dof : a.node_dofs)
          is_node_dof[dof] = 1;
        std::vector<index_type> columns;
        for (unsigned int row = 0; row < a.n_dofs; ++row)
          if (!is_node_dof[row] &&
              entries.elements.offsets[row + 1] > entries.elements.offsets[row])
            {
              columns.clear();
              add_entry_elements(row, columns);
              std::sort(columns.begin(), columns.end());
              columns.erase(std::unique(columns.begin(), columns.end()),
                            columns.end());
              store(buffers[n_chunks], row, columns);
            }
      }

      std::size_t n_nonzeros = 0;
      for (unsigned int row = 0; row < a.n_dofs; ++row)
        {
          n_nonzeros += a.row_offsets[row + 1];
          AssertThrow(n_nonzeros < static_cast<std::size_t>(
                                     std::numeric_limits<index_type>::max()),
                      ExcUnsupportedInput(
                        "the sparsity pattern has more nonzeros "
                        "than 32-bit indices can address."));
          a.row_offsets[row + 1] = n_nonzeros;
        }

      internal::assign_first_touched_in_parallel(a.column_indices, n_nonzeros);
      dealii::parallel::apply_to_subranges(
        0u,
        n_chunks + 1,
        [&](const unsigned int chunk_begin, const unsigned int chunk_end) {
          for (unsigned int chunk = chunk_begin; chunk < chunk_end; ++chunk)
            {
              RowBuffer  &buffer = buffers[chunk];
              std::size_t k      = 0;
              for (const index_type row : buffer.rows)
                {
                  const std::size_t length =
                    a.row_offsets[row + 1] - a.row_offsets[row];
                  std::copy(buffer.columns.begin() + k,
                            buffer.columns.begin() + k + length,
                            a.column_indices.begin() + a.row_offsets[row]);
                  k += length;
                }
              std::vector<index_type>().swap(buffer.rows);
              std::vector<index_type>().swap(buffer.columns);
            }
        },
        1);
    }



    // K(e, d1, d2), in parallel over the elements: each element's entries
    // are found in the rows of its DoFs independently of the others. An
    // element's DoFs are sorted once, so that each of its rows is walked
    // once from left to right instead of searched for every column. The
    // array comes sized.
    void
    fill_nonzero_map(MeshArrays &a)
    {
      const unsigned int n_ed = a.layout.n_dofs;
      Assert(a.nonzero_map.size() ==
               static_cast<std::size_t>(a.n_elements) * n_ed * n_ed,
             dealii::ExcInternalError());
      dealii::parallel::apply_to_subranges(
        0u,
        a.n_elements,
        [&](const unsigned int begin, const unsigned int end) {
          // (DoF, local index) of the element's DoFs, by DoF.
          std::vector<std::pair<index_type, unsigned int>> columns(n_ed);
          for (unsigned int e = begin; e < end; ++e)
            {
              const index_type *const L =
                a.location.data() + static_cast<std::size_t>(e) * n_ed;
              for (unsigned int j = 0; j < n_ed; ++j)
                columns[j] = {L[j], j};
              std::sort(columns.begin(), columns.end());
              for (unsigned int i = 0; i < n_ed; ++i)
                {
                  const index_type row = L[i];
                  index_type      *K =
                    a.nonzero_map.data() +
                    (static_cast<std::size_t>(e) * n_ed + i) * n_ed;
                  index_type       position = a.row_offsets[row];
                  const index_type row_end  = a.row_offsets[row + 1];
                  for (const auto &[col, j] : columns)
                    {
                      if (!keeps_coupling(a, row, col))
                        {
                          K[j] = invalid_index;
                          continue;
                        }
                      while (position < row_end &&
                             a.column_indices[position] < col)
                        ++position;
                      Assert(position < row_end &&
                               a.column_indices[position] == col,
                             dealii::ExcInternalError());
                      K[j] = position;
                    }
                }
            }
        },
        1024);
    }



    // The pattern and K on the device: the pattern is copied into the
    // host arrays, K into the array the task @p size_nonzero_map sizes.
    void
    build_pattern_on_device(dealii::Threads::Task<void> &size_nonzero_map,
                            SetupTimes::Steps           &steps,
                            MeshArrays                  &a)
    {
      steps.next("pattern (device)");
      internal::DevicePatternBuilder builder(a);
      const std::size_t              n_nonzeros = builder.make_pattern();
      a.row_offsets.resize(static_cast<std::size_t>(a.n_dofs) + 1);
      internal::assign_first_touched_in_parallel(a.column_indices, n_nonzeros);
      builder.copy_pattern_to(a.row_offsets.data(), a.column_indices.data());
      steps.next("nonzero map sizing (wait)");
      size_nonzero_map.join();
      steps.next("nonzero map (device)");
      builder.make_nonzero_map(a.nonzero_map.data());
    }



    // The pattern and K where @p construction asks: on the device where
    // it asks for it, or for automatic on a serial triangulation where a
    // device is present and has the memory; else on the host. Returns where
    // they were built. A rank of a distributed triangulation builds on the
    // host unless asked: its device is the one the program makes current
    // (select_device_by_node_rank()), possibly after the adapter.
    PatternConstruction
    build_pattern(const PatternConstruction    construction,
                  const bool                   is_distributed,
                  const NodeElements          &elements_of,
                  dealii::Threads::Task<void> &size_nonzero_map,
                  SetupTimes::Steps           &steps,
                  MeshArrays                  &a)
    {
      if (construction == PatternConstruction::device)
        {
          AssertThrow(n_cuda_devices() > 0,
                      ExcUnsupportedInput(
                        "DoFHandlerAdapter's pattern_construction is "
                        "'device', but this machine has no CUDA device."));
          build_pattern_on_device(size_nonzero_map, steps, a);
          return PatternConstruction::device;
        }
      if (construction == PatternConstruction::automatic && !is_distributed &&
          n_cuda_devices() > 0)
        try
          {
            build_pattern_on_device(size_nonzero_map, steps, a);
            return PatternConstruction::device;
          }
        catch (const ExcDeviceMemory &)
          {
            // Too little device memory for the keys: the host build
            // needs none.
          }
      steps.next("pattern");
      make_pattern(elements_of, a);
      steps.next("nonzero map sizing (wait)");
      size_nonzero_map.join();
      steps.next("nonzero map");
      fill_nonzero_map(a);
      return PatternConstruction::host;
    }
  } // namespace



  template <int dim>
  DoFHandlerAdapter<dim>::DoFHandlerAdapter(
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
  DoFHandlerAdapter<dim>::reinit(
    const dealii::Mapping<dim>              &mapping,
    const dealii::DoFHandler<dim>           &dof_handler,
    const dealii::Quadrature<dim>           &quadrature,
    const dealii::AffineConstraints<double> &constraints,
    const AdditionalData                    &additional_data)
  {
    using namespace dealii;

    const Triangulation<dim> &tria = dof_handler.get_triangulation();
    check_triangulation(tria);
    check_discretization(dof_handler, quadrature);
    const FiniteElement<dim> &fe = dof_handler.get_fe();
    check_supplemental_format(fe, additional_data.supplemental_format);
    const auto *const distributed_tria =
      dynamic_cast<const parallel::DistributedTriangulationBase<dim> *>(&tria);
    const bool is_distributed = distributed_tria != nullptr;

    // The process's DoFs: on a serial triangulation all of them, numbered
    // as deal.II does.
    SetupTimes::Steps steps("adapter");
    IndexSet          owned, relevant;
    if (is_distributed)
      {
        steps.next("relevant DoFs");
        owned    = dof_handler.locally_owned_dofs();
        relevant = DoFTools::extract_locally_relevant_dofs(dof_handler);
        // IndexSet compresses itself on first use: done here, before
        // threads read it.
        relevant.compress();
      }
    else
      {
        owned    = complete_index_set(dof_handler.n_dofs());
        relevant = owned;
      }
    check_constraints(constraints, is_distributed, relevant);

    MeshArrays a;
    a.n_elements = is_distributed ?
                     distributed_tria->n_locally_owned_active_cells() :
                     tria.n_active_cells();
    set_element_layout(fe,
                       quadrature,
                       additional_data.keep_constrained_dofs,
                       additional_data.supplemental_format,
                       a);
    const ElementLayout &layout = a.layout;

    // K(e, d1, d2) is the largest array. Its pages are first touched in
    // parallel, but its zero-fill that std::vector requires runs on one
    // thread: it is sized by a task of its own while the other arrays are
    // built (the task is waited for, also on an exception, before `a` goes
    // out of scope).
    const std::size_t nonzero_map_size =
      static_cast<std::size_t>(a.n_elements) * layout.n_dofs * layout.n_dofs;
    Threads::Task<void> size_nonzero_map = Threads::new_task([&]() {
      SetupTimes::Scope scope("adapter: nonzero map sizing (task)");
      internal::assign_first_touched_in_parallel(a.nonzero_map,
                                                 nonzero_map_size);
    });

    steps.next("cells");
    const std::vector<CellIndex> cells =
      owned_cells(tria, !is_distributed, a.n_elements);

    // The local numbering: deal.II's own on a serial triangulation, where
    // the constraints are read as they are; on a distributed one the
    // rank's DoFs numbered in increasing order, with the constraints of
    // these DoFs copied into the local numbering, so that the pattern and
    // the arrays come from one source.
    std::vector<types::global_dof_index> local_numbers_to_global;
    IndexSet                             local_set;
    LocalNumbering                       numbering;
    AffineConstraints<double>            renumbered_constraints;
    const AffineConstraints<double>     *local_lines = &constraints;
    if (is_distributed)
      {
        steps.next("local DoFs");
        numbering = number_local_dofs(dof_handler,
                                      cells,
                                      constraints,
                                      relevant,
                                      local_numbers_to_global);
        local_set = IndexSet(dof_handler.n_dofs());
        local_set.add_indices(local_numbers_to_global.begin(),
                              local_numbers_to_global.end());
        local_set.compress();
        steps.next("constraints");
        renumbered_constraints =
          local_constraints(constraints, local_set, numbering);
        local_lines = &renumbered_constraints;
      }
    else
      {
        local_numbers_to_global.resize(dof_handler.n_dofs());
        std::iota(local_numbers_to_global.begin(),
                  local_numbers_to_global.end(),
                  types::global_dof_index(0));
        local_set = owned;
        steps.next("constraints");
      }
    a.n_dofs = local_numbers_to_global.size();
    read_constraints(*local_lines, a);

    steps.next("elements");
    read_elements(mapping, dof_handler, quadrature, cells, numbering, a);
    steps.next("node numbers");
    number_nodes(a);
    steps.next("node elements");
    const NodeElements elements_of = node_to_elements(a);
    steps.next("nodes");
    read_nodes(mapping, dof_handler, cells, elements_of, a);
    const PatternConstruction built_on =
      build_pattern(additional_data.pattern_construction,
                    is_distributed,
                    elements_of,
                    size_nonzero_map,
                    steps,
                    a);

    distributed          = is_distributed;
    pattern_construction = built_on;
    communicator =
      is_distributed ? distributed_tria->get_communicator() : MPI_COMM_SELF;
    arrays          = std::move(a);
    local_to_global = std::move(local_numbers_to_global);
    local_dof_set   = std::move(local_set);
    owned_dofs      = std::move(owned);
    relevant_dofs   = std::move(relevant);
  }



  template <int dim>
  void
  DoFHandlerAdapter<dim>::make_sparsity_pattern(
    dealii::DynamicSparsityPattern &dsp) const
  {
    SetupTimes::Steps steps("adapter pattern");
    steps.next("local rows");
    if (distributed)
      dsp.reinit(owned_dofs.size(), owned_dofs.size(), local_dof_set);
    else
      dsp.reinit(arrays.n_dofs, arrays.n_dofs);
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
    if (distributed)
      {
        steps.next("distribute");
        dealii::SparsityTools::distribute_sparsity_pattern(dsp,
                                                           owned_dofs,
                                                           communicator,
                                                           local_dof_set);
      }
  }



  template <int dim>
  void
  DoFHandlerAdapter<dim>::make_sparsity_pattern(
    dealii::SparsityPattern &sparsity_pattern) const
  {
    AssertThrow(!distributed,
                ExcUnsupportedInput(
                  "DoFHandlerAdapter::make_sparsity_pattern(SparsityPattern "
                  "&) needs a serial triangulation; on a distributed one, "
                  "make a DynamicSparsityPattern with it instead."));
    dealii::DynamicSparsityPattern dsp;
    make_sparsity_pattern(dsp);
    sparsity_pattern.copy_from(dsp);
  }



  template <int dim>
  template <typename Number>
  void
  DoFHandlerAdapter<dim>::copy_to_sparse_matrix(
    const std::vector<Number>    &values,
    dealii::SparseMatrix<double> &matrix) const
  {
    AssertThrow(!distributed,
                ExcUnsupportedInput(
                  "DoFHandlerAdapter::copy_to_sparse_matrix() needs a serial "
                  "triangulation; on a distributed one, DistributedAssembler "
                  "assembles into Trilinos or resident matrices."));
    AssertThrow(values.size() == arrays.n_nonzeros(),
                dealii::ExcDimensionMismatch(values.size(),
                                             arrays.n_nonzeros()));
    AssertThrow(matrix.m() == arrays.n_dofs && matrix.n() == arrays.n_dofs,
                dealii::ExcDimensionMismatch(matrix.m(), arrays.n_dofs));
    matrix = 0.;
    for (unsigned int row = 0; row < arrays.n_dofs; ++row)
      for (index_type k = arrays.row_offsets[row];
           k < arrays.row_offsets[row + 1];
           ++k)
        matrix.set(row, arrays.column_indices[k], values[k]);
  }



  template <int dim>
  template <typename Number>
  void
  DoFHandlerAdapter<dim>::scatter_nodal_values(
    const std::vector<Number> &nodal_values,
    dealii::Vector<double>    &dof_values) const
  {
    AssertThrow(!distributed,
                ExcUnsupportedInput(
                  "DoFHandlerAdapter::scatter_nodal_values() needs a serial "
                  "triangulation."));
    AssertThrow(nodal_values.size() == arrays.node_dofs.size(),
                dealii::ExcDimensionMismatch(nodal_values.size(),
                                             arrays.node_dofs.size()));
    dof_values.reinit(arrays.n_dofs);
    for (std::size_t i = 0; i < arrays.node_dofs.size(); ++i)
      dof_values[arrays.node_dofs[i]] = nodal_values[i];
  }



  unsigned int
  MeshArrays::n_constrained_elements() const
  {
    unsigned int count = 0;
    for (unsigned int e = 0; e < n_elements; ++e)
      for (unsigned int d = 0; d < layout.n_dofs; ++d)
        if (dof_is_constrained
              [location[static_cast<std::size_t>(e) * layout.n_dofs + d]])
          {
            ++count;
            break;
          }
    return count;
  }



  std::size_t
  MeshArrays::memory_consumption() const
  {
    return connectivity.size() * sizeof(index_type) +
           location.size() * sizeof(index_type) +
           supplemental.size() * sizeof(double) +
           nodal_coordinates.size() * sizeof(double) +
           node_dofs.size() * sizeof(index_type) +
           row_offsets.size() * sizeof(index_type) +
           column_indices.size() * sizeof(index_type) +
           nonzero_map.size() * sizeof(index_type) + dof_is_constrained.size() +
           inhomogeneities.size() * sizeof(double) +
           (constraint_line_dofs.size() + constraint_entry_offsets.size() +
            constraint_entry_dofs.size()) *
             sizeof(index_type) +
           constraint_entry_weights.size() * sizeof(double);
  }
} // namespace GPUAssembly



// explicit instantiations
namespace GPUAssembly
{
  template class DoFHandlerAdapter<2>;
  template class DoFHandlerAdapter<3>;
#define INSTANTIATE(dim, Number)                               \
  template void DoFHandlerAdapter<dim>::copy_to_sparse_matrix( \
    const std::vector<Number> &,                               \
    dealii::SparseMatrix<double> &) const;                     \
  template void DoFHandlerAdapter<dim>::scatter_nodal_values(  \
    const std::vector<Number> &,                               \
    dealii::Vector<double> &) const;
  INSTANTIATE(2, float)
  INSTANTIATE(2, double)
  INSTANTIATE(3, float)
  INSTANTIATE(3, double)
#undef INSTANTIATE
} // namespace GPUAssembly
