// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/parallel.h>
#include <deal.II/base/thread_management.h>

#include <deal.II/distributed/tria_base.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_fe.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
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
#include <typeinfo>
#include <utility>

#include "../base/first_touch.h"
#include "discretization_checks.h"
#include "shared_steps.h"

namespace GPUAssembly
{
  namespace
  {
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



    template <int dim>
    void
    check_triangulation(const dealii::Triangulation<dim> &tria)
    {
      AssertThrow(tria.n_active_cells() > 0,
                  ExcUnsupportedInput("the triangulation has no cells."));
      AssertThrow(
        dynamic_cast<const dealii::parallel::TriangulationBase<dim> *>(&tria) ==
          nullptr,
        ExcUnsupportedInput("the triangulation is an MPI-distributed one; "
                            "DoFHandlerAdapter takes a serial Triangulation, "
                            "DistributedDoFHandlerAdapter a distributed "
                            "one."));
      AssertThrow(tria.get_reference_cells().size() == 1,
                  ExcUnsupportedInput(
                    "the triangulation mixes " +
                    std::to_string(tria.get_reference_cells().size()) +
                    " cell types; all cells must be of one type."));
    }



    // An active cell by level and index: what a thread needs to make an
    // iterator to any cell without walking the mesh from its start.
    using CellIndex = std::pair<int, int>;

    // The active cells in the order of their active_cell_index(), which is
    // the element number e of the arrays. Level by level, the cells are
    // visited by index in parallel: each active cell writes its own entry,
    // so the list is that of a walk over the active cells.
    template <int dim>
    std::vector<CellIndex>
    active_cells(const dealii::Triangulation<dim> &tria)
    {
      std::vector<CellIndex> cells(tria.n_active_cells());
      for (unsigned int level = 0; level < tria.n_levels(); ++level)
        dealii::parallel::apply_to_subranges(
          0u,
          tria.n_raw_cells(level),
          [&](const unsigned int begin, const unsigned int end) {
            for (unsigned int index = begin; index < end; ++index)
              {
                const typename dealii::Triangulation<dim>::cell_iterator
                  cell(&tria, level, index);
                if (cell->used() && cell->is_active())
                  cells[cell->active_cell_index()] = {level, index};
              }
          },
          4096);
      return cells;
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
      internal::for_element_ranges(
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
                scratch.local_dofs[fe.component_to_system_index(c, n)];

          const typename Triangulation<dim>::cell_iterator tria_cell(cell);
          // The edge matrix of a simplex, the Jacobian of an affine one.
          const Tensor<2, dim> edges = layout.is_simplex && layout.degree == 1 ?
                                         internal::edge_matrix<dim>(cell) :
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
                internal::fill_inverse_edge_matrix(edges, det, S);
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
            internal::fill_quadrature_gradients(*scratch.fe_values,
                                                quadrature,
                                                n_en,
                                                S);
        });
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
               const internal::NodeElements  &elements_of,
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
      internal::for_element_ranges(
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



    // The pattern is deal.II's own, so that it is identical by construction
    // to what a deal.II program would use for the same constraints.
    template <int dim>
    void
    make_pattern_with_dof_tools(
      const dealii::DoFHandler<dim>           &dof_handler,
      const dealii::AffineConstraints<double> &constraints,
      MeshArrays                              &a)
    {
      dealii::DynamicSparsityPattern dsp(a.n_dofs);
      dealii::DoFTools::make_sparsity_pattern(dof_handler,
                                              dsp,
                                              constraints,
                                              a.keep_constrained_dofs);
      internal::copy_pattern(dsp, "the sparsity pattern", a);
    }



  } // namespace



  namespace internal
  {
    // Every line of a closed AffineConstraints is taken: lines x_i = g_i
    // are what the element-level condensation applies, lines with entries
    // (hanging nodes, periodicity, user lines) are in addition what the
    // constraint plan distributes to the DoFs they depend on. Closed means
    // no entry refers to a constrained DoF, which both rely on.
    void
    read_constraints(const dealii::AffineConstraints<double> &constraints,
                     MeshArrays                              &arrays)
    {
      AssertThrow(constraints.is_closed(),
                  ExcUnsupportedInput(
                    "the AffineConstraints object is not closed; call "
                    "constraints.close() after adding all constraints."));
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

    template void
    check_discretization(const dealii::DoFHandler<2> &,
                         const dealii::Quadrature<2> &);
    template void
    check_discretization(const dealii::DoFHandler<3> &,
                         const dealii::Quadrature<3> &);
  } // namespace internal



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
    internal::check_discretization(dof_handler, quadrature);
    const FiniteElement<dim> &fe   = dof_handler.get_fe();
    const FiniteElement<dim> &base = fe.base_element(0);

