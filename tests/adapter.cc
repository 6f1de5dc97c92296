// SPDX-License-Identifier: LGPL-2.1-or-later
// Structural checks of the flat MeshArrays that DoFHandlerAdapter builds,
// each against an independent deal.II computation: the CSR pattern against
// DoFTools::make_sparsity_pattern, the location and node arrays against
// cell->get_dof_indices(), node coordinates against
// DoFTools::map_dofs_to_support_points, the nonzero map against the CSR
// pattern, the constraint arrays against AffineConstraints, and the
// supplemental data against geometric identities (volume, partition of
// unity, D^{-1} D = I). Also the nodal gather/scatter round trip, the
// element colouring (also with hanging nodes and on fans that need more than
// 64 colours), arrays that do not depend on the number of threads
// that built them, and the first of several inverted cells named.

#include <deal.II/base/multithread_info.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/element_coloring.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "rule_checks.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

using Rows = std::vector<std::vector<types::global_dof_index>>;

// The entries of each row of a deal.II SparsityPattern, sorted (deal.II
// stores the diagonal first).
Rows
rows_of(const SparsityPattern &sparsity_pattern)
{
  Rows rows(sparsity_pattern.n_rows());
  for (unsigned int row = 0; row < sparsity_pattern.n_rows(); ++row)
    {
      for (auto entry = sparsity_pattern.begin(row);
           entry != sparsity_pattern.end(row);
           ++entry)
        rows[row].push_back(entry->column());
      std::sort(rows[row].begin(), rows[row].end());
    }
  return rows;
}



Rows
rows_of(const MeshArrays &arrays)
{
  Rows rows(arrays.n_dofs);
  for (unsigned int row = 0; row < arrays.n_dofs; ++row)
    rows[row].assign(arrays.column_indices.begin() + arrays.row_offsets[row],
                     arrays.column_indices.begin() +
                       arrays.row_offsets[row + 1]);
  return rows;
}



// Row offsets start at 0, grow, end at the number of nonzeros, and the
// columns of each row are valid and strictly increasing.
bool
csr_is_well_formed(const MeshArrays &arrays)
{
  if (arrays.row_offsets.size() != arrays.n_dofs + 1 ||
      arrays.row_offsets[0] != 0 ||
      static_cast<std::size_t>(arrays.row_offsets[arrays.n_dofs]) !=
        arrays.column_indices.size())
    return false;
  for (unsigned int row = 0; row < arrays.n_dofs; ++row)
    {
      if (arrays.row_offsets[row + 1] <= arrays.row_offsets[row])
        return false;
      for (index_type k = arrays.row_offsets[row];
           k < arrays.row_offsets[row + 1];
           ++k)
        {
          const index_type column = arrays.column_indices[k];
          if (column < 0 || static_cast<unsigned int>(column) >= arrays.n_dofs)
            return false;
          if (k > arrays.row_offsets[row] &&
              arrays.column_indices[k - 1] >= column)
            return false;
        }
    }
  return true;
}



template <int dim>
std::string
describe(const Testing::TestProblem<dim> &problem,
         const Testing::ConstraintKind    kind,
         const bool                       renumber,
         const bool                       keep)
{
  std::ostringstream out;
  out << problem.name() << ", " << Testing::to_string(kind)
      << (renumber ? ", renumbered" : "")
      << (keep ? "" : ", constrained couplings dropped") << ": ";
  return out.str();
}



