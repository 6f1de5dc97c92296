// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_global_nz_reduction_cases_h
#define gpu_assembly_tests_global_nz_reduction_cases_h

// The plans on which GlobalNZ's reduction arrays, built by the per-block
// function of reduction_lists.h (on the host or on the device), are
// compared with the host plan's: the meshes of pattern_cases.h (hanging
// nodes, periodicity, chained lines, tetrahedra and triangles, the cube
// with a refined octant), with and without keep_constrained_dofs, each
// with full and symmetric element data, in row and in Z-order of the
// reduction blocks.

#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/global_nz/reduction_lists.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "pattern_cases.h"

namespace Testing
{
  template <typename Problem>
  struct ProblemDimension;

  template <int dim>
  struct ProblemDimension<TestProblem<dim>> : std::integral_constant<int, dim>
  {};

  /**
   * Call @p visit(problem, data, parameters, what) for every problem
   * of for_each_pattern_case(@p large), every keep_constrained_dofs, and
   * the GlobalNZ parameters of each variant: full and symmetric element
   * data, rows and morton reduction order, the smaller blocks of 64 lanes
   * and 96 targets with rows (many blocks on small meshes) and the
   * defaults with morton.
   */
  template <typename Visit>
  void
  for_each_reduction_case(const bool large, const Visit &visit)
  {
    for_each_pattern_case(
      large,
      [&](const std::string &name, const auto &problem) {
        constexpr int dim = ProblemDimension<
          std::remove_cv_t<std::remove_reference_t<decltype(problem)>>>::value;
        for_each_keep_constrained_dofs<dim>(
          name,
          [&](typename GPUAssembly::DoFHandlerAdapter<dim>::AdditionalData data,
              const std::string &with_data) {
            for (const bool symmetric : {false, true})
              for (const bool morton : {false, true})
                {
                  GPUAssembly::GlobalNZPlan::Parameters parameters;
                  parameters.symmetric = symmetric;
                  parameters.reduction_order =
                    morton ? GPUAssembly::ReductionOrder::morton :
                             GPUAssembly::ReductionOrder::rows;
                  if (!morton)
                    {
                      parameters.reduction_threads = 64;
                      parameters.targets_per_block = 96;
                    }
                  visit(problem,
                        data,
                        parameters,
                        with_data + (symmetric ? ", symmetric" : ", full") +
                          " element data, " +
                          (morton ? "Z-ordered blocks of defaults" :
                                    "row-ordered blocks of 64 lanes"));
                }
          });
      });
  }

