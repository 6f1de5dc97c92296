// SPDX-License-Identifier: LGPL-2.1-or-later
// GlobalNZ's reduction arrays, built by the per-block function that the
// host plan and the device build share (reduction_lists.h), against a
// reference built here from the definition: each block's contributions
// from K, sorted per target, closed by -(p + 1) and packed by
// pack_lists_sliced(). Then the function as the device runs it: K found by
// search in the pattern instead of read from nonzero_map, the targets of
// symmetric data found from upper_position, every block's size first and
// then every block into its place, each with fresh scratch; and S(e) in
// the block layout, which the device gathers. On the meshes of
// global_nz_reduction_cases.h.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/global_nz/reduction_lists.h>
#include <gpu_assembly/engine/packing.h>

#include <algorithm>
#include <numeric>

#include "global_nz_reduction_cases.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  // The reduction arrays of @p plan (all but them built) from their
  // definition, block by block.
  GlobalNZPlan
  reference_arrays(const GlobalNZPlan &plan, const MeshArrays &arrays)
  {
    const unsigned int n_ed = plan.n_dofs_per_element;
    const unsigned int B    = plan.parameters.elements_per_block;
    const unsigned int T    = plan.parameters.reduction_threads;
    // The matrix target of each nonzero summed from its own row.
    std::vector<index_type> target_of_position(plan.n_nonzeros, -1);
    if (plan.parameters.symmetric)
      for (std::size_t u = 0; u < plan.n_value_targets; ++u)
        target_of_position[plan.upper_position[u]] = u;
    else
      std::iota(target_of_position.begin(), target_of_position.end(), 0);
    // (target, source) of every contribution: matrix entries from the row
    // of the target's own nonzero only.
    std::vector<std::pair<std::size_t, std::size_t>> contributions;
    for (unsigned int k = 0; k < plan.n_element_blocks; ++k)
      for (unsigned int t = 0; t < B; ++t)
        {
          const index_type e = plan.block_element[k * B + t];
          if (e < 0)
            continue;
          for (unsigned int d1 = 0; d1 < n_ed; ++d1)
            {
              const index_type row =
                arrays.location[std::size_t(e) * n_ed + d1];
              contributions.emplace_back(
                plan.n_value_targets + row,
                plan.element_data_index(k, t, plan.n_matrix_entries + d1));
              for (unsigned int d2 = 0; d2 < n_ed; ++d2)
                {
                  const index_type p =
                    arrays
                      .nonzero_map[(std::size_t(e) * n_ed + d1) * n_ed + d2];
                  // Matrix targets are summed from the row of their
                  // (upper) nonzero.
                  if (p == invalid_index || target_of_position[p] < 0)
                    continue;
                  const unsigned int i =
                    plan.parameters.symmetric ?
                      SymmetricElementOutput<double>::packed_index(n_ed,
                                                                   d1,
                                                                   d2) :
                      d1 * n_ed + d2;
                  contributions.emplace_back(target_of_position[p],
                                             plan.element_data_index(k, t, i));
                }
            }
        }
    std::sort(contributions.begin(), contributions.end());

    GlobalNZPlan result;
    result.reduction_slice_offsets.push_back(0);
    auto c = contributions.begin();
    for (unsigned int r = 0; r < plan.n_reduction_blocks(); ++r)
      {
        const std::size_t first = plan.reduction_target_begin[r];
        const std::size_t last  = plan.reduction_target_begin[r + 1];
        const auto        begin = c;
        while (c != contributions.end() && c->first < last)
          ++c;
        std::size_t base = 0;
        if (begin != c)
          base = std::min_element(begin, c, [](const auto &a, const auto &b) {
                   return a.second < b.second;
                 })->second;
        result.reduction_source_base.push_back(base);
        IndexLists lists;
        auto       i = begin;
        for (std::size_t p = first; p < last; ++p)
          {
            std::vector<index_type> list;
            for (; i != c && i->first == p; ++i)
              list.push_back(index_type(i->second - base + 1));
            list.push_back(-index_type(p - first + 1));
            lists.add_list(list.begin(), list.end());
          }
        std::vector<index_type>  packed;
        std::vector<std::size_t> slice_ends;
        pack_lists_sliced(lists, T, 32, packed, slice_ends);
        const std::size_t start = result.reduction_array.size();
        result.reduction_array.insert(result.reduction_array.end(),
                                      packed.begin(),
                                      packed.end());
        for (const std::size_t end : slice_ends)
          result.reduction_slice_offsets.push_back(start + end);
      }
    return result;
  }



} // namespace



