// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/parallel.h>

#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/base/setup_times.h>
#include <gpu_assembly/engine/constraints/plan.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <memory>
#include <string>

#include "../../base/first_touch.h"
#include "../shared_nz/node_graph.h"

namespace GPUAssembly
{
  namespace
  {
    struct Contribution
    {
      index_type target;
      index_type source;
      double     weight;

      bool
      operator<(const Contribution &other) const
      {
        return target < other.target ||
               (target == other.target && source < other.source);
      }
    };



    // One local DoF's image under the constraints: itself (free), the
    // entries of its line, or nothing (a line without entries, which the
    // condensation has handled completely).
    struct LocalResolution
    {
      bool              free    = false;
      const index_type *dofs    = nullptr;
      const double     *weights = nullptr;
      unsigned int      size    = 0;
    };



    // Contributions in increasing (target, source): storage of their final
    // size that no one fills with zeros first (every entry is written by
    // the parallel passes of sort_contributions(), which also touch its
    // pages first), read as a range.
    struct SortedContributions
    {
      std::unique_ptr<Contribution[]> data;
      std::size_t                     n = 0;

      std::size_t
      size() const
      {
        return n;
      }

      const Contribution *
      begin() const
      {
        return data.get();
      }

      const Contribution *
      end() const
      {
        return data.get() + n;
      }

      const Contribution &
      operator[](const std::size_t i) const
      {
        return data[i];
      }
    };



    index_type
    find_nonzero(const MeshArrays &arrays,
                 const index_type  row,
                 const index_type  column)
    {
      const auto begin =
        arrays.column_indices.begin() + arrays.row_offsets[row];
      const auto end =
        arrays.column_indices.begin() + arrays.row_offsets[row + 1];
      const auto it = std::lower_bound(begin, end, column);
      AssertThrow(it != end && *it == column,
                  ExcUnsupportedInput(
                    "the sparsity pattern has no entry (" +
                    std::to_string(row) + ", " + std::to_string(column) +
                    "), which the constraints couple; the pattern must be "
                    "made with the same constraints "
                    "(DoFTools::make_sparsity_pattern(dof_handler, pattern, "
                    "constraints, ...))."));
      return it - arrays.column_indices.begin();
    }



    // The contributions of element c of the plan (mesh element e): every
    // entry of A^e and F^e that reaches a DoF through a constraint line
    // with entries, with its weight.
    void
    add_element_contributions(const MeshArrays              &arrays,
                              const std::vector<index_type> &line_of_dof,
                              const std::size_t              c,
                              const std::size_t              n_c,
                              const index_type               e,
                              std::vector<LocalResolution>  &resolution,
                              std::vector<Contribution> &matrix_contributions,
                              std::vector<Contribution> &vector_contributions)
    {
      const unsigned int      n_ed = arrays.layout.n_dofs;
      const index_type *const L =
        arrays.location.data() + static_cast<std::size_t>(e) * n_ed;
      for (unsigned int i = 0; i < n_ed; ++i)
        {
          LocalResolution &r = resolution[i];
          r                  = LocalResolution();
          if (arrays.dof_is_constrained[L[i]] == 0)
            {
              r.free = true;
              r.dofs = L + i;
              r.size = 1;
            }
          else if (const index_type l = line_of_dof[L[i]]; l != invalid_index)
            {
              const index_type begin = arrays.constraint_entry_offsets[l];
              r.dofs    = arrays.constraint_entry_dofs.data() + begin;
              r.weights = arrays.constraint_entry_weights.data() + begin;
              r.size    = arrays.constraint_entry_offsets[l + 1] - begin;
            }
        }
      const auto weight = [](const LocalResolution &r, const unsigned int k) {
        return r.free ? 1. : r.weights[k];
      };

      for (unsigned int i = 0; i < n_ed; ++i)
        for (unsigned int j = 0; j < n_ed; ++j)
          {
            const LocalResolution &ri = resolution[i], &rj = resolution[j];
            // Free-free entries are the method's own.
            if (ri.free && rj.free)
              continue;
            const auto source =
              static_cast<index_type>((i * n_ed + j) * n_c + c);
            for (unsigned int p = 0; p < ri.size; ++p)
              for (unsigned int q = 0; q < rj.size; ++q)
                matrix_contributions.push_back(
                  {find_nonzero(arrays, ri.dofs[p], rj.dofs[q]),
                   source,
                   weight(ri, p) * weight(rj, q)});
          }

      for (unsigned int i = 0; i < n_ed; ++i)
        {
          const LocalResolution &ri = resolution[i];
          if (ri.free)
            continue;
          for (unsigned int p = 0; p < ri.size; ++p)
            {
              const double w = weight(ri, p);
              vector_contributions.push_back(
                {ri.dofs[p],
                 static_cast<index_type>((n_ed * n_ed + i) * n_c + c),
                 w});
              for (unsigned int k = 0; k < n_ed; ++k)
                if (const double g = arrays.inhomogeneities[L[k]];
                    arrays.dof_is_constrained[L[k]] != 0 && g != 0.)
                  vector_contributions.push_back(
                    {ri.dofs[p],
                     static_cast<index_type>((i * n_ed + k) * n_c + c),
                     -w * g});
            }
        }
    }



