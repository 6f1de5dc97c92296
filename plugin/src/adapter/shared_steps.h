// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_adapter_shared_steps_h
#define gpu_assembly_src_adapter_shared_steps_h

// Steps of building MeshArrays that the serial and the distributed adapter
// share (not installed): the parallel loop over the elements, the node
// graph, the pattern of Dirichlet constraints and K(e, d1, d2).

#include <deal.II/base/parallel.h>

#include <deal.II/lac/affine_constraints.h>

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <vector>

namespace GPUAssembly
{
  namespace internal
  {
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