// CSR pattern and nonzero map, which depend on keep_constrained_dofs.
template <int dim>
void
check_pattern(const Testing::TestProblem<dim> &problem,
              const DoFHandlerAdapter<dim>    &adapter,
              const bool                       keep,
              const std::string               &name,
              Testing::Checks                 &checks)
{
  const MeshArrays &arrays = adapter.get_arrays();

  checks.check(arrays.keep_constrained_dofs == keep &&
                 csr_is_well_formed(arrays),
               name + "CSR arrays are well formed, columns sorted");

  DynamicSparsityPattern dsp(problem.dof_handler.n_dofs());
  DoFTools::make_sparsity_pattern(problem.dof_handler,
                                  dsp,
                                  problem.constraints,
                                  keep);
  SparsityPattern reference;
  reference.copy_from(dsp);
  const Rows reference_rows = rows_of(reference);
  const Rows csr_rows       = rows_of(arrays);
  checks.check(csr_rows == reference_rows &&
                 arrays.n_nonzeros() == reference.n_nonzero_elements(),
               name +
                 "CSR pattern has the entries of "
                 "DoFTools::make_sparsity_pattern (" +
                 std::to_string(arrays.n_nonzeros()) + " nonzeros)");

  SparsityPattern copy;
  adapter.make_sparsity_pattern(copy);
  checks.check(copy.n_rows() == arrays.n_dofs &&
                 copy.n_cols() == arrays.n_dofs &&
                 rows_of(copy) == reference_rows,
               name + "make_sparsity_pattern() gives the same entries");

  // K(e, d1, d2) points at (L(e, d1), L(e, d2)) in the row of L(e, d1);
  // it is invalid exactly for the off-diagonal couplings of a constrained
  // DoF when those are dropped.
  const unsigned int n_ed          = arrays.layout.n_dofs;
  bool               positions_ok  = true;
  bool               invalid_ok    = true;
  std::size_t        n_invalid     = 0;
  std::size_t        n_should_drop = 0;
  for (unsigned int e = 0; e < arrays.n_elements; ++e)
    for (unsigned int d1 = 0; d1 < n_ed; ++d1)
      for (unsigned int d2 = 0; d2 < n_ed; ++d2)
        {
          const index_type row = arrays.location[e * n_ed + d1];
          const index_type col = arrays.location[e * n_ed + d2];
          const index_type K =
            arrays
              .nonzero_map[(static_cast<std::size_t>(e) * n_ed + d1) * n_ed +
                           d2];
          const bool should_drop = !keep && row != col &&
                                   (problem.constraints.is_constrained(row) ||
                                    problem.constraints.is_constrained(col));
          n_should_drop += should_drop;
          if (K == invalid_index)
            {
              ++n_invalid;
              if (!should_drop)
                invalid_ok = false;
            }
          else
            {
              if (should_drop)
                invalid_ok = false;
              if (K < arrays.row_offsets[row] ||
                  K >= arrays.row_offsets[row + 1] ||
                  arrays.column_indices[K] != col)
                positions_ok = false;
            }
        }
  checks.check(arrays.nonzero_map.size() ==
                   static_cast<std::size_t>(arrays.n_elements) * n_ed * n_ed &&
                 positions_ok,
               name + "every valid K(e, d1, d2) is the slot of "
                      "(L(e, d1), L(e, d2)) in row L(e, d1)");
  checks.check(invalid_ok && (!keep || n_invalid == 0),
               name + std::to_string(n_invalid) +
                 " invalid nonzero-map entries, exactly the dropped "
                 "couplings of constrained DoFs");
  if (!keep && !problem.constraints.get_lines().empty())
    checks.check(n_should_drop > 0,
                 name + "dropping constrained couplings invalidates some "
                        "nonzero-map entries");
}



