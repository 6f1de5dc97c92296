// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_adapter_shared_steps_h
#define gpu_assembly_src_adapter_shared_steps_h

// Steps of building MeshArrays that the serial and the distributed adapter
// share (not installed): the element layout, the parallel loop over the
// elements, S(e) of an element, the node numbers, the node graph, the
// pattern (of Dirichlet constraints, or copied from deal.II's) and
// K(e, d1, d2).

#include <deal.II/base/parallel.h>
#include <deal.II/base/quadrature.h>
#include <deal.II/base/tensor.h>

#include <deal.II/fe/fe.h>
#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

namespace GPUAssembly
{
  namespace internal
  {
    // What follows from the finite element, the quadrature and the options
    // alone: dim, the options, the layout (with the base element's shape
    // values at the quadrature points) and the number of values of S(e).
    template <int dim>
    void
    set_element_layout(const dealii::FiniteElement<dim> &fe,
                       const dealii::Quadrature<dim>    &quadrature,
                       const bool                        keep_constrained_dofs,
                       const SupplementalDataFormat      supplemental_format,
                       MeshArrays                       &a);



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



    // Node numbers follow the DoF numbers of component 0, so a renumbering
    // of the DoFs (Cuthill-McKee, say) carries over to the nodes. Fills
    // n_nodes and E(e, .) from L(e, .).
    void
    number_nodes(MeshArrays &a);



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
    node_to_elements(const MeshArrays &a);



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



    // Whether every constraint is of the form x_i = g_i: then
    // DoFTools::make_sparsity_pattern couples exactly the DoFs of nodes
    // that share an element (AffineConstraints::add_entries_local_to_global
    // adds the free DoFs of a cell among themselves, and for a constrained
    // DoF its whole row and column, or with keep_constrained_dofs false its
    // diagonal alone), which make_pattern_from_node_graph() builds without
    // deal.II's DynamicSparsityPattern.
    bool
    constraints_are_dirichlet(
      const dealii::AffineConstraints<double> &constraints);



    // The CSR pattern of DoFTools::make_sparsity_pattern() for Dirichlet
    // constraints, from the nodes sharing an element with each node: row
    // (n, c) holds the DoFs of those nodes, sorted, less (with
    // keep_constrained_dofs false) the couplings of constrained DoFs other
    // than the diagonal. The rows of a node are independent of all others,
    // so they are counted and then filled in parallel; the result is the
    // same set of sorted columns per row as deal.II's, whatever the threads.
    void
    make_pattern_from_node_graph(const NodeElements &elements_of,
                                 MeshArrays         &a);



    // The CSR pattern copied from deal.II's; what_pattern names it in the
    // message where it has more nonzeros than 32-bit indices address.
    void
    copy_pattern(const dealii::DynamicSparsityPattern &dsp,
                 const std::string                    &what_pattern,
                 MeshArrays                           &a);



    // K(e, d1, d2), in parallel over the elements: each element's entries
    // are found in the rows of its DoFs independently of the others. An
    // element's DoFs are sorted once, so that each of its rows is walked
    // once from left to right instead of searched for every column. The
    // array comes sized.
    void
    fill_nonzero_map(MeshArrays &a);
  } // namespace internal
} // namespace GPUAssembly

#endif
