// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/parallel.h>
#include <deal.II/base/thread_management.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/engine/packing.h>
#include <gpu_assembly/engine/shared_nz/layout.h>
#include <gpu_assembly/engine/shared_nz/plan.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

#include "../../base/first_touch.h"
#include "node_graph.h"

namespace GPUAssembly
{
  std::size_t
  SharedNZPlan::shared_bytes(const unsigned int k,
                             const std::size_t  number_size) const
  {
    const std::size_t n_k = element_offsets[k + 1] - element_offsets[k];
    const std::size_t rows =
      SharedNZLayout::row_buffer_bytes(parameters.threads_per_block,
                                       n_components,
                                       number_size);
    if (parameters.node_pairs)
      return rows + SharedNZLayout::node_pair_bytes(n_k,
                                                    n_k - n_free_elements[k],
                                                    n_supplemental,
                                                    n_dofs_per_element,
                                                    number_size);
    const std::size_t slot =
      SharedNZLayout::slot_size(n_components, n_dofs_per_element);
    return rows +
           ((halo_offsets[k + 1] - halo_offsets[k]) * std::size_t(n_fields) +
            slot + std::size_t(n_slots[k]) * slot) *
             number_size;
  }



  std::size_t
  SharedNZPlan::memory_consumption() const
  {
    return (owned_offsets.size() + owned_nodes.size() + halo_offsets.size() +
            halo_nodes.size() + element_offsets.size() + elements.size() +
            block_connectivity.size() + n_slots.size() +
            n_free_elements.size() + n_diagonal_lists.size() +
            block_location.size() + targets.size() + compact_targets.size()) *
             sizeof(index_type) +
           (block_slots.size() + sources.size()) * sizeof(std::uint16_t) +
           block_supplemental.size() * sizeof(double) +
           block_has_constraints.size() +
           (slice_offsets.size() + target_offsets.size() +
            compact_target_offsets.size() + supplemental_offsets.size()) *
             sizeof(std::size_t);
  }



  namespace
  {
    using internal::SharedNZ::Csr;

    // Where the order of an element's nodes is free: S(e) holds the
    // gradients of its nodes and every node's shape value at the single
    // quadrature point is the same number (linear simplices with the
    // midpoint rule, as in 3D; in 2D the three values at the centroid
    // differ in the last bit). The plan then puts the nodes whose rows the
    // block keeps first, so that elements with as many kept nodes need the
    // same node pairs, and a warp of them skips the same ones (kernels skip
    // the pairs of discarded rows: output_may_discard_rows); unordered, the
    // elements of a warp keep different nodes and together need almost
    // every pair. Node pairs compute no element ahead of the reduction.
    bool
    nodes_may_be_reordered(const MeshArrays &arrays, const bool node_pairs)
    {
      const unsigned int n_en = arrays.layout.n_nodes;
      return !node_pairs &&
             arrays.supplemental_format ==
               SupplementalDataFormat::quadrature_gradients &&
             arrays.layout.n_q_points == 1 && n_en <= 32 &&
             arrays.n_supplemental == 1 + n_en * arrays.dim &&
             std::all_of(arrays.layout.shape_values.begin(),
                         arrays.layout.shape_values.end(),
                         [&](const double value) {
                           return value == arrays.layout.shape_values[0];
                         });
    }



    // The arrays of one block before they are concatenated in block order.
    struct Block
    {
      std::vector<index_type>    halo, elements, connectivity, location;
      std::vector<std::uint16_t> slots;
      index_type                 n_slots    = 0;
      index_type                 n_free     = 0;
      index_type                 n_diagonal = 0;
      std::vector<double>        supplemental;
      std::vector<unsigned char> has_constraints;
      std::vector<std::uint16_t> sources;
      std::vector<std::size_t>   slice_ends, target_slice_ends;
      std::vector<index_type>    targets;
      std::vector<std::size_t>   compact_slice_ends;
      std::vector<index_type>    compact_targets;
    };



