// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_adapter_sorted_pattern_h
#define gpu_assembly_adapter_sorted_pattern_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/base/config.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

/**
 * @file
 * The CSR pattern and the nonzero map K(e, d1, d2) built by sorting, the
 * form that parallelises on a GPU: every element writes the (row, column)
 * keys of the couplings it adds to the pattern, the keys are sorted and
 * made unique, and the row offsets follow from where each row's keys
 * begin; K is then found by a binary search in the row. The per-element
 * and per-key steps below are written once for the host and the device, so
 * that the host build by sorting (make_pattern_by_sorting(),
 * fill_nonzero_map_by_search()) is the device build's twin, and both equal
 * the adapter's row-by-row host build entry for entry.
 *
 * The couplings of element e follow DoFTools::make_sparsity_pattern()
 * (AffineConstraints::add_entries_local_to_global()): with L_e its DoFs,
 * F_e the unconstrained ones and X_e the entries of the constraint lines of
 * its constrained DoFs (all unconstrained, since the lines are closed),
 * - (L_e(i), L_e(j)) for every pair that keeps_coupling() keeps (all pairs
 *   with keep_constrained_dofs, else the pairs of unconstrained DoFs and the
 *   diagonal),
 * - X_e x X_e, X_e x F_e and F_e x X_e.
 */

namespace GPUAssembly
{
  namespace internal
  {
    /// A (row, column) pair of the pattern as one sortable integer.
    using PatternKey = std::uint64_t;

    /**
     * The raw arrays, on the host or on the device, from which the pattern
     * and K are built (those of MeshArrays, with the constraint line of
     * each DoF looked up once).
     */
    struct PatternInput
    {
      unsigned int n_elements = 0;
      /// Local DoFs per element.
      unsigned int n_element_dofs        = 0;
      unsigned int n_dofs                = 0;
      bool         keep_constrained_dofs = true;
      /// L(e, d), MeshArrays::location.
      const index_type *location = nullptr;
      /// MeshArrays::dof_is_constrained.
      const std::uint8_t *dof_is_constrained = nullptr;
      /// The constraint line (with entries) of each DoF, or invalid_index.
      const index_type *line_of_dof = nullptr;
      /// MeshArrays::constraint_entry_offsets and constraint_entry_dofs.
      const index_type *entry_offsets = nullptr;
      const index_type *entry_dofs    = nullptr;
    };

    /**
     * Row r and column c as the key r * 2^column_bits + c, with 2^column_bits
     * > n_dofs: keys sort as (row, column) pairs, a radix sort needs only
     * the low 2 * column_bits bits, and the key with all these bits set
     * (sentinel()) is no pair of DoFs. It marks the places of couplings
     * that an element drops; they sort last.
     */
    struct KeyCoding
    {
      unsigned int column_bits = 1;

      GPU_ASSEMBLY_HOST_DEVICE PatternKey
      encode(const index_type row, const index_type column) const
      {
        return (static_cast<PatternKey>(row) << column_bits) |
               static_cast<PatternKey>(column);
      }

      GPU_ASSEMBLY_HOST_DEVICE index_type
      row(const PatternKey key) const
      {
        return static_cast<index_type>(key >> column_bits);
      }

      GPU_ASSEMBLY_HOST_DEVICE index_type
      column(const PatternKey key) const
      {
        return static_cast<index_type>(key &
                                       ((PatternKey(1) << column_bits) - 1));
      }

      /// The number of low bits in which keys differ.
      GPU_ASSEMBLY_HOST_DEVICE int
      n_bits() const
      {
        return 2 * static_cast<int>(column_bits);
      }

      GPU_ASSEMBLY_HOST_DEVICE PatternKey
      sentinel() const
      {
        return n_bits() >= 64 ? ~PatternKey(0) :
                                (PatternKey(1) << n_bits()) - 1;
      }
    };

    /// The coding for @p n_dofs DoFs.
    inline KeyCoding
    make_key_coding(const unsigned int n_dofs)
    {
      KeyCoding coding;
      while ((std::uint64_t(1) << coding.column_bits) <= n_dofs)
        ++coding.column_bits;
      return coding;
    }

    /// Whether the pattern holds the coupling of two DoFs of one element:
    /// DoFTools::make_sparsity_pattern() without keep_constrained_dofs
    /// drops those of a constrained DoF but its diagonal.
    GPU_ASSEMBLY_HOST_DEVICE inline bool
    keeps_coupling(const PatternInput &in,
                   const index_type    row,
                   const index_type    column)
    {
      return in.keep_constrained_dofs || row == column ||
             (!in.dof_is_constrained[row] && !in.dof_is_constrained[column]);
    }

