// SPDX-License-Identifier: LGPL-2.1-or-later
#include "shared_steps.h"

#include <deal.II/base/parallel.h>

#include <gpu_assembly/base/exceptions.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../base/first_touch.h"

namespace GPUAssembly
{
  namespace internal
  {
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

    template void
    set_element_layout(const dealii::FiniteElement<2> &,
                       const dealii::Quadrature<2> &,
                       bool,
                       SupplementalDataFormat,
                       MeshArrays &);
    template void
    set_element_layout(const dealii::FiniteElement<3> &,
                       const dealii::Quadrature<3> &,
                       bool,
                       SupplementalDataFormat,
                       MeshArrays &);



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
      dealii::parallel::apply_to_subranges(
        0u,
        a.n_elements,
        [&](const unsigned int begin, const unsigned int end) {
          for (std::size_t e = begin; e < end; ++e)
            for (unsigned int n = 0; n < n_en; ++n)
              a.connectivity[e * n_en + n] =
                node_of_dof[a.location[e * n_ed + n * n_c]];
        },
        4096);
    }



    // Counted and placed in parallel over the elements (counts and places
    // by atomic increments, so elements land in a node's list in any
    // order), then each list sorted: the lists of a serial counting sort,
    // whatever the threads.
    NodeElements
    node_to_elements(const MeshArrays &a)
    {
      const unsigned int                    n_en = a.layout.n_nodes;
      std::vector<std::atomic<std::size_t>> count(a.n_nodes);
      dealii::parallel::apply_to_subranges(
        0u,
        a.n_elements,
        [&](const unsigned int begin, const unsigned int end) {
          for (std::size_t e = begin; e < end; ++e)
            for (unsigned int n = 0; n < n_en; ++n)
              count[a.connectivity[e * n_en + n]]
                .fetch_add(1, std::memory_order_relaxed);
        },
        4096);
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
      dealii::parallel::apply_to_subranges(
        0u,
        a.n_elements,
        [&](const unsigned int begin, const unsigned int end) {
          for (std::size_t e = begin; e < end; ++e)
            for (unsigned int n = 0; n < n_en; ++n)
              result.entries[count[a.connectivity[e * n_en + n]]
                               .fetch_add(1, std::memory_order_relaxed)] = e;
        },
        4096);
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



    // Whether every constraint is of the form x_i = g_i: then
    // DoFTools::make_sparsity_pattern couples exactly the DoFs of nodes
    // that share an element (AffineConstraints::add_entries_local_to_global
    // adds the free DoFs of a cell among themselves, and for a constrained
    // DoF its whole row and column, or with keep_constrained_dofs false its
    // diagonal alone), which make_pattern_from_node_graph() builds without
    // deal.II's DynamicSparsityPattern.
    bool
    constraints_are_dirichlet(
      const dealii::AffineConstraints<double> &constraints)
    {
      const auto &lines = constraints.get_lines();
      return std::all_of(lines.begin(), lines.end(), [](const auto &line) {
        return line.entries.empty();
      });
    }



    // The CSR pattern of DoFTools::make_sparsity_pattern() for Dirichlet
    // constraints, from the nodes sharing an element with each node: row
    // (n, c) holds the DoFs of those nodes, sorted, less (with
    // keep_constrained_dofs false) the couplings of constrained DoFs other
    // than the diagonal. The rows of a node are independent of all others,
    // so they are counted and then filled in parallel; the result is the
    // same set of sorted columns per row as deal.II's, whatever the threads.
    void
    make_pattern_from_node_graph(const NodeElements &elements_of, MeshArrays &a)
    {
      const unsigned int n_en = a.layout.n_nodes;
      const unsigned int n_c  = a.layout.n_components;

      // The DoFs of the nodes sharing an element with node n, sorted.
      const auto neighbor_dofs = [&](const unsigned int       n,
                                     std::vector<index_type> &nodes,
                                     std::vector<index_type> &dofs) {
        nodes.clear();
        for (std::size_t i = elements_of.offsets[n];
             i < elements_of.offsets[n + 1];
             ++i)
          {
            const auto first =
              a.connectivity.begin() +
              static_cast<std::size_t>(elements_of.entries[i]) * n_en;
            nodes.insert(nodes.end(), first, first + n_en);
          }
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        dofs.clear();
        for (const index_type m : nodes)
          dofs.insert(dofs.end(),
                      a.node_dofs.begin() + static_cast<std::size_t>(m) * n_c,
                      a.node_dofs.begin() +
                        static_cast<std::size_t>(m + 1) * n_c);
        std::sort(dofs.begin(), dofs.end());
      };
      // Whether (row, column) is in the pattern; the columns are coupled
      // to the row through an element.
      const auto coupled = [&](const index_type row, const index_type column) {
        return keeps_coupling(a, row, column);
      };

      // Row lengths, at row_offsets[row + 1] before the prefix sum.
      a.row_offsets.assign(a.n_dofs + 1, 0);
      dealii::parallel::apply_to_subranges(
        0u,
        a.n_nodes,
        [&](const unsigned int begin, const unsigned int end) {
          std::vector<index_type> nodes, dofs;
          for (unsigned int n = begin; n < end; ++n)
            {
              neighbor_dofs(n, nodes, dofs);
              for (unsigned int c = 0; c < n_c; ++c)
                {
                  const index_type row =
                    a.node_dofs[static_cast<std::size_t>(n) * n_c + c];
                  a.row_offsets[row + 1] =
                    std::count_if(dofs.begin(),
                                  dofs.end(),
                                  [&](const index_type column) {
                                    return coupled(row, column);
                                  });
                }
            }
        },
        1024);
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
        a.n_nodes,
        [&](const unsigned int begin, const unsigned int end) {
          std::vector<index_type> nodes, dofs;
          for (unsigned int n = begin; n < end; ++n)
            {
              neighbor_dofs(n, nodes, dofs);
              for (unsigned int c = 0; c < n_c; ++c)
                {
                  const index_type row =
                    a.node_dofs[static_cast<std::size_t>(n) * n_c + c];
                  std::copy_if(dofs.begin(),
                               dofs.end(),
                               a.column_indices.begin() + a.row_offsets[row],
                               [&](const index_type column) {
                                 return coupled(row, column);
                               });
                }
            }
        },
        1024);
    }



    void
    copy_pattern(const dealii::DynamicSparsityPattern &dsp,
                 const std::string                    &what_pattern,
                 MeshArrays                           &a)
    {
      AssertThrow(
        dsp.n_nonzero_elements() <
          static_cast<std::size_t>(std::numeric_limits<index_type>::max()),
        ExcUnsupportedInput(what_pattern + " has more nonzeros than 32-bit "
                                           "indices can address."));
      a.row_offsets.resize(a.n_dofs + 1);
      a.column_indices.resize(dsp.n_nonzero_elements());
      a.row_offsets[0] = 0;
      for (unsigned int row = 0; row < a.n_dofs; ++row)
        {
          index_type k = a.row_offsets[row];
          for (auto entry = dsp.begin(row); entry != dsp.end(row); ++entry)
            a.column_indices[k++] = entry->column();
          a.row_offsets[row + 1] = k;
        }
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
  } // namespace internal
} // namespace GPUAssembly