    // Builds the blocks of one thread, one after another, in steps: the
    // order of the block's elements, their arrays, the slots of the rows
    // the block keeps, the node-pair lists of its nodes, and the rows of
    // lists the warps walk with their targets. The scratch arrays are
    // reused from block to block.
    class BlockBuilder
    {
    public:
      BlockBuilder(const MeshArrays                 &arrays,
                   const Csr                        &elements_of,
                   const std::vector<unsigned char> &constrained,
                   const std::vector<unsigned int>  &block_of_node,
                   const bool                        node_pairs,
                   const bool                        compact_targets,
                   const bool                        reorder_nodes,
                   const unsigned int                threads_per_block)
        : arrays(arrays)
        , elements_of(elements_of)
        , constrained(constrained)
        , block_of_node(block_of_node)
        , node_pairs(node_pairs)
        , compact_targets(compact_targets)
        , reorder_nodes(reorder_nodes)
        , threads_per_block(threads_per_block)
        , dim(arrays.dim)
        , n_en(arrays.layout.n_nodes)
        , n_ed(arrays.layout.n_dofs)
        , n_c(arrays.layout.n_components)
        , n_supplemental(arrays.n_supplemental)
      {}

      void
      build(const unsigned int             k,
            const std::vector<index_type> &owned_nodes,
            Block                         &b)
      {
        // Recorded times are summed over the blocks and threads.
        SetupTimes::Steps steps("SharedNZ plan: blocks, summed");
        this->k = k;
        owned   = owned_nodes;
        steps.next("elements and halo");
        internal::SharedNZ::elements_and_halo(arrays,
                                              elements_of,
                                              owned,
                                              b.elements,
                                              b.halo);
        steps.next("element order");
        order_elements(b);
        steps.next("element arrays");
        gather_element_arrays(b);
        assign_slots(b);
        steps.next("lists");
        collect_lists(b);
        steps.next("rows");
        pack_rows(b);
      }

    private:
      // One element's contribution to the lists of one owned node.
      struct Contribution
      {
        index_type    column_node; // -1: the owned node itself
        index_type    j;           // element position in E_k
        std::uint16_t entry;
        std::uint8_t  a, b; // local positions of row and column node
        bool
        operator<(const Contribution &other) const
        {
          return column_node < other.column_node ||
                 (column_node == other.column_node && j < other.j);
        }
      };

      bool
      owns(const std::size_t e, const unsigned int a) const
      {
        return block_of_node[arrays.connectivity[e * n_en + a]] == k;
      }

      // Global node of local node a of the j-th element of E_k.
      index_type
      node_of(const Block &b, const std::size_t j, const unsigned int a) const
      {
        return arrays
          .connectivity[b.elements[j] * n_en + original[j * n_en + a]];
      }

      // Position in E_k of element e.
      index_type
      position(const index_type e) const
      {
        return std::lower_bound(sorted.begin(),
                                sorted.end(),
                                std::make_pair(e, index_type(0)))
          ->second;
      }

      // Elements with constraints last, so that the warps of the others
      // skip the condensation instead of waiting for it; the others grouped
      // by which of their nodes the part owns, so that the threads of a warp
      // skip the same rows (kernels may skip the rows a block discards:
      // output_may_discard_rows) and write neighbouring slots. Element
      // number -> position in E_k after the reordering is then found by
      // binary search in E_k's sorted copy.
      void
      order_elements(Block &b)
      {
        // Each element's key is found once, not at every comparison: the
        // pairs (key, place in the sorted E_k), sorted, give the order of
        // a stable sort by key. Since E_k arrives sorted, the place of
        // each element in the new order is written to its entry of the
        // sorted copy directly.
        const std::size_t n_k = b.elements.size();
        keys.resize(n_k);
        for (std::size_t i = 0; i < n_k; ++i)
          {
            const index_type e          = b.elements[i];
            unsigned int     owned_mask = 0;
            for (unsigned int a = 0; a < n_en && a < 32; ++a)
              if (owns(e, a))
                owned_mask |= 1u << a;
            // Reordered, the owned nodes come first: only their number
            // tells elements apart.
            if (reorder_nodes && !constrained[e])
              owned_mask = (1u << __builtin_popcount(owned_mask)) - 1;
            keys[i] = {(std::uint64_t(constrained[e] != 0) << 32) | owned_mask,
                       static_cast<index_type>(i)};
          }
        std::sort(keys.begin(), keys.end());
        sorted.resize(n_k);
        for (std::size_t i = 0; i < n_k; ++i)
          sorted[i] = {b.elements[i], 0};
        for (std::size_t j = 0; j < n_k; ++j)
          {
            sorted[keys[j].second].second = j;
            b.elements[j]                 = sorted[keys[j].second].first;
          }
      }