    // The contributions of all chunks in increasing (target, source), the
    // chunks emptied: a counting sort by runs of 64 targets, counted and
    // placed in parallel (by atomic increments, so in any order within a
    // run), then each run ordered in place by a counting sort on its 64
    // targets and each target's few sources by insertion. The pairs
    // (target, source) are distinct, so the order is unique whatever the
    // threads. Linear but for the short sorts, where one sort of all
    // contributions is not. The storage is neither zero-filled nor copied
    // into a second array: on hanging-node meshes there are tens of
    // millions of contributions, and sizing such arrays on one thread cost
    // more than the sort.
    SortedContributions
    sort_contributions(std::vector<std::vector<Contribution>> &chunks,
                       const std::size_t                       n_targets)
    {
      constexpr unsigned int run_bits       = 6;
      constexpr unsigned int run_length     = 1u << run_bits;
      const std::size_t      n_runs         = (n_targets >> run_bits) + 1;
      const auto             for_each_chunk = [&](const auto &action) {
        dealii::parallel::apply_to_subranges(
          std::size_t(0),
          chunks.size(),
          [&](const std::size_t begin, const std::size_t end) {
            for (std::size_t chunk = begin; chunk < end; ++chunk)
              action(chunks[chunk]);
          },
          1);
      };
      const std::unique_ptr<std::atomic<std::size_t>[]> next(
        new std::atomic<std::size_t>[n_runs]());
      for_each_chunk([&](const std::vector<Contribution> &chunk) {
        for (const Contribution &c : chunk)
          next[c.target >> run_bits].fetch_add(1, std::memory_order_relaxed);
      });
      // From here on, the next free place in each run.
      std::vector<std::size_t> run_offsets(n_runs + 1, 0);
      for (std::size_t run = 0; run < n_runs; ++run)
        {
          run_offsets[run + 1] =
            run_offsets[run] + next[run].load(std::memory_order_relaxed);
          next[run].store(run_offsets[run], std::memory_order_relaxed);
        }
      SortedContributions all;
      all.n = run_offsets.back();
      all.data.reset(new Contribution[all.n]);
      Contribution *const placed = all.data.get();
      for_each_chunk([&](std::vector<Contribution> &chunk) {
        for (const Contribution &c : chunk)
          placed[next[c.target >> run_bits]
                   .fetch_add(1, std::memory_order_relaxed)] = c;
        std::vector<Contribution>().swap(chunk);
      });
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        n_runs,
        [&](const std::size_t begin, const std::size_t end) {
          std::array<std::size_t, run_length + 1> start;
          std::vector<Contribution>               run_copy;
          for (std::size_t run = begin; run < end; ++run)
            {
              const std::size_t first = run_offsets[run];
              const std::size_t last  = run_offsets[run + 1];
              run_copy.assign(placed + first, placed + last);
              start.fill(0);
              for (const Contribution &c : run_copy)
                ++start[(c.target & (run_length - 1)) + 1];
              start[0] = first;
              for (unsigned int t = 0; t < run_length; ++t)
                start[t + 1] += start[t];
              // start[t] is the end of target t's list so far.
              for (const Contribution &c : run_copy)
                placed[start[c.target & (run_length - 1)]++] = c;
              // Each target's sources in increasing order: a target has a
              // handful, sorted by insertion, unless long constraint lines
              // give it many.
              std::size_t list_begin = first;
              for (unsigned int t = 0; t < run_length; ++t)
                {
                  const std::size_t list_end = start[t];
                  if (list_end - list_begin > 32)
                    std::sort(placed + list_begin, placed + list_end);
                  else
                    for (std::size_t i = list_begin + 1; i < list_end; ++i)
                      for (std::size_t j = i;
                           j > list_begin &&
                           placed[j].source < placed[j - 1].source;
                           --j)
                        std::swap(placed[j], placed[j - 1]);
                  list_begin = list_end;
                }
            }
        },
        1024);
      return all;
    }