    /// The number of entries of the lines of element @p e's constrained
    /// DoFs, repetitions counted: the room element_entries() needs.
    GPU_ASSEMBLY_HOST_DEVICE inline std::size_t
    n_entries_with_repetitions(const PatternInput &in, const std::size_t e)
    {
      std::size_t n = 0;
      for (unsigned int d = 0; d < in.n_element_dofs; ++d)
        {
          const index_type line =
            in.line_of_dof[in.location[e * in.n_element_dofs + d]];
          if (line != invalid_index)
            n += in.entry_offsets[line + 1] - in.entry_offsets[line];
        }
      return n;
    }

    /**
     * X_e of element @p e into @p entries (room for
     * n_entries_with_repetitions() of them), sorted and without
     * repetitions; returns their number. An insertion sort: the lists are
     * short, and one GPU thread sorts one element's list.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline unsigned int
    element_entries(const PatternInput &in,
                    const std::size_t   e,
                    index_type *const   entries)
    {
      unsigned int n = 0;
      for (unsigned int d = 0; d < in.n_element_dofs; ++d)
        {
          const index_type line =
            in.line_of_dof[in.location[e * in.n_element_dofs + d]];
          if (line == invalid_index)
            continue;
          for (index_type k = in.entry_offsets[line];
               k < in.entry_offsets[line + 1];
               ++k)
            entries[n++] = in.entry_dofs[k];
        }
      for (unsigned int i = 1; i < n; ++i)
        {
          const index_type value = entries[i];
          unsigned int     j     = i;
          for (; j > 0 && entries[j - 1] > value; --j)
            entries[j] = entries[j - 1];
          entries[j] = value;
        }
      unsigned int n_unique = 0;
      for (unsigned int i = 0; i < n; ++i)
        if (n_unique == 0 || entries[n_unique - 1] != entries[i])
          entries[n_unique++] = entries[i];
      return n_unique;
    }

    /// The number of unconstrained DoFs of element @p e (|F_e|).
    GPU_ASSEMBLY_HOST_DEVICE inline unsigned int
    n_free_element_dofs(const PatternInput &in, const std::size_t e)
    {
      unsigned int n = 0;
      for (unsigned int d = 0; d < in.n_element_dofs; ++d)
        n += !in.dof_is_constrained[in.location[e * in.n_element_dofs + d]];
      return n;
    }

    /// The number of keys entry_keys() writes for @p n_entries entries.
    GPU_ASSEMBLY_HOST_DEVICE inline std::size_t
    n_entry_keys(const PatternInput &in,
                 const std::size_t   e,
                 const unsigned int  n_entries)
    {
      return n_entries == 0 ?
               0 :
               std::size_t(n_entries) *
                 (n_entries + 2 * std::size_t(n_free_element_dofs(in, e)));
    }

    /**
     * Key @p k (d1 * n_element_dofs + d2) of the element couplings of
     * element @p e: (L(e, d1), L(e, d2)), or the sentinel where
     * keeps_coupling() drops it.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline PatternKey
    element_key(const PatternInput &in,
                const KeyCoding    &coding,
                const std::size_t   e,
                const unsigned int  k)
    {
      const index_type *const L   = in.location + e * in.n_element_dofs;
      const index_type        row = L[k / in.n_element_dofs];
      const index_type        col = L[k % in.n_element_dofs];
      return keeps_coupling(in, row, col) ? coding.encode(row, col) :
                                            coding.sentinel();
    }

    /// The keys X_e x X_e, X_e x F_e and F_e x X_e of element @p e, from its
    /// @p n_entries entries, into @p keys (n_entry_keys() of them).
    GPU_ASSEMBLY_HOST_DEVICE inline void
    entry_keys(const PatternInput     &in,
               const KeyCoding        &coding,
               const std::size_t       e,
               const index_type *const entries,
               const unsigned int      n_entries,
               PatternKey *const       keys)
    {
      std::size_t n = 0;
      for (unsigned int i = 0; i < n_entries; ++i)
        for (unsigned int j = 0; j < n_entries; ++j)
          keys[n++] = coding.encode(entries[i], entries[j]);
      if (n_entries == 0)
        return;
      const index_type *const L = in.location + e * in.n_element_dofs;
      for (unsigned int d = 0; d < in.n_element_dofs; ++d)
        if (!in.dof_is_constrained[L[d]])
          for (unsigned int i = 0; i < n_entries; ++i)
            {
              keys[n++] = coding.encode(entries[i], L[d]);
              keys[n++] = coding.encode(L[d], entries[i]);
            }
    }

    /**
     * For the @p n_keys sorted unique keys (the sentinel removed), set the
     * row offsets that key @p k starts: those of the rows after the row of
     * key k - 1 up to its own (for k == n_keys, up to n_dofs). Over all k
     * in [0, n_keys] this writes every entry of row_offsets once.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline void
    set_row_offsets(const KeyCoding        &coding,
                    const PatternKey *const keys,
                    const std::size_t       n_keys,
                    const unsigned int      n_dofs,
                    const std::size_t       k,
                    index_type *const       row_offsets)
    {
      const long long previous =
        k == 0 ? -1 : static_cast<long long>(coding.row(keys[k - 1]));
      const long long row =
        k == n_keys ? static_cast<long long>(n_dofs) : coding.row(keys[k]);
      for (long long r = previous + 1; r <= row; ++r)
        row_offsets[r] = static_cast<index_type>(k);
    }

    /**
     * The position of the coupling (@p row, @p col) of two DoFs of one
     * element in the columns of its row, by binary search, or
     * invalid_index where keeps_coupling() drops it.
     */
    GPU_ASSEMBLY_HOST_DEVICE inline index_type
    nonzero_position(const PatternInput     &in,
                     const index_type *const row_offsets,
                     const index_type *const column_indices,
                     const index_type        row,
                     const index_type        col)
    {
      if (!keeps_coupling(in, row, col))
        return invalid_index;
      index_type begin = row_offsets[row], end = row_offsets[row + 1];
      while (begin < end)
        {
          const index_type middle = begin + (end - begin) / 2;
          if (column_indices[middle] < col)
            begin = middle + 1;
          else
            end = middle;
        }
      return begin;
    }

