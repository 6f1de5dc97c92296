// Plans of the GPU assembly methods, checked on the host: LPT packing keeps
// lists whole and balances lanes, GlobalNZ's reduction lists cover every
// element contribution exactly once, and the plan executed on the host
// (kernel by kernel, lane by lane) reproduces the reference assembly.

#include <deal.II/base/multithread_info.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/global_nz_host.h>
#include <gpu_assembly/engine/global_nz_plan.h>
#include <gpu_assembly/engine/packing.h>
#include <gpu_assembly/engine/shared_nz_host.h>
#include <gpu_assembly/engine/shared_nz_layout.h>
#include <gpu_assembly/engine/shared_nz_plan.h>
#include <gpu_assembly/host/host_assembler.h>
#include <gpu_assembly/host/host_element_stage.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

void
test_lpt_packing(Testing::Checks &checks)
{
  std::mt19937                                gen(42);
  std::uniform_int_distribution<unsigned int> length(1, 40);
  IndexLists                                  lists;
  index_type                                  next  = 1;
  unsigned int                                total = 0, longest = 0;
  for (unsigned int l = 0; l < 1000; ++l)
    {
      std::vector<index_type> list(length(gen));
      for (auto &entry : list)
        entry = next++;
      list.back() = -list.back(); // a target ends each list
      total += list.size();
      longest = std::max<unsigned int>(longest, list.size());
      lists.add_list(list.begin(), list.end());
    }
  const unsigned int      n_lanes   = 64;
  std::vector<index_type> packed    = {7, 7}; // packing appends
  const unsigned int      n_columns = pack_lists_lpt(lists, n_lanes, packed);
  checks.check(packed.size() == 2 + std::size_t(n_columns) * n_lanes &&
                 packed[0] == 7,
               "LPT packing appends a column-major n_lanes x n_columns block");

  // Walk each lane like a thread does: lists must come out whole, in order.
  std::vector<int> seen(next, 0);
  bool             whole = true;
  for (unsigned int t = 0; t < n_lanes; ++t)
    {
      index_type previous = 0;
      for (unsigned int j = 0; j < n_columns; ++j)
        {
          const index_type i = packed[2 + std::size_t(j) * n_lanes + t];
          if (i == 0)
            continue;
          ++seen[std::abs(i)];
          // Within a list entries are consecutive numbers.
          if (previous > 0 && std::abs(i) != previous + 1)
            whole = false;
          previous = i > 0 ? i : 0;
        }
    }
  checks.check(whole && std::all_of(seen.begin() + 1,
                                    seen.end(),
                                    [](const int n) {
                                      return n == 1;
                                    }),
               "every entry is packed exactly once and no list is split");

  const std::vector<unsigned int> loads = lpt_lane_loads(lists, n_lanes);
  const double                    lower_bound =
    std::max<double>(double(total) / n_lanes, double(longest));
  const unsigned int max_load = *std::max_element(loads.begin(), loads.end());
  checks.check(max_load == n_columns &&
                 max_load <= 4. / 3. * lower_bound + longest,
               "LPT balances the lanes: longest lane " +
                 std::to_string(max_load) + " <= 4/3 * " +
                 std::to_string(lower_bound) + " + longest list");
}



// Packing in rows that a warp walks in lockstep (pack_lists_aligned()):
// every entry once, lists whole and in order, and no step at which a lane
// closes a list while another adds a source, or one lane is in its first
// run while another is in its second; the slices share the rows evenly.
// With keep_list_order, each row holds 32 lists that are neighbours in
// the order of their second runs, ties in list order.
void
test_aligned_packing(Testing::Checks &checks, const bool keep_list_order)
{
  const std::string mode = keep_list_order ? " (lists kept in order)" : "";
  std::mt19937      gen(7);
  std::uniform_int_distribution<unsigned int> first_length(0, 24),
    second_length(0, 4), with_second(0, 5);
  IndexLists                lists;
  std::vector<unsigned int> first_run;
  // Entries: first runs 1, 2, ..., second runs from 100000 on, the closing
  // entry negative.
  index_type         next = 1, next_second = 100000;
  const unsigned int n_lists = 700;
  for (unsigned int l = 0; l < n_lists; ++l)
    {
      std::vector<index_type> list(first_length(gen));
      for (auto &entry : list)
        entry = next++;
      const unsigned int n_second =
        with_second(gen) == 0 ? 1 + second_length(gen) : 0;
      for (unsigned int i = 0; i < n_second; ++i)
        list.push_back(next_second++);
      list.push_back(-index_type(l + 1));
      first_run.push_back(list.size() - 1 - n_second);
      lists.add_list(list.begin(), list.end());
    }
  constexpr unsigned int   n_lanes = 256, width = 32, chunk = 8;
  std::vector<index_type>  packed = {5}; // packing appends
  std::vector<std::size_t> slice_ends;
  pack_lists_aligned(lists,
                     first_run,
                     n_lanes,
                     width,
                     packed,
                     slice_ends,
                     chunk,
                     keep_list_order);
  // Position of each list in the order of its second run, ties in list
  // order: with keep_list_order a row is 32 neighbours of it.
  std::vector<unsigned int> by_second(n_lists), position(n_lists);
  std::iota(by_second.begin(), by_second.end(), 0u);
  std::stable_sort(by_second.begin(),
                   by_second.end(),
                   [&](const unsigned int a, const unsigned int b) {
                     const auto second = [&](const unsigned int l) {
                       return lists.offsets[l + 1] - lists.offsets[l] - 1 -
                              first_run[l];
                     };
                     return second(a) > second(b);
                   });
  for (unsigned int i = 0; i < n_lists; ++i)
    position[by_second[i]] = i;
  bool in_order = true;

  std::vector<int>         seen_first(next, 0), seen_second(next_second, 0);
  std::vector<int>         closed(n_lists + 1, 0);
  bool                     whole = true, aligned = true;
  std::size_t              start = 1, longest_row = 0, total = 0;
  std::vector<std::size_t> slice_length;
  for (const std::size_t end : slice_ends)
    {
      const std::size_t n_columns = (end - start) / width;
      whole &= (end - start) % (width * chunk) == 0;
      slice_length.push_back(n_columns);
      std::vector<std::vector<index_type>> lane_lists(width);
      std::size_t                          row_start = 0;
      for (std::size_t j = 0; j < n_columns; ++j)
        {
          unsigned int n_closing = 0, n_first = 0, n_second = 0;
          int          row = -1;
          for (unsigned int t = 0; t < width; ++t)
            {
              const index_type entry =
                packed[start + ((j / chunk) * width + t) * chunk + j % chunk];
              if (entry == 0)
                continue;
              if (entry < 0)
                {
                  ++n_closing;
                  ++closed[-entry];
                  // The lane's list: its first run in order, then its
                  // second run in order, all of list -entry.
                  const index_type l     = -entry - 1;
                  const auto      &input = lists.entries;
                  in_order &= row < 0 || int(position[l] / width) == row;
                  row = position[l] / width;
                  whole &=
                    std::equal(lane_lists[t].begin(),
                               lane_lists[t].end(),
                               input.begin() + lists.offsets[l],
                               input.begin() + lists.offsets[l + 1] - 1) &&
                    lane_lists[t].size() + 1 ==
                      std::size_t(lists.offsets[l + 1] - lists.offsets[l]);
                  lane_lists[t].clear();
                  continue;
                }
              lane_lists[t].push_back(entry);
              if (entry < 100000)
                {
                  ++n_first;
                  ++seen_first[entry];
                }
              else
                {
                  ++n_second;
                  ++seen_second[entry];
                }
            }
          aligned &= (n_closing == 0 || n_first + n_second == 0) &&
                     (n_first == 0 || n_second == 0);
          if (n_closing > 0)
            {
              longest_row = std::max(longest_row, j + 1 - row_start);
              row_start   = j + 1;
            }
        }
      for (const auto &pending : lane_lists)
        whole &= pending.empty();
      total += n_columns;
      start = end;
    }
  const auto once = [](const auto begin, const auto end) {
    return std::all_of(begin, end, [](const int n) {
      return n == 1;
    });
  };
  checks.check(packed[0] == 5 && start == packed.size() && whole &&
                 slice_ends.size() == n_lanes / width &&
                 once(seen_first.begin() + 1, seen_first.end()) &&
                 once(seen_second.begin() + 100000, seen_second.end()) &&
                 once(closed.begin() + 1, closed.end()),
               "aligned packing" + mode +
                 ": every entry once, lists whole and in "
                 "order, slices in whole chunks");
  checks.check(aligned,
               "aligned packing" + mode +
                 ": no step mixes closing entries with "
                 "others, or first runs with second runs");
  if (keep_list_order)
    checks.check(in_order,
                 "aligned packing" + mode +
                   ": the lists of a row are 32 neighbours in the order of "
                   "their second runs, ties in list order");
  const std::size_t max_slice =
    *std::max_element(slice_length.begin(), slice_length.end());
  const double mean = double(total) / slice_length.size();
  checks.check(max_slice <= 4. / 3. * mean + longest_row + chunk,
               "aligned packing" + mode + " balances the slices: longest " +
                 std::to_string(max_slice) + " <= 4/3 * " +
                 std::to_string(mean) + " + longest row (" +
                 std::to_string(longest_row) + ") + chunk");

  // With AlignedRows: leading lists first in their rows, and every lane of
  // a slice, those after a row's last list included, closing each of its
  // rows with the row's shape; the rows returned are the rows walked.
  {
    AlignedRows shapes;
    shapes.leading.resize(n_lists);
    for (unsigned int l = 0; l < n_lists; ++l)
      shapes.leading[l] = (l * 7) % 5 == 0;
    const index_type close_base = -1000000;
    shapes.close =
      [&](const unsigned int n, const unsigned int d, const unsigned int h) {
        return close_base - index_type(64 * 64 * h + 64 * n + d);
      };
    std::vector<index_type>  shaped;
    std::vector<std::size_t> shaped_ends;
    pack_lists_aligned(lists,
                       first_run,
                       n_lanes,
                       width,
                       shaped,
                       shaped_ends,
                       chunk,
                       keep_list_order,
                       &shapes);
    bool rows_right = shapes.offsets.size() == shapes.n_leading.size() + 1 &&
                      shapes.slice.size() == shapes.n_leading.size() &&
                      shaped_ends.size() == n_lanes / width;
    std::size_t      row   = 0;
    std::size_t      begin = 0;
    std::vector<int> listed(n_lists, 0);
    for (unsigned int w = 0; w < shaped_ends.size() && rows_right; ++w)
      {
        const std::size_t n_columns = (shaped_ends[w] - begin) / width;
        std::vector<std::vector<index_type>> lane_lists(width);
        for (std::size_t j = 0; j < n_columns && rows_right; ++j)
          {
            const auto at = [&](const unsigned int t) {
              return shaped[begin + ((j / chunk) * width + t) * chunk +
                            j % chunk];
            };
            unsigned int n_closing = 0;
            for (unsigned int t = 0; t < width; ++t)
              n_closing += at(t) <= close_base;
            if (n_closing == 0)
              {
                for (unsigned int t = 0; t < width; ++t)
                  if (at(t) != 0)
                    lane_lists[t].push_back(at(t));
                continue;
              }
            rows_right &= n_closing == width && row < shapes.slice.size() &&
                          shapes.slice[row] == w;
            if (!rows_right)
              break;
            const unsigned int n =
              shapes.offsets[row + 1] - shapes.offsets[row];
            const unsigned int d = shapes.n_leading[row];
            for (unsigned int t = 0; t < width; ++t)
              {
                rows_right &=
                  at(t) == shapes.close(n, d, 0) && shapes.n_halved[row] == 0;
                if (t >= n)
                  {
                    rows_right &= lane_lists[t].empty();
                    continue;
                  }
                const unsigned int l = shapes.lists[shapes.offsets[row] + t];
                ++listed[l];
                rows_right &=
                  (shapes.leading[l] != 0) == (t < d) &&
                  std::equal(lane_lists[t].begin(),
                             lane_lists[t].end(),
                             lists.entries.begin() + lists.offsets[l],
                             lists.entries.begin() + lists.offsets[l + 1] -
                               1) &&
                  lane_lists[t].size() + 1 ==
                    std::size_t(lists.offsets[l + 1] - lists.offsets[l]);
                lane_lists[t].clear();
              }
            ++row;
          }
        begin = shaped_ends[w];
      }
    checks.check(rows_right && row == shapes.n_leading.size() &&
                   std::all_of(listed.begin(),
                               listed.end(),
                               [](const int n) {
                                 return n == 1;
                               }),
                 "aligned packing" + mode +
                   " with row shapes: leading lists first in their rows, "
                   "every lane closing each row with its shape, the rows "
                   "returned as walked");
  }
  checks.check_throws<ExceptionBase>(
    [&] {
      std::vector<unsigned int> too_long(first_run);
      too_long[3] = lists.offsets[4] - lists.offsets[3];
      std::vector<index_type>  out;
      std::vector<std::size_t> ends;
      pack_lists_aligned(lists, too_long, n_lanes, width, out, ends, chunk);
    },
    "shorter than its first run",
    "aligned packing" + mode +
      " refuses a first run that leaves no closing entry");
}