    // n flags, all 0, cleared in parallel: the marks of every nonzero are
    // a hundred megabytes on large meshes.
    std::unique_ptr<std::atomic<std::uint8_t>[]>
    zeroed_marks(const std::size_t n) {
      std::unique_ptr<std::atomic<std::uint8_t>[]> marks(
        new std::atomic<std::uint8_t>[n]);
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        n,
        [&](const std::size_t begin, const std::size_t end) {
          for (std::size_t i = begin; i < end; ++i)
            marks[i].store(0, std::memory_order_relaxed);
        },
        1 << 16);
      return marks;
    }



    // Fill targets, overwrite flags and lists from sorted contributions,
    // appending the targets of one part, the indices in [0, n): those with
    // contributions and those no method writes (not marked), in increasing
    // order. Targets that no one writes become stored zeros, so that every
    // entry of the pattern and of the right-hand side has a defined value
    // after assembly. Fixed chunks of the index range count their targets
    // in parallel and then fill their places, so that the arrays are those
    // of one sweep over the range whatever the threads.
    void append_part(const SortedContributions       &contributions,
                     const std::atomic<std::uint8_t> *marks,
                     const std::size_t                n,
                     ConstraintPlan                  &plan)
    {
      constexpr std::size_t chunk_size = std::size_t(1) << 16;
      const std::size_t     n_chunks   = (n + chunk_size - 1) / chunk_size;
      const auto            in_chunks  = [&](const auto &action) {
        dealii::parallel::apply_to_subranges(
          std::size_t(0),
          n_chunks,
          [&](const std::size_t begin, const std::size_t end) {
            for (std::size_t chunk = begin; chunk < end; ++chunk)
              action(chunk);
          },
          1);
      };
      // The first contribution of each chunk's range.
      std::vector<std::size_t> first_contribution(n_chunks + 1,
                                                  contributions.size());
      in_chunks([&](const std::size_t chunk) {
        first_contribution[chunk] =
          std::lower_bound(contributions.begin(),
                           contributions.end(),
                           chunk * chunk_size,
                           [](const Contribution &c, const std::size_t t) {
                             return static_cast<std::size_t>(c.target) < t;
                           }) -
          contributions.begin();
      });
      // The indices of each chunk that no one writes, increasing.
      std::vector<std::vector<index_type>> unwritten(n_chunks);
      // Calls action(t, overwrite, first, last) for every target t of
      // the chunk, with its contributions [first, last): a merge of the
      // chunk's contributions and unwritten indices.
      const auto for_each_target = [&](const std::size_t chunk,
                                       const auto       &action) {
        std::size_t                    k     = first_contribution[chunk];
        const std::size_t              k_end = first_contribution[chunk + 1];
        const std::vector<index_type> &u     = unwritten[chunk];
        std::size_t                    i     = 0;
        while (k < k_end || i < u.size())
          {
            const index_type t =
              i == u.size() ? contributions[k].target :
              k == k_end    ? u[i] :
                              std::min(contributions[k].target, u[i]);
            const bool overwrite = i < u.size() && u[i] == t;
            if (overwrite)
              ++i;
            const std::size_t first = k;
            for (; k < k_end && contributions[k].target == t; ++k)
              ;
            action(t, overwrite, first, k);
          }
      };
      std::vector<std::size_t> target_start(n_chunks + 1, 0);
      in_chunks([&](const std::size_t chunk) {
        for (std::size_t t = chunk * chunk_size;
             t < std::min(n, (chunk + 1) * chunk_size);
             ++t)
          if (marks[t].load(std::memory_order_relaxed) == 0)
            unwritten[chunk].push_back(t);
        for_each_target(chunk,
                        [&](const index_type,
                            const bool,
                            const std::size_t,
                            const std::size_t) {
                          ++target_start[chunk + 1];
                        });
      });
      for (std::size_t chunk = 0; chunk < n_chunks; ++chunk)
        target_start[chunk + 1] += target_start[chunk];

      const std::size_t target_base = plan.targets.size();
      const std::size_t source_base = plan.sources.size();
      plan.targets.resize(target_base + target_start.back());
      plan.overwrite.resize(target_base + target_start.back());
      plan.source_offsets.resize(target_base + target_start.back() + 1);
      plan.sources.resize(source_base + contributions.size());
      plan.weights.resize(source_base + contributions.size());
      in_chunks([&](const std::size_t chunk) {
        std::size_t i = target_base + target_start[chunk];
        for_each_target(chunk,
                        [&](const index_type  t,
                            const bool        overwrite,
                            const std::size_t first,
                            const std::size_t last) {
                          plan.targets[i]   = t;
                          plan.overwrite[i] = overwrite;
                          for (std::size_t k = first; k < last; ++k)
                            {
                              plan.sources[source_base + k] =
                                contributions[k].source;
                              plan.weights[source_base + k] =
                                contributions[k].weight;
                            }
                          plan.source_offsets[i + 1] = source_base + last;
                          ++i;
                        });
      });
    }
  } // namespace



  void
  ConstraintPlan::reinit(const MeshArrays &arrays)
  {
    SetupTimes::Steps steps("constraint plan");
    *this = ConstraintPlan();
    if (arrays.constraint_line_dofs.empty())
      return;

    const unsigned int n_ed = arrays.layout.n_dofs;
    const unsigned int n_en = arrays.layout.n_nodes;
    n_nodes_per_element     = n_en;
    n_dofs_per_element      = n_ed;
    n_supplemental          = arrays.n_supplemental;

    steps.next("elements");
    std::vector<index_type> line_of_dof(arrays.n_dofs, invalid_index);
    for (unsigned int l = 0; l < arrays.constraint_line_dofs.size(); ++l)
      line_of_dof[arrays.constraint_line_dofs[l]] = l;

    // Flagged in parallel, listed in increasing order.
    std::vector<std::uint8_t> has_line(arrays.n_dofs, 0);
    for (const index_type dof : arrays.constraint_line_dofs)
      has_line[dof] = 1;
    const std::vector<unsigned char> touches_line =
      internal::SharedNZ::elements_touching(arrays, has_line);
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      if (touches_line[e] != 0)
        elements.push_back(e);
    const std::size_t n_c = elements.size();
    AssertThrow(n_c * n_element_entries() <
                  static_cast<std::size_t>(std::numeric_limits<int>::max()),
                ExcUnsupportedInput(
                  "too many elements touch constraints with entries for "
                  "32-bit indices of their element data."));

    connectivity.resize(n_c * n_en);
    supplemental.resize(n_c * n_supplemental);
    dealii::parallel::apply_to_subranges(
      std::size_t(0),
      n_c,
      [&](const std::size_t begin, const std::size_t end) {
        for (std::size_t c = begin; c < end; ++c)
          {
            const std::size_t e = elements[c];
            for (unsigned int a = 0; a < n_en; ++a)
              connectivity[a * n_c + c] = arrays.connectivity[e * n_en + a];
            for (unsigned int i = 0; i < n_supplemental; ++i)
              supplemental[i * n_c + c] =
                arrays.supplemental[e * n_supplemental + i];
          }
      },
      1024);

    steps.next("contributions");
    // Each element's contributions are independent: chunks of elements
    // fill lists of their own, joined in chunk order. The sort then gives
    // the same order whatever the number of threads, since the pairs
    // (target, source) are distinct.
    constexpr unsigned int chunk_size = 256;
    const unsigned int     n_chunks   = (n_c + chunk_size - 1) / chunk_size;
    std::vector<std::vector<Contribution>> matrix_chunks(n_chunks),
      vector_chunks(n_chunks);
    dealii::parallel::apply_to_subranges(
      0u,
      n_chunks,
      [&](const unsigned int chunk_begin, const unsigned int chunk_end) {
        std::vector<LocalResolution> resolution(n_ed);
        for (unsigned int chunk = chunk_begin; chunk < chunk_end; ++chunk)
          for (std::size_t c = std::size_t(chunk) * chunk_size;
               c < std::min<std::size_t>(n_c, (chunk + 1) * chunk_size);
               ++c)
            add_element_contributions(arrays,
                                      line_of_dof,
                                      c,
                                      n_c,
                                      elements[c],
                                      resolution,
                                      matrix_chunks[chunk],
                                      vector_chunks[chunk]);
      },
      1);
    steps.next("sort");
    const SortedContributions matrix_contributions =
      sort_contributions(matrix_chunks, arrays.n_nonzeros());
    const SortedContributions vector_contributions =
      sort_contributions(vector_chunks, arrays.n_dofs);

    // What the methods write: every nonzero some element maps to, every
    // DoF of some element. Threads mark them at the same time; each only
    // ever stores 1.
    steps.next("targets");
    const std::unique_ptr<std::atomic<std::uint8_t>[]> marks =
      zeroed_marks(arrays.n_nonzeros());
    const auto mark_all = [](const std::vector<index_type> &indices,
                             std::atomic<std::uint8_t>     *marks) {
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        indices.size(),
        [&](const std::size_t begin, const std::size_t end) {
          for (std::size_t i = begin; i < end; ++i)
            if (const index_type k = indices[i]; k != invalid_index)
              marks[k].store(1, std::memory_order_relaxed);
        },
        1 << 16);
    };
    mark_all(arrays.nonzero_map, marks.get());
    const std::unique_ptr<std::atomic<std::uint8_t>[]> dof_marks =
      zeroed_marks(arrays.n_dofs);
    mark_all(arrays.location, dof_marks.get());
    steps.next("lists");
    // Both parts' sources at once: the vector part's would otherwise move
    // the matrix part's, tens of millions of them, to new storage.
    sources.reserve(matrix_contributions.size() + vector_contributions.size());
    weights.reserve(matrix_contributions.size() + vector_contributions.size());
    source_offsets.push_back(0);
    append_part(matrix_contributions, marks.get(), arrays.n_nonzeros(), *this);
    n_matrix_targets = targets.size();
    append_part(vector_contributions, dof_marks.get(), arrays.n_dofs, *this);
  }



  std::size_t
  ConstraintPlan::memory_consumption() const
  {
    return (elements.size() + connectivity.size() + targets.size() +
            source_offsets.size() + sources.size()) *
             sizeof(index_type) +
           (supplemental.size() + weights.size()) * sizeof(double) +
           overwrite.size();
  }
} // namespace GPUAssembly
