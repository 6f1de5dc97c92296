// SPDX-License-Identifier: LGPL-2.1-or-later
// The packings of reduction lists, checked on the host: LPT packing keeps
// lists whole and balances lanes (GlobalNZ); rows that a warp walks in
// lockstep, with halved leading lists (SharedNZ); SharedNZ's slot division.

#include <gpu_assembly/engine/packing.h>
#include <gpu_assembly/engine/shared_nz/layout.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

#include "rule_checks.h"
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
  Testing::check_rules(checks,
                       "LPT packing",
                       {{packed[0] == 7, "appends to what the array held"},
                        {packed.size() == 2 + std::size_t(n_columns) * n_lanes,
                         "a column-major n_lanes x n_columns block"}});

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
  Testing::check_rules(checks,
                       "LPT packing",
                       {{Testing::each_once(seen.begin() + 1, seen.end()),
                         "every entry is packed exactly once"},
                        {whole, "no list is split"}});

  const std::vector<unsigned int> loads = lpt_lane_loads(lists, n_lanes);
  const double                    lower_bound =
    std::max<double>(double(total) / n_lanes, double(longest));
  const unsigned int max_load = *std::max_element(loads.begin(), loads.end());
  Testing::check_rules(
    checks,
    "LPT packing",
    {{max_load == n_columns, "the longest lane sets the columns"},
     {max_load <= 4. / 3. * lower_bound + longest,
      "balances the lanes: longest lane " + std::to_string(max_load) +
        " <= 4/3 * " + std::to_string(lower_bound) + " + longest list"}});
}



// Packing in rows that a warp walks in lockstep (pack_lists_aligned()):
// every entry once, lists whole and in order, and no step at which a lane
// closes a list while another adds a source, or one lane is in its first
// run while another is in its second; the slices share the rows evenly.
// With keep_list_order, each row holds 32 lists that are neighbours in
// the order of their second runs, ties in list order.
// Adds the next list, l, of two runs: @p n_first entries numbered from
// @p next on, @p n_second from @p next_second on, and the closing entry
// -(l + 1); the first run's length goes to @p first_run.
void
add_two_run_list(IndexLists                &lists,
                 std::vector<unsigned int> &first_run,
                 const unsigned int         n_first,
                 const unsigned int         n_second,
                 index_type                &next,
                 index_type                &next_second)
{
  std::vector<index_type> list(n_first);
  for (auto &entry : list)
    entry = next++;
  for (unsigned int i = 0; i < n_second; ++i)
    list.push_back(next_second++);
  list.push_back(-index_type(first_run.size() + 1));
  first_run.push_back(list.size() - 1 - n_second);
  lists.add_list(list.begin(), list.end());
}