template <int dim>
void
check_element_arrays(const Testing::TestProblem<dim> &problem,
                     const MeshArrays                &arrays,
                     const std::string               &name,
                     Testing::Checks                 &checks)
{
  const FiniteElement<dim> &fe   = *problem.fe;
  const unsigned int        n_c  = problem.n_components;
  const unsigned int        n_en = fe.base_element(0).n_dofs_per_cell();
  const unsigned int        n_ed = fe.n_dofs_per_cell();

  checks.check(arrays.dim == dim &&
                 arrays.n_elements == problem.tria.n_active_cells() &&
                 arrays.n_dofs == problem.dof_handler.n_dofs() &&
                 arrays.layout.n_components == n_c &&
                 arrays.layout.n_nodes == n_en &&
                 arrays.layout.n_dofs == n_ed && n_ed == n_en * n_c &&
                 arrays.layout.degree == problem.degree &&
                 arrays.layout.is_simplex ==
                   problem.tria.get_reference_cells()[0].is_simplex() &&
                 arrays.layout.n_q_points == problem.quadrature->size() &&
                 arrays.connectivity.size() ==
                   static_cast<std::size_t>(arrays.n_elements) * n_en &&
                 arrays.location.size() ==
                   static_cast<std::size_t>(arrays.n_elements) * n_ed,
               name + "sizes and element layout");

  // L(e, a * n_c + c) is the DoF of component c at node a of the cell.
  bool                                 location_ok = true;
  std::vector<types::global_dof_index> dofs(n_ed);
  for (const auto &cell : problem.dof_handler.active_cell_iterators())
    {
      const unsigned int e = cell->active_cell_index();
      cell->get_dof_indices(dofs);
      for (unsigned int a = 0; a < n_en; ++a)
        for (unsigned int c = 0; c < n_c; ++c)
          if (arrays.location[e * n_ed + a * n_c + c] !=
              static_cast<index_type>(dofs[fe.component_to_system_index(c, a)]))
            location_ok = false;
    }
  checks.check(location_ok,
               name + "L(e, a * n_c + c) is the DoF of component c at "
                      "node a from cell->get_dof_indices()");

  // Nodes: node_dofs(E(e, a), c) == L(e, a * n_c + c), every node is used,
  // and there are n_dofs / n_c of them.
  bool nodes_ok =
    arrays.n_nodes * n_c == arrays.n_dofs &&
    arrays.node_dofs.size() == static_cast<std::size_t>(arrays.n_nodes) * n_c;
  std::vector<bool> node_used(arrays.n_nodes, false);
  for (unsigned int e = 0; nodes_ok && e < arrays.n_elements; ++e)
    for (unsigned int a = 0; a < n_en; ++a)
      {
        const index_type node = arrays.connectivity[e * n_en + a];
        if (node < 0 || static_cast<unsigned int>(node) >= arrays.n_nodes)
          {
            nodes_ok = false;
            break;
          }
        node_used[node] = true;
        for (unsigned int c = 0; c < n_c; ++c)
          if (arrays.node_dofs[node * n_c + c] !=
              arrays.location[e * n_ed + a * n_c + c])
            nodes_ok = false;
      }
  const bool all_used =
    std::all_of(node_used.begin(), node_used.end(), [](bool b) {
      return b;
    });
  // node_dofs is a bijection onto the DoFs.
  std::vector<index_type> sorted_node_dofs = arrays.node_dofs;
  std::sort(sorted_node_dofs.begin(), sorted_node_dofs.end());
  bool bijection = sorted_node_dofs.size() == arrays.n_dofs;
  for (unsigned int i = 0; bijection && i < sorted_node_dofs.size(); ++i)
    bijection = sorted_node_dofs[i] == static_cast<index_type>(i);
  checks.check(nodes_ok && all_used && bijection,
               name + std::to_string(arrays.n_nodes) +
                 " nodes = n_dofs / n_components, all used, "
                 "node_dofs(E(e, a), c) == L(e, a * n_c + c)");

  // Constraints.
  bool constraints_ok = arrays.dof_is_constrained.size() == arrays.n_dofs &&
                        arrays.inhomogeneities.size() == arrays.n_dofs;
  for (unsigned int i = 0; constraints_ok && i < arrays.n_dofs; ++i)
    constraints_ok =
      (arrays.dof_is_constrained[i] != 0) ==
        problem.constraints.is_constrained(i) &&
      arrays.inhomogeneities[i] == (problem.constraints.is_constrained(i) ?
                                      problem.constraints.get_inhomogeneity(i) :
                                      0.);
  unsigned int n_constrained_cells = 0;
  for (const auto &cell : problem.dof_handler.active_cell_iterators())
    {
      cell->get_dof_indices(dofs);
      if (std::any_of(dofs.begin(), dofs.end(), [&](const auto i) {
            return problem.constraints.is_constrained(i);
          }))
        ++n_constrained_cells;
    }
  const bool constrained = problem.constraints.n_constraints() > 0;
  checks.check(constraints_ok &&
                 arrays.n_constrained_elements() == n_constrained_cells &&
                 (constrained ? n_constrained_cells > 0 :
                                n_constrained_cells == 0),
               name +
                 "constrained flags and inhomogeneities match the "
                 "AffineConstraints; " +
                 std::to_string(arrays.n_constrained_elements()) +
                 " elements touch constrained DoFs");
  if (problem.constraints.n_constraints() > 0)
    {
      bool has_nonzero_inhomogeneity = false;
      for (const double g : arrays.inhomogeneities)
        has_nonzero_inhomogeneity |= (g != 0.);
      const bool inhomogeneous = problem.constraints.has_inhomogeneities();
      checks.check(has_nonzero_inhomogeneity == inhomogeneous,
                   name + "nonzero inhomogeneities present exactly for "
                          "inhomogeneous constraints");
    }

  // Node coordinates are the support points of the node's DoFs.
  std::map<types::global_dof_index, Point<dim>> support_points;
  DoFTools::map_dofs_to_support_points(*problem.mapping,
                                       problem.dof_handler,
                                       support_points);
  double coordinate_error = arrays.nodal_coordinates.size() ==
                                static_cast<std::size_t>(arrays.n_nodes) * dim ?
                              0. :
                              1.;
  for (unsigned int n = 0; coordinate_error < 1. && n < arrays.n_nodes; ++n)
    for (unsigned int c = 0; c < n_c; ++c)
      {
        const auto it = support_points.find(arrays.node_dofs[n * n_c + c]);
        if (it == support_points.end())
          {
            coordinate_error = 1.;
            break;
          }
        for (unsigned int k = 0; k < dim; ++k)
          coordinate_error =
            std::max(coordinate_error,
                     std::abs(arrays.nodal_coordinates[n * dim + k] -
                              it->second[k]));
      }
  std::ostringstream what;
  what << name
       << "nodal coordinates equal the DoF support points (max difference "
       << coordinate_error << " <= 1e-12)";
  checks.check(coordinate_error <= 1e-12, what.str());
}