// Halved leading lists (AlignedRows::halve_leading): the leading lists
// with at least 4 and more than twice the mean entries of the others are
// summed by two lanes of their row, each run halved, the first halves in
// the lanes of their slots and the second halves in lanes n_leading + slot
// (SharedNZLayout::row_lane()); every entry once, no step mixing first
// runs with second runs or closing entries with others, rows of at most
// max_leading leading lists, and fewer steps than with whole lists.
void
test_halved_packing(Testing::Checks &checks, const bool keep_list_order)
{
  const std::string mode = keep_list_order ? " (lists kept in order)" : "";
  std::mt19937      gen(11);
  std::uniform_int_distribution<unsigned int> short_length(0, 8),
    long_length(0, 40), second_length(0, 6), with_second(0, 4), leading(0, 7);
  IndexLists                 lists;
  std::vector<unsigned int>  first_run;
  std::vector<unsigned char> leads;
  // Entries: first runs 1, 2, ..., second runs from 100000 on, the closing
  // entry negative; about one list in eight leads, and is long.
  index_type         next = 1, next_second = 100000;
  const unsigned int n_lists = 900;
  for (unsigned int l = 0; l < n_lists; ++l)
    {
      leads.push_back(leading(gen) == 0);
      std::vector<index_type> list(leads.back() ? long_length(gen) :
                                                  short_length(gen));
      for (auto &entry : list)
        entry = next++;
      const unsigned int n_second =
        with_second(gen) == 0 ? 1 + second_length(gen) : 0;
      for (unsigned int i = 0; i < n_second; ++i)
        list.push_back(next_second++);
      list.push_back(-index_type(l + 1));
      first_run.push_back(list.size() - 1 - n_second);
      lists.add_list(list.begin(), list.end());
    }
  const auto sources = [&](const unsigned int l) {
    return lists.offsets[l + 1] - lists.offsets[l] - 1;
  };
  std::size_t n_others = 0, other_sources = 0;
  for (unsigned int l = 0; l < n_lists; ++l)
    if (!leads[l])
      {
        ++n_others;
        other_sources += sources(l);
      }
  constexpr unsigned int n_lanes = 128, width = 32, chunk = 8;
  constexpr unsigned int max_leading = 31;
  const index_type       close_base  = -1000000;
  const auto             pack        = [&](const bool                halve,
                        AlignedRows              &shapes,
                        std::vector<index_type>  &packed,
                        std::vector<std::size_t> &ends) {
    shapes.leading.assign(leads.begin(), leads.end());
    shapes.max_leading   = max_leading;
    shapes.halve_leading = halve;
    shapes.close =
      [&](const unsigned int n, const unsigned int d, const unsigned int h) {
        return close_base - index_type(64 * 64 * h + 64 * n + d);
      };
    pack_lists_aligned(lists,
                       first_run,
                       n_lanes,
                       width,
                       packed,
                       ends,
                       chunk,
                       keep_list_order,
                       &shapes);
  };
  AlignedRows              shapes, whole_shapes;
  std::vector<index_type>  packed, whole;
  std::vector<std::size_t> ends, whole_ends;
  pack(true, shapes, packed, ends);
  pack(false, whole_shapes, whole, whole_ends);

  // The halves each list's lanes should hold: every run halved, the first
  // half rounded up.
  const auto expected = [&](const unsigned int l, const int half) {
    const index_type       *entry = lists.entries.data() + lists.offsets[l];
    const unsigned int      f = first_run[l], n = sources(l);
    std::vector<index_type> result;
    const unsigned int      m1 = (f + 1) / 2, m2 = f + (n - f + 1) / 2;
    for (unsigned int j = 0; j < n; ++j)
      if (half < 0 || (half == 0) == (j < m1 || (j >= f && j < m2)))
        result.push_back(entry[j]);
    return result;
  };
  bool             right = shapes.offsets.size() == shapes.n_halved.size() + 1;
  bool             aligned = true, bounded = true;
  std::vector<int> listed(n_lists, 0), halved(n_lists, 0);
  std::size_t      row = 0, begin = 0, n_halved_rows = 0;
  for (unsigned int w = 0; w < ends.size() && right; ++w)
    {
      const std::size_t n_columns = (ends[w] - begin) / width;
      std::vector<std::vector<index_type>> lane_lists(width);
      for (std::size_t j = 0; j < n_columns && right; ++j)
        {
          const auto at = [&](const unsigned int t) {
            return packed[begin + ((j / chunk) * width + t) * chunk +
                          j % chunk];
          };
          unsigned int n_closing = 0, n_first = 0, n_second = 0;
          for (unsigned int t = 0; t < width; ++t)
            {
              n_closing += at(t) <= close_base;
              n_first += at(t) > 0 && at(t) < 100000;
              n_second += at(t) >= 100000;
            }
          aligned &= (n_closing == 0 || n_first + n_second == 0) &&
                     (n_first == 0 || n_second == 0);
          if (n_closing == 0)
            {
              for (unsigned int t = 0; t < width; ++t)
                if (at(t) != 0)
                  lane_lists[t].push_back(at(t));
              continue;
            }
          right &= n_closing == width && row < shapes.slice.size() &&
                   shapes.slice[row] == w;
          if (!right)
            break;
          const SharedNZLayout::RowClose shape{shapes.offsets[row + 1] -
                                                 shapes.offsets[row],
                                               shapes.n_leading[row],
                                               shapes.n_halved[row]};
          bounded &= shape.n_diagonal <= max_leading &&
                     shape.n_halved <= shape.n_diagonal &&
                     shape.n_lists + shape.n_halved <= width;
          n_halved_rows += shape.n_halved > 0;
          for (unsigned int t = 0; t < width; ++t)
            {
              right &=
                at(t) ==
                shapes.close(shape.n_lists, shape.n_diagonal, shape.n_halved);
              const SharedNZLayout::RowLane role =
                SharedNZLayout::row_lane(t, shape);
              if (role.slot >= shape.n_lists)
                {
                  right &= lane_lists[t].empty();
                  continue;
                }
              const unsigned int l =
                shapes.lists[shapes.offsets[row] + role.slot];
              const bool is_halved = role.slot < shape.n_halved;
              listed[l] += !role.second_half;
              halved[l] += role.second_half;
              right &= (leads[l] != 0) == (role.slot < shape.n_diagonal) &&
                       lane_lists[t] == expected(l,
                                                 !is_halved       ? -1 :
                                                 role.second_half ? 1 :
                                                                    0);
              lane_lists[t].clear();
            }
          ++row;
        }
      begin = ends[w];
    }
  // Which lists the rule halves.
  bool rule = true;
  for (unsigned int l = 0; l < n_lists; ++l)
    rule &= (halved[l] == 1) == (leads[l] && sources(l) >= 4 &&
                                 sources(l) * n_others > 2 * other_sources);
  const auto steps = [](const std::vector<std::size_t> &slice_ends) {
    std::size_t longest = 0, start = 0;
    for (const std::size_t end : slice_ends)
      {
        longest = std::max(longest, (end - start) / width);
        start   = end;
      }
    return longest;
  };
  checks.check(right && row == shapes.n_halved.size() &&
                 std::all_of(listed.begin(),
                             listed.end(),
                             [](const int n) {
                               return n == 1;
                             }) &&
                 rule && n_halved_rows > 0,
               "halved packing" + mode +
                 ": every list once in the slot of its row, the long "
                 "leading ones halved (" +
                 std::to_string(std::count(halved.begin(), halved.end(), 1)) +
                 " lists, " + std::to_string(n_halved_rows) +
                 " rows), each run of a halved list halved, the second "
                 "half in lane n_leading + slot");
  checks.check(aligned && bounded,
               "halved packing" + mode +
                 ": no step mixes closing entries with others, or first "
                 "runs with second runs; rows of at most " +
                 std::to_string(max_leading) + " leading lists");
  checks.check(steps(ends) < steps(whole_ends),
               "halved packing" + mode + ": the longest slice is shorter (" +
                 std::to_string(steps(ends)) + " against " +
                 std::to_string(steps(whole_ends)) +
                 " steps with whole lists)");
}