    /**
     * K(e, d1, d2) at @p index = (e * n_element_dofs + d1) * n_element_dofs
     * + d2: nonzero_position() of (L(e, d1), L(e, d2)).
     */
    GPU_ASSEMBLY_HOST_DEVICE inline index_type
    nonzero_map_entry(const PatternInput     &in,
                      const index_type *const row_offsets,
                      const index_type *const column_indices,
                      const std::size_t       index)
    {
      const std::size_t n_ed = in.n_element_dofs;
      const std::size_t e    = index / (n_ed * n_ed);
      return nonzero_position(in,
                              row_offsets,
                              column_indices,
                              in.location[e * n_ed + (index / n_ed) % n_ed],
                              in.location[e * n_ed + index % n_ed]);
    }

    /**
     * The constraint line of each of @p arrays' DoFs (invalid_index for
     * DoFs without a line with entries), as PatternInput::line_of_dof.
     */
    std::vector<index_type>
    constraint_line_of_dofs(const MeshArrays &arrays);

    /// The PatternInput of @p arrays' host vectors, with @p line_of_dof
    /// from constraint_line_of_dofs().
    PatternInput
    host_pattern_input(const MeshArrays              &arrays,
                       const std::vector<index_type> &line_of_dof);

    /**
     * The host twin of DevicePatternBuilder: row_offsets and column_indices
     * of @p arrays built by sorting, from its location, constraint data
     * and keep_constrained_dofs.
     */
    void
    make_pattern_by_sorting(MeshArrays &arrays);

    /**
     * The host twin of DevicePatternBuilder::make_nonzero_map(): sizes and
     * fills @p arrays.nonzero_map by binary searches in its pattern.
     */
    void
    fill_nonzero_map_by_search(MeshArrays &arrays);

    /**
     * Throw ExcUnsupportedInput where a pattern of @p n_nonzeros entries
     * cannot be addressed by index_type.
     */
    void
    check_nonzero_count(const std::size_t n_nonzeros);

    /**
     * The pattern and K built on the current CUDA device by the algorithm
     * of this file: the inputs are uploaded on construction, and each step
     * leaves its result in device memory for the next. All device memory
     * is freed on destruction. Device allocations that do not fit throw
     * ExcDeviceMemory, with nothing of the host arrays changed.
     */
    class DevicePatternBuilder
    {
    public:
      explicit DevicePatternBuilder(const MeshArrays &arrays);
      ~DevicePatternBuilder();
      DevicePatternBuilder(const DevicePatternBuilder &) = delete;
      DevicePatternBuilder &
      operator=(const DevicePatternBuilder &) = delete;

      /// Build the pattern on the device; returns its number of nonzeros.
      std::size_t
      make_pattern();

      /// Copy the pattern into host arrays of n_dofs + 1 and n_nonzeros
      /// entries.
      void
      copy_pattern_to(index_type *row_offsets,
                      index_type *column_indices) const;

      /// Build K on the device and copy it into a host array of
      /// n_elements * n_element_dofs^2 entries; frees the keys of the
      /// pattern first.
      void
      make_nonzero_map(index_type *nonzero_map);

    private:
      struct Data;
      std::unique_ptr<Data> data;
    };
  } // namespace internal
} // namespace GPUAssembly

#endif