      // Block-local connectivity, S(e), L(e, .) and the constraint flags of
      // E_k. Local node a of the j-th element of E_k is the element's node
      // original[j * n_en + a]: the owned nodes first, where nodes may be
      // reordered.
      void
      gather_element_arrays(Block &b)
      {
        const std::size_t n_k = b.elements.size();
        b.connectivity.resize(n_en * n_k);
        b.slots.assign(n_en * n_k, SharedNZLayout::no_slot);
        b.location.resize(n_ed * n_k);
        b.supplemental.assign(node_pairs ?
                                SharedNZLayout::staged_size(n_k,
                                                            n_supplemental) :
                                n_supplemental * n_k,
                              0.);
        b.has_constraints.assign(n_k, 0);
        original.resize(n_en * n_k);
        for (std::size_t j = 0; j < n_k; ++j)
          {
            // The elements of a block lie far apart in the mesh arrays on
            // large meshes: those a few steps ahead are asked for now, so
            // that their reads overlap.
            if (j + prefetch_distance < n_k)
              {
                const std::size_t ahead = b.elements[j + prefetch_distance];
                __builtin_prefetch(arrays.connectivity.data() + ahead * n_en);
                __builtin_prefetch(arrays.supplemental.data() +
                                   ahead * n_supplemental);
                __builtin_prefetch(arrays.location.data() + ahead * n_ed);
              }
            const std::size_t e     = b.elements[j];
            unsigned int     *order = original.data() + j * n_en;
            std::iota(order, order + n_en, 0u);
            if (reorder_nodes && !constrained[e])
              std::stable_partition(order,
                                    order + n_en,
                                    [&](const unsigned int a) {
                                      return owns(e, a);
                                    });
            for (unsigned int a = 0; a < n_en; ++a)
              b.connectivity[a * n_k + j] =
                std::lower_bound(b.halo.begin(),
                                 b.halo.end(),
                                 arrays.connectivity[e * n_en + order[a]]) -
                b.halo.begin();
            // S(e) of the reordered element: JxW, then the gradients of its
            // nodes in their new order; element by element for node pairs
            // (SharedNZLayout::node_pair_regions()), column by column where
            // a thread computes an element.
            for (unsigned int i = 0; i < n_supplemental; ++i)
              b.supplemental[node_pairs ? j * n_supplemental + i :
                                          i * n_k + j] =
                arrays.supplemental[e * n_supplemental +
                                    (i == 0 || !reorder_nodes ?
                                       i :
                                       1 + order[(i - 1) / dim] * dim +
                                         (i - 1) % dim)];
            for (unsigned int d = 0; d < n_ed; ++d)
              {
                const index_type dof =
                  arrays.location[e * n_ed + order[d / n_c] * n_c + d % n_c];
                b.location[d * n_k + j] = dof;
                if (arrays.dof_is_constrained[dof])
                  b.has_constraints[j] = 1;
              }
          }
        // With node pairs no element has slots: the reduction computes
        // them all, those without constraints first in E_k.
        if (node_pairs)
          b.n_free =
            std::count(b.has_constraints.begin(), b.has_constraints.end(), 0);
      }