    const bool compressed_format =
      additional_data.supplemental_format ==
      SupplementalDataFormat::compressed_edge_matrix;
    const bool edge_matrix_format =
      compressed_format || additional_data.supplemental_format ==
                             SupplementalDataFormat::inverse_edge_matrix;
    AssertThrow(!edge_matrix_format ||
                  (base.reference_cell().is_simplex() && base.degree == 1),
                ExcUnsupportedInput(
                  "the inverse-edge-matrix format of the supplemental data "
                  "exists only for linear simplices, not for " +
                  fe.get_name() + "."));

    MeshArrays a;
    a.n_elements = tria.n_active_cells();
    a.n_dofs     = dof_handler.n_dofs();
    internal::set_element_layout(fe,
                                 quadrature,
                                 additional_data.keep_constrained_dofs,
                                 additional_data.supplemental_format,
                                 a);
    const ElementLayout &layout = a.layout;

    AssertThrow(
      static_cast<std::size_t>(a.n_elements) * layout.n_dofs * layout.n_dofs <
        static_cast<std::size_t>(std::numeric_limits<index_type>::max()),
      ExcUnsupportedInput(
        "the mesh is too large for 32-bit element data indices."));

    SetupTimes::Steps steps("adapter");
    steps.next("constraints");
    internal::read_constraints(constraints, a);

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

    steps.next("active cells");
    const std::vector<CellIndex> cells = active_cells(tria);
    steps.next("elements");
    read_elements(mapping, dof_handler, quadrature, cells, a);
    steps.next("node numbers");
    internal::number_nodes(a);
    steps.next("node elements");
    const internal::NodeElements elements_of = internal::node_to_elements(a);
    steps.next("nodes");
    read_nodes(mapping, dof_handler, cells, elements_of, a);
    steps.next("pattern");
    if (internal::constraints_are_dirichlet(constraints))
      internal::make_pattern_from_node_graph(elements_of, a);
    else
      make_pattern_with_dof_tools(dof_handler, constraints, a);
    steps.next("nonzero map sizing (wait)");
    size_nonzero_map.join();
    steps.next("nonzero map");
    internal::fill_nonzero_map(a);

    arrays = std::move(a);
  }



  template <int dim>
  void
  DoFHandlerAdapter<dim>::make_sparsity_pattern(
    dealii::SparsityPattern &sparsity_pattern) const
  {
    dealii::DynamicSparsityPattern               dsp(arrays.n_dofs);
    std::vector<dealii::types::global_dof_index> columns;
    for (unsigned int row = 0; row < arrays.n_dofs; ++row)
      {
        columns.assign(arrays.column_indices.begin() + arrays.row_offsets[row],
                       arrays.column_indices.begin() +
                         arrays.row_offsets[row + 1]);
        dsp.add_entries(row, columns.begin(), columns.end(), true);
      }
    sparsity_pattern.copy_from(dsp);
  }



  template <int dim>
  template <typename Number>
  void
  DoFHandlerAdapter<dim>::copy_to_sparse_matrix(
    const std::vector<Number>    &values,
    dealii::SparseMatrix<double> &matrix) const
  {
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
  DoFHandlerAdapter<dim>::gather_nodal_values(
    const dealii::Vector<double> &dof_values,
    std::vector<Number>          &nodal_values) const
  {
    AssertThrow(dof_values.size() == arrays.n_dofs,
                dealii::ExcDimensionMismatch(dof_values.size(), arrays.n_dofs));
    nodal_values.resize(arrays.node_dofs.size());
    for (std::size_t i = 0; i < arrays.node_dofs.size(); ++i)
      nodal_values[i] = static_cast<Number>(dof_values[arrays.node_dofs[i]]);
  }



  template <int dim>
  template <typename Number>
  void
  DoFHandlerAdapter<dim>::scatter_nodal_values(
    const std::vector<Number> &nodal_values,
    dealii::Vector<double>    &dof_values) const
  {
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
  template void DoFHandlerAdapter<dim>::gather_nodal_values(   \
    const dealii::Vector<double> &,                            \
    std::vector<Number> &) const;                              \
  template void DoFHandlerAdapter<dim>::scatter_nodal_values(  \
    const std::vector<Number> &,                               \
    dealii::Vector<double> &) const;
  INSTANTIATE(2, float)
  INSTANTIATE(2, double)
  INSTANTIATE(3, float)
  INSTANTIATE(3, double)
#undef INSTANTIATE
} // namespace GPUAssembly