// Linear elasticity's accumulated node pairs (kernel_accumulates_node_pairs):
// the sums of accumulate_node_pair() over elements, finished, equal the
// sums of the blocks add_node_pair() adds, for pairs in both orders.
void
test_accumulated_node_pairs(Testing::Checks &checks)
{
  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         true,
                         1,
                         3,
                         Testing::ConstraintKind::homogeneous,
                         false,
                         2);
  const DoFHandlerAdapter<3>        adapter(*problem.mapping,
                                     problem.dof_handler,
                                     *problem.quadrature,
                                     problem.constraints);
  const MeshArrays                 &arrays = adapter.get_arrays();
  const HostElementStage<double>    stage(arrays, 0, AssemblyOptions());
  LinearElasticityKernel<3, double> kernel;
  kernel.lambda = 2.5;
  kernel.mu     = 0.75;
  static_assert(kernel_accumulates_node_pairs<decltype(kernel)>::value);
  double             max_error = 0, max_entry = 0;
  const unsigned int n_en = arrays.layout.n_nodes;
  for (unsigned int a = 0; a < n_en; ++a)
    for (unsigned int b = 0; b < n_en; ++b)
      {
        double sum[3][3] = {}, blocks[3][3] = {}, vector[3] = {};
        // Eight elements, as a list of a node pair sums a few.
        for (unsigned int e = 0; e < 8 && e < arrays.n_elements; ++e)
          {
            const double *supplemental =
              arrays.supplemental.data() + e * arrays.n_supplemental;
            add_node_pair<3,
                          double,
                          decltype(kernel),
                          ElementSpecialization::general,
                          true>(kernel,
                                stage.data(),
                                supplemental,
                                1,
                                a,
                                b,
                                false,
                                sum,
                                vector);
            add_node_pair<3>(kernel,
                             stage.data(),
                             supplemental,
                             1,
                             a,
                             b,
                             false,
                             blocks,
                             vector);
          }
        kernel.finish_node_pairs(sum);
        for (unsigned int i = 0; i < 3; ++i)
          for (unsigned int j = 0; j < 3; ++j)
            {
              max_error =
                std::max(max_error, std::abs(sum[i][j] - blocks[i][j]));
              max_entry = std::max(max_entry, std::abs(blocks[i][j]));
            }
      }
  checks.check(max_entry > 0 && max_error <= 1e-14 * max_entry,
               "linear elasticity: accumulated node pairs, finished, equal "
               "the sum of their blocks (largest difference " +
                 Testing::scientific(max_error) + " of entries up to " +
                 Testing::scientific(max_entry) + ")");
}