      // Slots node by node, then element by element, so that the threads
      // of a warp write neighbouring words.
      void
      assign_slots(Block &b)
      {
        const std::size_t n_k  = b.elements.size();
        index_type        slot = 0;
        for (unsigned int a = 0; a < n_en; ++a)
          for (std::size_t j = 0; j < n_k; ++j)
            if (!node_pairs &&
                (b.has_constraints[j] || block_of_node[node_of(b, j, a)] == k))
              b.slots[a * n_k + j] = slot++;
        b.n_slots = slot;
      }

      // Node-pair lists of each owned node: sources in element order,
      // targets from the first source's element. Diagonal lists (m = n) go
      // to lists[0], the others to lists[1].
      void
      collect_lists(Block &b)
      {
        const std::size_t n_k = b.elements.size();
        for (unsigned int d = 0; d < 2; ++d)
          {
            lists[d].clear();
            list_targets[d].clear();
            list_free[d].clear();
          }
        for (const index_type n : owned)
          {
            contributions.clear();
            for (std::size_t i = elements_of.offsets[n];
                 i < elements_of.offsets[n + 1];
                 ++i)
              {
                // The element's row of K(e, d1, d2) read below for the
                // targets, asked for ahead.
                if (i + prefetch_distance < elements_of.offsets[n + 1])
                  __builtin_prefetch(
                    arrays.nonzero_map.data() +
                    static_cast<std::size_t>(
                      elements_of.entries[i + prefetch_distance]) *
                      n_ed * n_ed);
                const index_type j = position(elements_of.entries[i]);
                unsigned int     a = 0;
                while (node_of(b, j, a) != n)
                  ++a;
                const unsigned int s = b.slots[a * n_k + j];
                for (unsigned int c = 0; c < n_en; ++c)
                  {
                    const index_type m = node_of(b, j, c);
                    // Sources in the block's node order, targets through
                    // the element's own.
                    contributions.push_back(
                      {m == n ? -1 : m,
                       j,
                       node_pairs ?
                         SharedNZLayout::encode_node_pair(j,
                                                          a,
                                                          c,
                                                          n_en,
                                                          m == n) :
                         SharedNZLayout::encode_source(s, c, n_en, m == n),
                       static_cast<std::uint8_t>(original[j * n_en + a]),
                       static_cast<std::uint8_t>(original[j * n_en + c])});
                  }
              }
            std::sort(contributions.begin(), contributions.end());
            for (std::size_t i = 0; i < contributions.size();)
              {
                const Contribution &first    = contributions[i];
                const unsigned int  diagonal = first.column_node < 0;
                IndexLists         &into     = lists[1 - diagonal];
                unsigned int        n_free   = 0;
                for (; i < contributions.size() &&
                       contributions[i].column_node == first.column_node;
                     ++i)
                  {
                    into.entries.push_back(contributions[i].entry);
                    n_free += !node_pairs || contributions[i].j < b.n_free;
                  }
                into.offsets.push_back(into.entries.size());
                list_free[1 - diagonal].push_back(n_free);
                const std::size_t e = b.elements[first.j];
                const std::size_t row =
                  (e * n_ed + first.a * n_c) * n_ed + first.b * n_c;
                for (unsigned int c1 = 0; c1 < n_c; ++c1)
                  for (unsigned int c2 = 0; c2 < n_c; ++c2)
                    list_targets[1 - diagonal].push_back(
                      arrays.nonzero_map[row + c1 * n_ed + c2]);
                if (diagonal)
                  for (unsigned int c1 = 0; c1 < n_c; ++c1)
                    list_targets[0].push_back(
                      arrays.location[e * n_ed + first.a * n_c + c1]);
              }
          }
      }

