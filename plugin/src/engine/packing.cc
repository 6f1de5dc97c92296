// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>

#include <gpu_assembly/engine/packing.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <queue>

namespace GPUAssembly
{
  namespace
  {
    // Lanes by (load, lane), least first, for LPT: what a priority queue
    // of (load, lane) pairs gives, in constant time per operation. LPT
    // takes the least loaded lane and returns it with its load grown by
    // one list, so the least load never decreases and every load in the
    // queue lies within the longest list of it: the lanes are kept in a
    // ring of that many + 1 buckets by load, each a bit set of lanes, and
    // the lowest set bit of the first non-empty bucket is the lane of least
    // (load, lane).
    class LaneQueue
    {
    public:
      LaneQueue(const unsigned int n_lanes, const unsigned int max_step)
        : n_words((n_lanes + 63) / 64)
        , n_buckets(max_step + 1)
        , bits(static_cast<std::size_t>(n_buckets) * n_words, 0)
        , count(n_buckets, 0)
      {
        for (unsigned int t = 0; t < n_lanes; ++t)
          push(0, t);
      }

      // Removes the lane of least (load, lane); returns it with its load.
      std::pair<unsigned long, unsigned int>
      pop()
      {
        while (count[least % n_buckets] == 0)
          ++least;
        const unsigned int b    = least % n_buckets;
        std::uint64_t     *word = bits.data() + std::size_t(b) * n_words;
        unsigned int       w    = 0;
        while (word[w] == 0)
          ++w;
        const unsigned int bit = __builtin_ctzll(word[w]);
        word[w] &= word[w] - 1;
        --count[b];
        return {least, w * 64 + bit};
      }

      // Adds a lane whose load is at most max_step above the least load.
      void
      push(const unsigned long load, const unsigned int lane)
      {
        Assert(load >= least && load - least < n_buckets,
               dealii::ExcInternalError());
        const unsigned int b = load % n_buckets;
        bits[std::size_t(b) * n_words + lane / 64] |= std::uint64_t(1)
                                                      << (lane % 64);
        ++count[b];
      }

    private:
      const unsigned int         n_words, n_buckets;
      std::vector<std::uint64_t> bits;
      std::vector<unsigned int>  count;
      unsigned long              least = 0;
    };



    // The lists of each lane, in the order they were given to it: lane t
    // holds lists[offsets[t], offsets[t + 1]).
    struct LaneLists
    {
      std::vector<unsigned int> offsets, lists;
    };

    // Assigns each list to a lane; lists are visited longest first, ties by
    // index, each onto the lane of least load, ties by lane index, so that
    // plans are deterministic. Plans are built for thousands of blocks, so
    // this runs in linear time: a counting sort by length (stable, as the
    // sort it replaces) and the bucketed queue above.
    LaneLists
    assign_lanes(const IndexLists &lists, const unsigned int n_lanes)
    {
      const unsigned int n_lists = lists.n_lists();
      const auto         length  = [&](const unsigned int l) {
        return static_cast<unsigned int>(lists.offsets[l + 1] -
                                         lists.offsets[l]);
      };
      unsigned int max_length = 0;
      for (unsigned int l = 0; l < n_lists; ++l)
        max_length = std::max(max_length, length(l));

      // Lists by decreasing length, ties by index.
      std::vector<unsigned int> start(max_length + 2, 0), order(n_lists);
      for (unsigned int l = 0; l < n_lists; ++l)
        ++start[max_length - length(l) + 1];
      std::partial_sum(start.begin(), start.end(), start.begin());
      for (unsigned int l = 0; l < n_lists; ++l)
        order[start[max_length - length(l)]++] = l;

      LaneQueue                 lanes(n_lanes, max_length);
      std::vector<unsigned int> lane_of(n_lists);
      LaneLists                 result;
      result.offsets.assign(n_lanes + 1, 0);
      for (const unsigned int l : order)
        {
          const auto [load, lane] = lanes.pop();
          lane_of[l]              = lane;
          ++result.offsets[lane + 1];
          lanes.push(load + length(l), lane);
        }
      std::partial_sum(result.offsets.begin(),
                       result.offsets.end(),
                       result.offsets.begin());
      // Each lane's lists in the order they were given to it.
      std::vector<unsigned int> fill(result.offsets.begin(),
                                     result.offsets.end() - 1);
      result.lists.resize(n_lists);
      for (const unsigned int l : order)
        result.lists[fill[lane_of[l]]++] = l;
      return result;
    }
  } // namespace