// Walks the columns of an aligned packing with row shapes like the warps of
// SharedNZ do: @p packed holds slices of @p width lanes ending at @p ends,
// interleaved in chunks of @p chunk. @p each_column(at) sees every column
// (at(t): the entry of lane t). A column without a closing entry (<=
// @p close_base) adds its non-zero entries to the lanes' lists; a column
// that closes must close in every lane the next row, of its slice in
// @p slice_of_row, and @p close_row(row, at, lane_lists) checks that row
// (and clears the lists). Returns @p right and every check; stops at the
// first that fails. @p row counts the rows walked.
template <typename EachColumn, typename CloseRow>
bool
walk_aligned_rows(bool                             right,
                  const std::vector<index_type>   &packed,
                  const std::vector<std::size_t>  &ends,
                  const unsigned int               width,
                  const unsigned int               chunk,
                  const index_type                 close_base,
                  const std::vector<unsigned int> &slice_of_row,
                  std::size_t                     &row,
                  const EachColumn                &each_column,
                  const CloseRow                  &close_row)
{
  row               = 0;
  std::size_t begin = 0;
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
          each_column(at);
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
          right &= n_closing == width && row < slice_of_row.size() &&
                   slice_of_row[row] == w;
          if (!right)
            break;
          right &= close_row(row, at, lane_lists);
          ++row;
        }
      begin = ends[w];
    }
  return right;
}



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
      const unsigned int n_first = first_length(gen);
      const unsigned int n_second =
        with_second(gen) == 0 ? 1 + second_length(gen) : 0;
      add_two_run_list(lists, first_run, n_first, n_second, next, next_second);
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
  Testing::check_rules(
    checks,
    "aligned packing" + mode,
    {{packed[0] == 5, "appends to what the array held"},
     {start == packed.size() && slice_ends.size() == n_lanes / width,
      "slices in whole chunks, one per warp"},
     {Testing::each_once(seen_first.begin() + 1, seen_first.end()) &&
        Testing::each_once(seen_second.begin() + 100000, seen_second.end()),
      "every entry packed exactly once"},
     {Testing::each_once(closed.begin() + 1, closed.end()),
      "every list closed once"},
     {whole, "lists whole and in order"}});
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
    std::size_t      row = 0;
    std::vector<int> listed(n_lists, 0);
    const bool       rows_right = walk_aligned_rows(
      shapes.offsets.size() == shapes.n_leading.size() + 1 &&
        shapes.slice.size() == shapes.n_leading.size() &&
        shaped_ends.size() == n_lanes / width,
      shaped,
      shaped_ends,
      width,
      chunk,
      close_base,
      shapes.slice,
      row,
      [](const auto &) {},
      [&](const std::size_t row, const auto &at, auto &lane_lists) {
        bool               right = true;
        const unsigned int n = shapes.offsets[row + 1] - shapes.offsets[row];
        const unsigned int d = shapes.n_leading[row];
        for (unsigned int t = 0; t < width; ++t)
          {
            right &=
              at(t) == shapes.close(n, d, 0) && shapes.n_halved[row] == 0;
            if (t >= n)
              {
                right &= lane_lists[t].empty();
                continue;
              }
            const unsigned int l = shapes.lists[shapes.offsets[row] + t];
            ++listed[l];
            right &=
              (shapes.leading[l] != 0) == (t < d) &&
              std::equal(lane_lists[t].begin(),
                         lane_lists[t].end(),
                         lists.entries.begin() + lists.offsets[l],
                         lists.entries.begin() + lists.offsets[l + 1] - 1) &&
              lane_lists[t].size() + 1 ==
                std::size_t(lists.offsets[l + 1] - lists.offsets[l]);
            lane_lists[t].clear();
          }
        return right;
      });
    Testing::check_rules(
      checks,
      "aligned packing" + mode + " with row shapes",
      {{rows_right,
        "leading lists first in their rows, every lane closing each row "
        "with its shape"},
       {row == shapes.n_leading.size(),
        "the rows returned are the rows walked"},
       {Testing::each_once(listed), "every list in exactly one row"}});
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
      const unsigned int n_first =
        leads.back() ? long_length(gen) : short_length(gen);
      const unsigned int n_second =
        with_second(gen) == 0 ? 1 + second_length(gen) : 0;
      add_two_run_list(lists, first_run, n_first, n_second, next, next_second);
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
  bool             aligned = true, bounded = true;
  std::vector<int> listed(n_lists, 0), halved(n_lists, 0);
  std::size_t      row = 0, n_halved_rows = 0;
  const bool       right = walk_aligned_rows(
    shapes.offsets.size() == shapes.n_halved.size() + 1,
    packed,
    ends,
    width,
    chunk,
    close_base,
    shapes.slice,
    row,
    [&](const auto &at) {
      unsigned int n_closing = 0, n_first = 0, n_second = 0;
      for (unsigned int t = 0; t < width; ++t)
        {
          n_closing += at(t) <= close_base;
          n_first += at(t) > 0 && at(t) < 100000;
          n_second += at(t) >= 100000;
        }
      aligned &= (n_closing == 0 || n_first + n_second == 0) &&
                 (n_first == 0 || n_second == 0);
    },
    [&](const std::size_t row, const auto &at, auto &lane_lists) {
      bool                           right = true;
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
          const unsigned int l = shapes.lists[shapes.offsets[row] + role.slot];
          const bool         is_halved = role.slot < shape.n_halved;
          listed[l] += !role.second_half;
          halved[l] += role.second_half;
          right &= (leads[l] != 0) == (role.slot < shape.n_diagonal) &&
                   lane_lists[t] == expected(l,
                                             !is_halved       ? -1 :
                                                   role.second_half ? 1 :
                                                                      0);
          lane_lists[t].clear();
        }
      return right;
    });
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
  Testing::check_rules(
    checks,
    "halved packing" + mode,
    {{Testing::each_once(listed), "every list once in the slot of its row"},
     {right && row == shapes.n_halved.size(),
      "each run of a halved list halved, the second half in lane "
      "n_leading + slot"},
     {rule,
      "exactly the leading lists of at least 4 and more than twice the mean "
      "entries are halved"},
     {n_halved_rows > 0,
      "some rows have halved lists (" +
        std::to_string(std::count(halved.begin(), halved.end(), 1)) +
        " lists, " + std::to_string(n_halved_rows) + " rows)"}});
  checks.check(aligned,
               "halved packing" + mode +
                 ": no step mixes closing entries with others, or first "
                 "runs with second runs");
  checks.check(bounded,
               "halved packing" + mode + ": rows of at most " +
                 std::to_string(max_leading) + " leading lists");
  checks.check(steps(ends) < steps(whole_ends),
               "halved packing" + mode + ": the longest slice is shorter (" +
                 std::to_string(steps(ends)) + " against " +
                 std::to_string(steps(whole_ends)) +
                 " steps with whole lists)");
}



// The reduction finds a source's slot by a multiplication instead of a
// division; it must be exact for every divisor up to the largest source
// index, one included (divide() has a special case for it).
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



int
main()
{
  Testing::Checks checks;
  test_lpt_packing(checks);
  test_aligned_packing(checks, false);
  test_aligned_packing(checks, true);
  test_halved_packing(checks, false);
  test_halved_packing(checks, true);
  test_slot_division(checks);
  return checks.exit_code();
}