template <int dim>
void
check_quadrature_gradients(const MeshArrays  &arrays,
                           const std::string &name,
                           Testing::Checks   &checks)
{
  const unsigned int n_en     = arrays.layout.n_nodes;
  const unsigned int n_q      = arrays.layout.n_q_points;
  const unsigned int n_per_q  = 1 + n_en * dim;
  double             volume   = 0;
  double             grad_sum = 0;
  bool               jxw_ok   = true;
  for (unsigned int e = 0; e < arrays.n_elements; ++e)
    for (unsigned int q = 0; q < n_q; ++q)
      {
        const double *S =
          arrays.supplemental.data() + e * arrays.n_supplemental + q * n_per_q;
        volume += S[0];
        jxw_ok &= S[0] > 0;
        for (unsigned int k = 0; k < dim; ++k)
          {
            double sum = 0;
            for (unsigned int a = 0; a < n_en; ++a)
              sum += S[1 + a * dim + k];
            grad_sum = std::max(grad_sum, std::abs(sum));
          }
      }
  checks.check(arrays.supplemental_format ==
                   SupplementalDataFormat::quadrature_gradients &&
                 arrays.n_supplemental == n_q * n_per_q &&
                 arrays.supplemental.size() ==
                   static_cast<std::size_t>(arrays.n_elements) *
                     arrays.n_supplemental,
               name + "S(e) has n_q * (1 + n_nodes * dim) values");
  checks.check(jxw_ok && std::abs(volume - 1.) <= 1e-12,
               name + "JxW > 0 and sum of JxW is the domain volume 1 "
                      "to 1e-12");
  checks.check(grad_sum <= 1e-10,
               name + "sum over nodes of the shape gradients vanishes "
                      "(partition of unity) to 1e-10");

  // The shape values stored in the layout also sum to one.
  double value_error = 0;
  for (unsigned int q = 0; q < n_q; ++q)
    {
      double sum = 0;
      for (unsigned int a = 0; a < n_en; ++a)
        sum += arrays.layout.shape_values[q * n_en + a];
      value_error = std::max(value_error, std::abs(sum - 1.));
    }
  checks.check(arrays.layout.shape_values.size() == n_q * n_en &&
                 value_error <= 1e-12,
               name + "reference shape values sum to one at every "
                      "quadrature point");
}