  void
  pack_lists_lpt(const IndexLists  &lists,
                 const unsigned int n_lanes,
                 index_type        *packed)
  {
    const LaneLists assignment = assign_lanes(lists, n_lanes);
    for (unsigned int t = 0; t < n_lanes; ++t)
      {
        std::size_t j = 0;
        for (unsigned int i = assignment.offsets[t];
             i < assignment.offsets[t + 1];
             ++i)
          {
            const unsigned int l = assignment.lists[i];
            for (index_type k = lists.offsets[l]; k < lists.offsets[l + 1]; ++k)
              packed[j++ * n_lanes + t] = lists.entries[k];
          }
      }
  }



  unsigned int
  lpt_n_columns(const IndexLists &lists, const unsigned int n_lanes)
  {
    const std::vector<unsigned int> loads = lpt_lane_loads(lists, n_lanes);
    return loads.empty() ? 0 : *std::max_element(loads.begin(), loads.end());
  }



  unsigned int
  pack_lists_lpt(const IndexLists        &lists,
                 const unsigned int       n_lanes,
                 std::vector<index_type> &packed)
  {
    const unsigned int n_columns = lpt_n_columns(lists, n_lanes);
    const std::size_t  start     = packed.size();
    packed.resize(start + static_cast<std::size_t>(n_columns) * n_lanes, 0);
    pack_lists_lpt(lists, n_lanes, packed.data() + start);
    return n_columns;
  }