// Reduction lists of a GlobalNZ plan: every contribution (valid K entry
// or vector entry) appears exactly once as a source, and under the right
// target; every target is stored once. With symmetric element data a
// target is a pair of transposed nonzeros, and every nonzero must be the
// upper or the mirror position of exactly one target.
void
check_reduction_lists(Testing::Checks    &checks,
                      const GlobalNZPlan &plan,
                      const MeshArrays   &arrays,
                      const std::string  &name)
{
  const unsigned int B         = plan.parameters.elements_per_block;
  const unsigned int n_ed      = plan.n_dofs_per_element;
  const bool         symmetric = plan.parameters.symmetric;

  // The element-data layout: every entry of every slot has a position of
  // its own, and full element data in Z-ordered reduction blocks keep the
  // components of a column node (entry_group consecutive entries of one
  // element) side by side.
  {
    const unsigned int g = plan.entry_group;
    std::vector<int>   used(plan.element_data_size(), 0);
    bool grouped = g == (!symmetric && plan.parameters.reduction_order ==
                                         ReductionOrder::morton ?
                           arrays.layout.n_components :
                           1u) &&
                   plan.n_entries % g == 0 && plan.n_matrix_entries % g == 0;
    for (unsigned int k = 0; k < plan.n_element_blocks; ++k)
      for (unsigned int t = 0; t < B; ++t)
        for (unsigned int i = 0; i < plan.n_entries; ++i)
          {
            const std::size_t position = plan.element_data_index(k, t, i);
            ++used[position];
            if (i % g != 0)
              grouped &= position == plan.element_data_index(k, t, i - 1) + 1;
          }
    checks.check(grouped && std::all_of(used.begin(),
                                        used.end(),
                                        [](const int n) {
                                          return n == 1;
                                        }),
                 name + (symmetric ? ", symmetric element data" : "") +
                   ": the element-data layout is a bijection, in groups of " +
                   std::to_string(g) + " entries of one element");
  }

  std::vector<index_type> target_of_position(plan.n_nonzeros, -1);
  bool                    positions_once = true;
  if (symmetric)
    {
      std::vector<int> stored(plan.n_nonzeros, 0);
      for (std::size_t u = 0; u < plan.n_value_targets; ++u)
        {
          ++stored[plan.upper_position[u]];
          target_of_position[plan.upper_position[u]] = u;
          if (const index_type m = plan.mirror_position[u]; m >= 0)
            {
              ++stored[m];
              target_of_position[m] = u;
              // The mirror is the transpose of the upper member.
              const auto row_of = [&](const index_type p) {
                return std::upper_bound(arrays.row_offsets.begin(),
                                        arrays.row_offsets.end(),
                                        p) -
                       arrays.row_offsets.begin() - 1;
              };
              const index_type p = plan.upper_position[u];
              positions_once &= row_of(m) == arrays.column_indices[p] &&
                                arrays.column_indices[m] == row_of(p);
            }
        }
      positions_once &=
        std::all_of(stored.begin(), stored.end(), [](const int n) {
          return n == 1;
        });
    }
  else
    for (std::size_t p = 0; p < plan.n_nonzeros; ++p)
      target_of_position[p] = p;

  std::vector<index_type> target_of(plan.element_data_size(), -1);
  for (unsigned int k = 0; k < plan.n_element_blocks; ++k)
    for (unsigned int t = 0; t < B; ++t)
      if (const index_type e = plan.block_element[k * B + t]; e >= 0)
        {
          const index_type *K =
            arrays.nonzero_map.data() + std::size_t(e) * n_ed * n_ed;
          for (unsigned int d1 = 0; d1 < n_ed; ++d1)
            for (unsigned int d2 = symmetric ? d1 : 0; d2 < n_ed; ++d2)
              {
                const index_type   p = K[d1 * n_ed + d2] != invalid_index ?
                                         K[d1 * n_ed + d2] :
                                         K[d2 * n_ed + d1];
                const unsigned int i =
                  symmetric ?
                    SymmetricElementOutput<double>::packed_index(n_ed, d1, d2) :
                    d1 * n_ed + d2;
                target_of[plan.element_data_index(k, t, i)] =
                  p == invalid_index ? -1 : target_of_position[p];
              }
          for (unsigned int d = 0; d < n_ed; ++d)
            target_of[plan
                        .element_data_index(k, t, plan.n_matrix_entries + d)] =
              plan.n_value_targets + arrays.location[std::size_t(e) * n_ed + d];
        }

  std::vector<int>   source_seen(plan.element_data_size(), 0);
  std::vector<int>   target_seen(plan.n_value_targets + plan.n_dofs, 0);
  bool               targets_right = true;
  const unsigned int T             = plan.parameters.reduction_threads;
  for (unsigned int r = 0; r < plan.n_reduction_blocks(); ++r)
    {
      for (unsigned int lane = 0; lane < T; ++lane)
        {
          const std::size_t slice = std::size_t(r) * (T / 32) + lane / 32;
          const std::size_t n_columns =
            (plan.reduction_slice_offsets[slice + 1] -
             plan.reduction_slice_offsets[slice]) /
            32;
          std::vector<index_type> pending;
          for (std::size_t j = 0; j < n_columns; ++j)
            {
              const index_type i =
                plan.reduction_array[plan.reduction_slice_offsets[slice] +
                                     j * 32 + lane % 32];
              if (i > 0)
                pending.push_back(i - 1);
              else if (i < 0)
                {
                  const index_type target =
                    plan.reduction_target_begin[r] + (-i - 1);
                  ++target_seen[target];
                  for (const index_type source : pending)
                    {
                      ++source_seen[source];
                      targets_right &= target_of[source] == target;
                    }
                  pending.clear();
                }
            }
          targets_right &= pending.empty();
        }
    }
  bool sources_complete = true;
  for (std::size_t s = 0; s < source_seen.size(); ++s)
    sources_complete &= source_seen[s] == (target_of[s] >= 0 ? 1 : 0);
  checks.check(sources_complete && targets_right && positions_once &&
                 std::all_of(target_seen.begin(),
                             target_seen.end(),
                             [](const int n) {
                               return n == 1;
                             }),
               name + (symmetric ? ", symmetric element data" : "") +
                 ": reduction lists are complete and disjoint (each "
                 "contribution once, under its own target; each target once" +
                 (symmetric ?
                    "; each nonzero stored once, as the upper or "
                    "the mirror member of a pair of " +
                      std::to_string(plan.n_value_targets) + " targets for " +
                      std::to_string(plan.n_nonzeros) + " nonzeros" :
                    "") +
                 ")");
}



template <int dim>
void
test_global_nz_plan(Testing::Checks             &checks,
                    const bool                   simplex,
                    const unsigned int           degree,
                    const bool                   vector_valued,
                    const SupplementalDataFormat format)
{
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         simplex,
                         degree,
                         vector_valued ? dim : 1,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         5);
  typename DoFHandlerAdapter<dim>::AdditionalData data;
  data.supplemental_format = format;
  const DoFHandlerAdapter<dim> adapter(*problem.mapping,
                                       problem.dof_handler,
                                       *problem.quadrature,
                                       problem.constraints,
                                       data);
  const MeshArrays            &arrays = adapter.get_arrays();

  GlobalNZPlan::Parameters parameters;
  parameters.elements_per_block = 64;
  parameters.reduction_threads  = 64;
  parameters.targets_per_block  = 300;
  // Both cluster orders must give valid plans; alternate between them.
  parameters.element_order =
    dim == 2 ? ElementOrder::morton : ElementOrder::rows;
  // And both orders of the reduction blocks.
  parameters.reduction_order =
    dim == 2 ? ReductionOrder::rows : ReductionOrder::morton;
  GlobalNZPlan plan;
  plan.reinit(arrays, parameters, dim, sizeof(double), 48 * 1024);
  const unsigned int B = parameters.elements_per_block;
  if (parameters.reduction_order == ReductionOrder::morton)
    {
      std::vector<index_type> order = plan.reduction_block_order;
      std::sort(order.begin(), order.end());
      bool permutation = order.size() == plan.n_reduction_blocks();
      for (std::size_t b = 0; permutation && b < order.size(); ++b)
        permutation = order[b] == static_cast<index_type>(b);
      checks.check(permutation &&
                     plan.reduction_block_order !=
                       std::vector<index_type>(order.begin(), order.end()),
                   problem.name() + ": the " +
                     std::to_string(plan.n_reduction_blocks()) +
                     " reduction blocks run in a Z-order that is a "
                     "permutation of, and differs from, target order");
    }

  // Clusters: every element in exactly one slot; N_k holds their nodes.
  std::vector<int> element_seen(arrays.n_elements, 0);
  bool             nodes_ok = true;
  for (unsigned int k = 0; k < plan.n_element_blocks; ++k)
    for (unsigned int t = 0; t < B; ++t)
      if (const index_type e = plan.block_element[k * B + t]; e >= 0)
        {
          ++element_seen[e];
          for (unsigned int a = 0; a < plan.n_nodes_per_element; ++a)
            {
              const index_type local =
                plan.block_connectivity
                  [(std::size_t(k) * plan.n_nodes_per_element + a) * B + t];
              const index_type global =
                plan.cluster_nodes[plan.cluster_node_offsets[k] + local];
              nodes_ok &=
                local < plan.cluster_node_offsets[k + 1] -
                          plan.cluster_node_offsets[k] &&
                global ==
                  arrays
                    .connectivity[std::size_t(e) * arrays.layout.n_nodes + a];
            }
        }
  checks.check(std::all_of(element_seen.begin(),
                           element_seen.end(),
                           [](const int n) {
                             return n == 1;
                           }) &&
                 nodes_ok,
               problem.name() + ": each element sits in one cluster slot and "
                                "E_k maps to its nodes through N_k");

  check_reduction_lists(checks, plan, arrays, problem.name());

  // The plan run on the host equals the reference assembly.
  LinearElasticityKernel<dim, double> elasticity;
  elasticity.lambda        = 3.;
  elasticity.mu            = 1.25;
  elasticity.body_force[0] = 1.;
  LaplaceKernel<dim, double> laplace;
  laplace.source = 2.;
  std::vector<double> nodal(arrays.n_nodes * dim, 0.);
  std::vector<double> reference_values, reference_rhs, values, rhs, scratch;
  const HostAssembler<dim, double> reference(arrays);
  if (vector_valued)
    {
      reference.assemble(elasticity, reference_values, reference_rhs);
      global_nz_on_host<dim>(plan,
                             arrays,
                             elasticity,
                             AssemblyOptions(),
                             nodal,
                             dim,
                             scratch,
                             values,
                             rhs);
    }
  else
    {
      reference.assemble(laplace, reference_values, reference_rhs);
      global_nz_on_host<dim>(plan,
                             arrays,
                             laplace,
                             AssemblyOptions(),
                             nodal,
                             dim,
                             scratch,
                             values,
                             rhs);
    }
  const double error     = Testing::relative_l2_error(values, reference_values);
  const double rhs_error = Testing::relative_l2_error(rhs, reference_rhs);
  checks.check(error <= 1e-13 && rhs_error <= 1e-13,
               problem.name() +
                 ": GlobalNZ executed on the host equals the reference "
                 "assembly (relative errors " +
                 Testing::scientific(error) + ", " +
                 Testing::scientific(rhs_error) + " <= 1e-13" + ")");

  // Symmetric element data: half the storage, the same matrix.
  {
    GlobalNZPlan::Parameters symmetric_parameters = parameters;
    symmetric_parameters.symmetric                = true;
    GlobalNZPlan symmetric_plan;
    symmetric_plan.reinit(arrays,
                          symmetric_parameters,
                          dim,
                          sizeof(double),
                          48 * 1024);
    check_reduction_lists(checks, symmetric_plan, arrays, problem.name());
    std::vector<double> symmetric_values, symmetric_rhs;
    if (vector_valued)
      global_nz_on_host<dim>(symmetric_plan,
                             arrays,
                             elasticity,
                             AssemblyOptions(),
                             nodal,
                             dim,
                             scratch,
                             symmetric_values,
                             symmetric_rhs);
    else
      global_nz_on_host<dim>(symmetric_plan,
                             arrays,
                             laplace,
                             AssemblyOptions(),
                             nodal,
                             dim,
                             scratch,
                             symmetric_values,
                             symmetric_rhs);
    // A^e of the kernels is symmetric up to the rounding of its products
    // (lambda * g_a * g_b is not lambda * g_b * g_a bit for bit), so the
    // two storages agree to rounding, not bitwise.
    const double difference =
      std::max(Testing::max_relative_difference(symmetric_values, values),
               Testing::max_relative_difference(symmetric_rhs, rhs));
    const unsigned int n = plan.n_dofs_per_element;
    checks.check(symmetric_plan.n_matrix_entries == n * (n + 1) / 2 &&
                   difference <= 1e-14,
                 problem.name() + ": symmetric element data (" +
                   std::to_string(symmetric_plan.n_matrix_entries) +
                   " instead of " + std::to_string(n * n) +
                   " values) give the same matrix and vector (max relative "
                   "difference " +
                   Testing::scientific(difference) + " <= 1e-14)");
  }

  checks.check_throws<ExcUnsupportedInput>(
    [&] {
      GlobalNZPlan::Parameters small_parameters = parameters;
      small_parameters.targets_per_block        = 32;
      GlobalNZPlan small;
      small.reinit(arrays, small_parameters, dim, sizeof(double), 300);
    },
    "nodal data of a cluster",
    problem.name() + ": a plan that needs more shared memory than the "
                     "device has is refused");
}