template <int dim>
void
check_inverse_edge_matrix(const Testing::TestProblem<dim> &problem,
                          const std::string               &name,
                          Testing::Checks                 &checks)
{
  if (!(problem.simplex && problem.degree == 1))
    {
      checks.check_throws<ExcUnsupportedInput>(
        [&]() {
          Testing::make_adapter(problem,
                                {SupplementalDataFormat::inverse_edge_matrix});
        },
        "inverse-edge-matrix",
        name + "the inverse-edge-matrix format is refused");
      return;
    }

  const DoFHandlerAdapter<dim> adapter =
    Testing::make_adapter(problem,
                          {SupplementalDataFormat::inverse_edge_matrix});
  const MeshArrays  &arrays = adapter.get_arrays();
  const unsigned int n_en   = arrays.layout.n_nodes;
  bool               inverse_ok =
    arrays.n_supplemental == dim * dim + 1 &&
    arrays.supplemental.size() ==
      static_cast<std::size_t>(arrays.n_elements) * (dim * dim + 1) &&
    arrays.supplemental_format == SupplementalDataFormat::inverse_edge_matrix;
  bool   det_ok    = true;
  double volume    = 0;
  double factorial = 1;
  for (unsigned int k = 2; k <= dim; ++k)
    factorial *= k;
  for (unsigned int e = 0; inverse_ok && e < arrays.n_elements; ++e)
    {
      const double *S = arrays.supplemental.data() + e * arrays.n_supplemental;
      const index_type node_0 = arrays.connectivity[e * n_en];
      // D = [x_1 - x_0, ..., x_dim - x_0]: column j is edge j.
      FullMatrix<double> D(dim, dim), D_inverse(dim, dim), product(dim, dim);
      for (unsigned int j = 0; j < dim; ++j)
        {
          const index_type node_j = arrays.connectivity[e * n_en + j + 1];
          for (unsigned int k = 0; k < dim; ++k)
            D(k, j) = arrays.nodal_coordinates[node_j * dim + k] -
                      arrays.nodal_coordinates[node_0 * dim + k];
        }
      for (unsigned int j = 0; j < dim; ++j)
        for (unsigned int k = 0; k < dim; ++k)
          D_inverse(j, k) = S[j * dim + k];
      D_inverse.mmult(product, D);
      for (unsigned int j = 0; j < dim; ++j)
        for (unsigned int k = 0; k < dim; ++k)
          if (std::abs(product(j, k) - (j == k ? 1. : 0.)) > 1e-12)
            inverse_ok = false;
      const double det = D.determinant();
      if (!(S[dim * dim] > 0) ||
          std::abs(S[dim * dim] - det) > 1e-14 * std::max(1., std::abs(det)))
        det_ok = false;
      volume += S[dim * dim] / factorial;
    }
  checks.check(inverse_ok,
               name + "inverse-edge-matrix S(e): D^{-1} D = I to 1e-12");
  checks.check(det_ok,
               name + "inverse-edge-matrix S(e): last entry is det D > 0");
  checks.check(std::abs(volume - 1.) <= 1e-12,
               name + "sum of det D / dim! is the domain volume 1");
}



template <int dim>
void
check_gather_scatter(const DoFHandlerAdapter<dim> &adapter,
                     const std::string            &name,
                     Testing::Checks              &checks)
{
  const MeshArrays &arrays = adapter.get_arrays();
  Vector<double>    dof_values(arrays.n_dofs);
  for (unsigned int i = 0; i < arrays.n_dofs; ++i)
    dof_values[i] = 1. + 0.37 * i + 1e-3 * std::sin(1. + i);

  std::vector<double> nodal;
  adapter.gather_nodal_values(dof_values, nodal);
  const unsigned int n_c       = arrays.layout.n_components;
  bool               gather_ok = nodal.size() == arrays.n_dofs;
  for (unsigned int n = 0; gather_ok && n < arrays.n_nodes; ++n)
    for (unsigned int c = 0; c < n_c; ++c)
      gather_ok &=
        nodal[n * n_c + c] == dof_values[arrays.node_dofs[n * n_c + c]];

  Vector<double> back;
  adapter.scatter_nodal_values(nodal, back);
  bool round_trip = back.size() == dof_values.size();
  for (unsigned int i = 0; round_trip && i < back.size(); ++i)
    round_trip = back[i] == dof_values[i];
  checks.check(gather_ok && round_trip,
               name + "gather_nodal_values reads node_dofs and "
                      "scatter_nodal_values restores the vector exactly");
}



using Colors = std::vector<std::vector<unsigned int>>;