  void
  pack_lists_sliced(const IndexLists         &lists,
                    const unsigned int        n_lanes,
                    const unsigned int        slice_width,
                    std::vector<index_type>  &packed,
                    std::vector<std::size_t> &slice_ends,
                    const unsigned int        chunk)
  {
    const LaneLists           assignment = assign_lanes(lists, n_lanes);
    std::vector<unsigned int> load(n_lanes, 0), order(n_lanes);
    for (unsigned int t = 0; t < n_lanes; ++t)
      for (unsigned int i = assignment.offsets[t];
           i < assignment.offsets[t + 1];
           ++i)
        {
          const unsigned int l = assignment.lists[i];
          load[t] += lists.offsets[l + 1] - lists.offsets[l];
        }
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(),
                     order.end(),
                     [&](const unsigned int a, const unsigned int b) {
                       return load[a] > load[b];
                     });
    // Sized once for all slices, instead of growing slice by slice.
    std::size_t size = packed.size();
    for (unsigned int first = 0; first < n_lanes; first += slice_width)
      size += std::size_t((load[order[first]] + chunk - 1) / chunk * chunk) *
              slice_width;
    std::size_t start = packed.size();
    packed.resize(size, 0);
    for (unsigned int first = 0; first < n_lanes; first += slice_width)
      {
        const unsigned int width =
          (load[order[first]] + chunk - 1) / chunk * chunk;
        for (unsigned int i = 0; i < slice_width; ++i)
          {
            // Entry j of the lane at start + ((j / chunk) * slice_width + i)
            // * chunk + j % chunk, stepped without divisions.
            index_type        *chunk_start = packed.data() + start + i * chunk;
            unsigned int       in_chunk    = 0;
            const unsigned int lane        = order[first + i];
            for (unsigned int a = assignment.offsets[lane];
                 a < assignment.offsets[lane + 1];
                 ++a)
              {
                const unsigned int l = assignment.lists[a];
                for (index_type k = lists.offsets[l]; k < lists.offsets[l + 1];
                     ++k)
                  {
                    chunk_start[in_chunk] = lists.entries[k];
                    if (++in_chunk == chunk)
                      {
                        in_chunk = 0;
                        chunk_start += std::size_t(slice_width) * chunk;
                      }
                  }
              }
          }
        start += std::size_t(width) * slice_width;
        slice_ends.push_back(start);
      }
  }



  void
  pack_lists_aligned(const IndexLists                &lists,
                     const std::vector<unsigned int> &first_run,
                     const unsigned int               n_lanes,
                     const unsigned int               slice_width,
                     std::vector<index_type>         &packed,
                     std::vector<std::size_t>        &slice_ends,
                     const unsigned int               chunk,
                     const bool                       keep_list_order,
                     AlignedRows                     *row_shapes)
  {
    const unsigned int n_lists = lists.n_lists();
    AssertThrow(first_run.size() == n_lists,
                dealii::ExcDimensionMismatch(first_run.size(), n_lists));
    const auto first = [&](const unsigned int l) {
      return first_run[l];
    };
    const auto second = [&](const unsigned int l) {
      const unsigned int length = lists.offsets[l + 1] - lists.offsets[l];
      AssertThrow(length >= first_run[l] + 1,
                  dealii::ExcMessage("A list is shorter than its first run "
                                     "and closing entry."));
      return length - first_run[l] - 1;
    };
    const auto leads = [&](const unsigned int l) {
      return row_shapes != nullptr && !row_shapes->leading.empty() &&
             row_shapes->leading[l] != 0;
    };
    AssertThrow(row_shapes == nullptr || row_shapes->leading.empty() ||
                  row_shapes->leading.size() == n_lists,
                dealii::ExcDimensionMismatch(row_shapes->leading.size(),
                                             n_lists));
    AssertThrow(row_shapes == nullptr || row_shapes->max_leading >= 1,
                dealii::ExcMessage("A row must be able to hold a leading "
                                   "list."));
    AssertThrow(row_shapes == nullptr || !row_shapes->halve_leading ||
                  row_shapes->close,
                dealii::ExcMessage("Halved lists need the rows' closing "
                                   "entries (AlignedRows::close)."));

    // Leading lists with more than twice the mean sources of the others
    // are halved (AlignedRows::halve_leading).
    std::vector<unsigned char> halved(n_lists, 0);
    if (row_shapes != nullptr && row_shapes->halve_leading && slice_width >= 2)
      {
        std::size_t n_others = 0, other_sources = 0;
        for (unsigned int l = 0; l < n_lists; ++l)
          if (!leads(l))
            {
              ++n_others;
              other_sources += first(l) + second(l);
            }
        for (unsigned int l = 0; l < n_lists; ++l)
          halved[l] = leads(l) && first(l) + second(l) >= 4 &&
                      (first(l) + second(l)) * n_others > 2 * other_sources;
      }
    const bool halving =
      std::find(halved.begin(), halved.end(), 1) != halved.end();

    // Lists of equal runs side by side, so that rows need little padding;
    // ties by index, so that plans are deterministic. With
    // keep_list_order the first runs are left out of the key: the stores
    // of neighbouring lists then share memory sectors (packing.h); but
    // where lists are halved, leading lists come first among those of
    // equal second runs, longest first runs first, so that the halved
    // lists fill rows of their own.
    const auto key = [&](const unsigned int l) {
      return std::make_pair(second(l),
                            !keep_list_order    ? first(l) :
                            halving && leads(l) ? first(l) + 1 :
                                                  0u);
    };
    std::vector<unsigned int> order(n_lists);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(),
                     order.end(),
                     [&](const unsigned int a, const unsigned int b) {
                       return key(a) > key(b);
                     });

    // A lane's part of a row: of list l, the entries [begin, middle) of its
    // first run and [middle2, end) of its second, then its closing entry.
    struct Part
    {
      unsigned int list, begin, middle, middle2, end;
    };
    struct Row
    {
      // Its parts in lanes 0, 1, ...; its longest first and second runs.
      std::vector<Part> parts;
      unsigned int      n_lists = 0, n_leading = 0, n_halved = 0;
      unsigned int      first = 0, second = 0;
      unsigned int
      length() const
      {
        return first + second + 1;
      }
    };
    std::vector<Row>   rows;
    const unsigned int max_leading =
      row_shapes != nullptr ? row_shapes->max_leading : slice_width;
    for (unsigned int begin = 0; begin < n_lists;)
      {
        // The lists of the row: as many as take its lanes, a halved list
        // two, and at most max_leading leading lists.
        unsigned int end = begin, n_lanes_used = 0, n_leading = 0;
        while (end < n_lists &&
               n_lanes_used + 1 + halved[order[end]] <= slice_width &&
               (!leads(order[end]) || n_leading < max_leading))
          {
            n_lanes_used += 1 + halved[order[end]];
            n_leading += leads(order[end]);
            ++end;
          }
        Assert(end > begin, dealii::ExcInternalError());
        // Halved lists first, then the other leading lists: which lists
        // share the row, and so its padding, does not change.
        const auto middle =
          std::stable_partition(order.begin() + begin,
                                order.begin() + end,
                                [&](const unsigned l) {
                                  return leads(l) && halved[l];
                                });
        std::stable_partition(middle,
                              order.begin() + end,
                              [&](const unsigned int l) {
                                return leads(l);
                              });
        Row row;
        row.n_lists   = end - begin;
        row.n_leading = n_leading;
        row.n_halved  = middle - (order.begin() + begin);
        // Each run of a halved list is halved: the row's lanes reach their
        // second runs at the same step. half: 0 or 1, or -1 for the whole
        // list.
        const auto add = [&](const unsigned int l, const int half) {
          const unsigned int f = first(l), n = f + second(l);
          const unsigned int m1 = (f + 1) / 2, m2 = f + (second(l) + 1) / 2;
          const Part         part = half < 0  ? Part{l, 0, f, f, n} :
                                    half == 0 ? Part{l, 0, m1, f, m2} :
                                                Part{l, m1, f, m2, n};
          row.parts.push_back(part);
          row.first  = std::max(row.first, part.middle - part.begin);
          row.second = std::max(row.second, part.end - part.middle2);
        };
        for (unsigned int i = begin; i < begin + n_leading; ++i)
          add(order[i], halved[order[i]] ? 0 : -1);
        for (unsigned int i = begin; i < begin + row.n_halved; ++i)
          add(order[i], 1);
        for (unsigned int i = begin + n_leading; i < end; ++i)
          add(order[i], -1);
        rows.push_back(std::move(row));
        begin = end;
      }

    // LPT of the rows onto the slices: longest row first, onto the slice
    // with the least work.
    std::vector<unsigned int> row_order(rows.size());
    std::iota(row_order.begin(), row_order.end(), 0u);
    std::stable_sort(row_order.begin(),
                     row_order.end(),
                     [&](const unsigned int a, const unsigned int b) {
                       return rows[a].length() > rows[b].length();
                     });
    const unsigned int n_slices = n_lanes / slice_width;
    AssertThrow(n_slices * slice_width == n_lanes,
                dealii::ExcMessage("The lanes must fill whole slices."));
    using Slice = std::pair<unsigned long, unsigned int>; // (load, slice)
    std::priority_queue<Slice, std::vector<Slice>, std::greater<Slice>> queue;
    for (unsigned int w = 0; w < n_slices; ++w)
      queue.emplace(0, w);
    std::vector<std::vector<unsigned int>> assignment(n_slices);
    std::vector<unsigned long>             load(n_slices, 0);
    for (const unsigned int r : row_order)
      {
        const auto [slice_load, w] = queue.top();
        queue.pop();
        assignment[w].push_back(r);
        load[w] = slice_load + rows[r].length();
        queue.emplace(load[w], w);
      }
    // LPT leaves the longest slice up to a third above the optimum; a row
    // moved from it, or swapped with a shorter row of another slice, where
    // that shortens the longer of the two, until none does. A block runs
    // as long as its longest warp.
    for (bool improved = true; improved && n_slices > 1;)
      {
        improved = false;
        const unsigned int a =
          std::max_element(load.begin(), load.end()) - load.begin();
        for (std::size_t i = 0; i < assignment[a].size() && !improved; ++i)
          for (unsigned int b = 0; b < n_slices && !improved; ++b)
            {
              if (b == a)
                continue;
              const unsigned long r = rows[assignment[a][i]].length();
              // Row i alone (j = size) or for row j of slice b.
              for (std::size_t j = 0; j <= assignment[b].size(); ++j)
                {
                  const unsigned long q = j < assignment[b].size() ?
                                            rows[assignment[b][j]].length() :
                                            0;
                  if (q >= r ||
                      std::max(load[a] - r + q, load[b] + r - q) >= load[a])
                    continue;
                  load[a] = load[a] - r + q;
                  load[b] = load[b] + r - q;
                  if (j < assignment[b].size())
                    std::swap(assignment[a][i], assignment[b][j]);
                  else
                    {
                      assignment[b].push_back(assignment[a][i]);
                      assignment[a].erase(assignment[a].begin() + i);
                    }
                  improved = true;
                  break;
                }
            }
      }

    for (unsigned int w = 0; w < n_slices; ++w)
      {
        const std::size_t width = (load[w] + chunk - 1) / chunk * chunk;
        const std::size_t start = packed.size();
        packed.resize(start + width * slice_width, 0);
        const auto put = [&](const unsigned int lane,
                             const std::size_t  j,
                             const index_type   entry) {
          packed[start + ((j / chunk) * slice_width + lane) * chunk +
                 j % chunk] = entry;
        };
        std::size_t column = 0;
        for (const unsigned int r : assignment[w])
          {
            const Row        &row   = rows[r];
            const std::size_t close = column + row.first + row.second;
            for (unsigned int lane = 0; lane < row.parts.size(); ++lane)
              {
                const Part       &part = row.parts[lane];
                const index_type *entry =
                  lists.entries.data() + lists.offsets[part.list];
                for (unsigned int j = part.begin; j < part.middle; ++j)
                  put(lane, column + j - part.begin, entry[j]);
                for (unsigned int j = part.middle2; j < part.end; ++j)
                  put(lane, column + row.first + j - part.middle2, entry[j]);
                put(lane, close, entry[first(part.list) + second(part.list)]);
              }
            if (row_shapes != nullptr)
              {
                if (row_shapes->close)
                  for (unsigned int lane = 0; lane < slice_width; ++lane)
                    put(lane,
                        close,
                        row_shapes->close(row.n_lists,
                                          row.n_leading,
                                          row.n_halved));
                // The row's lists, each once, in the order of their slots:
                // the parts of the first halves and whole lists.
                for (unsigned int lane = 0; lane < row.parts.size(); ++lane)
                  if (lane < row.n_leading ||
                      lane >= row.n_leading + row.n_halved)
                    row_shapes->lists.push_back(row.parts[lane].list);
                row_shapes->offsets.push_back(row_shapes->lists.size());
                row_shapes->n_leading.push_back(row.n_leading);
                row_shapes->n_halved.push_back(row.n_halved);
                row_shapes->slice.push_back(w);
              }
            column += row.length();
          }
        slice_ends.push_back(packed.size());
      }
  }



  std::vector<unsigned int>
  lpt_lane_loads(const IndexLists &lists, const unsigned int n_lanes)
  {
    const LaneLists           assignment = assign_lanes(lists, n_lanes);
    std::vector<unsigned int> loads(n_lanes, 0);
    for (unsigned int t = 0; t < n_lanes; ++t)
      for (unsigned int i = assignment.offsets[t];
           i < assignment.offsets[t + 1];
           ++i)
        {
          const unsigned int l = assignment.lists[i];
          loads[t] += lists.offsets[l + 1] - lists.offsets[l];
        }
    return loads;
  }
} // namespace GPUAssembly