// Laplace with the diagonal entries of an element's first @p zeroed nodes
// set to zero, and, where @p diffusion is 0, no matrix at all: where a
// constrained diagonal entry is zero, the condensation puts the element's
// mean absolute diagonal there, its l1 norm / n_dofs where that is zero
// too, and 1 where that is also zero (zeroed = all nodes). The bundled
// kernels have no zero diagonal entries; this one takes node pairs through
// each of these paths.
template <int dim>
struct ZeroDiagonalKernel
{
  static constexpr unsigned int n_components     = 1;
  static constexpr bool         is_symmetric     = true;
  static constexpr bool         reads_nodal_data = false;
  static constexpr bool         node_pair_form   = true;

  LaplaceKernel<dim, double> laplace;
  unsigned int               zeroed = 1;

  template <class Element, class Output>
  void
  operator()(const Element &element, const Output &output) const
  {
    laplace(element, output);
    for (unsigned int a = 0; a < element.n_nodes && a < zeroed; ++a)
      if constexpr (output_may_discard_rows<Output>::value)
        {
          if (output.keeps_rows(a))
            output.matrix_entry(a, a) = 0;
        }
      else
        output.matrix_entry(a, a) = 0;
  }

  template <class Element>
  void
  add_node_pair(const Element     &element,
                const unsigned int a,
                const unsigned int b,
                double (&matrix)[1][1]) const
  {
    double block[1][1] = {{0}};
    laplace.add_node_pair(element, a, b, block);
    matrix[0][0] += a == b && a < zeroed ? 0. : block[0][0];
  }

  template <class Element>
  void
  add_node_vector(const Element     &element,
                  const unsigned int a,
                  double (&vector)[1]) const
  {
    laplace.add_node_vector(element, a, vector);
  }
};