void
check_coloring(const MeshArrays  &arrays,
               const std::string &name,
               Testing::Checks   &checks)
{
  const auto colors = color_elements(arrays);

  // An independent check of the colouring: each element once, no node twice
  // in one colour.
  const unsigned int n_en = arrays.layout.n_nodes;
  bool               ok   = true;
  std::vector<int>   count(arrays.n_elements, 0);
  for (const auto &color : colors)
    {
      std::set<index_type> nodes;
      for (const unsigned int e : color)
        {
          if (e >= arrays.n_elements)
            {
              ok = false;
              continue;
            }
          ++count[e];
          for (unsigned int a = 0; a < n_en; ++a)
            ok &= nodes.insert(arrays.connectivity[e * n_en + a]).second;
        }
    }
  ok &= std::all_of(count.begin(), count.end(), [](int c) {
    return c == 1;
  });
  checks.check(ok && is_valid_coloring(arrays, colors),
               name + "color_elements() gives a valid colouring (" +
                 std::to_string(colors.size()) + " colours)");

  // The bound of first fit: an element never needs more colours than it has
  // neighbours (elements that share a node with it), plus one.
  std::vector<std::vector<unsigned int>> node_elements(arrays.n_nodes);
  for (unsigned int e = 0; e < arrays.n_elements; ++e)
    for (unsigned int a = 0; a < n_en; ++a)
      node_elements[arrays.connectivity[e * n_en + a]].push_back(e);
  std::size_t max_neighbors = 0;
  for (unsigned int e = 0; e < arrays.n_elements; ++e)
    {
      std::set<unsigned int> neighbors;
      for (unsigned int a = 0; a < n_en; ++a)
        for (const unsigned int f :
             node_elements[arrays.connectivity[e * n_en + a]])
          if (f != e)
            neighbors.insert(f);
      max_neighbors = std::max(max_neighbors, neighbors.size());
    }
  std::vector<Colors> repeated;
  for (const unsigned int threads : {1u, 3u, numbers::invalid_unsigned_int})
    {
      MultithreadInfo::set_thread_limit(threads);
      repeated.push_back(color_elements(arrays));
    }
  MultithreadInfo::set_thread_limit();
  Testing::check_rules(
    checks,
    name + "color_elements()",
    {{std::none_of(colors.begin(),
                   colors.end(),
                   [](const auto &color) {
                     return color.empty();
                   }),
      "no empty colour"},
     {std::all_of(colors.begin(),
                  colors.end(),
                  [](const auto &color) {
                    return std::is_sorted(color.begin(), color.end());
                  }),
      "each colour's elements in increasing order"},
     {colors.size() <= max_neighbors + 1,
      "at most " + std::to_string(max_neighbors + 1) +
        " colours (the most neighbours of an element, plus one)"},
     {std::all_of(repeated.begin(),
                  repeated.end(),
                  [&](const Colors &again) {
                    return again == colors;
                  }),
      "the same colouring on repeated calls with 1, 3 and all threads"}});

  // Element 0 and a neighbour that shares a node with it.
  unsigned int neighbor = arrays.n_elements;
  for (unsigned int e = 1;
       e < arrays.n_elements && neighbor == arrays.n_elements;
       ++e)
    for (unsigned int a = 0; a < n_en; ++a)
      for (unsigned int b = 0; b < n_en; ++b)
        if (arrays.connectivity[e * n_en + a] == arrays.connectivity[b])
          neighbor = e;
  std::vector<std::vector<unsigned int>> singletons;
  for (unsigned int e = 0; e < arrays.n_elements; ++e)
    if (e != neighbor)
      singletons.push_back({e});
  // Control: with the neighbour in a colour of its own, all is valid.
  auto separate = singletons;
  separate.push_back({neighbor});
  auto together = singletons;
  together[0].push_back(neighbor);
  auto missing = singletons; // the neighbour is in no colour
  auto twice   = separate;
  twice.push_back({0u});
  checks.check(neighbor < arrays.n_elements &&
                 is_valid_coloring(arrays, separate) &&
                 !is_valid_coloring(arrays, together) &&
                 !is_valid_coloring(arrays, missing) &&
                 !is_valid_coloring(arrays, twice),
               name + "is_valid_coloring() rejects two elements sharing a "
                      "node in one colour, a missing and a repeated element");
}



template <int dim>
void
test_configuration(const bool                    simplex,
                   const unsigned int            degree,
                   const unsigned int            n_components,
                   const Testing::ConstraintKind kind,
                   const bool                    renumber,
                   Testing::Checks              &checks)
{
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         simplex,
                         degree,
                         n_components,
                         kind,
                         renumber);
  if (kind != Testing::ConstraintKind::none)
    checks.check(problem.constraints.n_constraints() > 0,
                 describe(problem, kind, renumber, true) +
                   "the test problem has constraints");

  for (const bool keep : {true, false})
    {
      const std::string name = describe(problem, kind, renumber, keep);
      const DoFHandlerAdapter<dim> adapter =
        Testing::make_adapter(problem,
                              {SupplementalDataFormat::quadrature_gradients,
                               keep});
      check_pattern(problem, adapter, keep, name, checks);
      if (!keep)
        continue;
      check_element_arrays(problem, adapter.get_arrays(), name, checks);
      check_quadrature_gradients<dim>(adapter.get_arrays(), name, checks);
      check_inverse_edge_matrix(problem, name, checks);
      check_gather_scatter(adapter, name, checks);
      check_coloring(adapter.get_arrays(), name, checks);
    }
}