      // Rows of 32 lists that a warp closes together, the diagonal lists
      // leading theirs and the long ones halved (SharedNZLayout::RowClose);
      // with node pairs in list order, so that a row node's lists close
      // side by side and store to neighbouring nonzeros. Then the targets
      // row by row, as the warps reach them (SharedNZLayout::block_target(),
      // rhs_target()).
      void
      pack_rows(Block &b)
      {
        // Diagonal lists first, each ended by a closing entry that the
        // packing replaces with its row's (shapes.close below).
        b.n_diagonal = lists[0].n_lists();
        ended.clear();
        first_run.clear();
        for (unsigned int d = 0; d < 2; ++d)
          for (unsigned int i = 0; i < lists[d].n_lists(); ++i)
            {
              ended.entries.insert(ended.entries.end(),
                                   lists[d].entries.begin() +
                                     lists[d].offsets[i],
                                   lists[d].entries.begin() +
                                     lists[d].offsets[i + 1]);
              ended.entries.push_back(SharedNZLayout::end_flag);
              ended.offsets.push_back(ended.entries.size());
              first_run.push_back(list_free[d][i]);
            }
        shapes = AlignedRows();
        shapes.leading.assign(ended.n_lists(), 0);
        std::fill_n(shapes.leading.begin(), b.n_diagonal, 1);
        shapes.max_leading   = SharedNZLayout::max_row_diagonal;
        shapes.halve_leading = true;
        shapes.close         = [](const unsigned int n_lists,
                          const unsigned int n_diagonal,
                          const unsigned int n_halved) {
          return index_type(
            SharedNZLayout::encode_row_close(n_lists, n_diagonal, n_halved));
        };
        packed.clear();
        b.slice_ends.clear();
        pack_lists_aligned(ended,
                           first_run,
                           threads_per_block,
                           SharedNZLayout::row_width,
                           packed,
                           b.slice_ends,
                           SharedNZLayout::chunk,
                           node_pairs,
                           &shapes);
        const auto list_target = [&](const unsigned int l) {
          return l < static_cast<unsigned int>(b.n_diagonal) ?
                   list_targets[0].data() + l * (n_c * n_c + n_c) :
                   list_targets[1].data() + (l - b.n_diagonal) * n_c * n_c;
        };
        b.targets.clear();
        b.target_slice_ends.clear();
        b.compact_targets.clear();
        b.compact_slice_ends.clear();
        const auto end_slices = [&](const std::size_t n_slices) {
          while (b.target_slice_ends.size() < n_slices)
            {
              b.target_slice_ends.push_back(b.targets.size());
              if (compact_targets)
                b.compact_slice_ends.push_back(b.compact_targets.size());
            }
        };
        for (std::size_t r = 0; r + 1 < shapes.offsets.size(); ++r)
          {
            end_slices(shapes.slice[r]);
            const unsigned int *row = shapes.lists.data() + shapes.offsets[r];
            const unsigned int  n_row =
              shapes.offsets[r + 1] - shapes.offsets[r];
            const std::size_t row_first = b.targets.size();
            for (unsigned int c1 = 0; c1 < n_c; ++c1)
              for (unsigned int i = 0; i < n_row; ++i)
                for (unsigned int c2 = 0; c2 < n_c; ++c2)
                  b.targets.push_back(list_target(row[i])[c1 * n_c + c2]);
            for (unsigned int i = 0; i < shapes.n_leading[r]; ++i)
              for (unsigned int c1 = 0; c1 < n_c; ++c1)
                b.targets.push_back(list_target(row[i])[n_c * n_c + c1]);
            if (compact_targets)
              SharedNZLayout::append_compact_row(b.targets.data() + row_first,
                                                 n_row,
                                                 shapes.n_leading[r],
                                                 n_c,
                                                 b.compact_targets);
          }
        end_slices(threads_per_block / SharedNZLayout::row_width);
        b.sources.assign(packed.begin(), packed.end());
      }

      // How many elements ahead of their use mesh arrays are prefetched.
      static constexpr std::size_t prefetch_distance = 4;