template <int dim>
void
test_shared_nz_plan(Testing::Checks      &checks,
                    const bool            simplex,
                    const bool            vector_valued,
                    const NodePartitioner partitioner,
                    const bool            one_point  = false,
                    const bool            node_pairs = false)
{
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         simplex,
                         1,
                         vector_valued ? dim : 1,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         6);
  // One point in 3D: the plan takes each element's owned nodes first
  // (SharedNZPlan::Parameters::reorder_nodes).
  if (one_point)
    problem.quadrature = std::make_unique<QGaussSimplex<dim>>(1);
  const DoFHandlerAdapter<dim> adapter(*problem.mapping,
                                       problem.dof_handler,
                                       *problem.quadrature,
                                       problem.constraints);
  const MeshArrays            &arrays = adapter.get_arrays();
  const std::string            name =
    problem.name() +
    (partitioner == NodePartitioner::metis         ? " (METIS parts" :
     partitioner == NodePartitioner::greedy_growth ? " (grown parts" :
                                                     " (greedy union parts") +
    (one_point ? ", one quadrature point, nodes reordered" : "") +
    (node_pairs ? ", node pairs)" : ")");
  // A small limit so that the mesh needs many parts.
  // Small enough that the mesh needs many parts, large enough for the 32
  // tetrahedra around a node of these meshes.
  // With node pairs a 2D block holds S(e) of a triangle (7 numbers)
  // instead of its rows: a smaller limit for as many parts.
  const std::size_t limit =
    (vector_valued ? (node_pairs && dim == 2 ? 6 : 120) : (dim == 2 ? 3 : 24)) *
    1024;
  SharedNZPlan::Parameters parameters;
  parameters.partitioner       = partitioner;
  parameters.threads_per_block = 64;
  parameters.node_pairs        = node_pairs;
  SharedNZPlan plan;
  plan.reinit(arrays, parameters, dim, sizeof(double), limit);

  // Parts: each node in exactly one part, every block within the limit.
  std::vector<unsigned int> parts =
    partition_nodes(arrays,
                    partitioner,
                    dim,
                    sizeof(double),
                    limit,
                    parameters.threads_per_block,
                    node_pairs);
  std::vector<int> owner_seen(arrays.n_nodes, 0);
  for (const index_type n : plan.owned_nodes)
    ++owner_seen[n];
  bool blocks_fit = true;
  for (unsigned int k = 0; k < plan.n_blocks; ++k)
    blocks_fit &= plan.shared_bytes(k, sizeof(double)) <= limit;
  checks.check(parts.size() == arrays.n_nodes && plan.n_blocks > 1 &&
                 blocks_fit && plan.max_shared_bytes <= limit &&
                 std::all_of(owner_seen.begin(),
                             owner_seen.end(),
                             [](const int n) {
                               return n == 1;
                             }),
               name + ": " + std::to_string(plan.n_blocks) +
                 " parts cover all nodes once; the largest needs " +
                 std::to_string(plan.max_shared_bytes) +
                 " <= " + std::to_string(limit) + " bytes of shared memory");

  // Each block's S(e) where the kernel copies it 16 bytes at a time: with
  // node pairs padded to SharedNZLayout::staged_size() numbers, every block
  // starting at a multiple of 4 (16 bytes in float, 32 in double); without,
  // column by column and unpadded.
  {
    bool aligned =
      plan.supplemental_offsets.size() == plan.n_blocks + 1 &&
      plan.supplemental_offsets.back() == plan.block_supplemental.size();
    for (unsigned int k = 0; k < plan.n_blocks && aligned; ++k)
      {
        const std::size_t n_k =
          plan.element_offsets[k + 1] - plan.element_offsets[k];
        const std::size_t size =
          plan.supplemental_offsets[k + 1] - plan.supplemental_offsets[k];
        aligned &=
          node_pairs ?
            plan.supplemental_offsets[k] % 4 == 0 &&
              size == SharedNZLayout::staged_size(n_k, plan.n_supplemental) :
            size == n_k * plan.n_supplemental;
      }
    checks.check(aligned,
                 name + ": each block's S(e) in place for the kernel's " +
                   (node_pairs ? "16-byte copies" : "element threads"));
  }

  // Node pairs: no element has slots, and the elements without constraints
  // come first in each block, those with them (which carry Dirichlet data)
  // last. On simplices,
  // whose S(e) is smaller than the rows a block keeps of them, blocks hold
  // more elements than those of the same limit without node pairs, so
  // fewer elements are staged twice than computed twice without (checked
  // in 3D: the 2D test mesh is too small for parts to tell); a
  // hexahedron's S(e) at 8 points (200 numbers) is larger, and node pairs
  // do not pay there.
  if (node_pairs)
    {
      SharedNZPlan::Parameters slot_parameters = parameters;
      slot_parameters.node_pairs               = false;
      SharedNZPlan slot_plan;
      slot_plan.reinit(arrays, slot_parameters, dim, sizeof(double), limit);
      const unsigned int n_en       = plan.n_nodes_per_element;
      bool               free_first = true;
      std::size_t        n_free     = 0;
      for (unsigned int k = 0; k < plan.n_blocks; ++k)
        {
          const std::size_t  base = plan.element_offsets[k];
          const unsigned int n_k  = plan.element_offsets[k + 1] - base;
          n_free += plan.n_free_elements[k];
          for (unsigned int j = 0; j < n_k; ++j)
            {
              const bool is_free = int(j) < plan.n_free_elements[k];
              free_first &=
                is_free != bool(plan.block_has_constraints[base + j]);
              for (unsigned int a = 0; a < n_en; ++a)
                free_first &= plan.block_slots[base * n_en + a * n_k + j] ==
                              SharedNZLayout::no_slot;
            }
          free_first &= plan.n_slots[k] == 0;
        }
      checks.check(free_first && n_free > 0 && n_free < plan.elements.size() &&
                     (!simplex || dim == 2 ||
                      plan.recomputation_factor <
                        slot_plan.recomputation_factor),
                   name + ": " + std::to_string(n_free) + " of " +
                     std::to_string(plan.elements.size()) +
                     " staged elements without constraints first, the "
                     "others with their Dirichlet data, none in slots; " +
                     std::to_string(plan.n_blocks) + " parts against " +
                     std::to_string(slot_plan.n_blocks) +
                     " without node pairs, recomputation factor " +
                     Testing::scientific(plan.recomputation_factor) +
                     (simplex && dim == 3 ? " < " : " against ") +
                     Testing::scientific(slot_plan.recomputation_factor));
    }

  // Reordered: some element's first local node is not its own first node,
  // and every element's owned nodes come first.
  if (one_point && !node_pairs)
    {
      std::size_t reordered   = 0;
      bool        owned_first = true;
      for (unsigned int k = 0; k < plan.n_blocks; ++k)
        {
          const std::size_t  base = plan.element_offsets[k];
          const unsigned int n_k  = plan.element_offsets[k + 1] - base;
          const unsigned int n_en = plan.n_nodes_per_element;
          for (unsigned int j = 0; j < n_k; ++j)
            {
              const std::size_t e          = plan.elements[base + j];
              bool              seen_other = false;
              for (unsigned int a = 0; a < n_en; ++a)
                {
                  const index_type node =
                    plan.halo_nodes[plan.halo_offsets[k] +
                                    plan.block_connectivity[base * n_en +
                                                            a * n_k + j]];
                  reordered += a == 0 && node != arrays.connectivity[e * n_en];
                  const bool owned = std::binary_search(
                    plan.owned_nodes.begin() + plan.owned_offsets[k],
                    plan.owned_nodes.begin() + plan.owned_offsets[k + 1],
                    node);
                  owned_first &= !(owned && seen_other) ||
                                 plan.block_has_constraints[base + j];
                  seen_other |= !owned;
                }
            }
        }
      checks.check(reordered > 0 && owned_first,
                   name + ": " + std::to_string(reordered) +
                     " elements reordered, every element's owned nodes "
                     "first");
    }

  // Reduction: decode every source back to (element, row node, column
  // node). Each such triple of the mesh must be summed exactly once, in
  // the block owning the row node, under the list of that node pair; each
  // nonzero and each right-hand-side row is stored exactly once.
  const unsigned int        n_en = plan.n_nodes_per_element;
  const unsigned int        n_ed = plan.n_dofs_per_element;
  const unsigned int        n_c  = plan.n_components;
  std::vector<unsigned int> block_of_node(arrays.n_nodes);
  for (unsigned int k = 0; k < plan.n_blocks; ++k)
    for (index_type i = plan.owned_offsets[k]; i < plan.owned_offsets[k + 1];
         ++i)
      block_of_node[plan.owned_nodes[i]] = k;
  std::vector<int> triple_seen(std::size_t(arrays.n_elements) * n_en * n_en, 0);
  std::vector<int> target_seen(plan.n_nonzeros, 0), rhs_seen(plan.n_dofs, 0);
  bool             lists_right = true;
  // Lanes of a warp that close halved lists, once per row each.
  std::size_t        n_halved_lists = 0;
  const unsigned int T              = parameters.threads_per_block;
  for (unsigned int k = 0; k < plan.n_blocks; ++k)
    {
      const std::size_t  base    = plan.element_offsets[k];
      const unsigned int n_k     = plan.element_offsets[k + 1] - base;
      const unsigned int n_slots = plan.n_slots[k];
      // With node pairs every source is a node pair.
      const unsigned int n_pairs = node_pairs ? n_k * n_en * n_en : 0;
      std::vector<std::pair<unsigned int, unsigned int>> slot_owner(n_slots);
      for (unsigned int a = 0; a < n_en; ++a)
        for (unsigned int j = 0; j < n_k; ++j)
          if (const auto s = plan.block_slots[base * n_en + a * n_k + j];
              s != SharedNZLayout::no_slot)
            slot_owner[s] = {j, a};
      for (unsigned int lane = 0; lane < T; ++lane)
        {
          const std::size_t  slice = std::size_t(k) * (T / 32) + lane / 32;
          const unsigned int n_columns =
            (plan.slice_offsets[slice + 1] - plan.slice_offsets[slice]) / 32;
          constexpr unsigned int     chunk = SharedNZLayout::chunk;
          const unsigned int         l     = lane % 32;
          std::vector<std::uint16_t> pending;
          // The first target of the row the lane walks, in its warp's.
          std::size_t row_first = plan.target_offsets[slice];
          for (unsigned int column = 0; column < n_columns; ++column)
            {
              const std::uint16_t entry =
                plan.sources[plan.slice_offsets[slice] +
                             ((column / chunk) * 32 + lane % 32) * chunk +
                             column % chunk];
              if (entry == 0)
                continue;
              if (entry < SharedNZLayout::end_flag)
                {
                  pending.push_back(entry);
                  continue;
                }
              // Every lane of the warp closes the row; those after its
              // last list hold none, and the lane of a halved list's
              // second half adds to the list of its slot.
              const SharedNZLayout::RowClose row =
                SharedNZLayout::decode_row_close(entry);
              const std::size_t first = row_first;
              row_first += SharedNZLayout::row_targets(row, n_c);
              lists_right &= row.n_halved <= row.n_diagonal &&
                             row.n_diagonal <= row.n_lists &&
                             row.n_lists + row.n_halved <= 32;
              n_halved_lists += l < row.n_halved;
              const SharedNZLayout::RowLane role =
                SharedNZLayout::row_lane(l, row);
              if (role.slot >= row.n_lists)
                {
                  lists_right &= pending.empty();
                  continue;
                }
              const bool diagonal = role.slot < row.n_diagonal;
              const auto block    = [&](const unsigned int c1,
                                     const unsigned int c2) {
                return first + SharedNZLayout::block_target(c1,
                                                            c2,
                                                            role.slot,
                                                            row,
                                                            n_c);
              };
              const auto right_hand_side = [&](const unsigned int c1) {
                return first +
                       SharedNZLayout::rhs_target(c1, role.slot, row, n_c);
              };
              index_type row_node = -1, column_node = -1;
              lists_right &= !pending.empty();
              for (const std::uint16_t source : pending)
                {
                  const unsigned int index = (source - 1) >> 1;
                  // A node pair (its element, row node and column node),
                  // or a slot (whose element and row node the slot says)
                  // and a column node.
                  unsigned int j, a, c;
                  if (index < n_pairs)
                    {
                      const SharedNZLayout::NodePair pair =
                        SharedNZLayout::decode_node_pair(index, n_en);
                      j = pair.element;
                      a = pair.row_node;
                      c = pair.column_node;
                    }
                  else
                    {
                      const unsigned int s = (index - n_pairs) / n_en;
                      c                    = (index - n_pairs) % n_en;
                      lists_right &= s < n_slots;
                      std::tie(j, a) = slot_owner[s < n_slots ? s : 0];
                    }
                  const std::size_t e = plan.elements[base + j];
                  // The plan's local nodes (reordered or not) through its
                  // block connectivity, and their places in the element.
                  const auto global = [&](const unsigned int local) {
                    return plan.halo_nodes
                      [plan.halo_offsets[k] +
                       plan.block_connectivity[base * n_en + local * n_k + j]];
                  };
                  const index_type n = global(a), m = global(c);
                  const auto       own = [&](const index_type node) {
                    unsigned int i = 0;
                    while (i + 1 < n_en &&
                           arrays.connectivity[e * n_en + i] != node)
                      ++i;
                    return i;
                  };
                  lists_right &= arrays.connectivity[e * n_en + own(n)] == n &&
                                 arrays.connectivity[e * n_en + own(m)] == m;
                  const unsigned int a0 = own(n), c0 = own(m);
                  lists_right &= bool((source - 1) & 1) == diagonal &&
                                 (a == c) == diagonal &&
                                 block_of_node[n] == k &&
                                 (row_node < 0 || row_node == n) &&
                                 (column_node < 0 || column_node == m);
                  row_node    = n;
                  column_node = m;
                  ++triple_seen[(e * n_en + a0) * n_en + c0];
                  // The list's nonzeros are those of this element's block.
                  for (unsigned int c1 = 0; c1 < n_c; ++c1)
                    for (unsigned int c2 = 0; c2 < n_c; ++c2)
                      lists_right &=
                        plan.targets[block(c1, c2)] ==
                        arrays.nonzero_map[(e * n_ed + a0 * n_c + c1) * n_ed +
                                           c0 * n_c + c2];
                  if (diagonal)
                    for (unsigned int c1 = 0; c1 < n_c; ++c1)
                      lists_right &= plan.targets[right_hand_side(c1)] ==
                                     arrays.location[e * n_ed + a0 * n_c + c1];
                }
              if (!role.second_half)
                {
                  for (unsigned int c1 = 0; c1 < n_c; ++c1)
                    for (unsigned int c2 = 0; c2 < n_c; ++c2)
                      if (plan.targets[block(c1, c2)] >= 0)
                        ++target_seen[plan.targets[block(c1, c2)]];
                  if (diagonal)
                    for (unsigned int c1 = 0; c1 < n_c; ++c1)
                      ++rhs_seen[plan.targets[right_hand_side(c1)]];
                }
              pending.clear();
            }
          lists_right &=
            pending.empty() && row_first == plan.target_offsets[slice + 1];
        }
    }
  const auto all_once = [](const std::vector<int> &seen) {
    return std::all_of(seen.begin(), seen.end(), [](const int n) {
      return n == 1;
    });
  };
  checks.check(lists_right && all_once(triple_seen) && all_once(target_seen) &&
                 all_once(rhs_seen) && n_halved_lists > 0 &&
                 plan.slice_offsets.back() == plan.sources.size(),
               name + ": reduction lists are complete and disjoint (" +
                 std::to_string(triple_seen.size()) +
                 " element node pairs once each, under their own node "
                 "pair; every nonzero and right-hand-side row once; " +
                 std::to_string(n_halved_lists) +
                 " diagonal lists halved; recomputation factor " +
                 Testing::scientific(plan.recomputation_factor) + ")");

  LinearElasticityKernel<dim, double> elasticity;
  elasticity.lambda        = 3.;
  elasticity.mu            = 1.25;
  elasticity.body_force[0] = 1.;
  LaplaceKernel<dim, double>       laplace;
  std::vector<double>              nodal(arrays.nodal_coordinates);
  std::vector<double>              reference_values, reference_rhs, values, rhs;
  const HostAssembler<dim, double> reference(arrays);
  if (vector_valued)
    {
      reference.assemble(elasticity, reference_values, reference_rhs);
      shared_nz_on_host<dim>(plan,
                             arrays,
                             elasticity,
                             AssemblyOptions(),
                             nodal,
                             values,
                             rhs);
    }
  else
    {
      reference.assemble(laplace, reference_values, reference_rhs);
      shared_nz_on_host<dim>(plan,
                             arrays,
                             laplace,
                             AssemblyOptions(),
                             nodal,
                             values,
                             rhs);
    }
  // Matrix and right-hand side together.
  std::vector<double> result(values), reference_result(reference_values);
  result.insert(result.end(), rhs.begin(), rhs.end());
  reference_result.insert(reference_result.end(),
                          reference_rhs.begin(),
                          reference_rhs.end());
  const double error = Testing::relative_l2_error(result, reference_result);
  checks.check(error <= 1e-13,
               name +
                 ": SharedNZ executed on the host equals the reference "
                 "assembly (relative error " +
                 Testing::scientific(error) + " <= 1e-13)");

  // The condensation's substitutes for a zero diagonal entry, node pair by
  // node pair.
  if (node_pairs && !vector_valued)
    for (const auto &[zeroed, diffusion, what] :
         {std::make_tuple(1u, 1., "the mean absolute diagonal"),
          std::make_tuple(64u, 1., "the l1 norm / n_dofs"),
          std::make_tuple(64u, 0., "1")})
      {
        ZeroDiagonalKernel<dim> kernel;
        kernel.zeroed            = zeroed;
        kernel.laplace.diffusion = diffusion;
        reference.assemble(kernel, reference_values, reference_rhs);
        shared_nz_on_host<dim>(plan,
                               arrays,
                               kernel,
                               AssemblyOptions(),
                               nodal,
                               values,
                               rhs);
        std::vector<double> zeroed_result(values),
          zeroed_reference(reference_values);
        zeroed_result.insert(zeroed_result.end(), rhs.begin(), rhs.end());
        zeroed_reference.insert(zeroed_reference.end(),
                                reference_rhs.begin(),
                                reference_rhs.end());
        const double zeroed_error =
          Testing::relative_l2_error(zeroed_result, zeroed_reference);
        checks.check(zeroed_error <= 1e-13,
                     name +
                       ": node pairs of elements with zero diagonal "
                       "entries, replaced by " +
                       what + ", equal the reference (relative error " +
                       Testing::scientific(zeroed_error) + " <= 1e-13)");
      }

  if (node_pairs)
    checks.check_throws<ExceptionBase>(
      [&] {
        MassKernel<dim, 1, double> mass;
        shared_nz_on_host<dim>(plan,
                               arrays,
                               mass,
                               AssemblyOptions(),
                               nodal,
                               values,
                               rhs);
      },
      "the kernel has no node-pair form",
      name + ": a kernel without a node-pair form is refused");

  checks.check_throws<ExcUnsupportedInput>(
    [&] {
      SharedNZPlan small;
      small.reinit(arrays, parameters, dim, sizeof(double), 512);
    },
    node_pairs ?
      "shared_memory_per_block), or use SharedNZ without node pairs or "
      "GlobalNZ" :
      "shared_memory_per_block), or use GlobalNZ",
    name + ": SharedNZ refuses a shared-memory limit below one node's "
           "element data");

  // Staging reads an inhomogeneity for every DoF of an element with
  // constraints: arrays without one for each DoF are refused.
  MeshArrays short_arrays = arrays;
  short_arrays.inhomogeneities.pop_back();
  checks.check_throws<ExcUnsupportedInput>(
    [&] {
      SharedNZPlan plan;
      plan.reinit(short_arrays,
                  parameters,
                  dim,
                  sizeof(double),
                  std::size_t(1) << 30);
    },
    "an inhomogeneity for each of their " + std::to_string(arrays.n_dofs) +
      " DoFs, and have " + std::to_string(arrays.n_dofs) + " and " +
      std::to_string(arrays.n_dofs - 1) + ".",
    name + ": SharedNZ refuses arrays with an inhomogeneity missing");
}