template <int dim>
void
test_all(Testing::Checks &checks)
{
  for (const bool simplex : {false, true})
    for (const unsigned int degree : {1u, 2u})
      for (const unsigned int n_components : {1u, static_cast<unsigned>(dim)})
        for (const auto kind : {Testing::ConstraintKind::none,
                                Testing::ConstraintKind::inhomogeneous})
          {
            // Renumbering on half of the cases, with and without
            // constraints, scalar and vector.
            const bool renumber =
              (kind == Testing::ConstraintKind::inhomogeneous) !=
              (n_components > 1);
            test_configuration<dim>(simplex,
                                    degree,
                                    n_components,
                                    kind,
                                    renumber,
                                    checks);
          }
}



// The adapter builds its arrays in parallel over elements and nodes; they
// must not depend on how many threads built them, or results would differ
// from machine to machine.
template <int dim>
void
check_independent_of_threads(const bool                   simplex,
                             const unsigned int           degree,
                             const unsigned int           n_components,
                             const unsigned int           subdivisions,
                             const SupplementalDataFormat format,
                             Testing::Checks             &checks)
{
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         simplex,
                         degree,
                         n_components,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         subdivisions);
  for (const bool keep : {true, false})
    {
      std::vector<MeshArrays> built;
      for (const unsigned int threads : {1u, 3u, numbers::invalid_unsigned_int})
        {
          MultithreadInfo::set_thread_limit(threads);
          built.push_back(
            Testing::make_adapter(problem, {format, keep}).get_arrays());
        }
      MultithreadInfo::set_thread_limit();
      const std::string name =
        describe(problem, Testing::ConstraintKind::inhomogeneous, true, keep);
      for (unsigned int i = 1; i < built.size(); ++i)
        {
          const MeshArrays &a = built[0], &b = built[i];
          Testing::check_rules(
            checks,
            name + "arrays built by 1 thread equal those built by " +
              (i == 1 ? "3" : "all"),
            {{a.n_nodes == b.n_nodes && a.connectivity == b.connectivity &&
                a.location == b.location && a.node_dofs == b.node_dofs,
              "same E(e, a), L(e, d) and node DoFs"},
             {a.supplemental == b.supplemental &&
                a.nodal_coordinates == b.nodal_coordinates,
              "same S(e) and C(n), bit for bit"},
             {a.row_offsets == b.row_offsets &&
                a.column_indices == b.column_indices &&
                a.nonzero_map == b.nonzero_map,
              "same CSR pattern and K(e, d1, d2)"}});
        }
      check_coloring(built[0], name, checks);
      checks.check(built[0].n_elements > 2000,
                   name + "the mesh compared has more elements (" +
                     std::to_string(built[0].n_elements) +
                     ") than one thread's share of the parallel loops");
    }
}



// With several bad cells, the one named is the first in the order of the
// active cells, however the threads share out the elements: a mesh
// mirrored through a plane has every cell inverted, so the message must
// name element 0.
void
check_first_inverted_cell_named(Testing::Checks &checks)
{
  Triangulation<2> tria;
  GridGenerator::subdivided_hyper_cube(tria, 64);
  GridTools::transform(
    [](const Point<2> &p) {
      return Point<2>(-p[0], p[1]);
    },
    tria);
  DoFHandler<2> dof_handler(tria);
  dof_handler.distribute_dofs(FE_Q<2>(1));
  const MappingQ<2>         mapping(1);
  const QGauss<2>           quadrature(2);
  AffineConstraints<double> constraints;
  constraints.close();
  for (const unsigned int threads : {1u, numbers::invalid_unsigned_int})
    {
      MultithreadInfo::set_thread_limit(threads);
      checks.check_throws<ExcUnsupportedInput>(
        [&]() {
          DoFHandlerAdapter<2>(mapping, dof_handler, quadrature, constraints);
        },
        "element 0, cell " + tria.begin_active()->id().to_string(),
        std::string("a mirrored mesh (all ") +
          std::to_string(tria.n_active_cells()) +
          " cells inverted) is refused naming its first cell, built by " +
          (threads == 1 ? "1 thread" : "all threads"));
    }
  MultithreadInfo::set_thread_limit();
}


