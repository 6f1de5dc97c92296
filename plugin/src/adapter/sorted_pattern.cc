// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/parallel.h>

#include <gpu_assembly/adapter/sorted_pattern.h>
#include <gpu_assembly/base/exceptions.h>

#include <algorithm>
#include <limits>
#include <numeric>

// The host twin of the device build in cuda/adapter/sorted_pattern.cu: the
// same keys, sorted with std::sort instead of a radix sort.

namespace GPUAssembly
{
  namespace internal
  {
    std::vector<index_type>
    constraint_line_of_dofs(const MeshArrays &arrays)
    {
      std::vector<index_type> line_of_dof(arrays.n_dofs, invalid_index);
      for (std::size_t l = 0; l < arrays.constraint_line_dofs.size(); ++l)
        line_of_dof[arrays.constraint_line_dofs[l]] = l;
      return line_of_dof;
    }



    PatternInput
    host_pattern_input(const MeshArrays              &arrays,
                       const std::vector<index_type> &line_of_dof)
    {
      PatternInput in;
      in.n_elements            = arrays.n_elements;
      in.n_element_dofs        = arrays.layout.n_dofs;
      in.n_dofs                = arrays.n_dofs;
      in.keep_constrained_dofs = arrays.keep_constrained_dofs;
      in.location              = arrays.location.data();
      in.dof_is_constrained    = arrays.dof_is_constrained.data();
      in.line_of_dof           = line_of_dof.data();
      in.entry_offsets         = arrays.constraint_entry_offsets.data();
      in.entry_dofs            = arrays.constraint_entry_dofs.data();
      return in;
    }



    void
    check_nonzero_count(const std::size_t n_nonzeros)
    {
      AssertThrow(n_nonzeros < static_cast<std::size_t>(
                                 std::numeric_limits<index_type>::max()),
                  ExcUnsupportedInput("the sparsity pattern has more nonzeros "
                                      "than 32-bit indices can address."));
    }



    void
    make_pattern_by_sorting(MeshArrays &arrays)
    {
      const std::vector<index_type> line_of_dof =
        constraint_line_of_dofs(arrays);
      const PatternInput in     = host_pattern_input(arrays, line_of_dof);
      const KeyCoding    coding = make_key_coding(arrays.n_dofs);
      const std::size_t  n_ed2 =
        std::size_t(in.n_element_dofs) * in.n_element_dofs;

      // X_e of every element, at entry_offsets[e] with their number in
      // n_entries[e]; then the keys, the element couplings first.
      std::vector<std::size_t> entry_offsets(in.n_elements + 1, 0);
      for (std::size_t e = 0; e < in.n_elements; ++e)
        entry_offsets[e + 1] =
          entry_offsets[e] + n_entries_with_repetitions(in, e);
      std::vector<index_type>   entries(entry_offsets.back());
      std::vector<unsigned int> n_entries(in.n_elements);
      std::vector<std::size_t>  key_offsets(in.n_elements + 1,
                                           in.n_elements * n_ed2);
      for (std::size_t e = 0; e < in.n_elements; ++e)
        {
          n_entries[e] =
            element_entries(in, e, entries.data() + entry_offsets[e]);
          key_offsets[e + 1] =
            key_offsets[e] + n_entry_keys(in, e, n_entries[e]);
        }

      std::vector<PatternKey> keys(key_offsets.back());
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        keys.size() > 0 ? in.n_elements * n_ed2 : std::size_t(0),
        [&](const std::size_t begin, const std::size_t end) {
          for (std::size_t k = begin; k < end; ++k)
            keys[k] = element_key(in, coding, k / n_ed2, k % n_ed2);
        },
        4096);
      for (std::size_t e = 0; e < in.n_elements; ++e)
        entry_keys(in,
                   coding,
                   e,
                   entries.data() + entry_offsets[e],
                   n_entries[e],
                   keys.data() + key_offsets[e]);

      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      if (!keys.empty() && keys.back() == coding.sentinel())
        keys.pop_back();
      check_nonzero_count(keys.size());

      arrays.row_offsets.resize(std::size_t(arrays.n_dofs) + 1);
      arrays.column_indices.resize(keys.size());
      for (std::size_t k = 0; k <= keys.size(); ++k)
        set_row_offsets(coding,
                        keys.data(),
                        keys.size(),
                        arrays.n_dofs,
                        k,
                        arrays.row_offsets.data());
      for (std::size_t k = 0; k < keys.size(); ++k)
        arrays.column_indices[k] = coding.column(keys[k]);
    }



    void
    fill_nonzero_map_by_search(MeshArrays &arrays)
    {
      const std::vector<index_type> line_of_dof =
        constraint_line_of_dofs(arrays);
      const PatternInput in = host_pattern_input(arrays, line_of_dof);
      arrays.nonzero_map.resize(std::size_t(in.n_elements) * in.n_element_dofs *
                                in.n_element_dofs);
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        arrays.nonzero_map.size(),
        [&](const std::size_t begin, const std::size_t end) {
          for (std::size_t i = begin; i < end; ++i)
            arrays.nonzero_map[i] =
              nonzero_map_entry(in,
                                arrays.row_offsets.data(),
                                arrays.column_indices.data(),
                                i);
        },
        4096);
    }
  } // namespace internal
} // namespace GPUAssembly