int
main()
{
  Testing::Checks checks;
  unsigned int    n_plans   = 0;
  std::size_t     n_entries = 0;
  Testing::for_each_reduction_case(
    false,
    [&](const auto        &problem,
        const auto        &data,
        const auto        &parameters,
        const std::string &what) {
      const auto             adapter = Testing::make_adapter(problem, data);
      const MeshArrays      &arrays  = adapter.get_arrays();
      constexpr unsigned int dim     = Testing::ProblemDimension<
        std::remove_cv_t<std::remove_reference_t<decltype(problem)>>>::value;
      GlobalNZPlan plan;
      plan.reinit(arrays, parameters, dim, sizeof(double), 227 * 1024);
      checks.check(!plan.reduction_arrays_on_device &&
                     plan.n_reduction_entries == plan.reduction_array.size(),
                   what + ": GlobalNZPlan::reinit() builds the reduction "
                          "arrays on the host");
      Testing::check_same_reduction_arrays(checks,
                                           what + ", built by the host plan",
                                           reference_arrays(plan, arrays),
                                           plan);

      // The plan without its reduction arrays, and what the device build
      // gets.
      GlobalNZPlan                               partial;
      GPUAssembly::internal::ReductionListSource source;
      partial
        .reinit(arrays, parameters, dim, sizeof(double), 227 * 1024, &source);
      checks.check(partial.reduction_array.empty() &&
                     partial.reduction_slice_offsets.empty() &&
                     partial.reduction_source_base.empty() &&
                     partial.n_reduction_entries == 0 &&
                     partial.reduction_target_begin ==
                       plan.reduction_target_begin &&
                     partial.block_location == plan.block_location &&
                     partial.block_supplemental.empty() &&
                     partial.reduction_block_order ==
                       plan.reduction_block_order,
                   what + ": a plan for the device build leaves the reduction "
                          "arrays out and builds the rest alike");
      // S(e) in the block layout, which the device then gathers: the
      // gather's sources, and the host fill of a device too small for it.
      {
        std::vector<double> gathered(plan.block_supplemental.size(), -1.);
        for (std::size_t v = 0; v < gathered.size(); ++v)
          {
            const long long source =
              GPUAssembly::internal::block_supplemental_source(
                partial.block_element.data(),
                v,
                partial.parameters.elements_per_block,
                partial.n_supplemental);
            gathered[v] = source >= 0 ? arrays.supplemental[source] : 0.;
          }
        GPUAssembly::internal::fill_block_supplemental(partial, arrays);
        checks.check(gathered == plan.block_supplemental &&
                       partial.block_supplemental == plan.block_supplemental,
                     what +
                       ": S(e) in the block layout, left out for the "
                       "device build, gathered value by value as the "
                       "device does and filled on the host equals the "
                       "host plan's (" +
                       std::to_string(plan.block_supplemental.size()) +
                       " values)");
      }
      Testing::check_same_reduction_arrays(
        checks,
        what + ", built block by block as the device does (K by search)",
        plan,
        Testing::reduction_arrays_as_on_device(partial, arrays, source));
      ++n_plans;
      n_entries += plan.reduction_array.size();
    });
  std::cout << "Compared the reduction arrays of " << n_plans << " plans ("
            << n_entries << " entries)" << std::endl;
  return checks.exit_code();
}