// Meshes with hanging nodes: a coarse cell shares only some nodes with the
// refined cells along its face (the hanging nodes belong to the refined cells
// alone), and the cells of two levels meet in one colouring.
template <int dim>
void
check_coloring_hanging_nodes(const unsigned int degree, Testing::Checks &checks)
{
  Triangulation<dim> tria;
  GridGenerator::subdivided_hyper_cube(tria, 6);
  for (const auto &cell : tria.active_cell_iterators())
    if (cell->center().norm() < 0.5)
      cell->set_refine_flag();
  tria.execute_coarsening_and_refinement();
  DoFHandler<dim> dof_handler(tria);
  const FE_Q<dim> fe(degree);
  dof_handler.distribute_dofs(fe);
  AffineConstraints<double> constraints;
  DoFTools::make_hanging_node_constraints(dof_handler, constraints);
  constraints.close();
  const MappingQ<dim> mapping(1);
  const QGauss<dim>   quadrature(degree + 1);
  const std::string   name =
    std::to_string(dim) + "D Q" + std::to_string(degree) + " with " +
    std::to_string(constraints.n_constraints()) + " hanging-node constraints: ";
  checks.check(constraints.n_constraints() > 0,
               name + "the mesh has hanging nodes");
  const DoFHandlerAdapter<dim> adapter(mapping,
                                       dof_handler,
                                       quadrature,
                                       constraints);
  check_coloring(adapter.get_arrays(), name, checks);
}



// Two disjoint fans of triangles, each around one centre node that all its
// triangles share: each fan needs as many colours as it has triangles, more
// than fit in one 64-bit word of colours per node, and first fit pairs the
// triangles of the two fans.
void
check_coloring_fans(Testing::Checks &checks)
{
  const unsigned int n_fan = 150; // triangles per fan
  MeshArrays         arrays;
  arrays.dim            = 2;
  arrays.layout.n_nodes = 3;
  arrays.n_elements     = 2 * n_fan;
  arrays.n_nodes        = 2 * (n_fan + 1);
  for (unsigned int fan = 0; fan < 2; ++fan)
    {
      const unsigned int centre = fan * (n_fan + 1);
      for (unsigned int k = 0; k < n_fan; ++k)
        for (const unsigned int node :
             {centre, centre + 1 + k, centre + 1 + (k + 1) % n_fan})
          arrays.connectivity.push_back(static_cast<index_type>(node));
    }
  const Colors colors = color_elements(arrays);
  bool         pairs  = colors.size() == n_fan;
  for (unsigned int c = 0; pairs && c < colors.size(); ++c)
    pairs = colors[c] == std::vector<unsigned int>{c, n_fan + c};
  Testing::check_rules(
    checks,
    "two fans of " + std::to_string(n_fan) +
      " triangles around a shared node each",
    {{is_valid_coloring(arrays, colors), "a valid colouring"},
     {colors.size() == n_fan,
      std::to_string(n_fan) + " colours (got " + std::to_string(colors.size()) +
        "), as many as a fan has triangles"},
     {pairs, "colour c holds triangle c of each fan"},
     {color_elements(arrays) == colors, "the same on a repeated call"}});
  check_coloring(arrays, "fans: ", checks);
}



int
main()
{
  Testing::Checks checks;
  test_all<2>(checks);
  test_all<3>(checks);
  check_independent_of_threads<3>(true,
                                  1,
                                  3,
                                  8,
                                  SupplementalDataFormat::quadrature_gradients,
                                  checks);
  check_independent_of_threads<3>(
    true,
    1,
    3,
    8,
    SupplementalDataFormat::compressed_edge_matrix,
    checks);
  check_independent_of_threads<2>(false,
                                  2,
                                  2,
                                  48,
                                  SupplementalDataFormat::quadrature_gradients,
                                  checks);
  check_coloring_hanging_nodes<2>(1, checks);
  check_coloring_hanging_nodes<3>(1, checks);
  check_coloring_hanging_nodes<3>(2, checks);
  check_coloring_fans(checks);
  check_first_inverted_cell_named(checks);
  return checks.exit_code();
}
