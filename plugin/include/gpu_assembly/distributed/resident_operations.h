// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_resident_operations_h
#define gpu_assembly_distributed_resident_operations_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/lac/index_loops.h>

#include <cstddef>

/**
 * @file
 * The per-index bodies of the resident distributed linear algebra
 * (DistributedDeviceVector, DistributedDeviceMatrix and the resident
 * exchange of DistributedAssembler), for the loops of index_loops.h: each
 * runs on the host or the device as its arrays live, and the plugin
 * instantiates the device branch of each for float and double. No deal.II
 * or MPI here: nvcc compiles this header.
 */

namespace GPUAssembly
{
  namespace ResidentOperations
  {
    /// dst[j] = src[indices[j]] (for_each_index()).
    template <typename Number>
    struct Gather
    {
      const Number *src;
      const int    *indices;
      Number       *dst;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t j) const
      {
        dst[j] = src[indices[j]];
      }
    };

    /// target[indices[i]] = 0 (for_each_index()).
    template <typename Number>
    struct ZeroAt
    {
      const int *indices;
      Number    *target;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        target[indices[i]] = Number(0);
      }
    };

    /// target[targets[i]] += values[sources[i]] (for_each_index()); the
    /// targets are distinct.
    template <typename Number>
    struct ScatterAdd
    {
      const Number *values;
      const int    *sources;
      const int    *targets;
      Number       *target;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        target[targets[i]] += values[sources[i]];
      }
    };

    /**
     * target[group_targets[u]] += the values received[group_entries[k]]
     * for k in [group_offsets[u], group_offsets[u + 1]), added one after
     * another in this order (for_each_index()): the received entries of
     * one target, grouped so that one thread adds them all in a fixed
     * order (no atomics).
     */
    template <typename Number>
    struct AddGrouped
    {
      const Number *received;
      const int    *group_targets;
      const int    *group_offsets;
      const int    *group_entries;
      Number       *target;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t u) const
      {
        Number value = target[group_targets[u]];
        for (int k = group_offsets[u]; k < group_offsets[u + 1]; ++k)
          value += received[group_entries[k]];
        target[group_targets[u]] = value;
      }
    };

    /**
     * y[r] = sum over k in [row_offsets[r], row_offsets[r + 1]) of
     * values[k] x[columns[k]] for the rows r = rows[i] (for_each_row()).
     * A part adds the entries row_offsets[r] + part, + part + n_parts, ...
     * in this order.
     */
    template <typename Number>
    struct RowProducts
    {
      const int    *row_offsets;
      const int    *columns;
      const Number *values;
      const int    *rows;
      const Number *x;
      Number       *y;

      GPU_ASSEMBLY_HOST_DEVICE Number
      part(const std::size_t  i,
           const unsigned int part,
           const unsigned int n_parts) const
      {
        const int row = rows[i];
        Number    sum = 0;
        for (int k = row_offsets[row] + part; k < row_offsets[row + 1];
             k += n_parts)
          sum += values[k] * x[columns[k]];
        return sum;
      }

      GPU_ASSEMBLY_HOST_DEVICE void
      store(const std::size_t i, const Number value) const
      {
        y[rows[i]] = value;
      }
    };

    /// inverse_diagonal[i] = 1 / values[diagonal_positions[i]], 0 where
    /// the diagonal is 0 (for_each_index()).
    template <typename Number>
    struct InverseDiagonal
    {
      const Number *values;
      const int    *diagonal_positions;
      Number       *inverse_diagonal;

      GPU_ASSEMBLY_HOST_DEVICE void
      operator()(const std::size_t i) const
      {
        const Number d      = values[diagonal_positions[i]];
        inverse_diagonal[i] = d != Number(0) ? Number(1) / d : Number(0);
      }
    };

    /// sums[0] += x[i] y[i] in double (sum_over_indices()).
    template <typename Number>
    using Dot = DotProduct<Number>;
  } // namespace ResidentOperations
} // namespace GPUAssembly

#endif