// Node pairs keep which DoFs of an element are constrained in 64 bits: a
// plan for elements of more DoFs (quadratic hexahedra in 3D elasticity, 81)
// is refused with a clear error before anything is built.
void
test_node_pairs_dof_limit(Testing::Checks &checks)
{
  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         false,
                         2,
                         3,
                         Testing::ConstraintKind::inhomogeneous,
                         false,
                         1);
  const DoFHandlerAdapter<3> adapter(*problem.mapping,
                                     problem.dof_handler,
                                     *problem.quadrature,
                                     problem.constraints);
  SharedNZPlan::Parameters   parameters;
  parameters.node_pairs = true;
  checks.check_throws<ExcUnsupportedInput>(
    [&] {
      SharedNZPlan plan;
      plan.reinit(adapter.get_arrays(),
                  parameters,
                  3,
                  sizeof(double),
                  std::size_t(1) << 30);
    },
    "constrained in 64 bits, and this element has 81 DoFs",
    problem.name() + ": node pairs refuse elements of more than 64 DoFs");
}



// The reduction finds a source's slot by a multiplication instead of a
// division; it must be exact for every divisor up to the largest source
// index, one included (it once divided by the slots of a part, and a part
// of one slot divided wrongly).
void
test_slot_division(Testing::Checks &checks)
{
  bool         exact = true;
  unsigned int wrong = 0;
  for (unsigned int d = 1; d <= SharedNZLayout::max_source_index + 1; ++d)
    {
      const unsigned int magic = SharedNZLayout::division_magic(d);
      for (unsigned int x = 0; x <= SharedNZLayout::max_source_index;
           x += (x < 4 * d ? 1 : 97))
        if (SharedNZLayout::divide(x, magic) != x / d)
          {
            exact = false;
            wrong = d;
          }
    }
  checks.check(exact,
               "SharedNZ's slot division is exact for the divisors 1 to " +
                 std::to_string(SharedNZLayout::max_source_index + 1) +
                 (exact ? std::string() :
                          " (wrong for " + std::to_string(wrong) + ")"));
}