      const MeshArrays                 &arrays;
      const Csr                        &elements_of;
      const std::vector<unsigned char> &constrained;
      const std::vector<unsigned int>  &block_of_node;
      const bool                        node_pairs;
      const bool                        compact_targets;
      const bool                        reorder_nodes;
      const unsigned int                threads_per_block;
      const unsigned int                dim, n_en, n_ed, n_c, n_supplemental;

      unsigned int                                      k = 0;
      std::vector<index_type>                           owned;
      std::vector<std::pair<index_type, index_type>>    sorted;
      std::vector<std::pair<std::uint64_t, index_type>> keys;
      std::vector<Contribution>                         contributions;
      std::vector<unsigned int>                         original;
      IndexLists                                        lists[2];
      std::vector<index_type>                           list_targets[2];
      // Per list, its sources of elements without constraints (first in a
      // list, as in E_k): pack_lists_aligned() lines up the rest.
      std::vector<unsigned int> list_free[2], first_run;
      IndexLists                ended;
      std::vector<index_type>   packed;
      AlignedRows               shapes;
    };



    // Concatenates a member array of the blocks in block order into
    // @p result, with each block's start in @p offsets.
    template <typename Member, typename Result, typename Offsets>
    void
    concatenate(const std::vector<Block> &blocks,
                Member                    member,
                Result                   &result,
                Offsets                  &offsets)
    {
      const unsigned int n_blocks = blocks.size();
      offsets.assign(n_blocks + 1, 0);
      for (unsigned int k = 0; k < n_blocks; ++k)
        offsets[k + 1] = offsets[k] + (blocks[k].*member).size();
      internal::assign_first_touched_in_parallel(result, offsets.back());
      dealii::parallel::apply_to_subranges(
        0u,
        n_blocks,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int k = begin; k < end; ++k)
            std::copy((blocks[k].*member).begin(),
                      (blocks[k].*member).end(),
                      result.begin() + offsets[k]);
        },
        64);
    }



    // Sources and targets warp by warp: each block's own ends of its
    // warps' shares, shifted to where the block begins.
    template <typename Member, typename Ends, typename Result>
    void
    concatenate_warps(const std::vector<Block> &blocks,
                      const unsigned int        n_warps,
                      Member                    member,
                      Ends                      ends,
                      Result                   &result,
                      std::vector<std::size_t> &offsets)
    {
      const unsigned int       n_blocks = blocks.size();
      std::vector<std::size_t> block_offsets;
      concatenate(blocks, member, result, block_offsets);
      offsets.assign(std::size_t(n_blocks) * n_warps + 1, 0);
      for (unsigned int k = 0; k < n_blocks; ++k)
        for (unsigned int w = 0; w < n_warps; ++w)
          offsets[std::size_t(k) * n_warps + w + 1] =
            block_offsets[k] + (blocks[k].*ends)[w];
    }
  } // namespace



  void
  SharedNZPlan::check_input(const MeshArrays &arrays) const
  {
    const unsigned int T = parameters.threads_per_block;
    AssertThrow(T >= 32 && T <= 1024 && T % 32 == 0,
                dealii::ExcMessage("SharedNZ: threads per block must be a "
                                   "multiple of 32 between 32 and 1024."));
    AssertThrow(arrays.n_nonzeros() <
                  static_cast<std::size_t>(std::numeric_limits<int>::max()),
                ExcUnsupportedInput("SharedNZ: too many nonzeros for 32-bit "
                                    "target indices."));
    AssertThrow(!parameters.node_pairs || arrays.layout.n_dofs <= 64,
                ExcUnsupportedInput(
                  "SharedNZ: node pairs keep which DoFs of an element are "
                  "constrained in 64 bits, and this element has " +
                  std::to_string(arrays.layout.n_dofs) +
                  " DoFs; use SharedNZ without node pairs or GlobalNZ."));
    AssertThrow(parameters.node_pairs || !parameters.compact_targets,
                ExcUnsupportedInput(
                  "SharedNZ: compact targets "
                  "(SharedNZPlan::Parameters::compact_targets) are read by "
                  "the node-pair reduction only; set node_pairs too, or "
                  "leave compact_targets off."));
    // A compact record keeps n_c words of run starts per row c1: 32
    // components at most.
    AssertThrow(!parameters.compact_targets || arrays.layout.n_components <= 32,
                ExcUnsupportedInput(
                  "SharedNZ: compact targets hold elements of at most 32 "
                  "components, and this one has " +
                  std::to_string(arrays.layout.n_components) + "."));
    // The node-pair staging reads the inhomogeneity of every DoF of an
    // element with constraints (SharedNZLayout::stage_constraints()).
    AssertThrow(arrays.dof_is_constrained.size() == arrays.n_dofs &&
                  arrays.inhomogeneities.size() == arrays.n_dofs,
                ExcUnsupportedInput(
                  "SharedNZ: the mesh arrays need a constraint flag and an "
                  "inhomogeneity for each of their " +
                  std::to_string(arrays.n_dofs) + " DoFs, and have " +
                  std::to_string(arrays.dof_is_constrained.size()) + " and " +
                  std::to_string(arrays.inhomogeneities.size()) + "."));
  }



  std::vector<unsigned int>
  SharedNZPlan::number_blocks(const std::vector<unsigned int> &part_of)
  {
    // Parts renumbered densely in the order of their first node.
    const unsigned int        n_nodes = part_of.size();
    std::vector<unsigned int> block_of_part(
      n_nodes,
      std::numeric_limits<unsigned int>::max());
    std::vector<unsigned int> block_of_node(n_nodes);
    std::vector<index_type>   count;
    for (unsigned int n = 0; n < n_nodes; ++n)
      {
        unsigned int &block = block_of_part[part_of[n]];
        if (block == std::numeric_limits<unsigned int>::max())
          {
            block = count.size();
            count.push_back(0);
          }
        block_of_node[n] = block;
        ++count[block];
      }
    n_blocks = count.size();
    owned_offsets.assign(n_blocks + 1, 0);
    for (unsigned int k = 0; k < n_blocks; ++k)
      owned_offsets[k + 1] = owned_offsets[k] + count[k];
    owned_nodes.resize(n_nodes);
    std::vector<index_type> fill(owned_offsets.begin(),
                                 owned_offsets.end() - 1);
    for (unsigned int n = 0; n < n_nodes; ++n)
      owned_nodes[fill[block_of_node[n]]++] = n;
    return block_of_node;
  }



  void
  SharedNZPlan::reinit(const MeshArrays  &arrays,
                       const Parameters  &new_parameters,
                       const unsigned int new_n_fields,
                       const std::size_t  number_size,
                       const std::size_t  shared_memory_limit)
  {
    SetupTimes::Steps steps("SharedNZ plan");
    parameters = new_parameters.resolved(arrays.layout.n_nodes);
    check_input(arrays);
    const unsigned int T = parameters.threads_per_block;
    n_nodes_per_element  = arrays.layout.n_nodes;
    n_dofs_per_element   = arrays.layout.n_dofs;
    n_components         = arrays.layout.n_components;
    n_supplemental       = arrays.n_supplemental;
    n_nonzeros           = arrays.n_nonzeros();
    n_dofs               = arrays.n_dofs;
    n_fields             = new_n_fields;

    // The parts of the nodes, one block each.
    steps.next("node elements");
    const Csr elements_of = internal::SharedNZ::node_to_elements(arrays);
    const std::vector<unsigned char> constrained =
      internal::SharedNZ::constrained_elements(arrays);
    steps.next("node neighbors");
    const Csr neighbors =
      internal::SharedNZ::node_neighbors(arrays, elements_of);
    steps.next("partition");
    const std::vector<unsigned int> block_of_node =
      number_blocks(internal::SharedNZ::partition(arrays,
                                                  elements_of,
                                                  neighbors,
                                                  constrained,
                                                  parameters.partitioner,
                                                  n_fields,
                                                  number_size,
                                                  shared_memory_limit,
                                                  T,
                                                  parameters.node_pairs));

    // Blocks are independent: build them in parallel, then concatenate.
    steps.next("blocks");
    const bool reorder_nodes =
      nodes_may_be_reordered(arrays, parameters.node_pairs);
    std::vector<Block> blocks(n_blocks);
    dealii::parallel::apply_to_subranges(
      0u,
      n_blocks,
      [&](const unsigned int begin, const unsigned int end) {
        BlockBuilder            builder(arrays,
                             elements_of,
                             constrained,
                             block_of_node,
                             parameters.node_pairs,
                             parameters.compact_targets,
                             reorder_nodes,
                             T);
        std::vector<index_type> owned;
        for (unsigned int k = begin; k < end; ++k)
          {
            owned.assign(owned_nodes.begin() + owned_offsets[k],
                         owned_nodes.begin() + owned_offsets[k + 1]);
            builder.build(k, owned, blocks[k]);
          }
      },
      16);

    // The arrays are concatenated at the same time: sizing an array
    // zero-fills it on one thread (the first touch of its pages, slower than
    // the parallel copies), and so the arrays' sizing overlaps.
    steps.next("concatenation");
    std::vector<std::size_t> connectivity_offsets, slot_offsets,
      location_offsets, constraint_offsets;
    dealii::Threads::TaskGroup<void> tasks;
    tasks += dealii::Threads::new_task([&]() {
      concatenate(blocks, &Block::halo, halo_nodes, halo_offsets);
    });
    tasks += dealii::Threads::new_task([&]() {
      concatenate(blocks, &Block::elements, elements, element_offsets);
    });
    tasks += dealii::Threads::new_task([&]() {
      concatenate(blocks,
                  &Block::connectivity,
                  block_connectivity,
                  connectivity_offsets);
    });
    tasks += dealii::Threads::new_task([&]() {
      concatenate(blocks, &Block::slots, block_slots, slot_offsets);
    });
    tasks += dealii::Threads::new_task([&]() {
      concatenate(blocks, &Block::location, block_location, location_offsets);
    });
    tasks += dealii::Threads::new_task([&]() {
      concatenate(blocks,
                  &Block::supplemental,
                  block_supplemental,
                  supplemental_offsets);
    });
    tasks += dealii::Threads::new_task([&]() {
      concatenate(blocks,
                  &Block::has_constraints,
                  block_has_constraints,
                  constraint_offsets);
    });
    tasks += dealii::Threads::new_task([&]() {
      concatenate_warps(blocks,
                        T / 32,
                        &Block::sources,
                        &Block::slice_ends,
                        sources,
                        slice_offsets);
    });
    tasks += dealii::Threads::new_task([&]() {
      concatenate_warps(blocks,
                        T / 32,
                        &Block::targets,
                        &Block::target_slice_ends,
                        targets,
                        target_offsets);
    });
    tasks += dealii::Threads::new_task([&]() {
      if (parameters.compact_targets)
        concatenate_warps(blocks,
                          T / 32,
                          &Block::compact_targets,
                          &Block::compact_slice_ends,
                          compact_targets,
                          compact_target_offsets);
      else
        {
          compact_targets.clear();
          compact_target_offsets.clear();
        }
    });
    tasks.join_all();
    n_slots.resize(n_blocks);
    n_free_elements.resize(n_blocks);
    n_diagonal_lists.resize(n_blocks);
    max_shared_bytes = 0;
    for (unsigned int k = 0; k < n_blocks; ++k)
      {
        n_slots[k]          = blocks[k].n_slots;
        n_free_elements[k]  = blocks[k].n_free;
        n_diagonal_lists[k] = blocks[k].n_diagonal;
        max_shared_bytes =
          std::max(max_shared_bytes, shared_bytes(k, number_size));
      }
    recomputation_factor = double(elements.size()) / arrays.n_elements;
  }
} // namespace GPUAssembly