  /**
   * The reduction arrays built on the host as the device builds them
   * (build_reduction_arrays_on_device()), from @p plan without them and
   * the @p source its reinit() handed over: K found by search in the
   * pattern, the targets of symmetric data from upper_position, every
   * block's size and list lengths first and then every block into its place
   * of an array filled with a value that is no entry, each with fresh
   * scratch; the steps of a warp's lanes one lane after another, in
   * decreasing lane order, where the device runs them together (the
   * contributions then reach their lists in another order than the host
   * plan's).
   */
  inline GPUAssembly::GlobalNZPlan
  reduction_arrays_as_on_device(
    const GPUAssembly::GlobalNZPlan                  &plan,
    const GPUAssembly::MeshArrays                    &arrays,
    const GPUAssembly::internal::ReductionListSource &source)
  {
    GPUAssembly::internal::ReductionListInput in =
      GPUAssembly::internal::host_reduction_list_input(plan,
                                                       arrays,
                                                       source,
                                                       false);
    std::vector<GPUAssembly::index_type> target_of_position(plan.n_nonzeros,
                                                            -1);
    if (plan.parameters.symmetric)
      {
        for (std::size_t u = 0; u < plan.n_value_targets; ++u)
          target_of_position[plan.upper_position[u]] = u;
        in.target_of_position = target_of_position.data();
      }

    const unsigned int n_blocks = plan.n_reduction_blocks();
    const unsigned int T        = plan.parameters.reduction_threads;
    const unsigned int W        = T / 32;
    const unsigned int R        = plan.parameters.targets_per_block;
    const unsigned int L        = source.max_list_length;
    const auto         scratch  = [&](std::vector<std::uint64_t> &memory) {
      memory.assign(GPUAssembly::internal::reduction_scratch_words(R, T, L), 0);
      return GPUAssembly::internal::make_reduction_scratch(memory.data(),
                                                           R,
                                                           T,
                                                           L);
    };
    GPUAssembly::GlobalNZPlan result;
    result.reduction_slice_offsets.assign(std::size_t(n_blocks) * W + 1, 0);
    result.reduction_source_base.assign(n_blocks, 0);
    std::vector<std::size_t> block_start(n_blocks + 1, 0);
    std::vector<GPUAssembly::internal::ReductionListLength> lengths(
      plan.n_value_targets + plan.n_dofs);
    std::vector<std::uint64_t>           memory;
    std::vector<GPUAssembly::index_type> counts(R);
    const auto                           for_each_lane = [](const auto &step) {
      for (unsigned int lane = 32; lane-- > 0;)
        step(lane);
    };
    for (unsigned int r = 0; r < n_blocks; ++r)
      {
        std::size_t low = ~std::size_t(0), high = 0, n_entries = 0;
        for_each_lane([&](const unsigned int lane) {
          GPUAssembly::internal::clear_reduction_counts(in,
                                                        r,
                                                        lane,
                                                        counts.data());
        });
        for_each_lane([&](const unsigned int lane) {
          std::size_t lane_low, lane_high;
          GPUAssembly::internal::count_reduction_lane(in,
                                                      r,
                                                      lane,
                                                      counts.data(),
                                                      lane_low,
                                                      lane_high);
          low  = std::min(low, lane_low);
          high = std::max(high, lane_high);
        });
        for_each_lane([&](const unsigned int lane) {
          n_entries +=
            GPUAssembly::internal::store_reduction_lengths(in,
                                                           r,
                                                           lane,
                                                           counts.data(),
                                                           lengths.data());
        });
        // Without sources a block's lists hold their targets only.
        if (n_entries == std::size_t(plan.reduction_target_begin[r + 1] -
                                     plan.reduction_target_begin[r]))
          low = 0;
        result.reduction_source_base[r] = low;
        block_start[r + 1] = GPUAssembly::internal::relayout_reduction_block(
          in,
          r,
          scratch(memory),
          lengths.data(),
          result.reduction_slice_offsets.data() + std::size_t(r) * W + 1);
      }
    std::partial_sum(block_start.begin(),
                     block_start.end(),
                     block_start.begin());
    for (std::size_t i = 0; i < std::size_t(n_blocks) * W; ++i)
      result.reduction_slice_offsets[i + 1] += block_start[i / W];
    // Entries the write must overwrite, padding included.
    result.reduction_array.assign(block_start.back(), 12345);
    for (unsigned int r = 0; r < n_blocks; ++r)
      {
        const GPUAssembly::internal::ReductionBlockScratch s = scratch(memory);
        GPUAssembly::internal::relayout_reduction_block(in,
                                                        r,
                                                        s,
                                                        lengths.data());
        std::vector<GPUAssembly::index_type> entries(
          s.list_offsets[plan.reduction_target_begin[r + 1] -
                         plan.reduction_target_begin[r]]);
        for_each_lane([&](const unsigned int lane) {
          GPUAssembly::internal::start_reduction_fill(in,
                                                      r,
                                                      lane,
                                                      s,
                                                      counts.data());
        });
        for_each_lane([&](const unsigned int lane) {
          GPUAssembly::internal::place_reduction_sources(
            in,
            r,
            lane,
            result.reduction_source_base[r],
            counts.data(),
            entries.data());
        });
        for_each_lane([&](const unsigned int lane) {
          GPUAssembly::internal::close_reduction_lists(in,
                                                       r,
                                                       lane,
                                                       s,
                                                       entries.data());
        });
        for_each_lane([&](const unsigned int lane) {
          GPUAssembly::internal::store_reduction_slices(
            in,
            lane,
            s,
            entries.data(),
            result.reduction_array.data() + block_start[r]);
        });
      }
    return result;
  }



  /// One check per reduction array: @p built's equal @p reference's, byte
  /// for byte. Returns whether all three do.
  inline bool
  check_same_reduction_arrays(Checks                          &checks,
                              const std::string               &what,
                              const GPUAssembly::GlobalNZPlan &reference,
                              const GPUAssembly::GlobalNZPlan &built)
  {
    const std::string whose = "the host plan's";
    bool              same  = check_same_array(checks,
                                 what,
                                 built.reduction_slice_offsets,
                                 reference.reduction_slice_offsets,
                                 "reduction_slice_offsets",
                                 whose);
    same &= check_same_array(checks,
                             what,
                             built.reduction_source_base,
                             reference.reduction_source_base,
                             "reduction_source_base",
                             whose);
    same &= check_same_array(checks,
                             what,
                             built.reduction_array,
                             reference.reduction_array,
                             "reduction_array",
                             whose);
    return same;
  }
} // namespace Testing

#endif