// Plans are built in parallel; their arrays must not depend on how many
// threads built them, or results would differ from machine to machine.
void
test_plans_independent_of_threads(Testing::Checks &checks)
{
  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         true,
                         1,
                         3,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         8);
  const DoFHandlerAdapter<3> adapter(*problem.mapping,
                                     problem.dof_handler,
                                     *problem.quadrature,
                                     problem.constraints);
  const MeshArrays          &arrays = adapter.get_arrays();

  std::vector<GlobalNZPlan> global(3);
  std::vector<SharedNZPlan> shared(3);
  const unsigned int thread_limits[] = {1, 4, numbers::invalid_unsigned_int};
  for (unsigned int i = 0; i < 3; ++i)
    {
      MultithreadInfo::set_thread_limit(thread_limits[i]);
      GlobalNZPlan::Parameters global_parameters;
      global_parameters.targets_per_block = 300;
      global[i].reinit(arrays, global_parameters, 3, sizeof(double), 48 * 1024);
      SharedNZPlan::Parameters shared_parameters;
      shared_parameters.threads_per_block = 128;
      shared[i].reinit(arrays, shared_parameters, 3, sizeof(double), 64 * 1024);
    }
  MultithreadInfo::set_thread_limit();

  bool same = true;
  for (unsigned int i = 1; i < 3; ++i)
    {
      const GlobalNZPlan &a = global[0], &b = global[i];
      same &= a.block_element == b.block_element &&
              a.cluster_node_offsets == b.cluster_node_offsets &&
              a.cluster_nodes == b.cluster_nodes &&
              a.block_connectivity == b.block_connectivity &&
              a.block_supplemental == b.block_supplemental &&
              a.block_location == b.block_location &&
              a.block_has_constraints == b.block_has_constraints &&
              a.reduction_target_begin == b.reduction_target_begin &&
              a.reduction_slice_offsets == b.reduction_slice_offsets &&
              a.reduction_array == b.reduction_array;
      const SharedNZPlan &c = shared[0], &d = shared[i];
      same &=
        c.owned_offsets == d.owned_offsets && c.owned_nodes == d.owned_nodes &&
        c.halo_offsets == d.halo_offsets && c.halo_nodes == d.halo_nodes &&
        c.element_offsets == d.element_offsets && c.elements == d.elements &&
        c.block_connectivity == d.block_connectivity &&
        c.block_slots == d.block_slots && c.n_slots == d.n_slots &&
        c.block_supplemental == d.block_supplemental &&
        c.block_location == d.block_location &&
        c.block_has_constraints == d.block_has_constraints &&
        c.slice_offsets == d.slice_offsets && c.sources == d.sources &&
        c.n_diagonal_lists == d.n_diagonal_lists &&
        c.target_offsets == d.target_offsets && c.targets == d.targets;
    }
  checks.check(same && shared[0].n_blocks > 1,
               "GlobalNZ and SharedNZ plans are identical whether built by "
               "1, 4 or all threads (" +
                 std::to_string(global[0].n_reduction_blocks()) +
                 " reduction blocks, " + std::to_string(shared[0].n_blocks) +
                 " node parts)");
}



// SharedNZ's automatic threads and blocks per multiprocessor: four blocks
// of 128 threads for node pairs on elements of at most 4 nodes, two of 256
// otherwise; values set by hand stay.
void
test_automatic_shared_nz_parameters(Testing::Checks &checks)
{
  SharedNZPlan::Parameters slots, pairs, set;
  pairs.node_pairs              = true;
  set.node_pairs                = true;
  set.threads_per_block         = 192;
  set.blocks_per_multiprocessor = 3;
  const auto is                 = [](const SharedNZPlan::Parameters &p,
                     const unsigned int              threads,
                     const unsigned int              blocks) {
    return p.threads_per_block == threads &&
           p.blocks_per_multiprocessor == blocks;
  };
  checks.check(slots.threads_per_block == 0 &&
                 slots.blocks_per_multiprocessor == 0 &&
                 is(slots.resolved(4), 256, 2) &&
                 is(pairs.resolved(4), 128, 4) &&
                 is(pairs.resolved(3), 128, 4) &&
                 is(pairs.resolved(8), 256, 2) && is(set.resolved(4), 192, 3),
               "SharedNZ's automatic parameters: 4 blocks of 128 threads "
               "for node pairs on elements of at most 4 nodes, else 2 of "
               "256; values set by hand stay");
}



int
main()
{
  Testing::Checks checks;
  test_lpt_packing(checks);
  test_aligned_packing(checks, false);
  test_aligned_packing(checks, true);
  test_halved_packing(checks, false);
  test_halved_packing(checks, true);
  test_accumulated_node_pairs(checks);
  test_global_nz_plan<2>(checks,
                         false,
                         2,
                         false,
                         SupplementalDataFormat::quadrature_gradients);
  test_global_nz_plan<2>(checks,
                         true,
                         1,
                         true,
                         SupplementalDataFormat::inverse_edge_matrix);
  test_global_nz_plan<3>(checks,
                         true,
                         1,
                         true,
                         SupplementalDataFormat::quadrature_gradients);
  test_global_nz_plan<3>(checks,
                         false,
                         1,
                         true,
                         SupplementalDataFormat::quadrature_gradients);
  test_shared_nz_plan<3>(checks, true, true, NodePartitioner::greedy_union);
  test_shared_nz_plan<3>(checks, true, true, NodePartitioner::metis);
  test_shared_nz_plan<3>(checks,
                         true,
                         true,
                         NodePartitioner::greedy_union,
                         true);
  test_shared_nz_plan<3>(checks,
                         true,
                         true,
                         NodePartitioner::greedy_union,
                         true,
                         true);
  test_shared_nz_plan<3>(checks,
                         true,
                         true,
                         NodePartitioner::metis,
                         false,
                         true);
  test_shared_nz_plan<2>(checks,
                         true,
                         true,
                         NodePartitioner::greedy_union,
                         false,
                         true);
  test_shared_nz_plan<3>(checks,
                         false,
                         false,
                         NodePartitioner::greedy_union,
                         false,
                         true);
  test_shared_nz_plan<3>(checks,
                         true,
                         true,
                         NodePartitioner::greedy_growth,
                         false,
                         true);
  test_shared_nz_plan<3>(checks, true, true, NodePartitioner::greedy_growth);
  test_shared_nz_plan<2>(checks, false, false, NodePartitioner::greedy_union);
  test_shared_nz_plan<3>(checks, false, false, NodePartitioner::metis);
  test_plans_independent_of_threads(checks);
  test_slot_division(checks);
  test_node_pairs_dof_limit(checks);
  test_automatic_shared_nz_parameters(checks);
  return checks.exit_code();
}
