#include <gpu_assembly/engine/packing.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>

namespace GPUAssembly
{
  namespace
  {
    // Assigns each list to a lane; lists are visited longest first, ties by
    // index so that plans are deterministic.
    std::vector<std::vector<unsigned int>>
    assign_lanes(const IndexLists &lists, const unsigned int n_lanes)
    {
      std::vector<unsigned int> order(lists.n_lists());
      std::iota(order.begin(), order.end(), 0u);
      const auto length = [&](const unsigned int l) {
        return lists.offsets[l + 1] - lists.offsets[l];
      };
      std::stable_sort(order.begin(),
                       order.end(),
                       [&](const unsigned int a, const unsigned int b) {
                         return length(a) > length(b);
                       });

      using Lane = std::pair<unsigned long, unsigned int>; // (load, lane)
      std::priority_queue<Lane, std::vector<Lane>, std::greater<Lane>> lanes;
      for (unsigned int t = 0; t < n_lanes; ++t)
        lanes.emplace(0, t);
      std::vector<std::vector<unsigned int>> assignment(n_lanes);
      for (const unsigned int l : order)
        {
          auto [load, lane] = lanes.top();
          lanes.pop();
          assignment[lane].push_back(l);
          lanes.emplace(load + length(l), lane);
        }
      return assignment;
    }
  } // namespace



  void
  pack_lists_lpt(const IndexLists  &lists,
                 const unsigned int n_lanes,
                 index_type        *packed)
  {
    const auto assignment = assign_lanes(lists, n_lanes);
    for (unsigned int t = 0; t < n_lanes; ++t)
      {
        std::size_t j = 0;
        for (const unsigned int l : assignment[t])
          for (index_type k = lists.offsets[l]; k < lists.offsets[l + 1]; ++k)
            packed[j++ * n_lanes + t] = lists.entries[k];
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
    const auto                assignment = assign_lanes(lists, n_lanes);
    std::vector<unsigned int> load(n_lanes, 0), order(n_lanes);
    for (unsigned int t = 0; t < n_lanes; ++t)
      for (const unsigned int l : assignment[t])
        load[t] += lists.offsets[l + 1] - lists.offsets[l];
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(),
                     order.end(),
                     [&](const unsigned int a, const unsigned int b) {
                       return load[a] > load[b];
                     });
    for (unsigned int first = 0; first < n_lanes; first += slice_width)
      {
        const unsigned int width =
          (load[order[first]] + chunk - 1) / chunk * chunk;
        const std::size_t start = packed.size();
        packed.resize(start + std::size_t(width) * slice_width, 0);
        for (unsigned int i = 0; i < slice_width; ++i)
          {
            std::size_t j = 0;
            for (const unsigned int l : assignment[order[first + i]])
              for (index_type k = lists.offsets[l]; k < lists.offsets[l + 1];
                   ++k, ++j)
                packed[start + ((j / chunk) * slice_width + i) * chunk +
                       j % chunk] = lists.entries[k];
          }
        slice_ends.push_back(packed.size());
      }
  }



  std::vector<unsigned int>
  lpt_lane_loads(const IndexLists &lists, const unsigned int n_lanes)
  {
    const auto                assignment = assign_lanes(lists, n_lanes);
    std::vector<unsigned int> loads(n_lanes, 0);
    for (unsigned int t = 0; t < n_lanes; ++t)
      for (const unsigned int l : assignment[t])
        loads[t] += lists.offsets[l + 1] - lists.offsets[l];
    return loads;
  }
} // namespace GPUAssembly
